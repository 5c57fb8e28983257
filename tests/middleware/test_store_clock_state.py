"""The store's clock-state side: ``peek_prior``, export/import, and schema migration 3."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite
import pytest

from middleware.clock.state_file import read_clock_state, write_clock_state
from middleware.errors import RequestError
from middleware.store import (
    ChannelTimes,
    ClockStateSnapshot,
    ImportCounts,
    SqliteStore,
    StatedLocation,
    ThreadClockState,
    UserClockState,
)
from middleware.store.migrations import to_db
from tests.middleware.test_store import (
    T0,
    THREAD,
    add_user_and_group,
    inbound,
    migrate_to,
    sql,
)

DM = "agent:main:telegram:dm:42"
NOW = T0 + timedelta(days=30)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    # In an existing directory: some tests build an old-version file here before opening.
    return tmp_path / "relay.db"


async def test_peek_prior_is_what_the_next_message_sees_and_writes_nothing(
    store: SqliteStore, db_path: Path
) -> None:
    await store.record_inbound(inbound(T0, user="a"))
    await store.record_reply(THREAD, "hi", T0 + timedelta(seconds=2))
    await store.set_user_timezone("telegram:a", "Asia/Kathmandu")
    before = await sql(db_path, "SELECT count(*), max(at) FROM messages")

    peeked = await store.peek_prior(THREAD, "telegram:a")
    assert await sql(db_path, "SELECT count(*), max(at) FROM messages") == before
    assert await store.peek_prior(THREAD, "telegram:a") == peeked
    recorded = await store.record_inbound(inbound(T0 + timedelta(minutes=5), user="a"))
    assert recorded.prior == peeked
    assert peeked.user_tz == "Asia/Kathmandu"
    assert peeked.thread_last_agent_message_at == T0 + timedelta(seconds=2)


async def test_peek_prior_of_unknown_keys_is_empty(store: SqliteStore) -> None:
    prior = await store.peek_prior("agent:main:api:nobody", "api:nobody")
    assert prior.thread_last_interaction_at is None and prior.user_tz is None


async def test_a_stored_zone_the_relay_refuses_reads_as_unset(
    store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    # Older versions let /tz store Etc ids; every turn of that user used to fail on it.
    await store.record_inbound(inbound(T0, user="a"))
    await store.set_user_timezone("telegram:a", "Etc/GMT+2")
    await store.set_thread_timezone(THREAD, "Etc/GMT-14")

    with caplog.at_level(logging.WARNING, logger="middleware.store.sqlite_clock_state"):
        peeked = await store.peek_prior(THREAD, "telegram:a")
        recorded = await store.record_inbound(inbound(T0 + timedelta(minutes=1), user="a"))
        [member] = await store.group_participants(THREAD, T0, 10)

    assert peeked.user_tz is None and peeked.thread_tz is None
    assert recorded.prior.user_tz is None and recorded.prior.thread_tz is None
    assert member.default_tz is None
    assert "'Etc/GMT+2' is not one the relay accepts" in caplog.text
    assert "'Etc/GMT-14' is not one the relay accepts" in caplog.text


async def test_export_holds_users_threads_and_participants(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0, user="a"))
    await store.record_inbound(inbound(T0 + timedelta(minutes=1), user="b"))
    await store.record_reply(THREAD, "ok", T0 + timedelta(minutes=2))
    await store.set_thread_timezone(THREAD, "Europe/Lisbon")

    snapshot = await store.export_clock_state()
    assert [u.user_key for u in snapshot.users] == ["telegram:a", "telegram:b"]
    assert snapshot.users[0].channels == {
        THREAD: ChannelTimes(T0, T0 + timedelta(minutes=2)),
    }
    assert snapshot.users[0].last_interaction_any_channel_at == T0
    [thread] = snapshot.threads
    assert thread == ThreadClockState(
        thread_key=THREAD,
        kind="conversation",
        session_tz="Europe/Lisbon",
        participants=("telegram:a", "telegram:b"),
        last_interaction_at=T0 + timedelta(minutes=2),
        last_user_message_by_user={"telegram:a": T0, "telegram:b": T0 + timedelta(minutes=1)},
        chat_type="group",
        kind_source="default",
        display_name_by_user={"telegram:a": "Ada", "telegram:b": "Ada"},
    )


async def test_import_creates_rows_from_their_keys(store: SqliteStore) -> None:
    snapshot = ClockStateSnapshot(
        users=(
            UserClockState(
                "telegram:42",
                default_tz="Asia/Tokyo",
                policy_overrides={"mode": "light"},
                last_interaction_any_channel_at=T0,
                channels={DM: ChannelTimes(T0, T0 + timedelta(seconds=5))},
                latest_actions=[{"id": "a1", "label": "dinner"}],
                calibration={"activity_overrides": {"meal:dinner": {"typical_minutes": 90}}},
            ),
        ),
        threads=(
            ThreadClockState(
                THREAD,
                kind="project",
                session_tz="Asia/Kathmandu",
                # discord:7 is only named here, and has never spoken.
                participants=("telegram:42", "discord:7"),
                last_interaction_at=T0 - timedelta(days=1),
                last_user_message_by_user={"telegram:42": T0 - timedelta(days=1)},
            ),
        ),
    )
    counts = await store.import_clock_state(snapshot, now=NOW)
    assert counts == ImportCounts(users_created=2, threads_created=2)

    user = await store.get_user("telegram:42")
    assert user is not None
    assert (user.channel, user.platform_user_id, user.default_tz) == (
        "telegram",
        "42",
        "Asia/Tokyo",
    )
    assert user.last_interaction_any_channel_at == T0 and user.last_channel == "telegram"
    dm = await store.get_thread(DM)
    assert dm is not None
    assert (dm.channel, dm.chat_type, dm.kind) == ("telegram", "dm", "conversation")
    assert dm.last_user_message_at == T0
    assert dm.last_agent_message_at == dm.last_interaction_at == T0 + timedelta(seconds=5)
    group = await store.get_thread(THREAD)
    assert group is not None
    assert (group.chat_type, group.kind, group.session_tz) == ("group", "project", "Asia/Kathmandu")
    assert group.participants == ("discord:7", "telegram:42")
    assert group.last_user_message_by_user == {"telegram:42": T0 - timedelta(days=1)}
    # A member without a message time is not listed as a recent speaker.
    members = await store.group_participants(THREAD, T0 - timedelta(days=30), 10)
    assert [m.user_key for m in members] == ["telegram:42"]

    exported = await store.export_clock_state()
    assert exported.users[1].policy_overrides == {"mode": "light"}
    assert exported.users[1].latest_actions == [{"id": "a1", "label": "dinner"}]
    assert exported.users[1].calibration == snapshot.users[0].calibration

    # The same snapshot again changes nothing and creates nothing.
    again = await store.import_clock_state(snapshot, now=NOW)
    assert again == ImportCounts(users_merged=2, threads_merged=2)
    assert await store.export_clock_state() == exported


async def test_import_never_moves_times_back_and_never_clears(store: SqliteStore) -> None:
    later = T0 + timedelta(hours=3)
    await store.record_inbound(inbound(later, user="42", thread=DM, chat_type="dm"))
    await store.set_user_timezone("telegram:42", "Europe/Berlin")
    snapshot = ClockStateSnapshot(
        users=(
            UserClockState(
                "telegram:42",
                last_interaction_any_channel_at=T0,
                channels={DM: ChannelTimes(T0, None)},
            ),
        ),
        threads=(ThreadClockState(DM, last_interaction_at=T0),),
    )
    assert await store.import_clock_state(snapshot, now=NOW) == ImportCounts(
        users_merged=1, threads_merged=1
    )
    user = await store.get_user("telegram:42")
    thread = await store.get_thread(DM)
    assert user is not None and thread is not None
    assert user.default_tz == "Europe/Berlin"
    assert user.last_interaction_any_channel_at == later
    assert thread.last_interaction_at == thread.last_user_message_at == later
    assert thread.last_user_message_by_user == {"telegram:42": later}


async def test_an_imported_last_interaction_is_the_last_message_the_next_one_sees(
    store: SqliteStore,
) -> None:
    """The file knows no commands (its times are every message's, spec 000 §4.1, and an
    export writes them so): its last interaction is the conversation's."""
    snapshot = ClockStateSnapshot(threads=(ThreadClockState(DM, last_interaction_at=T0),))
    await store.import_clock_state(snapshot, now=NOW)

    later = T0 + timedelta(hours=3)
    prior = (await store.record_inbound(inbound(later, thread=DM, chat_type="dm"))).prior
    assert prior.thread_last_conversation_at == prior.thread_last_interaction_at == T0
    assert prior.last_conversation_seen_at(later) == T0


