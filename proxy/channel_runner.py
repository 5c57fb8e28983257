"""The chat channels ``chronorelay serve`` runs: started with the app, stopped before the
store and upstream close (they hand turns to the pipeline until the very end)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from channels.base import Channel, load_channel_class
from middleware.errors import ChronorelayError
from proxy.config import Config
from proxy.keys import SERVICES
from proxy.webhooks import WEBHOOKS

log = logging.getLogger(__name__)


def enabled_channels(config: Config) -> list[str]:
    """The ``[channels.<name>]`` tables with ``enabled = true``, in file order (the
    ``[channels]`` keys shared by every channel are not tables)."""
    names = type(config.channels).model_fields
    return [name for name in names if getattr(getattr(config.channels, name), "enabled", False)]


async def channels_ctx(app: web.Application) -> AsyncIterator[None]:
    """aiohttp cleanup context: start every enabled channel; stop them on cleanup.

    Append it after the services context, so channels stop before the store closes.
    A channel that cannot start fails startup (with the ones already started stopped).
    A channel with a ``webhook_path`` gets its route (``proxy.webhooks``) before it starts
    and loses it after it stopped.
    """
    services = app[SERVICES]
    webhooks = app[WEBHOOKS]
    timeout = services.config.server.shutdown_timeout
    started: list[Channel] = []
    try:
        for name in enabled_channels(services.config):
            channel: Channel = load_channel_class(name)(services)
            path: str | None = getattr(channel, "webhook_path", None)
            if path is not None:
                webhooks[path] = channel.handle_webhook  # type: ignore[attr-defined]
            try:
                await channel.start()
            except BaseException:
                webhooks.pop(path or "", None)
                raise
            started.append(channel)
            log.info("channel %s started", name)
        yield
    finally:
        # Newest first; each stop() stops receiving, then lets its turns in flight finish,
        # for up to the shutdown timeout.
        for channel in reversed(started):
            try:
                async with asyncio.timeout(timeout):
                    await channel.stop()
            except TimeoutError:
                log.warning("channel %s did not stop within %.0fs", channel.name, timeout)
            except ChronorelayError as exc:
                log.error("channel %s did not stop cleanly: %s", channel.name, exc)
            webhooks.pop(getattr(channel, "webhook_path", None) or "", None)
