"""The HTTP edge on what clients get wrong or do unusually: every answer is a clear,
OpenAI-shaped one, and nothing a client sends can claim what its key may not."""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, Scripted

URL = "/v1/chat/completions"
AGENT_KEY = "agent-key-0123456789"
TELEGRAM_KEY = "bridge-key-0123456789"
ADMIN = "admin-token-0123456789"
HELLO = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
NOW = datetime(2026, 11, 21, 16, 40, tzinfo=UTC)


def _keys(**extra: Any) -> dict[str, Any]:
    return {
        "keys": [
            {"name": "agent", "key": AGENT_KEY, "permissions": ["chat", "replay", "commands"]},
            {"name": "bridge", "key": TELEGRAM_KEY, "channels": ["telegram"]},
        ],
        **extra,
    }


async def _post(
    relay: RunningServer,
    body: Any,
    headers: dict[str, str] | None = None,
    key: str | None = AGENT_KEY,
    path: str = URL,
) -> tuple[int, CIMultiDict[str], bytes]:
    sent = dict(headers or {})
    if key is not None:
        sent.setdefault("Authorization", f"Bearer {key}")
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{relay.url}{path}", data=data, headers=sent) as response:
            return response.status, CIMultiDict(response.headers), await response.read()


def _message(raw: bytes) -> str:
    message = json.loads(raw)["error"]["message"]
    assert isinstance(message, str)
    return message


