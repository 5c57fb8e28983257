"""A clock-state snapshot: everything the clock keeps per user and per thread, as
export and import exchange it (spec 000 §10.2; ``Store.export_clock_state``).

All instants are aware UTC ``datetime`` values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from middleware.store.records import StatedLocation
from middleware.types import ChatType

# Who set a thread's kind: nobody (``default``), the relay (``inferred``, which stops
# further inference) or a user or operator (``explicit``).
KindSource = Literal["default", "inferred", "explicit"]


@dataclass(frozen=True, slots=True)
class ChannelTimes:
    """A user's last message, and the agent's, in one thread (a v3 ``channels`` entry)."""

    last_user_message_at: datetime | None = None
    last_agent_message_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class UserClockState:
    """One user's part of a clock-state snapshot (spec 000 §10.2 ``users``).

    ``default_tz`` and ``last_interaction_any_channel_at`` are the linked person's when
    the user is linked: what the clock uses. ``channels`` is keyed by thread key.
    ``policy_overrides``, ``calibration`` and ``latest_actions`` are JSON kept verbatim.
    """

    user_key: str
    default_tz: str | None = None
    policy_overrides: dict[str, Any] = field(default_factory=dict)
    last_interaction_any_channel_at: datetime | None = None
    channels: dict[str, ChannelTimes] = field(default_factory=dict)
    latest_actions: list[dict[str, Any]] = field(default_factory=list)
    calibration: dict[str, Any] = field(default_factory=dict)
    # Ours, beside the spec's keys: the place the user last said they are in.
    located: StatedLocation | None = None
    # Ours: the name groups know them by (the block's list, ``/time``), until they write
    # again under a newer one.
    display_name: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadClockState:
    """One thread's part of a clock-state snapshot (spec 000 §10.2 ``threads``).

    ``chat_type`` and ``kind_source`` are ours: ``None`` when not known (a document from
    elsewhere), and then the key tells the chat type and a kind other than the default
    counts as chosen. ``left_by_user`` is ours too: when each member was last seen
    leaving the group (``Store.mark_left``); empty in a document written without it.
    ``display_name_by_user`` is ours: the name each member went by in this thread when
    they last wrote there (a Discord server nickname), where one is known; a member
    without one is named by their account's (``UserClockState.display_name``).
    """

    thread_key: str
    kind: str | None = None
    session_tz: str | None = None
    participants: tuple[str, ...] = ()
    last_interaction_at: datetime | None = None
    last_user_message_by_user: dict[str, datetime] = field(default_factory=dict)
    chat_type: ChatType | None = None
    kind_source: KindSource | None = None
    left_by_user: dict[str, datetime] = field(default_factory=dict)
    display_name_by_user: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClockStateSnapshot:
    """Everything the clock keeps per user and per thread, as export/import exchange it.

    ``links`` are the users linked to one person (spec 000 §7.0), one group per person:
    each at least two users of ``users``, sorted, no user in two groups; the groups are in
    the order of their first key.
    """

    users: tuple[UserClockState, ...] = ()
    threads: tuple[ThreadClockState, ...] = ()
    links: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """How many rows an import created, and how many existing ones it merged into."""

    users_created: int = 0
    users_merged: int = 0
    threads_created: int = 0
    threads_merged: int = 0
    # Groups of users linked to one person (each new, or merged into an existing link).
    links: int = 0
