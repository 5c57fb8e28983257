"""The SQLite store, against a real database file in ``tmp_path``."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from middleware.commands import match_command
from middleware.errors import StoreError
from middleware.store import ClockData, InboundRecord, SqliteStore
from middleware.store.migrations import LATEST_VERSION, MIGRATIONS, from_db, to_db
from middleware.types import ChatType

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
THREAD = "agent:main:telegram:group:-1001"


def inbound(
    at: datetime,
    *,
    user: str = "42",
    channel: str = "telegram",
    thread: str = THREAD,
    text: str = "hello",
    name: str | None = "Ada",
    chat_type: ChatType = "group",
    cross_channel: bool = True,
) -> InboundRecord:
    return InboundRecord(
        user_key=f"{channel}:{user}",
        channel=channel,
        platform_user_id=user,
        display_name=name,
        thread_key=thread,
        chat_type=chat_type,
        text=text,
        received_at=at,
        cross_channel=cross_channel,
    )


async def sql(path: Path, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the file through a connection of its own, and commit."""
    async with aiosqlite.connect(path) as conn:
        rows = [tuple(row) for row in await conn.execute_fetchall(statement, params)]
        await conn.commit()
    return rows


async def migrate_to(conn: aiosqlite.Connection, last: int) -> None:
    """Apply the migrations up to version ``last``, as the relay of that time did."""
    for version, script in MIGRATIONS:
        if version <= last:
            await conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")


async def add_user(conn: aiosqlite.Connection, at: str) -> None:
    """Telegram user 42, created at ``at``, written as a relay of any version did."""
    await conn.execute(
        "INSERT INTO users (user_key, channel, platform_user_id, created_at) "
        "VALUES ('telegram:42', 'telegram', '42', ?)",
        (at,),
    )


async def add_user_and_group(conn: aiosqlite.Connection, at: str) -> None:
    """Telegram user 42 and the group ``THREAD``, both created at ``at``."""
    await add_user(conn, at)
    await conn.execute(
        "INSERT INTO threads (thread_key, channel, chat_type, created_at) "
        "VALUES (?, 'telegram', 'group', ?)",
        (THREAD, at),
    )


async def test_open_applies_migrations_and_reopening_keeps_data(db_path: Path) -> None:
    first = SqliteStore(db_path)
    await first.open()
    await first.record_inbound(inbound(T0))
    await first.close()

    assert await sql(db_path, "PRAGMA user_version") == [(LATEST_VERSION,)]
    tables = {row[0] for row in await sql(db_path, "SELECT name FROM sqlite_master")}
    assert {"users", "persons", "threads", "thread_participants", "messages"} <= tables

    again = SqliteStore(db_path)
    await again.open()
    try:
        assert await again.ping()
        assert len(await again.transcript(THREAD)) == 1
    finally:
        await again.close()
    assert await sql(db_path, "PRAGMA user_version") == [(LATEST_VERSION,)]


async def test_database_in_wal_mode(store: SqliteStore, db_path: Path) -> None:
    assert await sql(db_path, "PRAGMA journal_mode") == [("wal",)]


async def test_record_inbound_then_read_back(store: SqliteStore) -> None:
    message_id = (await store.record_inbound(inbound(T0, text="clock it: gym"))).message_id

    user = await store.get_user("telegram:42")
    assert user is not None
    assert (user.channel, user.platform_user_id, user.display_name) == ("telegram", "42", "Ada")
    assert user.person_id is None and user.default_tz is None and user.locale is None
    assert user.last_interaction_any_channel_at == T0
    assert user.last_channel == "telegram"

    thread = await store.get_thread(THREAD)
    assert thread is not None
    assert (thread.channel, thread.chat_type, thread.kind) == ("telegram", "group", "conversation")
    assert thread.session_tz is None
    assert thread.last_user_message_at == T0
    assert thread.last_interaction_at == T0
    assert thread.last_agent_message_at is None
    assert thread.last_user_message_by_user == {"telegram:42": T0}
    assert thread.last_user_message_at is not None
    assert thread.last_user_message_at.tzinfo is UTC

    [message] = await store.transcript(THREAD)
    assert message.id == message_id
    assert (message.user_key, message.role, message.text) == (
        "telegram:42",
        "user",
        "clock it: gym",
    )
    assert message.at == T0 and message.complete


async def test_unknown_keys_read_as_none(store: SqliteStore) -> None:
    assert await store.get_user("telegram:nobody") is None
    assert await store.get_thread("agent:main:telegram:dm:nobody") is None
    assert await store.transcript("agent:main:telegram:dm:nobody") == []


async def test_display_name_updates_only_when_given(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0, name="Ada"))
    await store.record_inbound(inbound(T0 + timedelta(seconds=1), name=None))
    user = await store.get_user("telegram:42")
    assert user is not None and user.display_name == "Ada"
    await store.record_inbound(inbound(T0 + timedelta(seconds=2), name="Ada L."))
    user = await store.get_user("telegram:42")
    assert user is not None and user.display_name == "Ada L."


