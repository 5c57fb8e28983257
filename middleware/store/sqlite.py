"""The embedded SQLite ``Store``: the standard ``sqlite3`` module and aiosqlite.

The connections, their lifecycle and transactions are ``SqliteConnections``
(``sqlite_connection``), which ``SqliteStore`` extends with the ``Store`` methods.

``record_inbound`` is on the path of every turn, so each write is a few statements that
move timestamps in SQL (``MAX``/``CASE`` on the fixed-format ISO text, whose string order
is time order) rather than read-modify-write round trips; inserting a message moves its
thread's and its sender's times by trigger (migration 9), so a reply is one statement.
The SQL of a turn's messages is in ``sqlite_turns``; of injections, ``sqlite_injections``;
of users, threads and participants, ``sqlite_threads``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

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
from middleware.store import sqlite_awareness as awareness
from middleware.store import sqlite_continuity as continuity
from middleware.store import sqlite_continuity_log as continuity_log
from middleware.store import sqlite_forget as forget
from middleware.store import sqlite_links as links
from middleware.store import sqlite_sessions as sessions
from middleware.store.clock_state import ClockStateSnapshot, ImportCounts
from middleware.store.migrations import from_db, to_db
from middleware.store.records import (
    ClockData,
    ClockDataChange,
    ForgetReport,
    HeldToolCall,
    InboundRecord,
    InboundResult,
    LinkCodeTry,
    ParticipantState,
    PriorState,
    QueuedInbound,
    StoredMessage,
    ThreadState,
    UserState,
)
from middleware.store.sqlite_clock_state import (
    SELECT_CLOCK_DATA,
    clock_data_from_row,
    export_snapshot,
    import_snapshot,
    prior_from_row,
    read_prior,
)
from middleware.store.sqlite_connection import SqliteConnections
from middleware.store.sqlite_injections import (
    HAS_INJECTIONS,
    INJECTION_KEYS_PER_QUERY,
    SELECT_INJECTIONS,
    SELECT_NEWEST_INJECTED,
    SELECT_REPEATED_INJECTIONS,
    edit_injections_write,
    save_injection_write,
    select_injections_for,
)
from middleware.store.sqlite_prior_cache import Row
from middleware.store.sqlite_threads import (
    MARK_LEFT,
    SELECT_GROUP_PLAN_HOLDERS,
    SELECT_PARTICIPANTS,
    SELECT_THREAD,
    SELECT_USER,
    SET_APP_LOCALE,
    participants_from_rows,
    thread_from_rows,
    user_from_row,
    write_thread_timezone,
    write_user_locale,
    write_user_timezone,
)
from middleware.store.sqlite_turns import (
    RECORD_INBOUND,
    SELECT_NEWEST_PLACE,
    SELECT_SPEAKER_LABEL,
    SELECT_TRANSCRIPT,
    InboundStart,
    mark_command_write,
    mark_undelivered_write,
    messages_from_rows,
    newest_place_from_rows,
    reply_write,
    start_inbound,
)
from middleware.types import ChatType


class SqliteStore(SqliteConnections):
    """The ``Store`` on one SQLite file (WAL mode), created with its directory if missing.

    Not usable before ``open()``; every method then raises ``StoreError`` when SQLite
    fails, with the file's path in the message. Passing a naive ``datetime`` is a
    programming error and raises ``ValueError``.
    """

    async def record_inbound(self, record: InboundRecord) -> InboundResult:
        """See ``Store.record_inbound``. The id is the message's row id. Applied at once,
        with its read in one savepoint (no read when the pair's row is held: see
        ``sqlite_prior_cache``); committed with the others (``sqlite_writer``)."""
        start = start_inbound(record, self._group_writer, self._priors)
        write, held = start.write, start.held
        if held is not None:
            message_id = await start.writer.write(RECORD_INBOUND, lambda conn: write(conn, held))
            return InboundResult(message_id, prior_from_row(held), start.landing)

        def both(conn: sqlite3.Connection) -> tuple[Row, int]:
            row = start.read(conn)
            return row, write(conn, row)

        row, message_id = await start.writer.write(RECORD_INBOUND, both)
        self._keep_prior(record, start, row)
        return InboundResult(message_id, prior_from_row(row), start.landing)

    async def queue_inbound(self, record: InboundRecord) -> QueuedInbound:
        """See ``Store.queue_inbound``. The prior state is read at once (or was held); the
        write is applied in the next loop iteration, after the request the turn sends
        upstream meanwhile has gone out (``sqlite_writer``)."""
        start = start_inbound(record, self._group_writer, self._priors)
        write, held = start.write, start.held
        if held is not None:
            stored = start.writer.queue(RECORD_INBOUND, lambda conn: write(conn, held))
            return QueuedInbound(prior_from_row(held), stored, start.landing)
        row, stored = await start.writer.read_then_queue(RECORD_INBOUND, start.read, write)
        self._keep_prior(record, start, row)
        return QueuedInbound(prior_from_row(row), stored, start.landing)

    def _keep_prior(self, record: InboundRecord, start: InboundStart, before: Row) -> None:
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
        write = reply_write(thread_key, text, at, complete)
        stored = self._submit("record a reply", write, one_statement=True)
        self._priors.reply(thread_key, at)
        return stored

    def mark_command(self, thread_key: str, message_id: int) -> asyncio.Future[None]:
        """See ``Store.mark_command``."""
        write = mark_command_write(message_id)
        stored = self._submit("mark a command", write, one_statement=True)
        self._priors.command(thread_key)
        return stored

    def mark_undelivered(self, thread_key: str, message_id: int) -> asyncio.Future[None]:
        """See ``Store.mark_undelivered``."""
        return self._submit(
            "mark a reply undelivered", mark_undelivered_write(message_id), one_statement=True
        )

    async def set_user_timezone(
        self, user_key: str, zone: str | None, *, create_at: datetime | None = None
    ) -> bool:
        """See ``Store.set_user_timezone``."""
        async with self._transaction("set a user's timezone") as conn:
            return await write_user_timezone(conn, user_key, zone, create_at=create_at)

    async def set_thread_timezone(self, thread_key: str, zone: str | None) -> bool:
        """See ``Store.set_thread_timezone``."""
        async with self._transaction("set a thread's timezone") as conn:
            return await write_thread_timezone(conn, thread_key, zone)

    async def set_user_locale(self, user_key: str, locale: str | None) -> bool:
        """See ``Store.set_user_locale``."""
        async with self._transaction("set a user's locale") as conn:
            return await write_user_locale(conn, user_key, locale)

    async def set_app_locale(self, user_key: str, locale: str | None) -> None:
        """See ``Store.set_app_locale``."""
        params = {"user_key": user_key, "locale": locale}

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(SET_APP_LOCALE, params)

        await self._write("keep a user's app locale", write)

    async def group_participants(
        self, thread_key: str, since: datetime, limit: int
    ) -> list[ParticipantState]:
        """See ``Store.group_participants``."""
        params = (thread_key, to_db(since), limit)
        with self._translate("read group participants"):
            rows = await self._fetch(SELECT_PARTICIPANTS, params)
        return participants_from_rows(rows)

    async def group_plan_holders(self, thread_key: str, limit: int) -> list[ParticipantState]:
        """See ``Store.group_plan_holders``."""
        params = {"thread_key": thread_key, "limit": limit}
        with self._translate("read group plan holders"):
            rows = await self._fetch(SELECT_GROUP_PLAN_HOLDERS, params)
        return participants_from_rows(rows)

    async def mark_left(self, thread_key: str, user_key: str, at: datetime) -> int:
        """See ``Store.mark_left``."""
        params = {"thread_key": thread_key, "user_key": user_key, "at": to_db(at)}
        async with self._transaction("mark a member as gone") as conn:
            cursor = await conn.execute(MARK_LEFT, params)
            return cursor.rowcount

    async def injections(self, thread_key: str) -> dict[tuple[str, int], str]:
        """See ``Store.injections``."""
        with self._translate("read injections"):
            rows = await self._fetch(SELECT_INJECTIONS, (thread_key,))
        return {(row[0], int(row[1])): row[2] for row in rows}

    async def has_injections(self, thread_key: str) -> bool:
        """See ``Store.has_injections``."""
        with self._translate("read injections"):
            rows = await self._fetch(HAS_INJECTIONS, (thread_key,))
        return bool(rows[0][0])

    async def newest_message_injected_at(
        self, thread_key: str, user_key: str, key: tuple[str, int]
    ) -> datetime | None:
        """See ``Store.newest_message_injected_at``."""
        params = (*key, thread_key, user_key)
        with self._translate("read injections"):
            rows = await self._fetch(SELECT_NEWEST_INJECTED, params)
        return from_db(rows[0][0]) if rows else None

    async def newest_message_place(
        self, thread_key: str, user_key: str
    ) -> tuple[tuple[str, int] | None, datetime] | None:
        """See ``Store.newest_message_place``."""
        with self._translate("read the newest message"):
            rows = await self._fetch(SELECT_NEWEST_PLACE, (thread_key, user_key))
        return newest_place_from_rows(rows)

    async def injections_for(
        self, thread_key: str, keys: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        """See ``Store.injections_for``."""
        found: dict[tuple[str, int], str] = {}
        per_query = INJECTION_KEYS_PER_QUERY
        with self._translate("read injections"):
            for start in range(0, len(keys), per_query):
                batch = keys[start : start + per_query]
                params = [*(part for key in batch for part in key), thread_key]
                rows = await self._fetch(select_injections_for(len(batch)), params)
                found.update({(row[0], int(row[1])): row[2] for row in rows})
        return found

    async def repeated_injections(self, thread_key: str) -> list[tuple[str, int, str]]:
        """See ``Store.repeated_injections``."""
        with self._translate("read injections"):
            rows = await self._fetch(SELECT_REPEATED_INJECTIONS, (thread_key,))
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
        write, one_statement = save_injection_write(
            thread_key, fingerprint, ordinal, text, to_db(at), contexts
        )
        return self._submit("save an injection", write, one_statement=one_statement)

    async def edit_injections(
        self, user_key: str, marker: str, edit: Callable[[str], str | None]
    ) -> set[str]:
        """See ``Store.edit_injections``."""
        return await self._write(
            "edit injected blocks", edit_injections_write(user_key, marker, edit)
        )

    async def get_user(self, user_key: str) -> UserState | None:
        """See ``Store.get_user``."""
        with self._translate("read a user"):
            rows = await self._fetch(SELECT_USER, (user_key,))
        return user_from_row(rows[0]) if rows else None

    async def get_thread(self, thread_key: str) -> ThreadState | None:
        """See ``Store.get_thread``."""
        with self._translate("read a thread"):
            rows = await self._fetch(SELECT_THREAD, (thread_key,))
        return thread_from_rows(rows) if rows else None

    async def transcript(self, thread_key: str, limit: int = 50) -> list[StoredMessage]:
        """See ``Store.transcript``; messages are in the order they were recorded."""
        if limit <= 0:
            # SQLite reads a negative LIMIT as "no limit".
            return []
        with self._translate("read a transcript"):
            rows = await self._fetch(SELECT_TRANSCRIPT, (thread_key, limit))
        return messages_from_rows(rows)

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

    async def update_clock_data(
        self, user_key: str, change: ClockDataChange, *, create_at: datetime | None = None
    ) -> ClockData | None:
        """See ``Store.update_clock_data``; ``change`` runs in the writer's thread."""
        return await self._write(
            "update a user's clock data",
            lambda conn: awareness.update_clock_data(conn, user_key, change, create_at),
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

    async def recent_work_contexts(
        self, user_key: str, limit: int, *, unlisted: bool = False
    ) -> list[WorkContext]:
        return await continuity.recent_work_contexts(
            self._snapshot, user_key, limit, unlisted=unlisted
        )

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

    async def speaker_label(
        self, thread_key: str, chat_type: ChatType, user_key: str, display_name: str | None
    ) -> str | None:
        """See ``Store.speaker_label``: the rule the message's insert applies."""
        params = {
            "thread_key": thread_key,
            "chat_type": chat_type,
            "user_key": user_key,
            "display_name": display_name,
        }
        with self._translate("read a speaker's label"):
            rows = await self._fetch(SELECT_SPEAKER_LABEL, params)
        label: str | None = rows[0][0]
        return label

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
        committed: bool = False,
    ) -> MemoryFact | None:
        return await continuity.add_memory_fact(
            self._write,
            user_key,
            kind,
            text,
            source,
            at,
            source_entry_id,
            replaces_kind,
            replaces,
            committed,
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
