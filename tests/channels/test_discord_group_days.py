"""Ten days of a Discord server channel whose five members live in four timezones.

Aiko (Tokyo), Bruno (Berlin), Cara (New York), Dev (Los Angeles) and Eli, who never
says anything, share one channel; the relay listens with ``member_events``. A fake clock
moves over ten days: members say where they are, one sets ``/tz``, Dev joins late under
the name Cara already has, Aiko renames herself, Cara leaves and comes back. At each turn
the test reads what the upstream was told (who said what, each member's local time, whose
return it is) and what ``/time`` answers.
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
    SERVER,
    Fortnight,
)
from tests.conftest import RelayFactory


async def test_ten_days_of_a_discord_channel_across_four_timezones(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    days = group
    await days.start(relay_factory, discord={"member_events": True})
    await days.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    clock = days.clock

    # -- Day 1, 14:00 UTC: Bruno sets his zone; Aiko says where she is -----------------
    await days.on_discord("morning all, what's the plan today?", BRUNO)
    assert "Speaker: Bruno. First message in this thread." in days.block()
    assert days.local_times() == {"Bruno": "timezone unknown"}
    assert "Europe/Berlin" in await days.discord_command("/tz Europe/Berlin", BRUNO)
    await days.chats_on_discord("I'm in Tokyo this month", AIKO)
    await days.on_discord("can we meet at 9pm my time?", AIKO)
    assert days.said()[-3:] == [
        "[Bruno] morning all, what's the plan today?",
        "[Aiko] I'm in Tokyo this month",
        "[Aiko] can we meet at 9pm my time?",
    ]
    assert '"at 9pm" = 2026-03-03T21:00:00+09:00 (Asia/Tokyo)' in days.block()
    assert days.local_times() == {
        "Aiko": "Mon 23:00 (Asia/Tokyo; said they are in Tokyo)",
        "Bruno": "Mon 15:00 (Europe/Berlin)",
    }

    # -- Two hours later: Cara, in New York, speaks for the first time -----------------
    clock.advance(timedelta(hours=2))
    await days.on_discord("here in New York, evenings are fine", CARA)
    assert "First message here from Cara." in days.block()
    assert days.local_times()["Cara"] == "Mon 11:00 (America/New_York; said they are in New York)"
    told = await days.discord_command("/time", CARA)
    assert told.startswith("It's Mon 2 Mar 2026 11:00 (America/New_York")
    assert "Bruno: Mon 2 Mar 2026 17:00 (Europe/Berlin" in told

    # -- Day 2: Dev joins from Los Angeles under the name Cara already has -------------
    clock.advance(timedelta(days=1))
    days.names[DEV] = "Cara"
    await days.on_discord("hi, new here, I'm in Los Angeles", DEV)
    assert days.said()[-1] == "[Cara (discord:104)] hi, new here, I'm in Los Angeles"
    block = days.block()
    assert "Speaker: Cara (discord:104)." in block
    assert "First message here from Cara (discord:104)." in block
    assert set(days.local_times()) == {"Aiko", "Bruno", "Cara (discord:103)", "Cara (discord:104)"}
    told = await days.discord_command("/time", BRUNO)
    assert "Cara (discord:103): Tue 3 Mar 2026 11:00 (America/New_York" in told
    assert "Cara (discord:104): Tue 3 Mar 2026 08:00 (America/Los_Angeles" in told

    # -- Day 3: Aiko renames herself; her next message goes by the new name ------------
    clock.advance(timedelta(days=1))
    days.names[AIKO] = "Aiko-san"
    await days.on_discord("back from Kyoto", AIKO)
    assert days.said()[-1] == "[Aiko-San] back from Kyoto"
    block = days.block()
    assert "Speaker: Aiko-San." in block
    assert "Aiko-San's own last message here: 2 days 2 hours ago (Mon 2 Mar 23:00)." in block
    assert "Aiko-San" in days.local_times()
    # What she said before keeps the name she said it under.
    assert "[Aiko] can we meet at 9pm my time?" in days.said()

    # -- Day 4: Cara (New York) leaves the server --------------------------------------
    clock.advance(timedelta(days=1))
    await days.leaves_discord(CARA)
    await days.on_discord("did Cara leave?", BRUNO)
    assert set(days.local_times()) == {"Aiko-San", "Bruno", "Cara (discord:104)"}
    assert "Cara (discord:103)" not in await days.discord_command("/time", BRUNO)

    # -- Day 6: she is back and writes: listed again, her own return told --------------
    clock.advance(timedelta(days=2))
    await days.on_discord("I'm back, sorry", CARA)
    block = days.block()
    assert "Cara (discord:103)'s own last message here: 5 days ago (Mon 2 Mar 11:00)." in block
    assert "Cara (discord:103)" in days.local_times()

    # -- Day 10: Eli, who never wrote, is in no list; /time tells him what it knows ----
    clock.advance(timedelta(days=4))
    await days.on_discord("ten days in, what time is it for everyone?", DEV)
    assert days.local_times() == {
        "Cara (discord:104)": "Wed 09:00 (America/Los_Angeles; said they are in Los Angeles)",
        "Cara (discord:103)": "Wed 12:00 (America/New_York; said they are in New York)",
        "Bruno": "Wed 17:00 (Europe/Berlin)",
        "Aiko-San": "Thu 01:00 (Asia/Tokyo; said they are in Tokyo)",
    }
    told = await days.discord_command("/time", ELI)
    assert "I don't know your timezone" in told
    assert "Eli" not in told and len(told.splitlines()) == 5
