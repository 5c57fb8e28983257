"""Namesakes in a group are named alike in the history and in the block, whatever window
the block lists.

Through the real relay and the fake Telegram Bot API: Aiko speaks in the group, falls
silent, and more than the block's window (14 days) later a second member who also goes
by "Aiko" speaks. The history names her "Aiko (telegram:6)", as it names every member
another member of the thread ever shared a name with; the block and ``/time`` name her
the same way, though the first Aiko is no longer listed.
"""

from __future__ import annotations

from datetime import timedelta

from tests.channels.group_members import AIKO, BRUNO, FAY, MONDAY, Fortnight
from tests.conftest import RelayFactory
from tests.fakes.upstream import RELAY_BLOCK


async def test_a_namesake_outside_the_window_still_names_the_speaker_as_the_history_does(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await group.start(relay_factory)
    await group.asks("hello everyone", AIKO)
    assert "Speaker: Aiko." in group.block(), "alone with her name: no account shown"

    # Day 20: the first Aiko last spoke outside the 14-day window; a second Aiko speaks.
    group.clock.set(MONDAY + timedelta(days=20))
    group.names[FAY] = "Aiko"
    assert "Europe/Berlin" in await group.command("/tz Europe/Berlin", BRUNO)
    await group.asks("hi, I'm new here", FAY)
    messages = group.upstream.requests[-1].body["messages"]
    assert messages[-1]["content"].split(RELAY_BLOCK)[0] == "[Aiko (telegram:6)] hi, I'm new here"
    block = group.block()
    assert "Speaker: Aiko (telegram:6)." in block
    assert "Aiko (telegram:6): timezone unknown" in block
    assert "Aiko: " not in block.split("Participants' local times: ", 1)[1]

    # /time names her as the history does too.
    told = await group.command("/time", BRUNO)
    assert "Aiko (telegram:6): timezone unknown" in told


async def test_namesakes_differing_only_in_the_case_of_an_accent_are_told_apart_alike(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    # "Élodie" and "élodie" are one name to a reader, as "Alex" and "alex" are: the
    # history and the block both show whose message it is, by one rule (Unicode case
    # folding, not SQLite's ASCII-only NOCASE).
    await group.start(relay_factory)
    group.names[AIKO], group.names[FAY] = "Élodie", "élodie"
    await group.asks("bonjour", AIKO)
    await group.asks("bonjour aussi", FAY)
    messages = group.upstream.requests[-1].body["messages"]
    said = [m["content"].split(RELAY_BLOCK)[0] for m in messages if m["role"] == "user"]
    assert said[-1] == "[élodie (telegram:6)] bonjour aussi"
    block = group.block()
    assert "Speaker: élodie (telegram:6)." in block
    assert "Élodie (telegram:1): timezone unknown" in block
