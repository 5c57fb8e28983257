"""The embedded SQLite ``Store``: the standard ``sqlite3`` module and aiosqlite.

Three connections, all in autocommit mode so every transaction is one we wrote:

- the inline writer, on the event loop's own thread: single writes (every turn's inbound
  message and reply) go through ``GroupCommitWriter`` (``sqlite_writer``), which applies
  each write whole, in order, and commits the writes of one loop iteration together, so
  the statements of two concurrent turns never interleave (spec 000 §10.3: atomic, locked
  state updates);
- the threaded writer (aiosqlite) for multi-statement transactions (import, export,
  timezones) and the end of each WAL checkpoint, serialised by an ``asyncio.Lock``, and for
  writes that must wait for a file another process holds;
- the reader, ``query_only`` (aiosqlite), for lookups and the bulk of each WAL checkpoint.
  WAL lets it read the last committed state while a writer works; queued writes are
  applied before a read, so a read sees every write made before it.

``record_inbound`` is on the path of every turn, so each write is a few statements that
move timestamps in SQL (``MAX``/``CASE`` on the fixed-format ISO text, whose string order
is time order) rather than read-modify-write round trips; inserting a message moves its
thread's and its sender's times by trigger (migration 9), so a reply is one statement.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

import aiosqlite

from middleware.continuity.model import (
    CardSources,
    ContinuityEntry,
    MemoryFact,
    MemoryKind,
    MemorySource,
    RollupSegment,
    Session,
    WorkContext,
)
from middleware.errors import StoreError
from middleware.identity import split_user_key
from middleware.store import sqlite_awareness as awareness
from middleware.store import sqlite_continuity as continuity
from middleware.store import sqlite_continuity_log as continuity_log
from middleware.store import sqlite_forget as forget
from middleware.store import sqlite_links as links
from middleware.store import sqlite_sessions as sessions
from middleware.store.base import (
    ClockData,
    ClockDataChange,
    ClockStateSnapshot,
    ForgetReport,
    HeldToolCall,
    ImportCounts,
    InboundRecord,
    InboundResult,
    LinkCodeTry,
    ParticipantState,
    PriorState,
    QueuedInbound,
    Role,
    StoredMessage,
    ThreadState,
    UserState,
)
from middleware.store.migrations import apply_migrations, from_db, move_contact_forward, to_db
from middleware.store.sqlite_clock_state import (
    CREATE_THREAD,
    CREATE_USER,
    PRIOR_PERSON_ID,
    PRIOR_THREAD_EXISTS,
    SELECT_CLOCK_DATA,
    SELECT_PRIOR,
    clock_data_from_row,
    export_snapshot,
    import_snapshot,
    prior_from_row,
    read_prior,
    stated_location_from_db,
    usable_zone,
)
from middleware.store.sqlite_prior_cache import PriorRows, Row
from middleware.store.sqlite_writer import GroupCommitWriter, connect_inline
from middleware.types import ChatType, valid_text

log = logging.getLogger(__name__)

T = TypeVar("T")

# How long a statement waits for another process's lock on the file before failing.
BUSY_TIMEOUT_MS = 5000

# ``at`` is passed only when the turn counts across channels; a NULL leaves the stored
# value alone because ``NULL > x`` is not true. ``MIN``/``MAX`` keep created_at the
# earliest and the clock fields the latest instant, whatever order messages arrive in.
_UPSERT_USER = f"""
INSERT INTO users (
    user_key, channel, platform_user_id, display_name, created_at,
    last_interaction_any_channel_at, last_channel
) VALUES (:user_key, :channel, :platform_user_id, :display_name, :received_at, :any_at, :any_ch)
ON CONFLICT (user_key) DO UPDATE SET
    display_name = COALESCE(excluded.display_name, users.display_name),
    created_at = MIN(users.created_at, :received_at),
    {move_contact_forward(":any_at", ":any_ch", "users.")}
"""

_MOVE_PERSON = f"""
UPDATE persons SET
    {move_contact_forward(":at", ":channel")}
WHERE person_id = :person_id
"""

_INSERT_MESSAGE = """
INSERT INTO messages (thread_key, user_key, role, text, at, complete, place_fingerprint,
    place_index)
VALUES (:thread_key, :user_key, :role, :text, :at, :complete, :place_fingerprint, :place_index)
"""

_MARK_COMMAND = "UPDATE messages SET command = 1 WHERE id = ? AND role = 'user'"

_SET_USER_TZ = """
UPDATE users SET default_tz = :zone WHERE user_key = :user_key AND person_id IS NULL
RETURNING user_key
"""

_SET_PERSON_TZ = """
UPDATE persons SET default_tz = :zone
WHERE person_id = (SELECT person_id FROM users WHERE user_key = :user_key)
RETURNING person_id
"""

_SET_THREAD_TZ = """
UPDATE threads SET session_tz = :zone WHERE thread_key = :thread_key RETURNING thread_key
"""

_SELECT_PARTICIPANTS = """
SELECT p.user_key, u.display_name, COALESCE(per.default_tz, u.default_tz),
       COALESCE(per.locale, u.locale), p.last_user_message_at,
       CASE WHEN u.person_id IS NULL THEN u.located ELSE per.located END
