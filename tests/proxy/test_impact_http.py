"""The impactful tool-call guard (spec 000 §8.2) with the real ``openai`` SDK as the client."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream

SEND_EMAIL: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "send_email",
            "description": "Send an email to someone",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
GET_WEATHER: list[Any] = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]
HEADERS = {"X-Chronorelay-User": "ana", "X-Chronorelay-Thread": "t1"}


def client(relay: RunningServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=f"{relay.url}/v1", api_key="unused", max_retries=0, default_headers=HEADERS
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def in_group(member: str) -> dict[str, str]:
    return {"X-Chronorelay-User": member, "X-Chronorelay-Chat-Type": "group"}


async def held_email(
    sdk: openai.AsyncOpenAI, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The user asks for an email; the history up to the relay's request to confirm."""
    first = await sdk.chat.completions.create(
        model="fake-model", messages=[user("email Bob")], tools=SEND_EMAIL, extra_headers=headers
    )
    return [user("email Bob"), {"role": "assistant", "content": first.choices[0].message.content}]


async def streamed(sdk: openai.AsyncOpenAI, messages: list[Any], tools: list[Any]) -> Any:
    """Collect a streamed answer into (content, {index: (id, name, arguments)})."""
    stream = await sdk.chat.completions.create(
        model="fake-model", messages=messages, tools=tools, stream=True
    )
    content = ""
    calls: dict[int, list[str]] = {}
    async for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for call in delta.tool_calls or []:
            entry = calls.setdefault(call.index, ["", "", ""])
            entry[0] += call.id or ""
            if call.function is not None:
                entry[1] += call.function.name or ""
                entry[2] += call.function.arguments or ""
    return content, {index: tuple(parts) for index, parts in calls.items()}


@pytest.fixture
async def relay(relay_factory: RelayFactory) -> RunningServer:
    return await relay_factory()


