"""The store's temporal-awareness side: clock data, thread kinds, held tool calls, and
schema migration 4, against a real SQLite file."""

from __future__ import annotations

import asyncio
from datetime import timedelta, timezone
from pathlib import Path

import aiosqlite
import pytest

from middleware.store import (
    ClockData,
    ClockDataChange,
    ClockStateSnapshot,
    HeldToolCall,
    SqliteStore,
    ThreadClockState,
    UserClockState,
)
from middleware.store.migrations import MIGRATIONS, to_db
from tests.middleware.test_store import T0, THREAD, inbound, sql

DM = "agent:main:telegram:dm:42"
DISCORD_DM = "agent:main:discord:dm:7"
NOW = T0 + timedelta(days=1)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    # In an existing directory: the migration test builds an old-version file here.
    return tmp_path / "relay.db"


async def link(db_path: Path, person_id: str, *user_keys: str) -> None:
    """Link users to one person the way linking will leave the tables."""
    await sql(db_path, "INSERT INTO persons (person_id) VALUES (?)", (person_id,))
    marks = ", ".join("?" for _ in user_keys)
    await sql(
        db_path,
        f"UPDATE users SET person_id = ? WHERE user_key IN ({marks})",
        (person_id, *user_keys),
    )


async def two_linked_users(store: SqliteStore, db_path: Path) -> None:
    await store.record_inbound(inbound(T0, user="42", thread=DM, chat_type="dm"))
    await store.record_inbound(
        inbound(T0, user="7", channel="discord", thread=DISCORD_DM, chat_type="dm")
    )
    await link(db_path, "p1", "telegram:42", "discord:7")


def append_action(action: dict[str, str]) -> ClockDataChange:
    def change(data: ClockData) -> ClockData:
        return ClockData(data.policy_overrides, data.calibration, [*data.latest_actions, action])

    return change


def held_call(thread_key: str = THREAD, *, call_id: str = "call_1") -> HeldToolCall:
    return HeldToolCall(
        thread_key=thread_key,
        user_key="telegram:42",
        message={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "send_email", "arguments": '{"to": "ana@example.org"}'},
                }
            ],
        },
        names=("send_email", "delete_file"),
        model="gpt-test",
        held_at=T0,
        expires_at=T0 + timedelta(hours=1),
    )


# -- clock data --------------------------------------------------------------------------


async def test_clock_data_of_a_new_user_is_empty_and_of_an_unknown_one_none(
    store: SqliteStore,
) -> None:
    await store.record_inbound(inbound(T0))
    assert await store.get_clock_data("telegram:42") == ClockData()
    assert await store.get_clock_data("telegram:nobody") is None


