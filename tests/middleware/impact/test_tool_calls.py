"""Impactful tool calls: spotted by name, held in bodies and streams, released as sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from middleware.impact.tool_calls import (
    DEFAULT_PATTERNS,
    StreamToolCalls,
    ToolCall,
    confirmation_body,
    confirmation_text,
    guard_stream,
    impactful_names,
    release_body,
    release_stream,
    tool_calls_in_body,
)

DONE = b"data: [DONE]\n\n"
EMAIL_ARGS = '{"to": "bob@example.com", "subject": "Hi", "body": "See you at 5."}'
USAGE = {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}


# --- building upstream replies ---------------------------------------------------------


def event(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-up1",
        "object": "chat.completion.chunk",
        "created": 1795330000,
        "model": "gpt-test",
        "system_fingerprint": "fp_1",
        "choices": choices,
        **extra,
    }


def sse(payload: dict[str, Any]) -> bytes:
    # Spaces after separators, as some servers send: proves pass-through is not re-encoding.
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def content_stream() -> list[bytes]:
    return [
        sse(event({"role": "assistant", "content": ""})),
        sse(event({"content": "Hello"})),
        sse(event({"content": " world"})),
        sse(event({}, "stop")),
        DONE,
    ]


def tool_stream(
    name: str = "send_email",
    *,
    content: str | None = None,
    usage: bool = False,
    done: bool = True,
) -> list[bytes]:
    """A reply calling ``name`` with EMAIL_ARGS (sent in three pieces), then ``get_weather``."""
    chunks = [sse(event({"role": "assistant", "content": content and ""}))]
    if content:
        chunks += [sse(event({"content": content[:5]})), sse(event({"content": content[5:]}))]
    first = {"index": 0, "id": "call_A", "type": "function"}
    chunks.append(
        sse(event({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]}))
    )
    for part in (EMAIL_ARGS[:10], EMAIL_ARGS[10:30], EMAIL_ARGS[30:]):
        chunks.append(sse(event({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})))
    second = {"index": 1, "id": "call_B", "type": "function"}
    weather = {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    chunks.append(sse(event({"tool_calls": [{**second, "function": weather}]})))
    chunks.append(sse(event({}, "tool_calls")))
    if usage:
        chunks.append(sse(event(usage=USAGE)))
    if done:
        chunks.append(DONE)
    return chunks


def completion_body(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-body1",
        "object": "chat.completion",
        "created": 1795330000,
        "model": "gpt-test",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": USAGE,
    }


EMAIL_MESSAGE: dict[str, Any] = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_A",
            "type": "function",
            "function": {"name": "send_email", "arguments": EMAIL_ARGS},
        }
    ],
}


# --- reading replies the way the SDK does ----------------------------------------------


def events_of(raw: bytes) -> list[str]:
    """The data of each SSE event (blank-line separated), as the SDK's decoder reads it."""
    out = []
    for block in raw.split(b"\n\n"):
        data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if data:
            out.append(b"\n".join(data).decode())
    return out


def accumulate(raw: bytes) -> ChatCompletion:
    """Validate each chunk with the SDK's types and accumulate them like ``.stream()``."""
    data = events_of(raw)
    assert data[-1] == "[DONE]"
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for payload in data[:-1]:
        list(state.handle_chunk(ChatCompletionChunk.model_validate(json.loads(payload))))
    return state.get_final_completion()


async def source(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


class Hold:
    """An ``on_hold`` callback that records what it was handed."""

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], list[str]]] = []

    async def __call__(self, message: dict[str, Any], names: list[str]) -> str:
        self.seen.append((message, names))
        calls = [
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"], i)
            for i, c in enumerate(message["tool_calls"])
        ]
        return confirmation_text(calls, names, message["content"])


def by_name(calls: list[ToolCall]) -> list[str]:
    return impactful_names([call.name for call in calls])


async def guarded(chunks: Iterable[bytes], hold: Hold | None = None) -> list[bytes]:
    return [c async for c in guard_stream(source(chunks), by_name, hold or Hold())]


