"""Whose time a group means, through the real relay and the fake Telegram Bot API.

Aiko (Tokyo), Bruno (Berlin) and Cara (New York) share a group: their clocks are 14 hours
apart. A time the group plans by (a meeting, a standup, a deadline) is read in Bruno's
zone, so the block asks whose time is meant; Bruno's own day, told as it is or was ("so
sore today", "had a long day yesterday"), is no one else's to confirm (spec 000 §0
ambiguity_threshold_hours, §7.3 group scheduling).
"""

from __future__ import annotations

import pytest

from tests.channels.group_members import AIKO, BRUNO, CARA, Fortnight
from tests.conftest import RelayFactory

WHOSE_TIME = "confirm whose time is meant"

PLANS = [
    "let's meet at 3pm",
    "standup tomorrow at 9",
    "the report is due friday",
    "standup today, who's in?",
    "is everyone free today?",
]
OWN_DAYS = [
    "so sore today",
    "I'm tired today",
    "had a long day yesterday",
    "today was great",
    "so sore today, the gym was brutal",
]


async def three_zones(group: Fortnight, relay_factory: RelayFactory) -> None:
    await group.start(relay_factory)
    for user, zone in [
        (AIKO, "Asia/Tokyo"),
        (BRUNO, "Europe/Berlin"),
        (CARA, "America/New_York"),
    ]:
        assert zone in await group.command(f"/tz {zone}", user)


@pytest.mark.parametrize("text", PLANS)
async def test_a_time_the_group_plans_by_asks_whose_time_is_meant(
    group: Fortnight, relay_factory: RelayFactory, text: str
) -> None:
    await three_zones(group, relay_factory)
    await group.asks(text, BRUNO)
    block = group.block()
    assert "Members' local clocks are up to 14 hours apart" in block
    assert WHOSE_TIME in block


@pytest.mark.parametrize("text", OWN_DAYS)
async def test_the_speakers_own_day_is_not_asked_whose_time(
    group: Fortnight, relay_factory: RelayFactory, text: str
) -> None:
    await three_zones(group, relay_factory)
    await group.asks(text, BRUNO)
    block = group.block()
    assert "Times in this message:" in block, "the day is still read"
    assert WHOSE_TIME not in block
