"""Persistence: the ``Store`` interface and its SQLite implementation."""

from middleware.store.base import Store, log_if_failed
from middleware.store.clock_state import (
    ChannelTimes,
    ClockStateSnapshot,
    ImportCounts,
    ThreadClockState,
    UserClockState,
)
from middleware.store.records import (
    ClockData,
    ClockDataChange,
    Durable,
    ForgetReport,
    HeldToolCall,
    InboundRecord,
    InboundResult,
    LinkCodeTry,
    ParticipantState,
    PriorState,
    QueuedInbound,
    StatedLocation,
    StoredMessage,
    ThreadState,
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
    "Durable",
    "InboundResult",
    "LinkCodeTry",
    "ParticipantState",
    "PriorState",
    "QueuedInbound",
    "StatedLocation",
    "SqliteStore",
    "Store",
    "StoredMessage",
    "ThreadClockState",
    "ThreadState",
    "UserClockState",
    "UserState",
    "log_if_failed",
]
