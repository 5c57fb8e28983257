"""Where "now" comes from. Nothing in the relay calls ``datetime.now()`` in logic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

# How far ahead of the relay's clock an instant someone else reports may be (their clock's
# skew): a replayed message's, an imported clock state's. Beyond it, the instant would
# make every later turn look "just now" until it passed, as times never move backwards.
CLOCK_SKEW = timedelta(minutes=5)


class Clock(Protocol):
    """A source of the current instant."""

    def now(self) -> datetime:
        """Return the current instant as an aware UTC ``datetime``."""
        ...


class SystemClock:
    """The real wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that only moves when told to; tests travel through days without sleeping."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> datetime:
        self._now += delta
        return self._now

    def set(self, instant: datetime) -> None:
        if instant.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        self._now = instant.astimezone(UTC)
