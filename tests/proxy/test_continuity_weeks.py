"""Three weeks of one developer and their agent, as the continuity cards meet them.

Dev works with an agent (the real ``openai`` SDK) on two projects, each in its own
thread: the billing service and the company website. A fake clock moves from a Monday
morning through three weeks: sessions of 20-60 minutes, gaps of hours, a weekend, a week
away. Dev decides things ("let's go with Postgres"), leaves things open ("I still need to
write the migration"), finishes them later, corrects a decision, the agent compacts its
history, the nightly job runs and the relay restarts on the same store.

At each return the test reads the cards the model is given: where the work stood in
*this* thread, what Dev did lately elsewhere, who Dev is. It runs in both continuity
modes: ``deterministic``, and ``full`` with a fake upstream answering the capture
passes as a model would (one malformed answer, one too slow).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import openai
import pytest

from middleware.cards.tokens import count_tokens
from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, is_synthesis

ADMIN = "admin-token-0123456789"
MONDAY = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
Messages = list[dict[str, Any]]
MINUTES_10 = timedelta(minutes=10)


class Dev:
    """The developer's agent: the real SDK, one history per thread."""

    def __init__(self, relay: RunningServer, upstream: FakeUpstream, clock: FakeClock) -> None:
        self.relay, self.upstream, self.clock = relay, upstream, clock
        self.sdk = openai.AsyncOpenAI(base_url=f"{relay.url}/v1", api_key="k", max_retries=0)
        self.history: dict[str, Messages] = {}

    async def say(self, thread: str, text: str, *, after: timedelta = timedelta(0)) -> str:
        """Send ``text`` in ``thread``; return the block the model got with it."""
        self.clock.advance(after)
        messages = self.history.setdefault(
            thread, [{"role": "system", "content": f"You help Dev with the {thread} project."}]
        )
        messages.append({"role": "user", "content": text})
        completion = await self.sdk.chat.completions.create(
            model="fake-model",
            messages=messages,  # type: ignore[arg-type]
            extra_headers={
                "X-Chronorelay-User": "dev",
                "X-Chronorelay-Thread": thread,
                "X-Chronorelay-Chat-Type": "dm",
            },
        )
        messages.append({"role": "assistant", "content": completion.choices[0].message.content})
        chats = [r for r in self.upstream.requests if not is_synthesis(r.body)]
        content = str(chats[-1].body["messages"][-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0] if OPEN in content else ""

    def compact(self, thread: str, keep: int) -> None:
        """Drop all but the system prompt and the last ``keep`` messages, as agents do."""
        messages = self.history[thread]
        self.history[thread] = [messages[0], *messages[-keep:]]

    async def close(self) -> None:
        await self.sdk.close()


async def admin(relay: RunningServer, path: str) -> Any:
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{relay.url}{path}", headers={"Authorization": f"Bearer {ADMIN}"}
        ) as response:
            assert response.status == 200, await response.text()
            return await response.json()


def cards_in(block: str) -> dict[str, str]:
    """The block's cards by tag, each with its text only."""
    found = {}
    for part in block.split("<card ")[1:]:
        tag = part.split('tag="', 1)[1].split('"', 1)[0]
        found[tag] = part.split(">", 1)[1].split("</card>", 1)[0].strip()
    return found


async def start(factory: RelayFactory, clock: FakeClock, mode: str) -> RunningServer:
    return await factory(
        fake_clock=clock,
        auth={"admin_token": ADMIN},
        server={"api_commands": True},
        continuity={"mode": mode, "synthesis_timeout_seconds": 0.5},
    )


BUDGETS = {"resume": 120, "recent_activity": 200, "living_memory": 100}


def within_budgets(cards: dict[str, str]) -> bool:
    """Spec 001 §6: each card within its budget, all of them within 420 tokens."""
    counts = {tag: count_tokens(text) for tag, text in cards.items()}
    return all(counts[t] <= BUDGETS[t] for t in counts) and sum(counts.values()) <= 420


def answer(summary: str, opened: list[str], decided: list[str], phase: str) -> dict[str, Any]:
    """A capture pass answered as a model answers it (spec 001 §5.4)."""
    return {
        "session_summary": summary,
        "open_questions": [{"question": q, "context": ""} for q in opened],
        "key_decisions": [{"decision": d, "rationale": ""} for d in decided],
        "work_phase": phase,
    }


