"""Six weeks of one irregular user, as the check-ins meet them.

Ana (Berlin) chats in the terminal channel (`chronorelay chat`) at odd hours: days of
many short sessions, a night at 3am, a trip, a two-week holiday, a week of one message a
day, then a month away. She says what she is about to do in many forms, sometimes says
she did it, sometimes changes her mind, sometimes never mentions it again. The relay runs
on the inspect upstream, which answers with the body it would forward, so each turn shows
the block the model was given. A fake clock moves through the weeks.

What she relies on: the model hears of an open plan when she comes back after a while,
always hedged, never as fact; a plan she closed or called off is not brought up; a moment
away ("brb") or a lunch weeks ago is never brought up; a plan for a day is looked ahead
to on that day; the elapsed time and the gap hint fit the gap; `/actions` lists and
closes what is open.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from channels.terminal import TerminalChannel
from middleware.clock.source import FakeClock
from proxy.config import Config
from proxy.services import open_services

HEDGED = "Never state it as fact; if the user corrects you, accept it at once."


class Ana:
    """Ana at her terminal: she types a line at a given Berlin wall time (UTC+01:00 in
    March, before the clocks change) and reads what the model was told."""

    def __init__(self, channel: TerminalChannel, clock: FakeClock) -> None:
        self.channel, self.clock = channel, clock

    async def says(self, text: str, at: str) -> str:
        """Type ``text`` at ``at`` (UTC ISO); the block the model got, or the relay's
        own answer to a command."""
        self.clock.set(datetime.fromisoformat(at).astimezone(UTC))
        reply = await self.channel.handle(text)
        if text.startswith("/"):
            return reply
        content = json.loads(reply)[-1]["content"]
        return str(content.split("<relay_context>\n", 1)[1].split("\n</relay_context>")[0])


@pytest.fixture
async def ana(tmp_path: Path) -> AsyncIterator[Ana]:
    config = Config.model_validate(
        {"store": {"path": str(tmp_path / "s.sqlite3")}, "upstream": {"mode": "inspect"}}
    )
    clock = FakeClock(datetime(2026, 3, 2, 7, 0, tzinfo=UTC))
    async with open_services(config, clock=clock) as services:
        channel = TerminalChannel(services, user_id="ana", out=io.StringIO())
        user = Ana(channel, clock)
        assert (await user.says("/tz Europe/Berlin", "2026-03-02T08:00+01:00")).startswith(
            "Your timezone is now Europe/Berlin."
        )
        yield user


def checkins(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("Check-in")]


def about_her(block: str) -> str:
    """The block without its continuity cards (which quote what was said, by design)."""
    return block.split("\n<card", 1)[0]


async def test_six_weeks_of_check_ins(ana: Ana) -> None:
    # --- Week 1, Monday: many short sessions ---------------------------------------------
    await ana.says("brb, grabbing lunch", "2026-03-02T12:00+01:00")
    block = await ana.says("back", "2026-03-02T12:40+01:00")
    # Her return closes what the moment away was for.
    assert 'done with: "Grab lunch"' in block
    assert checkins(block) == []

    await ana.says("off to the gym", "2026-03-02T12:45+01:00")
    block = await ana.says("actually skipping the gym", "2026-03-02T12:46+01:00")
    assert 'no longer doing: "Go to the gym"' in block
    block = await ana.says("ok, new plan for the afternoon", "2026-03-02T16:00+01:00")
    assert "Gap: several hours" in block
    assert "gym" not in about_her(block)  # a plan she called off is not asked about

    # A moment away, then hours away: the "brb" is not what she is welcomed back with.
    await ana.says("back in 10", "2026-03-02T16:05+01:00")
    block = await ana.says("sorry, got pulled into something", "2026-03-02T19:30+01:00")
    assert "Last message here: 3 hours 25 minutes ago (Mon 2 Mar 16:05)." in block
    assert "right back" not in about_her(block) and checkins(block) == []

    # Plans that are not hers, not ahead, or only asked about are not kept.
    for said in (
        "my wife is off to the gym",
        "I went to the gym yesterday",
        "should I go to the gym?",
        "are you going to bed?",
    ):
        await ana.says(said, "2026-03-02T19:31+01:00")
    assert (await ana.says("/actions", "2026-03-02T19:32+01:00")).startswith(
        "You have no open actions."
    )

    # --- Monday night into Tuesday: bed, then awake at 3am --------------------------------
    await ana.says("gonna fix the CI tonight", "2026-03-02T19:35+01:00")
    block = await ana.says("going to bed", "2026-03-02T23:30+01:00")
    # Tonight's plan is asked about when she is next back after it, with her capitals.
    (line,) = checkins(block)
    assert '"Fix the CI", set for' in line and "fix the CI?" in line and HEDGED in line
    block = await ana.says("can't sleep, ugh", "2026-03-03T03:10+01:00")
    assert "Last message here: 3 hours 40 minutes ago (Mon 2 Mar 23:30)." in block
    assert "\nGap: " in block
    # She has said she is not sleeping: she is not asked whether she did.
    assert 'no longer doing: "Sleep"' in block
    assert checkins(block) == [] and "some sleep" not in block
    block = await ana.says("ok trying again, night", "2026-03-03T03:20+01:00")
    assert checkins(block) == []  # not asked twice in one sitting
    block = await ana.says("morning!", "2026-03-03T09:00+01:00")
    assert "Gap: a new day" in block  # she slept since 03:20: the small hours were last night
    assert checkins(block) == []  # each plan was asked about once; neither again

    # She says she did something, by name: it is closed, not asked about later.
    await ana.says("I'll call the bank after lunch", "2026-03-03T12:05+01:00")
    block = await ana.says("called the bank, all sorted", "2026-03-03T14:30+01:00")
    assert 'done with: "Call the bank (after lunch)"' in block
    block = await ana.says("what's next", "2026-03-03T18:00+01:00")
    assert "bank" not in about_her(block)

    # --- Week 1, Thursday: a trip on Friday ------------------------------------------------
    await ana.says("about to grab lunch", "2026-03-05T12:00+01:00")
    await ana.says("I'll fly to Tokyo on Friday", "2026-03-05T12:01+01:00")
    listing = await ana.says("/actions", "2026-03-05T12:02+01:00")
    assert "Fly to Tokyo — any time in the next" not in listing  # its day has not begun
    assert "Fly to Tokyo — starts in 11 hours 58 minutes, planned" in listing
    assert "Grab lunch — 2 minutes ago, in progress" in listing
    # On Friday it is looked ahead to, not back on.
    block = await ana.says("packing!", "2026-03-06T08:00+01:00")
    (line,) = checkins(block)
    assert "are you still planning to fly to Tokyo?" in line and HEDGED in line
    assert "lunch" not in about_her(block)  # yesterday's lunch is over and done with

    # --- Weeks 2 and 3: the holiday --------------------------------------------------------
    block = await ana.says("back from holiday!", "2026-03-20T21:00+01:00")
    assert "Last message here: 14 days 13 hours ago (Fri 6 Mar 08:00)." in block
    assert "Gap: 14 days away — welcome them back" in block  # two weeks, not "a new day"
    assert checkins(block) == []  # nothing from two weeks ago is brought up
    assert "Tokyo" not in about_her(block) and "lunch" not in about_her(block)
    assert (await ana.says("/actions", "2026-03-20T21:01+01:00")).startswith(
        "You have no open actions."
    )

    # --- Week 4: one message a day ------------------------------------------------------
    await ana.says("I'm going to the gym tomorrow", "2026-03-23T20:00+01:00")
    block = await ana.says("hi", "2026-03-24T20:00+01:00")
    assert "Last message here: 1 day ago (Mon 23 Mar 20:00)." in block
    (line,) = checkins(block)
    assert "are you still planning to go to the gym?" in line  # its day is not over
    block = await ana.says("hi", "2026-03-25T20:00+01:00")
    (line,) = checkins(block)
    assert "how did the gym go?" in line and HEDGED in line  # looked back on once
    for day in (26, 27, 28, 29):
        block = await ana.says("hi", f"2026-03-{day}T20:00+0{1 if day < 29 else 2}:00")
        assert "Gap: a new day" in block
        assert checkins(block) == []  # asked about once each way, then left alone

    # --- Week 5: /actions done and cancel ----------------------------------------------
    await ana.says("clock it: renew the passport", "2026-03-30T10:00+02:00")
    await ana.says("taking the dog out", "2026-03-30T10:01+02:00")
    await ana.says("heading to the supermarket", "2026-03-30T10:02+02:00")
    listing = await ana.says("/actions", "2026-03-30T10:03+02:00")
    numbered = [line for line in listing.splitlines() if line[:1].isdigit()]
    assert [line.split(" — ")[0] for line in numbered] == [
        "1. Renew the passport",
        "2. Take the dog out",
        "3. Go to the supermarket",
    ]
    assert await ana.says("/actions done 3", "2026-03-30T11:00+02:00") == (
        'Marked "Go to the supermarket" as done.'
    )
    assert await ana.says("/actions done 2", "2026-03-30T11:00+02:00") == (
        'Marked "Take the dog out" as done.'
    )
    wrong = await ana.says("/actions cancel 7", "2026-03-30T11:01+02:00")
    assert wrong.startswith("There is no open action '7' here.")
    assert "1. Renew the passport" in wrong and "supermarket" not in wrong  # done is gone
    assert await ana.says("/actions cancel 1", "2026-03-30T11:02+02:00") == (
        'Marked "Renew the passport" as canceled.'
    )
    block = await ana.says("evening", "2026-03-30T20:00+02:00")
    assert checkins(block) == []  # closed by hand: nothing to ask about

    # --- Week 6 and on: a month away ---------------------------------------------------
    block = await ana.says("long time no see", "2026-05-04T09:00+02:00")
    assert "Last message here: 1 month ago (Mon 30 Mar 20:00)." in block
    (line,) = checkins(block)
    assert line.startswith("Check-in (long_gap_30d)") and "recap" in line


async def test_what_she_is_in_the_middle_of_doing_is_followed_up(ana: Ana) -> None:
    # "heading into a meeting for an hour": kept, with the hour she gave as its length.
    await ana.says("heading into a meeting for an hour", "2026-03-09T10:00+01:00")
    listing = await ana.says("/actions", "2026-03-09T10:01+01:00")
    assert "1. Go into a meeting — 1 minute ago, in progress" in listing
    listing = await ana.says("/actions", "2026-03-09T11:05+01:00")
    assert "Go into a meeting — 1 hour 5 minutes ago, likely done" in listing
    block = await ana.says("ok where were we", "2026-03-09T14:00+01:00")
    (line,) = checkins(block)
    assert '"Go into a meeting"' in line and "how did the meeting go?" in line
    assert HEDGED in line

    # "I'm flying to Tokyo on Friday": planned for Friday, looked ahead to on the day.
    await ana.says("I'm flying to Tokyo on Friday", "2026-03-12T12:00+01:00")
    listing = await ana.says("/actions", "2026-03-12T12:01+01:00")
    assert "Fly to Tokyo — starts in 11 hours 59 minutes, planned" in listing
    block = await ana.says("packing!", "2026-03-13T08:00+01:00")
    (line,) = checkins(block)
    assert "are you still planning to fly to Tokyo?" in line and HEDGED in line

    # What she is not about to do is not kept.
    for said in (
        "I'm working on the API",
        "I'm running late",
        "my wife is heading to the gym",
        "are you flying tomorrow?",
        "taking the dog out is boring",
    ):
        await ana.says(said, "2026-03-13T08:05+01:00")
    listing = await ana.says("/actions", "2026-03-13T08:06+01:00")
    (numbered,) = [line for line in listing.splitlines() if line[:1].isdigit()]
    assert numbered.startswith("1. Fly to Tokyo")
