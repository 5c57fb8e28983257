"""Which day "tomorrow", "yesterday", "last night" and a past "today" mean when said in
the small hours (the rules ``wallclock.read_local`` applies before ``SMALL_HOURS_END``).

* "tomorrow" said in the small hours (00:00 to 03:59 where the speaker is) is a choice
  between the day that has just begun, which someone who has not slept yet calls
  tomorrow ("tomorrow morning" said at 02:00 on Tuesday: Tuesday 09:00), and the
  calendar's next day
  (Wednesday 09:00), earlier day first. "Today", "tonight" and "this morning" are not
  asked about: said at 02:00 their only reading still ahead is the day just begun;
* "yesterday" said in the small hours is the mirror choice, told of the past or not: the
  calendar's previous day, which has just ended ("yesterday" said at 01:30 on Saturday:
  Friday), or the day before it, which someone who has not slept yet calls yesterday
  (Thursday), the day just ended first. "Last night" is the same choice of evenings
  ("last night was rough" said at 01:30 on Saturday: Friday 20:00, the night the speaker
  may still be in, or Thursday 20:00), and "tonight" said of what is ahead keeps its one
  reading still ahead, as above; told of the past it is the night under way, begun the
  evening before ("had a great time tonight" at 00:30, ``parts_of_day.py``);
* "today" told of the past in the small hours ("today I finished it" said at 01:30 on
  Saturday) is the same choice the other way: the day just begun (Saturday) or the day
  just ended (Friday), which someone who has not slept yet still calls today.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from middleware.clock.local_reading import LocalReading, describe_day

__all__ = ["SMALL_HOURS_END", "small_hours_reading"]

#: Before this hour "tomorrow" may mean the day that has just begun, and "yesterday" the
#: day before the one just ended (see ``small_hours_reading``).
SMALL_HOURS_END = 4
_TOMORROW = re.compile(r"\btomorrow\b")
_YESTERDAY = re.compile(r"\byesterday\b|\blast night\b")
_TODAY = re.compile(r"\btoday\b")
_JUST_BEGUN, _JUST_ENDED = " (the day that has just begun)", " (the day that has just ended)"


def small_hours_reading(
    lowered: str,
    reading: LocalReading,
    base: datetime,
    past: bool,
    speaker_now: datetime | None = None,
) -> LocalReading:
    """``reading`` of the lower-cased phrase ``lowered`` said at the naive local ``base``,
    made a question of which day when the phrase's day word has two readings at that
    hour (see the module docstring); otherwise ``reading`` as it is.

    The small hours are the speaker's: ``speaker_now`` is the naive wall time where the
    speaker is when the phrase is read in another zone ("tomorrow 9am UTC" said at 22:00
    in New York, 03:00 in UTC, is no question), and the question names the speaker's
    hour. When the two zones are on different dates, ``parsing.py`` asks which day the
    word means instead."""
    said = speaker_now or base
    if said.hour >= SMALL_HOURS_END or said.date() != base.date():
        return reading
    yesterday = _YESTERDAY.search(lowered)
    if yesterday is not None:
        return _small_hours_yesterday(reading, said, yesterday[0])
    if past and _TODAY.search(lowered):
        return _small_hours_past_today(reading, said)
    if past or not _TOMORROW.search(lowered):
        return reading
    return _small_hours_tomorrow(reading, said)


def _small_hours_tomorrow(reading: LocalReading, base: datetime) -> LocalReading:
    """ "Tomorrow" said in the small hours: the day just begun (the speaker has not slept
    yet) or the calendar's next day."""
    today = base.date()
    calendar = today + timedelta(days=1)
    return _ask_which_day(reading, base, "tomorrow", calendar, (today, _JUST_BEGUN), (calendar, ""))


def _small_hours_yesterday(reading: LocalReading, base: datetime, word: str) -> LocalReading:
    """ "Yesterday" or "last night" (``word``) said in the small hours: the calendar's
    previous day, just ended, or the day before it (the speaker has not slept yet)."""
    calendar = base.date() - timedelta(days=1)
    before = calendar - timedelta(days=1)
    return _ask_which_day(reading, base, word, calendar, (calendar, _JUST_ENDED), (before, ""))


def _small_hours_past_today(reading: LocalReading, base: datetime) -> LocalReading:
    """ "Today" told of the past in the small hours ("today I finished it" at 01:30): the
    day just begun, or the day just ended, which the speaker who has not slept yet still
    calls today. Said of what is ahead, "today" keeps its one reading, the day just begun."""
    today = base.date()
    ended = today - timedelta(days=1)
    return _ask_which_day(reading, base, "today", today, (today, _JUST_BEGUN), (ended, _JUST_ENDED))


def _ask_which_day(
    reading: LocalReading,
    base: datetime,
    word: str,
    calendar: date,
    first: tuple[date, str],
    second: tuple[date, str],
) -> LocalReading:
    """``reading`` of ``word`` said at ``base`` in the small hours, made a question: the
    ``first`` or the ``second`` day (each with how it is described), each of the
    reading's times kept on both, in that order. ``calendar``, the day the calendar
    gives the word, is one of the two; a reading of some other day is returned as it is."""
    times = reading.times[:-1] if reading.kind == "span" else reading.times
    if any(value.date() != calendar for value in times):
        return reading  # the word read as some other day than the calendar's
    on = [tuple(value + (day - calendar) for value in times) for day, _ in (first, second)]
    question = (
        f'By "{word}", said at {base:%H:%M}, do you mean {describe_day(first[0])}{first[1]} '
        f"or {describe_day(second[0])}{second[1]}?"
    )
    if reading.kind == "choice" and reading.question:
        question = f"{question} And {_other_day_question(reading.question, calendar)}"
    return LocalReading("choice", on[0] + on[1], question)


def _other_day_question(question: str, calendar: date) -> str:
    """The hour question of a "tomorrow" reading, asked of whichever day is meant."""
    named = f"on {describe_day(calendar)}"
    if named not in question:
        return question
    return question.replace(named, "on that day").replace("Do you", "do you")
