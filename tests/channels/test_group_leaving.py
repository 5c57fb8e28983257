"""A member who leaves a group drops out of its times until they write there again.

Through the real relay: Telegram's ``left_chat_member`` service message (fake Bot API)
and Discord's member removal (fake gateway, with ``member_events`` asking for the Server
Members intent). Before, a member who left stayed in the block's local-times list and
in ``/time`` for the list's whole window (14 days).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from tests.channels.group_members import (
    ADMIN_AUTH,
    AIKO,
    BRUNO,
    CARA,
    CHANNEL,
    GROUP,
    SERVER,
    Fortnight,
)
from tests.conftest import RelayFactory
from tests.fakes.discord_api import user_payload


async def start(group: Fortnight, factory: RelayFactory, **sections: Any) -> None:
    """The relay with both channels, Discord asking for member events."""
    await group.start(factory, discord={"member_events": True}, **sections)


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


async def test_a_member_who_left_is_still_left_once_the_clock_state_moves_to_another_store(
    group: Fortnight, relay_factory: RelayFactory, tmp_path: Path
) -> None:
    # The clock-state file carries the "left" mark (``left_iso_by_user``): a group moved
    # to another relay through export and import does not list a member who had left.
    await start(group, relay_factory, auth=ADMIN_AUTH)
    for user, zone in [(AIKO, "Asia/Tokyo"), (BRUNO, "Europe/Berlin"), (CARA, "America/New_York")]:
        assert zone in await group.command(f"/tz {zone}", user)
    group.clock.advance(timedelta(hours=1))
    await group.telegram.push_member_left(GROUP, CARA, "Cara", date=group.clock.now())
    await group.asks("who's still here?", BRUNO)
    assert set(group.local_times()) == {"Aiko", "Bruno"}
    exported = await group.admin("GET", "/admin/clock-state")
    await group.relay.stop()

    moved = {"path": str(tmp_path / "moved.sqlite3")}
    await start(group, relay_factory, auth=ADMIN_AUTH, store=moved)
    await group.admin("POST", "/admin/clock-state", exported)
    group.clock.advance(timedelta(minutes=5))
    await group.asks("and after the move?", BRUNO)
    assert set(group.local_times()) == {"Aiko", "Bruno"}
    left = {"telegram:3": "2026-03-02T15:00:00+00:00"}
    thread = "agent:main:telegram:group:-100555"
    assert exported["threads"][thread]["left_iso_by_user"] == left
    again = await group.admin("GET", "/admin/clock-state")
    assert again["threads"][thread]["left_iso_by_user"] == left
