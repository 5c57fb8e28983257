"""Tool calls in chat-completion replies: which are impactful, holding them, releasing them.

A reply is read in the OpenAI chat-completions shape, either a whole ``chat.completion``
body or an SSE stream of ``chat.completion.chunk`` events. Only ``choices[0]`` is
considered (requests with ``n > 1`` are not guarded here). Legacy ``function_call``
replies are not tool calls and are not looked at.

Everything this module writes (the confirmation reply, the released call) is shaped as
the OpenAI API shapes it, so the official SDKs parse and accumulate it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

__all__ = [
    "DEFAULT_PATTERNS",
    "SAFE_PREFIXES",
    "StreamToolCalls",
    "ToolCall",
    "confirmation_body",
    "confirmation_text",
    "guard_stream",
    "impactful_names",
    "release_body",
    "release_stream",
    "tool_calls_in_body",
]

# Matched case-insensitively against the tool name, its snake_case form (``sendEmail`` is
# also tried as ``send_email``) and its last namespace segment (``gmail.send`` -> ``send``,
# ``mcp__slack__post_message`` -> ``post_message``). Word-shaped (``*_event*``, not
# ``*event*``) so that e.g. ``prevent_overlap`` does not match.
DEFAULT_PATTERNS: tuple[str, ...] = (
    # sending messages/emails to third parties
    "send", "send_*", "*_send", "*email*", "*_mail", "mail_*", "*_message", "*_messages",
    "message", "message_*", "post", "post_*", "*_post", "reply", "reply_*", "forward",
    "forward_*", "tweet*", "*_tweet", "notify", "notify_*", "sms", "*_sms", "sms_*", "dm_*",
    "invite", "invite_*", "share", "share_*", "comment", "comment_*", "*_comment",
    # creating/modifying calendar events or reminders
    "*calendar*", "event_*", "events_*", "*_event", "*_events", "*_event_*", "*reminder*",
    "remind_*", "schedule", "schedule_*", "reschedule*", "*meeting*", "*appointment*", "rsvp*",
    "book", "book_*",
    # purchases and financial actions
    "purchase*", "*_purchase", "buy", "buy_*", "*payment*", "pay", "pay_*", "transfer",
    "transfer_*", "*_transfer", "order", "order_*", "*_order", "checkout*", "*_checkout",
    "refund*", "*_refund", "charge", "charge_*", "*invoice*", "withdraw*", "sell", "sell_*",
    "trade", "trade_*", "*_trade", "place_*", "donate*", "subscribe*", "unsubscribe*", "cancel",
    "cancel_*",
    # publishing/deploying public changes
    "publish*", "*_publish", "deploy*", "*_deploy", "release", "release_*", "*_release", "push",
    "push_*", "*_push", "merge", "merge_*", "*_merge", "rollout*", "ship", "ship_*",
    # deleting data
    "delete*", "*_delete", "remove", "remove_*", "*_remove", "drop", "drop_*", "destroy",
    "destroy_*", "*_destroy", "rm", "rm_*", "erase", "erase_*", "purge", "purge_*", "wipe",
    "wipe_*", "trash", "trash_*", "*_trash", "truncate", "truncate_*",
)  # fmt: skip

# A name whose last segment starts with one of these reads or prepares rather than acts, so
# it is never impactful even when a pattern matches (``get_calendar_events``,
# ``list_emails``, ``draft_email``). A bare verb (``calendar.get``) counts too. The verb
# must lead: ``calendar_list_events`` is still impactful (a false positive, on purpose).
SAFE_PREFIXES: tuple[str, ...] = (
    "get_", "list_", "search_", "read_", "fetch_", "find_", "lookup_", "query_", "view_",
    "show_", "describe_", "check_", "count_", "preview_", "draft_", "summarize_", "validate_",
    "verify_", "parse_", "track_", "is_", "has_", "can_",
)  # fmt: skip

_NAMESPACE = re.compile(r"__|[./:]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")
_HELD_ID = "chatcmpl-held"
_DONE = b"data: [DONE]\n\n"
_ENVELOPE = ("id", "created", "model", "system_fingerprint")
_MAX_VALUE = 80
_MAX_CALL = 300


def _snake(name: str) -> str:
    return _SEPARATORS.sub("_", _CAMEL.sub("_", name).lower()).strip("_")


def impactful_names(
    names: Iterable[str],
    patterns: Iterable[str] = DEFAULT_PATTERNS,
    *,
    safe_prefixes: Iterable[str] = SAFE_PREFIXES,
) -> list[str]:
    """The given tool names that match any fnmatch ``patterns``, in order, without repeats.

    Matching ignores case and is tried on the name as given, its snake_case form and its
    last namespace segment; a name whose last segment starts with a ``safe_prefixes`` verb
    is never returned.
    """
    lowered = [p.lower() for p in patterns]
    safe = tuple(p.lower() for p in safe_prefixes)
    found: list[str] = []
    for name in names:
        if name in found:
            continue
        last = _snake(_NAMESPACE.split(name)[-1])
        if any(last.startswith(p) or last == p.rstrip("_") for p in safe):
            continue
        candidates = {name.lower(), _snake(name), last}
        if any(fnmatchcase(c, p) for c in candidates for p in lowered):
            found.append(name)
    return found


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant reply; ``arguments`` is the JSON text as sent."""

    id: str
    name: str
    arguments: str
    index: int


