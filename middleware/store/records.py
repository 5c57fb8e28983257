"""The records the store exchanges with the relay: a message on its way in, the state it
finds, users, threads, participants, stored messages, held tool calls, link codes, and
what forgetting a user deletes (see ``Store`` in :mod:`middleware.store.base`).

All instants are aware UTC ``datetime`` values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from middleware.types import ChatType

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class InboundRecord:
    """Everything recorded when a user message arrives, in one transaction."""

    user_key: str
    channel: str
    platform_user_id: str
    display_name: str | None
    thread_key: str
    chat_type: ChatType
    text: str
    received_at: datetime
    cross_channel: bool = True
    # Where the request placed the message (fingerprint of its content, index in
    # ``messages``), for a turn that may be sent again; see ``newest_message_place``.
    place: tuple[str, int] | None = None
    # A command the relay answers itself ("/time"): known as one when stored, so no read
    # ever takes it for a message of the conversation (see ``Store.mark_command``).
    command: bool = False
    # Other members' names as the message shows them (its mentions), by user key: kept
    # as the name each goes by in the thread, for those who wrote there before.
    member_names: tuple[tuple[str, str], ...] = ()

    @property
    def counts_as_contact(self) -> bool:
        """Whether the message moves the user's last contact on any channel: a command
        the relay answers itself ("/tz") is no conversation (spec 000 §4.1's last
        interaction), so the contact stays their last message of one."""
        return self.cross_channel and not self.command


@dataclass(frozen=True, slots=True)
class PriorState:
    """What the store held just before an inbound message moved it (all UTC or None).

    The clock stages compute "last message here" and "last contact on any channel" from
    these, so the message being recorded never counts as its own predecessor.
    ``any_channel_*`` are the linked person's when the user is linked.
    """

    thread_last_interaction_at: datetime | None = None
    thread_last_user_message_at: datetime | None = None
    thread_last_agent_message_at: datetime | None = None
    user_last_message_here_at: datetime | None = None
    # The thread's newest message of the conversation the model sees: neither a command
    # the relay answered itself ("/time") nor the reply to one.
    thread_last_conversation_at: datetime | None = None
    # The user's own newest message of that conversation here (their return in a group).
    user_last_conversation_here_at: datetime | None = None
    any_channel_at: datetime | None = None
    any_channel: str | None = None
    user_tz: str | None = None
    # The locale the user chose (``/lang``), the linked person's when linked.
    user_locale: str | None = None
    # The locale the user's app reports on this account (their newest message with one).
    app_locale: str | None = None
    thread_tz: str | None = None
    thread_kind: str | None = None
    # "default", "inferred" or "explicit": who set ``thread_kind``.
    thread_kind_source: str | None = None
    person_id: str | None = None
    # The user's (linked person's) policy overrides, calibration and latest actions.
    clock_data: ClockData = field(default_factory=lambda: ClockData())
    # When a tool call held for confirmation in this thread expires (None: none held).
    held_call_expires_at: datetime | None = None

    @property
    def reader_locale(self) -> str | None:
        """The locale dates are written in for the user: the one they chose, else their
        app's (``middleware.locales``); None when neither is known."""
        return self.user_locale or self.app_locale

    def last_conversation_seen_at(self, now: datetime) -> datetime | None:
        """The thread's last message of the conversation as a message sent at ``now``
        sees it ("Last message here", the gap): a command the relay answered itself is no
        message the model saw, so the time before it stands.

        A reply is stamped when its answer ended, so a message sent while it was being
        written (a chat platform stamps its own send time) is dated before it: the reply
        then counts as at ``now``, an interaction just now. Only a user message dated
        after ``now`` (spec 000 §4.1 keeps the thread's last one) makes this message
        older than the thread, that is replayed out of order: then the later stamp is
        returned as it is. None while the thread's conversation has no message yet.
        """
        last = self.thread_last_conversation_at
        if last is None or last <= now:
            return last
        user = self.thread_last_user_message_at
        return last if user is not None and user > now else now


@dataclass(frozen=True, slots=True)
class StatedLocation:
    """Where the user last said they are ("I'm in Lisbon this week", "I live in Berlin"):
    spec 000 §4.2's inferred location, remembered for their later messages.

    ``kind`` is ``"current"`` (where they are now) or ``"home"`` (where they live).
    """

    zone: str
    place: str
    kind: Literal["current", "home"]
    said_at: datetime


@dataclass(frozen=True, slots=True)
class ClockData:
    """A user's policy overrides, duration calibration and latest actions (spec 000 §10.2),
    as JSON values, and the place they last said they are; the linked person's when the
    user is linked."""

    policy_overrides: dict[str, Any] = field(default_factory=dict)
    calibration: dict[str, Any] = field(default_factory=dict)
    latest_actions: list[dict[str, Any]] = field(default_factory=list)
    located: StatedLocation | None = None