async def test_a_key_speaks_only_for_its_channels(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(auth=_keys())
    as_telegram = {"X-Chronorelay-Channel": "telegram", "X-Chronorelay-User": "42"}
    status, _, raw = await _post(relay, HELLO, as_telegram)
    assert status == 403
    assert "may not speak for channel 'telegram'" in _message(raw)
    assert "channels" in _message(raw)
    assert fake_upstream.requests == []  # refused before anything was recorded or sent

    status, headers, _ = await _post(relay, HELLO, as_telegram, key=TELEGRAM_KEY)
    assert status == 200
    assert headers["X-Chronorelay-Thread-Key"] == "agent:main:telegram:dm:42"
    status, _, raw = await _post(relay, HELLO, key=TELEGRAM_KEY)  # "api" is not its channel
    assert status == 403


async def test_an_open_loopback_relay_trusts_every_channel(relay: RunningServer) -> None:
    status, headers, _ = await _post(
        relay, HELLO, {"X-Chronorelay-Channel": "discord", "X-Chronorelay-User": "7"}, key=None
    )
    assert status == 200
    assert headers["X-Chronorelay-Thread-Key"] == "agent:main:discord:dm:7"


async def test_an_openai_user_field_that_is_no_id_still_names_one_person(
    relay: RunningServer,
) -> None:
    keys = []
    for user in ("bob smith", "org:123", "bob smith", "x" * 300):
        status, headers, raw = await _post(relay, {**HELLO, "user": user}, key=None)
        assert status == 200, raw
        keys.append(headers["X-Chronorelay-Thread-Key"])
    assert keys[0] == "agent:main:api:bob%20smith"
    assert keys[1] == "agent:main:api:org%3A123"
    assert keys[2] == keys[0]
    assert keys[3].startswith("agent:main:api:sha256-")
    status, _, raw = await _post(relay, HELLO, {"X-Chronorelay-User": "bob smith"}, key=None)
    assert status == 400  # the header is the relay's own contract: said exactly
    assert "X-Chronorelay-User" in _message(raw)


async def _thread_key_of_user(relay: RunningServer, user: str) -> str:
    status, headers, raw = await _post(relay, {**HELLO, "user": user}, key=None)
    assert status == 200, raw
    return headers["X-Chronorelay-Thread-Key"]


async def test_an_openai_user_field_is_kept_as_it_stands_when_it_is_an_id(
    relay: RunningServer,
) -> None:
    """Only what is no id is encoded: an id with '@' or '/' names the same thread it
    always did."""
    assert await _thread_key_of_user(relay, "ana@example.com") == "agent:main:api:ana@example.com"
    assert await _thread_key_of_user(relay, "team/ana") == "agent:main:api:team/ana"
    # Encoded, every reserved character is: no '/' is left to read as a path.
    assert await _thread_key_of_user(relay, "team/bob smith") == "agent:main:api:team%2Fbob%20smith"


async def test_an_encoded_openai_user_stands_as_itself_up_to_256_characters(
    relay: RunningServer,
) -> None:
    at_most = " " + "x" * 253  # "%20" and 253 more: 256 once encoded
    assert await _thread_key_of_user(relay, at_most) == "agent:main:api:%20" + "x" * 253
    # One more and it is its hash: of the user as sent, so it stays the same across
    # versions of the relay.
    assert await _thread_key_of_user(relay, at_most + "x") == (
        "agent:main:api:sha256-" + hashlib.sha256(at_most.encode() + b"x").hexdigest()
    )
    assert await _thread_key_of_user(relay, "bob smith " * 30) == (
        "agent:main:api:sha256-e431f1d1934b72d9a3ae45fdae35cf8fdccbfe31aa852dc19690cd1ed84e40d7"
    )


@pytest.mark.parametrize(
    ("escaped", "thread"),
    [
        ("caf\\udce9", "caf%ED%B3%A9"),
        ("bob \\udce9", "bob%20%ED%B3%A9"),
        ("\\udce9" * 100, "sha256-" + hashlib.sha256(b"\xed\xb3\xa9" * 100).hexdigest()),
    ],
    ids=["as-an-id", "no-id", "long"],
)
async def test_an_openai_user_with_a_lone_surrogate_names_one_person(
    relay: RunningServer, escaped: str, thread: str
) -> None:
    """JSON can escape a UTF-16 surrogate alone, which no UTF-8 thread key can hold: it
    is encoded as its bytes, as any other character outside an id is (it was a 500)."""
    body = b'{"user": "' + escaped.encode() + b'", "messages": [{"role": "user", "content": "hi"}]}'
    for _ in range(2):
        status, headers, raw = await _post(relay, body, key=None)
        assert status == 200, raw
        assert headers["X-Chronorelay-Thread-Key"] == f"agent:main:api:{thread}"


async def test_chat_type_is_read_in_any_case(relay: RunningServer) -> None:
    status, headers, _ = await _post(
        relay, HELLO, {"X-Chronorelay-Chat-Type": "GROUP", "X-Chronorelay-Thread": "g"}, key=None
    )
    assert status == 200
    assert headers["X-Chronorelay-Thread-Key"] == "agent:main:api:g"


async def test_stream_must_be_a_real_boolean_or_null(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    status, _, raw = await _post(relay, {**HELLO, "stream": "false"}, key=None)
    assert status == 400
    assert _message(raw) == "invalid chat completion request: stream must be true, false or null"
    status, headers, raw = await _post(relay, {**HELLO, "stream": None}, key=None)
    assert status == 200
    # The upstream's own type, its charset included.
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert json.loads(raw)["object"] == "chat.completion"
    assert fake_upstream.last.body["stream"] is None  # forwarded as the client sent it


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"messages": []}, "messages must be a non-empty list of messages", "messages"),
        ({"messages": "hi"}, "messages must be a non-empty list of messages", "messages"),
        ({"messages": ["hi"]}, 'messages[0] must be an object with a "role"', "messages[0]"),
        (
            {"messages": [{"role": "user", "content": 5}]},
            # One sentence, not one per branch of the union the field may be.
            "request: messages[0].content must be a string, a list of content parts, or null",
            "messages[0].content",
        ),
        ({**HELLO, "model": 4}, "model must be a string naming the model", "model"),
        ({**HELLO, "user": 5}, "user must be a string", "user"),
    ],
)
async def test_a_malformed_request_names_the_field_and_what_it_must_be(
    relay: RunningServer, fake_upstream: FakeUpstream, body: Any, message: str, param: str
) -> None:
    status, _, raw = await _post(relay, body, key=None)
    assert status == 400
    assert message in _message(raw)
    assert ";" not in _message(raw)
    assert json.loads(raw)["error"]["param"] == param  # as OpenAI names it; the SDK shows it
    assert fake_upstream.requests == []