async def test_instants_in_other_offsets_are_stored_as_utc(store: SqliteStore) -> None:
    kathmandu = timezone(timedelta(hours=5, minutes=45))
    await store.record_inbound(inbound(datetime(2025, 3, 1, 14, 45, tzinfo=kathmandu)))
    thread = await store.get_thread(THREAD)
    assert thread is not None and thread.last_user_message_at == T0
    assert to_db(T0) == "2025-03-01T09:00:00.000000+00:00"
    assert from_db(to_db(T0)) == T0


async def test_naive_instant_is_refused(store: SqliteStore) -> None:
    with pytest.raises(ValueError, match="aware"):
        await store.record_inbound(inbound(datetime(2025, 3, 1, 9, 0)))


async def test_earlier_message_arriving_late_moves_no_time_backwards(store: SqliteStore) -> None:
    later, earlier = T0 + timedelta(hours=1), T0
    await store.record_inbound(inbound(later, text="second"))
    await store.record_inbound(inbound(earlier, text="first"))

    thread = await store.get_thread(THREAD)
    assert thread is not None
    assert thread.last_user_message_at == later
    assert thread.last_interaction_at == later
    assert thread.last_user_message_by_user == {"telegram:42": later}
    user = await store.get_user("telegram:42")
    assert user is not None and user.last_interaction_any_channel_at == later
    # The transcript keeps the order messages were recorded in.
    assert [m.text for m in await store.transcript(THREAD)] == ["second", "first"]


async def test_reply_moves_agent_and_interaction_times(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    reply_at = T0 + timedelta(seconds=3)
    reply_id = await store.record_reply(THREAD, "partial answ", reply_at, complete=False)

    thread = await store.get_thread(THREAD)
    assert thread is not None
    assert thread.last_agent_message_at == reply_at
    assert thread.last_interaction_at == reply_at
    assert thread.last_user_message_at == T0

    user_line, reply_line = await store.transcript(THREAD)
    assert (user_line.role, reply_line.role) == ("user", "assistant")
    assert reply_line.id == reply_id and reply_line.id > user_line.id
    assert reply_line.user_key is None and not reply_line.complete
    assert reply_line.text == "partial answ" and reply_line.at == reply_at

    # A reply stamped earlier than what is stored moves nothing back.
    await store.record_reply(THREAD, "late", T0 + timedelta(seconds=1))
    thread = await store.get_thread(THREAD)
    assert thread is not None and thread.last_agent_message_at == reply_at


async def test_reply_in_unknown_thread_is_a_store_error(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match="unknown thread"):
        await store.record_reply("agent:main:api:missing", "hi", T0)
    assert await store.transcript("agent:main:api:missing") == []


async def test_not_cross_channel_leaves_any_channel_time_alone(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0, cross_channel=False))
    user = await store.get_user("telegram:42")
    assert user is not None
    assert user.last_interaction_any_channel_at is None and user.last_channel is None

    await store.record_inbound(inbound(T0 + timedelta(minutes=1)))
    await store.record_inbound(inbound(T0 + timedelta(minutes=2), cross_channel=False))
    user = await store.get_user("telegram:42")
    assert user is not None
    assert user.last_interaction_any_channel_at == T0 + timedelta(minutes=1)
    # The thread's own clock still moves.
    thread = await store.get_thread(THREAD)
    assert thread is not None and thread.last_user_message_at == T0 + timedelta(minutes=2)


async def test_linked_person_time_moves_with_any_linked_account(
    store: SqliteStore, db_path: Path
) -> None:
    # Linking comes later; set it up the way it will end up in the tables.
    await store.record_inbound(inbound(T0, user="42", channel="telegram"))
    await store.record_inbound(
        inbound(T0, user="7", channel="discord", thread="agent:main:discord:dm:7")
    )
    await sql(db_path, "INSERT INTO persons (person_id) VALUES ('p1')")
    await sql(
        db_path,
        "UPDATE users SET person_id = 'p1' WHERE user_key IN (?, ?)",
        ("telegram:42", "discord:7"),
    )

    async def person() -> tuple[Any, ...]:
        [row] = await sql(
            db_path,
            "SELECT last_interaction_any_channel_at, last_channel FROM persons "
            "WHERE person_id = 'p1'",
        )
        return (from_db(row[0]), row[1])

    await store.record_inbound(inbound(T0 + timedelta(hours=1), user="42", channel="telegram"))
    assert await person() == (T0 + timedelta(hours=1), "telegram")

    dm = "agent:main:discord:dm:7"
    await store.record_inbound(
        inbound(T0 + timedelta(hours=2), user="7", channel="discord", thread=dm)
    )
    assert await person() == (T0 + timedelta(hours=2), "discord")

    # Earlier, or not counted across channels: the person keeps its latest time.
    await store.record_inbound(inbound(T0 + timedelta(minutes=90), user="42", channel="telegram"))
    await store.record_inbound(
        inbound(T0 + timedelta(hours=3), user="42", channel="telegram", cross_channel=False)
    )
    assert await person() == (T0 + timedelta(hours=2), "discord")
    linked = await store.get_user("telegram:42")
    assert linked is not None and linked.person_id == "p1"