# Given the stored data, the data to store instead, or None to leave it as it is.
ClockDataChange = Callable[[ClockData], "ClockData | None"]


@dataclass(frozen=True, slots=True)
class HeldToolCall:
    """An impactful tool call held until the user confirms it (spec 000 §8.2)."""

    thread_key: str
    user_key: str
    message: dict[str, Any]  # the assistant message, its ``tool_calls`` included
    names: tuple[str, ...]
    model: str
    held_at: datetime
    expires_at: datetime


class Durable(Protocol):
    """Whether a stored message reached the disk: a store may apply a write at once and
    commit it a little later, together with others (``[store] commit_delay_ms``)."""

    async def committed(self) -> None:
        """Return once the message is committed; raise ``StoreError`` if its commit
        failed (the disk is full or failing): the message is lost, and whoever accepted it
        must say so rather than answer as if it were kept."""
        ...


@dataclass(frozen=True, slots=True)
class InboundResult:
    """The stored message's id, the state from just before it, and its commit."""

    message_id: int
    prior: PriorState
    durable: Durable


@dataclass(frozen=True, slots=True)
class QueuedInbound:
    """The state from just before a message, and its write, queued: ``message_id`` gives
    the stored message's id once applied, or raises ``StoreError``."""

    prior: PriorState
    message_id: asyncio.Future[int]
    # Its commit, known once ``message_id`` resolves.
    durable: Durable


@dataclass(frozen=True, slots=True)
class ParticipantState:
    """A group member as the clock sees them."""

    user_key: str
    display_name: str | None
    default_tz: str | None
    # The locale they chose, else their app's (``PriorState.reader_locale``).
    locale: str | None
    last_user_message_at: datetime
    # The place they last said they are in (``ClockData.located``), whose zone stands for
    # theirs while they have set none.
    located: StatedLocation | None = None
    # Whether another member the thread ever had goes by their name, case aside: the rule
    # their messages' stored labels follow (``sqlite_turns.SPEAKER_LABEL``), whatever
    # window the caller asked for.
    namesake: bool = False


@dataclass(frozen=True, slots=True)
class UserState:
    """A channel-scoped user and their clock fields."""

    user_key: str
    channel: str
    platform_user_id: str
    display_name: str | None
    person_id: str | None
    default_tz: str | None
    locale: str | None
    last_interaction_any_channel_at: datetime | None
    last_channel: str | None
    # The locale their app reports (``PriorState.app_locale``); ``locale`` is the chosen one.
    app_locale: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadState:
    """A thread and its clock fields (spec 000 §10.2 ``threads``)."""

    thread_key: str
    channel: str
    chat_type: ChatType
    kind: str
    session_tz: str | None
    last_interaction_at: datetime | None
    last_user_message_at: datetime | None
    last_agent_message_at: datetime | None
    last_user_message_by_user: dict[str, datetime]
    # Every member, including any imported without a message time (sorted keys).
    participants: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LinkCodeTry:
    """What ``redeem_link_code`` made of a code sent to link an account."""

    # The other user whose live code it was; it is used up.
    owner: str | None = None
    # The code is the sender's own live code (it stays valid).
    own_code: bool = False
    # Too many unknown codes from the sender: this one was not looked at, and no code
    # will be before this instant.
    refused_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What ``forget_user`` deleted (or would delete), in rows per kind.

    ``threads`` are the user's DM threads, deleted whole (their ``messages`` count the
    relay's replies there too); ``actions`` are the clocked actions that were theirs;
    ``unlinked_from`` the accounts they were linked to, which stay.
    ``link_code_misses_kept``: their count of wrong link codes, which is not deleted
    (forgetting must not reset the guessing limit), stays until its window ends.
    """

    messages: int = 0
    threads: int = 0
    thread_memberships: int = 0
    injections: int = 0
    held_tool_calls: int = 0
    link_codes: int = 0
    actions: int = 0
    work_contexts: int = 0
    sessions: int = 0
    continuity_entries: int = 0
    rollup_segments: int = 0
    memory_facts: int = 0
    job_marks: int = 0
    unlinked_from: tuple[str, ...] = ()
    link_code_misses_kept: bool = False


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One transcript line."""

    id: int
    thread_key: str
    user_key: str | None
    role: Role
    text: str
    at: datetime
    complete: bool
    # What the user was called when the message was stored (``Store.speaker_label``),
    # filled in where a reader asks for it (``transcript_from``, ``session_messages``);
    # ``None`` for assistant messages and nameless users.
    speaker_name: str | None = None
    # A user message the relay answered itself (``Store.mark_command``): no turn of the
    # conversation.
    command: bool = False
