"""Fixtures for the channel tests: the fake Telegram Bot API and the fake Discord API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.telegram_api import FakeTelegramApi


@pytest.fixture
async def telegram_api() -> AsyncIterator[FakeTelegramApi]:
    api = FakeTelegramApi()
    await api.start()
    yield api
    await api.stop()


@pytest.fixture
async def discord_api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscordApi]:
    import discord.gateway
    import discord.http
    import yarl

    api = FakeDiscordApi()
    await api.start()
    # discord.py builds every API URL from this class attribute.
    monkeypatch.setattr(discord.http.Route, "BASE", api.base_url)
    # ... and connects to this gateway (it no longer asks GET /gateway/bot).
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(api.ws_url))
    yield api
    await api.stop()
