"""Helpers shared by the channel tests: Telegram and Discord channels started over real
services."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from channels.discord import DiscordChannel
from channels.telegram import TelegramChannel
from middleware.pipeline import Handler
from proxy.config import DiscordConfig
from proxy.services import Services, open_services
from tests.conftest import relay_config
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.telegram_api import TOKEN, FakeTelegramApi
from tests.fakes.upstream import FakeUpstream

# The tasks in which the chat libraries run the channels' handlers: python-telegram-bot
# runs each update in "Application:<bot id>:process_concurrent_update" (the channel asks
# for concurrent updates), discord.py each event in "discord.py: <event>".
_HANDLER_TASK = re.compile(r"Application:\d+:process_concurrent_update|discord\.py: on_\w+")


async def handlers_done(within: float = 5.0) -> None:
    """Wait until every Telegram update and Discord event handler running has returned:
    all the channels send for the messages handled so far is then in the fakes' records.

    Call it once the fake recorded a first answer: by then the message's handler, and those
    of the messages before it, are running or done. Waiting for the handlers, not for a
    quiet moment, catches a second message however late it comes, at no cost."""
    async with asyncio.timeout(within):
        while running := {
            task
            for task in asyncio.all_tasks()
            if not task.done() and _HANDLER_TASK.fullmatch(task.get_name())
        }:
            await asyncio.wait(running)


class _Startable(Protocol):
    def __init__(self, services: Services) -> None: ...
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


C = TypeVar("C", bound=_Startable)


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
async def running_channel(
    channel_class: type[C],
    tmp_path: Path,
    upstream: FakeUpstream,
    channels: dict[str, Any],
    wrap: Callable[[Handler], Handler] | None,
) -> AsyncIterator[C]:
    """Services over ``upstream`` with the ``[channels]`` table given, and a started
    channel; both closed on exit. ``wrap`` may wrap the pipeline (to watch turns go by)."""
    config = relay_config(tmp_path, upstream.url, channels=channels)
    async with open_services(config) as services:
        if wrap is not None:
            services.pipeline = wrap(services.pipeline)
        channel = channel_class(services)
        await channel.start()
        try:
            yield channel
        finally:
            await channel.stop()


def running_telegram(
    tmp_path: Path,
    upstream: FakeUpstream,
    api: FakeTelegramApi,
    *,
    wrap: Callable[[Handler], Handler] | None = None,
    **extra: Any,
) -> AbstractAsyncContextManager[TelegramChannel]:
    """A Telegram channel polling the fake Bot API ``api``."""
    section = telegram_section(api, **extra)
    return running_channel(TelegramChannel, tmp_path, upstream, section, wrap)


def services_of(channel: TelegramChannel | DiscordChannel) -> Services:
    return channel._services


def discord_settings(**extra: Any) -> DiscordConfig:
    """``[channels.discord]`` enabled with the fake's token, plus ``extra``."""
    return DiscordConfig.model_validate({"enabled": True, "bot_token": DISCORD_TOKEN, **extra})


def running_discord(
    tmp_path: Path,
    upstream: FakeUpstream,
    api: FakeDiscordApi,
    *,
    wrap: Callable[[Handler], Handler] | None = None,
    **extra: Any,
) -> AbstractAsyncContextManager[DiscordChannel]:
    """A Discord channel connected to the fake API and gateway ``api``."""
    section = {"discord": {"enabled": True, "bot_token": DISCORD_TOKEN, **extra}}
    return running_channel(DiscordChannel, tmp_path, upstream, section, wrap)
