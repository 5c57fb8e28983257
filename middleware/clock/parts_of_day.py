"""When today's part of day is told of the past ("I ran 5k this morning"), the rule
``wallclock.read_local`` applies to "this morning", "this afternoon", "this evening",
"tonight" and a weekday naming today with one.

Said of what is ahead, a part of day is an hour (dateparser's: morning 09:00, afternoon
15:00, evening 18:00, tonight 20:00), a plausible start for a plan. Told of the past, that
hour may lie after the moment it was said ("I ran 5k this morning" said at 08:00 is not
09:00), so it is the part of day up to now while it is under way ("this morning" said at
08:04: 05:00 to 08:04), the whole of it once it is over ("this morning" said at 15:00:
05:00 to 12:00), and nothing before it has begun (no past "this evening" at 08:00).
In the small hours (before ``SMALL_HOURS_END``) a past "tonight" is the night that began
the evening before, so far ("had a great time tonight" said at 00:30: 18:00 the day
before to 00:30): someone who has not slept yet still calls it tonight.

Said of what is ahead once that hour has passed while the part of day is still under way,
it is the rest of it from now ("can we sync this afternoon?" said at 16:00: 16:00 to
18:00), never an hour already gone. Said once it is over ("can we talk this morning?"
said at 14:00), it is a question, not an hour already gone: the user may mean tomorrow's
(its usual hour, the one candidate) or some time later today.

The hours a part of day runs are ``PART_HOURS``; "last night" stays yesterday's 20:00,
which is never later than now.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from middleware.clock.local_reading import LocalReading, describe_day
from middleware.clock.small_hours import SMALL_HOURS_END

__all__ = ["PART_HOURS", "part_of_today"]

#: The hours a part of day begins and ends (end exclusive, 24 = midnight).
PART_HOURS = {"morning": (5, 12), "afternoon": (12, 18), "evening": (17, 24), "night": (18, 24)}


def part_of_today(
    part: str, reading: LocalReading, base: datetime, past: bool
) -> LocalReading | None:
    """Today's ``part`` of day ("morning", "afternoon", "evening", "night") said at the
    naive local ``base``, whose default ``reading`` is a point at its usual hour: that
    point (or, once that hour has passed, the rest of the part of day from now) unless
    told of the past (``past``), else a span as the module docstring says, or None for a
    part of day that has not begun."""
    begins, ends = PART_HOURS[part]
    start = datetime.combine(base.date(), time(begins))
    end = datetime.combine(base.date(), time()) + timedelta(hours=ends)
    now = base.replace(second=0, microsecond=0)
    if not past:
        if reading.kind != "point" or reading.times[0] > base or now < start:
            return reading
        if now < end:
            return LocalReading("span", (now, end))  # its usual hour is gone: the rest of it
        return _over(part, reading.times[0], base)
    if part == "night" and base.hour < SMALL_HOURS_END:
        start -= timedelta(days=1)  # the night under way began before midnight
    so_far = min(now, end)
    return LocalReading("span", (start, so_far)) if so_far > start else None


def _over(part: str, usual: datetime, base: datetime) -> LocalReading:
    """Today's ``part`` of day said of what is ahead once it is over: which is meant,
    tomorrow's (at its ``usual`` hour) or some time later today?"""
    tomorrow = usual + timedelta(days=1)
    question = (
        f'By "this {part}", said at {base:%H:%M} once the {part} is over, do you mean '
        f"tomorrow {part} ({describe_day(tomorrow.date())}) or later today?"
    )
    return LocalReading("choice", (tomorrow,), question)
