"""The group scenarios' helpers (``Fortnight``) see every message an answer brings, however
late it comes: they wait for the channels' handlers to return, not for a quiet moment.

A channel that sent a second message a while after its answer must fail the scenario at
the step that caused it (this also fails if the chat libraries rename the tasks
``handlers_done`` waits for).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from channels.discord import DiscordChannel
from channels.telegram import TelegramChannel
from tests.channels.group_members import AIKO, BRUNO, Fortnight
from tests.conftest import RelayFactory


def send_again_later(monkeypatch: pytest.MonkeyPatch, channel: type[Any]) -> None:
    """Make ``channel`` send every message a second time, half a second later."""
    send = channel.send

    async def twice(self: Any, thread_id: str, text: str, **options: Any) -> None:
        await send(self, thread_id, text, **options)
        await asyncio.sleep(0.5)
        await send(self, thread_id, f"again: {text}")

    monkeypatch.setattr(channel, "send", twice)


async def test_a_late_second_telegram_message_fails_the_step(
    group: Fortnight, relay_factory: RelayFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await group.start(relay_factory)
    send_again_later(monkeypatch, TelegramChannel)
    with pytest.raises(ValueError, match="too many values to unpack"):
        await group.asks("hello everyone", AIKO)
    assert group.telegram.sent()[-1]["text"].startswith("again: ")


async def test_a_late_second_discord_message_fails_the_step(
    group: Fortnight, relay_factory: RelayFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await group.start(relay_factory)
    send_again_later(monkeypatch, DiscordChannel)
    with pytest.raises(ValueError, match="too many values to unpack"):
        await group.on_discord("hello everyone", BRUNO)
    assert group.discord.sent()[-1]["content"].startswith("again: ")