async def test_an_imported_time_outlasts_a_first_later_message_that_is_a_command(
    store: SqliteStore,
) -> None:
    """A thread and a member known only from a clock-state file, then "/time", marked:
    the next message still sees the file's times, not "First message in this thread"."""
    snapshot = ClockStateSnapshot(
        threads=(
            ThreadClockState(
                THREAD, last_interaction_at=T0, last_user_message_by_user={"telegram:42": T0}
            ),
        )
    )
    await store.import_clock_state(snapshot, now=NOW)

    later = T0 + timedelta(days=3)
    command = await store.record_inbound(inbound(later, text="/time"))
    await store.mark_command(THREAD, command.message_id)
    await store.record_reply(THREAD, "It's 09:00", later)
    prior = (await store.record_inbound(inbound(later + timedelta(minutes=1)))).prior
    assert prior.thread_last_conversation_at == T0
    assert prior.user_last_conversation_here_at == T0
    # Every message is an interaction (spec 000 §4.1): the command's time is kept there.
    assert prior.user_last_message_here_at == later


async def test_import_merges_json_fields(store: SqliteStore) -> None:
    first = UserClockState(
        "api:ana",
        policy_overrides={"mode": "light", "checkins": False},
        latest_actions=[{"id": "a1", "status": "planned"}, {"label": "no id"}],
    )
    await store.import_clock_state(ClockStateSnapshot(users=(first,)), now=NOW)
    second = UserClockState(
        "api:ana",
        policy_overrides={"mode": "full"},
        latest_actions=[{"id": "a1", "status": "done"}, {"label": "no id"}, {"id": "a2"}],
    )
    await store.import_clock_state(ClockStateSnapshot(users=(second,)), now=NOW)
    [user] = (await store.export_clock_state()).users
    assert user.policy_overrides == {"mode": "full", "checkins": False}
    assert user.latest_actions == [
        {"id": "a1", "status": "done"},
        {"label": "no id"},
        {"id": "a2"},
    ]


