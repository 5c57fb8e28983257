"""A graceful stop (``RunningServer.stop``) ends within its shutdown timeout: a stream
still running at the deadline ends with the relay's in-band error event."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import aiohttp
import pytest

from middleware.store import StoredMessage
from middleware.store.sqlite import SqliteStore
from proxy.app import build_app
from proxy.keys import SERVICES
from proxy.server import start
from tests.conftest import relay_config
from tests.fakes.upstream import FakeUpstream


async def stored_transcript(tmp_path: Path) -> list[StoredMessage]:
    """The test thread's transcript, read from the stopped relay's store file."""
    store = SqliteStore(tmp_path / "relay.sqlite3")
    await store.open()
    try:
        return await store.transcript("agent:main:api:local")
    finally:
        await store.close()


async def test_a_stream_still_running_at_the_deadline_ends_in_band_within_the_timeout(
    tmp_path: Path, fake_upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """The stop lets the stream run for most of the shutdown timeout, then ends it with
    the relay's in-band error event; the partial reply is recorded as incomplete."""
    shutdown_timeout = 0.5
    fake_upstream.event_delay = 0.1  # 40 words: a stream of about 4 s
    words = " ".join(f"w{i}" for i in range(40))
    config = relay_config(tmp_path, fake_upstream.url)
    server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=shutdown_timeout)
    body = {"model": "m", "messages": [{"role": "user", "content": words}], "stream": True}
    async with aiohttp.ClientSession() as http:
        response = await http.post(f"{server.url}/v1/chat/completions", json=body)
        received = await response.content.readany()
        assert received.startswith(b"data: ")

        started = time.monotonic()
        stopping = asyncio.create_task(server.stop())
        cut = False
        try:
            async for chunk in response.content.iter_any():
                received += chunk
        except aiohttp.ClientPayloadError:
            cut = True  # the response ended without its last chunk
        await stopping
        elapsed = time.monotonic() - started

    assert elapsed < 1.5 * shutdown_timeout
    assert not cut
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert b"[DONE]" not in received
    last = received.decode().removesuffix("\n\n").rsplit("\n\n", 1)[-1]
    error = json.loads(last.removeprefix("data: "))["error"]
    assert error["code"] == "relay_shutting_down"
    assert "the relay is shutting down" in error["message"]
    user, assistant = await stored_transcript(tmp_path)
    assert user.text == words
    assert assistant.complete is False
    assert assistant.text.startswith("echo: w0 w1")


async def test_a_stream_that_ends_within_the_timeout_is_let_finish_and_new_connections_refused(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.event_delay = 0.05  # about 0.3 s in all
    config = relay_config(tmp_path, fake_upstream.url)
    server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=5)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}], "stream": True}
    async with aiohttp.ClientSession() as http:
        response = await http.post(f"{server.url}/v1/chat/completions", json=body)
        received = await response.content.readany()

        started = time.monotonic()
        stopping = asyncio.create_task(server.stop())
        await asyncio.sleep(0.05)
        async with aiohttp.ClientSession() as newcomer:
            with pytest.raises(aiohttp.ClientConnectorError):
                await newcomer.get(f"{server.url}/healthz")
        received += await response.content.read()
        await stopping
        elapsed = time.monotonic() - started

    assert received.endswith(b"data: [DONE]\n\n")
    assert elapsed < 2  # the stream's own length, not the shutdown timeout
    _, assistant = await stored_transcript(tmp_path)
    assert assistant.complete is True
    assert assistant.text == "echo: hi there"


async def test_a_request_still_waiting_at_the_deadline_is_answered_503_within_the_timeout(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    shutdown_timeout = 0.5
    fake_upstream.delay = 10
    config = relay_config(tmp_path, fake_upstream.url)
    server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=shutdown_timeout)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}]}
    async with aiohttp.ClientSession() as http:
        asking = asyncio.create_task(http.post(f"{server.url}/v1/chat/completions", json=body))
        await fake_upstream.wait_for_requests(1)  # the relay waits for the upstream's answer

        started = time.monotonic()
        await server.stop()
        elapsed = time.monotonic() - started
        response = await asking
        answer = await response.json()

    assert elapsed < 1.5 * shutdown_timeout
    assert response.status == 503
    assert answer["error"]["code"] == "relay_shutting_down"
    assert "send the request again" in answer["error"]["message"]
    (user,) = await stored_transcript(tmp_path)
    assert user.text == "hi there"  # the accepted message is kept