FROM thread_participants AS p
JOIN users AS u ON u.user_key = p.user_key
LEFT JOIN persons AS per ON per.person_id = u.person_id
WHERE p.thread_key = ? AND p.last_user_message_at >= ?
ORDER BY p.last_user_message_at DESC, p.user_key LIMIT ?
"""

_SELECT_INJECTIONS = """
SELECT fingerprint, ordinal, text FROM injections WHERE thread_key = ?
ORDER BY at, fingerprint, ordinal
"""

_HAS_INJECTIONS = "SELECT EXISTS (SELECT 1 FROM injections WHERE thread_key = ?)"

# Two primary-key lookups: the user's newest message here, and the block of ``key``.
_SELECT_NEWEST_PLACE = """
SELECT place_fingerprint, place_index, at FROM messages
WHERE thread_key = ? AND user_key = ? AND role = 'user'
ORDER BY id DESC LIMIT 1
"""

_SELECT_NEWEST_INJECTED = """
SELECT p.last_user_message_at FROM thread_participants AS p
JOIN injections AS i ON i.thread_key = p.thread_key AND i.fingerprint = ? AND i.ordinal = ?
    AND i.at = p.last_user_message_at
WHERE p.thread_key = ? AND p.user_key = ?
"""

# Joined from the keys so each one is a primary-key lookup (a row-value IN list would scan
# the whole thread). Two parameters a key: a batch stays within SQLite's oldest default
# limit of 999 parameters.
_INJECTION_KEYS_PER_QUERY = 400


def _select_injections_for(count: int) -> str:
    keys = ", ".join(["(?, ?)"] * count)
    return f"""
WITH wanted (fingerprint, ordinal) AS (VALUES {keys})
SELECT i.fingerprint, i.ordinal, i.text FROM wanted AS w
JOIN injections AS i
  ON i.thread_key = ? AND i.fingerprint = w.fingerprint AND i.ordinal = w.ordinal
"""


_INSERT_INJECTION = """
INSERT INTO injections (thread_key, fingerprint, ordinal, text, at, context)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_key, fingerprint, ordinal) DO UPDATE SET text = excluded.text,
    at = excluded.at, context = COALESCE(excluded.context, context)
"""

_SET_INJECTION_CONTEXT = """
UPDATE injections SET context = ?
WHERE thread_key = ? AND fingerprint = ? AND ordinal = ? AND context IS NULL
"""

_SELECT_REPEATED_INJECTIONS = """
SELECT fingerprint, ordinal, context FROM injections
WHERE thread_key = ? AND context IS NOT NULL
"""

_SELECT_USER = """
SELECT user_key, channel, platform_user_id, display_name, person_id, default_tz, locale,
       last_interaction_any_channel_at, last_channel
FROM users WHERE user_key = ?
"""

# One statement, so the thread and its participants come from the same snapshot.
_SELECT_THREAD = """
SELECT t.thread_key, t.channel, t.chat_type, t.kind, t.session_tz, t.last_interaction_at,
       t.last_user_message_at, t.last_agent_message_at, p.user_key, p.last_user_message_at
