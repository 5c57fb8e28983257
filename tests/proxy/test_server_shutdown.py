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

from middleware.store.sqlite import SqliteStore
from proxy.app import build_app
from proxy.server import start
from tests.conftest import relay_config
from tests.fakes.upstream import FakeUpstream


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
    assert error["code"] == "upstream_unavailable"
    assert "the relay is shutting down" in error["message"]
    store = SqliteStore(tmp_path / "relay.sqlite3")
    await store.open()
    try:
        user, assistant = await store.transcript("agent:main:api:local")
    finally:
        await store.close()
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
    store = SqliteStore(tmp_path / "relay.sqlite3")
    await store.open()
    try:
        _, assistant = await store.transcript("agent:main:api:local")
    finally:
        await store.close()
    assert assistant.complete is True
    assert assistant.text == "echo: hi there"


async def test_a_request_still_waiting_at_the_deadline_is_ended_within_the_timeout(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    shutdown_timeout = 0.5
    fake_upstream.delay = 10
    config = relay_config(tmp_path, fake_upstream.url)
    server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=shutdown_timeout)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}]}
    async with aiohttp.ClientSession() as http:
        asking = asyncio.create_task(http.post(f"{server.url}/v1/chat/completions", json=body))
        await asyncio.sleep(0.3)
        assert fake_upstream.requests  # the relay is waiting for the upstream's answer

        started = time.monotonic()
        await server.stop()
        elapsed = time.monotonic() - started
        with pytest.raises(aiohttp.ClientError):
            await asking

    assert elapsed < 1.5 * shutdown_timeout
