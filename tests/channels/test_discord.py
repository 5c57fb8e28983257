"""The Discord adapter against a fake Discord API and gateway on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from channels.discord import MESSAGE_LIMIT, discord_parts
from middleware.errors import ConfigError
from tests.channels.support import running_discord
from tests.fakes.discord_api import BOT, BOT_ID, FakeDiscordApi, user_payload
from tests.fakes.upstream import FakeUpstream

GUILD = 9000
CHANNEL = 4242


async def test_dm_is_answered_without_a_reply_reference(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: hi"
    assert sent["channel_id"] == CHANNEL
    assert "message_reference" not in sent
    assert sent["allowed_mentions"]["parse"] == []


async def test_guild_message_needs_a_mention_and_gets_a_reply(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            "just chatting", channel_id=CHANNEL, user_id=42, guild_id=GUILD
        )
        message_id = await discord_api.push_message(
            f"<@{BOT_ID}> hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: hello"
    assert int(sent["message_reference"]["message_id"]) == message_id
    assert len(fake_upstream.requests) == 1


async def test_bots_are_ignored(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            "beep", channel_id=CHANNEL, user_id=5, author=user_payload(5, "other", bot=True)
        )
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: hi"


async def test_rejected_token_is_a_config_error(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    discord_api.token = "another-token"
    with pytest.raises(ConfigError, match="bot_token was rejected"):
        async with running_discord(tmp_path, fake_upstream, discord_api):
            pass


def test_parts_split_on_lines_within_the_limit() -> None:
    lines = [f"{i:04d} " + "y" * 95 for i in range(60)]
    parts = discord_parts("\n".join(lines))
    assert len(parts) > 1
    assert all(len(part) <= MESSAGE_LIMIT for part in parts)
    assert "\n".join(parts).split("\n") == lines


def test_an_overlong_line_is_cut() -> None:
    parts = discord_parts("z" * 4500)
    assert [len(p) for p in parts] == [2000, 2000, 500]
    assert discord_parts("  \n\n ") == []
