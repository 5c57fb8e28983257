"""Continuity in the SQLite store (spec 001): work contexts, sessions, the log, views,
rollups, living memory and job marks — read across linked users."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from middleware.continuity.model import (
    ContinuityEntry,
    EntryType,
    RollupSegment,
    default_context_id,
    unlinked_context_id,
)
from middleware.errors import NotFoundError, StoreError
from middleware.store import SqliteStore
from middleware.types import ChatType
from tests.middleware.test_store import T0, inbound

TG_DM = "agent:main:telegram:dm:42"
DC_DM = "agent:main:discord:dm:7"
SIG_DM = "agent:main:signal:dm:9"
GROUP = "agent:main:telegram:group:-1001"
TG, DC, SIG = "telegram:42", "discord:7", "signal:9"
NOW = T0 + timedelta(days=1)
MINUTE = timedelta(minutes=1)


async def say(
    store: SqliteStore,
    at: datetime,
    thread: str = TG_DM,
    *,
    user: str = "42",
    channel: str = "telegram",
    text: str = "hello",
    name: str | None = "Ada",
) -> int:
    """A user message; its id."""
    chat_type: ChatType = "group" if ":group:" in thread else "dm"
    record = inbound(
        at, user=user, channel=channel, thread=thread, text=text, name=name, chat_type=chat_type
    )
    return (await store.record_inbound(record)).message_id


async def seen(store: SqliteStore) -> None:
    """Telegram at T0, Discord an hour later, Signal an hour after that."""
    await say(store, T0)
    await say(store, T0 + timedelta(hours=1), DC_DM, user="7", channel="discord", name="Ada D")
    await say(store, T0 + timedelta(hours=2), SIG_DM, user="9", channel="signal", name="Sig")


def entry(
    entry_id: str,
    context_id: str,
    *,
    at: datetime = NOW,
    decay_at: datetime | None = None,
    entry_type: EntryType = "open_question",
    session_id: str = "s1",
) -> ContinuityEntry:
    return ContinuityEntry(
        entry_id=entry_id,
        entry_type=entry_type,
        work_context_id=context_id,
        source_session_id=session_id,
        captured_at=at,
        capture_mode="deterministic",
        content={"question": f"what about {entry_id}?", "resolved": False, "confidence": 0.8},
        decay_at=decay_at or at + timedelta(days=30),
        linked_entity_ids=("case:17",),
    )


async def capture(
    store: SqliteStore,
    session_id: str,
    through: int,
    entries: Sequence[ContinuityEntry] = (),
    *,
    summary: str | None = None,
    at: datetime = NOW,
    cap: int = 3,
    mode: str = "deterministic",
) -> None:
    await store.record_capture(
        session_id,
        through_message_id=through,
        at=at,
        summary=summary,
        mode=mode,
        entries=entries,
        unlinked_cap=cap,
    )


# --- work contexts ---------------------------------------------------------------------


async def test_a_thread_gets_its_default_context_on_first_use(store: SqliteStore) -> None:
    await say(store, T0, GROUP, user="5", name="Bo")
    await say(store, T0 + MINUTE, GROUP)
    context = await store.thread_work_context(GROUP, now=NOW)
    assert context.work_context_id == default_context_id(GROUP)
    assert (context.name, context.named) == (GROUP, False)
    assert context.owner_key == "telegram:5"  # who spoke first
    assert context.created_at == context.last_active_at == NOW
    # Made once: a later use finds it as it was.
    assert await store.thread_work_context(GROUP, now=NOW + MINUTE) == context
    assert await store.stale_constellations() == []  # no log yet, nothing to build
    with pytest.raises(NotFoundError):
        await store.thread_work_context("agent:main:telegram:dm:404", now=NOW)


async def test_named_contexts_match_across_the_linked_person(store: SqliteStore) -> None:
    await seen(store)
    await store.link_users([TG, DC], now=NOW)
    made, created = await store.use_work_context(TG_DM, TG, "  Damages   Brief ", now=NOW)
    assert created and made.named
    assert made.work_context_id.startswith("wc_")
    assert (made.name, made.owner_key, made.created_at) == ("Damages Brief", TG, NOW)
    # The linked account finds it whatever the case and spacing.
    later = NOW + MINUTE
    found, created = await store.use_work_context(DC_DM, DC, "damages brief", now=later)
    assert not created
    assert found == replace(made, last_active_at=later)
    assert await store.thread_work_context(DC_DM, now=later) == found
    assert await store.context_threads(made.work_context_id) == [DC_DM, TG_DM]
    # The threads left their default contexts; a thread never moved is in its own.
    assert await store.context_threads(default_context_id(TG_DM)) == []
    assert await store.context_threads(default_context_id(SIG_DM)) == [SIG_DM]
    # Someone not linked gets a context of their own under the same name.
    other, created = await store.use_work_context(SIG_DM, SIG, "Damages brief", now=later)
    assert created and other.work_context_id != made.work_context_id

    with pytest.raises(NotFoundError):
        await store.use_work_context("agent:main:telegram:dm:404", TG, "x", now=NOW)
    with pytest.raises(ValueError):
        await store.use_work_context(TG_DM, TG, "   ", now=NOW)


async def test_moving_a_thread_keeps_captured_sessions_where_they_were(
    store: SqliteStore,
) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    await capture(store, "s1", first, [entry("e1", default_context_id(TG_DM))])
    second = await say(store, T0 + timedelta(hours=3))
    await store.start_session("s2", TG_DM, TG, T0 + timedelta(hours=3), second)

    context, _ = await store.use_work_context(TG_DM, TG, "Brief", now=NOW)

    s1, s2 = await store.get_session("s1"), await store.get_session("s2")
    assert s1 is not None and s1.work_context_id == default_context_id(TG_DM)
    assert s2 is not None and s2.work_context_id == context.work_context_id
    # A session starting now starts in the named context, and moves its activity.
    third = await say(store, NOW + timedelta(hours=3))
    s3 = await store.start_session("s3", TG_DM, TG, NOW + timedelta(hours=3), third)
    assert s3.work_context_id == context.work_context_id
    assert (await store.thread_work_context(TG_DM, now=NOW)).last_active_at == NOW + timedelta(
        hours=3
    )


async def test_moving_a_thread_out_of_a_named_context_leaves_its_session_there_ended(
    store: SqliteStore,
) -> None:
    first = await say(store, T0)
    billing, _ = await store.use_work_context(TG_DM, TG, "Billing launch", now=T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    current = await store.current_session(TG_DM)
    assert current is not None and current.session_id == "s1"

    garden, _ = await store.use_work_context(TG_DM, TG, "Garden", now=NOW)

    s1 = await store.get_session("s1")
    assert s1 is not None and s1.work_context_id == billing.work_context_id
    # Its work is billing's: the thread, now in garden, has no session until it speaks.
    assert await store.current_session(TG_DM) is None
    second = await say(store, NOW + MINUTE)
    s2 = await store.start_session("s2", TG_DM, TG, NOW + MINUTE, second)
    assert s2.work_context_id == garden.work_context_id
    assert await store.current_session(TG_DM) == s2


async def test_recent_contexts_are_the_persons_most_recently_active_first(
    store: SqliteStore,
) -> None:
    await seen(store)
    await say(store, T0, GROUP, user="5", name="Bo")  # a thread TG never spoke in
    for hours, thread in ((1, TG_DM), (2, DC_DM), (3, SIG_DM), (4, GROUP)):
        await store.thread_work_context(thread, now=NOW + timedelta(hours=hours))
    await store.link_users([TG, DC], now=NOW)
    named, _ = await store.use_work_context(SIG_DM, SIG, "Sig's own", now=NOW + timedelta(hours=5))
    brief, _ = await store.use_work_context(TG_DM, TG, "Brief", now=NOW + timedelta(hours=6))

    # TG_DM and SIG_DM moved into named contexts: their own ones are left behind.
    recent = await store.recent_work_contexts(DC, 10)
    assert [c.work_context_id for c in recent] == [
        brief.work_context_id,
        default_context_id(DC_DM),
    ]
    assert [c.work_context_id for c in await store.recent_work_contexts(TG, 1)] == [
        brief.work_context_id
    ]
    assert [c.work_context_id for c in await store.recent_work_contexts(SIG, 10)] == [
        named.work_context_id
    ]
    assert await store.recent_work_contexts("discord:404", 10) == []
    assert await store.recent_work_contexts(TG, 0) == []
    # Asked for them, the contexts left behind are listed too: their work still happened.
    with_left = await store.recent_work_contexts(DC, 10, unlisted=True)
    assert [c.work_context_id for c in with_left] == [
        brief.work_context_id,
        default_context_id(DC_DM),
        default_context_id(TG_DM),
    ]


async def test_the_unlinked_bucket_takes_a_thread(store: SqliteStore) -> None:
    api = "agent:main:api:dm:u1"
    first = await say(store, T0, api, user="u1", channel="api")
    bucket = await store.assign_unlinked_context(api, "api:u1", now=NOW)
    assert bucket.work_context_id == unlinked_context_id("api:u1")
    assert (bucket.owner_key, bucket.named, bucket.last_active_at) == ("api:u1", False, NOW)
    assert await store.get_work_context(bucket.work_context_id) == bucket
    assert await store.get_work_context("wc:nope") is None
    session = await store.start_session("s1", api, "api:u1", NOW, first)
    assert session.work_context_id == bucket.work_context_id
    assert await store.thread_work_context(api, now=NOW) == bucket
    assert await store.context_threads(bucket.work_context_id) == [api]
    # /context cannot move a thread into it, so it lists it not; the rollup reads it.
    assert bucket not in await store.recent_work_contexts("api:u1", 10)
    assert bucket in await store.recent_work_contexts("api:u1", 10, unlisted=True)
    with pytest.raises(NotFoundError):
        await store.assign_unlinked_context("agent:main:api:dm:404", "api:404", now=NOW)


async def test_active_users_with_the_zone_the_clock_uses(store: SqliteStore) -> None:
    await seen(store)
    await store.set_user_timezone(TG, "Europe/Berlin")
    await store.set_user_timezone(SIG, "Asia/Tokyo")
    await store.link_users([TG, DC], now=NOW)
    assert await store.active_users(T0 + timedelta(hours=1)) == [
        (DC, "Europe/Berlin"),  # the person's zone
        (SIG, "Asia/Tokyo"),
    ]
    assert await store.active_users(T0) == [
        (DC, "Europe/Berlin"),
        (SIG, "Asia/Tokyo"),
        (TG, "Europe/Berlin"),
    ]
    assert await store.active_users(NOW) == []


# --- channel history -------------------------------------------------------------------


async def test_history_start_and_transcript_from(store: SqliteStore) -> None:
    ids = [await say(store, T0 + i * MINUTE, GROUP, text=f"m{i}") for i in range(3)]
    await say(store, T0 + 3 * MINUTE, GROUP, user="5", name="Bo", text="m3")
    reply = await store.record_reply(GROUP, "r4", T0 + 4 * MINUTE)

    assert await store.history_start(GROUP) is None
    await store.set_history_start(GROUP, ids[1])
    assert await store.history_start(GROUP) == ids[1]
    assert await store.history_start("agent:main:telegram:dm:404") is None
    with pytest.raises(NotFoundError):
        await store.set_history_start("agent:main:telegram:dm:404", 1)

    lines = await store.transcript_from(GROUP, ids[1], 10)
    assert [(m.text, m.speaker_name) for m in lines] == [
        ("m1", "Ada"),
        ("m2", "Ada"),
        ("m3", "Bo"),
        ("r4", None),
    ]
    assert lines[-1].id == reply and lines[-1].role == "assistant"
    assert [m.text for m in await store.transcript_from(GROUP, None, 2)] == ["m3", "r4"]
    assert len(await store.transcript_from(GROUP, None, 50)) == 5
    assert await store.transcript_from(GROUP, None, 0) == []


async def test_transcript_from_leaves_out_commands_and_their_answers(
    store: SqliteStore,
) -> None:
    await say(store, T0, GROUP, text="plan the trip")
    await store.record_reply(GROUP, "sure", T0 + MINUTE)
    command = await say(store, T0 + 2 * MINUTE, GROUP, text="/time")
    await store.mark_command(GROUP, command)
    await store.record_reply(GROUP, "It's 10:02", T0 + 2 * MINUTE)
    await say(store, T0 + 3 * MINUTE, GROUP, text="where were we?")

    lines = await store.transcript_from(GROUP, None, 3)
    assert [m.text for m in lines] == ["plan the trip", "sure", "where were we?"]


# --- sessions --------------------------------------------------------------------------


async def test_sessions_count_their_own_turns(store: SqliteStore) -> None:
    a1 = await say(store, T0, GROUP, text="a1")
    await store.record_reply(GROUP, "r1", T0 + MINUTE)
    await say(store, T0 + 2 * MINUTE, GROUP, user="5", name="Bo", text="a2")

    s1 = await store.start_session("s1", GROUP, "telegram:42", T0, a1)
    assert (s1.user_turns, s1.dirty_turns, s1.speaker_key) == (2, 2, "telegram:5")
    assert (s1.channel, s1.work_context_id) == ("telegram", default_context_id(GROUP))
    assert (s1.started_at, s1.last_turn_at, s1.first_message_id) == (T0, T0 + 2 * MINUTE, a1)
    assert s1.captured_message_id is None and not s1.tool_used

    await capture(store, "s1", a1, summary="talked", at=T0 + 3 * MINUTE)
    b1 = await say(store, T0 + timedelta(hours=2), GROUP, text="b1")
    s2 = await store.start_session("s2", GROUP, "telegram:42", T0 + timedelta(hours=2), b1)
    await store.record_reply(GROUP, "r2", T0 + timedelta(hours=2, minutes=1))
    await say(store, T0 + timedelta(hours=2, minutes=2), GROUP, text="b2")

    # The first session ended where the second began: its counts stay as they were.
    first = await store.get_session("s1")
    assert first is not None
    assert (first.user_turns, first.dirty_turns, first.speaker_key) == (2, 1, "telegram:5")
    assert (first.summary, first.summary_mode) == ("talked", "deterministic")
    assert (first.captured_message_id, first.last_capture_at) == (a1, T0 + 3 * MINUTE)
    current = await store.current_session(GROUP)
    assert current is not None and current.session_id == "s2"
    assert (current.user_turns, current.dirty_turns) == (2, 2)
    assert current.last_turn_at == T0 + timedelta(hours=2, minutes=2)
    assert (s2.user_turns, s2.speaker_key) == (1, "telegram:42")

    assert [m.text for m in await store.session_messages("s1", 10)] == ["a1", "r1", "a2"]
    assert [m.text for m in await store.session_messages("s2", 2)] == ["r2", "b2"]
    assert [m.speaker_name for m in await store.session_messages("s1", 10)] == [
        "Ada",
        None,
        "Bo",
    ]
    assert await store.session_messages("nope", 10) == []
    assert await store.get_session("nope") is None
    assert await store.current_session(TG_DM) is None


async def test_session_messages_leave_out_a_reply_that_never_reached_the_user(
    store: SqliteStore,
) -> None:
    # Continuity reads what was said between the user and the model: an answer the chat
    # platform refused settles no question of theirs.
    asked = await say(store, T0, text="Should we move the launch to Friday?")
    await store.start_session("s1", TG_DM, "telegram:42", T0, asked)
    reply = await store.record_reply(TG_DM, "Yes, Friday works.", T0 + MINUTE)
    await store.mark_undelivered(TG_DM, reply)
    await say(store, T0 + 2 * MINUTE, text="hello?")
    said = [m.text for m in await store.session_messages("s1", 10)]
    assert said == ["Should we move the launch to Friday?", "hello?"]


async def test_session_flags_and_start_rules(store: SqliteStore) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    await store.mark_session_tool_use("s1")
    await store.set_session_cards("s1", "fp-1")
    session = await store.get_session("s1")
    assert session is not None and session.tool_used and session.cards_fingerprint == "fp-1"
    await store.set_session_cards("s1", None)
    assert (await store.get_session("s1")).cards_fingerprint is None  # type: ignore[union-attr]

    with pytest.raises(NotFoundError):
        await store.start_session("sx", "agent:main:telegram:dm:404", TG, T0, first)
    with pytest.raises(StoreError):  # the same session id twice
        await store.start_session("s1", TG_DM, TG, T0, first + 100)


async def test_capture_candidates_are_latest_sessions_with_new_user_turns(
    store: SqliteStore,
) -> None:
    await seen(store)
    # TG: captured through its last user message; a reply after it changes nothing.
    tg = await say(store, NOW, TG_DM)
    await store.start_session("tg", TG_DM, TG, NOW, tg)
    await capture(store, "tg", tg)
    await store.record_reply(TG_DM, "ok", NOW + MINUTE)
    # DC: an old captured session, then a new one with a turn (the latest, dirty).
    dc1 = await say(store, NOW, DC_DM, user="7", channel="discord")
    await store.start_session("dc1", DC_DM, DC, NOW, dc1)
    await capture(store, "dc1", dc1)
    dc2 = await say(store, NOW + 2 * MINUTE, DC_DM, user="7", channel="discord")
    await store.start_session("dc2", DC_DM, DC, NOW + 2 * MINUTE, dc2)
    # SIG: captured once, then spoke again in the same session.
    sig = await say(store, NOW, SIG_DM, user="9", channel="signal")
    await store.start_session("sig", SIG_DM, SIG, NOW, sig)
    await capture(store, "sig", sig)
    await say(store, NOW + MINUTE, SIG_DM, user="9", channel="signal")

    candidates = await store.capture_candidates()
    # Oldest activity first.
    assert [(c.session_id, c.dirty_turns) for c in candidates] == [("sig", 1), ("dc2", 1)]

    await capture(store, "sig", sig + 100)
    assert [c.session_id for c in await store.capture_candidates()] == ["dc2"]


async def test_latest_thread_follows_the_person_across_channels(store: SqliteStore) -> None:
    await seen(store)
    assert await store.latest_thread_of(TG) == TG_DM
    await store.link_users([TG, DC], now=NOW)
    assert await store.latest_thread_of(TG) == DC_DM
    await say(store, NOW, GROUP)
    assert await store.latest_thread_of(DC) == GROUP
    assert await store.latest_thread_of("discord:404") is None


async def test_context_sessions_since_newest_first(store: SqliteStore) -> None:
    await seen(store)
    for index, thread in enumerate((TG_DM, DC_DM, SIG_DM)):
        user_key = (TG, DC, SIG)[index]
        message = await say(
            store, NOW, thread, user=user_key.split(":")[1], channel=thread.split(":")[2]
        )
        await store.start_session(f"s{index}", thread, user_key, NOW + index * MINUTE, message)
        await store.use_work_context(thread, TG, "Shared", now=NOW)
    context = await store.thread_work_context(TG_DM, now=NOW)
    sessions = await store.context_sessions(context.work_context_id, NOW + MINUTE)
    assert [s.session_id for s in sessions] == ["s2", "s1"]
    assert await store.context_sessions(default_context_id(TG_DM), T0) == []


# --- captures and the log --------------------------------------------------------------


async def test_a_capture_lands_whole_and_marks_views_stale(store: SqliteStore) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    home = default_context_id(TG_DM)
    await store.save_constellation(home, {"open": []}, built_at=T0)
    assert await store.stale_constellations() == []

    news = replace(entry("e2", default_context_id(DC_DM)), entry_type="cross_conversation_update")
    await capture(
        store, "s1", first, [entry("e1", home), news], summary="first pass", mode="llm_enriched"
    )

    assert await store.stale_constellations() == sorted([home, default_context_id(DC_DM)])
    [stored] = await store.continuity_entries(home, now=NOW)
    assert stored == entry("e1", home)  # content and linked ids come back as given
    # A capture without a summary keeps the one there, and how it was made.
    await capture(store, "s1", first, summary=None, at=NOW + MINUTE)
    session = await store.get_session("s1")
    assert session is not None
    assert (session.summary, session.summary_mode) == ("first pass", "llm_enriched")
    assert session.last_capture_at == NOW + MINUTE
    # The capture point never moves back.
    await capture(store, "s1", first - 1)
    assert (await store.get_session("s1")).captured_message_id == first  # type: ignore[union-attr]

    # One transaction: a failing entry leaves nothing of the capture behind.
    with pytest.raises(StoreError):
        await capture(store, "s1", first + 5, [entry("e3", home), entry("e1", home)])
    assert [e.entry_id for e in await store.all_live_entries(now=NOW)] == ["e1", "e2"]
    assert (await store.get_session("s1")).captured_message_id == first  # type: ignore[union-attr]
    with pytest.raises(NotFoundError):
        await capture(store, "nope", first)


async def test_the_unlinked_bucket_keeps_only_its_newest_entries(store: SqliteStore) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    bucket = unlinked_context_id(TG)
    for index in range(4):
        await capture(store, "s1", first, [entry(f"u{index}", bucket, at=NOW + index * MINUTE)])
    # Entries elsewhere are never evicted.
    home = default_context_id(TG_DM)
    await capture(store, "s1", first, [entry(f"h{i}", home) for i in range(5)])

    assert [e.entry_id for e in await store.continuity_entries(bucket, now=NOW)] == [
        "u1",
        "u2",
        "u3",
    ]
    assert len(await store.continuity_entries(home, now=NOW)) == 5
    # The bucket was made by its first entry, owned by its user.
    assert bucket in await store.stale_constellations()
    await capture(store, "s1", first, [entry("u9", bucket, at=NOW + timedelta(hours=1))], cap=0)
    assert await store.continuity_entries(bucket, now=NOW) == []


async def test_an_entry_is_decayed_once_decay_at_has_come(store: SqliteStore) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    home, other = default_context_id(TG_DM), unlinked_context_id(TG)
    await capture(
        store,
        "s1",
        first,
        [
            entry("due", home, at=T0, decay_at=NOW),
            entry("later", home, at=T0 + MINUTE, decay_at=NOW + timedelta(microseconds=1)),
            entry("gone", other, at=T0, decay_at=NOW - MINUTE),
        ],
    )
    await store.save_constellation(home, {}, built_at=T0)
    await store.save_constellation(other, {}, built_at=T0)

    before = NOW - timedelta(microseconds=1)
    assert [e.entry_id for e in await store.continuity_entries(home, now=before)] == [
        "due",
        "later",
    ]
    assert [e.entry_id for e in await store.continuity_entries(home, now=NOW)] == ["later"]
    assert [e.entry_id for e in await store.all_live_entries(now=NOW)] == ["later"]

    assert await store.decay_entries(now=NOW) == sorted([home, other])
    assert await store.stale_constellations() == sorted([home, other])
    assert [e.entry_id for e in await store.all_live_entries(now=T0)] == ["later"]
    assert await store.decay_entries(now=NOW) == []


async def test_update_entry_changes_only_the_fields_given(store: SqliteStore) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    home = default_context_id(TG_DM)
    original = entry("e1", home)
    await capture(store, "s1", first, [original])
    await store.save_constellation(home, {"v": 1}, built_at=NOW)

    await store.update_entry("e1", delivered_at=NOW + MINUTE)
    assert await store.stale_constellations() == [home]
    [stored] = await store.continuity_entries(home, now=NOW)
    assert stored == replace(original, delivered=True, delivered_at=NOW + MINUTE)

    resolved: dict[str, Any] = {**original.content, "resolved": True}
    later = NOW + timedelta(days=90)
    await store.update_entry("e1", content=resolved, decay_at=later, promoted_node_id="n1")
    [stored] = await store.continuity_entries(home, now=NOW)
    assert stored == replace(
        original,
        content=resolved,
        decay_at=later,
        delivered=True,
        delivered_at=NOW + MINUTE,
        promoted_to_graph=True,
        promoted_node_id="n1",
    )
    await store.update_entry("gone")  # an unknown entry is left alone
    await store.update_entry("gone", content={})


# --- views, card sources, rollups ------------------------------------------------------


async def test_saving_a_view_makes_it_fresh(store: SqliteStore) -> None:
    first = await say(store, T0)
    await store.start_session("s1", TG_DM, TG, T0, first)
    home = default_context_id(TG_DM)
    await capture(store, "s1", first, [entry("e1", home)])
    assert await store.stale_constellations() == [home]
    await store.save_constellation(home, {"questions": ["e1"]}, built_at=NOW)
    assert await store.stale_constellations() == []
    sources = await store.card_sources(TG_DM, TG, now=NOW)
    assert sources.constellation == {"questions": ["e1"]}
    assert await store.constellation(home) == {"questions": ["e1"]}
    assert await store.constellation(unlinked_context_id(TG)) is None
    with pytest.raises(NotFoundError):
        await store.save_constellation("wc:nope", {}, built_at=NOW)


async def test_card_sources_in_one_call_across_the_person(store: SqliteStore) -> None:
    await seen(store)
    await store.link_users([TG, DC], now=NOW)
    segment = RollupSegment(default_context_id(DC_DM), "drafted the brief", NOW, NOW)
    await store.replace_rollup(DC, [segment], generated_at=NOW)
    fact = await store.add_memory_fact(TG, "name", "Ada", source="user", at=NOW)

    # The thread's default context is made on the way, with no view yet.
    sources = await store.card_sources(TG_DM, DC, now=NOW)
    assert sources.work_context == await store.thread_work_context(TG_DM, now=NOW)
    assert sources.work_context.created_at == NOW
    assert sources.constellation is None
    assert sources.rollups == (segment,)
    assert sources.memory == (fact,)
    # Made once.
    assert await store.card_sources(TG_DM, TG, now=NOW + MINUTE) == sources
    with pytest.raises(NotFoundError):
        await store.card_sources("agent:main:telegram:dm:404", TG, now=NOW)


async def test_rollups_are_kept_per_user_and_read_across_the_person(
    store: SqliteStore,
) -> None:
    await seen(store)
    await store.link_users([TG, DC], now=NOW)
    old = RollupSegment("wc:a", "old a", T0, T0)
    await store.replace_rollup(DC, [old], generated_at=T0)
    await store.replace_rollup(SIG, [RollupSegment("wc:sig", "sig", T0, T0)], generated_at=T0)
    assert await store.rollup_segments(TG) == [old]

    a = RollupSegment("wc:a", "a", NOW - MINUTE, NOW)
    b = RollupSegment("wc:b", "b", NOW, NOW)
    await store.replace_rollup(TG, [a, b], generated_at=NOW)
    # Newest activity first; a context both users' rollups have shows once, the newer.
    assert await store.rollup_segments(DC) == [b, a]
    assert [s.text for s in await store.rollup_segments(SIG)] == ["sig"]
    # Replacing is per user: unlinking later loses nobody's rollup.
    await store.replace_rollup(TG, [], generated_at=NOW)
    assert await store.rollup_segments(TG) == [old]
    await store.unlink_user(DC)
    assert await store.rollup_segments(TG) == []
    assert await store.rollup_segments(DC) == [old]


# --- living memory and jobs ------------------------------------------------------------


async def test_memory_facts_dedupe_and_replace_across_the_person(store: SqliteStore) -> None:
    await seen(store)
    await store.link_users([TG, DC], now=NOW)
    name = await store.add_memory_fact(TG, "name", "Ada", source="user", at=NOW)
    fact = await store.add_memory_fact(
        DC,
        "fact",
        "Works  on the Smith case",
        source="promoted",
        at=NOW + MINUTE,
        source_entry_id="e1",
    )
    assert name is not None and fact is not None
    assert (fact.user_key, fact.kind, fact.source_entry_id) == (DC, "fact", "e1")
    assert (fact.confidence, name.confidence) == (0.6, 0.95)
    # The same text, whatever the case and spacing, from either account: not again, but
    # the user's own word makes it as sure as a statement of theirs (spec 003 §8), and
    # theirs (spec 002 A4: a manual source supersedes an automatic one).
    assert (
        await store.add_memory_fact(TG, "fact", " works on the SMITH case", source="user", at=NOW)
        is None
    )
    fact = replace(fact, confidence=0.95, source="user")
    assert await store.memory_facts(TG) == [name, fact]

    renamed = await store.add_memory_fact(
        DC, "name", "Ada L.", source="user", at=NOW + 2 * MINUTE, replaces_kind=True
    )
    assert renamed is not None
    assert await store.memory_facts(DC) == [fact, renamed]
    assert await store.memory_facts(SIG) == []

    assert not await store.delete_memory_fact(SIG, fact.fact_id)  # not theirs
    assert await store.delete_memory_fact(TG, fact.fact_id)  # a linked account's
    assert not await store.delete_memory_fact(TG, fact.fact_id)
    assert await store.memory_facts(TG) == [renamed]
    with pytest.raises(ValueError):
        await store.add_memory_fact(TG, "fact", "  ", source="user", at=NOW)


async def test_job_marks(store: SqliteStore) -> None:
    assert await store.job_mark("nightly", TG) is None
    await store.set_job_mark("nightly", TG, "2025-03-01", at=NOW)
    await store.set_job_mark("nightly", TG, "2025-03-02", at=NOW + timedelta(days=1))
    await store.set_job_mark("nightly", DC, "2025-03-01", at=NOW)
    assert await store.job_mark("nightly", TG) == "2025-03-02"
    assert await store.job_mark("rollup", TG) is None


async def test_a_job_mark_is_claimed_once(db_path: Path, store: SqliteStore) -> None:
    other = SqliteStore(db_path)  # a second process on the same file
    await other.open()
    try:
        claims = await asyncio.gather(
            store.claim_job_mark("housekeeping", "relay", "2025-03-01", at=NOW),
            other.claim_job_mark("housekeeping", "relay", "2025-03-01", at=NOW),
        )
        assert sorted(claims) == [False, True]
        assert not await store.claim_job_mark("housekeeping", "relay", "2025-02-28", at=NOW)
        assert await other.claim_job_mark("housekeeping", "relay", "2025-03-02", at=NOW)
        assert await store.job_mark("housekeeping", "relay") == "2025-03-02"
    finally:
        await other.close()
