"""The held prior-state rows (``sqlite_prior_cache``) always equal what a read would return.

The property: whatever happens to the store — messages in and out of order, replies,
writes of every other kind, another connection's commits, writes that fail — the prior
state a turn's message gets is the one ``SELECT_PRIOR`` would have read just before it,
and every row the store holds equals a fresh read of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from middleware.errors import NotFoundError, StoreError
from middleware.store import SqliteStore
from middleware.store.clock_state import ClockStateSnapshot, ThreadClockState
from middleware.store.records import InboundRecord, PriorState
from middleware.store.sqlite_clock_state import SELECT_PRIOR, prior_from_row
from middleware.store.sqlite_prior_cache import PriorRows
from tests.fakes.full_disk import FullDisk, use_full_disk
from tests.middleware.test_store import inbound

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
THREADS = ["agent:main:telegram:group:-1", "agent:main:telegram:group:-2", "agent:main:api:dm:x"]
USERS = ["1", "2"]
CHANNELS = ["telegram", "discord"]


def fresh_row(store: SqliteStore, thread_key: str, user_key: str) -> tuple[Any, ...]:
    """``SELECT_PRIOR`` as a read would run it now: after the queued writes, on the
    loop's connection (which sees its own uncommitted writes)."""
    writer = store._batcher
    assert writer is not None
    assert writer.may_write_now("test read")
    row: tuple[Any, ...] = writer._inline.execute(
        SELECT_PRIOR, {"thread_key": thread_key, "user_key": user_key}
    ).fetchone()
    return row


def assert_held_rows_fresh(store: SqliteStore) -> None:
    """Every held row, as a turn would look it up: once the loop's connection may write
    (its transaction open, another connection's commits noticed)."""
    writer = store._batcher
    assert writer is not None
    assert writer.may_write_now("test read")
    for thread_key, user_key in store._priors.pairs():
        held = store._priors.get(thread_key, user_key)
        assert held == fresh_row(store, thread_key, user_key), (thread_key, user_key)


