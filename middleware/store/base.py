"""The store interface. SQLite implements it first; PostgreSQL can implement it later.

All instants cross this interface as aware UTC ``datetime`` values. Every method that
touches several rows does so in one transaction, so a concurrent turn never sees (or
causes) a half-applied update (spec 000 §10.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

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


class Store(Protocol):
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

    async def record_inbound(self, record: InboundRecord) -> int:
        """Store the user message and update every timestamp it moves; return its id.

        Updates, atomically: the user row, the thread row (last user message, last
        interaction), the per-user last message in the thread, and — if
        ``record.cross_channel`` — the user's (and linked person's) last interaction on
        any channel. A later instant never gets overwritten by an earlier one.
        """
        ...

    async def record_reply(
        self, thread_key: str, text: str, sent_at: datetime, *, complete: bool = True
    ) -> int:
        """Store the assistant message and move the thread's agent/interaction times."""
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
