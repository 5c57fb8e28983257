"""The channel contract and the registry of adapters.

An adapter turns a platform update into a ``Turn``, runs it through the pipeline, and
delivers the ``Reply``. Adapters are registered by import string so a platform SDK is
imported only when its channel is enabled.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import importlib
import json
import logging
import re
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol

from channels.history import conversation_body
from middleware.actions.directives import parse_directive
from middleware.commands import match_command
from middleware.commands.catalog import COMMANDS
from middleware.errors import (
    ConfigError,
    ReplyNotDelivered,
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
)
from middleware.identity import thread_key, user_key
from middleware.quoting import replying_to
from middleware.store import log_if_failed
from middleware.types import ReplyStream, Turn

if TYPE_CHECKING:
    from proxy.services import Services

log = logging.getLogger(__name__)


def utc_instant_text(instant: datetime) -> str:
    """An instant as a chat channel writes it for the model: in UTC, named
    (``2026-09-21 14:13 UTC``, seconds only when there are some). Channels build a turn
    before the clock stage decides which zone is the speaker's; an instant with its zone
    named is read as that instant whatever the reader's zone."""
    utc = instant.astimezone(UTC)
    clock = "%H:%M:%S" if utc.second else "%H:%M"
    return f"{utc.date().isoformat()} {utc.strftime(clock)} UTC"


# What a chat user is told when their turn failed inside the relay (the log has the error;
# its text may name files and hosts, so it is not shown in the chat).
TURN_FAILED = (
    "[the relay could not answer this message because of an error on its side; try again "
    "in a moment, and tell the relay's operator if it keeps happening]"
)

# Before the text of a message that came with a photo, file or sticker the relay does not
# pass on: the model is asked about something it cannot see, and must know.
ATTACHED = "[sent with a photo or file the relay does not pass on]"
# The answer, without asking the model, to a photo, sticker, voice note or file that came
# without any text.
TEXT_ONLY = (
    "I read only text (and the captions of photos and files), so a photo, sticker, voice "
    "note or file on its own doesn't reach me. Please write your message as text."
)

# The answer, without asking the model, to an edit of a message that was for the bot: the
# relay reads each message once, as sent, and the user must not believe the edit was read.
EDIT_NOT_READ = (
    "I read each message once, as it was first sent, so I didn't see your edit. If it "
    "changes something, please send the change as a new message."
)

# What a message that was only a photo, sticker, voice note or file (no text, no caption)
# is recorded as, for the clock: the user did write, so the thread's times move.
MediaKind = Literal["photo", "video", "GIF", "sticker", "voice note", "audio", "file", "attachment"]


def media_only_text(kind: MediaKind) -> str:
    """The stored text of a message that was only a ``kind``, as later history shows it
    to the model. Fixed words only, never a file name (the user's words): nothing in it can
    read as a plan, a fact to remember or an action, and it is never answered by the model
    (``observe`` records it)."""
    return f"[{kind}, not passed on]"


def with_reply_context(text: str, speaker: str, replied: str) -> str:
    """``text``, written in reply to ``speaker``'s message ``replied``, as the model reads
    it (``middleware.quoting.replying_to``: ``[replying to Bo: "meet at 9"] …``). The
    model sees what a reader sees above the reply, and can tell which message "this" is;
    what learns about the speaker reads only the words after the quote.

    Left as it is when ``text`` is a relay command or a clock directive: those run only
    from the start of a message."""
    if is_relay_command(text) or parse_directive(text) is not None:
        return text
    return replying_to(text, speaker, replied)


REGISTRY: dict[str, str] = {
    "terminal": "channels.terminal:TerminalChannel",
    "telegram": "channels.telegram:TelegramChannel",
    "discord": "channels.discord:DiscordChannel",
}


class Channel(Protocol):
    """A chat surface the relay serves.

    A channel that receives updates over HTTP also has ``webhook_path`` (``None`` when it
    does not) and ``async handle_webhook(request)``; the channel runner routes that path
    of the relay's own server to it while the channel runs (``proxy.webhooks``).
    """

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


_COMMAND_NAMES = frozenset(name for name, _ in COMMANDS)


