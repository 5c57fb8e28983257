"""The channel contract and the registry of adapters.

An adapter turns a platform update into a ``Turn``, runs it through the pipeline, and
delivers the ``Reply``. Adapters are registered by import string so a platform SDK is
imported only when its channel is enabled.
"""

from __future__ import annotations

import importlib
from typing import Protocol

from middleware.errors import ConfigError

REGISTRY: dict[str, str] = {
    "terminal": "channels.terminal:TerminalChannel",
}


class Channel(Protocol):
    """A chat surface the relay serves."""

    name: str

    async def start(self) -> None:
        """Begin receiving updates; return once running."""
        ...

    async def stop(self) -> None:
        """Stop receiving and release platform resources."""
        ...

    async def send(self, thread_id: str, text: str) -> None:
        """Deliver ``text`` to the thread, split to the platform's limits."""
        ...


def load_channel_class(name: str) -> type:
    """Import the adapter class registered under ``name``."""
    try:
        target = REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ConfigError(f"unknown channel '{name}' (known: {known})") from None
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, attr)
    assert isinstance(cls, type)
    return cls
