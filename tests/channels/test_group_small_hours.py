"""The small hours in a group: "tomorrow" said at 02:00 by someone who has not slept.

Through the real relay and the fake Telegram Bot API: Aiko (Tokyo) writes in the group
at 02:00 her time. Her "tomorrow morning" may be the morning of the day that has just
begun or the calendar's next one, so the block asks; her "tonight" and "this morning"
have one reading still ahead and are resolved; after 04:00 "tomorrow" is the calendar's.
"""

from __future__ import annotations

from datetime import timedelta

from tests.channels.group_members import AIKO, BRUNO, Fortnight
from tests.conftest import RelayFactory

BOTH_DAYS = (
    'By "tomorrow", said at 02:00, do you mean Tuesday 3 March (the day that has just '
    "begun) or Wednesday 4 March?"
)


def resolved(block: str) -> str:
    """The block's line of resolved time phrases ("" when there is none)."""
    return next((x for x in block.splitlines() if x.startswith("Times in this message")), "")


async def test_tomorrow_said_in_the_small_hours_asks_which_day(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await group.start(relay_factory)
    assert "Asia/Tokyo" in await group.command("/tz Asia/Tokyo", AIKO)
    assert "Europe/Berlin" in await group.command("/tz Europe/Berlin", BRUNO)

    # Monday 17:00 UTC: Tuesday 02:00 in Tokyo.
    group.clock.advance(timedelta(hours=3))
    await group.asks("tomorrow morning works for me", AIKO)
    block = group.block()
    assert "Now: Tue 3 Mar 2026 02:00 (Asia/Tokyo" in block
    assert f"Ask the user: {BOTH_DAYS}" in block
    assert "2026-03-04T09:00:00+09:00" not in resolved(block), "not settled on the later day"

    # An hour with no am/pm as well: the day is asked, then the side of noon on it.
    await group.asks("tomorrow at 9 then?", AIKO)
    assert f"{BOTH_DAYS} And do you mean 09:00 or 21:00 on that day?" in group.block()

    # "Tonight" and "this morning" have one reading still ahead: the day just begun.
    await group.asks("or tonight at 9, or this morning at 10am", AIKO)
    block = group.block()
    assert '"tonight at 9" = 2026-03-03T21:00:00+09:00 (Asia/Tokyo)' in resolved(block)
    assert '"this morning at 10am" = 2026-03-03T10:00:00+09:00' in resolved(block)
    assert "Tuesday 3 March (the day that has just begun)" not in block

    # Bruno, at 18:00 in Berlin, means the calendar's tomorrow: nothing to ask him.
    await group.asks("tomorrow morning is fine", BRUNO)
    block = group.block()
    assert "the day that has just begun" not in block
    assert '"tomorrow morning" = 2026-03-03T09:00:00+01:00 (Europe/Berlin)' in resolved(block)

    # At 05:00 in Tokyo the night is over: "tomorrow" is Wednesday.
    group.clock.advance(timedelta(hours=3))
    await group.asks("tomorrow morning then", AIKO)
    block = group.block()
    assert "the day that has just begun" not in block
    assert '"tomorrow morning" = 2026-03-04T09:00:00+09:00 (Asia/Tokyo)' in resolved(block)