async def test_update_clock_data_gives_the_change_the_stored_data(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    stored = ClockData(
        policy_overrides={"mode": "normal"},
        calibration={"activity_overrides": {"gym": {"typical_minutes": 60}}},
        latest_actions=[{"id": "a1", "label": "gym"}],
    )
    assert await store.update_clock_data("telegram:42", lambda _: stored) == stored
    assert await store.get_clock_data("telegram:42") == stored

    seen: list[ClockData] = []

    def change(data: ClockData) -> ClockData:
        seen.append(data)
        return ClockData(data.policy_overrides, data.calibration, [])

    after = await store.update_clock_data("telegram:42", change)
    assert seen == [stored]
    assert after == ClockData(stored.policy_overrides, stored.calibration, [])
    assert await store.get_clock_data("telegram:42") == after


async def test_update_returning_none_writes_nothing(store: SqliteStore, db_path: Path) -> None:
    await store.record_inbound(inbound(T0))
    stored = ClockData(latest_actions=[{"id": "a1"}])
    await store.update_clock_data("telegram:42", lambda _: stored)
    before = await sql(db_path, "SELECT policy_overrides, calibration, latest_actions FROM users")

    assert await store.update_clock_data("telegram:42", lambda _: None) == stored
    assert (
        await sql(db_path, "SELECT policy_overrides, calibration, latest_actions FROM users")
        == before
    )


async def test_update_of_an_unknown_user_is_none_and_never_calls_the_change(
    store: SqliteStore,
) -> None:
    calls: list[ClockData] = []

    def change(data: ClockData) -> ClockData:
        calls.append(data)
        return data

    assert await store.update_clock_data("telegram:nobody", change) is None
    assert calls == []
    assert await store.get_user("telegram:nobody") is None


async def test_concurrent_updates_never_lose_each_other(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    await asyncio.gather(
        store.update_clock_data("telegram:42", append_action({"id": "a1"})),
        store.update_clock_data("telegram:42", append_action({"id": "a2"})),
    )
    data = await store.get_clock_data("telegram:42")
    assert data is not None
    assert sorted(a["id"] for a in data.latest_actions) == ["a1", "a2"]

    # Many at once, from several turns: every append survives.
    await asyncio.gather(
        *(store.update_clock_data("telegram:42", append_action({"id": f"b{i}"})) for i in range(50))
    )
    data = await store.get_clock_data("telegram:42")
    assert data is not None and len(data.latest_actions) == 52


async def test_a_change_that_raises_writes_nothing(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    await store.update_clock_data("telegram:42", append_action({"id": "a1"}))

    def broken(data: ClockData) -> ClockData:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await store.update_clock_data("telegram:42", broken)
    assert await store.get_clock_data("telegram:42") == ClockData(latest_actions=[{"id": "a1"}])


async def test_linked_users_share_the_persons_clock_data(store: SqliteStore, db_path: Path) -> None:
    await two_linked_users(store, db_path)
    await store.update_clock_data("telegram:42", append_action({"id": "a1"}))
    await store.update_clock_data("discord:7", append_action({"id": "a2"}))

    both = ClockData(latest_actions=[{"id": "a1"}, {"id": "a2"}])
    assert await store.get_clock_data("telegram:42") == both
    assert await store.get_clock_data("discord:7") == both
    # Kept on the person's row, not on either user's.
    assert await sql(db_path, "SELECT latest_actions FROM users") == [(None,), (None,)]
    [(on_person,)] = await sql(db_path, "SELECT latest_actions FROM persons")
    assert on_person is not None and '"a2"' in on_person

    prior = await store.peek_prior(DISCORD_DM, "discord:7")
    assert prior.clock_data == both and prior.person_id == "p1"


async def test_linked_users_concurrent_updates_both_survive(
    store: SqliteStore, db_path: Path
) -> None:
    await two_linked_users(store, db_path)
    await asyncio.gather(
        store.update_clock_data("telegram:42", append_action({"id": "a1"})),
        store.update_clock_data("discord:7", append_action({"id": "a2"})),
    )
    data = await store.get_clock_data("discord:7")
    assert data is not None
    assert sorted(a["id"] for a in data.latest_actions) == ["a1", "a2"]


# -- prior state -------------------------------------------------------------------------


async def test_prior_state_carries_clock_data_and_held_call(store: SqliteStore) -> None:
    first = await store.record_inbound(inbound(T0))
    assert first.prior.clock_data == ClockData()
    assert first.prior.held_call_expires_at is None
    assert first.prior.thread_kind_source is None

    data = ClockData(policy_overrides={"mode": "light"}, latest_actions=[{"id": "a1"}])
    await store.update_clock_data("telegram:42", lambda _: data)
    held = held_call()
    await store.hold_tool_call(held)

    peeked = await store.peek_prior(THREAD, "telegram:42")
    assert peeked.clock_data == data
    assert peeked.held_call_expires_at == held.expires_at
    assert peeked.thread_kind_source == "default"
    second = await store.record_inbound(inbound(T0 + timedelta(minutes=1)))
    assert second.prior == peeked

    # The held call belongs to the thread: another thread sees none.
    other = await store.peek_prior(DM, "telegram:42")
    assert other.held_call_expires_at is None and other.clock_data == data

    await store.take_held_tool_call(THREAD)
    assert (await store.peek_prior(THREAD, "telegram:42")).held_call_expires_at is None


async def test_prior_state_of_unknown_keys_has_empty_clock_data(store: SqliteStore) -> None:
    prior = await store.peek_prior("agent:main:api:nobody", "api:nobody")
    assert prior.clock_data == ClockData()
    assert prior.held_call_expires_at is None and prior.thread_kind_source is None


# -- thread kind -------------------------------------------------------------------------


async def kind_of(store: SqliteStore, thread_key: str = THREAD) -> tuple[str | None, str | None]:
    prior = await store.peek_prior(thread_key, "telegram:42")
    return prior.thread_kind, prior.thread_kind_source


async def test_inferred_kind_is_stored_only_while_the_kind_is_the_default(
    store: SqliteStore,
) -> None:
    await store.record_inbound(inbound(T0))
    assert await kind_of(store) == ("conversation", "default")

    assert await store.set_thread_kind(THREAD, "project", explicit=False) is True
    assert await kind_of(store) == ("project", "inferred")
    # A later inference does not overwrite an earlier one.
    assert await store.set_thread_kind(THREAD, "scheduling", explicit=False) is False
    assert await kind_of(store) == ("project", "inferred")


async def test_explicit_kind_always_stored_and_never_overwritten_by_inference(
    store: SqliteStore,
) -> None:
    await store.record_inbound(inbound(T0))
    assert await store.set_thread_kind(THREAD, "operations", explicit=True) is True
    assert await kind_of(store) == ("operations", "explicit")

    assert await store.set_thread_kind(THREAD, "project", explicit=False) is False
    assert await kind_of(store) == ("operations", "explicit")

    assert await store.set_thread_kind(THREAD, "conversation", explicit=True) is True
    assert await kind_of(store) == ("conversation", "explicit")
    # Explicitly back to "conversation" is still a choice an inference must respect.
    assert await store.set_thread_kind(THREAD, "project", explicit=False) is False
    thread = await store.get_thread(THREAD)
    assert thread is not None and thread.kind == "conversation"

    # Explicit over an inference.
    await store.record_inbound(inbound(T0, thread=DM, chat_type="dm"))
    await store.set_thread_kind(DM, "project", explicit=False)
    assert await store.set_thread_kind(DM, "scheduling", explicit=True) is True
    assert await kind_of(store, DM) == ("scheduling", "explicit")


async def test_kind_of_an_unknown_thread_is_not_set(store: SqliteStore) -> None:
    assert await store.set_thread_kind("agent:main:api:x", "project", explicit=True) is False
    assert await store.set_thread_kind("agent:main:api:x", "project", explicit=False) is False
    assert await store.get_thread("agent:main:api:x") is None


# -- held tool calls ---------------------------------------------------------------------


async def test_hold_then_take_returns_the_same_call_once(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    held = held_call()
    await store.hold_tool_call(held)

    taken = await store.take_held_tool_call(THREAD)
    assert taken == held
    assert taken is not None
    assert taken.message["tool_calls"][0]["function"]["name"] == "send_email"
    assert taken.names == ("send_email", "delete_file")
    assert taken.held_at.tzinfo is not None and taken.expires_at == T0 + timedelta(hours=1)

    assert await store.take_held_tool_call(THREAD) is None


async def test_held_instants_in_other_offsets_come_back_equal(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    tokyo = timezone(timedelta(hours=9))
    held = held_call()
    held = HeldToolCall(
        held.thread_key,
        held.user_key,
        held.message,
        held.names,
        held.model,
        held_at=T0.astimezone(tokyo),
        expires_at=(T0 + timedelta(minutes=30)).astimezone(tokyo),
    )
    await store.hold_tool_call(held)
    taken = await store.take_held_tool_call(THREAD)
    assert taken is not None
    assert (taken.held_at, taken.expires_at) == (T0, T0 + timedelta(minutes=30))


async def test_holding_twice_keeps_only_the_newer_call(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    await store.record_inbound(inbound(T0, thread=DM, chat_type="dm"))
    older = held_call(call_id="old")
    newer = HeldToolCall(
        THREAD,
        "telegram:42",
        held_call(call_id="new").message,
        ("transfer_money",),
        "gpt-other",
        held_at=T0 + timedelta(minutes=5),
        expires_at=T0 + timedelta(minutes=65),
    )
    elsewhere = held_call(DM, call_id="dm")
    await store.hold_tool_call(older)
    await store.hold_tool_call(elsewhere)
    await store.hold_tool_call(newer)

    assert await store.take_held_tool_call(THREAD) == newer
    assert await store.take_held_tool_call(THREAD) is None
    # One call per thread: the other thread's held call is untouched.
    assert await store.take_held_tool_call(DM) == elsewhere


async def test_take_in_a_thread_without_a_call_is_none(store: SqliteStore) -> None:
    assert await store.take_held_tool_call("agent:main:api:nobody") is None


# -- export and import -------------------------------------------------------------------


async def test_export_gives_linked_users_the_persons_clock_data(
    store: SqliteStore, db_path: Path
) -> None:
    await two_linked_users(store, db_path)
    await store.record_inbound(inbound(T0, user="solo"))
    data = ClockData(
        policy_overrides={"mode": "normal"},
        calibration={"activity_overrides": {"gym": {"typical_minutes": 60}}},
        latest_actions=[{"id": "a1", "label": "gym"}],
    )
    await store.update_clock_data("discord:7", lambda _: data)

    users = {u.user_key: u for u in (await store.export_clock_state()).users}
    for key in ("telegram:42", "discord:7"):
        assert users[key].latest_actions == data.latest_actions
        assert users[key].calibration == data.calibration
        assert users[key].policy_overrides == data.policy_overrides
    solo = users["telegram:solo"]
    assert (solo.latest_actions, solo.calibration, solo.policy_overrides) == ([], {}, {})


async def test_import_merges_actions_into_the_persons_row(
    store: SqliteStore, db_path: Path
) -> None:
    await two_linked_users(store, db_path)
    await store.update_clock_data(
        "telegram:42",
        lambda _: ClockData(
            policy_overrides={"mode": "light"},
            latest_actions=[{"id": "a1", "status": "planned"}, {"id": "a2"}],
        ),
    )
    imported = UserClockState(
        "discord:7",
        policy_overrides={"auto_clock_temporal_actions": False},
        latest_actions=[{"id": "a1", "status": "done"}, {"id": "a3"}],
        calibration={"activity_overrides": {"gym": {"typical_minutes": 45}}},
    )
    await store.import_clock_state(ClockStateSnapshot(users=(imported,)), now=NOW)

    expected = ClockData(
        policy_overrides={"mode": "light", "auto_clock_temporal_actions": False},
        calibration={"activity_overrides": {"gym": {"typical_minutes": 45}}},
        latest_actions=[{"id": "a1", "status": "done"}, {"id": "a2"}, {"id": "a3"}],
    )
    assert await store.get_clock_data("telegram:42") == expected
    assert await store.get_clock_data("discord:7") == expected
    assert await sql(db_path, "SELECT latest_actions FROM users") == [(None,), (None,)]


async def test_importing_a_kind_makes_it_explicit(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    thread = ThreadClockState(THREAD, kind="project")
    created = ThreadClockState(DM, kind="scheduling")
    await store.import_clock_state(ClockStateSnapshot(threads=(thread, created)), now=NOW)
    assert await kind_of(store) == ("project", "explicit")
    assert await kind_of(store, DM) == ("scheduling", "explicit")
    assert await store.set_thread_kind(THREAD, "operations", explicit=False) is False
    assert await store.set_thread_kind(DM, "operations", explicit=False) is False
    assert await kind_of(store) == ("project", "explicit")


async def test_importing_without_a_kind_leaves_the_source(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    await store.set_thread_kind(THREAD, "project", explicit=False)
    await store.import_clock_state(
        ClockStateSnapshot(
            threads=(ThreadClockState(THREAD, session_tz="UTC"), ThreadClockState(DM))
        ),
        now=NOW,
    )
    assert await kind_of(store) == ("project", "inferred")
    assert await kind_of(store, DM) == ("conversation", "default")


# -- migration 4 -------------------------------------------------------------------------


async def test_migration_4_marks_chosen_kinds_explicit(db_path: Path) -> None:
    project = "agent:main:telegram:group:-1002"
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        for version, script in MIGRATIONS[:3]:
            await conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
        at = to_db(T0)
        await conn.execute(
            "INSERT INTO threads (thread_key, channel, chat_type, kind, created_at) "
            "VALUES (?, 'telegram', 'group', 'project', ?), "
            "(?, 'telegram', 'group', 'conversation', ?)",
            (project, at, THREAD, at),
        )
    store = SqliteStore(db_path)
    await store.open()
    try:
        assert await kind_of(store, project) == ("project", "explicit")
        assert await kind_of(store, THREAD) == ("conversation", "default")
        assert await store.set_thread_kind(project, "scheduling", explicit=False) is False
        assert await store.set_thread_kind(THREAD, "scheduling", explicit=False) is True
        assert await kind_of(store, THREAD) == ("scheduling", "inferred")

        # The new tables and columns work on the upgraded file.
        await store.record_inbound(inbound(T0 + timedelta(minutes=1), thread=project))
        await store.hold_tool_call(held_call(project))
        assert await store.take_held_tool_call(project) == held_call(project)
        await store.update_clock_data("telegram:42", append_action({"id": "a1"}))
        assert await store.get_clock_data("telegram:42") == ClockData(latest_actions=[{"id": "a1"}])
    finally:
        await store.close()
    tables = {row[0] for row in await sql(db_path, "SELECT name FROM sqlite_master")}
    assert "held_tool_calls" in tables


async def test_export_then_import_keeps_an_unchosen_kind_open_to_inference(
    store: SqliteStore,
) -> None:
    await store.record_inbound(inbound(T0))
    await store.import_clock_state(await store.export_clock_state(), now=T0 + timedelta(days=1))
    assert await kind_of(store) == ("conversation", "default")
    assert await store.set_thread_kind(THREAD, "scheduling", explicit=False) is True


async def test_migration_4_hands_a_linked_users_data_to_the_person(db_path: Path) -> None:
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        for version, script in MIGRATIONS[:3]:
            await conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
        await conn.execute("INSERT INTO persons (person_id) VALUES ('p1')")
        await conn.execute(
            "INSERT INTO users (user_key, channel, platform_user_id, created_at, person_id, "
            "latest_actions, policy_overrides) VALUES ('telegram:42', 'telegram', '42', ?, "
            '\'p1\', \'[{"id": "a1"}]\', \'{"mode": "normal"}\')',
            (to_db(T0),),
        )
    store = SqliteStore(db_path)
    await store.open()
    try:
        data = await store.get_clock_data("telegram:42")
    finally:
        await store.close()
    assert data == ClockData(policy_overrides={"mode": "normal"}, latest_actions=[{"id": "a1"}])