def _first_choice(event: Any) -> dict[str, Any] | None:
    choices = event.get("choices") if isinstance(event, dict) else None
    if not isinstance(choices, list):
        return None
    for position, choice in enumerate(choices):
        if isinstance(choice, dict) and choice.get("index", position) == 0:
            return choice
    return None


def _call_of(entry: Any, position: int) -> ToolCall | None:
    if not isinstance(entry, dict):
        return None
    # "custom" tool calls carry {"name", "input"} instead of {"name", "arguments"}.
    inner = entry.get("function") or entry.get("custom")
    if not isinstance(inner, dict) or not isinstance(inner.get("name"), str):
        return None
    arguments = inner.get("arguments", inner.get("input", ""))
    if not isinstance(arguments, str):
        # Some servers send an object; the client sees it as JSON either way.
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = entry.get("id")
    return ToolCall(call_id if isinstance(call_id, str) else "", inner["name"], arguments, position)


def tool_calls_in_body(body: bytes) -> tuple[dict[str, Any] | None, list[ToolCall]]:
    """The assistant message of ``choices[0]`` of a ``chat.completion`` body and its tool
    calls. ``(None, [])`` when the body is not such JSON; the calls are ``[]`` when there
    are none, and malformed entries (no function name) are skipped."""
    try:
        choice = _first_choice(json.loads(body))
    except ValueError:
        return None, []
    message = choice.get("message") if choice is not None else None
    if not isinstance(message, dict):
        return None, []
    raw = message.get("tool_calls")
    if not isinstance(raw, list):
        return message, []
    calls = [_call_of(entry, position) for position, entry in enumerate(raw)]
    return message, [call for call in calls if call is not None]