async def test_concurrent_inbound_messages_all_land(store: SqliteStore) -> None:
    instants = [T0 + timedelta(seconds=i) for i in range(200)]
    random.Random(7).shuffle(instants)
    results = await asyncio.gather(
        *(
            store.record_inbound(inbound(at, user=str(i % 5), text=f"m{i}"))
            for i, at in enumerate(instants)
        )
    )
    ids = [result.message_id for result in results]
    assert len(set(ids)) == 200

    transcript = await store.transcript(THREAD, limit=500)
    assert len(transcript) == 200
    assert sorted(m.id for m in transcript) == sorted(ids)
    thread = await store.get_thread(THREAD)
    assert thread is not None
    assert thread.last_user_message_at == max(instants)
    assert len(thread.last_user_message_by_user) == 5
    for user, last in thread.last_user_message_by_user.items():
        mine = [at for i, at in enumerate(instants) if f"telegram:{i % 5}" == user]
        assert last == max(mine)


async def test_transcript_returns_the_last_messages_oldest_first(store: SqliteStore) -> None:
    for i in range(5):
        await store.record_inbound(inbound(T0 + timedelta(seconds=i), text=f"m{i}"))
    assert [m.text for m in await store.transcript(THREAD, limit=3)] == ["m2", "m3", "m4"]
    assert await store.transcript(THREAD, limit=0) == []


async def test_parent_path_is_a_file_gives_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = SqliteStore(blocker / "relay.db")
    with pytest.raises(StoreError, match="not-a-dir") as info:
        await store.open()
    assert "writ" in str(info.value)
    assert not await store.ping()
    await store.close()