def split(whole: bytes, cuts: Iterable[int]) -> list[bytes]:
    bounds = sorted({0, len(whole), *(c for c in cuts if c <= len(whole))})
    return [whole[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


# --- impactful_names -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "send_email",
        "sendEmail",
        "SEND_SMS",
        "gmail.send",
        "mcp__slack__post_message",
        "reply_to_thread",
        "create_calendar_event",
        "createCalendarEvent",
        "update_event",
        "add_reminder",
        "schedule_meeting",
        "purchase",
        "buy_ticket",
        "make_payment",
        "transfer_funds",
        "place_order",
        "checkout_cart",
        "publish_post",
        "deploy-service",
        "git_push",
        "merge_pull_request",
        "delete_file",
        "deleteUser",
        "remove_member",
        "drop_table",
        "rm",
        "cancel_subscription",
        # A bare verb, or a namespaced one, is as impactful as its longer forms.
        "post",
        "slack.post",
        "message",
        "transfer",
        "schedule",
        "remove",
        "order",
        "cancel",
        "forward",
        "issue_refund",
        "execute_trade",
        "unsubscribe",
    ],
)
def test_impactful_names_flags_spec_examples(name: str) -> None:
    assert impactful_names([name]) == [name]


@pytest.mark.parametrize(
    "name",
    [
        "get_weather",
        "get_event_details",
        "getCalendarEvents",
        "list_emails",
        "search_messages",
        "read_message",
        "draft_email",
        "calendar.get",
        "google_calendar__list_events",
        "prevent_overlap",
        "calculator",
        "lookup_order",
        "track_event",
    ],
)
def test_impactful_names_leaves_reads_and_unrelated_tools(name: str) -> None:
    assert impactful_names([name]) == []


def test_impactful_names_keeps_order_drops_repeats_and_takes_custom_patterns() -> None:
    names = ["book_flight", "get_time", "Nuke_Repo", "book_flight"]
    assert impactful_names(names) == ["book_flight"]
    assert impactful_names(names, ["NUKE_*", "book_*"]) == ["book_flight", "Nuke_Repo"]
    assert impactful_names(names, []) == []
    assert impactful_names(["get_x"], ["get_*"], safe_prefixes=()) == ["get_x"]
    assert "send_*" in DEFAULT_PATTERNS


# --- whole bodies ----------------------------------------------------------------------


def test_tool_calls_in_body_reads_the_message_and_its_calls() -> None:
    odd = {"id": "call_B", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    message = {**EMAIL_MESSAGE, "tool_calls": [*EMAIL_MESSAGE["tool_calls"], {"x": 1}, odd]}
    found, calls = tool_calls_in_body(json.dumps(completion_body(message)).encode())
    assert found == message
    assert calls == [
        ToolCall("call_A", "send_email", EMAIL_ARGS, 0),
        ToolCall("call_B", "f", '{"a": 1}', 2),
    ]


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[]", b'{"choices": []}', b'{"choices": [{"index": 0}]}', b"\xff"],
)
def test_tool_calls_in_body_is_empty_for_malformed_bodies(body: bytes) -> None:
    assert tool_calls_in_body(body) == (None, [])


def test_tool_calls_in_body_is_empty_for_plain_answers() -> None:
    message = {"role": "assistant", "content": "Hi"}
    assert tool_calls_in_body(json.dumps(completion_body(message)).encode()) == (message, [])


# --- StreamToolCalls -------------------------------------------------------------------


def test_stream_parser_merges_deltas_even_fed_byte_by_byte() -> None:
    whole = b"".join(tool_stream(content="Sure thing.", usage=True))
    parser = StreamToolCalls()
    for i in range(len(whole)):
        parser.feed(whole[i : i + 1])
    assert parser.saw_tool_calls and parser.done and parser.role_seen
    assert parser.calls() == [
        ToolCall("call_A", "send_email", EMAIL_ARGS, 0),
        ToolCall("call_B", "get_weather", '{"city": "Oslo"}', 1),
    ]
    assert (parser.completion_id, parser.model, parser.created) == (
        "chatcmpl-up1",
        "gpt-test",
        1795330000,
    )
    assert parser.finish_reason == "tool_calls" and parser.usage == USAGE
    message = parser.message()
    assert message["content"] == "Sure thing."
    assert message["tool_calls"][0] == EMAIL_MESSAGE["tool_calls"][0]
    # The message is a valid non-streamed assistant message.
    ChatCompletion.model_validate(completion_body(message))


