"""The part of the store interface that keeps continuity (spec 001): work contexts,
sessions, the continuity log, constellations, rollups, living memory and job runs.

"The user's" always means the user's and every user linked to the same person: contexts,
rollups and memory are stored under the user key that made them and read across the
person, so linking and unlinking never copy or lose any of it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

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
from middleware.types import ChatType

if TYPE_CHECKING:
    from middleware.store.records import StoredMessage


class ContinuityStore(Protocol):
    # --- work contexts -------------------------------------------------------------

    async def thread_work_context(self, thread_key: str, *, now: datetime) -> WorkContext:
        """The context the thread belongs to. A thread never moved into a named context
        has its own default one (``default_context_id``; named after the thread), made on
        first use. Raises ``NotFoundError`` for a thread never seen."""
        ...

    async def use_work_context(
        self, thread_key: str, user_key: str, name: str, *, now: datetime
    ) -> tuple[WorkContext, bool]:
        """Move the thread into the user's context called ``name`` (matched without
        regard to case or surrounding spaces, across the linked person's users), making
        it if there is none; return it and whether it was made. A thread's own (unnamed)
        context given a name this way takes its sessions not yet captured along; a thread
        moved out of a named context leaves its sessions there, which ends its current
        one (``current_session``). Sessions already captured stay where they were captured.
        Raises ``NotFoundError`` for a thread never seen, ``ValueError`` for a blank
        name."""
        ...

    async def get_work_context(self, work_context_id: str) -> WorkContext | None:
        """The context with that id, or ``None``."""
        ...

    async def assign_unlinked_context(
        self, thread_key: str, user_key: str, *, now: datetime
    ) -> WorkContext:
        """Put the thread in the user's unlinked bucket (``unlinked_context_id``), made
        on first use: where API turns without a thread of their own go."""
        ...

    async def active_users(self, since: datetime) -> list[tuple[str, str | None]]:
        """Every user with a message at or after ``since``, with the timezone the clock
        uses for them (the linked person's when linked), sorted by key."""
        ...

    async def recent_work_contexts(
        self, user_key: str, limit: int, *, unlisted: bool = False
    ) -> list[WorkContext]:
        """The user's named contexts and the default contexts of threads they spoke in
        that are still in them (not moved into a named one), most recently active
        first. With ``unlisted``, also those /context does not list, as no thread can
        go (back) into them: those of threads since moved into a named one, and the
        person's unlinked buckets (API turns without a thread of their own). The work
        done there still happened: the recent-activity rollup and the nightly sweep keep
        them."""
        ...

    async def context_threads(self, work_context_id: str) -> list[str]:
        """The keys of the threads now in the context, sorted."""
        ...

    # --- channel history ---------------------------------------------------------

    async def history_start(self, thread_key: str) -> int | None:
        """The first message id still forwarded in the thread's history after the relay
        last compacted it (``None``: never compacted)."""
        ...

    async def set_history_start(self, thread_key: str, message_id: int) -> None:
        """Remember where the thread's forwarded history now starts. Raises
        ``NotFoundError`` for a thread never seen."""
        ...

    async def transcript_from(
        self, thread_key: str, first_id: int | None, limit: int
    ) -> list[StoredMessage]:
        """The thread's last ``limit`` messages of the conversation (neither a command
        the relay answered itself nor its answer, nor a reply that never reached the
        user) with ids ≥ ``first_id`` (all when ``None``), oldest first, each with the
        name its speaker had when it was stored."""
        ...

    async def speaker_label(
        self, thread_key: str, chat_type: ChatType, user_key: str, display_name: str | None
    ) -> str | None:
        """What a message the user sends now is stored as said by (``StoredMessage.
        speaker_name``): ``display_name`` (else their stored one), followed by their user
        key in a group where another member already went by that name (case aside):
        ``Alex (telegram:51)``. ``None`` for a user with no name."""
        ...

    # --- sessions ------------------------------------------------------------------

    async def start_session(
        self,
        session_id: str,
        thread_key: str,
        user_key: str,
        started_at: datetime,
        first_message_id: int,
    ) -> Session:
        """Open a new session of the thread, in the thread's current work context,
        starting with message ``first_message_id``; the thread's earlier session ends
        at its last turn. Raises ``NotFoundError`` for a thread never seen."""
        ...

    async def current_session(self, thread_key: str) -> Session | None:
        """The thread's latest session with its counts, or ``None`` if it has none or
        that one has ended: it is in another work context than the thread's now."""
        ...

    async def get_session(self, session_id: str) -> Session | None: ...

    async def set_session_cards(self, session_id: str, fingerprint: str | None) -> None:
        """Remember which user message (by injection fingerprint) carries the session's
        cards, so a request that no longer contains it shows a compacted history."""
        ...

    async def mark_session_tool_use(self, session_id: str) -> None:
        """Note that a tool ran in the session (that makes it dirty, spec 001 §5.2)."""
        ...

    async def capture_candidates(self) -> list[Session]:
        """The latest session of every thread with a user message after its last
        capture (the sessions that may be dirty), oldest activity first."""
        ...

    async def latest_thread_of(self, user_key: str) -> str | None:
        """The thread of the latest user message of the user (or anyone linked to
        them): the thread that has their focus."""
        ...

    async def session_messages(self, session_id: str, limit: int) -> list[StoredMessage]:
        """The session's last ``limit`` messages (user and assistant, but no reply that
        never reached the user: ``Store.mark_undelivered``), oldest first."""
        ...

    async def context_sessions(self, work_context_id: str, since: datetime) -> list[Session]:
        """The context's sessions started at or after ``since``, newest first."""
        ...

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
        """Store one capture in one transaction: append ``entries``, set the session's
        summary and its mode (both kept when ``summary`` is None and there is one), last
        capture instant and the last message the capture covered (never moved back), and
        mark the constellation of every context an entry went to stale (a context not
        made yet is made). An unlinked bucket keeps only its newest ``unlinked_cap``
        entries (oldest evicted first). Raises ``NotFoundError`` for an unknown session."""
        ...

    # --- the log -------------------------------------------------------------------

    async def continuity_entries(
        self, work_context_id: str, *, now: datetime
    ) -> list[ContinuityEntry]:
        """The context's entries not yet decayed at ``now`` (``decay_at`` > ``now``),
        oldest first."""
        ...

    async def all_live_entries(self, *, now: datetime) -> list[ContinuityEntry]:
        """Every entry not yet decayed at ``now`` (for the nightly job), oldest first."""
        ...

    async def update_entry(
        self,
        entry_id: str,
        *,
        content: dict[str, Any] | None = None,
        decay_at: datetime | None = None,
        delivered_at: datetime | None = None,
        promoted_node_id: str | None = None,
    ) -> None:
        """Change an entry's lifecycle fields (``delivered_at`` also sets ``delivered``,
        ``promoted_node_id`` also sets ``promoted_to_graph``) and mark its context's
        constellation stale. Only the fields given change; an unknown entry (decayed
        meanwhile) is left alone."""
        ...

    async def decay_entries(
        self, *, now: datetime, work_context_ids: Collection[str] | None = None
    ) -> list[str]:
        """Delete the entries decayed at ``now`` (``decay_at`` ≤ ``now``: an entry is
        gone from its decay instant on), of the contexts ``work_context_ids`` only when
        given; return the ids of the contexts that lost any, sorted (their
        constellations are marked stale)."""
        ...

    # --- constellations ------------------------------------------------------------

    async def save_constellation(
        self, work_context_id: str, view: dict[str, Any], *, built_at: datetime
    ) -> None:
        """Keep the context's derived view; it is fresh until the log changes. Raises
        ``NotFoundError`` for a context never made."""
        ...

    async def constellation(self, work_context_id: str) -> dict[str, Any] | None:
        """The context's stored view (maybe stale), or ``None`` if never built."""
        ...

    async def stale_constellations(self) -> list[str]:
        """The ids of contexts whose log changed since their view was last built."""
        ...

    async def card_sources(self, thread_key: str, user_key: str, *, now: datetime) -> CardSources:
        """In one round trip: the thread's work context (made as in
        ``thread_work_context``), its stored view (``None`` if never built; maybe
        stale), the user's rollup segments and their living-memory facts."""
        ...

    # --- rollups -------------------------------------------------------------------

    async def replace_rollup(
        self, user_key: str, segments: Sequence[RollupSegment], *, generated_at: datetime
    ) -> None:
        """Replace the recent-activity rollup kept for ``user_key`` with ``segments``,
        stamped ``generated_at``. Each linked user keeps their own; reads combine them."""
        ...

    async def rollup_segments(self, user_key: str) -> list[RollupSegment]:
        """The user's (and linked users') rollup segments, newest activity first, each
        context once (with its latest activity)."""
        ...

    # --- living memory -------------------------------------------------------------

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
        """Remember a fact for the user, as sure of it as its source makes it (spec 003
        §8, ``base_confidence``); ``committed`` when they asked for it to be kept (never
        forgotten by the compactor or over ``max_facts``). The same text (ignoring case
        and spaces) already known for the person is not stored again (``None``): it was
        mentioned again at ``at``, and its confidence rises (``mentioned_again``); one
        only inferred (``promoted``) takes the new source when the user or an operator
        states it (spec 002 A4), and one said again with ``committed`` becomes committed
        (said again without, it stays so).
        With ``replaces_kind`` the person's earlier facts of the same kind are deleted
        first (a new name replaces the old one), and so are the person's facts whose ids
        are in ``replaces`` (what a correction supersedes), in the same transaction.
        Raises ``ValueError`` for blank text."""
        ...

    async def memory_facts(self, user_key: str) -> list[MemoryFact]:
        """The person's facts, oldest first."""
        ...

    async def delete_memory_fact(self, user_key: str, fact_id: int) -> bool:
        """Delete one of the person's facts; ``False`` if no such fact is theirs."""
        ...

    async def compact_memory(
        self, now: datetime, user_keys: Collection[str] | None = None
    ) -> list[MemoryFact]:
        """Delete the facts of ``user_keys`` (everyone's when ``None``) that the memory
        compactor forgets at ``now`` (spec 003 §5.5: confidence below 0.3 and no mention
        in 60 days; never a correction nor a committed fact; ``is_forgettable``); return
        them."""
        ...

    # --- jobs ----------------------------------------------------------------------

    async def job_mark(self, job: str, scope: str) -> str | None:
        """The mark the job last left for ``scope`` (e.g. the local date it ran for)."""
        ...

    async def set_job_mark(self, job: str, scope: str, mark: str, *, at: datetime) -> None: ...

    async def claim_job_mark(self, job: str, scope: str, mark: str, *, at: datetime) -> bool:
        """Leave ``mark`` for ``scope`` unless the mark there is already as late (marks
        compare as text: ISO dates); ``True`` if this call left it. Of several processes
        claiming the same run, exactly one gets ``True`` and runs the job."""
        ...