@dataclass(slots=True)
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamToolCalls:
    """Accumulates a streamed reply's ``choices[0]`` from raw SSE bytes.

    ``feed`` takes chunks split anywhere. Events end at a blank line and their ``data:``
    lines are joined, as the SDKs read them; ``data: [DONE]`` counts as soon as its line
    ends. Tool-call deltas are merged by ``index`` as the SDKs merge them (``id`` is kept
    from the first delta that has one; name and arguments are concatenated).
    """

    def __init__(self) -> None:
        self._pending = b""
        self._data: list[bytes] = []
        self._content: list[str] = []
        self._calls: dict[int, _CallParts] = {}
        self._envelope: dict[str, Any] = {}
        self._role_seen = False
        self._done = False
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    @property
    def saw_tool_calls(self) -> bool:
        """Whether any tool-call delta has arrived."""
        return bool(self._calls)

    @property
    def done(self) -> bool:
        """Whether ``data: [DONE]`` has arrived: the stream ended whole."""
        return self._done

    @property
    def role_seen(self) -> bool:
        """Whether a delta carried the ``role`` (the SDKs concatenate a repeated role)."""
        return self._role_seen

    @property
    def content(self) -> str:
        """The assistant text so far."""
        return "".join(self._content)

    @property
    def completion_id(self) -> str:
        return str(self._envelope.get("id", _HELD_ID))

    @property
    def model(self) -> str:
        return str(self._envelope.get("model", ""))

    @property
    def created(self) -> int:
        created = self._envelope.get("created", 0)
        return created if isinstance(created, int) else 0

    def feed(self, chunk: bytes) -> None:
        """Read one more chunk of the stream."""
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            line = line.rstrip(b"\r")
            if not line:
                self._dispatch()
            elif line.startswith(b"data:"):
                value = line[5:].removeprefix(b" ")
                self._done = self._done or value.strip() == b"[DONE]"
                self._data.append(value)

    def calls(self) -> list[ToolCall]:
        """The tool calls so far, by index."""
        return [
            ToolCall(parts.id, parts.name, "".join(parts.arguments), index)
            for index, parts in sorted(self._calls.items())
        ]

    def message(self) -> dict[str, Any]:
        """The reply so far as a non-streamed completion's assistant message."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self._calls:
            message["tool_calls"] = [_wire_call(call) for call in self.calls()]
        return message

    def envelope(self) -> dict[str, Any]:
        """``id``, ``created``, ``model`` (and ``system_fingerprint`` if sent) of the stream,
        for writing more chunks of it; defaults fill what never arrived."""
        envelope = {"id": self.completion_id, "created": self.created, "model": self.model}
        if "system_fingerprint" in self._envelope:
            envelope["system_fingerprint"] = self._envelope["system_fingerprint"]
        return envelope

    def _dispatch(self) -> None:
        data, self._data = self._data, []
        if not data:
            return
        try:
            event = json.loads(b"\n".join(data))
        except ValueError:
            return  # [DONE], or a comment-like payload the SDKs would also reject
        if not isinstance(event, dict):
            return
        for key in _ENVELOPE:
            if key in event and key not in self._envelope:
                self._envelope[key] = event[key]
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        choice = _first_choice(event)
        if choice is None:
            return
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        self._role_seen = self._role_seen or isinstance(delta.get("role"), str)
        if isinstance(delta.get("content"), str):
            self._content.append(delta["content"])
        if isinstance(delta.get("tool_calls"), list):
            for entry in delta["tool_calls"]:
                if isinstance(entry, dict):
                    self._merge(entry)

    def _merge(self, entry: dict[str, Any]) -> None:
        index = entry.get("index")
        call_id = entry.get("id")
        if not isinstance(index, int) or isinstance(index, bool):
            # Some servers leave out the index: a new id opens a call, else the last grows.
            known = {parts.id for parts in self._calls.values()}
            fresh = isinstance(call_id, str) and call_id and call_id not in known
            index = len(self._calls) if fresh or not self._calls else max(self._calls)
        parts = self._calls.setdefault(index, _CallParts())
        if isinstance(call_id, str) and not parts.id:
            parts.id = call_id
        function = entry.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str):
                parts.name += function["name"]
            if isinstance(function.get("arguments"), str):
                parts.arguments.append(function["arguments"])


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def _sse(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n\n"


def _chunk(envelope: dict[str, Any], delta: dict[str, Any], finish: str | None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return _sse({**envelope, "object": "chat.completion.chunk", "choices": [choice]})


def _after_last_event(data: bytes) -> int:
    """Index just past the last blank line in ``data`` (0 if none): the end of the last
    whole event."""
    lf = data.rfind(b"\n\n")
    crlf = data.rfind(b"\n\r\n")
    return max(lf + 2 if lf >= 0 else 0, crlf + 3 if crlf >= 0 else 0)


def _joined(before: str, after: str) -> str:
    """``before`` and ``after`` as two paragraphs."""
    if not before or before.endswith("\n\n"):
        return before + after
    return before + ("\n" if before.endswith("\n") else "\n\n") + after


async def guard_stream(
    chunks: AsyncIterator[bytes],
    is_impactful: Callable[[list[ToolCall]], list[str]],
    on_hold: Callable[[dict[str, Any], list[str]], Awaitable[str]],
) -> AsyncGenerator[bytes, None]:
    """Pass an SSE reply through, holding it back from its first tool call on.

    Whole events go out as they arrive (a chunk made only of whole events is yielded as the
    very same object; an event split across chunks goes out once complete). From the chunk
    whose events include the first tool-call delta on, everything is buffered. At the end:

    - the reply ended whole (``[DONE]``, or a ``finish_reason``: some servers close the
      stream without ``[DONE]``, and the SDKs accept that) and ``is_impactful(calls)``
      names some calls: ``on_hold(message, names)`` gets the held assistant message (all
      its content and tool calls) and returns the text to show instead. The buffered
      bytes are dropped and replaced by a content chunk, a ``finish_reason: "stop"``
      chunk, a usage chunk if the upstream sent usage, and ``data: [DONE]``, under the
      upstream's id/model/created. Content that already went out is not repeated: if the
      text starts with it, only the rest is sent, else the text follows it as a new
      paragraph;
    - the stream broke off (neither) with impactful calls buffered: nothing more is sent,
      since a call cut short can be neither confirmed nor passed on;
    - otherwise (nothing impactful): the buffered bytes, unchanged.

    If the upstream raises while calls are held, the held bytes are never sent.
    """
    parser = StreamToolCalls()
    pending = b""
    held: list[bytes] = []
    shown_role, shown_text = False, ""
    async for chunk in chunks:
        if held:
            held.append(chunk)
            parser.feed(chunk)
            continue
        data = pending + chunk if pending else chunk
        cut = _after_last_event(data)
        if cut == 0:
            pending = data
            continue
        whole, pending = data[:cut], data[cut:]
        shown_role, shown_text = parser.role_seen, parser.content
        parser.feed(whole)
        if parser.saw_tool_calls:
            parser.feed(pending)
            held, pending = [whole, pending], b""
        else:
            yield chunk if data is chunk and not pending else whole
    names = is_impactful(parser.calls()) if held else []
    if not names:
        if held or pending:
            yield b"".join(held) + pending
        return
    if not parser.done and parser.finish_reason is None:
        return  # cut short: the SDKs would hand the client a partial impactful call
    text = await on_hold(parser.message(), names)
    remainder = text[len(shown_text) :] if text.startswith(shown_text) else None
    if remainder is None:
        remainder = _joined(shown_text, text)[len(shown_text) :]
    delta: dict[str, Any] = {"content": remainder}
    if not shown_role:
        delta = {"role": "assistant", **delta}
    envelope = parser.envelope()
    out = [_chunk(envelope, delta, None), _chunk(envelope, {}, "stop")]
    if parser.usage is not None:
        usage = {**envelope, "object": "chat.completion.chunk", "choices": []}
        out.append(_sse({**usage, "usage": parser.usage}))
    yield b"".join([*out, _DONE])


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _render_call(call: ToolCall) -> str:
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        arguments = call.arguments
    if isinstance(arguments, dict):
        parts = []
        for key, value in arguments.items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(f"{key}: {_shorten(shown, _MAX_VALUE)}")
        inner = ", ".join(parts)
    else:
        inner = arguments if isinstance(arguments, str) else json.dumps(arguments)
    # Cut inside the parentheses so the call still reads as one.
    budget = max(_MAX_CALL - len(call.name) - 2, 40)
    return f"{call.name}({_shorten(inner, budget)})"


def confirmation_text(
    calls: list[ToolCall], names: list[str], content: str | None, asked_of: str | None = None
) -> str:
    """The assistant message asking the user to confirm the held ``calls``.

    Calls named in ``names`` are listed as the ones to confirm (all calls if none is);
    the others are mentioned, since confirming releases them together. Arguments are
    shown compactly (long values cut, at most ~300 characters per call). Non-blank
    ``content`` the model wrote comes first, as its own paragraph. ``asked_of`` names the
    one person whose answer counts (in a group, where everyone reads the question).
    """
    asked = [call for call in calls if call.name in names] or list(calls)
    others = [call for call in calls if call not in asked]
    if len(asked) == 1:
        lines = [f"Before I go ahead, please confirm: {_render_call(asked[0])}."]
    else:
        lines = ["Before I go ahead, please confirm:"]
        lines += [f"- {_render_call(call)}" for call in asked]
    if others:
        lines.append("This would also run: " + ", ".join(_render_call(c) for c in others) + ".")
    if asked_of is None:
        lines.append('Reply "yes" to do it, or tell me what to change.')
    else:
        lines.append(
            f'{asked_of}, reply "yes" to do it, or tell me what to change (only your answer '
            "confirms it)."
        )
    ask = "\n".join(lines)
    return _joined(content, ask) if content and content.strip() else ask


def confirmation_body(original_body: dict[str, Any], text: str) -> bytes:
    """A ``chat.completion`` body replacing ``original_body`` (whose tool calls are held):
    same top-level fields (id, model, created, usage…), one ``stop`` choice saying
    ``text``."""
    body = {key: value for key, value in original_body.items() if key != "choices"}
    body.setdefault("id", _HELD_ID)
    body.setdefault("created", 0)
    body.setdefault("model", "")
    body["object"] = "chat.completion"
    message = {"role": "assistant", "content": text}
    body["choices"] = [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}]
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _released(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of a held assistant message, role set, content present (maybe ``None``)."""
    released = copy.deepcopy(message)
    released["role"] = "assistant"
    released.setdefault("content", None)
    return released


