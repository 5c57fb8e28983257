"""Which week a weekday means (the rules ``wallclock.read_local`` applies to a weekday).

* "next <weekday>" whose next occurrence is still in the current ISO week (Mon-Sun) is a
  choice between that day and a week later; otherwise it is the next occurrence, as is a
  bare or "on" weekday (said on a Sunday, "on Monday" and "next Monday" are tomorrow);
  a bare weekday naming today ("Monday 9am" said on a Monday) is a choice between today
  and a week later, unless a part of day is named with the hour ("friday evening at 8"
  said on Friday afternoon): then it is today's while that time is ahead, else a week
  later; "this Monday" said on a Monday is today; a weekday naming today with a
  part of day ("Saturday night" said on Saturday) is today's while that part of day is
  ahead or under way (morning until 12:00, afternoon until 18:00, evening and night until
  midnight; told of the past, once it has begun: from 05:00, 12:00, 17:00, 18:00), else
  its next (or last) occurrence.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from middleware.clock.local_reading import LocalReading, describe_day
from middleware.clock.parts_of_day import PART_HOURS, part_of_today

__all__ = ["weekday_choice", "weekday_part_today"]

_BARE_WEEKDAY = re.compile(
    r"(?:on\s+)?(?P<day>mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?"
)
_WEEKDAY_PART = re.compile(
    r"(?P<day>mon|tue|wed|thu|fri|sat|sun)[a-z]*\s+(?P<part>morning|afternoon|evening|night)"
)
_TRAILING_AT = re.compile(r"\s*(?:at|@)$")
_NEXT_WEEKDAY = re.compile(r"\bnext\s+(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b")
_WEEKDAY_INDEX = {day: index for index, day in enumerate("mon tue wed thu fri sat sun".split())}


def weekday_choice(
    text: str, reading: LocalReading, base: datetime, *, part_of_day: bool = False
) -> LocalReading:
    """Turn a weekday reading that could mean two different weeks into a choice.

    ``part_of_day`` says a part of day was named beside the weekday and its hour
    ("friday evening at 8"): naming today, that is today's while its time is ahead and a
    week later once it has passed, not a question."""
    bare = _BARE_WEEKDAY.fullmatch(_TRAILING_AT.sub("", text))  # "friday at" + "8pm"
    if reading.kind == "choice":
        return reading
    if bare and _WEEKDAY_INDEX[bare["day"]] == base.weekday():
        later = reading.times[0]
        today = later - timedelta(days=(later.date() - base.date()).days)
        if part_of_day:
            return LocalReading("point", (today if today > base else later,))
        question = (
            f"Do you mean today ({describe_day(today.date())}) or {describe_day(later.date())}?"
        )
        return LocalReading("choice", (today, later), question)
    if not _NEXT_WEEKDAY.search(text):
        return reading
    first = reading.times[0]
    if first.date().isocalendar()[:2] != base.date().isocalendar()[:2]:
        return reading
    week_later = first + timedelta(days=7)
    question = (
        f"Do you mean {describe_day(first.date())} (this week) or "
        f"{describe_day(week_later.date())} (next week)?"
    )
    return LocalReading("choice", (first, week_later), question)


def weekday_part_today(
    text: str, reading: LocalReading, base: datetime, past: bool
) -> LocalReading | None:
    """ "Saturday night" said on Saturday while that night is ahead or under way is
    tonight (told of the past: once it has begun), not a week away, read as
    ``parts_of_day.part_of_today`` says; None otherwise."""
    found = _WEEKDAY_PART.fullmatch(text)
    if found is None or _WEEKDAY_INDEX[found["day"]] != base.weekday():
        return None
    begins, ends = PART_HOURS[found["part"]]
    if (base.hour < begins) if past else (base.hour >= ends):
        return None
    value = reading.times[0]
    today = LocalReading("point", (datetime.combine(base.date(), value.time()),))
    return part_of_today(found["part"], today, base, past)
