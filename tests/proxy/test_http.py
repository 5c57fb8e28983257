"""The HTTP edge beyond the SDK: recording, bad input, health, metrics, inspect mode."""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from middleware.errors import StoreError
from middleware.store import InboundRecord, QueuedInbound, Store, sqlite_connection
from proxy.keys import SERVICES
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, Scripted

HI = [{"role": "user", "content": "hi there"}]
URL = "/v1/chat/completions"


async def post(relay: RunningServer, body: object, **headers: str) -> tuple[int, dict[str, object]]:
    async with aiohttp.ClientSession() as http:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with http.post(
            f"{relay.url}{URL}", data=data, headers={"Content-Type": "application/json", **headers}
        ) as response:
            return response.status, await response.json()


async def test_transcript_and_timestamps_recorded(relay: RunningServer) -> None:
    status, _ = await post(
        relay,
        {"model": "m", "messages": HI},
        **{
            "X-Chronorelay-User": "u1",
            "X-Chronorelay-Thread": "t1",
            "X-Chronorelay-User-Name": "Ana",
        },
    )
    assert status == 200
    store = relay.runner.app[SERVICES].store
    messages = await store.transcript("agent:main:api:t1")
    assert [(m.role, m.text, m.user_key) for m in messages] == [
        ("user", "hi there", "api:u1"),
        ("assistant", "echo: hi there", None),
    ]
    thread = await store.get_thread("agent:main:api:t1")
    user = await store.get_user("api:u1")
    assert thread is not None and user is not None
    assert thread.last_user_message_at == messages[0].at
    assert thread.last_agent_message_at == messages[1].at
    assert thread.last_interaction_at == messages[1].at
    assert thread.last_user_message_by_user == {"api:u1": messages[0].at}
    assert user.display_name == "Ana"
    assert user.last_interaction_any_channel_at == messages[0].at


async def test_inbound_recorded_even_when_upstream_fails(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.failures.append(Scripted(400, {"error": {"message": "no"}}))
    status, _ = await post(relay, {"model": "m", "messages": HI}, **{"X-Chronorelay-Thread": "t2"})
    assert status == 400
    store = relay.runner.app[SERVICES].store
    messages = await store.transcript("agent:main:api:t2")
    assert [(m.role, m.text) for m in messages] == [("user", "hi there")]


async def test_a_reply_the_store_cannot_take_still_reaches_the_client_and_is_logged(
    relay: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = relay.runner.app[SERVICES].store

    def full_disk(thread_key: str, *args: object, **kwargs: object) -> asyncio.Future[int]:
        failed: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        failed.set_exception(StoreError("database or disk is full"))
        return failed

    monkeypatch.setattr(store, "record_reply", full_disk)
    status, body = await post(
        relay, {"model": "m", "messages": HI}, **{"X-Chronorelay-Thread": "d"}
    )
    await asyncio.sleep(0)  # the failure is reported once the answer is out

    assert status == 200
    assert body["choices"][0]["message"]["content"] == "echo: hi there"  # type: ignore[index]
    assert "could not record the reply in agent:main:api:d: database or disk is full" in (
        caplog.text
    )
    # The inbound message was stored before the upstream was asked.
    assert [m.role for m in await store.transcript("agent:main:api:d")] == ["user"]


class _NeverReached:
    async def committed(self) -> None:
        raise AssertionError("a message that failed to land has no commit to wait for")


def _queue_on_a_full_disk(store: Store) -> Callable[[InboundRecord], Awaitable[QueuedInbound]]:
    """A ``queue_inbound`` whose write fails as it lands, as on a full disk."""

    async def queue_inbound(record: InboundRecord) -> QueuedInbound:
        prior = await store.peek_prior(record.thread_key, record.user_key)
        failed: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(
            failed.set_exception, StoreError("database or disk is full")
        )
        return QueuedInbound(prior, failed, _NeverReached())

    return queue_inbound


_A_TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {}}}


