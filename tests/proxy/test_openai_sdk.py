"""The real ``openai`` SDK (async and sync) against the relay in front of a fake upstream."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import openai
import pytest

from proxy.keys import SERVICES
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, Scripted, is_synthesis

HI = [{"role": "user", "content": "hi there"}]


def client(relay: RunningServer, key: str = "unused") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{relay.url}/v1", api_key=key, max_retries=0)


async def test_non_streaming_round_trip(relay: RunningServer, fake_upstream: FakeUpstream) -> None:
    async with client(relay) as sdk:
        result = await sdk.chat.completions.with_raw_response.create(
            model="fake-model",
            messages=HI,  # type: ignore[arg-type]
        )
    completion = result.parse()
    assert completion.choices[0].message.content == "echo: hi there"
    assert completion.usage is not None and completion.usage.total_tokens == 10
    assert result.headers["X-Chronorelay-Thread-Key"] == "agent:main:api:local"
    seen = fake_upstream.last
    [forwarded] = seen.body["messages"]
    assert forwarded["role"] == "user"
    assert forwarded["content"].startswith("hi there\n\n<relay_context>\nNow: ")
    assert seen.headers["Authorization"] == "Bearer sk-upstream-secret"


async def test_sync_client(relay: RunningServer) -> None:
    def call() -> str | None:
        with openai.OpenAI(base_url=f"{relay.url}/v1", api_key="x", max_retries=0) as sdk:
            completion = sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
            return completion.choices[0].message.content

    # The sync client blocks, so it runs in a thread while the relay serves on this loop.
    assert await asyncio.to_thread(call) == "echo: hi there"


async def test_streaming_with_usage(relay: RunningServer, fake_upstream: FakeUpstream) -> None:
    async with client(relay) as sdk:
        stream = await sdk.chat.completions.create(
            model="fake-model",
            messages=HI,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "echo: hi there"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 10
    assert fake_upstream.last.body["stream_options"] == {"include_usage": True}


async def test_stream_bytes_pass_through_unchanged(relay: RunningServer) -> None:
    from tests.fakes.upstream import stream_events

    body = {"model": "fake-model", "messages": HI, "stream": True}
    expected = b"".join([event async for event in stream_events(body)])
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{relay.url}/v1/chat/completions", json=body) as response:
            received = await response.read()
            assert response.headers["Content-Type"].startswith("text/event-stream")
    assert received == expected


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_call_round_trip(
    relay: RunningServer, fake_upstream: FakeUpstream, stream: bool
) -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": "weather in Tokyo?"}]
    async with client(relay) as sdk:
        if stream:
            events = await sdk.chat.completions.create(
                model="fake-model",
                messages=messages,
                tools=TOOLS,
                tool_choice="auto",
                stream=True,  # type: ignore[arg-type]
            )
            deltas = [c.choices[0].delta for c in [e async for e in events] if c.choices]
            calls = [tc for d in deltas for tc in (d.tool_calls or [])]
            call_id, name = calls[0].id, calls[0].function.name  # type: ignore[union-attr]
            arguments = "".join(tc.function.arguments or "" for tc in calls if tc.function)
        else:
            first = await sdk.chat.completions.create(
                model="fake-model",
                messages=messages,
                tools=TOOLS,
                tool_choice="auto",  # type: ignore[arg-type]
            )
            call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
            call_id, name, arguments = call.id, call.function.name, call.function.arguments  # type: ignore[union-attr]
        assert (name, json.loads(arguments)) == ("get_weather", {"city": "Tokyo"})
        assert fake_upstream.last.body["tools"] == TOOLS
        assert fake_upstream.last.body["tool_choice"] == "auto"
        messages += [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": "sunny, 18C"},
        ]
        second = await sdk.chat.completions.create(
            model="fake-model", messages=messages, tools=TOOLS
        )  # type: ignore[arg-type]
    assert second.choices[0].message.content == "tool said: sunny, 18C"
    assert fake_upstream.last.body["messages"][-1]["tool_call_id"] == call_id


@pytest.mark.parametrize("role", ["system", "developer"])
async def test_an_instruction_after_the_users_message_leaves_the_turn_theirs(
    relay: RunningServer, fake_upstream: FakeUpstream, role: str
) -> None:
    """An agent that appends a reminder after the user's message: the message still gets
    its block and is recorded, and the reminder goes as it came."""
    reminder = {"role": role, "content": "Answer in one sentence."}
    async with client(relay) as sdk:
        await sdk.chat.completions.create(
            model="fake-model",
            messages=[*HI, reminder],  # type: ignore[list-item]
        )
    forwarded = fake_upstream.last.body["messages"]
    assert forwarded[0]["content"].startswith("hi there\n\n<relay_context>\nNow: ")
    assert forwarded[1] == reminder
    transcript = await relay.runner.app[SERVICES].store.transcript("agent:main:api:local", 10)
    assert [(m.role, m.text) for m in transcript] == [
        ("user", "hi there"),
        ("assistant", "echo: Answer in one sentence."),  # the fake echoes the last message
    ]


async def test_unknown_body_fields_are_forwarded(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with client(relay) as sdk:
        await sdk.chat.completions.create(
            model="fake-model",
            messages=HI,  # type: ignore[arg-type]
            response_format={"type": "json_object"},
            extra_body={"x_vendor_knob": {"depth": 3}, "seed": 7},
        )
    body = fake_upstream.last.body
    assert body["x_vendor_knob"] == {"depth": 3}
    assert body["seed"] == 7
    assert body["response_format"] == {"type": "json_object"}


async def test_upstream_400_passes_through(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    error = {
        "error": {
            "message": "model 'nope' does not exist",
            "type": "invalid_request_error",
            "param": "model",
            "code": "model_not_found",
        }
    }
    fake_upstream.failures.append(Scripted(400, error))
    async with client(relay) as sdk:
        with pytest.raises(openai.BadRequestError) as caught:
            await sdk.chat.completions.create(model="nope", messages=HI)  # type: ignore[arg-type]
    assert caught.value.status_code == 400
    assert caught.value.body == error["error"]
    assert len(fake_upstream.requests) == 1  # a 4xx is not retried


async def test_upstream_down_gives_502(relay_factory: RelayFactory, unused_tcp_port: int) -> None:
    relay = await relay_factory(
        upstream={"base_url": f"http://127.0.0.1:{unused_tcp_port}/v1", "retries": 1}
    )
    async with client(relay) as sdk:
        with pytest.raises(openai.APIStatusError) as caught:
            await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert caught.value.status_code == 502
    assert "cannot reach the upstream" in caught.value.message


async def test_upstream_slow_gives_504(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(upstream={"read_timeout": 0.2, "retries": 0})
    fake_upstream.delay = 3
    async with client(relay) as sdk:
        with pytest.raises(openai.APIStatusError) as caught:
            await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert caught.value.status_code == 504
    assert "did not answer" in caught.value.message or "no data" in caught.value.message


@pytest.mark.parametrize("stream", [False, True])
async def test_retry_then_success_on_503(
    relay: RunningServer, fake_upstream: FakeUpstream, stream: bool
) -> None:
    overloaded = {"error": {"message": "overloaded", "type": "server_error"}}
    fake_upstream.failures.append(Scripted(503, overloaded, {"Retry-After": "0"}))
    async with client(relay) as sdk:
        if stream:
            events = await sdk.chat.completions.create(model="fake-model", messages=HI, stream=True)  # type: ignore[arg-type]
            text = "".join([c.choices[0].delta.content or "" async for c in events if c.choices])
        else:
            done = await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
            text = done.choices[0].message.content or ""
    assert text == "echo: hi there"
    assert len(fake_upstream.requests) == 2


async def test_retries_exhausted_pass_the_last_status(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    limited = {"error": {"message": "slow down", "type": "rate_limit"}}
    fake_upstream.failures.extend(Scripted(429, limited, {"Retry-After": "0"}) for _ in range(3))
    async with client(relay) as sdk:
        with pytest.raises(openai.RateLimitError):
            await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert len(fake_upstream.requests) == 3  # first try + retries = 2


async def test_fallback_upstream_used_in_order(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, unused_tcp_port: int
) -> None:
    relay = await relay_factory(
        upstream={
            "base_url": f"http://127.0.0.1:{unused_tcp_port}/v1",
            "retries": 0,
            "fallbacks": [{"base_url": fake_upstream.url, "model": "fallback-model"}],
        }
    )
    async with client(relay) as sdk:
        done = await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert done.choices[0].message.content == "echo: hi there"
    assert fake_upstream.last.body["model"] == "fallback-model"


async def test_client_disconnect_mid_stream_cancels_upstream(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.hold_stream = True
    body = {"model": "fake-model", "messages": HI, "stream": True}
    async with aiohttp.ClientSession() as http:
        response = await http.post(f"{relay.url}/v1/chat/completions", json=body)
        first = await response.content.readany()
        assert first.startswith(b"data: ")
        response.close()  # the client goes away mid-stream
    await asyncio.wait_for(fake_upstream.stream_cancelled.wait(), timeout=5)
    store = relay.runner.app[SERVICES].store
    for _ in range(50):  # the partial reply is recorded as the stream unwinds
        messages = await store.transcript("agent:main:api:local")
        if len(messages) == 2:
            break
        await asyncio.sleep(0.02)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].complete is False


async def test_client_disconnect_while_waiting_cancels_upstream(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.delay = 10
    body = {"model": "fake-model", "messages": HI}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=0.3)) as http:
        with pytest.raises(TimeoutError):
            await http.post(f"{relay.url}/v1/chat/completions", json=body)
    await asyncio.wait_for(fake_upstream.request_cancelled.wait(), timeout=5)


KEYS = {"keys": [{"name": "app", "key": "relay-key-0123456789", "permissions": ["chat"]}]}


async def test_auth_missing_and_wrong_key(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(auth=KEYS)
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{relay.url}/v1/chat/completions", json={"messages": HI}) as r:
            assert r.status == 401
            assert "missing API key" in (await r.json())["error"]["message"]
    async with client(relay, key="wrong-key-wrong-key") as sdk:
        with pytest.raises(openai.AuthenticationError) as caught:
            await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert "invalid API key" in caught.value.message
    async with client(relay, key="relay-key-0123456789") as sdk:
        done = await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert done.choices[0].message.content == "echo: hi there"


async def test_replay_header_needs_permission(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(auth=KEYS)
    async with client(relay, key="relay-key-0123456789") as sdk:
        with pytest.raises(openai.PermissionDeniedError) as caught:
            await sdk.chat.completions.create(
                model="fake-model",
                messages=HI,  # type: ignore[arg-type]
                extra_headers={"X-Chronorelay-Received-At": "2026-01-01T10:00:00Z"},
            )
    assert "replay" in caught.value.message


# Two apps on one relay: "shop" may name only its own user, "desk" (the default) anyone.
SCOPED = {
    "keys": [
        {"name": "shop", "key": "shop-key-0123456789", "users": ["alice"]},
        {"name": "desk", "key": "desk-key-0123456789", "permissions": ["chat", "commands"]},
    ]
}


async def test_a_key_speaks_only_for_the_users_it_lists(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(auth=SCOPED)
    store = relay.runner.app[SERVICES].store
    # The default ("*"), as before: a key names any user of its channels.
    async with client(relay, key="desk-key-0123456789") as desk:
        await desk.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "my flight lands at 9"}],
            extra_headers={"X-Chronorelay-User": "victim"},
        )
    async with client(relay, key="shop-key-0123456789") as shop:
        own = await shop.chat.completions.with_raw_response.create(
            model="fake-model", messages=HI, extra_headers={"X-Chronorelay-User": "alice"}
        )
        assert own.headers["X-Chronorelay-Thread-Key"] == "agent:main:api:alice"
        # Naming no one is speaking as the key's own name, which a key always may.
        itself = await shop.chat.completions.with_raw_response.create(
            model="fake-model", messages=HI
        )
        assert itself.headers["X-Chronorelay-Thread-Key"] == "agent:main:api:shop"
        with pytest.raises(openai.PermissionDeniedError) as by_header:
            await shop.chat.completions.create(
                model="fake-model", messages=HI, extra_headers={"X-Chronorelay-User": "victim"}
            )
        with pytest.raises(openai.PermissionDeniedError) as by_body:
            await shop.chat.completions.create(model="fake-model", messages=HI, user="mallory")
    assert by_header.value.message.endswith(
        "the API key 'shop' may not speak for user 'victim' (it may for: alice, shop); "
        "name one of those in X-Chronorelay-User or the body's user, or add the user to "
        "that key's users in [auth] keys"
    )
    assert "may not speak for user 'mallory'" in by_body.value.message
    # Neither refusal reached the upstream, served the victim's block or stored anything.
    asked = [seen for seen in fake_upstream.requests if not is_synthesis(seen.body)]
    assert len(asked) == 3
    assert await store.get_user("api:mallory") is None
    assert await store.transcript("agent:main:api:mallory") == []
    said = [m.text for m in await store.transcript("agent:main:api:victim")]
    assert said[0] == "my flight lands at 9" and "hi there" not in said


async def test_a_key_with_listed_users_uses_only_their_threads_and_those_it_lists(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    # "shop" lists no threads, so it reaches its users' own; "room" lists a shared one.
    room = {"name": "room", "key": "room-key-0123456789", "users": ["alice"]}
    keys = [*SCOPED["keys"], {**room, "threads": ["team-room"]}]
    relay = await relay_factory(auth={"keys": keys})
    store = relay.runner.app[SERVICES].store
    group = {"X-Chronorelay-User": "alice", "X-Chronorelay-Chat-Type": "group"}
    # A key of any user ("desk", the default) names any thread, as before.
    async with client(relay, key="desk-key-0123456789") as desk:
        await desk.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "my flight lands at 9"}],
            extra_headers={"X-Chronorelay-User": "victim"},
        )
        anyone = await desk.chat.completions.with_raw_response.create(
            model="fake-model",
            messages=HI,
            extra_headers={"X-Chronorelay-User": "bo", "X-Chronorelay-Thread": "elsewhere"},
        )
        assert anyone.headers["X-Chronorelay-Thread-Key"] == "agent:main:api:elsewhere"
    async with client(relay, key="room-key-0123456789") as shared:
        listed = await shared.chat.completions.with_raw_response.create(
            model="fake-model",
            messages=HI,
            extra_headers={**group, "X-Chronorelay-Thread": "team-room"},
        )
        assert listed.headers["X-Chronorelay-Thread-Key"] == "agent:main:api:team-room"
        own = await shared.chat.completions.with_raw_response.create(
            model="fake-model", messages=HI, extra_headers={"X-Chronorelay-User": "alice"}
        )
        assert own.headers["X-Chronorelay-Thread-Key"] == "agent:main:api:alice"
        with pytest.raises(openai.PermissionDeniedError) as victims:
            await shared.chat.completions.create(
                model="fake-model",
                messages=HI,
                extra_headers={**group, "X-Chronorelay-Thread": "victim"},
            )
    async with client(relay, key="shop-key-0123456789") as shop:
        with pytest.raises(openai.PermissionDeniedError) as unlisted:
            await shop.chat.completions.create(
                model="fake-model",
                messages=HI,
                extra_headers={**group, "X-Chronorelay-Thread": "team-room"},
            )
    assert victims.value.message.endswith(
        "the API key 'room' may not use thread 'victim' (it may use: alice, room, team-room); "
        "name one of those in X-Chronorelay-Thread, or add the thread to that key's threads "
        "in [auth] keys"
    )
    assert "the API key 'shop' may not use thread 'team-room' (it may use: alice, shop)" in (
        unlisted.value.message
    )
    # Neither refusal reached the upstream or wrote into the thread it named.
    asked = [seen for seen in fake_upstream.requests if not is_synthesis(seen.body)]
    assert len(asked) == 4
    assert [m.text for m in await store.transcript("agent:main:api:victim")] == [
        "my flight lands at 9",
        "echo: my flight lands at 9",
    ]


async def test_a_scoped_key_runs_chat_commands_only_as_its_users(
    relay_factory: RelayFactory,
) -> None:
    keys = [{**SCOPED["keys"][1], "users": ["alice"]}]
    relay = await relay_factory(server={"api_commands": True}, auth={"keys": keys})
    whoami = [{"role": "user", "content": "/whoami"}]
    async with client(relay, key="desk-key-0123456789") as desk:
        mine = await desk.chat.completions.create(
            model="fake-model", messages=whoami, extra_headers={"X-Chronorelay-User": "alice"}
        )
        assert (mine.choices[0].message.content or "").startswith("You are api:alice")
        with pytest.raises(openai.PermissionDeniedError) as theirs:
            await desk.chat.completions.create(
                model="fake-model", messages=whoami, extra_headers={"X-Chronorelay-User": "root"}
            )
    assert "may not speak for user 'root'" in theirs.value.message


async def test_models_lists_configured_models(relay: RunningServer) -> None:
    async with client(relay) as sdk:
        models = await sdk.models.list()
    assert [m.id for m in models.data] == ["fake-model"]


async def test_each_target_sends_its_own_headers_on_every_request(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    # The headers and URL of a target are built once; repeated requests and a fallback
    # in between must still each carry the right ones.
    relay = await relay_factory(
        upstream={
            "retries": 0,
            "fallbacks": [{"base_url": fake_upstream.url + "/", "api_key": "sk-fallback"}],
        }
    )
    fake_upstream.failures.append(Scripted(503, {"error": {"message": "busy"}}))
    async with client(relay) as sdk:
        for _ in range(2):
            await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    keys = [seen.headers["Authorization"] for seen in fake_upstream.requests]
    assert keys == ["Bearer sk-upstream-secret", "Bearer sk-fallback", "Bearer sk-upstream-secret"]
    for seen in fake_upstream.requests:
        assert seen.path == "/v1/chat/completions"
        assert seen.headers["Content-Type"] == "application/json"
        assert seen.headers["Accept"] == "application/json"


async def test_a_target_without_api_key_sends_no_authorization(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(upstream={"api_key": ""})
    async with client(relay) as sdk:
        for _ in range(2):
            await sdk.chat.completions.create(model="fake-model", messages=HI)  # type: ignore[arg-type]
    assert all("Authorization" not in seen.headers for seen in fake_upstream.requests)


async def test_a_request_the_sdk_retries_is_recorded_once_and_sent_with_its_first_block(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    """The SDK sends a refused request again: the user spoke once, two hours after their
    last message. The retry must not be recorded a second time (its gap would read "just
    now") and must reach the upstream byte for byte as the first attempt did."""
    relay = await relay_factory(upstream={"retries": 0})
    headers = {"X-Chronorelay-Thread": "retried", "X-Chronorelay-User": "ana"}
    first = [{"role": "user", "content": "hi"}]
    async with client(relay) as sdk:
        done = await sdk.chat.completions.create(
            model="fake-model",
            messages=first,  # type: ignore[arg-type]
            extra_headers={**headers, "X-Chronorelay-Received-At": "2026-11-21T10:00:00Z"},
        )
    history = [
        *first,
        {"role": "assistant", "content": done.choices[0].message.content},
        {"role": "user", "content": "what now?"},
    ]
    limited = {"error": {"message": "slow down", "type": "rate_limit"}}
    fake_upstream.failures.append(Scripted(429, limited, {"Retry-After": "0"}))
    retrying = openai.AsyncOpenAI(base_url=f"{relay.url}/v1", api_key="unused", max_retries=1)
    async with retrying as sdk:
        await sdk.chat.completions.create(
            model="fake-model",
            messages=history,  # type: ignore[arg-type]
            extra_headers={**headers, "X-Chronorelay-Received-At": "2026-11-21T12:00:00Z"},
        )
    refused, answered = fake_upstream.requests[-2:]
    assert answered.body["messages"] == refused.body["messages"]
    store = relay.runner.app[SERVICES].store
    transcript = await store.transcript("agent:main:api:retried")
    assert [m.text for m in transcript if m.role == "user"] == ["hi", "what now?"]