async def test_several_malformed_fields_are_each_named_once_the_first_as_param(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    body = {"messages": [{"role": 5}], "stream": "yes", "user": 7}
    status, _, raw = await _post(relay, body, key=None)
    assert status == 400
    assert _message(raw) == (
        "invalid chat completion request: "
        'messages[0].role must be a string: "system", "developer", "user", "assistant" or '
        '"tool"; stream must be true, false or null; user must be a string'
    )
    assert json.loads(raw)["error"]["param"] == "messages[0].role"
    assert fake_upstream.requests == []


@pytest.mark.parametrize("body", [[{"role": "user", "content": "hi"}], "hi", 5, None])
async def test_a_body_that_is_no_object_is_told_to_send_one(
    relay: RunningServer, fake_upstream: FakeUpstream, body: Any
) -> None:
    status, _, raw = await _post(relay, body, key=None)
    assert status == 400, raw
    assert _message(raw) == "the request body must be a JSON object with a 'messages' list"
    assert fake_upstream.requests == []


async def test_a_body_that_is_empty_or_not_utf8_says_what_to_send(relay: RunningServer) -> None:
    status, _, raw = await _post(relay, b"", key=None)
    assert (status, _message(raw)) == (400, "the request body is empty: send a JSON object")
    latin1 = '{"messages": [{"role": "user", "content": "café"}]}'.encode("latin-1")
    status, _, raw = await _post(relay, latin1, key=None)
    assert status == 400
    assert _message(raw) == (
        "the request body is not UTF-8 (byte 0xe9 at offset 46): send JSON encoded as UTF-8"
    )


async def _post_raw_header(relay: RunningServer, header: bytes) -> tuple[bytes, bytes]:
    """POST HELLO with ``header`` written as raw bytes (no client library would send
    bytes that are not UTF-8); the status line and the body of the answer."""
    body = json.dumps(HELLO).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    try:
        writer.write(
            b"POST " + URL.encode() + b" HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\n" + header + b"\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        answer = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], payload


@pytest.mark.parametrize(
    "name", ["X-Chronorelay-User", "X-Chronorelay-Thread", "X-Chronorelay-User-Name"]
)
async def test_an_identity_header_that_is_not_utf8_is_a_400_naming_it(
    relay: RunningServer, fake_upstream: FakeUpstream, name: str
) -> None:
    status, payload = await _post_raw_header(relay, name.encode() + b": caf\xe9")
    assert status == b"HTTP/1.1 400 Bad Request"
    assert _message(payload) == f"{name} is not valid UTF-8: send its value encoded as UTF-8"
    assert not fake_upstream.requests


@pytest.mark.parametrize("name", ["X-Chronorelay-User", "X-Chronorelay-Thread"])
async def test_an_identity_header_sent_empty_is_a_400_naming_it(
    relay: RunningServer, fake_upstream: FakeUpstream, name: str
) -> None:
    status, _, raw = await _post(relay, HELLO, {name: ""}, key=None)
    assert status == 400
    assert _message(raw) == f"{name} must be 1-256 characters without spaces or ':'"
    assert not fake_upstream.requests


@pytest.mark.parametrize("channel", ["tele gram", "tele:gram", "télégram", "c" * 65])
async def test_a_channel_name_that_is_not_a_short_plain_name_is_a_400(
    relay: RunningServer, fake_upstream: FakeUpstream, channel: str
) -> None:
    status, _, raw = await _post(relay, HELLO, {"X-Chronorelay-Channel": channel}, key=None)
    assert status == 400
    assert _message(raw) == "X-Chronorelay-Channel must be 1-64 letters, digits, '_', '.' or '-'"
    assert fake_upstream.requests == []


async def test_a_channel_name_of_64_plain_characters_is_taken(relay: RunningServer) -> None:
    channel = "c.h_a-1" + "n" * 57
    status, headers, raw = await _post(
        relay, HELLO, {"X-Chronorelay-Channel": channel, "X-Chronorelay-User": "7"}, key=None
    )
    assert status == 200, raw
    assert headers["X-Chronorelay-Thread-Key"] == f"agent:main:{channel}:dm:7"


async def test_a_replayed_instant_without_an_offset_is_refused(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    """A local time alone would be read in the relay's own zone: the client must say."""
    relay = await relay_factory(auth=_keys())
    status, _, raw = await _post(relay, HELLO, {"X-Chronorelay-Received-At": "2026-03-01T09:30"})
    assert status == 400
    assert _message(raw) == (
        "X-Chronorelay-Received-At needs an offset (e.g. 2026-11-21T16:40:00+01:00 or …Z)"
    )
    assert fake_upstream.requests == []


async def test_a_replayed_instant_may_run_five_minutes_ahead_of_the_relays_clock(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    """A client's clock may be a little fast (``CLOCK_SKEW``); beyond that, the instant
    would make every later turn "just now" until it passed."""
    relay = await relay_factory(fake_clock=FakeClock(NOW), auth=_keys())
    ahead = (NOW + timedelta(minutes=5)).isoformat()
    status, _, raw = await _post(relay, HELLO, {"X-Chronorelay-Received-At": ahead})
    assert status == 200, raw
    beyond = (NOW + timedelta(minutes=5, seconds=1)).isoformat()
    status, _, raw = await _post(relay, HELLO, {"X-Chronorelay-Received-At": beyond})
    assert status == 400
    assert _message(raw) == (
        f"X-Chronorelay-Received-At is in the future ({beyond}; the relay's clock says "
        "2026-11-21T16:40:00+00:00): replay messages that were already sent"
    )
    assert len(fake_upstream.requests) == 1


async def test_replayed_instants_out_of_range_or_ahead_are_refused(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(auth=_keys())
    for value, says in (
        ("0001-01-01T00:00:00+14:00", "out of range"),
        ("9999-12-31T20:00:00-05:00", "out of range"),
        ("9999-12-31T23:59:59Z", "in the future"),
    ):
        status, _, raw = await _post(relay, HELLO, {"X-Chronorelay-Received-At": value})
        assert status == 400, raw
        assert says in _message(raw)
    assert fake_upstream.requests == []


async def test_a_body_nested_too_deeply_is_a_400(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(auth={"admin_token": ADMIN})
    deep = b'{"messages":[{"role":"user","content":"hi","x":' + b"[" * 100_000
    deep += b"]" * 100_000 + b"}]}"
    status, _, raw = await _post(relay, deep, key=None)
    assert status == 400
    assert "nested too deeply" in _message(raw)
    status, _, raw = await _post(relay, deep, key=ADMIN, path="/admin/links")
    assert status == 400
    assert "nested too deeply" in _message(raw)


async def test_admin_links_refuse_what_is_not_a_user_key(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(auth={"admin_token": ADMIN})
    body = {"user_keys": ["nocolon", "api:ana"]}
    status, _, raw = await _post(relay, body, key=ADMIN, path="/admin/links")
    assert status == 400
    assert "'nocolon' is not a user key" in _message(raw)


async def test_framework_refusals_say_what_to_do(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(server={"max_body_bytes": 1024})
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}{URL}") as response:
            assert response.status == 405
            assert response.headers["Allow"] == "POST"
            assert "use POST" in _message(await response.read())
    status, _, raw = await _post(relay, {**HELLO, "pad": "x" * 2048}, key=None)
    assert status == 413
    assert "1024 bytes" in _message(raw)
    assert "[server] max_body_bytes" in _message(raw)


async def test_a_basic_scheme_is_told_to_use_bearer(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(auth=_keys())
    status, _, raw = await _post(relay, HELLO, {"Authorization": f"Basic {AGENT_KEY}"})
    assert status == 401
    assert "'Basic' scheme" in _message(raw)


async def test_a_key_sent_without_bearer_is_not_repeated_back(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(auth=_keys())
    status, _, raw = await _post(relay, HELLO, {"Authorization": AGENT_KEY})
    assert status == 401
    assert "'Authorization: Bearer <key>'" in _message(raw)
    assert AGENT_KEY not in _message(raw)


@pytest.mark.parametrize("sent", ["Bearer", "Bearer ", "bearer   "])
async def test_a_bearer_scheme_without_a_key_is_told_the_key_is_missing(
    relay_factory: RelayFactory, sent: str
) -> None:
    """What a client sends with its key's variable unset: it named the right scheme, so it
    is told the key is missing, not that the header has no scheme."""
    relay = await relay_factory(auth=_keys())
    status, _, raw = await _post(relay, HELLO, {"Authorization": sent})
    assert status == 401
    assert _message(raw) == (
        "missing API key: send 'Authorization: Bearer <key>' with a key from [auth] keys"
    )


async def test_one_model_can_be_retrieved(relay: RunningServer) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/v1/models/fake-model") as response:
            assert response.status == 200
            assert (await response.json())["id"] == "fake-model"
        async with http.get(f"{relay.url}/v1/models/other") as response:
            assert response.status == 404
            assert "GET /v1/models" in _message(await response.read())


async def test_models_lists_each_configured_model_once(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    """A fallback serving the primary's model, or naming none, adds no second entry."""
    fallbacks = [
        {"base_url": fake_upstream.url, "model": "fake-model"},
        {"base_url": fake_upstream.url, "model": "spare-model"},
        {"base_url": fake_upstream.url},
    ]
    relay = await relay_factory(upstream={"fallbacks": fallbacks})
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/v1/models") as response:
            assert response.status == 200
            listed = await response.json()
    assert [model["id"] for model in listed["data"]] == ["fake-model", "spare-model"]


async def test_every_answer_is_counted_under_a_bounded_channel(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory()
    await _post(relay, b"not json", key=None)
    await _post(relay, HELLO, {"X-Chronorelay-Channel": "made-up-1"}, key=None)
    await _post(relay, HELLO, {"X-Chronorelay-Channel": "made-up-2"}, key=None)
    fake_upstream.failures.append(Scripted(400, {"error": {"message": "bad"}}))
    await _post(relay, HELLO, key=None)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/metrics") as response:
            text = await response.text()
    assert 'chronorelay_requests_total{channel="api",status="400"} 2.0' in text
    assert 'chronorelay_requests_total{channel="other",status="200"} 2.0' in text
    assert "made-up" not in text


async def test_a_stream_the_upstream_breaks_off_is_counted_as_an_error(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    # Its status is already 200 when the upstream goes quiet; only the error counter can
    # tell an operator that a client got half an answer.
    relay = await relay_factory(upstream={"read_timeout": 0.2})
    fake_upstream.event_delay = 1.0
    status, _, raw = await _post(relay, {**HELLO, "stream": True}, key=None)
    assert status == 200
    events = [line.removeprefix("data: ") for line in raw.decode().split("\n\n") if line]
    error = json.loads(events[-1])["error"]  # in-band, after the chunks that came
    assert error["code"] == "upstream_timeout"
    assert error["message"] == "the upstream stopped sending mid-stream"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/metrics") as response:
            text = await response.text()
    assert 'chronorelay_requests_total{channel="api",status="200"} 1.0' in text
    assert 'chronorelay_errors_total{kind="upstream_mid_stream"} 1.0' in text


async def test_an_upstream_refusal_keeps_the_headers_clients_act_on(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    limits = {"Retry-After": "120", "x-ratelimit-remaining-requests": "0", "x-request-id": "r1"}
    fake_upstream.failures.append(Scripted(429, {"error": {"message": "slow down"}}, limits))
    status, headers, raw = await _post(relay, HELLO, key=None)
    assert status == 429
    assert json.loads(raw)["error"]["message"] == "slow down"
    assert headers["Retry-After"] == "120"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["X-Request-Id"] == "r1"
    assert "Set-Cookie" not in headers


async def test_a_reply_the_relay_makes_itself_is_streamed_when_asked(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    relay = await relay_factory(server={"api_commands": True})
    body = {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "/time"}],
    }
    status, headers, raw = await _post(relay, body, key=None)
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    assert headers["Cache-Control"] == "no-cache"  # no proxy between holds it back
    events = [line.removeprefix("data: ") for line in raw.decode().split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert "UTC" in text  # /time's answer, not the upstream's
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 0
    assert fake_upstream.requests == []


async def test_a_reply_the_relay_makes_itself_names_the_model_asked_for_or_the_relay(
    relay_factory: RelayFactory,
) -> None:
    relay = await relay_factory(fake_clock=FakeClock(NOW), server={"api_commands": True})
    time = [{"role": "user", "content": "/time"}]
    envelopes = []
    for body in ({"model": "m", "messages": time}, {"messages": time}):
        status, headers, raw = await _post(relay, body, key=None)
        assert status == 200, raw
        assert headers["Content-Type"].startswith("application/json")
        envelopes.append(json.loads(raw))
    created = int(NOW.timestamp())
    assert [(e["id"], e["created"], e["model"]) for e in envelopes] == [
        (f"chatcmpl-relay-{created}", created, "m"),
        (f"chatcmpl-relay-{created}", created, "chronorelay"),
    ]
    assert "UTC" in envelopes[1]["choices"][0]["message"]["content"]