async def test_path_is_a_directory_gives_store_error(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    with pytest.raises(StoreError, match=re.escape(str(tmp_path))):
        await store.open()


async def test_newer_schema_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    await sql(db_path, f"PRAGMA user_version = {LATEST_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        await SqliteStore(db_path).open()


async def test_closed_store_refuses_use_and_closes_twice(db_path: Path) -> None:
    store = SqliteStore(db_path)
    assert not await store.ping()
    with pytest.raises(StoreError, match="not open"):
        await store.get_user("telegram:42")
    await store.open()
    assert await store.ping()
    await store.close()
    await store.close()
    assert not await store.ping()
    with pytest.raises(StoreError, match="not open"):
        await store.record_inbound(inbound(T0))


async def test_prior_state_is_what_came_before(store: SqliteStore) -> None:
    first = await store.record_inbound(inbound(T0))
    assert first.prior.thread_last_user_message_at is None
    assert first.prior.any_channel_at is None
    await store.record_reply(THREAD, "hello", T0 + timedelta(seconds=5))
    await store.set_user_timezone("telegram:42", "Asia/Tokyo")
    await store.set_thread_timezone(THREAD, "Europe/Berlin")
    second = await store.record_inbound(inbound(T0 + timedelta(hours=3)))
    prior = second.prior
    assert prior.thread_last_user_message_at == T0
    assert prior.user_last_message_here_at == T0
    assert prior.thread_last_agent_message_at == T0 + timedelta(seconds=5)
    assert prior.thread_last_interaction_at == T0 + timedelta(seconds=5)
    assert (prior.any_channel_at, prior.any_channel) == (T0, "telegram")
    assert (prior.user_tz, prior.thread_tz, prior.thread_kind) == (
        "Asia/Tokyo",
        "Europe/Berlin",
        "conversation",
    )


async def test_timezones_of_unknown_rows_are_not_set(store: SqliteStore) -> None:
    assert await store.set_user_timezone("telegram:nobody", "UTC") is False
    assert await store.set_thread_timezone("agent:main:x", "UTC") is False


async def test_timezone_may_create_a_user_before_their_first_message(
    store: SqliteStore, db_path: Path
) -> None:
    created = T0 - timedelta(days=1)
    assert await store.set_user_timezone("telegram:42", "Asia/Tokyo", create_at=created)
    user = await store.get_user("telegram:42")
    assert user is not None and user.default_tz == "Asia/Tokyo"
    assert user.last_interaction_any_channel_at is None
    assert await store.get_thread(THREAD) is None
    first = await store.record_inbound(inbound(T0, user="42", channel="telegram"))
    assert first.prior.user_tz == "Asia/Tokyo" and first.prior.any_channel_at is None
    # Known now: set again, it is not created again.
    assert await store.set_user_timezone("telegram:42", "UTC", create_at=T0 + timedelta(days=1))
    rows = await sql(db_path, "SELECT created_at FROM users WHERE user_key = 'telegram:42'")
    assert rows == [(to_db(created),)]


async def test_linked_person_timezone_applies(store: SqliteStore, db_path: Path) -> None:
    await store.record_inbound(inbound(T0, user="42", channel="telegram"))
    await sql(db_path, "INSERT INTO persons (person_id) VALUES ('p1')")
    await sql(db_path, "UPDATE users SET person_id = 'p1' WHERE user_key = 'telegram:42'")
    assert await store.set_user_timezone("telegram:42", "Asia/Kathmandu") is True
    later = await store.record_inbound(inbound(T0 + timedelta(minutes=1), user="42"))
    assert later.prior.user_tz == "Asia/Kathmandu"
    assert later.prior.person_id == "p1"


async def test_group_participants_recent_first(store: SqliteStore) -> None:
    for minute, user in enumerate(["a", "b", "c", "a"]):
        await store.record_inbound(inbound(T0 + timedelta(minutes=minute), user=user))
    await store.set_user_timezone("telegram:b", "Asia/Tokyo")
    members = await store.group_participants(THREAD, T0 + timedelta(minutes=1), 10)
    assert [(m.user_key, m.default_tz) for m in members] == [
        ("telegram:a", None),
        ("telegram:c", None),
        ("telegram:b", "Asia/Tokyo"),
    ]
    assert len(await store.group_participants(THREAD, T0, 2)) == 2


async def test_a_member_who_left_is_no_participant_until_they_write_again(
    store: SqliteStore,
) -> None:
    topic = f"{THREAD}:topic:7"
    for minute, (user, thread) in enumerate([("a", THREAD), ("b", THREAD), ("a", topic)]):
        await store.record_inbound(
            inbound(T0 + timedelta(minutes=minute), user=user, thread=thread)
        )
    other = "agent:main:telegram:group:-10012"  # shares the digits, not the chat
    await store.record_inbound(inbound(T0, user="a", thread=other))

    def keys(members: list[Any]) -> list[str]:
        return [m.user_key for m in members]

    # The chat and its topics, not another chat; a member never seen there marks nothing.
    assert await store.mark_left(THREAD, "telegram:a", T0 + timedelta(minutes=5)) == 2
    assert await store.mark_left(THREAD, "telegram:zz", T0) == 0
    assert keys(await store.group_participants(THREAD, T0, 10)) == ["telegram:b"]
    assert keys(await store.group_participants(topic, T0, 10)) == []
    assert keys(await store.group_participants(other, T0, 10)) == ["telegram:a"]
    # An older leaving (replayed late) keeps the newer mark; writing again lists them.
    await store.mark_left(THREAD, "telegram:a", T0)
    await store.record_inbound(inbound(T0 + timedelta(minutes=4), user="a"))
    assert keys(await store.group_participants(THREAD, T0, 10)) == ["telegram:b"]
    await store.record_inbound(inbound(T0 + timedelta(minutes=6), user="a"))
    assert keys(await store.group_participants(THREAD, T0, 10)) == ["telegram:a", "telegram:b"]


async def test_group_plan_holders_are_members_holding_a_plan_for_the_group_however_quiet(
    store: SqliteStore,
) -> None:
    """Whoever clocked a plan for the group and still holds it, the speaker's window and a
    leaving mark aside; a private action, a plan for another group or one the holder did
    not clock (left in their data by an import) makes no holder."""
    other = "agent:main:telegram:group:-1002"
    for minute, user in enumerate(["a", "b", "c", "d", "e"]):
        await store.record_inbound(inbound(T0 + timedelta(minutes=minute), user=user))

    def action(user: str, scope: str, thread: str = THREAD) -> dict[str, Any]:
        return {
            "id": f"act_{user}",
            "label": "Standup notes",
            "type": "plan",
            "status": "planned",
            "recorded_iso": T0.isoformat(),
            "expires_iso": (T0 + timedelta(days=3)).isoformat(),
            "thread_key": thread,
            "source": "clock_it",
            "scope": scope,
            "user_key": f"telegram:{user}",
        }

    def holding(stored: dict[str, Any]) -> Callable[[ClockData], ClockData]:
        return lambda data: replace(data, latest_actions=[stored])

    held = {
        "a": action("a", "group"),
        "b": action("b", "user"),
        "c": action("c", "group", other),
        "d": action("b", "group"),
        "e": action("e", "group"),
    }
    for user, stored in held.items():
        await store.update_clock_data(f"telegram:{user}", holding(stored))
    await store.mark_left(THREAD, "telegram:a", T0 + timedelta(days=1))

    holders = await store.group_plan_holders(THREAD, 10)
    assert [m.user_key for m in holders] == ["telegram:e", "telegram:a"]
    assert holders[1].display_name == "Ada" and holders[1].namesake
    assert [m.user_key for m in await store.group_plan_holders(THREAD, 1)] == ["telegram:e"]
    assert await store.group_plan_holders(other, 10) == []  # "c" never wrote there


async def test_namesakes_are_compared_by_unicode_case_folding_on_every_connection(
    store: SqliteStore,
) -> None:
    """The stored label and the participants' namesake mark fold case as ``member_labels``
    does (``identity.name_key``), not as SQLite's ASCII-only NOCASE: "Élodie" and "élodie"
    are namesakes, "Strauß" and "STRAUSS" too. Every connection the store opens can call
    ``name_key``: a statement that does would fail on one that could not."""
    await store.record_inbound(inbound(T0, user="1", name="Élodie"))
    assert await store.speaker_label(THREAD, "group", "telegram:2", "élodie") == (
        "élodie (telegram:2)"
    )
    await store.record_inbound(inbound(T0 + timedelta(minutes=1), user="2", name="élodie"))
    await store.record_inbound(inbound(T0 + timedelta(minutes=2), user="3", name="Strauß"))
    await store.record_inbound(inbound(T0 + timedelta(minutes=3), user="4", name="STRAUSS"))
    speakers = [m.speaker_name for m in await store.transcript_from(THREAD, None, 9)]
    assert speakers == ["Élodie", "élodie (telegram:2)", "Strauß", "STRAUSS (telegram:4)"]
    members = await store.group_participants(THREAD, T0, 10)
    assert all(m.namesake for m in members)

    assert store._batcher is not None and store._reader and store._writer
    inline = store._batcher._inline
    assert inline.execute("SELECT name_key('Élodie')").fetchone() == ("élodie",)
    for conn in (store._reader, store._writer):
        assert list(await conn.execute_fetchall("SELECT name_key('Élodie')")) == [("élodie",)]


async def test_injections_the_latest_one_wins(store: SqliteStore) -> None:
    """A message sent again as the newest (a retry) was forwarded with its new block."""
    await store.record_inbound(inbound(T0))
    await store.save_injection(THREAD, "abc", 0, "block one", T0)
    await store.save_injection(THREAD, "abc", 1, "block three", T0)
    await store.save_injection(THREAD, "abc", 0, "block two", T0 + timedelta(minutes=1))
    # Oldest first: the block saved again moved to its new instant.
    assert list((await store.injections(THREAD)).items()) == [
        (("abc", 1), "block three"),
        (("abc", 0), "block two"),
    ]


async def test_injections_are_listed_oldest_first(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    await store.record_inbound(inbound(T0, thread="other"))
    assert not await store.has_injections(THREAD)
    for n in (3, 0, 4, 1, 2):
        await store.save_injection(THREAD, f"m{n}", 0, f"block {n}", T0 + timedelta(minutes=n))
    assert list((await store.injections(THREAD)).items()) == [
        ((f"m{n}", 0), f"block {n}") for n in range(5)
    ]
    assert await store.has_injections(THREAD)
    assert not await store.has_injections("other")


async def test_migration_8_drops_the_recent_index_and_keeps_the_blocks(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 7)
        await conn.execute(
            "INSERT INTO threads (thread_key, channel, chat_type, created_at) "
            "VALUES (?, 'telegram', 'dm', ?)",
            (THREAD, to_db(T0)),
        )
        await conn.execute(
            "INSERT INTO injections VALUES (?, 'abc', 0, 'block one', ?)", (THREAD, to_db(T0))
        )
    indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'injections'"
    assert ("injections_recent",) in await sql(db_path, indexes)
    store = SqliteStore(db_path)
    await store.open()
    try:
        assert await store.injections_for(THREAD, [("abc", 0)]) == {("abc", 0): "block one"}
    finally:
        await store.close()
    assert ("injections_recent",) not in await sql(db_path, indexes)


async def test_migration_10_keeps_every_block_in_a_table_with_rowids(db_path: Path) -> None:
    """The blocks of a database from before migration 10 are all still found by key and
    listed in order; the table now has rowids, and its key is still unique."""
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 9)
        for thread in (THREAD, "other"):
            await conn.execute(
                "INSERT INTO threads (thread_key, channel, chat_type, created_at) "
                "VALUES (?, 'telegram', 'dm', ?)",
                (thread, to_db(T0)),
            )
        for n, (thread, fingerprint, ordinal) in enumerate(
            [(THREAD, "b", 0), (THREAD, "a", 1), ("other", "a", 1), (THREAD, "a", 0)]
        ):
            await conn.execute(
                "INSERT INTO injections VALUES (?, ?, ?, ?, ?)",
                (thread, fingerprint, ordinal, f"block {n}", to_db(T0 + timedelta(minutes=n))),
            )
    store = SqliteStore(db_path)
    await store.open()
    try:
        assert list((await store.injections(THREAD)).items()) == [
            (("b", 0), "block 0"),
            (("a", 1), "block 1"),
            (("a", 0), "block 3"),
        ]
        assert await store.injections_for("other", [("a", 1), ("b", 0)]) == {("a", 1): "block 2"}
        # Saved again under the same key: the row is replaced, not added (the count below).
        await store.save_injection(THREAD, "a", 1, "a second block", T0)
        assert await store.injections_for(THREAD, [("a", 1)]) == {("a", 1): "a second block"}
    finally:
        await store.close()
    [(schema,)] = await sql(db_path, "SELECT sql FROM sqlite_master WHERE name = 'injections'")
    assert "WITHOUT ROWID" not in schema and "UNIQUE (thread_key, fingerprint, ordinal)" in schema
    assert await sql(db_path, "SELECT COUNT(*) FROM injections") == [(4,)]


async def test_migration_9_moves_the_times_of_threads_stored_before_it(db_path: Path) -> None:
    """A database from before the triggers: its threads' and participants' times move on
    the first messages stored after the upgrade, and only forward."""
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 8)
        at = to_db(T0 + timedelta(hours=1))
        await add_user(conn, at)
        await conn.execute(
            "INSERT INTO threads (thread_key, channel, chat_type, created_at, "
            "last_interaction_at, last_user_message_at, last_agent_message_at) "
            "VALUES (?, 'telegram', 'group', ?, ?, ?, ?)",
            (THREAD, at, at, at, at),
        )
        await conn.execute(
            "INSERT INTO thread_participants VALUES (?, 'telegram:42', ?)", (THREAD, at)
        )
    store = SqliteStore(db_path)
    await store.open()
    try:
        # Older than what is stored (a replay): nothing moves back, but the thread's
        # creation does.
        await store.record_inbound(inbound(T0))
        await store.record_reply(THREAD, "old answer", T0)
        times = "SELECT created_at, last_interaction_at, last_user_message_at, "
        times += "last_agent_message_at FROM threads WHERE thread_key = ?"
        member = "SELECT user_key, last_user_message_at FROM thread_participants"
        assert await sql(db_path, times, (THREAD,)) == [(to_db(T0), at, at, at)]
        assert await sql(db_path, member) == [("telegram:42", at)]

        later = T0 + timedelta(hours=2)
        await store.record_inbound(inbound(later))
        await store.record_inbound(inbound(later, user="7", name="Bo"))
        reply_at = later + timedelta(seconds=3)
        await store.record_reply(THREAD, "new answer", reply_at)
        assert await sql(db_path, times, (THREAD,)) == [
            (to_db(T0), to_db(reply_at), to_db(later), to_db(reply_at))
        ]
        assert sorted(await sql(db_path, member)) == [
            ("telegram:42", to_db(later)),
            ("telegram:7", to_db(later)),
        ]
    finally:
        await store.close()


async def test_injections_for_finds_only_the_keys_asked_for(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))
    await store.record_inbound(inbound(T0, thread="other"))
    for n in range(1000):
        await store.save_injection(THREAD, f"m{n}", n % 2, f"block {n}", T0)
    await store.save_injection("other", "m1", 1, "elsewhere", T0)
    # More keys than one query takes; some with no block, one of another thread's.
    keys = [(f"m{n}", n % 2) for n in range(0, 1000, 2)] + [("m1", 0), ("m1", 1), ("none", 0)]
    found = await store.injections_for(THREAD, keys)
    assert found == {
        **{(f"m{n}", 0): f"block {n}" for n in range(0, 1000, 2)},
        ("m1", 1): "block 1",
    }
    assert await store.injections_for("other", [("m1", 1), ("m2", 0)]) == {("m1", 1): "elsewhere"}
    assert await store.injections_for(THREAD, []) == {}


