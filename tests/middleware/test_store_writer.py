"""The store's group-commit writer: order, read-your-writes, a busy file, checkpoints."""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from middleware.errors import StoreError
from middleware.store import (
    SqliteStore,
    sqlite_kept_writes,
    sqlite_transaction_outcomes,
    sqlite_writer,
)
from tests.fakes.full_disk import FullDisk, use_full_disk
from tests.middleware.test_store import THREAD, inbound

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


async def test_a_reply_queued_without_waiting_is_seen_by_the_next_read(
    store: SqliteStore,
) -> None:
    await store.record_inbound(inbound(T0))
    queued = store.record_reply(THREAD, "answer", T0 + timedelta(seconds=2))
    assert not queued.done()  # nothing committed yet: it waits for the loop iteration

    transcript = await store.transcript(THREAD, limit=10)

    assert [m.text for m in transcript] == ["hello", "answer"]
    assert queued.done() and queued.result() == transcript[-1].id


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per commit of the loop's connection."""
    seen: list[int] = []
    committed = sqlite_writer.GroupCommitWriter._committed

    def counting(writer: sqlite_writer.GroupCommitWriter) -> None:
        seen.append(writer.commits)
        committed(writer)

    monkeypatch.setattr(sqlite_writer.GroupCommitWriter, "_committed", counting)
    return seen


def committed_texts(db_path: Path) -> list[str]:
    """The messages another connection sees: only what is committed."""
    with sqlite3.connect(db_path) as conn:
        return [text for (text,) in conn.execute("SELECT text FROM messages ORDER BY id")]


async def test_replies_queued_together_share_one_commit_and_keep_their_order(
    store: SqliteStore, commits: list[int]
) -> None:
    await store.record_inbound(inbound(T0))
    await asyncio.sleep(0)
    commits.clear()
    ids = await asyncio.gather(
        *(store.record_reply(THREAD, f"r{i}", T0 + timedelta(seconds=i)) for i in range(5))
    )

    assert len(commits) == 1
    assert ids == sorted(ids)
    assert [m.text for m in await store.transcript(THREAD, limit=5)] == [f"r{i}" for i in range(5)]


async def test_turns_that_write_in_the_same_iteration_share_one_commit(
    store: SqliteStore, commits: list[int]
) -> None:
    results = await asyncio.gather(
        *(store.record_inbound(inbound(T0 + timedelta(seconds=i), user=str(i))) for i in range(8))
    )
    await asyncio.sleep(0)

    assert len(commits) == 1
    assert len({r.message_id for r in results}) == 8


async def test_an_inbound_message_is_queued_and_the_next_turn_still_sees_it(
    store: SqliteStore, db_path: Path
) -> None:
    """The turn goes on (and sends its request upstream) before its message is written;
    a later turn's prior state is read only after it is applied."""
    first = await store.queue_inbound(inbound(T0, text="first"))

    assert not first.message_id.done() and committed_texts(db_path) == []
    later = await store.queue_inbound(inbound(T0 + timedelta(seconds=5), text="second"))
    assert first.message_id.done()  # applied before the read
    assert later.prior.thread_last_user_message_at == T0
    assert await later.message_id > first.message_id.result()
    assert committed_texts(db_path) == ["first", "second"]


async def test_a_queued_inbound_that_cannot_be_stored_fails_with_a_store_error(
    store: SqliteStore,
) -> None:
    record = inbound(T0)
    queued = await store.queue_inbound(replace(record, chat_type="not a chat type"))

    with pytest.raises(StoreError, match="record an inbound message"):
        await queued.message_id
    assert await store.transcript(THREAD, limit=5) == []


async def test_record_inbound_returns_once_its_message_is_applied(
    store: SqliteStore, db_path: Path
) -> None:
    result = await store.record_inbound(inbound(T0, text="first"))

    assert [(m.id, m.text) for m in await store.transcript(THREAD, limit=5)] == [
        (result.message_id, "first")
    ]


DELAY = 0.05