async def test_the_place_a_user_said_goes_through_export_and_import(
    store: SqliteStore, tmp_path: Path
) -> None:
    await store.record_inbound(inbound(T0, user="42"))
    lisbon = StatedLocation("Europe/Lisbon", "Lisbon", "current", T0)
    await store.update_clock_data("telegram:42", lambda data: replace(data, located=lisbon))
    document = write_clock_state(await store.export_clock_state(), agent_tz="UTC", at=NOW)
    assert document["users"]["telegram:42"]["located"] == {
        "zone": "Europe/Lisbon",
        "place": "Lisbon",
        "kind": "current",
        "said_iso": "2025-03-01T09:00:00+00:00",
    }
    fresh = SqliteStore(tmp_path / "fresh.db")
    await fresh.open()
    try:
        await fresh.import_clock_state(read_clock_state(document, now=NOW), now=NOW)
        assert (await fresh.peek_prior(DM, "telegram:42")).clock_data.located == lisbon
        # Importing an older place leaves a later one in place; a later one replaces it.
        older = replace(lisbon, zone="Europe/Berlin", place="Berlin", said_at=T0 - timedelta(1))
        later = replace(older, said_at=T0 + timedelta(1))
        for imported, kept in ((older, lisbon), (later, later)):
            user = UserClockState("telegram:42", located=imported)
            await fresh.import_clock_state(ClockStateSnapshot(users=(user,)), now=NOW)
            assert (await fresh.peek_prior(DM, "telegram:42")).clock_data.located == kept
    finally:
        await fresh.close()
    bad = json.loads(json.dumps(document))
    bad["users"]["telegram:42"]["located"]["kind"] = "elsewhere"
    with pytest.raises(RequestError, match=r"users\["):
        read_clock_state(bad, now=NOW)


async def test_import_into_a_linked_user_sets_the_persons_clock(
    store: SqliteStore, db_path: Path
) -> None:
    await store.record_inbound(inbound(T0, user="42"))
    await sql(db_path, "INSERT INTO persons (person_id) VALUES ('p1')")
    await sql(db_path, "UPDATE users SET person_id = 'p1' WHERE user_key = 'telegram:42'")
    later = T0 + timedelta(days=1)
    user = UserClockState(
        "telegram:42", default_tz="Asia/Tokyo", last_interaction_any_channel_at=later
    )
    await store.import_clock_state(ClockStateSnapshot(users=(user,)), now=NOW)
    prior = await store.peek_prior(THREAD, "telegram:42")
    assert (prior.user_tz, prior.any_channel_at, prior.any_channel) == (
        "Asia/Tokyo",
        later,
        "telegram",
    )
    [exported] = (await store.export_clock_state()).users
    assert exported.default_tz == "Asia/Tokyo" and exported.last_interaction_any_channel_at == later


