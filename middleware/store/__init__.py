"""Persistence: the ``Store`` interface and its SQLite implementation."""

from middleware.store.base import (
    ChannelTimes,
    ClockData,
    ClockDataChange,
    ClockStateSnapshot,
    ForgetReport,
    HeldToolCall,
    ImportCounts,
    InboundRecord,
    InboundResult,
    ParticipantState,
    PriorState,
    Store,
    StoredMessage,
    ThreadClockState,
    ThreadState,
    UserClockState,
    UserState,
)
from middleware.store.sqlite import SqliteStore

__all__ = [
    "ChannelTimes",
    "ClockData",
    "ClockDataChange",
    "ClockStateSnapshot",
    "ForgetReport",
    "HeldToolCall",
    "ImportCounts",
    "InboundRecord",
    "InboundResult",
    "ParticipantState",
    "PriorState",
    "SqliteStore",
    "Store",
    "StoredMessage",
    "ThreadClockState",
    "ThreadState",
    "UserClockState",
    "UserState",
]
