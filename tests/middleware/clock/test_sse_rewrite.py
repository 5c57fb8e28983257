"""Time markups rendered inside OpenAI chat-completion SSE streams, the rest untouched."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.clock.presentation import DiscordAudience, StreamingTimeRenderer
from middleware.clock.sse_rewrite import rewrite_sse

STAMP = "<t:1795334400:f>"  # 2026-11-22T08:00:00Z for Discord
DONE = b"data: [DONE]\n\n"


def chunk_event(
    content: str | None = None,
    *,
    finish: str | None = None,
    role: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1795330000,
        "model": "gpt-test",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


USAGE = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1795330000,
    "model": "gpt-test",
    "choices": [],
    "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14},
}
TOOL_CALL = chunk_event(
    tool_calls=[{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}]
)


def sse(event: dict[str, Any]) -> bytes:
    # Spaces after separators, as some servers send: proves unchanged events are not
    # re-serialised.
    return b"data: " + json.dumps(event).encode() + b"\n\n"


async def run(chunks: Iterable[bytes]) -> list[bytes]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    renderer = StreamingTimeRenderer(DiscordAudience())
    return [out async for out in rewrite_sse(source(), renderer)]


def parse(stream: bytes) -> list[Any]:
    """The data of each event in ``stream``: a dict, or the string ``"[DONE]"``."""
    events: list[Any] = []
    for block in stream.decode().split("\n\n"):
        if not block:
            continue
        assert block.startswith("data: "), block
        data = block.removeprefix("data: ")
        events.append(data if data == "[DONE]" else json.loads(data))
    return events


def contents(events: list[Any]) -> str:
    return "".join(
        e["choices"][0]["delta"].get("content") or ""
        for e in events
        if isinstance(e, dict) and e["choices"]
    )


async def test_chunks_without_markup_are_the_same_objects() -> None:
    chunks = [
        sse(chunk_event("", role="assistant")),
        sse(chunk_event("Hello, a < b > c.")),
        sse(TOOL_CALL),
        sse(chunk_event(finish="stop")),
        sse(USAGE),
        DONE,
    ]
    out = await run(chunks)
    assert len(out) == len(chunks)
    assert all(o is c for o, c in zip(out, chunks, strict=True))


async def test_several_unchanged_events_in_one_chunk_are_the_same_object() -> None:
    chunk = sse(chunk_event("Hi")) + sse(TOOL_CALL) + sse(chunk_event(finish="stop")) + DONE
    out = await run([chunk])
    assert out == [chunk]
    assert out[0] is chunk


async def test_markup_in_one_event_is_rendered_and_other_fields_kept() -> None:
    original = chunk_event("Meet at <time 2026-11-22T09:00:00+01:00>.")
    out = await run([sse(original), DONE])
    (event, done) = parse(b"".join(out))
    expected = chunk_event(f"Meet at {STAMP}.")
    assert event == expected
    assert done == "[DONE]"
    assert out[-1] == DONE


async def test_markup_written_with_json_escapes_is_rendered() -> None:
    """Servers that escape ``<`` for HTML safety send it as ``\\u003c``; only events
    without any ``<`` skip parsing."""
    escaped = sse(chunk_event("At <time 2026-11-22T09:00:00+01:00>.")).replace(b"<", b"\\u003c")
    assert b"<" not in escaped
    (event,) = parse(b"".join(await run([escaped])))
    assert event == chunk_event(f"At {STAMP}.")


async def test_markup_split_across_events_is_rendered() -> None:
    chunks = [
        sse(chunk_event("See you <ti")),
        sse(chunk_event("me 2026-11-2")),
        sse(TOOL_CALL),
        sse(chunk_event("2T08:00:00Z> then")),
        sse(chunk_event(" bye")),
        sse(chunk_event(finish="stop")),
        sse(USAGE),
        DONE,
    ]
    out = await run(chunks)
    events = parse(b"".join(out))
    assert [e["choices"][0]["delta"].get("content") for e in events[:5]] == [
        "See you ",
        "",
        None,
        f"{STAMP} then",
        " bye",
    ]
    assert contents(events) == f"See you {STAMP} then bye"
    # The tool call, the plain " bye" event, finish, usage and [DONE] go out untouched.
    assert out[2] is chunks[2]
    assert out[4:] == chunks[4:]
    assert all(o is c for o, c in zip(out[4:], chunks[4:], strict=True))


def answer_event(index: int, content: str | None = None, finish: str | None = None) -> bytes:
    """An event of one of several answers (``n`` > 1), which OpenAI sends interleaved."""
    event = chunk_event(content, finish=finish)
    event["choices"][0]["index"] = index
    return sse(event)


def answers(events: list[Any]) -> dict[int, str]:
    texts: dict[int, str] = {}
    for event in events:
        if isinstance(event, dict) and event["choices"]:
            choice = event["choices"][0]
            texts[choice["index"]] = texts.get(choice["index"], "") + (
                choice["delta"].get("content") or ""
            )
    return texts


async def test_interleaved_answers_each_render_their_own_markup() -> None:
    chunks = [
        answer_event(0, "A <time 2026-11-22T0"),
        answer_event(1, "B <time 2026-11-23T0"),
        answer_event(0, "8:00:00Z> a"),
        answer_event(1, "8:00:00Z> b"),
        answer_event(0, finish="stop"),
        answer_event(1, finish="stop"),
        DONE,
    ]
    events = parse(b"".join(await run(chunks)))
    assert answers(events) == {0: f"A {STAMP} a", 1: "B <t:1795420800:f> b"}


async def test_each_answers_held_text_is_flushed_as_that_answer() -> None:
    chunks = [
        answer_event(0, "A until <ti"),
        answer_event(1, "B until <tim"),
        answer_event(1, finish="length"),
        DONE,
    ]
    events = parse(b"".join(await run(chunks)))
    assert answers(events) == {0: "A until <ti", 1: "B until <tim"}
    # Answer 1's rest comes just before its finish event; answer 0's before [DONE].
    assert [e["choices"][0]["index"] for e in events[2:4]] == [1, 1]
    assert events[-2]["choices"][0] == {
        "index": 0,
        "delta": {"content": "<ti"},
        "finish_reason": None,
    }


async def test_held_text_is_flushed_before_the_finish_event() -> None:
    chunks = [sse(chunk_event("until <time 2026")), sse(chunk_event(finish="stop")), DONE]
    out = await run(chunks)
    events = parse(b"".join(out))
    assert len(events) == 4
    extra = events[1]
    assert extra == {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1795330000,
        "model": "gpt-test",
        "system_fingerprint": "fp_1",
        # A markup the answer left open at its end is read as closed: no raw "<time".
        "choices": [{"index": 0, "delta": {"content": "2026"}, "finish_reason": None}],
    }
    assert events[2]["choices"][0]["finish_reason"] == "stop"
    assert out[-1] == DONE
    assert contents(events) == "until 2026"


async def test_held_text_goes_into_a_finish_event_with_content() -> None:
    chunks = [
        sse(chunk_event("at <time 2026-11-22T08:00")),
        sse(chunk_event(":00Z>", finish="stop")),
    ]
    events = parse(b"".join(await run(chunks)))
    assert [e["choices"][0]["delta"]["content"] for e in events] == ["at ", STAMP]
    assert events[1]["choices"][0]["finish_reason"] == "stop"


async def test_held_text_is_flushed_before_done_without_finish_reason() -> None:
    chunks = [sse(chunk_event("see <ti")), sse(USAGE), DONE]
    out = await run(chunks)
    events = parse(b"".join(out))
    assert contents(events) == "see <ti"
    assert events[-1] == "[DONE]"
    assert out[-1].endswith(DONE)
    assert out[1] is chunks[1]


async def test_held_text_is_flushed_at_the_end_of_a_cut_stream() -> None:
    events = parse(b"".join(await run([sse(chunk_event("see <ti"))])))
    assert contents(events) == "see <ti"


def _stream() -> list[bytes]:
    return [
        sse(chunk_event("", role="assistant")),
        sse(chunk_event("Standup: <time 2026-11-22T08:00:00Z>, ")),
        sse(chunk_event("retro <time 2026-11-22T0")),
        sse(chunk_event("9:30:00Z> — ok é")),
        sse(TOOL_CALL),
        sse(chunk_event(finish="stop")),
        sse(USAGE),
        DONE,
    ]


async def test_events_split_across_network_chunks() -> None:
    whole = b"".join(_stream())
    pieces = [whole[i : i + 7] for i in range(0, len(whole), 7)]
    events = parse(b"".join(await run(pieces)))
    assert contents(events) == "Standup: <t:1795334400:f>, retro <t:1795339800:f> — ok é"
    assert events[-1] == "[DONE]"
    assert TOOL_CALL in events
    assert USAGE in events


@settings(deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=12))
async def test_output_does_not_depend_on_network_chunking(cuts: list[int]) -> None:
    whole = b"".join(_stream())
    bounds = sorted({0, len(whole), *(c for c in cuts if c <= len(whole))})
    pieces = [whole[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    assert b"".join(await run(pieces)) == b"".join(await run([whole]))


async def test_unchanged_events_keep_their_bytes_next_to_a_changed_one() -> None:
    plain, tool = sse(chunk_event("plain")), sse(TOOL_CALL)
    chunk = plain + sse(chunk_event("<time 2026-11-22T08:00:00Z>")) + tool
    (out,) = await run([chunk])
    assert out.startswith(plain)
    assert out.endswith(tool)
    assert parse(out)[1]["choices"][0]["delta"]["content"] == STAMP


async def test_crlf_events_and_other_fields_are_kept() -> None:
    event = chunk_event("at <time 2026-11-22T08:00:00Z>")
    raw = b": keep-alive\r\nid: 7\r\ndata: " + json.dumps(event).encode() + b"\r\n\r\n"
    (out,) = await run([raw])
    head, data = out.split(b"data: ")
    assert head == b": keep-alive\r\nid: 7\r\n"
    assert data.endswith(b"\r\n\r\n")
    assert json.loads(data)["choices"][0]["delta"]["content"] == f"at {STAMP}"


async def test_non_json_data_and_a_trailing_partial_event_pass_through() -> None:
    chunks = [b"data: not json <time 2026-11-22T08:00:00Z>\n\n", b'data: {"partial']
    out = await run(chunks)
    assert out == chunks


MARKUP = "<time 2026-11-22T08:00:00Z>"
CODE_ANSWER = (
    f"Write `{MARKUP}`:\n```html\n<p>{MARKUP}</p>\n```\n  ~~~\n{MARKUP}\n  ~~~\nSee you {MARKUP}."
)
CODE_RENDERED = CODE_ANSWER.replace(f"See you {MARKUP}", f"See you {STAMP}")


async def test_markup_inside_code_streams_as_written() -> None:
    """Discord shows no timestamp inside code: ``<t:…>`` there would show raw."""
    tokens = ["Write `", "<time 2026-11-22T08:00:00Z>", "`:", "\n", "``", "`html\n<p>"]
    tokens += [MARKUP, "</p>\n", "```", "\n", "  ", "~~", "~\n", MARKUP, "\n  ~~~\n"]
    tokens += ["See you ", MARKUP, "."]
    assert "".join(tokens) == CODE_ANSWER
    chunks = [sse(chunk_event(t)) for t in tokens] + [sse(chunk_event(finish="stop")), DONE]
    out = await run(chunks)
    assert contents(parse(b"".join(out))) == CODE_RENDERED
    # Events in code pass through as they came.
    assert out[1] is chunks[1]
    assert out[6] is chunks[6]


async def test_code_split_between_events_at_every_position() -> None:
    for cut in range(len(CODE_ANSWER) + 1):
        chunks = [sse(chunk_event(CODE_ANSWER[:cut])), sse(chunk_event(CODE_ANSWER[cut:]))]
        events = parse(b"".join(await run([*chunks, DONE])))
        assert contents(events) == CODE_RENDERED, cut


async def test_a_fence_after_a_skipped_line_break_is_seen() -> None:
    """An event holding a line break (``\\n`` in its JSON) is read even without ``<``:
    the backticks of the next event begin a line."""
    tokens = ["Example", ":\n", "```", "\n", MARKUP, "\n", "```", "\n", "at ", MARKUP]
    events = parse(b"".join(await run([sse(chunk_event(t)) for t in tokens])))
    assert contents(events) == f"Example:\n```\n{MARKUP}\n```\nat {STAMP}"


async def test_an_escaped_backtick_and_a_quoted_fence_stream_as_written() -> None:
    """A backslash in one event escapes the backtick in the next; a fence in a block quote
    holds its markup to its closing ``> ```` line."""
    tokens = ["Type ", "\\", "`", " at ", MARKUP, "\n> ", "```", "\n> ", MARKUP, "\n> ```\n"]
    tokens += ["then ", MARKUP]
    events = parse(b"".join(await run([sse(chunk_event(t)) for t in tokens])))
    assert contents(events) == (f"Type \\` at {STAMP}\n> ```\n> {MARKUP}\n> ```\nthen {STAMP}")