@pytest.mark.parametrize(
    ("stream", "tools"),
    [(False, []), (True, []), (True, [_A_TOOL])],
    ids=["plain", "streamed", "streamed-through-the-tool-guard"],
)
async def test_a_message_the_store_cannot_take_fails_its_turn(
    relay: RunningServer,
    fake_upstream: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    stream: bool,
    tools: list[object],
) -> None:
    """The write lands while the upstream works; when it fails, the client gets the
    store's error instead of an answer the relay has no record of, and a streamed answer
    is let go unread (through the stages that wrap it)."""
    store = relay.runner.app[SERVICES].store
    status, _ = await post(relay, {"model": "m", "messages": HI}, **{"X-Chronorelay-Thread": "f"})
    assert status == 200  # the thread's session started: the next turn goes straight up
    monkeypatch.setattr(store, "queue_inbound", _queue_on_a_full_disk(store))
    fake_upstream.hold_stream = stream

    request = {
        "model": "m",
        # A new message: the same one again would be a resend, which is not recorded.
        "messages": [{"role": "user", "content": "and now?"}],
        "stream": stream,
        **({"tools": tools} if tools else {}),
    }
    status, body = await post(relay, request, **{"X-Chronorelay-Thread": "f"})

    assert status == 503
    assert "store is unavailable: database or disk is full" in str(body["error"])
    assert len(fake_upstream.requests) == 2  # asked while the message was being written
    if stream:
        await asyncio.wait_for(fake_upstream.stream_cancelled.wait(), timeout=5)
    assert [m.text for m in await store.transcript("agent:main:api:f")] == [
        "hi there",
        "echo: hi there",
    ]  # the first turn's; nothing of the second