def test_stream_parser_reads_crlf_and_calls_without_index() -> None:
    no_index = [
        {"id": "call_X", "function": {"name": "delete_file", "arguments": '{"pa'}},
        {"function": {"arguments": 'th": "/a"}'}},
        {"id": "call_Y", "function": {"name": "rm", "arguments": "{}"}},
    ]
    raw = sse(event({"tool_calls": no_index})).replace(b"\n", b"\r\n")
    parser = StreamToolCalls()
    parser.feed(raw + b"data: [DONE]\r\n\r\n")
    assert parser.done
    assert parser.calls() == [
        ToolCall("call_X", "delete_file", '{"path": "/a"}', 0),
        ToolCall("call_Y", "rm", "{}", 1),
    ]
    assert parser.message()["content"] is None


def test_stream_parser_without_calls() -> None:
    parser = StreamToolCalls()
    for chunk in content_stream():
        parser.feed(chunk)
    assert not parser.saw_tool_calls and parser.calls() == []
    assert parser.message() == {"role": "assistant", "content": "Hello world"}


# --- guard_stream ----------------------------------------------------------------------


async def test_content_stream_passes_through_as_the_same_chunks() -> None:
    chunks = content_stream()
    out = await guarded(chunks)
    assert len(out) == len(chunks) and all(a is b for a, b in zip(out, chunks, strict=True))


async def test_non_impactful_tool_call_passes_through_byte_identical() -> None:
    hold = Hold()
    chunks = tool_stream("get_calendar_events", content="Let me look.", usage=True)
    assert b"".join(await guarded(chunks, hold)) == b"".join(chunks)
    assert hold.seen == []


async def test_impactful_call_is_replaced_by_a_request_to_confirm() -> None:
    hold = Hold()
    out = await guarded(tool_stream(usage=True), hold)
    [(message, names)] = hold.seen
    assert names == ["send_email"]
    assert [c["id"] for c in message["tool_calls"]] == ["call_A", "call_B"]
    assert message["tool_calls"][0]["function"]["arguments"] == EMAIL_ARGS
    raw = b"".join(out)
    assert b"call_A" not in raw and raw.endswith(DONE)
    final = accumulate(raw)
    assert (final.id, final.model, final.created) == ("chatcmpl-up1", "gpt-test", 1795330000)
    assert final.system_fingerprint == "fp_1"
    assert final.usage is not None and final.usage.total_tokens == 42
    choice = final.choices[0]
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    assert choice.message.role == "assistant"
    assert choice.message.content == (
        "Before I go ahead, please confirm: send_email(to: bob@example.com, subject: Hi, "
        "body: See you at 5.).\n"
        'This would also run: get_weather(city: Oslo).\nReply "yes" to do it, or tell me '
        "what to change."
    )


async def test_content_already_streamed_is_not_repeated() -> None:
    chunks = tool_stream(content="I'll email Bob now.")
    out = await guarded(chunks)
    # Everything before the first tool-call chunk went out as it came.
    assert out[:3] == chunks[:3]
    final = accumulate(b"".join(out))
    text = final.choices[0].message.content or ""
    assert text.startswith("I'll email Bob now.\n\nBefore I go ahead, please confirm: send_")
    assert text.count("I'll email Bob now.") == 1


async def test_text_not_starting_with_the_streamed_content_follows_it() -> None:
    async def terse(message: dict[str, Any], names: list[str]) -> str:
        return "Confirm?"

    chunks = tool_stream(content="On it.")
    raw = b"".join([c async for c in guard_stream(source(chunks), by_name, terse)])
    assert accumulate(raw).choices[0].message.content == "On it.\n\nConfirm?"


async def test_role_is_sent_when_the_held_chunk_carried_it() -> None:
    chunks = tool_stream()
    # Role and the first tool-call delta in one network chunk: both are held back.
    out = await guarded([chunks[0] + chunks[1], *chunks[2:]])
    final = accumulate(b"".join(out))  # a repeated role would not validate
    assert final.choices[0].message.role == "assistant"
    assert b'"role": "assistant"' in out[-1]


async def test_stream_that_ends_without_done_is_still_held() -> None:
    # Some servers close the stream after the finish_reason chunk; the SDKs accept that.
    hold = Hold()
    raw = b"".join(await guarded(tool_stream(done=False), hold))
    [(_, names)] = hold.seen
    assert names == ["send_email"]
    assert b"call_A" not in raw and raw.endswith(DONE)
    assert not accumulate(raw).choices[0].message.tool_calls


