"""When the background jobs are due: pure functions of the instant, no clock reads.

The nightly job runs once per person per *local* night (spec 001's nightly sweep); the
scheduler wakes on ticks aligned to its interval.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def nightly_due(last_mark: str | None, now: datetime, zone: ZoneInfo, at: time) -> str | None:
    """The local date (``YYYY-MM-DD``) the nightly job should run for now, or ``None``.

    Due when the wall clock in ``zone`` reads ``at`` or later today and ``last_mark`` (the
    last local date it ran for; ``None`` or unreadable: never) is an earlier date.
    Comparing wall-clock readings makes DST safe: when ``at`` falls in a spring-forward
    gap the job runs at the first reading after it, and in a fall-back fold it runs at
    the first pass and the mark stops the second. A relay down for days runs once, for
    today; missed nights are not made up. A mark later than today (the person moved
    west) is not due. ``now`` must be aware; ``at`` is read as a local wall-clock time.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    local = now.astimezone(zone)
    if local.time() < at.replace(tzinfo=None):
        return None
    today = local.date()
    if last_mark is not None:
        try:
            if date.fromisoformat(last_mark) >= today:
                return None
        except ValueError:
            pass  # an unreadable mark counts as never run
    return today.isoformat()


def next_check_delay(now: datetime, interval: timedelta) -> float:
    """Seconds from ``now`` to the next tick on the grid of ``interval`` steps from the
    Unix epoch (UTC); a full interval when ``now`` is exactly on a tick. ``now`` must be
    aware and ``interval`` positive."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    if interval <= timedelta(0):
        raise ValueError("interval must be positive")
    return (interval - (now - _EPOCH) % interval).total_seconds()