# User messages as a version-14 store held them: commands, and ordinary messages that only
# look like one to a glance at their first characters.
OLD_USER_TEXTS = (
    "/time",
    "/recap@chrono_bot",
    "/tz Asia/Tokyo",
    "/Memory forget 2",
    "/time\n",
    "/time\u00a0please",
    "/usr",
    "/etc/hosts is gone, help",
    "/home/ana/notes.txt: can you read it?",
    "/tmp-dir is full",
    "/time@",
    "/time@bot!",
    "/123",
    " /time",
    "hello /time",
    "hello",
    "",
)


async def test_a_version_14_file_gets_exactly_its_commands_marked(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 14)
        at = to_db(T0)
        await add_user_and_group(conn, at)
        for text in OLD_USER_TEXTS:
            for role, user in (("user", "telegram:42"), ("assistant", None)):
                await conn.execute(
                    "INSERT INTO messages (thread_key, user_key, role, text, at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (THREAD, user, role, text, at),
                )

    opened = SqliteStore(db_path)
    await opened.open()
    await opened.close()
    rows = await sql(db_path, "SELECT role, text, command FROM messages ORDER BY id")
    marked = {(role, text) for role, text, command in rows if command}
    commands = {("user", text) for text in OLD_USER_TEXTS if match_command(text) is not None}
    assert marked == commands
    assert ("user", "/tz Asia/Tokyo") in marked and ("user", "/usr") in marked
    assert len(rows) == 2 * len(OLD_USER_TEXTS)