def is_relay_command(text: str) -> bool:
    """Whether ``text`` is one of the relay's chat commands (``/tz …``, ``/help``).

    In groups only these count as addressing the bot: other bots' commands (``/roll``) and
    text that merely starts with a slash (``/r/python is great``) are not for it.
    """
    command = match_command(text)
    return command is not None and command.name in _COMMAND_NAMES


async def answer(
    services: Services,
    turn: Turn,
    on_text: Callable[[str], Awaitable[None]] | None = None,
    *,
    unanswered: Callable[[UpstreamError], str] | None = None,
) -> str:
    """Run ``turn`` through the pipeline and return the whole reply text.

    Without ``on_text`` a streamed reply is drained first. With it the reply is asked for
    as a stream and ``on_text`` sees the text so far each time more arrives. Upstream
    failures become a short message for the user instead of an exception (after whatever
    text had arrived); what went wrong in detail is logged, not shown in the chat, since it
    names the upstream's address. A channel whose user runs the relay (the terminal) says
    what to check instead: ``unanswered`` words the failure when no answer came at all
    (``unanswered_text`` by default).
    """
    if on_text is not None:
        turn.body = {**turn.body, "stream": True}
    stream: ReplyStream | None = None
    try:
        reply = await services.pipeline(turn)
        stream = reply.stream
        if stream is None:
            return reply.text
        async for _ in stream:
            if on_text is not None:
                await on_text(stream.text)
        return stream.text
    except UpstreamStatusError as exc:
        return refusal_text(exc)
    except UpstreamError as exc:
        # The detail names the upstream's address: for the operator, not the chat.
        log.warning("%s: no answer from the LLM for %s: %s", turn.channel, turn.thread_key, exc)
        partial = stream.text if stream is not None else ""
        if partial:
            return f"{partial}\n\n[the answer broke off: the LLM stopped sending — {_RETRY}]"
        return f"[no answer: {(unanswered or unanswered_text)(exc)}]"


_RETRY = "try again in a moment, and tell the relay's operator if it keeps happening"


def unanswered_text(exc: UpstreamError) -> str:
    """What a chat user is told when the upstream gave no answer at all (unreachable,
    timed out): what happened in plain words and what to do, without the upstream's
    address or the network library's wording (the log has those)."""
    if isinstance(exc, UpstreamTimeout):
        return f"the LLM took too long to answer — {_RETRY}"
    return f"the LLM could not be reached — {_RETRY}"


def refusal_text(exc: UpstreamStatusError) -> str:
    """What a chat user is told when the upstream answered with an error status: its own
    error message (OpenAI's ``{"error": {"message": …}}``, ``detail``, else the body's text) and
    whether trying again can help."""
    detail = _error_message(exc.body)
    if exc.status == 429:
        wait = f"{exc.retry_after:.0f} seconds" if exc.retry_after else "a minute"
        advice = f"the LLM is busy; try again in {wait}"
    elif exc.status >= 500:
        advice = "the LLM had a problem; try again in a moment"
    else:
        advice = "tell the relay's operator if it keeps happening"
    said = f": {detail}" if detail else ""
    return f"[the LLM refused the request (HTTP {exc.status}){said} — {advice}]"


_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _error_message(body: bytes, limit: int = 300) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        # Not OpenAI's shape: the usual places other servers put it.
        message = message or parsed.get("detail") or parsed.get("message")
        text = message.strip() if isinstance(message, str) else ""
    elif parsed is not None:
        text = ""
    elif text.startswith("<"):
        # An HTML error page (a proxy's 502): its title says what went wrong; the markup
        # would reach the chat as it is.
        title = _HTML_TITLE.search(text)
        text = html.unescape(title.group(1)) if title else ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def observe(services: Services, turn: Turn) -> None:
    """Record ``turn`` for the clock (timestamps, transcript) without answering it: a group
    message the bot was not asked about. Nothing is sent upstream."""
    turn.observe_only = True
    await services.pipeline(turn)