@pytest.fixture
async def delayed(db_path: Path) -> AsyncIterator[SqliteStore]:
    """A store whose writes wait ``DELAY`` seconds to share a commit, as the relay's do."""
    opened = SqliteStore(db_path, commit_delay=DELAY)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_queued_inbound_lands_after_what_the_turn_does_meanwhile(
    delayed: SqliteStore,
) -> None:
    """aiohttp sends a request body from a task of its own (``call_soon``): the inbound
    write queued before it lands after it, not on the request's way upstream. (With no
    commit delay, the commit at the end of the iteration applies it first.)"""
    queued = await delayed.queue_inbound(inbound(T0))
    seen_by_the_next_callback: list[bool] = []
    asyncio.get_running_loop().call_soon(
        lambda: seen_by_the_next_callback.append(queued.message_id.done())
    )

    await queued.message_id

    assert seen_by_the_next_callback == [False]


async def test_a_queued_inbound_lands_after_the_next_iterations_io(
    delayed: SqliteStore,
) -> None:
    """The upstream's answer (or the client's next bytes) read in the next loop iteration
    is handled before the queued write: the write waits for that iteration's I/O."""
    loop = asyncio.get_running_loop()
    readable, writer = socket.socketpair()
    seen_by_the_io_callback: list[bool] = []
    try:
        writer.send(b"x")  # readable from the next iteration's poll on

        queued = await delayed.queue_inbound(inbound(T0))

        def on_readable() -> None:
            loop.remove_reader(readable)
            seen_by_the_io_callback.append(queued.message_id.done())

        loop.add_reader(readable, on_readable)
        await queued.message_id
    finally:
        loop.remove_reader(readable)
        readable.close()
        writer.close()

    assert seen_by_the_io_callback == [False]


async def test_a_queued_inbound_a_turn_waits_on_commits_once_applied_not_after_the_delay(
    delayed: SqliteStore, db_path: Path, commits: list[int]
) -> None:
    """A turn alone in the relay waits for its message's commit before answering: the
    commit runs as soon as the queued message lands (while the upstream works), so the
    answer does not wait for it, nor for the commit delay."""
    queued = await delayed.queue_inbound(inbound(T0, text="alone"))
    await queued.message_id
    await asyncio.sleep(0)

    assert committed_texts(db_path) == ["alone"]
    assert len(commits) == 1
    await asyncio.wait_for(queued.durable.committed(), timeout=DELAY / 5)


async def test_with_a_commit_delay_turns_over_many_iterations_share_one_commit(
    delayed: SqliteStore, db_path: Path, commits: list[int]
) -> None:
    for n in range(3):
        await delayed.record_inbound(inbound(T0 + timedelta(minutes=n), text=f"q{n}"))
        await asyncio.sleep(0)
        reply = delayed.record_reply(THREAD, f"a{n}", T0 + timedelta(minutes=n, seconds=1))
        await asyncio.sleep(0)
        assert not reply.done()  # applied, waiting for the shared commit
    assert committed_texts(db_path) == []

    await asyncio.wait_for(reply, timeout=10 * DELAY)

    assert len(commits) == 1
    assert committed_texts(db_path) == ["q0", "a0", "q1", "a1", "q2", "a2"]


async def test_with_a_commit_delay_a_read_commits_first_and_sees_everything(
    delayed: SqliteStore, db_path: Path
) -> None:
    await delayed.record_inbound(inbound(T0, text="question"))
    reply = delayed.record_reply(THREAD, "answer", T0 + timedelta(seconds=1))

    transcript = await delayed.transcript(THREAD, limit=5)

    assert [m.text for m in transcript] == ["question", "answer"]
    assert reply.done() and committed_texts(db_path) == ["question", "answer"]


async def test_with_a_commit_delay_a_transaction_and_a_clean_close_lose_nothing(
    delayed: SqliteStore, db_path: Path
) -> None:
    await delayed.record_inbound(inbound(T0, text="question"))
    # A multi-statement transaction takes the file's lock: the open one commits first.
    assert await delayed.set_thread_timezone(THREAD, "Europe/Paris")
    assert committed_texts(db_path) == ["question"]

    delayed.record_reply(THREAD, "answer", T0 + timedelta(seconds=1))
    await delayed.close()

    assert committed_texts(db_path) == ["question", "answer"]