async def test_a_version_17_file_gets_the_time_its_conversations_last_moved(
    db_path: Path,
) -> None:
    """Migration 18: each thread's conversation time is its newest message that is neither
    a command nor the reply to one; a thread imported without messages keeps its last
    interaction; the triggers then keep it so."""
    talked, away, imported, commands_only = (f"agent:main:api:dm:{n}" for n in "abcd")
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 17)
        await conn.execute(
            "INSERT INTO users (user_key, channel, platform_user_id, created_at) "
            "VALUES ('api:ana', 'api', 'ana', ?)",
            (to_db(T0),),
        )
        for thread in (talked, away, imported, commands_only):
            await conn.execute(
                "INSERT INTO threads (thread_key, channel, chat_type, created_at, "
                "last_interaction_at) VALUES (?, 'api', 'dm', ?, ?)",
                (thread, to_db(T0), to_db(T0 + timedelta(days=1)) if thread == imported else None),
            )
        story = {
            talked: [("user", "plan the trip", 0, 0), ("assistant", "sure", 0, 5)],
            away: [
                ("user", "plan the trip", 0, 0),
                ("assistant", "sure", 0, 5),
                ("user", "/time", 1, 3 * 3600),
                ("assistant", "It's 12:00", 0, 3 * 3600 + 1),
            ],
            commands_only: [("user", "/time", 1, 0), ("assistant", "It's 09:00", 0, 1)],
        }
        for thread, messages in story.items():
            for role, text, command, seconds in messages:
                await conn.execute(
                    "INSERT INTO messages (thread_key, user_key, role, text, at, command) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        thread,
                        "api:ana" if role == "user" else None,
                        role,
                        text,
                        to_db(T0 + timedelta(seconds=seconds)),
                        command,
                    ),
                )

    store = SqliteStore(db_path)
    await store.open()
    try:
        times = "SELECT thread_key, last_conversation_at FROM threads ORDER BY thread_key"
        assert await sql(db_path, times) == [
            (talked, to_db(T0 + timedelta(seconds=5))),
            (away, to_db(T0 + timedelta(seconds=5))),
            (imported, to_db(T0 + timedelta(days=1))),
            (commands_only, None),
        ]
        # Stored after the upgrade: a command, marked, and its answer leave it; a
        # question moves it and is what the next message sees.
        later = T0 + timedelta(hours=5)
        command = await store.record_inbound(inbound(later, thread=away, text="/time"))
        await store.mark_command(away, command.message_id)
        await store.record_reply(away, "It's 14:00", later + timedelta(seconds=1))
        question = T0 + timedelta(hours=5, minutes=1)
        asked = await store.record_inbound(inbound(question, thread=away, text="where were we?"))
        assert asked.prior.thread_last_conversation_at == T0 + timedelta(seconds=5)
        assert asked.prior.thread_last_interaction_at == later + timedelta(seconds=1)
        await store.record_reply(away, "the trip", question + timedelta(seconds=2))
        assert await sql(db_path, times + " LIMIT 1 OFFSET 1") == [
            (away, to_db(question + timedelta(seconds=2)))
        ]
    finally:
        await store.close()


