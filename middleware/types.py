"""The small core values that cross the pipeline: ``Turn``, ``Reply`` and friends.

No platform SDK type appears here; channel adapters and the HTTP edge convert to these.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from middleware import json_codec
from middleware.quoting import own_words

if TYPE_CHECKING:
    from middleware.clock.parsing import ParseResult
    from middleware.clock.presentation import Audience
    from middleware.store.records import PriorState

ChatType = Literal["dm", "group"]
JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Participant:
    """Someone seen speaking in a group thread."""

    user_key: str
    display_name: str | None = None


@dataclass(slots=True)
class InjectedContext:
    """What the stages decided to tell the model on this turn, rendered last into one block.

    ``sections`` are ordered lines/paragraphs; ``text`` is the final rendered block (set by
    the injection stage) and ``tokens`` its estimated size.
    """

    sections: list[str] = field(default_factory=list)
    # Lines of the first section (the clock's) that the block's ceiling may drop, first
    # to go first, to keep a later section that would not fit (``trim_sections``).
    droppable: tuple[str, ...] = ()
    # The continuity cards (spec 001 §6), rendered within their own budget; they follow
    # the sections and are never trimmed by the block's ceiling.
    cards: list[str] = field(default_factory=list)
    text: str = ""
    tokens: int = 0


# A UTF-16 surrogate alone: JSON can carry one ("\udce9") and ``json`` reads it, but it is
# not text; UTF-8 (the store, hashing, the terminal) cannot encode it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it encodes as UTF-8."""
    # isascii() reads a flag CPython keeps on every string: most texts cost nothing here.
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


@dataclass(slots=True)
class Turn:
    """One inbound user message on its way through the pipeline.

    The channel fills the first group of fields; the identity stage fills the keys;
    later stages fill ``context``. ``body`` is the chat-completions request to forward
    (its ``messages`` list included) and is forwarded as-is except for the injection.
    """

    channel: str
    thread_id: str
    user_id: str
    text: str
    received_at: datetime
    body: JSON
    chat_type: ChatType = "dm"
    display_name: str | None = None
    topic_id: str | None = None
    participants: list[Participant] = field(default_factory=list)
    # Members the message mentions, by platform user id, with the name the chat shows
    # them by there (a Discord server nickname): a group names them so from then on, as
    # if they had written under it (``InboundRecord.member_names``).
    mentioned_names: dict[str, str] = field(default_factory=dict)
    # True when the newest message is not the user's (a tool result coming back), or is
    # one already recorded sent again (``resent``): the user did not speak, so no new
    # inbound message is recorded and no new block made; the blocks are replayed.
    continuation: bool = False
    # True for a request that may carry again a message it already brought (the API's:
    # an SDK retry, a regenerated answer); a chat channel's turns are each a new message.
    resendable: bool = False
    # True when the recording stage found the newest user message to be the one it last
    # recorded from this user in the thread, sent again (set with ``continuation``). It is
    # not recorded twice, and goes with the block it was sent with; a command in it is
    # still answered.
    resent: bool = False
    # True when the channel dropped earlier history to fit its budget on this turn (the
    # relay's "compaction"): continuity captures first and the cards come back.
    compacted: bool = False
    # Whether chat commands (/tz, /time…) are answered here; the API channel opts in.
    commands_allowed: bool = True
    # True for a message the relay only witnesses (a group message not addressed to the
    # bot): the recording stage stores it, moving its timestamps, and ends the pipeline
    # there with an empty reply; nothing later runs and nothing is sent upstream.
    observe_only: bool = False
    # False for a group message answered only because the channel's group_policy is
    # "all": it neither mentions nor replies to the bot, so it may be said to the room
    # (living memory learns less from it). A DM, and any turn the API brings, is addressed.
    addressed: bool = True
    # The locale the user's app reports with the message, as a babel identifier ("de",
    # "pt_BR"; ``middleware.locales.babel_locale``), or None when it reports none. The
    # recording stage keeps it for the user; one they chose with /lang still wins.
    locale: str | None = None
    # filled by the identity stage
    user_key: str = ""
    thread_key: str = ""
    person_id: str | None = None
    # filled by later stages
    context: InjectedContext = field(default_factory=InjectedContext)
    # The stored inbound message's id, once its write has landed (set by the recording
    # stage, which queues the write so that it lands while the upstream works).
    inbound_id: asyncio.Future[int] | None = None
    # The stored reply's id (set by the recording stage when it stores the reply), so a
    # channel that could not deliver it can say so (``Store.mark_undelivered``).
    reply_id: asyncio.Future[int] | None = None
    # What the store held before this message was recorded (set by the recording stage).
    prior: PriorState | None = None
    # Who reads the reply, for rendering <time …> markup (set by the clock stage).
    audience: Audience | None = None
    # The message's time phrases, read in its session zone (set by the clock stage).
    time_expressions: tuple[ParseResult, ...] = ()

    @property
    def own_text(self) -> str:
        """The speaker's own words (``middleware.quoting.own_words``): ``text`` without the
        quote of a message it replies to, and empty for a forwarded message. What learns
        about the speaker reads this; the model and the transcript get ``text``."""
        return own_words(self.text)

    @property
    def mentions_time(self) -> bool:
        """Whether the message has time expressions (known once the clock stage ran)."""
        return bool(self.time_expressions)

    def __post_init__(self) -> None:
        # What the relay reads and stores is text; ``body`` is forwarded exactly as it came.
        self.text = valid_text(self.text)


