"""Three weeks of one traveller, as the clock meets them.

Mira lives in Berlin and talks to the bot on Telegram and, linked, through an agent on the
OpenAI API. She flies to New York ("just landed in NYC"), stays while Europe and then the
US set their clocks back (25 October and 1 November 2026: the gap between her two zones is
five hours for a week), writes at 01:30 twice on the night New York's clocks go back, takes
a night flight over the date line to Tokyo, sets and clears her zone, and flies home.
A second, shorter story has her in New York on the night its clocks go forward (8 March
2026): 01:59, then 03:01, and "wake me at 2:30am", an hour that never happens.

What she relies on, turn by turn: the model is told her local time with the right offset;
"how long since we last spoke" is the time that really passed, not a difference of wall
clocks; "yesterday" is her yesterday where she is; a place she says she is in is heard
(and wins only while no zone is set, and only for a while); the gap hint fits the gap
(spec 004 §5); `/tz` and `/time` say what the block uses. The real relay runs the real
python-telegram-bot against the fake Bot API and the real ``openai`` SDK against the
HTTP endpoint; a fake clock moves through the weeks.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import openai
import pytest

from middleware.clock.source import FakeClock
from tests.channels.support import telegram_section
from tests.conftest import RelayFactory
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream

OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
MIRA = 42  # her Telegram user id, and her DM's chat id
BERLIN, NEW_YORK, TOKYO = "Europe/Berlin", "America/New_York", "Asia/Tokyo"


def local(wall: str, zone: str, *, second: bool = False) -> datetime:
    """The instant a wall clock in ``zone`` shows ``wall`` (the later one of a repeated
    hour when ``second``), in UTC, as a phone stamps a message."""
    return datetime.fromisoformat(wall).replace(tzinfo=ZoneInfo(zone), fold=int(second))


class Mira:
    """Mira on Telegram and through her agent on the API; each call is one message."""

    def __init__(
        self,
        telegram: FakeTelegramApi,
        upstream: FakeUpstream,
        sdk: openai.AsyncOpenAI,
        clock: FakeClock,
    ) -> None:
        self.telegram, self.upstream, self.sdk, self.clock = telegram, upstream, sdk, clock
        self.agent_messages: list[dict[str, Any]] = [{"role": "system", "content": "Agent."}]
        self.asked = 0

    async def telegram_says(self, text: str, at: datetime) -> str:
        """Send ``text`` on Telegram at ``at``; the bot's answer."""
        self.clock.set(at.astimezone(UTC))
        before = len(self.telegram.sent())
        await self.telegram.push_message(
            text, user_id=MIRA, chat_id=MIRA, first_name="Mira", date=self.clock.now()
        )
        await self.telegram.wait_for_sent(before + 1)
        with contextlib.suppress(TimeoutError):  # a long answer comes in several parts
            await self.telegram.wait_for_sent(before + 2, within=0.3)
        return "\n".join(str(sent["text"]) for sent in self.telegram.sent()[before:])

    async def agent_says(self, text: str, at: datetime) -> str:
        """Her agent sends ``text`` (with the conversation so far) at ``at``."""
        self.clock.set(at.astimezone(UTC))
        self.agent_messages.append({"role": "user", "content": text})
        completion = await self.sdk.chat.completions.create(
            model="fake-model",
            messages=self.agent_messages,  # type: ignore[arg-type]
            extra_headers={"X-Chronorelay-User": "mira", "X-Chronorelay-Thread": "laptop"},
        )
        answer = completion.choices[0].message.content or ""
        self.agent_messages.append({"role": "assistant", "content": answer})
        return answer

    def block(self) -> str:
        """The block the model got with the newest message; fails if none was forwarded
        since the last look (a command is answered by the relay itself)."""
        assert len(self.upstream.requests) > self.asked, "the model was not asked"
        self.asked = len(self.upstream.requests)
        content = str(self.upstream.requests[-1].body["messages"][-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0]


def gap(block: str) -> str | None:
    """The spec 004 gap hint, if the block gives one."""
    return next((line for line in block.splitlines() if line.startswith("Gap: ")), None)


@pytest.fixture
async def telegram_api() -> AsyncIterator[FakeTelegramApi]:
    api = FakeTelegramApi()
    await api.start()
    yield api
    await api.stop()


@pytest.fixture
async def mira(
    # The fake Bot API first: it outlives the relay, which stops its channel before it.
    telegram_api: FakeTelegramApi,
    fake_upstream: FakeUpstream,
    relay_factory: RelayFactory,
) -> AsyncIterator[Mira]:
    clock = FakeClock(local("2026-10-19T09:00", BERLIN))
    relay = await relay_factory(
        fake_clock=clock,
        server={"api_commands": True},
        channels=telegram_section(telegram_api),
        # No capture pass through the upstream: it would add requests to the recording.
        continuity={"mode": "deterministic"},
    )
    async with openai.AsyncOpenAI(base_url=f"{relay.url}/v1", api_key="k", max_retries=0) as sdk:
        yield Mira(telegram_api, fake_upstream, sdk, clock)


async def test_three_weeks_of_a_traveller(mira: Mira) -> None:
    # --- Week 1, Monday 19 October, Berlin: her zone, and her agent linked ----------------
    told = await mira.telegram_says("/tz Berlin", local("2026-10-19T09:00", BERLIN))
    assert told.startswith("Your timezone is now Europe/Berlin.") and "UTC+02:00" in told
    await mira.telegram_says("morning! flying to New York today", local("2026-10-19T09:01", BERLIN))
    block = mira.block()
    assert block.startswith("Now: Mon 19 Oct 2026 09:01 (Europe/Berlin, UTC+02:00).")
    assert "said they are in" not in block  # flying somewhere is not being there

    told = await mira.telegram_says("/link", local("2026-10-19T09:02", BERLIN))
    code = told.split("code is ")[1].split(".")[0]
    linked = await mira.agent_says(f"/link {code}", local("2026-10-19T09:03", BERLIN))
    assert linked.startswith("Linked:")

    # --- Monday afternoon, New York: her set zone still wins, but the model hears where
    # she is, on every turn, until she switches -----------------------------------------
    await mira.telegram_says("just landed in NYC", local("2026-10-19T15:30", NEW_YORK))
    block = mira.block()
    assert block.startswith("Now: Mon 19 Oct 2026 21:30 (Europe/Berlin, UTC+02:00).")
    assert (
        "The user says they are in NYC, where it is Mon 19 Oct 15:30 (America/New_York, UTC-04:00)."
    ) in block
    assert "should I use its time (America/New_York) instead of Europe/Berlin?" in block
    # 12 hours 29 minutes since 09:01 Berlin: a new-day hint only comes with a new date.
    assert "Last message here: 12 hours 29 minutes ago (Mon 19 Oct 09:01)." in block
    assert "summarize where you left off" in (gap(block) or "")

    await mira.telegram_says("what time is it for me?", local("2026-10-19T15:40", NEW_YORK))
    block = mira.block()
    assert "said they are in NYC (10 minutes ago), where it is Mon 19 Oct 15:40" in block
    assert gap(block) is None  # ten minutes: just carry on

    told = await mira.telegram_says("/tz New York", local("2026-10-19T15:45", NEW_YORK))
    assert told.startswith("Your timezone is now America/New_York.")
    assert "Mon 19 Oct 2026 15:45 (America/New_York, UTC-04:00)" in told

    # Her agent, linked, shares the zone; dinner "at 7 tonight" is New York's 7pm.
    await mira.agent_says("book dinner at 7 tonight?", local("2026-10-19T15:50", NEW_YORK))
    block = mira.block()
    assert block.startswith("Now: Mon 19 Oct 2026 15:50 (America/New_York, UTC-04:00).")
    assert "First message in this thread." in block
    # Her "/tz New York" (15:45) was no contact: her question at 15:40 was.
    assert "Last contact on any channel: 10 minutes ago (Telegram)." in block
    assert "2026-10-19T19:00:00-04:00 (America/New_York)" in block
    assert "said they are in" not in block  # settled by /tz

    # --- Saturday 24 October: a call home; Berlin's clocks go back tonight, New York's
    # not for another week ----------------------------------------------------------------
    await mira.telegram_says(
        "call my mum at 9am Berlin time tomorrow", local("2026-10-24T10:00", NEW_YORK)
    )
    block = mira.block()
    # Named in the message, Berlin is this message's zone; her own time is given too.
    assert block.startswith("Now: Sat 24 Oct 2026 16:00 (Europe/Berlin, UTC+02:00;")
    assert "The user's own time: Sat 24 Oct 10:00 (America/New_York, UTC-04:00)." in block
    assert "Last contact on any channel: 4 days 18 hours ago (API)." in block  # her agent
    # Tomorrow at 9 in Berlin is after its change: UTC+01:00, 04:00 in New York. The day
    # word after the zone is part of the phrase; Berlin and New York are both on Saturday,
    # so "tomorrow" is one Sunday and nothing is asked.
    assert '"at 9am Berlin time tomorrow" = 2026-10-25T09:00:00+01:00 (Europe/Berlin)' in block
    assert "Ask the user" not in block
    # Four days and more since her last message here: an absence, not just the next day.
    assert (gap(block) or "").startswith("Gap: 4 days away — welcome them back")

    # --- Week 2, the night of Sunday 1 November: 01:30 in New York, twice -----------------
    await mira.telegram_says(
        "can't sleep. wake me at 1:30am if I doze off", local("2026-10-31T23:00", NEW_YORK)
    )
    assert "Which 01:30 on Sunday 1 November in America/New_York" in mira.block()
    await mira.telegram_says("still up", local("2026-11-01T01:30", NEW_YORK))
    block = mira.block()
    assert block.startswith("Now: Sun 1 Nov 2026 01:30 (America/New_York, UTC-04:00).")
    assert "Last message here: 2 hours 30 minutes ago (Sat 31 Oct 23:00)." in block
    assert "summarize where you left off" in (gap(block) or "")  # past midnight, same night
    await mira.telegram_says(
        "the clock went back, it's 1:30 again", local("2026-11-01T01:30", NEW_YORK, second=True)
    )
    block = mira.block()
    assert block.startswith("Now: Sun 1 Nov 2026 01:30 (America/New_York, UTC-05:00).")
    # An hour passed, not none; the earlier 01:30 carries its offset to tell them apart.
    assert "Last message here: 1 hour ago (Sun 1 Nov 01:30, UTC-04:00)." in block
    assert "re-orient" in (gap(block) or "")
    await mira.telegram_says("morning", local("2026-11-01T09:00", NEW_YORK))
    block = mira.block()
    assert "Last message here: 7 hours 30 minutes ago (Sun 1 Nov 01:30, UTC-05:00)." in block
    told = await mira.telegram_says("/time", local("2026-11-01T09:01", NEW_YORK))
    assert told == "It's Sun 1 Nov 2026 09:01 (America/New_York, UTC-05:00) for you."

    # --- Wednesday night to Friday morning: over the date line to Tokyo -------------------
    await mira.telegram_says("boarding for Tokyo, bye!", local("2026-11-04T22:40", NEW_YORK))
    await mira.telegram_says("just landed in Tokyo", local("2026-11-06T04:30", TOKYO))
    block = mira.block()
    assert block.startswith("Now: Thu 5 Nov 2026 14:30 (America/New_York, UTC-05:00).")
    assert "where it is Fri 6 Nov 04:30 (Asia/Tokyo, UTC+09:00)." in block
    assert "Last message here: 15 hours 50 minutes ago (Wed 4 Nov 22:40)." in block
    told = await mira.telegram_says("/tz Tokyo", local("2026-11-06T04:35", TOKYO))
    assert "Fri 6 Nov 2026 04:35 (Asia/Tokyo, UTC+09:00)" in told
    await mira.telegram_says("what did I tell you yesterday?", local("2026-11-06T04:40", TOKYO))
    block = mira.block()
    assert block.startswith("Now: Fri 6 Nov 2026 04:40 (Asia/Tokyo, UTC+09:00).")
    # Her yesterday is Tokyo's Thursday, which her New York Wednesday night fell in.
    assert (
        '"yesterday" = 2026-11-05T00:00:00+09:00 to 2026-11-06T00:00:00+09:00 (Asia/Tokyo)' in block
    )
    assert "Last message here: 10 minutes ago (Fri 6 Nov 04:30)." in block
    assert "Today is 2026-11-06." in block
    await mira.agent_says("jetlag tips?", local("2026-11-06T15:00", TOKYO))
    block = mira.block()
    assert block.startswith("Now: Fri 6 Nov 2026 15:00 (Asia/Tokyo, UTC+09:00).")
    # Her agent's last turn, 15:50 in New York, is shown in the zone she is in now.
    assert "Last message here: 17 days 10 hours ago (Tue 20 Oct 04:50)." in block
    assert (gap(block) or "").startswith("Gap: 17 days away — welcome them back")
    assert "Last contact on any channel: 10 hours 20 minutes ago (Telegram)." in block

    # --- Week 3: she clears her zone; where she says she is stands for it, for a while ---
    told = await mira.telegram_says("/tz clear", local("2026-11-09T10:00", TOKYO))
    assert told == "Your timezone is cleared; I'll assume UTC and ask when it matters."
    await mira.telegram_says("hello?", local("2026-11-09T10:01", TOKYO))
    assert "(UTC; the user's timezone is unknown" in mira.block()
    await mira.telegram_says("I'm in Tokyo till Saturday", local("2026-11-09T10:02", TOKYO))
    assert "(Asia/Tokyo, UTC+09:00; from where the user says they are (Tokyo))" in mira.block()

    await mira.telegram_says("back home in Berlin!", local("2026-11-14T18:00", BERLIN))
    block = mira.block()
    assert block.startswith(
        "Now: Sat 14 Nov 2026 18:00 (Europe/Berlin, UTC+01:00; from where the user says "
        "they are (Berlin))."
    )
    told = await mira.telegram_says("/time", local("2026-11-14T18:01", BERLIN))
    assert told.startswith("It's Sat 14 Nov 2026 18:01 (Europe/Berlin, UTC+01:00) for you")

    # Two weeks later, where she said she was no longer stands for her zone: asked again.
    await mira.telegram_says("hi, back at work", local("2026-11-30T09:00", BERLIN))
    assert "(UTC; the user's timezone is unknown — ask for it" in mira.block()
    told = await mira.telegram_says("/tz Berlin", local("2026-11-30T09:01", BERLIN))
    assert "Mon 30 Nov 2026 09:01 (Europe/Berlin, UTC+01:00)" in told


async def test_the_night_new_york_springs_forward(mira: Mira) -> None:
    await mira.telegram_says("/tz New York", local("2026-03-07T22:00", NEW_YORK))
    await mira.telegram_says("up late. wake me at 2:30am?", local("2026-03-08T01:59", NEW_YORK))
    block = mira.block()
    assert block.startswith("Now: Sun 8 Mar 2026 01:59 (America/New_York, UTC-05:00).")
    # 02:30 never happens that night: asked about, never quietly moved.
    assert "02:30 on Sunday 8 March in America/New_York does not exist" in block
    await mira.telegram_says("wait, my phone says 3:01", local("2026-03-08T03:01", NEW_YORK))
    block = mira.block()
    assert block.startswith("Now: Sun 8 Mar 2026 03:01 (America/New_York, UTC-04:00).")
    # Two minutes passed, not an hour and two.
    assert "Last message here: 2 minutes ago (Sun 8 Mar 01:59)." in block
    assert gap(block) is None
