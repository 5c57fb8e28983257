"""A plan clocked for a Telegram group (spec 000 §7.3), as its three members meet it.

Aiko clocks "standup notes tomorrow" for the group on Monday: a plan for Tuesday,
listed as starting then and kept until the day after. The plan belongs to the group
thread: Bruno and Cara are asked about it (as the group's plan, clocked by Aiko — never
as something they were about to do), see it in ``/actions`` and may close it by naming
it; nobody's private chat ever shows it, and it goes when Aiko is forgotten: it is her
words, kept with her actions.
"""

from __future__ import annotations

from datetime import timedelta

from tests.channels.group_members import AIKO, BRUNO, CARA, GROUP, Fortnight
from tests.conftest import RelayFactory

PLAN = "clock it for the group: standup notes tomorrow"


async def meet(group: Fortnight, relay_factory: RelayFactory) -> None:
    """The relay started, the three members in Berlin, and Aiko's plan clocked."""
    await group.start(relay_factory)
    for user in (AIKO, BRUNO, CARA):
        await group.command("/tz Europe/Berlin", user)
        await group.chats("hi all", user)
    await group.asks(PLAN, AIKO)
    assert 'The user clocked an action for the whole group: "Standup notes"' in group.block()


async def test_another_member_is_asked_about_the_groups_plan_naming_who_clocked_it(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    group.clock.advance(timedelta(hours=3))
    await group.asks("evening all, where are we?", BRUNO)
    assert "Standup notes" not in group.block(), "not asked about before its day"
    group.clock.advance(timedelta(hours=18))  # Tuesday, 12:00 in Berlin
    await group.asks("morning all, where are we?", BRUNO)
    block = group.block()
    assert 'Aiko clocked for the whole group: "Standup notes"' in block
    assert "It is the group's plan, not the user's own." in block
    assert "the user was about to" not in block and "the user planned" not in block
    # Asked about once, in the group: Cara, next, is not asked again.
    await group.asks("hi!", CARA)
    assert "Standup notes" not in group.block()


async def test_actions_in_the_group_lists_the_plan_and_any_member_may_close_it(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    listing = await group.command("/actions", CARA)
    assert listing.startswith("Open actions in this group:\n")
    assert "1. Standup notes (for the group, clocked by Aiko)" in listing
    assert "(for the group, clocked by you)" in await group.command("/actions", AIKO)
    assert await group.command("/actions done 1", CARA) == 'Marked "Standup notes" as done.'
    assert "no open actions" in await group.command("/actions", AIKO)


async def test_the_plan_is_for_the_day_it_names_and_kept_until_that_day_is_over(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    listed = "1. Standup notes (for the group, clocked by Aiko) — "
    assert f"{listed}starts in 9 hours, planned" in await group.command("/actions", BRUNO)
    group.clock.advance(timedelta(days=1))  # Tuesday, 15:00 in Berlin
    assert f"{listed}any time in the next 9 hours, planned" in await group.command("/actions", CARA)
    group.clock.advance(timedelta(days=1))  # Wednesday: the day it named is over
    await group.asks("morning, anything left over?", BRUNO)
    assert 'Aiko clocked for the whole group: "Standup notes"' in group.block()
    assert f"{listed}set for a day that ended 15 hours ago, likely done" in (
        await group.command("/actions", CARA)
    )
    group.clock.advance(timedelta(hours=9))  # Thursday: a day after it
    assert "no open actions" in await group.command("/actions", AIKO)


async def test_a_member_naming_the_plan_closes_it_a_bare_done_does_not(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    group.clock.advance(timedelta(hours=3))
    await group.asks("done", BRUNO)
    assert "plan is done" not in group.block(), "Bruno's bare done is about his own doings"
    assert "Standup notes" in await group.command("/actions", AIKO)
    await group.asks("the standup notes are done", CARA)
    assert (
        'The user says the group\'s plan is done: "Standup notes" (clocked for the '
        "group by Aiko, 3 hours ago)." in group.block()
    )
    assert "no open actions" in await group.command("/actions", AIKO)


async def test_a_member_moving_the_plan_to_another_day_puts_it_off_for_everyone(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)  # Monday, 15:00 in Berlin
    await group.asks("we moved the standup notes to thursday", BRUNO)
    assert 'The user is putting off, not calling off: "Standup notes"' in group.block()
    listed = "1. Standup notes (for the group, clocked by Aiko) — starts in 2 days 9 hours"
    assert listed in await group.command("/actions", CARA)


async def test_the_plan_never_shows_in_a_private_chat(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    group.clock.advance(timedelta(hours=3))
    for user in (AIKO, BRUNO):
        assert "no open actions" in await group.command("/actions", user, dm=True)
        await group.command("/time", user, dm=True)


async def test_forgetting_the_member_who_clocked_it_takes_the_plan(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    assert "Standup notes" in await group.command("/actions", BRUNO)
    await group.command("/forget", AIKO, dm=True)
    await group.command("/forget confirm", AIKO, dm=True)
    assert "no open actions" in await group.command("/actions", BRUNO)


async def test_a_cue_asks_another_member_of_the_groups_plan_not_of_what_they_did(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    await group.asks("clock it for the group: gym at 5pm", AIKO)
    group.clock.advance(timedelta(hours=3, minutes=30))  # Monday, 18:30 in Berlin
    await group.asks("I'm so sore", BRUNO)
    block = group.block()
    assert 'Aiko clocked for the whole group "Gym"' in block
    assert "It is the group's plan, not the user's own." in block
    assert 'such as "About the plan Aiko clocked — did "Gym" happen?"' in block
    assert "did you" not in block.casefold(), "Bruno is not asked what he did"


async def test_the_plan_stays_the_groups_when_the_member_who_clocked_it_leaves(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await meet(group, relay_factory)
    group.clock.advance(timedelta(hours=1))
    await group.telegram.push_member_left(GROUP, AIKO, "Aiko", date=group.clock.now())
    listing = await group.command("/actions", BRUNO)
    assert "1. Standup notes (for the group, clocked by Aiko)" in listing
    group.clock.advance(timedelta(hours=20))  # Tuesday, 12:00 in Berlin: its day
    await group.asks("morning all, where are we?", CARA)
    assert 'Aiko clocked for the whole group: "Standup notes"' in group.block()


async def test_the_plan_lives_its_own_life_however_long_ago_its_clocker_last_wrote(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Put off by another member, a plan outlives ``max_ttl`` after Aiko's last message:
    it is read for the group until it expires, not while Aiko keeps writing."""
    await group.start(relay_factory, clock={"store": {"latest_actions": {"max_ttl": "P7D"}}})
    for user in (AIKO, BRUNO, CARA):
        await group.command("/tz Europe/Berlin", user)
    await group.asks("clock it for the group: quarterly report due friday", AIKO)
    group.clock.advance(timedelta(days=3))  # Thursday
    await group.asks("we can't do the quarterly report until next wednesday", BRUNO)
    assert 'putting off, not calling off: "Quarterly report"' in group.block()
    group.clock.advance(timedelta(days=5))  # Tuesday: 8 days after Aiko last wrote
    listing = await group.command("/actions", CARA)
    assert "1. Quarterly report (for the group, clocked by Aiko) — starts in 9 hours" in listing
    group.clock.advance(timedelta(hours=10))  # Wednesday, 00:00 in Berlin: its day
    await group.asks("morning, what's on today?", BRUNO)
    assert 'Aiko clocked for the whole group: "Quarterly report"' in group.block()
