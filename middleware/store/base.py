"""The store interface. SQLite implements it first; PostgreSQL can implement it later.

All instants cross this interface as aware UTC ``datetime`` values. Every method that
touches several rows does so in one transaction, so a concurrent turn never sees (or
causes) a half-applied update (spec 000 §10.3).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from middleware.errors import StoreError
from middleware.store.clock_state import ClockStateSnapshot, ImportCounts
from middleware.store.continuity import ContinuityStore
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


class Store(ContinuityStore, Protocol):
    """Everything the relay persists. Implementations own their connections."""

    async def open(self) -> None:
        """Open connections and apply pending migrations."""
        ...

    async def close(self) -> None:
        """Flush and close; safe to call twice."""
        ...

    async def ping(self) -> bool:
        """Whether the store answers a trivial query."""
        ...

    def write_failure(self) -> str | None:
        """Why the store could not write lately (a full disk, a failing one, a read-only
        file), said for the operator, until a write succeeds again; else None."""
        ...

    def lost_writes(self) -> int:
        """How many writes nobody can send again (replies, injected blocks, marks) the
        store gave up since it opened: a commit failed and too many were waiting for the
        next one, or the store closed first. Each is also logged."""
        ...

    async def record_inbound(self, record: InboundRecord) -> InboundResult:
        """Store the user message and update every timestamp it moves.

        Returns the message id and the ``PriorState`` read just before the write, with no
        other write between them.

        Updates, atomically: the user row, the thread row (last user message, last
        interaction), the per-user last message in the thread, and — if
        ``record.counts_as_contact`` — the user's (and linked person's) last interaction
        on any channel. A later instant never gets overwritten by an earlier one.
        """
        ...

    async def queue_inbound(self, record: InboundRecord) -> QueuedInbound:
        """``record_inbound``, returning as soon as the ``PriorState`` is read.

        The write is queued then, ahead of any later read or write, and happens whatever
        becomes of the caller; it may land after the caller has sent the turn upstream.
        ``message_id`` resolves once it is applied. A caller must await it or see to its
        failure. Cheaper on the way upstream, dearer in CPU (the write loses the read's
        warm caches): for a turn with the event loop to itself.
        """
        ...

    def record_reply(
        self, thread_key: str, text: str, sent_at: datetime, *, complete: bool = True
    ) -> asyncio.Future[int]:
        """Store the assistant message and move the thread's agent/interaction times.

        The write is queued when this is called, ahead of any later read or write; the
        future gives the message id once it is committed. A caller that need not wait
        (the reply is already on its way to the user) may leave the future, but must
        then see to its failure.
        """
        ...

    def mark_command(self, thread_key: str, message_id: int) -> asyncio.Future[None]:
        """Mark the stored user message ``message_id`` of ``thread_key`` as a command the
        relay answered itself, which session turn counts, the dirty check (spec 001 §5.2)
        and the thread's conversation time (``PriorState.thread_last_conversation_at``)
        leave out, with the reply to it. For what is known to be a command only after it
        was stored (a settings directive); a chat command is stored as one
        (``InboundRecord.command``).

        Queued like ``record_reply``; an unknown id changes nothing.
        """
        ...

    def mark_undelivered(self, thread_key: str, message_id: int) -> asyncio.Future[None]:
        """Mark the stored reply ``message_id`` of ``thread_key`` as one of which nothing
        reached the user (the chat platform refused it, or could not be reached): the
        history later turns forward (``transcript_from``) and what continuity capture
        reads of the session (``session_messages``) leave it out. Its times stay: the
        relay did answer then (spec 000 §4.5 records an outbound message when it is sent),
        and timestamps never move back.

        Queued like ``record_reply``; an unknown id, or a user message's, changes nothing.
        """
        ...

    async def set_user_timezone(
        self, user_key: str, zone: str | None, *, create_at: datetime | None = None
    ) -> bool:
        """Set (or clear) the user's default zone — the linked person's when linked.

        Returns ``False`` if the user was never seen, unless ``create_at`` is given: then
        a user never seen is created first (as of that instant, with no contact and no
        threads yet), so their first message already has the zone. ``user_key`` must then
        be a valid user key (``split_user_key``).
        """
        ...

    async def set_thread_timezone(self, thread_key: str, zone: str | None) -> bool:
        """Set (or clear) the thread's session-zone override; ``False`` if unknown."""
        ...

    async def set_user_locale(self, user_key: str, locale: str | None) -> bool:
        """Set (or clear) the locale the user chose (``/lang``; a babel identifier) — the
        linked person's when linked. It wins over the one their app reports
        (``set_app_locale``). ``False`` if the user was never seen."""
        ...

    async def set_app_locale(self, user_key: str, locale: str | None) -> None:
        """Keep the locale the user's app reports on this account (a babel identifier), for
        ``PriorState.app_locale``. Called only when it differs from the stored one: no
        ordinary turn writes it. Applied after the writes queued before it (the user's
        message, which creates a new user)."""
        ...

    async def group_participants(
        self, thread_key: str, since: datetime, limit: int
    ) -> list[ParticipantState]:
        """Members who spoke in the thread at or after ``since``, most recent first; a
        member seen leaving (``mark_left``) only once they have written there since."""
        ...

    async def group_plan_holders(self, thread_key: str, limit: int) -> list[ParticipantState]:
        """Members of the group thread whose stored actions hold one they clocked for it
        (``scope`` "group"), most recently active first: however long ago they last wrote
        there, and whether or not they left since (the plan is the group's)."""
        ...

    async def mark_left(self, thread_key: str, user_key: str, at: datetime) -> int:
        """Note that ``user_key`` left the group chat ``thread_key`` (and its topics'
        threads, ``<thread_key>:topic:<id>``) at ``at``: ``group_participants`` leaves
        them out until they write there again. The number of the chat's threads they
        were a participant of (0: nothing to mark)."""
        ...

    async def injections(self, thread_key: str) -> dict[tuple[str, int], str]:
        """What was injected into the thread's user messages, by (fingerprint, ordinal),
        oldest first."""
        ...

    async def has_injections(self, thread_key: str) -> bool:
        """Whether any block was stored for the thread's messages."""
        ...

    async def newest_message_injected_at(
        self, thread_key: str, user_key: str, key: tuple[str, int]
    ) -> datetime | None:
        """When ``user_key``'s newest message in the thread was received, if the block
        stored for the thread's message ``key`` (fingerprint, ordinal) was made for it (it
        was saved at that instant): then that message is the one ``key`` names. None
        otherwise, and for unknown keys."""
        ...

    async def newest_message_place(
        self, thread_key: str, user_key: str
    ) -> tuple[tuple[str, int] | None, datetime] | None:
        """The place (``InboundRecord.place``) and time of ``user_key``'s newest message in
        the thread; its place is None when it was stored without one. None when the user
        has no message there."""
        ...

    async def injections_for(
        self, thread_key: str, keys: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        """The blocks stored for the messages ``keys`` (fingerprint, ordinal) of the thread;
        a message without one is left out."""
        ...

    async def repeated_injections(self, thread_key: str) -> list[tuple[str, int, str]]:
        """(fingerprint, ordinal, context) of the thread's blocks saved with a context:
        those of messages said more than once (see ``save_injection``)."""
        ...

    async def edit_injections(
        self, user_key: str, marker: str, edit: Callable[[str], str | None]
    ) -> set[str]:
        """Rewrite the blocks holding ``marker`` stored in the threads the person wrote in
        (``user_key`` and the accounts linked to it) as ``edit`` returns them: the same
        text leaves a block alone, ``None`` deletes it. One transaction, after the writes
        queued before it (``save_injection``'s included). Returns the threads whose blocks
        changed."""
        ...

    def save_injection(
        self,
        thread_key: str,
        fingerprint: str,
        ordinal: int,
        text: str,
        at: datetime,
        contexts: Mapping[int, str] | None = None,
    ) -> asyncio.Future[None]:
        """Remember an injection; the latest one stored for a message wins (it is the one
        the message was last forwarded with, so the one to replay).

        ``contexts`` (for a message said more than once) gives, by ordinal, the context
        (fingerprint of the message before it) of each copy of it in the request, this
        one's included; a copy whose block has a context keeps it.

        Queued when this is called, like ``record_reply``; the future resolves once it is
        committed, with the writes made meanwhile.
        """
        ...

    async def get_user(self, user_key: str) -> UserState | None:
        """The user, or ``None`` if never seen."""
        ...

    async def get_thread(self, thread_key: str) -> ThreadState | None:
        """The thread, or ``None`` if never seen."""
        ...

    async def transcript(self, thread_key: str, limit: int = 50) -> list[StoredMessage]:
        """The last ``limit`` messages of the thread, oldest first."""
        ...

    async def peek_prior(self, thread_key: str, user_key: str) -> PriorState:
        """The ``PriorState`` a message from ``user_key`` in ``thread_key`` would see now.

        The same read ``record_inbound`` makes, without writing anything (for previews).
        Unknown keys give the empty state.
        """
        ...

    async def get_clock_data(self, user_key: str) -> ClockData | None:
        """The user's clock data (the linked person's), or ``None`` if never seen."""
        ...

    async def update_clock_data(
        self, user_key: str, change: ClockDataChange, *, create_at: datetime | None = None
    ) -> ClockData | None:
        """Apply ``change`` to the user's clock data atomically (read, change, write in one
        transaction, so two turns of the same user never lose each other's update).

        Returns the data now stored, or ``None`` if the user was never seen, unless
        ``create_at`` is given: then a user never seen is created first, as
        ``set_user_timezone`` does.
        """
        ...

    async def set_thread_kind(self, thread_key: str, kind: str, *, explicit: bool) -> bool:
        """Set the thread's kind. An inferred kind (``explicit=False``) is stored only
        while nobody set one; an explicit kind always is. ``True`` if it was stored."""
        ...

    async def hold_tool_call(self, held: HeldToolCall) -> None:
        """Keep ``held`` for its thread, replacing any call held there before."""
        ...

    async def take_held_tool_call(self, thread_key: str) -> HeldToolCall | None:
        """Remove and return the call held in the thread (expired or not), if any."""
        ...

    async def export_clock_state(self) -> ClockStateSnapshot:
        """Every user and thread with their clock fields, from one consistent snapshot."""
        ...

    async def import_clock_state(
        self, snapshot: ClockStateSnapshot, *, now: datetime
    ) -> ImportCounts:
        """Merge ``snapshot`` into the store in one transaction.

        Users and threads not yet known are created (``now`` is the creation time of a
        row the snapshot gives no instant for); a thread's channel comes from its key, its
        chat type from the snapshot, else from its key. Instants only ever move forward
        (the later of stored and imported wins).
        A value the snapshot gives replaces the stored one, but nothing is cleared: a
        missing or empty value leaves what is stored. ``policy_overrides`` and
        ``calibration`` merge key by key (imported keys win); ``latest_actions`` merge by
        ``id``. A timezone goes to the linked person when the user is linked.

        Each group of ``links`` is linked (as ``link_users``) before the users' values are
        merged, so linked users' shared values land once on their person; a user already
        linked to others in the store stays linked to them too (links are never undone).
        """
        ...

    async def link_users(self, user_keys: Sequence[str], *, now: datetime) -> str:
        """Link the users to one person (spec 000 §7.0) in one transaction; return its id.

        Every key must be a user already seen, else ``NotFoundError`` names the unknown
        ones; fewer than two distinct keys raise ``ValueError``. When some users are
        already linked, their persons merge into the first one (with all their users);
        otherwise a new person is made. The person then holds the merge of everything the
        users and persons held: the first timezone and locale known (an existing person's
        first), the latest last contact on any channel with its channel, policy overrides
        key by key (an existing person's keys win), calibrated activities by newest
        ``updated_iso``, and latest actions once per ``id``. The users' own clock data
        is cleared (the person owns it); their own timezone stays as it is.
        """
        ...

    async def unlink_user(self, user_key: str) -> bool:
        """Detach the user from their person, in one transaction.

        The user keeps a copy of the person's timezone, locale and clock data, so nothing
        they had disappears; their own last contact stays theirs. A person left with fewer
        than two users is deleted, its last user getting the same copy. ``False`` if the
        user is unknown or not linked.
        """
        ...

    async def linked_users(self, user_key: str) -> list[str]:
        """The keys of every user linked to the user's person, theirs included, sorted;
        ``[]`` when the user is unknown or not linked."""
        ...

    async def create_link_code(self, user_key: str, code: str, expires_at: datetime) -> None:
        """Keep a one-time link ``code`` for the user until ``expires_at``, replacing any
        code they made before. Codes compare case-insensitively.

        Raises ``NotFoundError`` for a user never seen, ``StoreError`` if another user
        holds the same code (make a new one).
        """
        ...

    async def redeem_link_code(
        self, code: str, user_key: str, now: datetime, *, max_misses: int, window: timedelta
    ) -> LinkCodeTry:
        """Use up ``code`` for ``user_key``: its ``owner`` is the OTHER user whose code it
        is, and it is deleted. No owner (nothing used up) if the code is unknown, expired at
        ``now``, or ``user_key``'s own (``own_code``). Does not link anyone: that is
        ``link_users``.

        Guessing is refused, for every process sharing the store: an unknown or expired
        code counts as a miss of ``user_key``'s; once ``max_misses`` were counted within
        ``window`` of the first of them, no code is looked at (``refused_until``, the end
        of that window) and nothing more is counted. Check, lookup and count are one
        transaction, so concurrent tries cannot slip past the limit."""
        ...

    async def link_code_owner(self, code: str, now: datetime) -> str | None:
        """Whose code ``code`` is while it is valid at ``now``, without using it up (to
        tell "that is your own code" from "unknown or expired")."""
        ...

    async def forget_user(self, user_key: str, *, dry_run: bool = False) -> ForgetReport | None:
        """Delete everything stored about ``user_key`` in one transaction (``/forget``).

        That is: their messages in every thread; their DM threads whole, with everything
        hanging off them; their group memberships, held tool calls and link codes; the
        work contexts they own, their sessions, the continuity entries of both, their
        rollup segments, living memory and job marks; their clocked actions; and their
        user row. A linked user is unlinked first (as ``unlink_user``), their actions
        taken out of the person's. Other users' data is untouched.

        Returns the counts deleted, or with ``dry_run`` the counts that would be, changing
        nothing; ``None`` when the user is unknown.
        """
        ...


def log_if_failed(
    log: logging.Logger, what: str, key: str
) -> Callable[[asyncio.Future[Any]], None]:
    """A done callback for a queued write nobody waits for (``record_reply``,
    ``save_injection``): its failure is logged as "could not {what} in {key}", and the
    future's exception counts as retrieved."""

    def report(stored: asyncio.Future[Any]) -> None:
        if stored.cancelled():
            return
        exc = stored.exception()
        if exc is None:
            return
        # A StoreError already says what failed and what to do; anything else is a bug.
        if isinstance(exc, StoreError):
            log.error("could not %s in %s: %s", what, key, exc)
        else:
            log.error("could not %s in %s", what, key, exc_info=exc)

    return report