class Story:
    """Random operations on one store, checking the property after each."""

    def __init__(self, store: SqliteStore, db_path: Path, seed: int) -> None:
        self.store = store
        self.db_path = db_path
        self.rng = random.Random(seed)
        # Apart, so the story's other steps stay what they were.
        self.names = random.Random(-seed)
        self.clock = T0
        self.hits = 0
        self.inbound_count = 0
        # Replies and marks are not awaited, as in the relay; a reply to a thread not yet
        # seen fails.
        self.replies: list[asyncio.Future[Any]] = []
        self.stored: list[tuple[str, int]] = []  # (thread key, message id)

    def instant(self) -> datetime:
        """Mostly forward; sometimes a replay from the past or the same instant again."""
        roll = self.rng.random()
        if roll < 0.7:
            self.clock += timedelta(seconds=self.rng.randint(1, 5000))
            return self.clock
        if roll < 0.85:
            return self.clock
        return self.clock - timedelta(seconds=self.rng.randint(1, 20000))

    async def step(self) -> None:
        rng, store = self.rng, self.store
        thread, user = rng.choice(THREADS), rng.choice(USERS)
        channel = rng.choice(CHANNELS)
        roll = rng.random()
        if roll < 0.6:
            await self.message(thread, user, channel)
        elif roll < 0.68:
            await self.command(thread, user, channel)
        elif roll < 0.7 and self.stored:
            # A message marked a command after others came in (turns at once in a group).
            self.replies.append(store.mark_command(*rng.choice(self.stored)))
        elif roll < 0.92:
            self.replies.append(store.record_reply(thread, "answer", self.instant()))
        elif roll < 0.93:
            await store.set_user_timezone(f"{channel}:{user}", rng.choice(["Europe/Lisbon", None]))
        elif roll < 0.935:
            # The app's locale, kept when it changes, and the one the user chose (/lang).
            locale = rng.choice(["de", "pt_BR", None])
            if rng.random() < 0.5:
                await store.set_app_locale(f"{channel}:{user}", locale)
            else:
                await store.set_user_locale(f"{channel}:{user}", locale)
        elif roll < 0.95:
            await store.set_thread_kind(thread, rng.choice(["work", "conversation"]), explicit=True)
        elif roll < 0.96:
            # Only user 1 is ever linked: a linked user's rows are not held.
            with contextlib.suppress(NotFoundError):  # one of them has not written yet
                await store.link_users(["telegram:1", "discord:1"], now=self.clock)
        elif roll < 0.965:
            await store.unlink_user(f"{channel}:1")
        elif roll < 0.98:
            await self.written_elsewhere(f"{channel}:{user}")
        elif roll < 0.99:
            await self.failing_message(thread, user, channel)
        elif roll < 0.995:
            await self.failing_commit(thread)
        else:
            await asyncio.sleep(rng.choice([0, 0.002]))

    async def message(
        self, thread: str, user: str, channel: str, text: str = "hi", *, command: bool = False
    ) -> int:
        record = inbound(
            self.instant(),
            user=user,
            channel=channel,
            thread=thread,
            text=text,
            # A Discord nickname is the server's: a member's name differs by thread.
            name=self.names.choice(["Bruno", "Brunissimo", None]),
            cross_channel=self.rng.random() < 0.8,
        )
        mentioned = self.names.choice(USERS)
        if self.names.random() < 0.2 and mentioned != user:
            # A member mentioned under the name the chat shows them by there.
            name = self.names.choice(["Bruno", "Brunissimo"])
            record = replace(record, member_names=((f"{channel}:{mentioned}", name),))
        record = replace(record, command=command)
        held = self.store._priors.get(thread, record.user_key)
        expected = prior_from_row(fresh_row(self.store, thread, record.user_key))
        prior: PriorState
        if self.rng.random() < 0.5:
            result = await self.store.record_inbound(record)
            prior, message_id = result.prior, result.message_id
        else:
            queued = await self.store.queue_inbound(record)
            prior = queued.prior
            message_id = await queued.message_id
        assert prior == expected
        self.inbound_count += 1
        self.hits += held is not None
        self.stored.append((thread, message_id))
        return message_id

    async def command(self, thread: str, user: str, channel: str) -> None:
        """A command the relay answers itself: stored as one (a chat command) or marked
        once stored (a settings directive), then (mostly) its answer recorded, as the
        recording stage does."""
        at_once = self.rng.random() < 0.5
        message_id = await self.message(thread, user, channel, text="/time", command=at_once)
        if not at_once:
            self.replies.append(self.store.mark_command(thread, message_id))
        if self.rng.random() < 0.8:
            self.replies.append(self.store.record_reply(thread, "It's 10:00", self.instant()))

    async def written_elsewhere(self, user_key: str) -> None:
        """Another process changes a user's locale and commits."""
        writer = self.store._batcher
        assert writer is not None
        await writer.drain()
        with sqlite3.connect(self.db_path) as other:
            other.execute(
                "UPDATE users SET locale = ? WHERE user_key = ?",
                (self.rng.choice(["pt-PT", "en-GB"]), user_key),
            )

    async def imported(self, thread: str, user_key: str) -> None:
        """Before any message, a clock-state file gives the thread and one member times no
        message holds: a command marked later falls back to them."""
        at = T0 - timedelta(days=1)
        snapshot = ClockStateSnapshot(
            threads=(
                ThreadClockState(
                    thread, last_interaction_at=at, last_user_message_by_user={user_key: at}
                ),
            )
        )
        await self.store.import_clock_state(snapshot, now=self.clock)

    async def failing_commit(self, thread: str) -> None:
        """A reply whose commit fails (a full disk) with whatever else is uncommitted: the
        messages in it are lost, the reply is kept and applied again before the next
        write."""
        self.replies.append(self.store.record_reply(thread, "kept", self.instant()))
        writer = self.store._batcher
        assert writer is not None
        FullDisk.failing = 1
        await writer.drain()

    async def failing_message(self, thread: str, user: str, channel: str) -> None:
        """A message whose insert fails (a trigger refuses it): nothing it moved stays."""
        record = inbound(self.instant(), user=user, channel=channel, thread=thread, text="boom")
        with pytest.raises(StoreError, match="refused"):
            if self.rng.random() < 0.5:
                await self.store.record_inbound(record)
            else:
                await (await self.store.queue_inbound(record)).message_id