async def test_import_is_one_transaction(store: SqliteStore) -> None:
    snapshot = ClockStateSnapshot(
        users=(UserClockState("telegram:1"),),
        threads=(ThreadClockState("not-a-thread-key"),),
    )
    with pytest.raises(ValueError, match="not a thread key"):
        await store.import_clock_state(snapshot, now=NOW)
    assert await store.get_user("telegram:1") is None


async def test_migration_3_keeps_participants_of_a_version_2_file(db_path: Path) -> None:
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 2)
        at = to_db(T0)
        await add_user_and_group(conn, at)
        await conn.execute(
            "INSERT INTO thread_participants VALUES (?, 'telegram:42', ?)", (THREAD, at)
        )
    store = SqliteStore(db_path)
    await store.open()
    try:
        thread = await store.get_thread(THREAD)
        assert thread is not None and thread.last_user_message_by_user == {"telegram:42": T0}
        later = T0 + timedelta(minutes=1)
        result = await store.record_inbound(inbound(later, user="42"))
        assert result.prior.user_last_message_here_at == T0
        thread = await store.get_thread(THREAD)
        assert thread is not None and thread.last_user_message_by_user == {"telegram:42": later}
    finally:
        await store.close()
    indexes = await sql(db_path, "SELECT name FROM sqlite_master WHERE type = 'index'")
    assert ("thread_participants_user",) in indexes


async def test_a_member_without_a_time_gets_one_when_they_speak(store: SqliteStore) -> None:
    thread = ThreadClockState(THREAD, participants=("telegram:42",))
    await store.import_clock_state(ClockStateSnapshot(threads=(thread,)), now=NOW)
    result = await store.record_inbound(inbound(NOW, user="42"))
    assert result.prior.user_last_message_here_at is None
    stored = await store.get_thread(THREAD)
    assert stored is not None and stored.last_user_message_by_user == {"telegram:42": NOW}


WRITTEN_BEFORE_LINKS = Path(__file__).parent / "data" / "clock_state_written_before_links.json"


async def test_an_export_written_before_links_were_exported_still_imports(
    store: SqliteStore,
) -> None:
    # Written by the relay before exports held links and chat types: telegram:1 and
    # discord:2 were linked, so each carries a copy of the person's zone and action.
    document = json.loads(WRITTEN_BEFORE_LINKS.read_text(encoding="utf-8"))
    assert "links" not in document
    now = datetime(2026, 12, 1, tzinfo=UTC)  # the file was written on 2026-11-21
    snapshot = read_clock_state(document, now=now)
    assert snapshot.links == ()

    counts = await store.import_clock_state(snapshot, now=now)
    assert counts == ImportCounts(users_created=3, threads_created=3)
    # Nothing says they were linked: each keeps its own copy, as before.
    assert await store.linked_users("telegram:1") == []
    for key in ("telegram:1", "discord:2"):
        data = await store.get_clock_data(key)
        assert data is not None and [a["id"] for a in data.latest_actions] == ["act_1"]
    exported = await store.export_clock_state()
    assert exported.users == snapshot.users and exported.links == ()


async def test_imported_links_join_a_link_the_store_already_has(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0, user="1", thread=DM, chat_type="dm"))
    await store.record_inbound(inbound(T0, user="3", channel="slack", thread=DM, chat_type="dm"))
    await store.link_users(["telegram:1", "slack:3"], now=T0)
    action = {"id": "a1", "label": "gym", "recorded_iso": "2026-01-01T00:00:00+00:00"}
    snapshot = ClockStateSnapshot(
        users=(
            UserClockState("discord:2", latest_actions=[action]),
            UserClockState("telegram:1", latest_actions=[action]),
        ),
        links=(("discord:2", "telegram:1"),),
    )
    counts = await store.import_clock_state(snapshot, now=NOW)
    assert counts == ImportCounts(users_created=1, users_merged=1, links=1)
    # Links are never undone by an import: slack:3 stays linked, now with discord:2 too.
    assert await store.linked_users("discord:2") == ["discord:2", "slack:3", "telegram:1"]
    data = await store.get_clock_data("slack:3")
    assert data is not None and data.latest_actions == [action]
    exported = await store.export_clock_state()
    assert exported.links == (("discord:2", "slack:3", "telegram:1"),)