@pytest.mark.parametrize("mode", ["deterministic", "full"])
async def test_three_weeks_two_projects(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, mode: str
) -> None:
    clock = FakeClock(MONDAY)
    dev = Dev(await start(relay_factory, clock, mode), fake_upstream, clock)

    def model_says(reply: dict[str, Any] | str) -> None:
        fake_upstream.synthesis_reply = reply if isinstance(reply, str) else json.dumps(reply)

    async def idle_capture() -> list[dict[str, Any]]:
        clock.advance(timedelta(minutes=16))
        report = await admin(dev.relay, "/admin/jobs/scheduler/run")
        return list(report["captures"])

    async def night(day: int) -> None:
        clock.set(datetime(2026, 3, day, 3, 30, tzinfo=UTC))
        await admin(dev.relay, "/admin/jobs/nightly/run")

    # -- Week 1, Monday 08:00: the billing service, about 35 minutes ----------------------
    model_says(
        answer(
            "Chose Postgres for the billing service; the migration is still to be written.",
            ["Write the migration"],
            ["Use Postgres for the billing service"],
            "drafting",
        )
    )
    await dev.say("billing", "Remember that I'm a backend developer.")
    await dev.say("billing", "Let's go with Postgres for the billing service.", after=MINUTES_10)
    await dev.say("billing", "I still need to write the migration.", after=MINUTES_10 * 1.5)
    await dev.say("billing", "ok, more later", after=MINUTES_10)
    assert [c["trigger"] for c in await idle_capture()] == ["idle_timeout"]

    # -- Monday 14:00: the website, in its own thread --------------------------------------
    model_says(
        answer(
            "Picked Hugo for the company website; hosting undecided.",
            ["Figure out the hosting"],
            ["Build the site with Hugo"],
            "research",
        )
    )
    clock.set(datetime(2026, 3, 2, 14, 0, tzinfo=UTC))
    cards = cards_in(await dev.say("website", "We decided to build the site with Hugo."))
    assert "resume" not in cards, "a new thread has no work of its own yet"
    # The morning's billing work is the other work of the same day, known already.
    assert "Postgres" in cards["recent_activity"]
    assert "on the API ('billing')" in cards["recent_activity"]
    assert "backend developer" in cards["living_memory"]
    await dev.say("website", "I still need to figure out the hosting.", after=MINUTES_10 * 2)
    await dev.say("website", "that's it for today", after=MINUTES_10 * 2)
    await idle_capture()
    await night(3)

    # -- Tuesday 09:00: back to billing after a night -------------------------------------
    clock.set(datetime(2026, 3, 3, 9, 0, tzinfo=UTC))
    cards = cards_in(await dev.say("billing", "let's continue"))
    assert "Postgres" in cards["resume"] and "migration" in cards["resume"]
    assert "Hugo" not in cards["resume"], "where the work stood is this thread's"
    assert "Hugo" in cards["recent_activity"] and "Postgres" not in cards["recent_activity"]
    # The other work is named by where it is, never by its thread key.
    assert "on the API ('website')" in cards["recent_activity"]
    assert "agent:main" not in cards["recent_activity"]
    assert within_budgets(cards)
    # The cards ride with the session's first message only.
    model_says(
        answer(
            "Switched the billing service to MySQL and wrote the migration.",
            [],
            ["Use MySQL for the billing service"],
            "drafting",
        )
    )
    for text in (
        "Actually we're using MySQL for the billing service, not Postgres.",
        "The migration is written.",
        "ok, done for today",
    ):
        assert "<card" not in await dev.say("billing", text, after=MINUTES_10)
    await idle_capture()

    # -- Wednesday: the website; the capture pass answers malformed JSON ------------------
    model_says('Sure! Here it is: {session_summary: "Hosting on Netlify", open_questions: [')
    clock.set(datetime(2026, 3, 4, 10, 0, tzinfo=UTC))
    cards = cards_in(await dev.say("website", "back to the site"))
    assert "Hugo" in cards["resume"] and "hosting" in cards["resume"]
    assert "MySQL" in cards["recent_activity"]
    for text in ("We decided to host it on Netlify.", "I figured out the hosting.", "ok bye"):
        await dev.say("website", text, after=MINUTES_10)
    [capture] = await idle_capture()
    if mode == "full":
        # No data lost: the session is captured deterministically, and says why.
        assert capture["mode"] == "deterministic"
        assert "invalid JSON" in capture["fallback_reason"]
    await night(5)

    # -- Week 2, Monday: billing after the weekend ----------------------------------------
    clock.set(datetime(2026, 3, 9, 9, 0, tzinfo=UTC))
    cards = cards_in(await dev.say("billing", "morning, where were we?"))
    resume = cards["resume"]
    assert "MySQL" in resume and "Decision: Use Postgres" not in resume
    assert "Open: write the migration" not in resume.replace("Write", "write"), "it is done"
    assert "Netlify" in cards["recent_activity"]
    assert within_budgets(cards)

    # The agent compacts its history: the message with the cards is gone, they come back.
    model_says(answer("Wrote the backup script.", [], ["Run the backups at 2am"], "drafting"))
    for text in ("Let's write the backup script.", "It runs at 2am.", "looks good"):
        await dev.say("billing", text, after=MINUTES_10 / 2)
    dev.compact("billing", 2)
    cards = cards_in(await dev.say("billing", "go on", after=MINUTES_10 / 2))
    assert "MySQL" in cards["resume"]

    # -- The relay restarts on the same store; the next capture pass times out ------------
    await dev.close()
    await dev.relay.stop()
    history = dev.history
    dev = Dev(await start(relay_factory, clock, mode), fake_upstream, clock)
    dev.history = history
    fake_upstream.synthesis_delay = 2  # over synthesis_timeout_seconds
    for text in ("We decided to keep 30 days of backups.", "Tested a restore.", "done"):
        await dev.say("billing", text, after=MINUTES_10)
    [capture] = await idle_capture()
    fake_upstream.synthesis_delay = 0
    if mode == "full":
        assert capture["mode"] == "deterministic" and "timed out" in capture["fallback_reason"]
    await night(10)

    # -- Week 3, after a week away: both projects, in their own threads -------------------
    await night(17)
    clock.set(datetime(2026, 3, 17, 9, 0, tzinfo=UTC))
    cards = cards_in(await dev.say("website", "hi, back from vacation"))
    resume = cards["resume"]
    assert "Netlify" in resume and "Hugo" in resume
    assert "Open: figure out the hosting" not in resume.replace("Figure", "figure"), resume
    assert "MySQL" not in resume and "backups" in cards["recent_activity"]
    assert within_budgets(cards)
    clock.set(datetime(2026, 3, 17, 15, 0, tzinfo=UTC))
    cards = cards_in(await dev.say("billing", "hi, back from vacation"))
    resume = cards["resume"]
    assert "MySQL" in resume or "backups" in resume
    assert "Decision: Use Postgres" not in resume and "Netlify" not in resume
    assert "backend developer" in cards["living_memory"]
    assert within_budgets(cards)
    await dev.close()
