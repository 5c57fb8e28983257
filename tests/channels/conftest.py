"""Fixtures for the channel tests: the fake Telegram Bot API, the fake Discord API, and a
group of members on both (``Fortnight``)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import pytest
from telegram.ext import AIORateLimiter

import channels.telegram
from tests.channels.group_members import Fortnight
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream


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


@pytest.fixture
def quick_group_flood_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Telegram channels started from now on keep the group flood limit (20 messages a
    minute per group, kept by PTB's limiter) at a hundred times the pace: 20 in 0.6 s. A
    scenario answering more than 20 times in one group would otherwise wait 3 s per answer
    on the real clock (30 s for the fortnight)."""
    quick = functools.partial(AIORateLimiter, group_time_period=0.6)
    monkeypatch.setattr(channels.telegram, "AIORateLimiter", quick)


@pytest.fixture
def group(
    telegram_api: FakeTelegramApi,
    discord_api: FakeDiscordApi,
    fake_upstream: FakeUpstream,
    quick_group_flood_limit: None,
) -> Fortnight:
    """Five members of a Telegram group and a Discord channel; the test starts the relay.
    Requested before ``relay_factory``, the fakes outlive the relay, which stops its
    channels before them."""
    return Fortnight(fake_upstream, telegram_api, discord_api)
