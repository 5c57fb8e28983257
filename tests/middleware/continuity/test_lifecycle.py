"""The continuity log's lifecycle with a fake clock and a real store: captures, TTLs,
promotion boundaries, the nightly job's idempotence and timing, tier 2 and tier 3."""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pytest

from middleware.cards.content import CardBudget
from middleware.clock.source import FakeClock
from middleware.commands import match_command
from middleware.continuity.model import CardSources, ContinuityEntry, WorkContext
from middleware.continuity.service import NIGHTLY, ContinuityService, ContinuitySettings
from middleware.continuity.settings import CardsConfig, ContinuityConfig, MemoryConfig
from middleware.continuity.stage import render_boot_cards
from middleware.store import InboundRecord, SqliteStore
from middleware.types import JSON, Reply, Turn

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


@dataclass
class Thread:
    """One user's thread, talking straight to the store as the pipeline would."""

    store: SqliteStore
    clock: FakeClock
    key: str
    user: str = "api:ana"
    chat_type: Literal["dm", "group"] = "dm"
    session_id: str | None = None
    said: list[str] = field(default_factory=list)

    async def session(self, *texts: str) -> str:
        """A new session saying ``texts`` one minute apart; returns its id."""
        self.session_id = None
        for text in texts:
            await self.say(text)
            self.clock.advance(timedelta(minutes=1))
        assert self.session_id is not None
        return self.session_id

    async def say(self, text: str) -> None:
        result = await self.store.record_inbound(
            InboundRecord(
                user_key=self.user,
                channel="api",
                platform_user_id=self.user.split(":", 1)[1],
                display_name=None,
                thread_key=self.key,
                chat_type=self.chat_type,
                text=text,
                received_at=self.clock.now(),
            )
        )
        if self.session_id is None:
            self.session_id = f"s_{uuid.uuid4().hex[:12]}"
            await self.store.start_session(
                self.session_id, self.key, self.user, self.clock.now(), result.message_id
            )
        if match_command(text) is not None:
            # The recording stage marks what the commands stage answered.
            await self.store.mark_command(self.key, result.message_id)
        await self.store.record_reply(self.key, "noted", self.clock.now())


def service_for(store: SqliteStore, clock: FakeClock, **continuity: Any) -> ContinuityService:
    settings = ContinuitySettings(
        ContinuityConfig(mode="deterministic", **continuity), CardsConfig(), MemoryConfig()
    )
    return ContinuityService(store, settings, clock, None, model="m")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def entries_of(entries: list[ContinuityEntry], kind: str) -> list[ContinuityEntry]:
    return [e for e in entries if e.entry_type == kind]


async def context_of(store: SqliteStore, thread: Thread) -> str:
    context = await store.thread_work_context(thread.key, now=START)
    return context.work_context_id


async def test_each_entry_type_decays_at_its_ttl(store: SqliteStore, clock: FakeClock) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session(
        "Let's draft the opening brief.",
        "We decided to go with the price impact theory.",
        "I still need to figure out the expert schedule.",
    )
    outcome = await service.capture_thread(thread.key)
    assert outcome is not None and outcome.entries >= 4
    captured_at = clock.now()
    wc = await context_of(store, thread)
    live = await store.continuity_entries(wc, now=captured_at)
    kinds = {e.entry_type for e in live}
    assert {"session_summary_ref", "work_phase_change", "open_question", "key_decision"} <= kinds
    for kind, days in (
        ("session_summary_ref", 30),
        ("work_phase_change", 30),
        ("open_question", 60),
        ("key_decision", 60),
    ):
        just_before = await store.continuity_entries(
            wc, now=captured_at + timedelta(days=days) - timedelta(microseconds=1)
        )
        at_ttl = await store.continuity_entries(wc, now=captured_at + timedelta(days=days))
        assert entries_of(just_before, kind), kind
        assert not entries_of(at_ttl, kind), kind
    # The nightly job deletes what decayed and rebuilds the view without it.
    clock.set(captured_at + timedelta(days=31))
    report = await service.run_nightly([thread.user])
    assert report.decayed_contexts == 1
    view = await store.constellation(wc)
    assert view is not None and view["session_history"] == []
    assert view["open_questions"]  # 60 days: still there


