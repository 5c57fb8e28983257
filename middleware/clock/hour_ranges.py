"""Ranges of hours ("tomorrow 2-3pm", "between 2 and 4", "tonight 11pm to 4am") read as
spans on their day, the night's hours ("tonight" with an hour of the small hours) and
which readings of an hour with no am/pm stay in question (``settle_dial``, shared with a
single hour in ``wallclock.py``, whose docstring says how each phrase is read).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from middleware.clock.date_part import APPROXIMATELY, cut, read_date, tidy
from middleware.clock.local_reading import LocalReading, describe_day
from middleware.clock.weekdays import weekday_choice

__all__ = ["find_hour_range", "hour_range", "in_small_hours", "settle_dial"]

# A range of hours that ends with am/pm ("2-3pm", "9:30am-12pm", "2pm to 3:30pm"): one
# am/pm on the end says the side of both unless the start would then come after the end
# ("11-1pm" is 11:00 to 13:00).
_CLOCK_RANGE = re.compile(
    r"(?<![\d:/.-])(?P<h1>\d{1,2})(?::(?P<m1>\d\d))?\s*(?:(?P<ap1>[ap])\.?m\.?)?"
    r"\s*(?:-|–|—|to|till|until)\s*"
    r"(?P<h2>\d{1,2})(?::(?P<m2>\d\d))?\s*(?P<ap2>[ap])\.?m\b\.?"
)
# "from" before a range of hours says only where it begins ("from 2pm to 3pm friday",
# "tonight from 11pm to 4am").
_FROM = re.compile(r"^from\b\s*|\s*\bfrom$")
# "between 2 and 4", "between 2pm and 4:30pm", "between 14 and 16": a range of hours with
# no am/pm needed, "between" saying they are hours.
_BETWEEN_HOURS = re.compile(
    r"\bbetween\s+(?P<h1>\d{1,2})(?::(?P<m1>\d\d))?\s*(?:(?P<ap1>[ap])\.?m\.?)?\s+and\s+"
    r"(?P<h2>\d{1,2})(?::(?P<m2>\d\d))?(?:\s*(?P<ap2>[ap])\.?m\b\.?)?"
)


def settle_dial(
    readings: list[datetime], base: datetime, explicit_day: date | None, past: bool
) -> list[datetime]:
    """The readings of an hour with no am/pm that are still in question (see
    ``wallclock.py``'s docstring): with no date, the next occurrence unless both are
    ahead today; with "today", those not already past. Told of the past: the last
    occurrence while the other is still ahead, else none."""
    if past:
        if explicit_day is None and min(readings).date() < base.date():
            return [max(readings)]
        if explicit_day == base.date():
            passed = [reading for reading in readings if reading <= base]
            return passed if len(passed) == 1 else []
        return [] if explicit_day is None or explicit_day < base.date() else readings
    if explicit_day is None:
        nearest = min(readings)
        return readings if max(readings).date() == base.date() else [nearest]
    if explicit_day == base.date():
        ahead = [reading for reading in readings if reading > base]
        return ahead or readings
    return readings


def _range_ends(hours: re.Match[str]) -> list[tuple[time, time]]:
    """The first and last hour of a range of hours (``_CLOCK_RANGE``, ``_BETWEEN_HOURS``),
    each reading of it when it is on the 12-hour dial with no am/pm: none if either is no
    clock time ("13-14pm")."""
    numbers = [(int(hours["h1"]), int(hours["m1"] or 0)), (int(hours["h2"]), int(hours["m2"] or 0))]
    if any(minute >= 60 for _, minute in numbers):
        return []
    side = hours["ap1"] or hours["ap2"]
    if side is None and not all(1 <= hour <= 12 for hour, _ in numbers):
        if not all(hour <= 23 for hour, _ in numbers):
            return []
        return [(time(*numbers[0]), time(*numbers[1]))]  # "between 14 and 16"
    if not all(1 <= hour <= 12 for hour, _ in numbers):
        return []
    (h1, m1), (h2, m2) = ((hour % 12, minute) for hour, minute in numbers)
    if side is None:  # "between 2 and 4": the morning's or the evening's?
        first = time(h1, m1)
        last = time(h2 + (12 if (h2, m2) <= (h1, m1) else 0), m2)  # "between 11 and 1"
        evening = (time(h1 + 12, m1), time((last.hour + 12) % 24, m2))
        return [(first, last), evening]
    last = time(h2 + (12 if (hours["ap2"] or side) == "p" else 0), m2)
    first = time(h1 + (12 if side == "p" else 0), m1)
    if hours["ap1"] is None and first > last:
        first = time(h1, m1)  # "11-1pm": 11:00, the morning's
    return [(first, last)]


def hour_range(
    lowered: str, hours: re.Match[str], base: datetime, date_order: str, past: bool
) -> LocalReading | None:
    """A range of hours ("tomorrow 2-3pm", "Friday 9-10am") as a span on its day: the
    day named, else the next (told of the past, the last) time the range ends; a range
    that ends after midnight ("10pm-1am") ends on the day after. With no am/pm ("between
    2 and 4 tomorrow") the readings still in question are asked about, as an hour's."""
    rest = APPROXIMATELY.sub("", f" {tidy(cut(lowered, hours))}").strip()
    rest = _FROM.sub("", rest)  # "from 2pm to 3:30pm tomorrow"
    readings = _range_ends(hours)
    if rest == "tonight":  # "tonight 11pm to 4am", "tonight 1-3am": the next one to end
        rest = ""
        readings = [ends for ends in readings if _at_night(ends[0])] or readings
    day = base.date()
    if rest and rest != "today":
        parsed = read_date(rest, base, date_order, past)
        if parsed is None or parsed[1] != "day":
            return None
        day = parsed[0].date()
    spans = [_span_on(day, ends, base, bool(rest), past) for ends in readings]
    if len(spans) == 2:
        kept = settle_dial([start for start, _ in spans], base, day if rest else None, past)
        spans = [span for span in spans if span[0] in kept]
    if len(spans) == 2:
        (first, first_end), (second, second_end) = spans
        question = (
            f"Do you mean {first:%H:%M} to {first_end:%H:%M} or {second:%H:%M} to "
            f"{second_end:%H:%M} on {describe_day(first.date())}?"
        )
        return LocalReading("choice", (first, second), question, ends=(first_end, second_end))
    if not spans:
        return None
    start, end = spans[0]
    if not past:
        # A weekday naming today ("friday 2-3pm" said on Friday): today or a week later?
        asked = weekday_choice(rest, LocalReading("point", (start,)), base)
        if asked.kind == "choice":
            return asked
    return LocalReading("span", (start, end))


def _at_night(start: time) -> bool:
    """Does a range of hours that begins at ``start`` begin in the night ("tonight between
    2 and 4" is 02:00, "tonight between 8 and 10" 20:00)?"""
    return start.hour >= 17 or in_small_hours(start)


def in_small_hours(clock: time) -> bool:
    """00:00 to 04:59: after midnight, still the night before."""
    return clock.hour < 5


def _span_on(
    day: date, ends: tuple[time, time], base: datetime, dated: bool, past: bool
) -> tuple[datetime, datetime]:
    """A range of hours on ``day``; with no day named (``dated``) the next one still to
    end, or told of the past the last one begun."""
    start, end = (datetime.combine(day, value) for value in ends)
    if end <= start:
        end += timedelta(days=1)
    if not dated and not past and end <= base:
        start, end = start + timedelta(days=1), end + timedelta(days=1)
    elif not dated and past and start > base:
        start, end = start - timedelta(days=1), end - timedelta(days=1)
    return start, end


def find_hour_range(lowered: str) -> re.Match[str] | None:
    """The range of hours in ``lowered`` ("between 2 and 4", "2-3pm"), if any."""
    return _BETWEEN_HOURS.search(lowered) or _CLOCK_RANGE.search(lowered)
