"""``chronorelay serve`` runs the enabled channels and stops them before the store closes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from proxy.app import build_app
from proxy.channel_runner import enabled_channels
from proxy.config import Config
from proxy.server import start
from tests.channels.support import telegram_section
from tests.conftest import relay_config
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream


def test_no_channel_runs_by_default() -> None:
    assert enabled_channels(Config()) == []


async def test_the_app_starts_and_stops_the_telegram_channel(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    api = FakeTelegramApi()
    await api.start()
    try:
        config = relay_config(tmp_path, fake_upstream.url, channels=telegram_section(api))
        assert enabled_channels(config) == ["telegram"]
        server = await start(build_app(config), "127.0.0.1", 0, shutdown_timeout=2)
        try:
            await api.push_message("hi from telegram")
            [sent] = await api.wait_for_sent(1)
        finally:
            await server.stop()
        assert sent["text"] == "echo: hi from telegram"
        calls = len(api.calls)
        # Stopped: the last getUpdates confirmed the offset and nothing polls any more.
        assert api.methods()[-1] == "getUpdates"
        await api.push_message("anyone?")
        await asyncio.sleep(0.1)
        assert len(api.calls) == calls
    finally:
        await api.stop()
