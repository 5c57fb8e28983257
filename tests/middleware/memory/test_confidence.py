"""Living memory's confidence (spec 003 §8) and the compactor's rule (§5.5), with a fake
clock moving through months and a real store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite
import pytest

from middleware.clock.source import FakeClock
from middleware.continuity.model import MemoryFact, MemoryKind, MemorySource
from middleware.continuity.nightly import housekeep
from middleware.continuity.service import ContinuityService, ContinuitySettings
from middleware.continuity.settings import CardsConfig, ContinuityConfig, MemoryConfig
from middleware.memory.confidence import confidence_now, is_forgettable, is_hedged, is_kept
from middleware.memory.learn import learn_from_message
from middleware.store import SqliteStore
from middleware.store.migrations import to_db
from tests.middleware.test_store import migrate_to

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
ANA = "telegram:1"
DAY = timedelta(days=1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def nightly(store: SqliteStore, clock: FakeClock) -> ContinuityService:
    settings = ContinuitySettings(
        ContinuityConfig(mode="deterministic"), CardsConfig(), MemoryConfig()
    )
    return ContinuityService(store, settings, clock, None, model="m")


async def say(store: SqliteStore, clock: FakeClock, text: str) -> None:
    await learn_from_message(store, MemoryConfig(), ANA, text, clock.now())


async def only_fact(store: SqliteStore) -> MemoryFact:
    [fact] = await store.memory_facts(ANA)
    return fact


async def add(
    store: SqliteStore, kind: MemoryKind, text: str, source: MemorySource, at: datetime
) -> MemoryFact:
    fact = await store.add_memory_fact(ANA, kind, text, source=source, at=at)
    assert fact is not None
    return fact


@pytest.mark.parametrize(
    ("kind", "source", "confidence"),
    [
        ("fact", "user", 0.95),
        ("preference", "user", 0.95),
        ("correction", "user", 1.0),
        ("directive", "promoted", 0.6),
        ("fact", "admin", 1.0),
    ],
)
async def test_a_fact_starts_as_sure_as_its_source(
    store: SqliteStore, kind: MemoryKind, source: MemorySource, confidence: float
) -> None:
    fact = await add(store, kind, "Works at Acme", source, START)
    assert (fact.confidence, fact.last_mentioned_at) == (confidence, START)
    assert await only_fact(store) == fact


async def test_what_the_user_says_gets_its_sources_confidence(
    store: SqliteStore, clock: FakeClock
) -> None:
    await say(store, clock, "I live in Berlin. Actually, my office is on the 5th floor.")
    facts = {f.text: f.confidence for f in await store.memory_facts(ANA)}
    assert facts == {"Lives in Berlin": 0.95, "Their office is on the 5th floor": 1.0}


async def test_each_repeat_mention_adds_five_hundredths_up_to_one(
    store: SqliteStore, clock: FakeClock
) -> None:
    inferred = await add(store, "directive", "Cite the circuit cases first", "promoted", START)
    for expected in (0.65, 0.7, 0.75):
        clock.advance(DAY)
        assert (
            await store.add_memory_fact(
                ANA, "directive", inferred.text, source="promoted", at=clock.now()
            )
            is None
        )
        assert (await only_fact(store)).confidence == expected
    await store.delete_memory_fact(ANA, inferred.fact_id)

    await say(store, clock, "I live in Berlin.")
    assert (await only_fact(store)).confidence == 0.95
    clock.advance(40 * DAY)
    await say(store, clock, "Remember that I live in Berlin!")
    fact = await only_fact(store)
    assert (fact.confidence, fact.last_mentioned_at) == (1.0, clock.now())
    assert fact.created_at == START + 3 * DAY  # the same fact, said again
    clock.advance(DAY)
    await say(store, clock, "i live in   berlin")
    assert (await only_fact(store)).confidence == 1.0  # capped


async def test_what_the_user_states_of_an_inferred_fact_makes_it_theirs(
    store: SqliteStore, clock: FakeClock
) -> None:
    # A manual source supersedes an automatic one (spec 002 A4): once the user says what
    # the nightly job only inferred, it is theirs, a standing instruction that no longer
    # ages (and is listed as said, not inferred); inferring it again takes nothing away.
    inferred = await add(store, "directive", "Cite the circuit cases first", "promoted", START)
    clock.advance(DAY)
    assert (
        await store.add_memory_fact(ANA, "directive", inferred.text, source="user", at=clock.now())
        is None
    )
    stated = await only_fact(store)
    assert (stated.fact_id, stated.source, stated.confidence) == (inferred.fact_id, "user", 0.95)
    clock.advance(DAY)
    await store.add_memory_fact(ANA, "directive", inferred.text, source="promoted", at=clock.now())
    assert (await only_fact(store)).source == "user"
    assert confidence_now(await only_fact(store), clock.now() + 400 * DAY) == 1.0


async def test_a_name_said_again_is_kept_and_surer(store: SqliteStore, clock: FakeClock) -> None:
    await say(store, clock, "Call me Ana.")
    first = await only_fact(store)
    clock.advance(DAY)
    await say(store, clock, "My name is Ana.")
    again = await only_fact(store)
    assert (again.fact_id, again.confidence, again.last_mentioned_at) == (
        first.fact_id,
        1.0,
        clock.now(),
    )


async def test_an_unmentioned_fact_loses_five_hundredths_a_month_down_to_a_fifth(
    store: SqliteStore, clock: FakeClock
) -> None:
    await say(store, clock, "I live in Berlin.")
    fact = await only_fact(store)
    expected = {0: 0.95, 29: 0.95, 30: 0.9, 89: 0.85, 90: 0.8, 240: 0.55, 270: 0.5, 300: 0.45}
    for days, confidence in expected.items():
        assert confidence_now(fact, START + days * DAY) == confidence, days
    # Less sure than a fresh inference: eight months unmentioned.
    assert not is_hedged(fact, START + 239 * DAY) and is_hedged(fact, START + 240 * DAY)
    assert confidence_now(fact, START + 5 * 365 * DAY) == 0.2  # the floor

    # Mentioned again after ten months: surer than it was, and fresh.
    clock.advance(300 * DAY)
    await say(store, clock, "I live in Berlin.")
    fact = await only_fact(store)
    assert confidence_now(fact, clock.now()) == 1.0
    assert confidence_now(fact, clock.now() + 30 * DAY) == 0.95


async def test_corrections_and_what_the_user_asked_of_us_do_not_age(
    store: SqliteStore, clock: FakeClock
) -> None:
    await say(store, clock, "Call me Ana. I prefer short answers. Never use emoji.")
    await say(store, clock, "Actually, my office is on the 5th floor.")
    year_on = START + 400 * DAY
    assert {f.kind: confidence_now(f, year_on) for f in await store.memory_facts(ANA)} == {
        "name": 0.95,
        "preference": 0.95,
        "directive": 0.95,
        "correction": 1.0,
    }


async def test_a_correction_resets_an_aged_fact_to_one(
    store: SqliteStore, clock: FakeClock
) -> None:
    await say(store, clock, "Remember that my office is on the 5th floor.")
    clock.advance(200 * DAY)
    assert confidence_now(await only_fact(store), clock.now()) == 0.65
    await say(store, clock, "Actually, my office is on the 5th floor.")
    assert confidence_now(await only_fact(store), clock.now()) == 1.0


async def test_the_nightly_job_forgets_what_aged_below_three_tenths_and_only_that(
    store: SqliteStore, clock: FakeClock
) -> None:
    service = nightly(store, clock)
    stated = await add(store, "fact", "Lives in Berlin", "user", START)  # 0.95
    inferred = await add(store, "directive", "Cite the circuit cases first", "promoted", START)
    correction = await add(store, "correction", "Their office is on the 5th", "user", START)
    name = await add(store, "name", "Name: Ana", "user", START)

    clock.set(START + 209 * DAY)  # inferred: 0.6 - 6 x 0.05 = 0.30, not yet below
    assert (await service.run_nightly([ANA])).forgotten_facts == 0
    clock.set(START + 210 * DAY)  # 0.25
    assert (await service.run_nightly([ANA])).forgotten_facts == 1
    assert (await service.run_nightly([ANA])).forgotten_facts == 0  # idempotent
    assert inferred not in await store.memory_facts(ANA)

    clock.set(START + 419 * DAY)  # stated: 0.95 - 13 x 0.05 = 0.30
    assert (await service.run_nightly([ANA])).forgotten_facts == 0
    clock.set(START + 420 * DAY)
    assert (await service.run_nightly([ANA])).forgotten_facts == 1
    assert await store.memory_facts(ANA) == [correction, name]  # never a correction

    clock.set(START + 10 * 365 * DAY)
    assert (await service.run_nightly([ANA])).forgotten_facts == 0
    assert stated not in await store.memory_facts(ANA)


async def test_housekeeping_forgets_aged_facts_of_people_no_night_visits(
    store: SqliteStore, clock: FakeClock
) -> None:
    await add(store, "fact", "Lives in Berlin", "user", START)
    service = nightly(store, clock)
    await housekeep(store, service.settings.continuity, START + 420 * DAY)
    assert await store.memory_facts(ANA) == []


def test_only_a_fact_unmentioned_for_sixty_days_is_forgotten() -> None:
    low = MemoryFact(1, ANA, "fact", "Lives in Berlin", "user", START, 0.25, START)
    assert not is_forgettable(low, START + 59 * DAY)
    assert is_forgettable(low, START + 60 * DAY)
    assert not is_forgettable(replace(low, kind="correction"), START + 60 * DAY)
    assert not is_forgettable(replace(low, source="admin"), START + 60 * DAY)
    assert not is_forgettable(replace(low, committed=True), START + 60 * DAY)


def test_a_fact_asked_to_keep_for_a_while_is_kept_that_while() -> None:
    # "Remember that I'm in Lisbon this week": kept as asked, until the week is over.
    week = MemoryFact(
        1, ANA, "fact", "Is in Lisbon this week", "user", START, 0.95, START, None, True
    )
    assert is_kept(week, START + 5 * DAY) and not is_kept(week, START + 7 * DAY)  # a Monday
    assert not is_forgettable(week, START + 5 * DAY)
    assert is_forgettable(week, START + 420 * DAY)  # then ages out as any fact
    assert not is_forgettable(replace(week, text="Lives in Lisbon"), START + 420 * DAY)


async def test_the_nightly_job_never_forgets_what_the_user_asked_to_keep(
    store: SqliteStore, clock: FakeClock
) -> None:
    """Spec 002 tier 3: what the user explicitly asked to keep is committed, and its GC
    never prunes a committed entry. Its confidence still ages, so the card says it may be
    out of date; only the user removes it."""
    service = nightly(store, clock)
    await say(store, clock, "Remember that I live in Berlin. I'm a nurse.")
    await store.add_memory_fact(ANA, "fact", "Has a dog called Rex", source="user", at=START)
    await learn_from_message(store, MemoryConfig(), ANA, "Keep in mind I'm vegan.", START)
    kept = await store.add_memory_fact(
        ANA, "fact", "Plays the cello", source="user", at=START, committed=True
    )
    assert kept is not None and kept.committed

    clock.set(START + 420 * DAY)  # 0.95 - 14 x 0.05 = 0.25: the plain ones go
    assert (await service.run_nightly([ANA])).forgotten_facts == 2
    clock.set(START + 10 * 365 * DAY)
    assert (await service.run_nightly([ANA])).forgotten_facts == 0
    await housekeep(store, service.settings.continuity, clock.now())
    facts = await store.memory_facts(ANA)
    assert [(f.text, f.committed) for f in facts] == [
        ("Lives in Berlin", True),
        ("Is vegan", True),
        ("Plays the cello", True),
    ]
    assert all(confidence_now(f, clock.now()) == 0.2 and is_hedged(f, clock.now()) for f in facts)


async def test_facts_kept_before_get_their_sources_confidence(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 13)
        rows = [
            ("fact", "Lives in Berlin", "user"),
            ("correction", "Their office is on the 5th", "user"),
            ("directive", "Cite the circuit cases first", "promoted"),
            ("fact", "Works at Acme", "admin"),
        ]
        await conn.executemany(
            "INSERT INTO memory_facts (user_key, kind, text, text_folded, source, created_at) "
            "VALUES (?, ?, ?, lower(?), ?, ?)",
            [(ANA, kind, text, text, source, to_db(START)) for kind, text, source in rows],
        )
    store = SqliteStore(db_path)
    await store.open()
    try:
        facts = await store.memory_facts(ANA)
        assert [(f.confidence, f.last_mentioned_at) for f in facts] == [
            (0.95, START),
            (1.0, START),
            (0.6, START),
            (1.0, START),
        ]
        # Said again on the upgraded file: surer, and mentioned now.
        await store.add_memory_fact(ANA, "fact", "lives in berlin", source="user", at=START + DAY)
        [berlin, *_] = await store.memory_facts(ANA)
        assert (berlin.confidence, berlin.last_mentioned_at) == (1.0, START + DAY)
    finally:
        await store.close()


async def test_facts_kept_before_are_not_taken_for_ones_asked_to_keep(db_path: Path) -> None:
    # Before migration 25 the store did not tell "remember that …" or /memory add from a
    # fact said in passing (all are source "user"): none is taken to be committed.
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        # As ``apply_migrations`` runs them on a new file (migration 22 reads this).
        await conn.execute("CREATE TEMP TABLE upgrade_start (from_version INTEGER NOT NULL)")
        await conn.execute("INSERT INTO temp.upgrade_start VALUES (0)")
        await migrate_to(conn, 24)
        await conn.execute(
            "INSERT INTO memory_facts (user_key, kind, text, text_folded, source, created_at, "
            "confidence, last_mentioned_at) VALUES (?, 'fact', 'Lives in Berlin', "
            "'lives in berlin', 'user', ?, 0.95, ?)",
            (ANA, to_db(START), to_db(START)),
        )
    store = SqliteStore(db_path)
    await store.open()
    try:
        [fact] = await store.memory_facts(ANA)
        assert not fact.committed
        # Asked to keep on the upgraded file: committed from then on.
        await learn_from_message(
            store, MemoryConfig(), ANA, "Remember that I live in Berlin.", START
        )
        assert (await only_fact(store)).committed
    finally:
        await store.close()