@pytest.mark.parametrize("commit_delay", [0.0, 0.01])
@pytest.mark.parametrize("seed", range(12))
async def test_held_rows_and_priors_equal_a_fresh_read(
    db_path: Path, seed: int, commit_delay: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_full_disk(monkeypatch)
    store = SqliteStore(db_path, commit_delay=commit_delay)
    await store.open()
    with sqlite3.connect(db_path) as setup:
        setup.execute(
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON messages WHEN NEW.text = 'boom' "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    try:
        story = Story(store, db_path, seed)
        await story.imported(THREADS[seed % 3], f"{CHANNELS[seed % 2]}:{USERS[seed // 3 % 2]}")
        for _ in range(200):
            await story.step()
            assert_held_rows_fresh(store)
        await asyncio.gather(*story.replies, return_exceptions=True)
    finally:
        await store.close()

    # Rows were held and used, so the property says something about them.
    assert story.hits >= story.inbound_count // 8, (story.hits, story.inbound_count)


async def test_a_pair_seen_before_is_not_read_again(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0))  # the user's first message here: read
    await store.record_inbound(inbound(T0 + timedelta(seconds=5)))  # read, then held
    writer = store._batcher
    assert writer is not None
    statements: list[str] = []
    writer._inline.set_trace_callback(statements.append)

    third = await store.queue_inbound(inbound(T0 + timedelta(seconds=9)))
    await third.message_id

    assert not any(sql.lstrip().startswith("SELECT") for sql in statements)
    assert third.prior.thread_last_user_message_at == T0 + timedelta(seconds=5)


async def test_a_commit_by_another_connection_drops_the_rows(
    store: SqliteStore, db_path: Path
) -> None:
    for seconds in (0, 5):
        await store.record_inbound(inbound(T0 + timedelta(seconds=seconds)))
    assert len(store._priors) == 1
    writer = store._batcher
    assert writer is not None
    await writer.drain()
    with sqlite3.connect(db_path) as other:
        other.execute("UPDATE users SET default_tz = 'Asia/Tokyo'")

    result = await store.record_inbound(inbound(T0 + timedelta(seconds=9)))

    assert result.prior.user_tz == "Asia/Tokyo"


async def test_a_failed_commit_drops_the_rows(store: SqliteStore) -> None:
    for seconds in (0, 5):
        await store.record_inbound(inbound(T0 + timedelta(seconds=seconds)))
    assert len(store._priors) == 1
    writer = store._batcher
    assert writer is not None
    writer._abort(sqlite3.OperationalError("disk I/O error"))

    assert len(store._priors) == 0


def message_of(thread: str, channel: str, *, cross_channel: bool) -> InboundRecord:
    """A message of user ``u`` (``PriorRows`` reads its keys, channel and scope)."""
    return replace(
        inbound(T0, thread=thread, channel=channel, cross_channel=cross_channel), user_key="u"
    )


def test_the_oldest_rows_go_first_when_full() -> None:
    rows = PriorRows(max_rows=2)
    before = (None,) * 3 + ("2026-11-21T09:00:00.000000+00:00",) + (None,) * 20
    at = "2026-11-21T10:00:00.000000+00:00"
    for thread in ("a", "b", "c"):
        rows.keep(message_of(thread, "api", cross_channel=False), at, before)

    assert len(rows) == 2
    assert rows.get("a", "u") is None
    assert rows.get("c", "u") is not None
    rows.reply("a", at)  # a thread no longer held: nothing to move
    later = "2026-11-21T11:00:00.000000+00:00"
    rows.inbound(message_of("b", "discord", cross_channel=True), later)
    moved = rows.get("b", "u")
    assert moved is not None
    assert moved[:6] == (later, later, None, later, later, "discord")
    # The user's last contact is the user's in every thread.
    assert rows.get("c", "u") == (at, at, None, at, later, "discord") + (None,) * 14 + (
        at,
        at,
        None,
        "Ada",
    )


def test_a_row_kept_again_is_held_as_the_newest_and_makes_no_room() -> None:
    """The pair a thread keeps writing in stays held while quieter ones make room, and
    keeping it again pushes out nobody."""
    rows = PriorRows(max_rows=2)
    before = (None,) * 3 + ("2026-11-21T09:00:00.000000+00:00",) + (None,) * 20
    at = "2026-11-21T10:00:00.000000+00:00"

    def keep(thread: str) -> None:
        rows.keep(message_of(thread, "api", cross_channel=False), at, before)

    for thread in ("a", "b", "b"):
        keep(thread)
    assert rows.pairs() == [("a", "u"), ("b", "u")]
    keep("a")
    keep("c")
    assert rows.pairs() == [("a", "u"), ("c", "u")]