async def test_a_queued_reply_goes_before_a_later_inbound_message(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0, text="question"))
    await asyncio.sleep(0)
    store.record_reply(THREAD, "answer", T0 + timedelta(seconds=1))

    follow_up = await store.record_inbound(inbound(T0 + timedelta(seconds=9), text="thanks"))

    assert follow_up.prior.thread_last_agent_message_at == T0 + timedelta(seconds=1)
    texts = [m.text for m in await store.transcript(THREAD, limit=5)]
    assert texts == ["question", "answer", "thanks"]


def _unsatisfied_at_commit(conn: sqlite3.Connection) -> None:
    """A write whose statement succeeds but whose transaction cannot commit (a deferred
    foreign key): what a full or failing disk does to a commit."""
    conn.execute("PRAGMA defer_foreign_keys = ON")
    conn.execute(
        "INSERT INTO messages (thread_key, role, text, at) VALUES ('nowhere', 'user', 'x', '')"
    )


async def test_a_failed_commit_is_logged_and_then_every_write_commits_before_returning(
    store: SqliteStore, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    queued = await store.queue_inbound(inbound(T0, text="applied, then lost"))
    await store._write("break the commit", _unsatisfied_at_commit)
    assert await queued.message_id > 0  # applied before that write, reported at once
    reply = store.record_reply(THREAD, "queued, then failed", T0 + timedelta(seconds=1))

    with caplog.at_level("ERROR", logger=sqlite_transaction_outcomes.__name__):
        with pytest.raises(StoreError, match="FOREIGN KEY"):
            await reply
    assert "2 write(s) already applied are lost" in caplog.text
    assert "record an inbound message" in caplog.text
    assert committed_texts(db_path) == []

    # Until a commit succeeds, a write commits before returning: a failure reaches it.
    with pytest.raises(StoreError, match="could not break the commit: FOREIGN KEY"):
        await store._write("break the commit", _unsatisfied_at_commit)
    # ... and a queued message learns its fate with the commit, not before.
    doomed = await store.queue_inbound(inbound(T0 + timedelta(seconds=2), text="doomed"))
    with pytest.raises(StoreError, match="could not break the commit"):
        await store._write("break the commit", _unsatisfied_at_commit)
    with pytest.raises(StoreError, match="FOREIGN KEY"):
        await doomed.message_id
    kept = await store.queue_inbound(inbound(T0 + timedelta(seconds=3), text="kept"))
    assert await kept.message_id > 0
    assert committed_texts(db_path) == ["kept"]

    # A commit succeeded: back to committing at the end of the iteration.
    await store._write("an ordinary write", _note("batched"))
    assert committed_texts(db_path) == ["kept"]
    await asyncio.sleep(0)
    assert committed_texts(db_path) == ["kept", "batched"]


def _note(text: str) -> Callable[[sqlite3.Connection], None]:
    def write(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO messages (thread_key, role, text, at) VALUES (?, 'user', ?, '')",
            (THREAD, text),
        )

    return write


async def test_a_failed_queued_write_reports_itself_and_spares_the_others(
    store: SqliteStore,
) -> None:
    await store.record_inbound(inbound(T0))
    good = store.record_reply(THREAD, "kept", T0 + timedelta(seconds=1))
    bad = store.record_reply("agent:main:api:never-seen", "lost", T0)

    with pytest.raises(StoreError, match="unknown thread"):
        await bad
    assert isinstance(await good, int)
    assert [m.text for m in await store.transcript(THREAD, limit=5)] == ["hello", "kept"]


async def test_a_failed_single_statement_write_reports_itself_and_spares_the_others(
    store: SqliteStore,
) -> None:
    """A block saved for a thread the store never saw breaks a foreign key: SQLite takes
    that one statement back, without a savepoint, and the writes around it commit."""
    await store.record_inbound(inbound(T0))
    before = store.record_reply(THREAD, "before", T0 + timedelta(seconds=1))
    bad = store.save_injection("agent:main:api:never-seen", "f" * 32, 0, "block", T0)
    saved = store.save_injection(THREAD, "a" * 32, 0, "kept block", T0)
    after = store.record_reply(THREAD, "after", T0 + timedelta(seconds=2))

    with pytest.raises(StoreError, match="save an injection.*FOREIGN KEY"):
        await bad
    await asyncio.gather(before, saved, after)
    assert [m.text for m in await store.transcript(THREAD, limit=5)] == [
        "hello",
        "before",
        "after",
    ]
    assert await store.injections(THREAD) == {("a" * 32, 0): "kept block"}
    assert await store.injections("agent:main:api:never-seen") == {}


async def test_a_single_statement_write_runs_without_a_savepoint(store: SqliteStore) -> None:
    """The per-turn injection and reply cost one statement each (the reply's insert moves
    the thread's times by trigger); a multi-statement write keeps its savepoint."""
    await store.record_inbound(inbound(T0))
    assert store._batcher is not None
    await store._batcher.drain()
    statements: list[str] = []

    def trace(sql: str) -> None:
        # sqlite3 reports each step of a trigger with the text of the statement that
        # fired it: count that statement once.
        head = " ".join(sql.split()[:3])
        if not statements or statements[-1] != head:
            statements.append(head)

    store._batcher._inline.set_trace_callback(trace)

    injection = store.save_injection(THREAD, "a" * 32, 0, "block", T0)
    reply = store.record_reply(THREAD, "answer", T0 + timedelta(seconds=1))
    await store.record_inbound(inbound(T0 + timedelta(seconds=2)))
    await asyncio.gather(injection, reply)
    await store._batcher.drain()

    assert statements == [
        "BEGIN IMMEDIATE",
        "PRAGMA data_version",  # did another connection commit since the last transaction?
        "INSERT INTO injections",  # the injection, alone
        "INSERT INTO messages",  # the reply, alone: its trigger moves the thread's times
        "SAVEPOINT write",  # the inbound message: several statements, one savepoint
        "SELECT t.last_interaction_at, t.last_user_message_at,",
        "INSERT INTO users",
        "INSERT INTO messages",
        "RELEASE write",
        "COMMIT",
    ]


@pytest.mark.parametrize("one_statement", [False, True])
async def test_a_write_whose_failure_ends_the_transaction_fails_every_write_in_it(
    store: SqliteStore, one_statement: bool
) -> None:
    """SQLite rolls back the whole transaction on some errors (a full disk): the writes
    applied before in it are gone, and must not be reported as committed."""
    await store.record_inbound(inbound(T0))
    assert store._batcher is not None
    await store._batcher.drain()

    def disk_full(conn: sqlite3.Connection) -> None:
        conn.execute("ROLLBACK")  # what SQLite does itself on SQLITE_FULL
        raise sqlite3.OperationalError("database or disk is full")

    earlier = store.record_reply(THREAD, "lost with the transaction", T0 + timedelta(seconds=1))
    failing = store._batcher.submit("fill the disk", disk_full, one_statement=one_statement)

    with pytest.raises(StoreError):
        await asyncio.wait_for(earlier, 5)
    with pytest.raises(StoreError):
        await asyncio.wait_for(failing, 5)
    assert [m.text for m in await store.transcript(THREAD, limit=5)] == ["hello"]
    # The writer recovers: the next write commits.
    assert isinstance(await store.record_reply(THREAD, "next", T0 + timedelta(seconds=2)), int)


@asynccontextmanager
async def another_process_holding(db_path: Path) -> AsyncIterator[None]:
    """The file's write lock, held by another connection (as another process would) until
    the block ends."""
    locked = threading.Event()
    release = threading.Event()

    def hold_the_lock() -> None:
        conn = sqlite3.connect(db_path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        locked.set()
        release.wait(10)
        conn.execute("COMMIT")
        conn.close()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    await asyncio.to_thread(locked.wait, 10)
    try:
        yield
    finally:
        release.set()
        await asyncio.to_thread(holder.join, 10)


async def test_a_write_waits_off_the_loop_while_another_process_holds_the_file(
    store: SqliteStore, db_path: Path
) -> None:
    """Another connection holds the write lock: the loop keeps running, the writes land
    in order once the lock is released, and none is lost."""
    await store.record_inbound(inbound(T0))
    async with another_process_holding(db_path):
        first_task = asyncio.create_task(
            store.record_inbound(inbound(T0 + timedelta(seconds=1), text="first"))
        )
        await asyncio.sleep(0)  # the task queues its write
        pending = asyncio.gather(
            first_task, store.record_reply(THREAD, "second", T0 + timedelta(seconds=2))
        )
        # The event loop is not blocked: it still runs other work meanwhile.
        ticks = 0
        for _ in range(5):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 5 and not pending.done()
    first, second = await asyncio.wait_for(pending, 10)

    assert first.message_id < second
    assert first.prior.thread_last_user_message_at == T0  # read with its write, off the loop
    texts = [m.text for m in await store.transcript(THREAD, limit=5)]
    assert texts == ["hello", "first", "second"]


async def test_a_read_waits_for_the_writes_the_worker_thread_has(
    store: SqliteStore, db_path: Path
) -> None:
    """Another process holds the file, so a queued write goes to the worker thread and
    waits there; a read made after it waits for it too, rather than missing it."""
    await store.record_inbound(inbound(T0))
    async with another_process_holding(db_path):
        store.record_reply(THREAD, "handed off", T0 + timedelta(seconds=1))
        read = asyncio.create_task(store.transcript(THREAD, limit=5))
        await asyncio.sleep(0.1)
        assert not read.done()

    assert [m.text for m in await asyncio.wait_for(read, 10)] == ["hello", "handed off"]


async def test_writes_handed_to_the_worker_thread_fail_alone_with_or_without_savepoint(
    store: SqliteStore, db_path: Path
) -> None:
    await store.record_inbound(inbound(T0))
    async with another_process_holding(db_path):
        bad_block = store.save_injection("agent:main:api:never-seen", "f" * 32, 0, "x", T0)
        bad_reply = store.record_reply("agent:main:api:never-seen", "lost", T0)
        block = store.save_injection(THREAD, "a" * 32, 0, "kept block", T0)
        reply = store.record_reply(THREAD, "kept", T0 + timedelta(seconds=1))
        await asyncio.sleep(0.05)
        assert not reply.done()  # waiting on the worker thread for the lock

    with pytest.raises(StoreError, match="FOREIGN KEY"):
        await asyncio.wait_for(bad_block, 10)
    with pytest.raises(StoreError, match="unknown thread"):
        await asyncio.wait_for(bad_reply, 10)
    await asyncio.wait_for(asyncio.gather(block, reply), 10)
    assert [m.text for m in await store.transcript(THREAD, limit=5)] == ["hello", "kept"]
    assert await store.injections(THREAD) == {("a" * 32, 0): "kept block"}


async def test_a_transaction_sees_the_writes_queued_before_it(store: SqliteStore) -> None:
    """A multi-statement transaction (here the export) runs on another connection: the
    reply queued just before it must already be in what it reads."""
    await store.record_inbound(inbound(T0))
    replied = T0 + timedelta(seconds=30)
    store.record_reply(THREAD, "queued before the export", replied)

    snapshot = await store.export_clock_state()

    (thread,) = snapshot.threads
    assert thread.last_interaction_at == replied


async def test_the_wal_stops_growing_under_steady_writes(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes never pause, as under steady traffic: each checkpoint still copies the whole
    WAL, so commits start it over and its file levels off."""
    monkeypatch.setattr(sqlite_writer, "CHECKPOINT_EVERY", 20)
    store = SqliteStore(db_path)
    await store.open()
    wal = Path(f"{db_path}-wal")
    try:
        sizes = []
        for round_ in range(8):
            for i in range(60):
                at = T0 + timedelta(minutes=round_, seconds=i)
                await asyncio.gather(
                    *(
                        store.record_inbound(inbound(at, user=str(u), text=f"m{i} " * 40))
                        for u in range(4)
                    )
                )
            sizes.append(await asyncio.to_thread(os.path.getsize, wal))
    finally:
        await store.close()
    # 60 commits a round and a checkpoint every 20: the WAL holds about 20 commits' pages,
    # more when a checkpoint is late (the file keeps its largest size: on a busy machine
    # it can double or triple once). Unchecked, it grows by a round's pages every round:
    # eight rounds, eight times the first.
    assert sizes[-1] < 5 * sizes[0], sizes


@pytest.fixture
async def full_disk(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[SqliteStore, type[FullDisk]]]:
    """A store whose commits fail as on a full disk while ``FullDisk.failing`` says so."""
    disk = use_full_disk(monkeypatch)
    opened = SqliteStore(db_path)
    await opened.open()
    try:
        yield opened, disk
    finally:
        await opened.close()


async def test_a_reply_whose_commit_fails_is_applied_again_once_before_the_next_message(
    full_disk: tuple[SqliteStore, type[FullDisk]], db_path: Path
) -> None:
    """A reply (and a block) nobody can send again is kept when its commit fails and is
    applied again ahead of the next write; the message that shared the failed commit was
    told so (its client sends it again) and is not applied again."""
    store, disk = full_disk
    await store.record_inbound(inbound(T0, text="question"))
    assert store._batcher is not None
    await store._batcher.drain()
    replied = T0 + timedelta(seconds=1)
    reply = store.record_reply(THREAD, "answer", replied)
    block = store.save_injection(THREAD, "a" * 32, 0, "block", T0)
    resent = inbound(T0 + timedelta(seconds=2), user="7", text="sent twice")
    shared = await store.record_inbound(resent)  # applied after the reply and the block
    disk.failing = 1

    with pytest.raises(StoreError, match="disk is full"):
        await shared.durable.committed()
    assert not reply.done() and not block.done()
    assert committed_texts(db_path) == ["question"]

    again = await store.record_inbound(resent)
    await asyncio.gather(reply, block)
    await again.durable.committed()

    assert again.prior.thread_last_agent_message_at == replied
    assert again.prior.thread_last_user_message_at == T0
    assert committed_texts(db_path) == ["question", "answer", "sent twice"]
    assert reply.result() < again.message_id
    assert [m.id for m in await store.transcript(THREAD)][1] == reply.result()
    assert await store.injections(THREAD) == {("a" * 32, 0): "block"}
    assert store.write_failure() is None


async def test_writes_kept_past_the_bound_fail_are_counted_and_logged(
    full_disk: tuple[SqliteStore, type[FullDisk]],
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(sqlite_kept_writes, "MAX_KEPT", 1)
    store, disk = full_disk
    await store.record_inbound(inbound(T0, text="question"))
    assert store._batcher is not None
    await store._batcher.drain()
    kept = store.record_reply(THREAD, "kept", T0 + timedelta(seconds=1))
    dropped = store.record_reply(THREAD, "dropped", T0 + timedelta(seconds=2))
    disk.failing = 2  # this commit, and the next one that tries the kept reply

    with caplog.at_level("WARNING", logger=sqlite_kept_writes.__name__):
        await store._batcher.drain()
        with pytest.raises(StoreError, match="disk is full"):
            await dropped
    assert "1 write(s) nobody can send again are lost (record a reply)" in caplog.text
    assert store._batcher.lost == 1 and store.lost_writes() == 1
    assert not kept.done()
    # A read does not try them again (on a failing disk each would fail a commit) ...
    assert committed_texts(db_path) == ["question"]
    assert [m.text for m in await store.transcript(THREAD)] == ["question"]
    assert disk.failing == 1
    # ... a transaction of the store's own does, first: it fails again, then succeeds.
    assert await store.set_thread_timezone(THREAD, "Europe/Paris")
    assert disk.failing == 0 and not kept.done()
    assert await store.set_thread_timezone(THREAD, "Europe/Lisbon")
    assert isinstance(await kept, int)
    assert committed_texts(db_path) == ["question", "kept"]


async def test_kept_writes_go_first_when_the_worker_thread_takes_the_next_ones(
    full_disk: tuple[SqliteStore, type[FullDisk]], db_path: Path
) -> None:
    """Another process holds the file when the next message comes: the writes go to the
    worker thread, the kept reply ahead of the message."""
    store, disk = full_disk
    await store.record_inbound(inbound(T0, text="question"))
    assert store._batcher is not None
    await store._batcher.drain()
    replied = T0 + timedelta(seconds=1)
    reply = store.record_reply(THREAD, "answer", replied)
    disk.failing = 1
    await store._batcher.drain()
    assert not reply.done()

    async with another_process_holding(db_path):
        follow_up = asyncio.create_task(
            store.record_inbound(inbound(T0 + timedelta(seconds=9), text="thanks"))
        )
        await asyncio.sleep(0.05)
        assert not follow_up.done()
    result = await asyncio.wait_for(follow_up, 10)

    assert result.prior.thread_last_agent_message_at == replied
    assert await reply < result.message_id
    assert committed_texts(db_path) == ["question", "answer", "thanks"]