async def test_a_turn_that_waits_for_its_failed_message_reports_it_once(
    relay: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A thread's first turn waits for its message's id (the session starts there)."""
    store = relay.runner.app[SERVICES].store
    monkeypatch.setattr(store, "queue_inbound", _queue_on_a_full_disk(store))

    status, body = await post(
        relay, {"model": "m", "messages": HI}, **{"X-Chronorelay-Thread": "g"}
    )
    await asyncio.sleep(0)

    assert status == 503
    assert caplog.text.count("database or disk is full") == 1


async def test_a_turn_alone_queues_its_message_and_one_among_others_writes_it_at_once(
    relay: RunningServer, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone, a turn's message is written while the upstream works (the loop is idle
    then); with another turn in flight, it is written at once, which costs less CPU."""
    store = relay.runner.app[SERVICES].store
    calls: list[str] = []
    recording = asyncio.Event()
    for name in ("queue_inbound", "record_inbound"):
        real = getattr(store, name)

        def spy(record: InboundRecord, real: Any = real, name: str = name) -> Any:
            calls.append(f"{name}: {record.text}")
            recording.set()
            return real(record)

        monkeypatch.setattr(store, name, spy)

    def ask(text: str, thread: str) -> Awaitable[tuple[int, dict[str, object]]]:
        body = {"model": "m", "messages": [{"role": "user", "content": text}]}
        return post(relay, body, **{"X-Chronorelay-Thread": thread})

    fake_upstream.delay = 0.5
    first = asyncio.create_task(ask("first", "a"))
    await asyncio.wait_for(recording.wait(), timeout=5)
    await fake_upstream.wait_for_requests(1)  # the first turn waits for the upstream
    fake_upstream.delay = 0
    status, _ = await ask("second", "b")
    assert status == 200 and (await first)[0] == 200

    assert calls == ["queue_inbound: first", "record_inbound: second"]
    for thread, text in (("a", "first"), ("b", "second")):
        stored = await store.transcript(f"agent:main:api:{thread}")
        assert [m.text for m in stored] == [text, f"echo: {text}"]


async def test_replayed_turn_is_recorded_at_its_instant(relay: RunningServer) -> None:
    status, _ = await post(
        relay,
        {"model": "m", "messages": HI},
        **{"X-Chronorelay-Received-At": "2026-03-01T09:30:00+01:00", "X-Chronorelay-Thread": "r"},
    )
    assert status == 200
    store = relay.runner.app[SERVICES].store
    messages = await store.transcript("agent:main:api:r")
    assert messages[0].at == datetime(2026, 3, 1, 8, 30, tzinfo=UTC)
    assert messages[1].at >= messages[0].at


async def test_malformed_bodies_get_400_with_reason(relay: RunningServer) -> None:
    status, body = await post(relay, b"{not json")
    assert status == 400 and "not valid JSON" in str(body["error"])
    status, body = await post(relay, {"model": "m"})
    assert status == 400 and "messages" in str(body["error"])
    status, body = await post(relay, {"model": "m", "messages": [{"content": "no role"}]})
    assert status == 400 and "messages[0].role must be a string" in str(body["error"])
    status, body = await post(relay, {"messages": HI}, **{"X-Chronorelay-Chat-Type": "crowd"})
    assert status == 400 and "'dm' or 'group'" in str(body["error"])
    status, body = await post(relay, {"messages": HI}, **{"X-Chronorelay-Received-At": "yesterday"})
    assert status == 400 and "ISO 8601" in str(body["error"])


async def test_a_lone_surrogate_in_the_text_is_answered_and_forwarded_as_sent(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    # JSON can escape a UTF-16 surrogate alone; it is not text, and UTF-8 cannot hold it.
    first = b'{"model": "m", "messages": [{"role": "user", "content": "caf\\udce9"}]}'
    status, _ = await post(relay, first, **{"X-Chronorelay-Thread": "s"})
    assert status == 200
    history = [
        {"role": "user", "content": "caf\udce9"},
        {"role": "assistant", "content": "echo: caf\udce9"},
        {"role": "user", "content": "and again \udce9"},
    ]
    status, _ = await post(
        relay, {"model": "m", "messages": history}, **{"X-Chronorelay-Thread": "s"}
    )
    assert status == 200
    # Forwarded exactly; the first message keeps the block it was sent with.
    forwarded = fake_upstream.last.body["messages"]
    assert forwarded[0] == fake_upstream.requests[0].body["messages"][0]
    assert forwarded[0]["content"].startswith("caf\udce9")
    assert forwarded[2]["content"].startswith("and again \udce9")
    # What the relay reads and stores is text: the surrogate becomes U+FFFD.
    stored = await relay.runner.app[SERVICES].store.transcript("agent:main:api:s")
    assert [m.text for m in stored] == [
        "caf\ufffd",
        "echo: caf\ufffd",
        "and again \ufffd",
        "echo: and again \ufffd",
    ]


async def test_group_thread_key_from_headers(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    async with aiohttp.ClientSession() as http:
        headers = {
            "X-Chronorelay-Channel": "slack",
            "X-Chronorelay-Chat-Type": "group",
            "X-Chronorelay-Thread": "C42",
            "X-Chronorelay-User": "U7",
        }
        async with http.post(f"{relay.url}{URL}", json={"messages": HI}, headers=headers) as r:
            assert r.headers["X-Chronorelay-Thread-Key"] == "agent:main:slack:group:C42"


async def test_unknown_route_is_json_404(relay: RunningServer) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/v1/nothing") as response:
            assert response.status == 404
            assert (await response.json())["error"]["code"] == "not_found"


async def test_health_ready_and_metrics(relay_factory: RelayFactory, unused_tcp_port: int) -> None:
    relay = await relay_factory()
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/healthz") as r:
            assert r.status == 200 and await r.json() == {"status": "ok"}
        async with http.get(f"{relay.url}/readyz") as r:
            assert r.status == 200
            assert await r.json() == {"status": "ready", "store": "ok", "upstream": "ok"}
        await http.post(f"{relay.url}{URL}", json={"messages": HI})
        async with http.get(f"{relay.url}/metrics") as r:
            assert r.content_type == "text/plain"  # Prometheus' text exposition format
            text = await r.text()
    assert 'chronorelay_requests_total{channel="api",status="200"} 1.0' in text
    assert "chronorelay_upstream_latency_seconds_count 1.0" in text
    assert "chronorelay_injected_tokens_total" in text
    await relay.stop()  # one relay serves a store at a time
    down = await relay_factory(upstream={"base_url": f"http://127.0.0.1:{unused_tcp_port}/v1"})
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{down.url}/readyz") as r:
            assert r.status == 503
            assert await r.json() == {
                "status": "not ready",
                "store": "ok",
                "upstream": "unreachable",
            }


async def test_readyz_says_the_store_is_unavailable_when_it_does_not_answer(
    relay_factory: RelayFactory,
) -> None:
    relay = await relay_factory()
    await relay.runner.app[SERVICES].store.close()  # as if its file went away
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/readyz") as r:
            assert r.status == 503
            assert await r.json() == {
                "status": "not ready",
                "store": "unavailable",
                "upstream": "ok",
            }
        async with http.get(f"{relay.url}/healthz") as r:
            assert r.status == 200  # alive, though not ready


async def test_inspect_mode_answers_with_forwarded_messages(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(upstream={"mode": "inspect"})
    status, body = await post(relay, {"model": "m", "messages": HI})
    assert status == 200
    content = body["choices"][0]["message"]["content"]  # type: ignore[index]
    [shown] = json.loads(content)
    assert shown["content"].startswith("hi there\n\n<relay_context>\nNow: ")
    # What is shown is the prompt as forwarded: the markup examples are not rendered.
    status, body = await post(relay, {"messages": [{"role": "user", "content": "lunch at 1pm?"}]})
    content = body["choices"][0]["message"]["content"]  # type: ignore[index]
    assert "<time 2026-11-22T08:00:00Z>" in json.loads(content)[0]["content"]
    async with aiohttp.ClientSession() as http:
        stream_body = {"messages": HI, "stream": True, "stream_options": {"include_usage": True}}
        async with http.post(f"{relay.url}{URL}", json=stream_body) as r:
            raw = await r.read()
    assert raw.endswith(b"data: [DONE]\n\n") and b'"usage": {"prompt_tokens"' in raw


class _FillingDisk(sqlite3.Connection):
    """The loop's store connection, whose COMMIT fails as on a full disk while ``full``;
    with ``fill_at_a_reply``, the commit of the next transaction that writes an assistant
    message fails once."""

    full = False
    fill_at_a_reply = False
    failed_reply_commits = 0
    _holds_a_reply = False

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "BEGIN IMMEDIATE":
            self._holds_a_reply = False
        elif args and isinstance(args[0], dict) and args[0].get("role") == "assistant":
            self._holds_a_reply = True
        reply_fails = _FillingDisk.fill_at_a_reply and self._holds_a_reply
        if sql == "COMMIT" and (_FillingDisk.full or reply_fails):
            if reply_fails:
                _FillingDisk.fill_at_a_reply = False
                _FillingDisk.failed_reply_commits += 1
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[misc]
            error.sqlite_errorname = "SQLITE_FULL"  # type: ignore[misc]
            raise error
        return super().execute(sql, *args)


@pytest.fixture
def filling_disk(monkeypatch: pytest.MonkeyPatch) -> type[_FillingDisk]:
    monkeypatch.setattr(
        sqlite_connection,
        "connect_inline",
        functools.partial(sqlite_connection.connect_inline, factory=_FillingDisk),
    )
    monkeypatch.setattr(_FillingDisk, "full", False)
    monkeypatch.setattr(_FillingDisk, "fill_at_a_reply", False)
    monkeypatch.setattr(_FillingDisk, "failed_reply_commits", 0)
    return _FillingDisk


@pytest.mark.parametrize("stream", [False, True])
async def test_a_message_whose_commit_fails_is_answered_503_and_readyz_says_why(
    relay_factory: RelayFactory, filling_disk: type[_FillingDisk], stream: bool
) -> None:
    """The store applies a turn's message at once and commits it a little later with
    others: a commit that fails (a full disk) must not leave the client with a 200 for a
    message that is gone."""
    relay = await relay_factory(store={"commit_delay_ms": 50})
    store = relay.runner.app[SERVICES].store
    first = {"model": "m", "messages": HI, "stream": stream}
    thread = {"X-Chronorelay-Thread": "full"}
    said = [*HI, {"role": "assistant", "content": "echo: hi there"}]
    body = {**first, "messages": [*said, {"role": "user", "content": "and now?"}]}

    async with aiohttp.ClientSession() as http:
        async with http.post(f"{relay.url}{URL}", json=first, headers=thread) as r:
            assert r.status == 200
            await r.read()
        assert len(await store.transcript("agent:main:api:full")) == 2  # committed
        filling_disk.full = True
        async with http.post(f"{relay.url}{URL}", json=body, headers=thread) as r:
            error = (await r.json())["error"]
            assert r.status == 503, error
        assert error["code"] == "store_error"
        assert "database or disk is full; the disk is full: free space" in error["message"]
        # Every write fails meanwhile, though the store still answers reads.
        async with http.get(f"{relay.url}/readyz") as r:
            assert r.status == 503
            ready = await r.json()
        assert ready["store"] == "unavailable"
        assert "could not write: database or disk is full" in ready["store_error"]
        assert "/" not in ready["store_error"]  # no file path: /readyz needs no key

        filling_disk.full = False  # space is back
        async with http.post(f"{relay.url}{URL}", json=body, headers=thread) as r:
            assert r.status == 200
            await r.read()
        async with http.get(f"{relay.url}/readyz") as r:
            assert r.status == 200 and "store_error" not in await r.json()
    # The message sent again is stored, not taken for a resend of one already kept.
    transcript = await store.transcript("agent:main:api:full")
    assert [m.role for m in transcript] == ["user", "assistant"] * 2


async def test_a_reply_whose_commit_fails_after_the_answer_went_out_is_kept_for_the_next(
    relay_factory: RelayFactory, filling_disk: type[_FillingDisk]
) -> None:
    """The reply is written after the answer went out: nobody can send it again. Its
    commit fails (a full disk, once): it is applied again in the next transaction, ahead
    of the next turn's message, so the transcript, the thread's times and the next turn's
    prior state have what the user was told, once."""
    relay = await relay_factory(store={"commit_delay_ms": 50})
    store = relay.runner.app[SERVICES].store
    thread = {"X-Chronorelay-Thread": "kept"}
    key = "agent:main:api:kept"
    filling_disk.fill_at_a_reply = True

    status, body = await post(relay, {"model": "m", "messages": HI}, **thread)
    assert status == 200
    for _ in range(200):  # the reply's commit, up to the commit delay later
        if filling_disk.failed_reply_commits:
            break
        await asyncio.sleep(0.01)
    assert filling_disk.failed_reply_commits == 1
    said = [*HI, {"role": "assistant", "content": "echo: hi there"}]
    status, _ = await post(
        relay,
        {"model": "m", "messages": [*said, {"role": "user", "content": "and now?"}]},
        **thread,
    )
    assert status == 200

    transcript = await store.transcript(key)
    assert [(m.role, m.text) for m in transcript] == [
        ("user", "hi there"),
        ("assistant", "echo: hi there"),
        ("user", "and now?"),
        ("assistant", "echo: and now?"),
    ]
    thread_state = await store.get_thread(key)
    assert thread_state is not None
    assert thread_state.last_agent_message_at == transcript[3].at
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/readyz") as r:
            assert r.status == 200 and "store_error" not in await r.json()
        async with http.get(f"{relay.url}/metrics") as r:
            assert "chronorelay_store_lost_writes_total 0.0" in await r.text()