OnComplete = Callable[["ReplyOutcome"], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ReplyOutcome:
    """How a reply ended: the assistant text seen, and whether it arrived whole."""

    text: str
    complete: bool


# Events a ``ReplyStream`` holds unparsed at most before it reads their text anyway, so a
# long stream whose text nobody asks for keeps a bounded amount of raw JSON.
_UNREAD_EVENTS = 256


class ReplyStream:
    """An upstream SSE stream passed through byte-for-byte.

    Iterating yields the raw chunks exactly as they arrived from the upstream (no
    coalescing, no re-serialising). On the side it collects the ``data:`` lines, whose
    assistant text ``text`` returns, and when the stream ends (or is abandoned) it runs
    the completion callbacks once with what was seen.

    The lines are parsed only when the text is asked for (``text``, or the callbacks at
    the end): a stage that wraps a stream in another ``ReplyStream`` makes one whose text
    nobody may read, and parsing every event there would be wasted.
    """

    def __init__(self, chunks: AsyncIterator[bytes], close: Callable[[], None]) -> None:
        self._chunks = chunks
        self._close = close
        self._pending = b""
        self._unread: list[bytes] = []
        self._parts: list[str] = []
        self._done_marker = False
        self._callbacks: list[OnComplete] = []
        self._finished = False

    def on_complete(self, callback: OnComplete) -> None:
        self._callbacks.append(callback)

    def discard(self) -> None:
        """Release the upstream's stream unread: its turn failed before the answer was
        sent. The completion callbacks do not run."""
        self._close()

    @property
    def text(self) -> str:
        """The assistant text of the events seen so far."""
        self._read_unread()
        return "".join(self._parts)

    async def __aiter__(self) -> AsyncGenerator[bytes, None]:
        complete = False
        try:
            async for chunk in self._chunks:
                self._observe(chunk)
                yield chunk
            complete = True
        finally:
            self._close()
            await self.finish(complete=complete and self._done_marker)

    async def finish(self, *, complete: bool) -> None:
        """Run the completion callbacks once; safe to call again."""
        if self._finished:
            return
        self._finished = True
        if not self._callbacks:
            return
        outcome = ReplyOutcome(self.text, complete)
        for callback in self._callbacks:
            await callback(outcome)

    def _observe(self, chunk: bytes) -> None:
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                self._done_marker = True
                continue
            self._unread.append(payload)
        if len(self._unread) > _UNREAD_EVENTS:
            self._read_unread()

    def _read_unread(self) -> None:
        if self._unread:
            self._parts.extend(map(delta_text, self._unread))
            self._unread.clear()


def delta_text(payload: bytes) -> str:
    """The text one streamed chunk's JSON adds to the first answer, or '' if none.

    A request with ``n`` > 1 streams its answers interleaved, each chunk naming its own
    ``index``: only the first answer's (index 0, as ``completion_text`` reads) is the
    reply, or the transcript would splice all of them together word by word.
    """
    try:
        event = json_codec.peek(payload)
        for choice in event.get("choices") or []:
            if choice.get("index", 0) == 0:
                content = (choice.get("delta") or {}).get("content")
                return content if isinstance(content, str) else ""
    except (ValueError, AttributeError):
        return ""
    return ""


def completion_text(body: bytes) -> str:
    """The assistant text of a non-streamed chat completion body, or '' if none."""
    try:
        parsed = json_codec.peek(body)
        content = parsed["choices"][0]["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""
    return content if isinstance(content, str) else ""


# ``Reply.meta`` key: the reply must reach the client exactly as produced (no rendering).
VERBATIM = "verbatim"
# ``Reply.meta`` key: the relay's reply is not recorded in the transcript (``/forget``'s,
# which must not leave a trace of what it deleted).
UNRECORDED = "unrecorded"
# ``Reply.meta`` key: the relay answered the message itself (a chat command, a clock
# directive); the value names the command. The recording stage marks the message stored.
COMMAND = "command"
# ``Reply.meta`` key: impactful tool calls let through (annotate mode), comma-separated.
IMPACTFUL_TOOL_CALLS = "impactful_tool_calls"


@dataclass(slots=True)
class Reply:
    """What comes back through the pipeline.

    Exactly one of ``body`` (a whole upstream JSON body, forwarded unchanged) or
    ``stream`` is set for replies from the upstream; replies made by the relay itself
    (a chat command, say) set only ``text``.
    """

    text: str = ""
    status: int = 200
    body: bytes | None = None
    stream: ReplyStream | None = None
    content_type: str = "application/json"
    meta: dict[str, str] = field(default_factory=dict)


class Upstream(Protocol):
    """The LLM endpoint the last stage forwards to."""

    async def complete(self, body: JSON) -> Reply:
        """Send a chat-completions body; return the whole reply, or a stream when
        ``body["stream"]`` is true. Raises ``UpstreamError`` subclasses on failure,
        only before any byte of the answer was handed out."""
        ...

    async def ready(self) -> bool:
        """Whether the upstream answers at all (used by ``/readyz``)."""
        ...

    async def close(self) -> None:
        """Release pooled connections."""
        ...