async def test_stream_cut_short_never_sends_an_impactful_call() -> None:
    hold = Hold()
    chunks = tool_stream(done=False)[:-1]  # no finish_reason, no [DONE]
    raw = b"".join(await guarded(chunks, hold))
    assert hold.seen == []
    assert b"call_A" not in raw and b"send_email" not in raw


async def test_harmless_stream_without_done_is_passed_through_unchanged() -> None:
    hold = Hold()
    chunks = tool_stream("get_weather", done=False)
    assert b"".join(await guarded(chunks, hold)) == b"".join(chunks)
    assert hold.seen == []


async def test_upstream_failure_while_holding_sends_nothing_held() -> None:
    async def broken() -> AsyncIterator[bytes]:
        chunks = tool_stream()
        yield chunks[0]
        yield chunks[1]
        raise ConnectionResetError("upstream went away")

    out: list[bytes] = []
    with pytest.raises(ConnectionResetError):
        async for chunk in guard_stream(broken(), by_name, Hold()):
            out.append(chunk)
    assert out == [tool_stream()[0]]


@settings(deadline=None, max_examples=60)
@given(cuts=st.lists(st.integers(min_value=0, max_value=2500), max_size=15))
async def test_guard_does_not_depend_on_network_chunking(cuts: list[int]) -> None:
    plain = b"".join(content_stream())
    assert b"".join(await guarded(split(plain, cuts))) == plain
    harmless = b"".join(tool_stream("get_weather", content="Checking."))
    assert b"".join(await guarded(split(harmless, cuts))) == harmless
    risky = b"".join(tool_stream(content="Emailing."))
    held = b"".join(await guarded(split(risky, cuts)))
    # How much went out before the hold depends on the cuts; what the client reads does not,
    # and no byte of the held tool call reaches it.
    text = accumulate(held).choices[0].message.content or ""
    assert text == accumulate(b"".join(await guarded([risky]))).choices[0].message.content
    assert text.startswith("Emailing.\n\nBefore I go ahead, please confirm: send_email(")
    assert b"call_A" not in held


# --- confirmation_text / confirmation_body ---------------------------------------------


def test_confirmation_text_for_one_call() -> None:
    call = ToolCall("call_A", "send_email", '{"to": "bob@example.com", "subject": "Hi"}', 0)
    assert confirmation_text([call], ["send_email"], None) == (
        "Before I go ahead, please confirm: send_email(to: bob@example.com, subject: Hi).\n"
        'Reply "yes" to do it, or tell me what to change.'
    )


def test_confirmation_text_lists_several_calls_and_keeps_content_first() -> None:
    calls = [
        ToolCall("a", "delete_file", '{"path": "/tmp/x", "force": true}', 0),
        ToolCall("b", "purchase", "not json", 1),
        ToolCall("c", "rm", "", 2),
    ]
    text = confirmation_text(calls, ["delete_file", "purchase", "rm"], "Cleaning up.")
    assert text == (
        "Cleaning up.\n\nBefore I go ahead, please confirm:\n"
        "- delete_file(path: /tmp/x, force: true)\n- purchase(not json)\n- rm()\n"
        'Reply "yes" to do it, or tell me what to change.'
    )
    assert confirmation_text(calls[:1], ["x"], "  \n").startswith("Before I go ahead")


def test_confirmation_text_cuts_long_arguments() -> None:
    long_args = json.dumps({"to": "bob@example.com", "body": "word " * 500, "n": [1] * 200})
    text = confirmation_text([ToolCall("a", "send_email", long_args, 0)], ["send_email"], None)
    first = text.split("\n")[0]
    assert len(first) < 340 and "to: bob@example.com" in first and "…" in first
    assert first.endswith(").")


def test_confirmation_body_replaces_the_held_completion() -> None:
    original = completion_body(EMAIL_MESSAGE)
    body = confirmation_body(original, "Please confirm: send_email(...).")
    completion = ChatCompletion.model_validate_json(body)
    assert (completion.id, completion.model, completion.created) == (
        "chatcmpl-body1",
        "gpt-test",
        1795330000,
    )
    assert completion.usage is not None and completion.usage.total_tokens == 42
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert choice.message.content == "Please confirm: send_email(...)."
    assert original["choices"][0]["message"] is EMAIL_MESSAGE  # not mutated


