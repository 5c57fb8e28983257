"""``ReplyStream``: chunks pass through unchanged; the text is read only when wanted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from middleware import types
from middleware.types import ReplyOutcome, ReplyStream


def _event(content: str, index: int = 0) -> bytes:
    payload = {"choices": [{"index": index, "delta": {"content": content}}]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


async def _chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every event payload whose text is read, in order."""
    seen: list[bytes] = []
    real = types.delta_text

    def counting(payload: bytes) -> str:
        seen.append(payload)
        return real(payload)

    monkeypatch.setattr(types, "delta_text", counting)
    return seen


async def test_a_stream_nobody_reads_the_text_of_parses_no_event(parsed: list[bytes]) -> None:
    chunks = [_event("It "), _event("is "), _event("late."), b"data: [DONE]\n\n"]
    stream = ReplyStream(_chunks(chunks), lambda: None)
    assert [chunk async for chunk in stream] == chunks
    assert parsed == []
    # Asked afterwards, the text is all there.
    assert stream.text == "It is late."


async def test_text_read_while_streaming_is_the_text_so_far(parsed: list[bytes]) -> None:
    # An event split across chunks counts once it is whole, as channels show it.
    whole = _event("late.")
    chunks = [_event("It ") + _event("is "), whole[:9], whole[9:], b"data: [DONE]\n\n"]
    stream = ReplyStream(_chunks(chunks), lambda: None)
    seen = [stream.text async for _ in stream]
    assert seen == ["It is ", "It is ", "It is late.", "It is late."]
    assert len(parsed) == 3


async def test_callbacks_get_the_whole_text_once_at_the_end() -> None:
    outcomes: list[ReplyOutcome] = []

    async def record(outcome: ReplyOutcome) -> None:
        outcomes.append(outcome)

    stream = ReplyStream(_chunks([_event("a"), _event("b"), b"data: [DONE]\n\n"]), lambda: None)
    stream.on_complete(record)
    async for _ in stream:
        pass
    await stream.finish(complete=False)
    assert outcomes == [ReplyOutcome("ab", complete=True)]


async def test_a_long_unread_stream_does_not_hold_all_its_events(parsed: list[bytes]) -> None:
    count = 3 * types._UNREAD_EVENTS
    stream = ReplyStream(_chunks([_event("x")] * count), lambda: None)
    async for _ in stream:
        pass
    assert len(parsed) >= count - types._UNREAD_EVENTS
    assert stream.text == "x" * count


def test_a_turns_text_is_valid_unicode() -> None:
    # JSON can carry a lone surrogate; the text the relay reads and stores never does.
    turn = types.Turn(
        "api", "t", "u", "caf\udce9 \U0001f600", datetime(2026, 11, 21, tzinfo=UTC), body={}
    )
    assert turn.text == "caf\ufffd \U0001f600"
    assert turn.text.encode()


async def test_the_text_of_a_stream_of_several_answers_is_the_first_ones() -> None:
    # ``n=2``: the upstream interleaves the two answers' chunks, each naming its index.
    chunks = [_event("It ", 0), _event("Quite ", 1), _event("is late.", 0), _event("late.", 1)]
    stream = ReplyStream(_chunks([*chunks, b"data: [DONE]\n\n"]), lambda: None)
    async for _ in stream:
        pass
    assert stream.text == "It is late."