FROM threads AS t LEFT JOIN thread_participants AS p ON p.thread_key = t.thread_key
WHERE t.thread_key = ?
"""

_SELECT_TRANSCRIPT = """
SELECT id, thread_key, user_key, role, text, at, complete, command
FROM messages WHERE thread_key = ? ORDER BY id DESC LIMIT ?
"""


class SqliteStore:
    """The ``Store`` on one SQLite file (WAL mode), created with its directory if missing.

    Not usable before ``open()``; every method then raises ``StoreError`` when SQLite
    fails, with the file's path in the message. Passing a naive ``datetime`` is a
    programming error and raises ``ValueError``.
    """

    def __init__(self, path: str | Path, *, commit_delay: float = 0.0) -> None:
        """``commit_delay``: seconds a write may wait for others to share its commit (see
        ``sqlite_writer``); 0 commits at the end of the loop iteration."""
        self._path = Path(path)
        self._commit_delay = commit_delay
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._batcher: GroupCommitWriter | None = None
        # The prior-state rows of recent pairs, so a turn's message need not read them.
        self._priors = PriorRows()

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def open(self) -> None:
        """Create the directory and file if needed, set the pragmas, apply migrations.

        Raises ``StoreError`` naming the path when it cannot be created, opened or
        migrated; nothing is left open in that case. Opening an open store does nothing.
        """
        # Under the write lock, so no write can slip in before the migrations are done.
        async with self._write_lock:
            if self._writer is not None:
                return
            try:
                await asyncio.to_thread(self._path.parent.mkdir, parents=True, exist_ok=True)
                self._writer = await self._connect()
                await self._writer.executescript("PRAGMA synchronous = NORMAL;")
                rows = list(await self._writer.execute_fetchall("PRAGMA journal_mode = WAL"))
                if str(rows[0][0]).lower() != "wal":
                    # Still correct, only slower and with readers blocking the writer.
                    log.warning("SQLite at %s refused WAL mode (got %s)", self._path, rows[0][0])
                version = await apply_migrations(self._writer, str(self._path))
                self._reader = await self._connect()
                await self._reader.executescript("PRAGMA query_only = ON;")
                # Opened on the loop's thread, which alone uses it (a local file: quick).
                inline = connect_inline(str(self._path))
                self._batcher = GroupCommitWriter(
                    inline,
                    self._writer,
                    self._write_lock,
                    self._store_error,
                    self._reader,
                    commit_delay=self._commit_delay,
                    on_begin=self._priors.began,
                    on_failure=self._priors.clear,
                )
            except (OSError, sqlite3.Error) as exc:
                await self._close_connections()
                raise StoreError(
                    f"cannot open the SQLite store at {self._path}: {exc}. Check that the path "
                    "is a file in a directory the relay's user can write to, or set "
                    "[store] path to one."
                ) from exc
            except BaseException:
                await self._close_connections()
                raise
            log.info("SQLite store open at %s (schema version %d)", self._path, version)

    async def close(self) -> None:
        """Apply the queued writes, then close both connections; safe to call twice."""
        if self._batcher is not None:
            await self._batcher.close()
            self._batcher = None
        async with self._write_lock:
            await self._close_connections()

    async def ping(self) -> bool:
        """Whether ``SELECT 1`` answers on the reader; ``False`` if closed or failing."""
        if self._reader is None:
            return False
        try:
            rows = list(await self._reader.execute_fetchall("SELECT 1"))
        except (sqlite3.Error, ValueError):
            # ValueError: aiosqlite's "Connection closed", if close() raced us.
            return False
        return bool(rows) and rows[0][0] == 1

    async def record_inbound(self, record: InboundRecord) -> InboundResult:
        """See ``Store.record_inbound``. The id is the message's row id. Applied at once,
        with its read in one savepoint (no read when the pair's row is held: see
        ``sqlite_prior_cache``); committed with the others (``sqlite_writer``)."""
        start = self._start_inbound(record)
        write, held = start.write, start.held
        if held is not None:
            message_id = await start.writer.write(_RECORD_INBOUND, lambda conn: write(conn, held))
            return InboundResult(message_id, prior_from_row(held))

        def both(conn: sqlite3.Connection) -> tuple[Row, int]:
            row = start.read(conn)
            return row, write(conn, row)

        row, message_id = await start.writer.write(_RECORD_INBOUND, both)
        self._keep_prior(record, start, row)
        return InboundResult(message_id, prior_from_row(row))

    async def queue_inbound(self, record: InboundRecord) -> QueuedInbound:
        """See ``Store.queue_inbound``. The prior state is read at once (or was held); the
        write is applied in the next loop iteration, after the request the turn sends
        upstream meanwhile has gone out (``sqlite_writer``)."""
        start = self._start_inbound(record)
        write, held = start.write, start.held
        if held is not None:
            stored = start.writer.queue(_RECORD_INBOUND, lambda conn: write(conn, held))
            return QueuedInbound(prior_from_row(held), stored)
        row, stored = await start.writer.read_then_queue(_RECORD_INBOUND, start.read, write)
        self._keep_prior(record, start, row)
        return QueuedInbound(prior_from_row(row), stored)

    def _start_inbound(self, record: InboundRecord) -> _InboundStart:
        """``record``'s read and write; its pair's held row, looked up only once the loop's
        connection may write now (its transaction, in which no other connection can
        commit, is open); then the held rows moved as its write, issued next, will move
        the file. A write that fails drops every row (``on_failure``), these moves too."""
        at = to_db(record.received_at)
        read, write = _inbound_writes(record, at)
        writer = self._group_writer()
        held = None
        if writer.may_write_now(_RECORD_INBOUND):
            held = self._priors.get(record.thread_key, record.user_key)
        self._priors.inbound(record, at)
        return _InboundStart(at, read, write, writer, held, self._priors.version)

    def _keep_prior(self, record: InboundRecord, start: _InboundStart, before: Row) -> None:
        """Hold the pair's row as ``record``'s write leaves it, given the row it read
        before, unless another write was issued since it started (the version moved)."""
        if self._priors.version == start.version:
            self._priors.keep(record, start.at, before)

    def record_reply(
        self, thread_key: str, text: str, sent_at: datetime, *, complete: bool = True
    ) -> asyncio.Future[int]:
        """See ``Store.record_reply``. The future raises ``StoreError`` for a thread never
        seen."""
        at = to_db(sent_at)
        message = _message_params(thread_key, None, "assistant", text, at, complete=complete)

        def write(conn: sqlite3.Connection) -> int:
            # One statement: the insert also moves the thread's times (a trigger).
            try:
                return _inserted_id(conn.execute(_INSERT_MESSAGE, message))
            except sqlite3.IntegrityError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
                    raise
                raise StoreError(
                    f"cannot record a reply in unknown thread {thread_key!r}: "
                    "record the inbound message that started it first"
                ) from exc

        stored = self._submit("record a reply", write, one_statement=True)
        self._priors.reply(thread_key, at)
        return stored

    def mark_command(self, message_id: int) -> asyncio.Future[None]:
        """See ``Store.mark_command``."""

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(_MARK_COMMAND, (message_id,))

        return self._submit("mark a command", write, one_statement=True)

    async def set_user_timezone(
        self, user_key: str, zone: str | None, *, create_at: datetime | None = None
    ) -> bool:
        """See ``Store.set_user_timezone``."""
        params = {"user_key": user_key, "zone": zone}
        async with self._transaction("set a user's timezone") as conn:
            if create_at is not None:
                channel, platform_user_id = split_user_key(user_key)
                user = (user_key, channel, platform_user_id, to_db(create_at))
                await conn.execute_fetchall(CREATE_USER, user)
            changed = list(await conn.execute_fetchall(_SET_USER_TZ, params))
            if not changed:
                changed = list(await conn.execute_fetchall(_SET_PERSON_TZ, params))
        return bool(changed)

    async def set_thread_timezone(self, thread_key: str, zone: str | None) -> bool:
        """See ``Store.set_thread_timezone``."""
        params = {"thread_key": thread_key, "zone": zone}
        async with self._transaction("set a thread's timezone") as conn:
            changed = list(await conn.execute_fetchall(_SET_THREAD_TZ, params))
        return bool(changed)

    async def group_participants(
        self, thread_key: str, since: datetime, limit: int
    ) -> list[ParticipantState]:
        """See ``Store.group_participants``."""
        with self._translate("read group participants"):
            rows = await self._fetch(_SELECT_PARTICIPANTS, (thread_key, to_db(since), limit))
        return [
            ParticipantState(
                row[0],
                row[1],
                usable_zone(row[2]),
                row[3],
                cast(datetime, from_db(row[4])),
                stated_location_from_db(row[5], row[0]),
            )
            for row in rows
        ]

    async def injections(self, thread_key: str) -> dict[tuple[str, int], str]:
        """See ``Store.injections``."""
        with self._translate("read injections"):
            rows = await self._fetch(_SELECT_INJECTIONS, (thread_key,))
        return {(row[0], int(row[1])): row[2] for row in rows}

    async def has_injections(self, thread_key: str) -> bool:
        """See ``Store.has_injections``."""
        with self._translate("read injections"):
            rows = await self._fetch(_HAS_INJECTIONS, (thread_key,))
        return bool(rows[0][0])

    async def newest_message_injected_at(
        self, thread_key: str, user_key: str, key: tuple[str, int]
    ) -> datetime | None:
        """See ``Store.newest_message_injected_at``."""
        with self._translate("read injections"):
            rows = await self._fetch(_SELECT_NEWEST_INJECTED, (*key, thread_key, user_key))
        return from_db(rows[0][0]) if rows else None

    async def newest_message_place(
        self, thread_key: str, user_key: str
    ) -> tuple[tuple[str, int] | None, datetime] | None:
        """See ``Store.newest_message_place``."""
        with self._translate("read the newest message"):
            rows = await self._fetch(_SELECT_NEWEST_PLACE, (thread_key, user_key))
        if not rows:
            return None
        fingerprint, index, at = rows[0]
        place = (str(fingerprint), int(index)) if fingerprint is not None else None
        received = from_db(at)
        return None if received is None else (place, received)

    async def injections_for(
        self, thread_key: str, keys: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        """See ``Store.injections_for``."""
        found: dict[tuple[str, int], str] = {}
        with self._translate("read injections"):
            for start in range(0, len(keys), _INJECTION_KEYS_PER_QUERY):
                batch = keys[start : start + _INJECTION_KEYS_PER_QUERY]
                params = [*(part for key in batch for part in key), thread_key]
                rows = await self._fetch(_select_injections_for(len(batch)), params)
                found.update({(row[0], int(row[1])): row[2] for row in rows})
        return found

    async def repeated_injections(self, thread_key: str) -> list[tuple[str, int, str]]:
        """See ``Store.repeated_injections``."""
        with self._translate("read injections"):
            rows = await self._fetch(_SELECT_REPEATED_INJECTIONS, (thread_key,))
        return [(row[0], int(row[1]), row[2]) for row in rows]

    def save_injection(
        self,
        thread_key: str,
        fingerprint: str,
        ordinal: int,
        text: str,
        at: datetime,
        contexts: Mapping[int, str] | None = None,
    ) -> asyncio.Future[None]:
        """See ``Store.save_injection``."""
        others = {copy: ctx for copy, ctx in (contexts or {}).items() if copy != ordinal}
        own = contexts.get(ordinal) if contexts else None
        params = (thread_key, fingerprint, ordinal, text, to_db(at), own)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(_INSERT_INJECTION, params)
            conn.executemany(
                _SET_INJECTION_CONTEXT,
                [(ctx, thread_key, fingerprint, copy) for copy, ctx in others.items()],
            )

        return self._submit("save an injection", write, one_statement=not others)

    async def get_user(self, user_key: str) -> UserState | None:
        """See ``Store.get_user``."""
        with self._translate("read a user"):
            rows = await self._fetch(_SELECT_USER, (user_key,))
        if not rows:
            return None
        row = rows[0]
        return UserState(
            user_key=row[0],
            channel=row[1],
            platform_user_id=row[2],
            display_name=row[3],
            person_id=row[4],
            default_tz=row[5],
            locale=row[6],
            last_interaction_any_channel_at=from_db(row[7]),
            last_channel=row[8],
        )

    async def get_thread(self, thread_key: str) -> ThreadState | None:
        """See ``Store.get_thread``."""
        with self._translate("read a thread"):
            rows = await self._fetch(_SELECT_THREAD, (thread_key,))
        if not rows:
            return None
        first = rows[0]
        by_user: dict[str, datetime] = {}
        members: list[str] = []
        for row in rows:
            seen = from_db(row[9])
            if row[8] is not None:
                members.append(row[8])
                if seen is not None:
                    by_user[row[8]] = seen
        return ThreadState(
            thread_key=first[0],
            channel=first[1],
            chat_type=cast(ChatType, first[2]),
            kind=first[3],
            session_tz=first[4],
            last_interaction_at=from_db(first[5]),
            last_user_message_at=from_db(first[6]),
            last_agent_message_at=from_db(first[7]),
            last_user_message_by_user=by_user,
            participants=tuple(sorted(members)),
        )

    async def transcript(self, thread_key: str, limit: int = 50) -> list[StoredMessage]:
        """See ``Store.transcript``; messages are in the order they were recorded."""
        if limit <= 0:
            # SQLite reads a negative LIMIT as "no limit".
            return []
        with self._translate("read a transcript"):
            rows = await self._fetch(_SELECT_TRANSCRIPT, (thread_key, limit))
        rows.reverse()
        return [
            StoredMessage(
                id=row[0],
                thread_key=row[1],
                user_key=row[2],
                role=cast(Role, row[3]),
                text=row[4],
                at=cast(datetime, from_db(row[5])),
                complete=bool(row[6]),
                command=bool(row[7]),
            )
            for row in rows
        ]

    async def peek_prior(self, thread_key: str, user_key: str) -> PriorState:
        """See ``Store.peek_prior``; read on the reader, so it never waits for a write."""
        with self._translate("read the prior state"):
            return await read_prior(await self._read(), thread_key, user_key)

    async def get_clock_data(self, user_key: str) -> ClockData | None:
        """See ``Store.get_clock_data``."""
        with self._translate("read a user's clock data"):
            rows = await self._fetch(SELECT_CLOCK_DATA, (user_key,))
        if not rows:
            return None
        return clock_data_from_row(rows[0][1:5], rows[0][0] or user_key)

    async def update_clock_data(self, user_key: str, change: ClockDataChange) -> ClockData | None:
        """See ``Store.update_clock_data``; ``change`` runs in the writer's thread."""
        return await self._write(
            "update a user's clock data",
            lambda conn: awareness.update_clock_data(conn, user_key, change),
        )

    async def set_thread_kind(self, thread_key: str, kind: str, *, explicit: bool) -> bool:
        """See ``Store.set_thread_kind``."""
        return await self._write(
            "set a thread's kind",
            lambda conn: awareness.set_thread_kind(conn, thread_key, kind, explicit),
        )

    async def hold_tool_call(self, held: HeldToolCall) -> None:
        """See ``Store.hold_tool_call``."""
        await self._write("hold a tool call", lambda conn: awareness.hold_tool_call(conn, held))

    async def take_held_tool_call(self, thread_key: str) -> HeldToolCall | None:
        """See ``Store.take_held_tool_call``."""
        return await self._write(
            "take a held tool call",
            lambda conn: awareness.take_held_tool_call(conn, thread_key),
        )

    async def export_clock_state(self) -> ClockStateSnapshot:
        """See ``Store.export_clock_state``."""
        # In a writer transaction rather than on the shared reader: a snapshot that
        # writes cannot tear, and it holds up inbound messages only for a few reads.
        async with self._transaction("export the clock state") as conn:
            return await export_snapshot(conn)

    async def import_clock_state(
        self, snapshot: ClockStateSnapshot, *, now: datetime
    ) -> ImportCounts:
        """See ``Store.import_clock_state``. Raises ``ValueError`` for a malformed key."""
        async with self._transaction("import the clock state") as conn:

            async def link(user_keys: Sequence[str]) -> None:
                # The same linking as ``link_users``, run on the transaction's connection
                # in its worker thread (aiosqlite's ``_execute``/``_conn``, as the writer).
                await conn._execute(links.link_users, conn._conn, user_keys, now)  # type: ignore[no-untyped-call]

            return await import_snapshot(conn, snapshot, now, link)

    async def link_users(self, user_keys: Sequence[str], *, now: datetime) -> str:
        """See ``Store.link_users``."""
        return await self._write("link users", lambda conn: links.link_users(conn, user_keys, now))

    async def unlink_user(self, user_key: str) -> bool:
        """See ``Store.unlink_user``."""
        return await self._write("unlink a user", lambda conn: links.unlink_user(conn, user_key))

    async def linked_users(self, user_key: str) -> list[str]:
        """See ``Store.linked_users``."""
        with self._translate("read linked users"):
            return await links.linked_users(await self._read(), user_key)

    async def create_link_code(self, user_key: str, code: str, expires_at: datetime) -> None:
        """See ``Store.create_link_code``."""
        await self._write(
            "create a link code",
            lambda conn: links.create_link_code(conn, user_key, code, expires_at),
        )

    async def redeem_link_code(
        self, code: str, user_key: str, now: datetime, *, max_misses: int, window: timedelta
    ) -> LinkCodeTry:
        """See ``Store.redeem_link_code``."""
        return await self._write(
            "redeem a link code",
            lambda conn: links.redeem_link_code(conn, code, user_key, now, max_misses, window),
        )

    async def link_code_owner(self, code: str, now: datetime) -> str | None:
        """See ``Store.link_code_owner``."""
        with self._translate("read a link code"):
            return await links.link_code_owner(await self._read(), code, now)

    async def forget_user(self, user_key: str, *, dry_run: bool = False) -> ForgetReport | None:
        """See ``Store.forget_user``."""
        return await self._write(
            "forget a user", lambda conn: forget.forget_user(conn, user_key, dry_run=dry_run)
        )

    # -- continuity: contracts in ``ContinuityStore``; the SQL in sqlite_continuity,
    # sqlite_continuity_log and sqlite_sessions.

    async def thread_work_context(self, thread_key: str, *, now: datetime) -> WorkContext:
        return await continuity.thread_work_context(self._snapshot, self._write, thread_key, now)

    async def use_work_context(
        self, thread_key: str, user_key: str, name: str, *, now: datetime
    ) -> tuple[WorkContext, bool]:
        return await continuity.use_work_context(self._write, thread_key, user_key, name, now)

    async def get_work_context(self, work_context_id: str) -> WorkContext | None:
        return await continuity.get_work_context(self._snapshot, work_context_id)

    async def assign_unlinked_context(
        self, thread_key: str, user_key: str, *, now: datetime
    ) -> WorkContext:
        return await continuity.assign_unlinked_context(self._write, thread_key, user_key, now)

    async def active_users(self, since: datetime) -> list[tuple[str, str | None]]:
        return await continuity.active_users(self._snapshot, since)

    async def recent_work_contexts(self, user_key: str, limit: int) -> list[WorkContext]:
        return await continuity.recent_work_contexts(self._snapshot, user_key, limit)

    async def context_threads(self, work_context_id: str) -> list[str]:
        return await continuity.context_threads(self._snapshot, work_context_id)

    async def history_start(self, thread_key: str) -> int | None:
        return await sessions.history_start(self._snapshot, thread_key)

    async def set_history_start(self, thread_key: str, message_id: int) -> None:
        await sessions.set_history_start(self._write, thread_key, message_id)

    async def transcript_from(
        self, thread_key: str, first_id: int | None, limit: int
    ) -> list[StoredMessage]:
        return await sessions.transcript_from(self._snapshot, thread_key, first_id, limit)

    async def start_session(
        self,
        session_id: str,
        thread_key: str,
        user_key: str,
        started_at: datetime,
        first_message_id: int,
    ) -> Session:
        return await sessions.start_session(
            self._write, session_id, thread_key, user_key, started_at, first_message_id
        )

    async def current_session(self, thread_key: str) -> Session | None:
        return await sessions.current_session(self._snapshot, thread_key)

    async def get_session(self, session_id: str) -> Session | None:
        return await sessions.get_session(self._snapshot, session_id)

    async def set_session_cards(self, session_id: str, fingerprint: str | None) -> None:
        await sessions.set_session_cards(self._write, session_id, fingerprint)

    async def mark_session_tool_use(self, session_id: str) -> None:
        await sessions.mark_session_tool_use(self._write, session_id)

    async def capture_candidates(self) -> list[Session]:
        return await sessions.capture_candidates(self._snapshot)

    async def latest_thread_of(self, user_key: str) -> str | None:
        return await sessions.latest_thread_of(self._snapshot, user_key)

    async def session_messages(self, session_id: str, limit: int) -> list[StoredMessage]:
        return await sessions.session_messages(self._snapshot, session_id, limit)

    async def context_sessions(self, work_context_id: str, since: datetime) -> list[Session]:
        return await sessions.context_sessions(self._snapshot, work_context_id, since)

    async def record_capture(
        self,
        session_id: str,
        *,
        through_message_id: int,
        at: datetime,
        summary: str | None,
        mode: str,
        entries: Sequence[ContinuityEntry],
        unlinked_cap: int,
    ) -> None:
        await continuity_log.record_capture(
            self._write,
            session_id,
            through_message_id=through_message_id,
            at=at,
            summary=summary,
            mode=mode,
            entries=entries,
            unlinked_cap=unlinked_cap,
        )

    async def continuity_entries(
        self, work_context_id: str, *, now: datetime
    ) -> list[ContinuityEntry]:
        return await continuity_log.continuity_entries(self._snapshot, work_context_id, now)

    async def all_live_entries(self, *, now: datetime) -> list[ContinuityEntry]:
        return await continuity_log.all_live_entries(self._snapshot, now)

    async def update_entry(
        self,
        entry_id: str,
        *,
        content: dict[str, Any] | None = None,
        decay_at: datetime | None = None,
        delivered_at: datetime | None = None,
        promoted_node_id: str | None = None,
    ) -> None:
        changes = {
            "content": content,
            "decay_at": decay_at,
            "delivered_at": delivered_at,
            "promoted_node_id": promoted_node_id,
        }
        await continuity_log.update_entry(self._write, entry_id, changes)

    async def decay_entries(
        self, *, now: datetime, work_context_ids: Collection[str] | None = None
    ) -> list[str]:
        return await continuity_log.decay_entries(self._write, now, work_context_ids)

    async def save_constellation(
        self, work_context_id: str, view: dict[str, Any], *, built_at: datetime
    ) -> None:
        await continuity_log.save_constellation(self._write, work_context_id, view, built_at)

    async def constellation(self, work_context_id: str) -> dict[str, Any] | None:
        return await continuity_log.constellation(self._snapshot, work_context_id)

    async def stale_constellations(self) -> list[str]:
        return await continuity_log.stale_constellations(self._snapshot)

    async def card_sources(self, thread_key: str, user_key: str, *, now: datetime) -> CardSources:
        return await continuity.card_sources(self._snapshot, self._write, thread_key, user_key, now)

    async def replace_rollup(
        self, user_key: str, segments: Sequence[RollupSegment], *, generated_at: datetime
    ) -> None:
        await continuity.replace_rollup(self._write, user_key, segments, generated_at)

    async def rollup_segments(self, user_key: str) -> list[RollupSegment]:
        return await continuity.rollup_segments(self._snapshot, user_key)

    async def add_memory_fact(
        self,
        user_key: str,
        kind: MemoryKind,
        text: str,
        *,
        source: MemorySource,
        at: datetime,
        source_entry_id: str | None = None,
        replaces_kind: bool = False,
        replaces: Sequence[int] = (),
    ) -> MemoryFact | None:
        return await continuity.add_memory_fact(
            self._write, user_key, kind, text, source, at, source_entry_id, replaces_kind, replaces
        )

    async def memory_facts(self, user_key: str) -> list[MemoryFact]:
        return await continuity.memory_facts(self._snapshot, user_key)

    async def delete_memory_fact(self, user_key: str, fact_id: int) -> bool:
        return await continuity.delete_memory_fact(self._write, user_key, fact_id)

    async def compact_memory(
        self, now: datetime, user_keys: Collection[str] | None = None
    ) -> list[MemoryFact]:
        return await continuity.compact_memory(self._write, now, user_keys)

    async def job_mark(self, job: str, scope: str) -> str | None:
        return await continuity.job_mark(self._snapshot, job, scope)

    async def set_job_mark(self, job: str, scope: str, mark: str, *, at: datetime) -> None:
        await continuity.set_job_mark(self._write, job, scope, mark, at)

    async def claim_job_mark(self, job: str, scope: str, mark: str, *, at: datetime) -> bool:
        return await continuity.claim_job_mark(self._write, job, scope, mark, at)

    # -- plumbing ----------------------------------------------------------------------

    async def _connect(self) -> aiosqlite.Connection:
        # isolation_level=None: no implicit BEGINs from the sqlite3 module; transactions
        # are exactly the BEGIN IMMEDIATE ... COMMIT blocks below.
        conn = aiosqlite.connect(self._path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            await conn
        except BaseException:
            # On a failed connect aiosqlite stops its worker thread without waiting for
            # it; if the event loop is gone before the thread hands back its last result,
            # the thread dies with "Event loop is closed". Wait for it to finish.
            await asyncio.to_thread(conn._thread.join, 5)
            raise
        try:
            await conn.executescript(
                f"PRAGMA foreign_keys = ON; PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d};"
            )
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _close_connections(self) -> None:
        for conn in (self._reader, self._writer):
            if conn is not None:
                try:
                    await conn.close()
                except sqlite3.Error as exc:
                    log.warning("closing the SQLite store at %s failed: %s", self._path, exc)
        self._reader = self._writer = None

    async def _read(self) -> aiosqlite.Connection:
        """The reader, once every write made or queued so far is committed (including any
        the worker thread has): reads see them. Returns at once when nothing is pending."""
        if self._reader is None or self._batcher is None:
            raise self._not_open()
        await self._batcher.drain()
        return self._reader

    async def _fetch(self, sql: str, params: Any = ()) -> list[Any]:
        """The rows of one query on the reader (see ``_read``)."""
        return list(await (await self._read()).execute_fetchall(sql, params))

    def _not_open(self) -> StoreError:
        return StoreError(f"the SQLite store at {self._path} is not open; call open() first")

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._store_error(action, exc) from exc

    async def _write(self, action: str, write: Callable[[sqlite3.Connection], T]) -> T:
        """Apply one write now (after the queued ones); it commits with the others written
        meanwhile. Raises ``StoreError`` naming ``action`` if SQLite fails. It may change
        any prior state: the held rows are dropped."""
        self._priors.clear()
        return await self._group_writer().write(action, write)

    def _submit(
        self,
        action: str,
        write: Callable[[sqlite3.Connection], T],
        *,
        one_statement: bool = False,
    ) -> asyncio.Future[T]:
        """Queue one write, applied in the next loop iteration; the future resolves
        when it is committed, and raises ``StoreError`` naming ``action`` if SQLite fails.
        ``one_statement``: see ``GroupCommitWriter.submit``. Only for writes that change no
        prior state, or whose change the caller applies to the held rows."""
        return self._group_writer().submit(action, write, one_statement=one_statement)

    def _group_writer(self) -> GroupCommitWriter:
        if self._batcher is None:
            raise self._not_open()
        return self._batcher

    def _store_error(self, action: str, exc: sqlite3.Error) -> StoreError:
        error = StoreError(f"the SQLite store at {self._path} could not {action}: {exc}")
        error.__cause__ = exc
        return error

    async def _snapshot(self, action: str, read: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``read`` in the reader's thread inside one read transaction: one hop and
        one consistent view, however many statements it takes."""
        with self._translate(action):
            return await continuity.read_snapshot(await self._read(), read)

    @asynccontextmanager
    async def _transaction(self, action: str) -> AsyncIterator[aiosqlite.Connection]:
        """The writer, inside one ``BEGIN IMMEDIATE`` that commits if the body returns and
        rolls back if it raises; other writers wait on the lock until it ends."""
        if self._batcher is None:
            raise self._not_open()
        self._priors.clear()
        # The writes queued before this transaction land before it.
        await self._batcher.drain()
        async with self._write_lock:
            conn = self._writer
            if conn is None:
                raise self._not_open()
            self._batcher.commit_before_locking()
            with self._translate(action):
                await conn.execute_fetchall("BEGIN IMMEDIATE")
                try:
                    yield conn
                    await conn.commit()
                except BaseException:
                    # The worker thread runs calls in order, so even when we were
                    # cancelled mid-statement this rollback lands after that statement
                    # and before the next transaction's BEGIN.
                    await conn.rollback()
                    raise


_RECORD_INBOUND = "record an inbound message"


class _InboundStart(NamedTuple):
    """What both ways of recording an inbound message begin with."""

    at: str  # its stored received_at
    read: Callable[[sqlite3.Connection], Any]  # its SELECT_PRIOR row
    write: Callable[[sqlite3.Connection, Any], int]  # given that row; its row id
    writer: GroupCommitWriter
    held: Row | None  # the pair's row, held: no read needed
    version: int  # the held rows' version once this message moved them


def _inbound_writes(
    record: InboundRecord, at: str
) -> tuple[Callable[[sqlite3.Connection], Any], Callable[[sqlite3.Connection, Any], int]]:
    """The read of an inbound message's prior state (a ``SELECT_PRIOR`` row), and its
    write given that row, which returns the message's row id; ``at`` is its stored
    ``received_at``."""
    any_at = at if record.cross_channel else None
    user = {
        "user_key": record.user_key,
        "channel": record.channel,
        "platform_user_id": record.platform_user_id,
        "display_name": record.display_name,
        "received_at": at,
        "any_at": any_at,
        "any_ch": record.channel if record.cross_channel else None,
    }
    thread = (record.thread_key, record.channel, record.chat_type, at)
    message = _message_params(
        record.thread_key, record.user_key, "user", record.text, at, place=record.place
    )
    keys = {"thread_key": record.thread_key, "user_key": record.user_key}

    def read(conn: sqlite3.Connection) -> Any:
        return conn.execute(SELECT_PRIOR, keys).fetchone()

    def write(conn: sqlite3.Connection, row: Any) -> int:
        conn.execute(_UPSERT_USER, user)
        # The upsert never changes the user's person (a new user has none).
        person_id = row[PRIOR_PERSON_ID]
        if any_at is not None and person_id is not None:
            conn.execute(
                _MOVE_PERSON, {"at": at, "channel": record.channel, "person_id": person_id}
            )
        if not row[PRIOR_THREAD_EXISTS]:
            conn.execute(CREATE_THREAD, thread).fetchall()
        # Also moves the thread's times and the user's in the thread (migration 9's
        # triggers).
        return _inserted_id(conn.execute(_INSERT_MESSAGE, message))

    return read, write


def _inserted_id(cursor: sqlite3.Cursor) -> int:
    """The row id of the row an INSERT just made (cheaper than ``RETURNING id``)."""
    row_id = cursor.lastrowid
    if row_id is None:
        raise sqlite3.InterfaceError("the INSERT reported no row id")
    return row_id


def _message_params(
    thread_key: str,
    user_key: str | None,
    role: Role,
    text: str,
    at: str,
    *,
    complete: bool = True,
    place: tuple[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "place_fingerprint": place[0] if place is not None else None,
        "place_index": place[1] if place is not None else None,
        "thread_key": thread_key,
        "user_key": user_key,
        "role": role,
        # A reply may carry a lone surrogate from the upstream's JSON; SQLite takes UTF-8.
        "text": valid_text(text),
        "at": at,
        "complete": int(complete),
    }