async def test_import_keeps_an_api_groups_chat_type_and_who_chose_a_kind(
    store: SqliteStore,
) -> None:
    api_group = "agent:main:api:team"
    snapshot = ClockStateSnapshot(
        threads=(
            # An API key names no chat type; without the field this was a DM again.
            ThreadClockState(api_group, chat_type="group"),
            # Someone chose "conversation": the relay must not infer another kind.
            ThreadClockState(DM, kind="conversation", kind_source="explicit"),
            ThreadClockState(THREAD, kind="scheduling", kind_source="inferred"),
        )
    )
    await store.import_clock_state(snapshot, now=NOW)
    group = await store.get_thread(api_group)
    assert group is not None and group.chat_type == "group"
    assert not await store.set_thread_kind(DM, "scheduling", explicit=False)
    assert not await store.set_thread_kind(THREAD, "project", explicit=False)
    assert (await store.peek_prior(THREAD, "telegram:1")).thread_kind_source == "inferred"
    exported = await store.export_clock_state()
    assert [(t.chat_type, t.kind, t.kind_source) for t in exported.threads] == [
        ("group", "conversation", "default"),
        ("dm", "conversation", "explicit"),
        ("group", "scheduling", "inferred"),
    ]


async def test_a_members_leaving_and_names_move_with_the_clock_state(
    store: SqliteStore, tmp_path: Path
) -> None:
    # A member who left stays left in the store the file is imported into; each user
    # keeps their name; a later leaving wins, a stored name (newer) stays.
    await store.record_inbound(inbound(T0, user="a", name="Ana"))
    await store.record_inbound(inbound(T0, user="b", name="Bo"))
    await store.mark_left(THREAD, "telegram:b", T0 + timedelta(hours=1))
    snapshot = await store.export_clock_state()
    [thread] = snapshot.threads
    assert thread.left_by_user == {"telegram:b": T0 + timedelta(hours=1)}
    assert {u.user_key: u.display_name for u in snapshot.users} == {
        "telegram:a": "Ana",
        "telegram:b": "Bo",
    }

    moved = SqliteStore(tmp_path / "moved.db")
    await moved.open()
    try:
        await moved.record_inbound(inbound(T0, user="a", name="Ana María"))
        await moved.mark_left(THREAD, "telegram:b", T0)
        await moved.import_clock_state(snapshot, now=NOW)
        members = await moved.group_participants(THREAD, T0, 10)
        assert [(m.user_key, m.display_name) for m in members] == [("telegram:a", "Ana María")]
        assert (await moved.export_clock_state()).threads[0].left_by_user == thread.left_by_user
        # Writing again lists them, as on the store they left from.
        await moved.record_inbound(inbound(T0 + timedelta(hours=2), user="b", name=None))
        members = await moved.group_participants(THREAD, T0, 10)
        assert [(m.user_key, m.display_name) for m in members][0] == ("telegram:b", "Bo")
    finally:
        await moved.close()


async def test_a_members_name_in_each_thread_moves_with_the_clock_state(
    store: SqliteStore, tmp_path: Path
) -> None:
    # "Brunissimo" in the group, "Bruno" since in a DM: the group still names him by the
    # name he went by there, in the store the snapshot is imported into too; a name the
    # importing store already has for him there (newer) stays.
    await store.record_inbound(inbound(T0, user="b", name="Brunissimo"))
    await store.record_inbound(inbound(T0, user="c", name="Cara"))
    await store.record_inbound(inbound(T0, user="b", name="Bruno", thread=DM, chat_type="dm"))
    snapshot = await store.export_clock_state()
    group = next(t for t in snapshot.threads if t.thread_key == THREAD)
    assert group.display_name_by_user == {"telegram:b": "Brunissimo", "telegram:c": "Cara"}

    moved = SqliteStore(tmp_path / "moved.db")
    await moved.open()
    try:
        await moved.record_inbound(inbound(T0, user="c", name="Cara B."))
        await moved.import_clock_state(snapshot, now=NOW)
        members = await moved.group_participants(THREAD, T0, 10)
        assert sorted((m.user_key, m.display_name) for m in members) == [
            ("telegram:b", "Brunissimo"),
            ("telegram:c", "Cara B."),
        ]
        again = await moved.export_clock_state()
        assert next(t for t in again.threads if t.thread_key == THREAD).display_name_by_user == {
            "telegram:b": "Brunissimo",
            "telegram:c": "Cara B.",
        }
    finally:
        await moved.close()