async def test_a_version_18_file_gets_each_members_own_conversation_time(
    db_path: Path,
) -> None:
    """Migration 19: a member's conversation time is their newest message that is not a
    command; a member imported without messages keeps their last message, which is also
    what marking a later command falls back to."""
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 18)
        for user in ("ana", "bob", "cy"):
            await conn.execute(
                "INSERT INTO users (user_key, channel, platform_user_id, created_at) "
                "VALUES (?, 'api', ?, ?)",
                (f"api:{user}", user, to_db(T0)),
            )
        await conn.execute(
            "INSERT INTO threads (thread_key, channel, chat_type, created_at) "
            "VALUES (?, 'api', 'group', ?)",
            (THREAD, to_db(T0)),
        )
        story = [("api:ana", "plan the trip", 0, 0), ("api:ana", "/time", 1, 3600)]
        story += [("api:bob", "/time", 1, 60)]
        for user_key, text, command, seconds in story:
            await conn.execute(
                "INSERT INTO messages (thread_key, user_key, role, text, at, command) "
                "VALUES (?, ?, 'user', ?, ?, ?)",
                (THREAD, user_key, text, to_db(T0 + timedelta(seconds=seconds)), command),
            )
        # Cy is known from a clock-state file only.
        await conn.execute(
            "INSERT INTO thread_participants (thread_key, user_key, last_user_message_at) "
            "VALUES (?, 'api:cy', ?)",
            (THREAD, to_db(T0 - timedelta(days=1))),
        )

    store = SqliteStore(db_path)
    await store.open()
    try:
        times = (
            "SELECT user_key, last_user_message_at, last_conversation_at "
            "FROM thread_participants ORDER BY user_key"
        )
        assert await sql(db_path, times) == [
            ("api:ana", to_db(T0 + timedelta(hours=1)), to_db(T0)),
            ("api:bob", to_db(T0 + timedelta(minutes=1)), None),
            ("api:cy", to_db(T0 - timedelta(days=1)), to_db(T0 - timedelta(days=1))),
        ]
        later = T0 + timedelta(days=2)
        cy = inbound(later, user="cy", channel="api", text="/time")
        await store.mark_command(THREAD, (await store.record_inbound(cy)).message_id)
        back = await store.record_inbound(replace(cy, text="hi all"))
        assert back.prior.user_last_conversation_here_at == T0 - timedelta(days=1)
    finally:
        await store.close()


