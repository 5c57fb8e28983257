"""A fortnight of one person on Telegram, moving house and looking for a job.

Sam is no programmer. Over two weeks (a fake clock) Sam tells the bot what needs doing
("I need to book movers", "send my CV to Acme by Friday", "call the bank tomorrow"),
decides things ("we're going with the Tuesday slot"), reports things done in everyday
words ("movers booked!", "Sent my CV off to Acme"), puts one off ("can't call the bank
until Monday"), goes quiet for ten days and comes back. At each return the test reads
the cards the model is given (where things stood, what Sam is known by) and what Sam's
own commands show (/actions, /recap): nothing done shown as open, nothing put off shown
as called off, no programmer's words, every card within its budget (spec 001 §6).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp

from middleware.cards.tokens import count_tokens
from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.channels.conftest import telegram_api
from tests.channels.support import telegram_section
from tests.conftest import RelayFactory
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream

__all__ = ["telegram_api"]  # the channel tests' fixture, used here too

# Monday 9 November 2026, 07:30 in London (UTC+0 in winter).
MONDAY = datetime(2026, 11, 9, 7, 30, tzinfo=UTC)
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
ADMIN = "admin-token-0123456789"
SAM = 11
FIVE_MINUTES = timedelta(minutes=5)
# Words that would tell Sam's model it is helping with code.
JARGON = ("drafting", "review phase", "migration", "deploy", "commit", "repo", "thread key")


class Sam:
    """Sam's Telegram chat with the relay, and the relay's jobs run as its scheduler would."""

    def __init__(
        self,
        relay: RunningServer,
        telegram: FakeTelegramApi,
        upstream: FakeUpstream,
        clock: FakeClock,
    ) -> None:
        self.relay, self.telegram, self.upstream, self.clock = relay, telegram, upstream, clock

    async def says(self, text: str, *, after: timedelta = FIVE_MINUTES) -> str:
        """Sam writes ``text``; every message sent back, as one text."""
        self.clock.advance(after)
        before = len(self.telegram.sent())
        await self.telegram.push_message(
            text, user_id=SAM, first_name="Sam", date=self.clock.now(), chat_id=SAM
        )
        count = before + 1
        await self.telegram.wait_for_sent(count)
        with contextlib.suppress(TimeoutError):
            while True:
                count = len(await self.telegram.wait_for_sent(count + 1, within=0.3))
        return "\n".join(m["text"] for m in self.telegram.sent()[before:])

    def block(self) -> str:
        """The block the model got with Sam's newest message."""
        content = str(self.upstream.requests[-1].body["messages"][-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0] if OPEN in content else ""

    async def returns(self, at: datetime, text: str) -> dict[str, str]:
        """Sam comes back at ``at``; the cards the model got, by tag."""
        self.clock.set(at)
        await self.says(text, after=timedelta(0))
        found = {}
        for part in self.block().split("<card ")[1:]:
            tag = part.split('tag="', 1)[1].split('"', 1)[0]
            found[tag] = "<card " + part.split("</card>", 1)[0] + "</card>"
        return found

    async def leaves(self) -> None:
        """Sam stops writing: the idle capture runs."""
        self.clock.advance(timedelta(minutes=20))
        await self._admin("/admin/jobs/scheduler/run")

    async def night(self, day: int) -> None:
        self.clock.set(datetime(2026, 11, day, 3, 30, tzinfo=UTC))
        await self._admin("/admin/jobs/nightly/run")

    async def _admin(self, path: str) -> Any:
        headers = {"Authorization": f"Bearer {ADMIN}"}
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{self.relay.url}{path}", headers=headers) as response:
                assert response.status == 200, await response.text()
                return await response.json()


def open_lines(card: str) -> str:
    """The card's open items, lowercased: what the model is told still needs doing."""
    return "\n".join(line.lower() for line in card.splitlines() if line.startswith("Open:"))


def reads_right(cards: dict[str, str]) -> None:
    """Every card within its budget, and nothing in them about code."""
    budgets = {"resume": 120, "recent_activity": 200, "living_memory": 100}
    for tag, card in cards.items():
        assert count_tokens(card) <= budgets[tag], card
        assert not any(word in card.lower() for word in JARGON), card
    assert sum(count_tokens(card) for card in cards.values()) <= 420


async def test_a_fortnight_of_moving_house_and_looking_for_a_job(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    clock = FakeClock(MONDAY)
    relay = await relay_factory(
        fake_clock=clock,
        auth={"admin_token": ADMIN},
        channels=telegram_section(telegram_api),
        continuity={"mode": "deterministic"},
    )
    sam = Sam(relay, telegram_api, fake_upstream, clock)

    # -- Monday morning: what needs doing -----------------------------------------------
    assert (await sam.says("/tz Europe/London", after=timedelta(0))).startswith(
        "Your timezone is now Europe/London."
    )
    await sam.says("Hi! I'm Sam. We're moving house at the end of the month.")
    await sam.says("I need to book movers for the move.")
    await sam.says("I also need to send my CV to Acme by Friday.")
    await sam.says("I'll call the bank tomorrow.")
    await sam.says("ok thanks, talk later")
    await sam.leaves()
    await sam.night(10)

    # -- Tuesday evening: back; the call is put off, movers booked ----------------------
    cards = await sam.returns(datetime(2026, 11, 10, 18, 0, tzinfo=UTC), "hi again")
    reads_right(cards)
    assert "Sam" in cards["living_memory"]
    todo = open_lines(cards["resume"])
    assert "book movers" in todo and "cv to acme" in todo and "call the bank" in todo

    await sam.says("I can't call the bank until Monday, they're closed.")
    assert "not calling off" in sam.block()
    actions = await sam.says("/actions", after=timedelta(minutes=1))
    assert "Call the bank" in actions and "starts in" in actions, "put off, still open"
    await sam.says("The movers have two slots. We're going with the Tuesday slot.")
    await sam.says("movers booked!")
    await sam.says("ok bye")
    await sam.leaves()
    await sam.night(11)

    # -- Wednesday evening: where it stood; the CV goes off -----------------------------
    cards = await sam.returns(datetime(2026, 11, 11, 19, 0, tzinfo=UTC), "evening")
    reads_right(cards)
    todo = open_lines(cards["resume"])
    assert "movers" not in todo, "booked: not open any more"
    assert "call the bank" in todo and "cv to acme" in todo
    assert "Decision: going with the Tuesday slot" in cards["resume"]
    # Put off: when it was said is history, "tomorrow" is no longer the plan; Monday is.
    bank = next(line for line in todo.splitlines() if "call the bank" in line)
    assert "tomorrow" not in bank and "said mon 9 nov; put off to mon 16 nov" in bank, bank

    await sam.says("Sent my CV off to Acme today.")
    assert 'done with: "Send the CV to Acme"' in sam.block()
    actions = await sam.says("/actions", after=timedelta(minutes=1))
    assert "Acme" not in actions and "Call the bank" in actions
    await sam.says("night")
    await sam.leaves()

    # -- Ten days away, then back on a Sunday -------------------------------------------
    for day in (12, 16, 20, 22):
        await sam.night(day)
    cards = await sam.returns(datetime(2026, 11, 22, 10, 0, tzinfo=UTC), "hey, where were we?")
    reads_right(cards)
    resume = cards["resume"]
    todo = open_lines(resume)
    assert "call the bank" in todo, "never done, never called off"
    assert "tomorrow" not in todo and "put off to mon 16 nov" in todo, todo
    assert "acme" not in todo and "movers" not in todo, "done things are not shown as open"
    # From "evening" at 19:00 to "night" 11 minutes later.
    assert "Last session (11 Nov, 11 min)" in resume, "over a week ago: a date, not a weekday"
    assert "Tuesday slot" in resume

    recap = await sam.says("/recap", after=timedelta(minutes=1))
    recap_open = "\n".join(line.lower() for line in recap.splitlines() if "Open:" in line)
    assert "call the bank" in recap_open
    assert "tomorrow" not in recap_open and "put off to mon 16 nov" in recap_open, recap
    assert "acme" not in recap_open and "movers" not in recap_open

    # -- A real cancellation closes what is left ------------------------------------------
    await sam.says("I'll call the bank tomorrow about the mortgage letter.")
    assert "Call the bank" in await sam.says("/actions", after=timedelta(minutes=1))
    await sam.says("never mind the bank call, my partner did it")
    assert "no longer doing" in sam.block()
    assert "Call the bank" not in await sam.says("/actions", after=timedelta(minutes=1))


async def test_a_call_put_off_in_other_words_is_put_off_on_the_card_and_no_other_call(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    # "can't ring the bank" put off the call to mom (the latest call), and the bank's kept
    # its "tomorrow" on the card; the call to mom had already replaced the bank's.
    clock = FakeClock(MONDAY)
    relay = await relay_factory(
        fake_clock=clock,
        auth={"admin_token": ADMIN},
        channels=telegram_section(telegram_api),
        continuity={"mode": "deterministic"},
    )
    sam = Sam(relay, telegram_api, fake_upstream, clock)
    await sam.says("/tz Europe/London", after=timedelta(0))
    await sam.says("We're moving house at the end of the month.")
    await sam.says("I'll call the bank tomorrow.")
    await sam.says("I'll call mom tomorrow.")
    await sam.leaves()

    await sam.returns(datetime(2026, 11, 10, 18, 0, tzinfo=UTC), "hi again")
    await sam.says("I can't ring the bank until Monday, they're closed.")
    assert 'not calling off: "Call the bank"' in sam.block()
    actions = await sam.says("/actions", after=timedelta(minutes=1))
    assert "Call the bank — starts in" in actions and "Call mom" in actions, actions
    await sam.leaves()

    cards = await sam.returns(datetime(2026, 11, 11, 9, 0, tzinfo=UTC), "morning")
    todo = open_lines(cards["resume"]).splitlines()
    bank = next(line for line in todo if "the bank" in line)
    assert "tomorrow" not in bank and "put off to mon 16 nov" in bank, bank
    mom = next(line for line in todo if "mom" in line)
    assert "put off" not in mom, mom


async def test_work_left_behind_by_a_named_context_is_what_sam_did_lately(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    # Sam has one chat, so what Sam did lately is another context of it. After
    # "/context job hunt" the chat's own context, where the move was planned, was left
    # out of the rollup: the model heard of the movers neither in the resume card nor
    # in recent activity, and a Telegram-only user never had a recent-activity card.
    clock = FakeClock(MONDAY)
    relay = await relay_factory(
        fake_clock=clock,
        auth={"admin_token": ADMIN},
        channels=telegram_section(telegram_api),
        continuity={"mode": "deterministic"},
    )
    sam = Sam(relay, telegram_api, fake_upstream, clock)
    await sam.says("/tz Europe/London", after=timedelta(0))
    await sam.says("We're moving house at the end of the month.")
    await sam.says("I need to book movers for the move.")
    await sam.says("We decided to go with the Tuesday slot.")
    await sam.leaves()
    await sam.night(10)

    cards = await sam.returns(datetime(2026, 11, 10, 18, 0, tzinfo=UTC), "hi again")
    assert "recent_activity" not in cards, "one context so far: the resume card is all of it"
    await sam.says("/context job hunt")
    await sam.says("I need to send my CV to Acme by Friday.")
    await sam.says("We decided to apply to Globex too.")
    await sam.leaves()
    await sam.night(11)

    cards = await sam.returns(datetime(2026, 11, 11, 18, 0, tzinfo=UTC), "evening")
    reads_right(cards)
    assert "cv to acme" in open_lines(cards["resume"])
    lately = cards["recent_activity"]
    assert "moving house" in lately and "book movers" in lately, lately
    assert "Acme" not in lately, "the current context is the resume card's"