class _SlowChannel:
    """A channel whose stop waits for a turn that never finishes."""

    name = "slow"
    stop_called_at: float | None = None

    def __init__(self, services: object) -> None:
        pass

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        _SlowChannel.stop_called_at = time.monotonic()
        await asyncio.sleep(30)


async def test_channels_and_captures_stop_with_the_http_server_by_one_deadline(
    tmp_path: Path, fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A channel that will not stop and a capture that will not end are both cut at the
    deadline: the whole stop takes the shutdown timeout, not the timeout more per part.
    The channel begins stopping when the stop begins, beside the HTTP drain."""
    from proxy import channel_runner

    monkeypatch.setattr(channel_runner, "enabled_channels", lambda config: ["slow"])
    monkeypatch.setattr(channel_runner, "load_channel_class", lambda name: _SlowChannel)
    monkeypatch.setattr(_SlowChannel, "stop_called_at", None)
    shutdown_timeout = 0.6
    fake_upstream.event_delay = 0.1
    config = relay_config(tmp_path, fake_upstream.url)
    app = build_app(config)
    server = await start(app, "127.0.0.1", 0, shutdown_timeout=shutdown_timeout)
    capture_cancelled = asyncio.Event()

    async def endless_capture() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            capture_cancelled.set()
            raise

    app[SERVICES].continuity.background.spawn(endless_capture(), what="capture")
    words = " ".join(f"w{i}" for i in range(40))
    body = {"model": "m", "messages": [{"role": "user", "content": words}], "stream": True}
    async with aiohttp.ClientSession() as http:
        response = await http.post(f"{server.url}/v1/chat/completions", json=body)
        await response.content.readany()
        started = time.monotonic()
        stopping = asyncio.create_task(server.stop())
        await response.read()
        stream_ended = time.monotonic()
        await stopping
        elapsed = time.monotonic() - started

    assert _SlowChannel.stop_called_at is not None
    assert _SlowChannel.stop_called_at < stream_ended  # stopping beside the drain
    assert elapsed < 1.5 * shutdown_timeout
    assert capture_cancelled.is_set()


async def test_an_idle_keep_alive_connection_is_closed_at_once_not_waited_for(
    tmp_path: Path, fake_upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that keeps its connection open between requests has no request in
    flight: the stop closes that connection at once, without waiting for the timeout or
    reporting a request it ended."""
    shutdown_timeout = 5
    config = relay_config(tmp_path, fake_upstream.url)
    server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=shutdown_timeout)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server.url}/healthz") as response:
            assert response.status == 200  # the connection stays open, idle, in the pool
        caplog.set_level(logging.INFO)
        started = time.monotonic()
        await server.stop()
        elapsed = time.monotonic() - started

    assert [r.getMessage() for r in caplog.records if "shutdown timeout" in r.getMessage()] == []
    assert elapsed < shutdown_timeout / 2


async def test_beside_a_stream_in_flight_an_idle_connection_closes_first_and_is_not_counted(
    tmp_path: Path, fake_upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """The idle connection is closed when the stop begins, while the stream runs on to
    the deadline; the timeout's warning counts the stream alone."""
    shutdown_timeout = 0.5
    fake_upstream.event_delay = 0.1  # 40 words: a stream of about 4 s
    config = relay_config(tmp_path, fake_upstream.url)
    server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=shutdown_timeout)
    idle_reader, idle_writer = await asyncio.open_connection(server.host, server.port)
    idle_writer.write(b"GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n")
    await idle_reader.readuntil(b'"ok"}')  # answered; the connection stays open
    words = " ".join(f"w{i}" for i in range(40))
    body = {"model": "m", "messages": [{"role": "user", "content": words}], "stream": True}
    async with aiohttp.ClientSession() as http:
        response = await http.post(f"{server.url}/v1/chat/completions", json=body)
        await response.content.readany()
        stopping = asyncio.create_task(server.stop())
        assert await asyncio.wait_for(idle_reader.read(), timeout=0.2) == b""  # closed
        assert not stopping.done()  # the stream still runs
        received = await response.content.read()
        await stopping
    idle_writer.close()

    assert b"relay_shutting_down" in received
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["shutdown timeout: ending the 1 requests still in flight"]
