"""A member who leaves a group drops out of its times until they write there again.

Through the real relay: Telegram's ``left_chat_member`` service message (fake Bot API)
and Discord's member removal (fake gateway, with ``member_events`` asking for the Server
Members intent). Before, a member who left stayed in the block's local-times list and
in ``/time`` for the list's whole window (14 days).
"""

from __future__ import annotations

from datetime import timedelta

from tests.channels.group_members import (
    AIKO,
    BRUNO,
    CARA,
    CHANNEL,
    GROUP,
    SERVER,
    Fortnight,
)
from tests.channels.support import telegram_section
from tests.conftest import RelayFactory
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import user_payload


async def start(group: Fortnight, factory: RelayFactory) -> None:
    """The relay with both channels, Discord asking for member events."""
    discord = {"enabled": True, "bot_token": DISCORD_TOKEN, "member_events": True}
    await factory(
        fake_clock=group.clock,
        channels={**telegram_section(group.telegram), "discord": discord},
        continuity={"mode": "deterministic"},
    )


async def test_a_member_who_leaves_the_telegram_group_is_no_longer_listed(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await start(group, relay_factory)
    for user, zone in [(AIKO, "Asia/Tokyo"), (BRUNO, "Europe/Berlin"), (CARA, "America/New_York")]:
        assert zone in await group.command(f"/tz {zone}", user)
    await group.asks("what time is it for everyone?", BRUNO)
    assert set(group.local_times()) == {"Aiko", "Bruno", "Cara"}

    # Cara leaves the group an hour later: the next block and /time leave her out.
    group.clock.advance(timedelta(hours=1))
    await group.telegram.push_member_left(GROUP, CARA, "Cara", date=group.clock.now())
    await group.asks("who's still here?", BRUNO)
    assert set(group.local_times()) == {"Aiko", "Bruno"}
    told = await group.command("/time", AIKO)
    assert "Bruno: " in told and "Cara" not in told

    # A day later she is back and writes: she is listed again.
    group.clock.advance(timedelta(days=1))
    await group.chats("I'm back!", CARA)
    await group.asks("and now?", BRUNO)
    assert set(group.local_times()) == {"Aiko", "Bruno", "Cara"}


async def test_a_member_who_leaves_the_discord_server_is_no_longer_listed(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await start(group, relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    for user, zone in [(AIKO, "Asia/Tokyo"), (BRUNO, "Europe/Berlin")]:
        assert zone in (await group.on_discord(f"/tz {zone}", user, mention=False))["content"]
    await group.on_discord("what time is it for each of us?", BRUNO)
    assert set(group.local_times()) == {"Aiko", "Bruno"}

    await group.discord.push_member_remove(SERVER, user_payload(100 + AIKO, "aiko"))
    await group.on_discord("who's still here?", BRUNO)
    assert set(group.local_times()) == {"Bruno"}
    told = await group.on_discord("/time", BRUNO, mention=False)
    assert "Aiko" not in told["content"]
