"""Persistence: the ``Store`` interface and its SQLite implementation."""

from middleware.store.base import (
    InboundRecord,
    Store,
    StoredMessage,
    ThreadState,
    UserState,
)
from middleware.store.sqlite import SqliteStore

__all__ = [
    "InboundRecord",
    "SqliteStore",
    "Store",
    "StoredMessage",
    "ThreadState",
    "UserState",
]
