"""A fortnight of two groups whose members live in four timezones, as they meet it.

Aiko (Tokyo), Bruno (Berlin), Cara (New York), Dev (Los Angeles) and Eli (no zone set)
share a Telegram group and a Discord server channel; the bot answers mentions and
commands. A fake clock moves over two weeks: people say times in their own terms, go
for a run, stay away four days, travel, change their name, join late and fall silent. At
each turn the test reads what the upstream was told (whose time a phrase is, each
member's local time, whose return it is) and what the members got back.
"""

from __future__ import annotations

from datetime import timedelta

from tests.channels.group_members import (
    AIKO,
    BRUNO,
    CARA,
    CHANNEL,
    DEV,
    ELI,
    FAY,
    MONDAY,
    Fortnight,
)
from tests.conftest import RelayFactory


async def test_a_fortnight_of_two_groups_across_four_timezones(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    two = group
    await two.start(relay_factory)
    clock = two.clock

    # -- Monday: four members set their zones in the group; Eli does not ---------------
    for user, zone in [
        (AIKO, "Asia/Tokyo"),
        (BRUNO, "Europe/Berlin"),
        (CARA, "America/New_York"),
        (DEV, "America/Los_Angeles"),
    ]:
        assert zone in await two.command(f"/tz {zone}", user)
    assert "don't know your timezone" in await two.command("/tz", ELI)
    await two.chats("hi all", ELI)

    # Bruno's "5pm my time" is Berlin's 17:00, and not asked about: he said whose it is.
    await two.asks("let's meet at 5pm my time", BRUNO)
    block = two.block()
    assert "Speaker: Bruno." in block
    assert '"at 5pm" = 2026-03-02T17:00:00+01:00 (Europe/Berlin)' in block
    assert "confirm whose time is meant" not in block
    assert two.local_times() == {
        "Aiko": "Mon 23:00 (Asia/Tokyo)",
        "Bruno": "Mon 15:00 (Europe/Berlin)",
        "Cara": "Mon 09:00 (America/New_York)",
        "Dev": "Mon 06:00 (America/Los_Angeles)",
        "Eli": "timezone unknown",  # never the server's zone
    }

    # Cara (New York) says "9am Pacific": Pacific's 9am is asked about, never New York's.
    await two.asks("9am Pacific works for me", CARA)
    block = two.block()
    assert "Pacific" in block and "America/Los_Angeles)?" in block
    assert "2026-03-03T09:00:00-05:00" not in block

    # Eli asks: the block says Eli's zone is unknown, and /time says so to Eli.
    await two.asks("what time is it for everyone?", ELI)
    assert "the user's timezone is unknown" in two.block()
    told = (await two.command("/time", ELI)).splitlines()
    assert "don't know your timezone" in told[0]
    assert {line.split(":")[0] for line in told[1:]} == {"Aiko", "Bruno", "Cara", "Dev"}

    # -- 17:00 UTC: Tuesday 02:00 in Tokyo, still Monday in Los Angeles -----------------
    clock.advance(timedelta(hours=3))
    await two.asks("tomorrow morning works", AIKO)
    block = two.block()
    assert "Now: Tue 3 Mar 2026 02:00 (Asia/Tokyo" in block
    # Not yet slept in Tokyo: which morning is asked (tests/channels/test_group_small_hours.py).
    assert "Tuesday 3 March (the day that has just begun) or Wednesday 4 March?" in block
    assert "confirm whose time is meant" in block, "17 hours apart: whose morning?"
    assert two.local_times()["Dev"] == "Mon 09:00 (America/Los_Angeles)"

    # Dev heads out for a run; three hours on Cara's message says nothing of it, Dev's does.
    await two.asks("I'm about to go for a run", DEV)
    clock.advance(timedelta(hours=3))
    await two.asks("back, what did I miss?", CARA)
    assert "for a run" not in two.block().lower(), "Dev's action is Dev's alone"
    await two.asks("hey, I'm back", DEV)
    block = two.block()
    assert "for a run" in block.lower(), "Dev's own run is his to be asked about"
    assert "Dev's own last message here: 3 hours ago" in block

    # Eli tells the others where they are: the group's times now show it.
    await two.chats("greetings from Lisbon! I'm in Lisbon this week", ELI)
    await two.asks("what time is it for Eli?", BRUNO)
    assert "Europe/Lisbon" in two.local_times()["Eli"]

    # -- The Discord channel: its members are others until they set a zone there ---------
    assert "Asia/Tokyo" in (await two.on_discord("/tz Asia/Tokyo", AIKO, mention=False))["content"]
    answer = await two.on_discord("what time is it for each of us?", BRUNO)
    assert answer["message_reference"]["channel_id"] == CHANNEL
    times = two.local_times()
    assert times["Aiko"] == "Tue 05:00 (Asia/Tokyo)"
    assert times["Bruno"] == "timezone unknown", "Telegram Bruno is not Discord Bruno"
    told = await two.on_discord("/time", CARA, mention=False)
    assert told["channel_id"] == CHANNEL and "Aiko: Tue 3 Mar 2026 05:00" in told["content"]

    # -- Four busy days without Bruno; then he is back ---------------------------------
    for _day in range(4):
        clock.advance(timedelta(days=1))
        for user in (CARA, DEV, ELI):
            await two.chats("busy busy", user)
            clock.advance(timedelta(minutes=10))
    await two.asks("I'm back, anything new?", BRUNO)
    block = two.block()
    assert "Last message here: 10 minutes ago" in block
    assert "Bruno's own last message here: 4 days" in block

    # -- Week two: Dev flies to Tokyo and says so with /tz in a DM ---------------------
    clock.advance(timedelta(days=2))
    assert "Asia/Tokyo" in await two.command("/tz Asia/Tokyo", DEV, dm=True)
    await two.asks("landed! what's the time difference with Bruno?", DEV)
    times = two.local_times()
    assert times["Dev"] == times["Aiko"] and "(Asia/Tokyo)" in times["Dev"]
    assert "Speaker: Dev." in two.block()

    # Cara now goes by Caroline: one member, the new name, never both.
    two.names[CARA] = "Caroline"
    await two.asks("call me Caroline from now on", CARA)
    times = two.local_times()
    assert "Caroline" in times and "Cara" not in times
    assert "(America/New_York)" in times["Caroline"]

    # Fay joins late: her first message is said to be her first, her zone unknown.
    await two.asks("hi, I'm new here", FAY)
    assert "First message here from Fay." in two.block()
    assert two.local_times()["Fay"] == "timezone unknown"

    # -- Day 15: Aiko, silent since the first week, is no longer listed ----------------
    clock.set(MONDAY + timedelta(days=15))
    await two.asks("who's around this week?", BRUNO)
    assert "Aiko" not in two.local_times()
    assert set(two.local_times()) >= {"Bruno", "Dev", "Caroline", "Fay"}
