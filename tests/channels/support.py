"""Helpers shared by the channel tests: Telegram and Discord channels started over real
services."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from channels.discord import DiscordChannel
from channels.telegram import TelegramChannel
from middleware.pipeline import Handler
from proxy.services import Services, open_services
from tests.conftest import relay_config
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.telegram_api import TOKEN, FakeTelegramApi
from tests.fakes.upstream import FakeUpstream


def telegram_section(api: FakeTelegramApi, **extra: Any) -> dict[str, Any]:
    """A ``[channels]`` table enabling Telegram against the fake Bot API."""
    return {
        "telegram": {
            "enabled": True,
            "bot_token": TOKEN,
            "base_url": api.base_url,
            "poll_timeout": 5,
            **extra,
        }
    }


@asynccontextmanager
async def running_telegram(
    tmp_path: Path,
    upstream: FakeUpstream,
    api: FakeTelegramApi,
    *,
    wrap: Callable[[Handler], Handler] | None = None,
    **extra: Any,
) -> AsyncIterator[TelegramChannel]:
    """Services over ``upstream`` and a started channel polling ``api``; both closed on
    exit. ``wrap`` may wrap the pipeline (to watch the turns go by)."""
    config = relay_config(tmp_path, upstream.url, channels=telegram_section(api, **extra))
    async with open_services(config) as services:
        if wrap is not None:
            services.pipeline = wrap(services.pipeline)
        channel = TelegramChannel(services)
        await channel.start()
        try:
            yield channel
        finally:
            await channel.stop()


def services_of(channel: TelegramChannel) -> Services:
    return channel._services


@asynccontextmanager
async def running_discord(
    tmp_path: Path,
    upstream: FakeUpstream,
    api: FakeDiscordApi,
    *,
    wrap: Callable[[Handler], Handler] | None = None,
    **extra: Any,
) -> AsyncIterator[DiscordChannel]:
    """Services over ``upstream`` and a started Discord channel connected to ``api``."""
    section = {"discord": {"enabled": True, "bot_token": DISCORD_TOKEN, **extra}}
    config = relay_config(tmp_path, upstream.url, channels=section)
    async with open_services(config) as services:
        if wrap is not None:
            services.pipeline = wrap(services.pipeline)
        channel = DiscordChannel(services)
        await channel.start()
        try:
            yield channel
        finally:
            await channel.stop()
