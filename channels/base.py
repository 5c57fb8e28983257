"""The channel contract and the registry of adapters.

An adapter turns a platform update into a ``Turn``, runs it through the pipeline, and
delivers the ``Reply``. Adapters are registered by import string so a platform SDK is
imported only when its channel is enabled.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from middleware.errors import ConfigError, UpstreamError, UpstreamStatusError
from middleware.types import JSON, Turn

if TYPE_CHECKING:
    from proxy.services import Services

REGISTRY: dict[str, str] = {
    "terminal": "channels.terminal:TerminalChannel",
    "telegram": "channels.telegram:TelegramChannel",
    "discord": "channels.discord:DiscordChannel",
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


async def conversation_body(services: Services, turn: Turn, history_limit: int) -> JSON:
    """The chat-completions body for a channel where the relay owns the conversation.

    The thread's last ``history_limit`` stored messages, as they were first sent, then the
    new one: the injection stage recognises the earlier user messages and replays their
    blocks, so the forwarded conversation only grows at its end.
    """
    from middleware.identity import thread_key

    key = thread_key(
        services.config.server.agent_id, turn.channel, turn.chat_type, turn.thread_id, turn.topic_id
    )
    history = await services.store.transcript(key, history_limit)
    messages: list[JSON] = [{"role": m.role, "content": m.text} for m in history]
    messages.append({"role": "user", "content": turn.text})
    return {"model": services.config.upstream.model, "messages": messages}


async def answer(services: Services, turn: Turn) -> str:
    """Run ``turn`` through the pipeline and return the whole reply text.

    Chat platforms don't stream, so a streamed reply is drained first. Upstream failures
    become a short message for the user instead of an exception.
    """
    try:
        reply = await services.pipeline(turn)
    except UpstreamStatusError as exc:
        return f"[the LLM refused the request: HTTP {exc.status} {exc.body[:300]!r}]"
    except UpstreamError as exc:
        return f"[no answer from the LLM: {exc}]"
    if reply.stream is not None:
        async for _ in reply.stream:
            pass
        return reply.stream.text
    return reply.text


class ConversationLocks:
    """One lock per conversation key, so a chat's turns are answered in order; a lock
    nobody holds or waits for is forgotten."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def __call__(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock


@contextlib.asynccontextmanager
async def alongside(background: Callable[[], Awaitable[None]]) -> AsyncIterator[None]:
    """Run ``background`` (a typing indicator, say) while the body runs; cancel it after."""
    task = asyncio.ensure_future(background())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def answer_in_order(
    services: Services,
    turn: Turn,
    *,
    lock: asyncio.Lock,
    history_limit: int,
    typing: Callable[[], Awaitable[None]],
    deliver: Callable[[str], Awaitable[None]],
) -> None:
    """Answer ``turn`` and deliver the reply while holding the conversation's ``lock``,
    showing ``typing`` until the reply is ready."""
    async with lock:
        async with alongside(typing):
            turn.body = await conversation_body(services, turn, history_limit)
            text = await answer(services, turn)
        await deliver(text)