async def test_open_question_becomes_an_obligation_after_fourteen_days(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session("I still need to figure out the expert schedule.", "ok", "thanks")
    await service.capture_thread(thread.key)
    captured_at = clock.now()
    clock.set(captured_at + timedelta(days=14) - timedelta(seconds=1))
    assert (await service.run_nightly([thread.user])).obligations == 0
    clock.set(captured_at + timedelta(days=14))
    assert (await service.run_nightly([thread.user])).obligations == 1
    assert (await service.run_nightly([thread.user])).obligations == 0  # idempotent
    view = await store.constellation(await context_of(store, thread))
    assert view is not None and view["open_questions"][0]["obligation"] is True
    cards, _ = render_boot_cards(
        service,
        turn_in(thread, clock),
        await store.card_sources(thread.key, thread.user, now=clock.now()),
        session_id="new",
        boot=True,
    )
    assert any("Still open" in card and "expert schedule" in card for card in cards)


async def test_decision_referenced_in_three_sessions_becomes_a_standing_directive(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session("We decided to cite the circuit cases first.", "ok", "next")
    await service.capture_thread(thread.key)
    clock.advance(timedelta(days=1))
    await thread.session("Citing the circuit cases first, as decided.", "more", "fine")
    await service.capture_thread(thread.key)
    assert (await service.run_nightly([thread.user])).directives == 0
    clock.advance(timedelta(days=1))
    await thread.session("Again the circuit cases first in this section.", "a", "b")
    await service.capture_thread(thread.key)
    assert (await service.run_nightly([thread.user])).directives == 1
    assert (await service.run_nightly([thread.user])).directives == 0
    facts = await store.memory_facts(thread.user)
    assert [f.kind for f in facts] == ["directive"]
    assert "circuit cases first" in facts[0].text and facts[0].source == "promoted"


async def test_a_decision_the_user_already_stated_is_not_promoted_twice(
    store: SqliteStore, clock: FakeClock
) -> None:
    # Before an automatic commit, what a manual one already holds is skipped (spec 002
    # A4): promotion leaves the user's own fact as it is theirs, and adds no copy.
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    said = (
        "We decided to cite the circuit cases first.",
        "Citing the circuit cases first, as decided.",
        "Again the circuit cases first in this section.",
    )
    for text in said:
        await thread.session(text, "ok", "next")
        await service.capture_thread(thread.key)
        clock.advance(timedelta(days=1))
    [decision] = [
        entry.content["decision"]
        for entry in await store.all_live_entries(now=clock.now())
        if entry.entry_type == "key_decision"
    ]
    own = await store.add_memory_fact(
        thread.user, "directive", decision.upper(), source="user", at=clock.now()
    )
    assert own is not None
    assert (await service.run_nightly([thread.user])).directives == 1
    [fact] = await store.memory_facts(thread.user)
    assert (fact.fact_id, fact.source, fact.source_entry_id) == (own.fact_id, "user", None)


async def test_a_group_decision_stands_in_the_groups_card_not_in_a_members_memory(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    ana = Thread(store, clock, "agent:main:api:g1", chat_type="group")
    bob = Thread(store, clock, "agent:main:api:g1", user="api:bob", chat_type="group")
    said = (
        "We decided to cite the circuit cases first.",
        "Citing the circuit cases first, as decided.",
        "Again the circuit cases first in this section.",
    )
    for text in said:
        # Ana opens each session and speaks last; the decision is Bob's words.
        ana.session_id = None
        await ana.say("morning all")
        bob.session_id = ana.session_id
        await bob.say(text)
        await ana.say("ok")
        await service.capture_thread(ana.key)
        clock.advance(timedelta(days=1))
    assert (await service.run_nightly([ana.user, bob.user])).directives == 1
    assert (await service.run_nightly([ana.user, bob.user])).directives == 0
    assert await store.memory_facts(ana.user) == []
    assert await store.memory_facts(bob.user) == []
    cards, _ = render_boot_cards(
        service,
        turn_in(ana, clock),
        await store.card_sources(ana.key, ana.user, now=clock.now()),
        session_id="new",
        boot=True,
    )
    [resume] = cards
    assert "Standing decision: " in resume and "circuit cases first" in resume


async def test_nightly_runs_once_in_each_persons_own_night(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    tokyo = Thread(store, clock, "agent:main:api:tk", user="api:kenji")
    await tokyo.session("hello")
    await store.set_user_timezone("api:kenji", "Asia/Tokyo")
    # Someone new waits for their next night: 19:00 in Tokyo, nothing.
    clock.set(datetime(2026, 3, 3, 10, 0, tzinfo=UTC))
    assert (await service.tick()).nightly is None
    # 02:59 in Tokyo: not yet.
    clock.set(datetime(2026, 3, 3, 17, 59, tzinfo=UTC))
    assert (await service.tick()).nightly is None
    clock.set(datetime(2026, 3, 3, 18, 0, tzinfo=UTC))
    assert (await service.tick()).nightly is not None
    clock.advance(timedelta(hours=5))
    assert (await service.tick()).nightly is None
    clock.advance(timedelta(hours=19))
    assert (await service.tick()).nightly is not None


async def test_each_persons_log_is_promoted_in_their_own_night_not_anothers(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    ana = Thread(store, clock, "agent:main:api:ny")
    kenji = Thread(store, clock, "agent:main:api:tk", user="api:kenji")
    await ana.session("I still need to figure out the expert schedule.", "ok", "thanks")
    await kenji.session("hello", "there", "again")
    await store.set_user_timezone(ana.user, "America/New_York")
    await store.set_user_timezone(kenji.user, "Asia/Tokyo")
    await service.capture_thread(ana.key)
    asked_at = clock.now()
    await service.tick()  # both are new: their first nights are the next ones
    clock.set(datetime(2026, 3, 2, 11, 0, tzinfo=UTC))  # ticks on the hour from here
    promoted_at: list[datetime] = []
    while clock.now() < asked_at + timedelta(days=16):
        clock.advance(timedelta(hours=1))
        nightly = (await service.tick()).nightly
        if nightly is not None and nightly.obligations:
            promoted_at.append(clock.now())
    # 14 days old from about 10:05 UTC on 16 Mar. Kenji's night (03:00 in Tokyo, 18:00 UTC) comes
    # first and leaves Ana's log alone; hers, 03:00 in New York (EDT), promotes it.
    assert asked_at + timedelta(days=14) < datetime(2026, 3, 16, 18, 0, tzinfo=UTC)
    assert promoted_at == [datetime(2026, 3, 17, 7, 0, tzinfo=UTC)]


def stored_entries(db_path: Path, work_context_id: str) -> int:
    """Rows in the log file for the context, expired or not."""
    with sqlite3.connect(db_path) as conn:
        query = "SELECT COUNT(*) FROM continuity_entries WHERE work_context_id = ?"
        count: int = conn.execute(query, (work_context_id,)).fetchone()[0]
    return count


async def test_daily_housekeeping_decays_the_log_of_people_no_night_visits(
    store: SqliteStore, clock: FakeClock, db_path: Path
) -> None:
    service = service_for(store, clock)
    olga = Thread(store, clock, "agent:main:api:olga", user="api:olga")
    await olga.session(
        "We decided to go with the price impact theory.",
        "I still need to figure out the expert schedule.",
    )
    await service.capture_thread(olga.key)
    olgas = await context_of(store, olga)
    ana = Thread(store, clock, "agent:main:api:ana")
    # Olga's first night is her next one; the relay's housekeeping runs (nothing expired).
    assert (await service.tick()).housekeeping == 0
    housekept_at: list[datetime] = []
    last_said = clock.now()
    # Olga never comes back; Ana keeps talking. Ticks every 3 hours for 70 days.
    while clock.now() < START + timedelta(days=70):
        clock.advance(timedelta(hours=3))
        if clock.now() - last_said > timedelta(days=10):
            await ana.session("still here")
            last_said = clock.now()
        if (await service.tick()).housekeeping is not None:
            housekept_at.append(clock.now())
    # Olga's 60-day entries expired on 1 May; her last night was that day (on 2 May she
    # was out of the 60-day active window), so only housekeeping can remove them.
    assert await store.job_mark(NIGHTLY, olga.user) == "2026-05-01"
    assert await store.continuity_entries(olgas, now=clock.now()) == []
    assert stored_entries(db_path, olgas) == 0
    view = await store.constellation(olgas)
    assert view is not None and not view["open_questions"]
    # Once a day at 03:00 UTC (the relay's night), at the first tick after it.
    assert len({at.date() for at in housekept_at}) == len(housekept_at) == 70
    assert {at.hour for at in housekept_at} == {4}
    # A restart, or a second process on the same file, does not run it again that night.
    assert (await service_for(store, clock).tick()).housekeeping is None


async def test_housekeeping_removes_what_expired_by_its_next_pass(
    store: SqliteStore, clock: FakeClock, db_path: Path
) -> None:
    """Spec 001 §3.3/§4.3: an entry decays at its ``decay_at``, nightly. For someone no
    night visits, the relay's daily pass is that night: their entries are gone within a
    day of expiring, not kept for a grace period on top."""
    service = service_for(store, clock)
    olga = Thread(store, clock, "agent:main:api:olga", user="api:olga")
    await olga.session("I still need to figure out the expert schedule.", "ok", "thanks")
    await service.capture_thread(olga.key)
    olgas = await context_of(store, olga)
    expires = max(
        entry.decay_at for entry in await store.continuity_entries(olgas, now=clock.now())
    )
    await service.tick()
    clock.set(expires - timedelta(hours=12))
    gone_at = None
    while gone_at is None and clock.now() < expires + timedelta(days=4):
        clock.advance(timedelta(hours=1))
        await service.tick()
        if stored_entries(db_path, olgas) == 0:
            gone_at = clock.now()
    # Her night of that day ran before the expiry, and no later one comes (she is out of
    # the active window): only housekeeping can remove them.
    assert await store.job_mark(NIGHTLY, olga.user) == expires.date().isoformat()
    assert gone_at is not None and gone_at - expires <= timedelta(days=1), (expires, gone_at)


async def test_recent_activity_leaves_out_the_current_context(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    brief = Thread(store, clock, "agent:main:api:brief")
    album = Thread(store, clock, "agent:main:api:album")
    await brief.session("Let's draft the reply brief.", "section one", "section two")
    await service.capture_thread(brief.key)
    await album.session("Mixing the drums on the album.", "snare", "kick")
    await service.capture_thread(album.key)
    await service.run_nightly(["api:ana"])
    clock.advance(timedelta(days=1))
    sources = await store.card_sources(brief.key, "api:ana", now=clock.now())
    cards, _ = render_boot_cards(service, turn_in(brief, clock), sources, session_id="n", boot=True)
    activity = [c for c in cards if 'tag="recent_activity"' in c]
    assert len(activity) == 1
    assert "drums" in activity[0] and "reply brief" not in activity[0]
    resume = [c for c in cards if 'tag="resume"' in c]
    assert resume and "reply brief" in resume[0]


async def test_living_memory_survives_budget_pressure(store: SqliteStore, clock: FakeClock) -> None:
    settings = ContinuitySettings(
        ContinuityConfig(mode="deterministic"),
        CardsConfig(max_tokens=110, living_memory_max_tokens=100),
        MemoryConfig(),
    )
    service = ContinuityService(store, settings, clock, None, model="m")
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session(*(f"We decided to go with option {n} for part {n}." for n in range(8)))
    await service.capture_thread(thread.key)
    await store.add_memory_fact(thread.user, "name", "Name: Ana", source="user", at=clock.now())
    clock.advance(timedelta(days=2))
    sources = await store.card_sources(thread.key, thread.user, now=clock.now())
    cards, _ = render_boot_cards(
        service, turn_in(thread, clock), sources, session_id="n", boot=True
    )
    assert any('tag="living_memory"' in c and "Ana" in c for c in cards)
    assert CardBudget().living_memory == 100


def turn_in(thread: Thread, clock: FakeClock) -> Turn:
    turn = Turn(
        channel="api",
        thread_id=thread.key,
        user_id="ana",
        text="hi",
        received_at=clock.now(),
        body={"messages": []},
    )
    turn.thread_key, turn.user_key = thread.key, thread.user
    turn.chat_type = thread.chat_type
    return turn


async def test_cross_conversation_update_is_delivered_once_then_decays_after_seven_days(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    telegram = Thread(store, clock, "agent:main:telegram:dm:1")
    discord = Thread(store, clock, "agent:main:discord:group:legal")
    await telegram.session("hello")
    await discord.session("hello")
    await store.use_work_context(telegram.key, telegram.user, "Brief", now=clock.now())
    context, _ = await store.use_work_context(discord.key, telegram.user, "brief", now=clock.now())
    await discord.session("Let's draft the reply brief.", "section one", "section two")
    await service.capture_thread(discord.key)
    live = await store.continuity_entries(context.work_context_id, now=clock.now())
    updates = entries_of(live, "cross_conversation_update")
    assert [u.content["for_thread_key"] for u in updates] == [telegram.key]
    assert updates[0].decay_at == clock.now() + timedelta(days=30)  # undelivered
    await service.deliver_updates(context.work_context_id, [updates[0].entry_id])
    delivered_at = clock.now()
    view = await store.constellation(context.work_context_id)
    assert view is not None and view["cross_conversation_updates"] == []
    week = delivered_at + timedelta(days=7)
    just_before = await store.continuity_entries(
        context.work_context_id, now=week - timedelta(seconds=1)
    )
    assert entries_of(just_before, "cross_conversation_update")
    at_ttl = await store.continuity_entries(context.work_context_id, now=week)
    assert not entries_of(at_ttl, "cross_conversation_update")


async def test_unthreaded_api_turns_share_a_bucket_capped_at_twenty(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:ana")
    await thread.say("hello")
    bucket = await store.assign_unlinked_context(thread.key, thread.user, now=clock.now())
    for day in range(12):
        clock.advance(timedelta(days=1))
        await thread.session(
            f"We decided to use plan {day}.", f"I still need to figure out step {day}.", "ok"
        )
        await service.capture_thread(thread.key)
    live = await store.continuity_entries(bucket.work_context_id, now=clock.now())
    assert len(live) == 20
    decisions = {e.content.get("decision") for e in live}
    assert "use plan 11" in decisions  # the newest kept
    assert "use plan 0" not in decisions  # the oldest evicted first


def test_an_update_trimmed_from_the_card_is_not_marked_delivered(clock: FakeClock) -> None:
    """Tier 1 trims updates last, but several long ones do not all fit in 120 tokens: the
    ones cut are shown at the next boot, not marked delivered unseen."""
    thread = "agent:main:telegram:dm:1"
    now = clock.now()
    updates = [
        {
            "entry_id": f"u{n}",
            "captured_at": (now - timedelta(hours=n + 1)).isoformat(),
            "source_session_id": f"s{n}",
            "capture_mode": "deterministic",
            "summary": f"update {n}: " + "reworked the damages model and its appendix " * 3,
            "for_thread_key": thread,
            "source_place": "Discord (group)",
        }
        for n in range(4)
    ]
    view = {
        "work_context_name": "Brief",
        "active_work_phase": "drafting",
        "session_history": [],
        "open_questions": [],
        "key_decisions": [],
        "cross_conversation_updates": updates,
    }
    context = WorkContext("wc:brief", "Brief", "telegram:1", True, now, now)
    service = service_for(None, clock)  # type: ignore[arg-type]  # rendering reads no store
    turn = Turn(
        channel="telegram",
        thread_id="1",
        user_id="1",
        text="hi",
        received_at=now,
        body={"messages": []},
    )
    turn.thread_key, turn.user_key = thread, "telegram:1"
    cards, shown = render_boot_cards(
        service, turn, CardSources(context, view), session_id="s-now", boot=True
    )
    [resume] = cards
    assert shown and len(shown) < len(updates)
    for update in updates:
        assert (update["summary"][:8] in resume) == (update["entry_id"] in shown)


async def test_a_correction_supersedes_the_item_it_corrects_and_keeps_when_it_was_said(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session("We decided the call is on Wednesday.", "ok", "thanks")
    await service.capture_thread(thread.key)
    clock.advance(timedelta(days=1))
    said = clock.now()
    await thread.session("No wait, the call is on Thursday.", "Actually, the weather is fine.")
    clock.advance(timedelta(hours=3))
    await service.capture_thread(thread.key)
    view = await store.constellation(await context_of(store, thread))
    assert view is not None
    assert [d["decision"] for d in view["key_decisions"]] == ["the call is on Thursday"]
    assert view["key_decisions"][0]["said_at"] == said.isoformat()
    # In one session too: the earlier version never reaches the card.
    other = Thread(store, clock, "agent:main:api:t2")
    await other.session("We decided to ship on Friday.", "Actually we ship on Monday.", "ok")
    await service.capture_thread(other.key)
    view = await store.constellation(await context_of(store, other))
    assert view is not None
    assert [d["decision"] for d in view["key_decisions"]] == ["we ship on Monday"]


class ScriptedModel:
    """An upstream that answers each capture pass with the next scripted JSON."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)

    async def complete(self, body: JSON) -> Reply:
        return Reply(text=json.dumps(self.answers.pop(0)))

    async def ready(self) -> bool:
        return True

    async def close(self) -> None:
        return None


async def test_a_correction_the_llm_pass_restates_supersedes_the_logged_decision(
    store: SqliteStore, clock: FakeClock
) -> None:
    """The pass reads one session: told "actually we're using MySQL" it writes "Use MySQL",
    and the Postgres decision from last week must not stay beside it on the card."""
    model = ScriptedModel(
        {
            "session_summary": "Chose Postgres for billing.",
            "open_questions": [],
            "key_decisions": [{"decision": "Use Postgres for the billing service"}],
            "work_phase": "drafting",
        },
        {
            "session_summary": "Switched billing to MySQL.",
            "open_questions": [],
            "key_decisions": [{"decision": "Use MySQL for the billing service"}],
            "work_phase": "drafting",
        },
    )
    settings = ContinuitySettings(ContinuityConfig(), CardsConfig(), MemoryConfig())
    service = ContinuityService(store, settings, clock, model, model="m")
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session("Let's go with Postgres for the billing service.", "ok", "thanks")
    await service.capture_thread(thread.key)
    clock.advance(timedelta(days=1))
    await thread.session("Actually we're using MySQL for the billing service.", "ok", "bye")
    clock.advance(timedelta(hours=3))
    await service.capture_thread(thread.key)
    view = await store.constellation(await context_of(store, thread))
    assert view is not None
    assert [d["decision"] for d in view["key_decisions"]] == ["Use MySQL for the billing service"]


async def test_an_llm_summary_is_cut_to_300_characters_in_a_cross_conversation_update(
    store: SqliteStore, clock: FakeClock
) -> None:
    """Spec 001 §4.1: an update's summary is at most 300 characters, however long the
    narrative the LLM pass wrote (up to 2,000 characters for the session itself)."""
    narrative = "Drafted the reply brief section by section. " * 20
    model = ScriptedModel(
        {
            "session_summary": narrative,
            "open_questions": [],
            "key_decisions": [],
            "work_phase": "drafting",
        }
    )
    settings = ContinuitySettings(ContinuityConfig(), CardsConfig(), MemoryConfig())
    service = ContinuityService(store, settings, clock, model, model="m")
    telegram = Thread(store, clock, "agent:main:telegram:dm:1")
    discord = Thread(store, clock, "agent:main:discord:group:legal")
    await telegram.session("hello")
    await discord.session("hello")
    await store.use_work_context(telegram.key, telegram.user, "Brief", now=clock.now())
    context, _ = await store.use_work_context(discord.key, telegram.user, "brief", now=clock.now())
    await discord.session("Let's draft the reply brief.", "section one", "section two")
    await service.capture_thread(discord.key)

    live = await store.continuity_entries(context.work_context_id, now=clock.now())
    [update] = entries_of(live, "cross_conversation_update")
    summary = update.content["summary"]
    assert 290 < len(summary) <= 300 and summary.endswith("…")
    assert summary.startswith("Drafted the reply brief section by section.")


async def test_a_session_captured_twice_is_summed_up_whole(
    store: SqliteStore, clock: FakeClock
) -> None:
    # Captured before compaction, then at idle: the second summary replaces the first,
    # so it keeps what the first said was decided and left open.
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    session_id = await thread.session(
        "Let's plan the billing migration.",
        "We decided the call is on Wednesday.",
        "I still need to figure out the cron jobs.",
    )
    first = await service.capture_thread(thread.key)
    assert first is not None and first.summary is not None
    await thread.say("Moving on to the export format now.")
    await thread.say("Next we write the CSV exporter tests.")
    await thread.say("No wait, the call is on Thursday.")
    clock.advance(timedelta(minutes=20))
    second = await service.capture_thread(thread.key)
    assert second is not None and second.summary is not None
    session = await store.get_session(session_id)
    assert session is not None and session.summary == second.summary
    assert "cron jobs" in second.summary, second.summary
    assert "the call is on Thursday" in second.summary, second.summary
    view = await store.constellation(await context_of(store, thread))
    assert view is not None
    # The correction still supersedes what the first capture kept; nothing is doubled.
    assert [d["decision"] for d in view["key_decisions"]] == ["the call is on Thursday"]
    assert [q["question"] for q in view["open_questions"]] == ["figure out the cron jobs"]


async def test_a_question_decided_in_the_same_session_is_not_left_open(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session(
        "Should we use the new invoice template?",
        "We decided to use the new invoice template.",
        "I'm not sure whether we should ship Friday.",
    )
    await service.capture_thread(thread.key)
    view = await store.constellation(await context_of(store, thread))
    assert view is not None
    assert [q["question"] for q in view["open_questions"]] == ["whether we should ship Friday"]
    assert [d["decision"] for d in view["key_decisions"]] == ["use the new invoice template"]
    summary = view["session_history"][0]["summary"]
    # The deterministic summary says what the session was on, decided and left open.
    assert "invoice template" in summary and "Decided:" in summary and "Open:" in summary


async def test_commands_do_not_make_a_session_dirty(store: SqliteStore, clock: FakeClock) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session("Where were we", "/time", "/actions", "/tz")
    clock.advance(timedelta(minutes=30))
    assert (await service.tick()).captures == ()
    view = await store.constellation(await context_of(store, thread))
    assert view is None or view["session_history"] == []


async def test_a_sessions_turn_counts_leave_out_commands(
    store: SqliteStore, clock: FakeClock
) -> None:
    # Counted, "/recap" and "/context" made this session look dirty (3 turns) to every
    # scheduler tick, which re-read it and found one message, until the session ended.
    thread = Thread(store, clock, "agent:main:api:t1")
    session_id = await thread.session("Where were we", "/recap", "/context")
    session = await store.get_session(session_id)
    assert session is not None
    assert (session.user_turns, session.dirty_turns) == (1, 1)
    assert [s.session_id for s in await store.capture_candidates()] == [session_id]
    captured = (await store.session_messages(session_id, 10))[-1].id
    await store.record_capture(
        session_id,
        through_message_id=captured,
        at=clock.now(),
        summary=None,
        mode="deterministic",
        entries=(),
        unlinked_cap=20,
    )
    await thread.say("/time")
    # Only a command since the capture: the session is no candidate to re-read.
    assert await store.capture_candidates() == []


async def test_the_nightly_sweep_captures_a_short_session_that_decided_something(
    store: SqliteStore, clock: FakeClock
) -> None:
    # Spec 001 §5.2: a candidate item makes a session dirty, however few its turns; a
    # glance next to it stays uncaptured.
    service = service_for(store, clock)
    docs = Thread(store, clock, "agent:main:api:docs")
    await docs.session("Let's go with MkDocs", "I still need to write the API reference page")
    glance = Thread(store, clock, "agent:main:api:chat")
    await glance.session("hi", "thanks")
    report = await service.run_nightly(["api:ana"])
    assert report.captured == 1
    view = await store.constellation(await context_of(store, docs))
    assert view is not None
    assert [d["decision"] for d in view["key_decisions"]] == ["go with MkDocs"]
    assert [q["question"] for q in view["open_questions"]] == ["write the API reference page"]
    assert await store.constellation(await context_of(store, glance)) is None


async def test_a_glance_is_captured_once_its_user_goes_on_to_decide_something(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = service_for(store, clock)
    thread = Thread(store, clock, "agent:main:api:t1")
    await thread.session("hi")
    clock.advance(timedelta(minutes=20))
    assert (await service.tick()).captures == ()
    assert (await service.tick()).captures == ()
    await thread.say("We decided to ship the beta on Friday.")
    clock.advance(timedelta(minutes=20))
    assert [c.trigger for c in (await service.tick()).captures] == ["idle_timeout"]