async def test_enforce_holds_the_call_and_yes_releases_the_same_call(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with client(relay) as sdk:
        first = await sdk.chat.completions.create(
            model="fake-model", messages=[user("email Bob the forecast")], tools=SEND_EMAIL
        )
        held = first.choices[0]
        assert held.message.tool_calls is None
        assert held.finish_reason == "stop"
        assert "send_email" in (held.message.content or "")
        assert "confirm" in (held.message.content or "").lower()
        # The model was told to confirm impactful actions, since tools were passed.
        assert (
            "wait for the user's explicit yes" in fake_upstream.last.body["messages"][-1]["content"]
        )
        asked = len(fake_upstream.requests)

        history = [
            user("email Bob the forecast"),
            {"role": "assistant", "content": held.message.content},
            user("yes"),
        ]
        second = await sdk.chat.completions.create(
            model="fake-model", messages=history, tools=SEND_EMAIL
        )
    # Released by the relay itself: the upstream was not asked again.
    assert len(fake_upstream.requests) == asked
    [call] = second.choices[0].message.tool_calls or []
    assert second.choices[0].finish_reason == "tool_calls"
    assert call.id == "call_1"
    assert call.function.name == "send_email"
    assert json.loads(call.function.arguments) == {"city": "Tokyo"}


async def test_enforce_on_a_stream_then_a_streamed_release(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with client(relay) as sdk:
        content, calls = await streamed(sdk, [user("email Bob")], SEND_EMAIL)
        assert calls == {}
        assert "send_email" in content
        asked = len(fake_upstream.requests)
        history = [user("email Bob"), {"role": "assistant", "content": content}, user("Yes!")]
        content, calls = await streamed(sdk, history, SEND_EMAIL)
    assert len(fake_upstream.requests) == asked
    assert calls == {0: ("call_1", "send_email", '{"city": "Tokyo"}')}


async def test_a_stream_closed_without_done_is_held_too(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.send_done = False  # the SDK reads such a stream to its end all the same
    async with client(relay) as sdk:
        content, calls = await streamed(sdk, [user("email Bob")], SEND_EMAIL)
        assert calls == {}
        assert "please confirm: send_email" in content
        history = [user("email Bob"), {"role": "assistant", "content": content}, user("yes")]
        content, calls = await streamed(sdk, history, SEND_EMAIL)
    assert calls == {0: ("call_1", "send_email", '{"city": "Tokyo"}')}


async def test_anything_but_yes_drops_the_held_call(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with client(relay) as sdk:
        history = [*await held_email(sdk), user("no, not yet")]
        await sdk.chat.completions.create(model="fake-model", messages=history)
        told = fake_upstream.last.body["messages"][-1]["content"]
        assert "did not confirm the call to send_email" in told
        # Dropped: a later yes releases nothing and goes to the model.
        after = await sdk.chat.completions.create(
            model="fake-model", messages=[*history, user("yes")]
        )
    assert after.choices[0].message.tool_calls is None
    assert fake_upstream.last.body["messages"][-1]["content"].startswith("yes")


@pytest.mark.parametrize("between", ["clock: kind project", "/time"])
async def test_an_ok_after_the_relay_answered_something_else_releases_nothing(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, between: str
) -> None:
    # The user's next message was a setting or a command the relay answered itself; a
    # later "ok" agrees with that answer, not with the email asked about before it.
    relay = await relay_factory(server={"api_commands": True})
    async with client(relay) as sdk:
        history = [*await held_email(sdk), user(between)]
        answer = await sdk.chat.completions.create(
            model="fake-model", messages=history, tools=SEND_EMAIL
        )
        assert answer.choices[0].message.tool_calls is None
        history += [{"role": "assistant", "content": answer.choices[0].message.content}]
        asked = len(fake_upstream.requests)
        await sdk.chat.completions.create(
            model="fake-model", messages=[*history, user("ok")], tools=SEND_EMAIL
        )
    # "ok" went to the model (whose own tool call the relay holds again), and nothing
    # was released without asking.
    assert len(fake_upstream.requests) == asked + 1
    assert fake_upstream.last.body["messages"][-1]["content"].startswith("ok")


async def test_in_a_group_a_held_call_waits_for_its_own_user_only(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(server={"api_commands": True})
    async with client(relay) as sdk:
        history = await held_email(sdk, in_group("ana"))
        # Bob's command, answered by the relay itself, moves nothing on.
        await sdk.chat.completions.create(
            model="fake-model", messages=[*history, user("/time")], extra_headers=in_group("bob")
        )
        asked = len(fake_upstream.requests)
        anas = await sdk.chat.completions.create(
            model="fake-model",
            messages=[*history, user("yes")],
            tools=SEND_EMAIL,
            extra_headers=in_group("ana"),
        )
    assert len(fake_upstream.requests) == asked
    [call] = anas.choices[0].message.tool_calls or []
    assert call.id == "call_1"


async def test_in_a_group_the_request_to_confirm_names_who_must_answer(
    relay: RunningServer,
) -> None:
    named = {**HEADERS, **in_group("maria"), "X-Chronorelay-User-Name": "Maria"}
    maria = openai.AsyncOpenAI(
        base_url=f"{relay.url}/v1", api_key="unused", max_retries=0, default_headers=named
    )
    async with maria, client(relay) as sdk:
        plain = await maria.chat.completions.create(
            model="fake-model", messages=[user("email the team")], tools=SEND_EMAIL
        )
        content, _ = await streamed(maria, [user("email the team again")], SEND_EMAIL)
        private = await sdk.chat.completions.create(
            model="fake-model", messages=[user("email Bob")], tools=SEND_EMAIL
        )
    # Everyone in the group reads it, and only Maria's yes sends the email.
    ask = 'Maria, reply "yes" to do it, or tell me what to change (only your answer confirms it).'
    assert (plain.choices[0].message.content or "").endswith(ask)
    assert content.endswith(ask)
    assert (private.choices[0].message.content or "").endswith(
        'Reply "yes" to do it, or tell me what to change.'
    )


async def test_in_a_group_a_held_call_lapses_once_another_member_is_answered(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with client(relay) as sdk:
        history = [*await held_email(sdk, in_group("ana")), user("yes")]
        # Bob's yes is not Ana's to give: it goes to the model like any message.
        moved_on = await sdk.chat.completions.create(
            model="fake-model", messages=history, extra_headers=in_group("bob")
        )
        assert moved_on.choices[0].message.tool_calls is None
        # ... and the model, which sees a "yes" right after the request to confirm, is
        # told it is not the confirmation, so it does not say the email went.
        bobs_turn = fake_upstream.last.body["messages"][-1]["content"]
        assert bobs_turn.startswith("yes")
        assert (
            "A call to send_email was waiting for ana's confirmation. This message is from "
            "bob, so it does not confirm it, and once you answer it the call lapses without "
            "being made: do not say it was made; ana can ask again."
        ) in bobs_turn
        history.append({"role": "assistant", "content": moved_on.choices[0].message.content})
        asked = len(fake_upstream.requests)
        # Ana's "ok" may agree with what Bob was just told; it does not send the email.
        late = await sdk.chat.completions.create(
            model="fake-model",
            messages=[*history, user("ok")],
            tools=SEND_EMAIL,
            extra_headers=in_group("ana"),
        )
    assert len(fake_upstream.requests) == asked + 1
    told = fake_upstream.last.body["messages"][-1]["content"]
    assert told.startswith("ok")
    assert "A call to send_email waited for the user's confirmation and lapsed" in told
    # The model's own new call is held again, never passed on.
    assert late.choices[0].message.tool_calls is None


def named_in(thread: str, member: str, name: str) -> dict[str, str]:
    return {**in_group(member), "X-Chronorelay-Thread": thread, "X-Chronorelay-User-Name": name}


@pytest.mark.parametrize(
    ("bobs_name", "owner", "speaker"),
    [
        # Ana's account went by "Annie" since, in another group: this one knows her as Ana.
        ("Bob", "Ana", "Bob"),
        # Two Anas in the group: each is told apart by their user key, as in the history.
        ("ana", "Ana (api:ana)", "ana (api:bob)"),
    ],
)
async def test_in_a_group_the_held_calls_user_is_named_as_the_group_knows_them(
    relay: RunningServer, fake_upstream: FakeUpstream, bobs_name: str, owner: str, speaker: str
) -> None:
    async with client(relay) as sdk:
        await sdk.chat.completions.create(
            model="fake-model",
            messages=[user("hi all")],
            extra_headers=named_in("t1", "bob", bobs_name),
        )
        history = [*await held_email(sdk, named_in("t1", "ana", "Ana")), user("yes")]
        await sdk.chat.completions.create(
            model="fake-model",
            messages=[user("hello")],
            extra_headers=named_in("t2", "ana", "Annie"),
        )
        await sdk.chat.completions.create(
            model="fake-model", messages=history, extra_headers=named_in("t1", "bob", bobs_name)
        )
    bobs_turn = fake_upstream.last.body["messages"][-1]["content"]
    assert (
        f"A call to send_email was waiting for {owner}'s confirmation. This message is from "
        f"{speaker}, so it does not confirm it, and once you answer it the call lapses "
        f"without being made: do not say it was made; {owner} can ask again."
    ) in bobs_turn


async def test_a_harmless_tool_call_passes_untouched(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with client(relay) as sdk:
        result = await sdk.chat.completions.create(
            model="fake-model", messages=[user("weather?")], tools=GET_WEATHER
        )
    [call] = result.choices[0].message.tool_calls or []
    assert call.function.name == "get_weather"


async def test_annotate_flags_in_a_header_and_lets_the_call_through(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(clock={"inference": {"impactful_tool_guard": "annotate"}})
    async with client(relay) as sdk:
        raw = await sdk.chat.completions.with_raw_response.create(
            model="fake-model", messages=[user("email Bob")], tools=SEND_EMAIL
        )
        completion = raw.parse()
        assert raw.headers["X-Chronorelay-Impactful-Tool-Calls"] == "send_email"
        [call] = completion.choices[0].message.tool_calls or []
        assert call.function.name == "send_email"
        content, calls = await streamed(sdk, [user("email Bob")], SEND_EMAIL)
    assert calls == {0: ("call_1", "send_email", '{"city": "Tokyo"}')}


async def test_custom_patterns_decide_what_is_impactful(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(clock={"inference": {"impactful_tool_patterns": ["get_*"]}})
    async with client(relay) as sdk:
        email = await sdk.chat.completions.create(
            model="fake-model", messages=[user("email Bob")], tools=SEND_EMAIL
        )
    # send_email is not in the configured list, so it passes.
    assert email.choices[0].message.tool_calls is not None


async def test_a_yes_under_a_quote_of_the_question_releases_the_call_and_a_forward_does_not(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    # A chat bridge writes a reply's quote and a forward as the relay's channels do: the
    # user's answer is the words after the quote; a forwarded "yes" is someone else's.
    async with client(relay) as sdk:
        history = await held_email(sdk)
        forwarded = [*history, user("[forwarded from Bo] yes, send it")]
        kept = await sdk.chat.completions.create(
            model="fake-model", messages=forwarded, tools=SEND_EMAIL
        )
        assert kept.choices[0].message.tool_calls is None
        history = await held_email(sdk)
        quoted = [*history, user('[replying to you: "Confirm send_email?"] yes')]
        second = await sdk.chat.completions.create(
            model="fake-model", messages=quoted, tools=SEND_EMAIL
        )
    [call] = second.choices[0].message.tool_calls or []
    assert call.function.name == "send_email"
