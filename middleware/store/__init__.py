"""Persistence: the ``Store`` interface and its SQLite implementation."""

from middleware.store.base import (
    InboundRecord,
    InboundResult,
    ParticipantState,
    PriorState,
    Store,
    StoredMessage,
    ThreadState,
    UserState,
)
from middleware.store.sqlite import SqliteStore

__all__ = [
    "InboundRecord",
    "InboundResult",
    "ParticipantState",
    "PriorState",
    "SqliteStore",
    "Store",
    "StoredMessage",
    "ThreadState",
    "UserState",
]