async def test_migration_20_keeps_the_names_messages_were_forwarded_under(
    db_path: Path,
) -> None:
    """Migration 20: each message keeps the name the history forwarded it under until now
    (its sender's current one), whatever comes later: a rename, a namesake. A message
    stored as a command moves no conversation time."""
    db_path.parent.mkdir(parents=True)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        await migrate_to(conn, 19)
        for user, name in (("51", "Alex"), ("52", None)):
            await conn.execute(
                "INSERT INTO users (user_key, channel, platform_user_id, display_name, "
                "created_at) VALUES (?, 'telegram', ?, ?, ?)",
                (f"telegram:{user}", user, name, to_db(T0)),
            )
        await conn.execute(
            "INSERT INTO threads (thread_key, channel, chat_type, created_at) "
            "VALUES (?, 'telegram', 'group', ?)",
            (THREAD, to_db(T0)),
        )
        for user, text in (("51", "hi all"), ("52", "hey")):
            await conn.execute(
                "INSERT INTO messages (thread_key, user_key, role, text, at) "
                "VALUES (?, ?, 'user', ?, ?)",
                (THREAD, f"telegram:{user}", text, to_db(T0)),
            )

    store = SqliteStore(db_path)
    await store.open()
    try:
        speakers = [(m.text, m.speaker_name) for m in await store.transcript_from(THREAD, None, 9)]
        assert speakers == [("hi all", "Alex"), ("hey", None)]
        later = T0 + timedelta(hours=1)
        # Another Alex joins: named with her account; the first one's words stay hers.
        namesake = inbound(later, user="53", name="alex", text="me too")
        assert await store.speaker_label(THREAD, "group", "telegram:53", "alex") == (
            "alex (telegram:53)"
        )
        await store.record_inbound(namesake)
        await store.record_inbound(inbound(later, user="51", name="Alexandra", text="renamed"))
        command = replace(inbound(T0 + timedelta(days=1), user="51", text="/time"), command=True)
        await store.record_inbound(command)
        speakers = [(m.text, m.speaker_name) for m in await store.transcript_from(THREAD, None, 9)]
        assert speakers == [
            ("hi all", "Alex"),
            ("hey", None),
            ("me too", "alex (telegram:53)"),
            ("renamed", "Alexandra"),
        ]
        thread = await store.get_thread(THREAD)
        assert thread is not None and thread.last_user_message_at == T0 + timedelta(days=1)
        back = await store.record_inbound(inbound(T0 + timedelta(days=2), user="51"))
        assert back.prior.thread_last_conversation_at == later
        assert back.prior.user_last_conversation_here_at == later
    finally:
        await store.close()


async def test_a_linked_users_chosen_locale_is_the_persons_and_each_app_keeps_its_own(
    store: SqliteStore,
) -> None:
    """/lang on one account sets the language on every linked one; cleared, each account
    falls back to its own app's language, not to a copy kept from before."""
    tg, dc = "telegram:1", "discord:2"
    await store.record_inbound(inbound(T0, user="1", thread="agent:main:telegram:1"))
    await store.record_inbound(
        inbound(T0, user="2", channel="discord", thread="agent:main:discord:2")
    )
    await store.set_app_locale(tg, "de")
    await store.set_app_locale(dc, "en_US")
    assert await store.set_user_locale(tg, "fr")
    await store.link_users([tg, dc], now=T0)
    both = [await store.peek_prior(f"agent:main:{key}", key) for key in (tg, dc)]
    assert [p.reader_locale for p in both] == ["fr", "fr"]
    assert await store.set_user_locale(dc, None)
    both = [await store.peek_prior(f"agent:main:{key}", key) for key in (tg, dc)]
    assert [p.reader_locale for p in both] == ["de", "en_US"]