# --- release ---------------------------------------------------------------------------


def rbody(message: dict[str, Any]) -> bytes:
    return release_body(message, model="gpt-test", created=1795339999, completion_id="chatcmpl-r")


def rstream(message: dict[str, Any]) -> list[bytes]:
    return release_stream(message, model="gpt-test", created=1795339999, completion_id="chatcmpl-r")


def test_release_body_hands_back_the_held_call() -> None:
    body = rbody(EMAIL_MESSAGE)
    completion = ChatCompletion.model_validate_json(body)
    assert completion.id == "chatcmpl-r" and completion.created == 1795339999
    assert completion.choices[0].finish_reason == "tool_calls"
    message, calls = tool_calls_in_body(body)
    assert message == EMAIL_MESSAGE
    assert calls == [ToolCall("call_A", "send_email", EMAIL_ARGS, 0)]


def test_release_stream_hands_back_the_held_call() -> None:
    chunks = rstream(EMAIL_MESSAGE)
    assert chunks[-1] == DONE
    final = accumulate(b"".join(chunks))
    assert final.id == "chatcmpl-r" and final.choices[0].finish_reason == "tool_calls"
    [call] = final.choices[0].message.tool_calls or []
    assert call.id == "call_A" and call.type == "function"
    assert (call.function.name, call.function.arguments) == ("send_email", EMAIL_ARGS)
    parser = StreamToolCalls()
    for chunk in chunks:
        parser.feed(chunk)
    assert parser.message() == EMAIL_MESSAGE


async def test_held_stream_message_round_trips_through_release() -> None:
    hold = Hold()
    await guarded(tool_stream(content="Sending."), hold)
    [(held, _)] = hold.seen
    stored = json.loads(json.dumps(held))  # as a store would keep it
    from_body = tool_calls_in_body(rbody(stored))[1]
    parser = StreamToolCalls()
    for chunk in rstream(stored):
        parser.feed(chunk)
    assert from_body == parser.calls()
    assert [(c.id, c.name, c.arguments) for c in from_body] == [
        ("call_A", "send_email", EMAIL_ARGS),
        ("call_B", "get_weather", '{"city": "Oslo"}'),
    ]
    assert parser.message()["content"] == "Sending."


# --- the real SDK (its own httpx2 client) over a mocked transport: no network -------------


def sdk(reply: bytes, content_type: str) -> openai.AsyncOpenAI:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=reply, headers={"content-type": content_type})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return openai.AsyncOpenAI(
        base_url="http://relay.invalid/v1", api_key="k", max_retries=0, http_client=http
    )


HI: Any = [{"role": "user", "content": "email bob"}]


async def test_sdk_reads_released_body_and_stream() -> None:
    async with sdk(rbody(EMAIL_MESSAGE), "application/json") as client:
        completion = await client.chat.completions.create(model="gpt-test", messages=HI)
    [call] = completion.choices[0].message.tool_calls or []
    assert call.id == "call_A"

    raw = b"".join(rstream(EMAIL_MESSAGE))
    async with (
        sdk(raw, "text/event-stream") as client,
        client.chat.completions.stream(model="gpt-test", messages=HI) as stream,
    ):
        final = await stream.get_final_completion()
    [streamed] = final.choices[0].message.tool_calls or []
    assert (streamed.id, streamed.function.arguments) == ("call_A", EMAIL_ARGS)


async def test_sdk_reads_the_guarded_stream_and_confirmation_body() -> None:
    raw = b"".join(await guarded(tool_stream(content="On it.")))
    async with sdk(raw, "text/event-stream") as client:
        stream = await client.chat.completions.create(model="gpt-test", messages=HI, stream=True)
        parts = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in parts if c.choices)
    assert text.startswith("On it.\n\nBefore I go ahead") and parts[-1].choices
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in parts)

    body = confirmation_body(completion_body(EMAIL_MESSAGE), "Confirm?")
    async with sdk(body, "application/json") as client:
        completion = await client.chat.completions.create(model="gpt-test", messages=HI)
    assert completion.choices[0].message.content == "Confirm?"
