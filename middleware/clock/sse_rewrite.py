"""Render ``<time …>`` markups inside an OpenAI chat-completion SSE stream.

Only ``choices[0].delta.content`` is rewritten (an event carries one choice; with ``n`` > 1
the answers' events come interleaved, told apart by the choice's ``index``), through one
``StreamingTimeRenderer`` per answer, so a markup split across one answer's events is never
joined with another answer's text.
Everything else passes through byte for byte: an event whose content does not change is
re-emitted from its original bytes, and a network chunk made only of such whole events is
yielded as the very same ``bytes`` object. An event is parsed only when it could change
the answer or what in it is code: while the renderer is idle (it holds nothing and waits
for no line start, backtick run or escaped character to end), one without a ``<``, a
backtick or a JSON escape (a line break is ``\\n``, a backslash ``\\\\``) cannot, and a
long answer is hundreds of events. Markup inside Markdown code is left as written
(``presentation``). An event whose content changes is re-serialised with ``json.dumps``,
keeping every other field. Text the renderer still holds is flushed into the event that
sets that answer's ``finish_reason`` (as content, or as an extra content event just before
it), else before ``data: [DONE]``, else at the end of the stream; the extra event copies
``id``, ``object``, ``created``, ``model`` and ``system_fingerprint`` from the last event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from middleware.clock.presentation import StreamingTimeRenderer

__all__ = ["rewrite_sse"]

_COPIED_FIELDS = ("id", "object", "created", "model", "system_fingerprint")
#: Bytes after which an event must be parsed while the renderers are idle.
_SIGNIFICANT = b"<`\\"


class _EventRewriter:
    """Rewrites one complete SSE event (its raw bytes, blank line included) at a time."""

    def __init__(self, renderer: StreamingTimeRenderer) -> None:
        # The first answer's renderer; the others' (``n`` > 1) are made as they appear.
        self._renderer = renderer
        self._others: dict[int, StreamingTimeRenderer] = {}
        self._last: dict[str, Any] | None = None

    def _holding(self) -> bool:
        return self._renderer.holding or any(r.holding for r in self._others.values())

    def _renderer_for(self, index: object) -> StreamingTimeRenderer:
        if index == 0 or not isinstance(index, int):
            return self._renderer
        if index not in self._others:
            self._others[index] = self._renderer.fresh()
        return self._others[index]

    def rewrite(self, raw: bytes) -> list[bytes] | None:
        """Return the bytes replacing ``raw``, or ``None`` when ``raw`` goes out unchanged."""
        # Inline, not a method: this runs for every event of a stream, and with one
        # answer (``n`` = 1) the other answers cost one empty-dict test.
        others_busy = self._others and not all(r.idle for r in self._others.values())
        if self._renderer.idle and not others_busy and not _may_matter(raw):
            # Nothing held, so nothing to flush at a finish or [DONE], and nothing here
            # that could be a markup or change what is code. (``_last`` stays exact: text
            # is held only from a parsed event on, and every event after it is parsed
            # until it is flushed.)
            return None
        data = _data_of(raw)
        if data is None:
            return None
        if data.strip() == "[DONE]":
            return [*self.flush_events(), raw] if self._holding() else None
        try:
            event = json.loads(data)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        self._last = event
        choice = _first_choice(event)
        if choice is None:
            return None
        index = choice.get("index", 0)
        renderer = self._renderer_for(index)
        delta = choice.get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        finishing = choice.get("finish_reason") is not None
        if isinstance(delta, dict) and isinstance(content, str):
            new = renderer.feed(content)
            if finishing:
                new += renderer.flush()
            if new == content:
                return None
            delta["content"] = new
            return [_replace_data(raw, event)]
        if finishing:
            extra = self._flush_event(renderer, index)
            return None if extra is None else [extra, raw]
        return None

    def flush_events(self) -> list[bytes]:
        """Extra content events carrying each answer's held text (none if nothing is held)."""
        answers = [(0, self._renderer), *self._others.items()]
        return [e for i, r in answers if (e := self._flush_event(r, i)) is not None]

    def _flush_event(self, renderer: StreamingTimeRenderer, index: object) -> bytes | None:
        text = renderer.flush()
        if not text:
            return None
        base = self._last or {}
        event: dict[str, Any] = {k: base[k] for k in _COPIED_FIELDS if k in base}
        choice = {"index": index, "delta": {"content": text}, "finish_reason": None}
        event["choices"] = [choice]
        return b"data: " + _dumps(event) + b"\n\n"


def _may_matter(raw: bytes) -> bool:
    """Whether the event's text could hold a ``<``, a backtick or a line break: one of
    them raw, or any JSON escape (``\\n``, ``\\u003c``). One deletion and a length test
    cost less than a substring search per character."""
    return len(raw.translate(None, _SIGNIFICANT)) != len(raw)


def _first_choice(event: dict[str, Any]) -> dict[str, Any] | None:
    choices = event.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        first: dict[str, Any] = choices[0]
        return first
    return None


def _lines(raw: bytes) -> list[bytes]:
    return [line.rstrip(b"\r") for line in raw.split(b"\n")]


def _data_of(raw: bytes) -> str | None:
    """The joined ``data:`` field values of an event, or ``None`` if it has none."""
    values = [line[5:].removeprefix(b" ") for line in _lines(raw) if line.startswith(b"data:")]
    if not values:
        return None
    try:
        return b"\n".join(values).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _dumps(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _replace_data(raw: bytes, event: dict[str, Any]) -> bytes:
    """``raw`` with its data lines replaced by one line holding ``event``; other fields
    (``event:``, ``id:``, comments) and the line endings are kept."""
    newline = b"\r\n" if b"\r\n" in raw else b"\n"
    out: list[bytes] = []
    written = False
    for line in _lines(raw):
        if not line:
            continue
        if line.startswith(b"data:"):
            if written:
                continue
            line, written = b"data: " + _dumps(event), True
        out.append(line)
    return newline.join(out) + newline + newline


def _event_end(buffer: bytes | bytearray, start: int) -> int:
    """Index just past the blank line ending the event that begins at ``start``, or -1."""
    pos = start
    while True:
        newline = buffer.find(b"\n", pos)
        if newline < 0:
            return -1
        line = buffer[pos:newline]
        if line in (b"", b"\r"):
            return newline + 1
        pos = newline + 1


async def rewrite_sse(
    chunks: AsyncIterator[bytes], renderer: StreamingTimeRenderer
) -> AsyncIterator[bytes]:
    """Yield ``chunks`` with time markups in the assistant's content rendered.

    Events may be split across chunks and several may share one chunk; lines end in
    ``\n`` or ``\r\n`` (a bare ``\r`` is not a line end here, OpenAI never sends one). A chunk
    is yielded as is when it holds only whole events none of which change. Bytes after the last
    complete event at the end of the stream are passed through unchanged.
    """
    rewriter = _EventRewriter(renderer)
    pending = bytearray()
    async for chunk in chunks:
        untouched = not pending
        pending += chunk
        out: list[bytes] = []
        start = 0
        while (end := _event_end(pending, start)) >= 0:
            raw = bytes(pending[start:end])
            replacement = rewriter.rewrite(raw)
            if replacement is None:
                out.append(raw)
            else:
                out.extend(replacement)
                untouched = False
            start = end
        del pending[:start]
        if untouched and not pending:
            yield chunk
        elif out:
            yield b"".join(out)
    for extra in rewriter.flush_events():
        yield extra
    if pending:
        yield bytes(pending)