async def observe_media_only(
    services: Services, turn: Turn, tell: Callable[[str], Awaitable[None]] | None
) -> None:
    """Record ``turn``, a message that was only a photo, sticker, voice note or file, for
    the clock. With ``tell`` (the bot was addressed) the sender is told ``TEXT_ONLY``
    without asking the model, even when recording failed, and the answer is recorded as
    the bot's message, as a chat command's answer is: the thread's agent time moves, and
    the transcript (so later history) has it."""
    observed = False
    try:
        await observe(services, turn)
        observed = True
    finally:
        if tell is not None:
            if observed:
                # Queued before it is sent, as a command's answer is: any read after the
                # sender sees it (the transcript, the thread's times) finds it stored.
                stored = services.store.record_reply(
                    turn.thread_key, TEXT_ONLY, services.clock.now()
                )
                stored.add_done_callback(log_if_failed(log, "record the reply", turn.thread_key))
                turn.reply_id = stored
            await delivering(services, turn, tell(TEXT_ONLY))


async def delivering(services: Services, turn: Turn, delivery: Awaitable[None]) -> None:
    """Await ``delivery``, the sending of the reply to ``turn``. When nothing of it
    reached the user (``ReplyNotDelivered``: the bot blocked, the chat gone, every retry
    failed), the stored reply is marked so that no later turn forwards it: the model must
    not believe the user read it. The error goes on to the channel, which logs it."""
    try:
        await delivery
    except ReplyNotDelivered:
        message_id = await _stored_id(turn.reply_id)
        if message_id is not None:
            marked = services.store.mark_undelivered(turn.thread_key, message_id)
            marked.add_done_callback(
                log_if_failed(log, "mark a reply undelivered", turn.thread_key)
            )
        raise


async def _stored_id(stored: asyncio.Future[int] | None) -> int | None:
    """The id of a stored reply; ``None`` for one not stored (its failure was logged where
    it was queued)."""
    if stored is None:
        return None
    try:
        return await stored
    except Exception:
        return None


async def member_left(
    services: Services, channel: str, chat_id: str, user_id: str, at: datetime
) -> None:
    """Note that the member ``user_id`` left the group chat ``chat_id`` (and its topics):
    the block's local-times list and ``/time`` leave them out until they write there
    again. A member the relay never saw write there is nothing to note."""
    agent_id = services.config.server.agent_id
    key = thread_key(agent_id, channel, "group", chat_id)
    marked = await services.store.mark_left(key, user_key(channel, user_id), at)
    log.debug("%s: a member left chat %s (%d threads marked)", channel, chat_id, marked)


class SeenOnce:
    """Keys seen lately (at most ``size``, the oldest forgotten first): so that a message
    edited again and again is told ``EDIT_NOT_READ`` once."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._seen: dict[str, None] = {}

    def first(self, key: str) -> bool:
        """Whether ``key`` is seen for the first time (lately); it is seen from now on."""
        if key in self._seen:
            return False
        if len(self._seen) >= self._size:
            del self._seen[next(iter(self._seen))]
        self._seen[key] = None
        return True


class LiveReply(Protocol):
    """A reply shown while it is written (a message edited in place)."""

    async def update(self, text: str) -> None:
        """Show ``text``, the reply so far; may skip updates to respect rate limits."""
        ...

    async def finish(self, text: str) -> None:
        """Deliver the whole reply ``text``, whatever was shown before."""
        ...


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
    live: LiveReply | None = None,
) -> None:
    """Answer ``turn`` and deliver the reply while holding the conversation's ``lock``,
    showing ``typing`` until the reply is ready. With ``live`` the reply is streamed into
    it as it is written, and ``live.finish`` delivers it instead of ``deliver``.

    A turn that fails inside the relay (the store, a stage) is logged and answered with
    ``TURN_FAILED``: the user is never left without a reply."""
    async with lock:
        async with alongside(typing):
            try:
                turn.body = await conversation_body(services, turn, history_limit)
                text = await answer(services, turn, live.update if live is not None else None)
            except Exception:
                log.exception("answering a %s message failed", turn.channel)
                text = TURN_FAILED
        await delivering(services, turn, live.finish(text) if live is not None else deliver(text))