def release_body(message: dict[str, Any], *, model: str, created: int, completion_id: str) -> bytes:
    """A ``chat.completion`` body handing back the held assistant ``message`` (tool-call
    ids and arguments as held), ``finish_reason: "tool_calls"``. Usage is zero: the
    upstream was not asked again."""
    released = _released(message)
    finish = "tool_calls" if released.get("tool_calls") else "stop"
    choice = {"index": 0, "message": released, "logprobs": None, "finish_reason": finish}
    body = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def release_stream(
    message: dict[str, Any], *, model: str, created: int, completion_id: str
) -> list[bytes]:
    """The held assistant ``message`` as SSE chunks: one delta with the role, content and
    every tool call whole (each with its ``index``), a ``finish_reason: "tool_calls"``
    chunk, then ``data: [DONE]``."""
    released = _released(message)
    delta: dict[str, Any] = {"role": "assistant", "content": released["content"]}
    calls = released.get("tool_calls")
    if isinstance(calls, list) and calls:
        delta["tool_calls"] = [
            {"index": index, **call} for index, call in enumerate(calls) if isinstance(call, dict)
        ]
    envelope = {"id": completion_id, "created": created, "model": model}
    finish = "tool_calls" if "tool_calls" in delta else "stop"
    return [_chunk(envelope, delta, None), _chunk(envelope, {}, finish), _DONE]
