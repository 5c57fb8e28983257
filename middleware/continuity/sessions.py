"""Each thread's current session as the continuity stage knows it, so that most turns
need no store work. The ``ContinuityService`` holds it: what ends a session outside the
stage (``/context`` moving a thread to another work context) makes it forget the thread.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

_CACHED_THREADS = 4096


@dataclass(frozen=True, slots=True)
class CurrentSession:
    """What the stage remembers about a thread's current session."""

    session_id: str
    cards_fingerprint: str | None = None
    near_window_captured: bool = False


class CurrentSessions:
    """The current sessions of the threads seen lately (the least recent forgotten)."""

    def __init__(self, limit: int = _CACHED_THREADS) -> None:
        self._limit = limit
        self._sessions: OrderedDict[str, CurrentSession] = OrderedDict()

    def get(self, thread_key: str) -> CurrentSession | None:
        return self._sessions.get(thread_key)

    def remember(self, thread_key: str, current: CurrentSession) -> None:
        self._sessions[thread_key] = current
        self._sessions.move_to_end(thread_key)
        if len(self._sessions) > self._limit:
            self._sessions.popitem(last=False)

    def forget(self, thread_key: str) -> None:
        """The thread's session has ended: its next message reads the store."""
        self._sessions.pop(thread_key, None)
