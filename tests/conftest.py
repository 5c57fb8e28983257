"""Shared fixtures: a recording fake upstream and a relay started in front of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from middleware.clock.source import Clock
from proxy.app import build_app
from proxy.config import Config
from proxy.server import RunningServer, start
from tests.fakes.upstream import FakeUpstream

RelayFactory = Callable[..., Awaitable[RunningServer]]


@pytest.fixture
async def fake_upstream() -> AsyncIterator[FakeUpstream]:
    upstream = FakeUpstream()
    await upstream.start()
    yield upstream
    await upstream.stop()


def relay_config(tmp_path: Path, upstream_url: str, **sections: dict[str, Any]) -> Config:
    """A forwarding config for tests: fast retries, short timeouts, store in tmp_path."""
    raw: dict[str, Any] = {
        "upstream": {
            "mode": "forward",
            "base_url": upstream_url,
            "api_key": "sk-upstream-secret",
            "model": "fake-model",
            "retries": 2,
            "backoff_initial": 0.01,
            "backoff_max": 0.05,
            "read_timeout": 5.0,
            "connect_timeout": 2.0,
        },
        "store": {"path": str(tmp_path / "relay.sqlite3")},
    }
    for name, values in sections.items():
        raw[name] = {**raw.get(name, {}), **values}
    return Config.model_validate(raw)


@pytest.fixture
async def relay_factory(tmp_path: Path, fake_upstream: FakeUpstream) -> AsyncIterator[RelayFactory]:
    started: list[RunningServer] = []

    async def make(*, fake_clock: Clock | None = None, **sections: dict[str, Any]) -> RunningServer:
        config = relay_config(tmp_path, fake_upstream.url, **sections)
        app = build_app(config, clock=fake_clock)
        server = await start(app, "127.0.0.1", 0, shutdown_timeout=2)
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()


@pytest.fixture
async def relay(relay_factory: RelayFactory) -> RunningServer:
    return await relay_factory()
