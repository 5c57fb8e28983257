"""Read a time phrase into naive wall-clock times, relative to a naive local "now".

This layer knows no zones: ``parsing.py`` picks the zone, hands in the reference instant
as that zone's wall time and turns the answer into instants. The clock-time part of a
phrase ("9am", "14:30", "at 9", "noon", "midnight", "end of day") is read here with small
regexes because dateparser gets exactly these wrong ("tomorrow at 9" keeps the current
time; "tonight at 9" returns "now"); the date part ("tomorrow", "next Tuesday",
"22 Nov", "03/04") and lone parts of day ("tonight" = 20:00) go to dateparser, with
``PREFER_DATES_FROM="future"`` and results cross-checked against the text
(``date_part.py``). Ranges of hours and which readings of an hour with no am/pm stay in
question are in ``hour_ranges.py``.

Choices for ambiguous phrases (``parsing.parse_anchored_time`` refers here):

* an hour 1-12 with no am/pm and no part-of-day cue ("at 9", "at 10:30") is on the
  12-hour dial: 09:00 or 21:00. With no date it is asked about only while both readings
  are still ahead today (said at 07:00, "at 9" may be this morning or tonight); once the
  morning one has passed it is the next occurrence, like any time with no date (said at
  10:00, "at 9" is 21:00; said at 22:00 it is 09:00 tomorrow), since a reading a whole
  day away needs a day word ("tomorrow at 9"). With "today" a reading already past is
  dropped; with another date ("tomorrow at 9") it is a choice. "09:30", "10:30:00", a
  time in a full numeric date ("2026-11-22 10:30") and, for ``clock_24h`` (a user whose
  locale writes 24-hour times, or a time given in UTC or as an offset), any "h:mm" is
  on the 24-hour clock;
* "tonight" with an hour and no am/pm is one reading of the night: 1-4 ("tonight at 2")
  the small hours after tonight's midnight (said in the small hours, the coming night's
  once that hour has passed), 5-11 the evening, 12 midnight;
* said of waking (``waking=True``: "I'll be up at 6", "alarm at 6", see ``finding.py``)
  an hour 1-11 with no am/pm and no part-of-day cue is the morning one: said at 15:00,
  "be up at 6" is 06:00 tomorrow, never 18:00 today;
* "midnight" alone or with "tonight"/"today" is the next midnight; "midnight" with another
  date ("tomorrow midnight") is a choice between the start and the end of that date;
* "end of day"/"EOD" is 23:59 on that date (today when no date is given);
* "end of (the) month" is the month's last day, "end of next month" next month's;
* "the 21st", "on the 3rd" (a day of the month alone) is its next occurrence, this month
  or the next that has that day (told of the past, its last); dateparser reads "the 3rd"
  as March;
* "end of the week" is the week's last day, Sunday (the ISO week, as "this week" is);
  "end of the work week" is its Friday; "end of next week" a week later;
* a range of hours that ends with am/pm ("tomorrow 2-3pm", "Friday 9-10am", "11-1pm") is a
  span on its day, one am/pm saying the side of both unless the start would come after
  the end ("11-1pm": 11:00 to 13:00); with no date it is the next range still to end (told
  of the past, the last one begun); one past midnight ("10pm-1am saturday") ends the day
  after, and "from" before it ("from 2pm to 3:30pm") says only where it begins; a weekday
  naming today is asked about as above;
* "between H and H" ("call me between 2 and 4 tomorrow") is a range of hours as above;
  with no am/pm and both hours 1-12 it is on the 12-hour dial as "at 3" is: asked about
  (02:00 to 04:00 or 14:00 to 16:00?) with a date, or with none while both are ahead
  today, else the next one; an hour 0 or 13-23 puts both on the 24-hour clock;
* a rough clock time ("friday around 3pm", "tomorrow at around noon", "on the 20th
  sometime about 3") is that time on that day: the words that make it rough are dropped;
* a time with no date is its next occurrence after now (said at 15:40, "3pm" is
  tomorrow); an explicit "today" keeps it today even if it has passed;
* a weekday: the week it is in is decided in ``weekdays.py`` ("next Friday", "Monday
  9am" said on a Monday, "Saturday night" said on Saturday);
* a part of day alone is dateparser's default time: morning 09:00, afternoon 15:00,
  evening 18:00, tonight/night 20:00 (today's); once that hour has passed while the part
  of day is under way, it is the rest of it from now ("can we talk this morning?" said at
  11:00: 11:00 to 12:00), and once it is over a question (tomorrow's, or later today?);
  told of the past it is a span up to now, never a
  made-up hour after now ("I ran 5k this morning" said at 08:00: 05:00 to 08:00, see
  ``parts_of_day.py``); "last night" is yesterday's 20:00;
* a date with no time is the whole local day, a half-open span [00:00, next 00:00);
  "next week"/"this month"/"in March"/"next year" are spans of the ISO week, the month
  and the year;
* "tomorrow", "yesterday", "last night" and a past "today" said in the small hours
  (00:00 to 03:59 where the speaker is) ask which day is meant: see ``small_hours.py``;
* told of the past (``past=True``: "the meeting was at 3pm", see ``tense.py``) all of
  the above turns round: a time with no date is its last occurrence up to now, a weekday
  or date the last one, "midnight" the one that began today. An hour with no am/pm is
  the reading that passed last while the other is still ahead today ("I got home at 7"
  said at 10:00 is 07:00); once both have passed, or with a date ("yesterday at 10"), it
  stays unread: nobody needs asking which hour a past event was.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from middleware.clock.date_part import APPROXIMATELY, cut, read_date, tidy
from middleware.clock.hour_ranges import find_hour_range, hour_range, in_small_hours, settle_dial
from middleware.clock.local_reading import LocalReading, describe_day
from middleware.clock.parts_of_day import part_of_today
from middleware.clock.small_hours import small_hours_reading
from middleware.clock.weekdays import weekday_choice, weekday_part_today

__all__ = ["read_local"]


_EOD = re.compile(r"\b(?:(?:the\s+)?end\s+of\s+(?:the\s+)?(?:business\s+)?day|eod)\b")
# Days on from a day ("a week from tuesday", "a week from today", "two days from
# friday"), which dateparser reads as that long before now or leaves at the day itself.
_DAYS_FROM = re.compile(
    r"(?P<count>an?|one|two|three|four|\d{1,2})\s+(?P<unit>days?|weeks?|fortnights?)"
    r"\s+(?:from|after)\s+(?P<day>today|tomorrow|(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_UNIT_DAYS = {"d": 1, "w": 7, "f": 14}
_END_OF_WEEK = re.compile(
    r"(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|(?P<next>next\s+))?"
    r"(?P<work>(?:work|working|business)\s+)?week"
)
_END_OF_MONTH = re.compile(r"(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|(?P<next>next\s+))?month")
_DAY_OF_MONTH = re.compile(r"(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)")
_MIDNIGHT = re.compile(r"\b(?:at\s+)?midnight\b")
_NOON = re.compile(r"\b(?:at\s+)?(?:noon|midday)\b")
_CLOCK_12 = re.compile(
    r"(?<![\d:/.-])(?P<h>\d{1,2})(?:[:.](?P<m>\d\d))?(?::(?P<s>\d\d))?\s*"
    r"(?P<ap>a\.?m\.?|p\.?m\.?)(?![a-z])"
)
_CLOCK_24 = re.compile(r"(?<![\d:/.-])(?P<h>\d{1,2})(?:[:h](?P<m>\d\d))(?::(?P<s>\d\d))?(?![\d:])")
_CLOCK_H = re.compile(r"(?<![\d:/.-])(?P<h>\d{1,2})h\b")
_BARE_HOUR = re.compile(
    r"(?:\b(?:at|by|around|about|before|after|until|till|from)\s+|@\s*)(?P<h>\d{1,2})"
    r"(?:\s*o'?clock)?(?![\d:./]|\s*(?:st|nd|rd|th|[ap]\.?m|h\b|hours?|hrs?|min|days?|weeks?"
    r"|months?|years?)\b)"
    r"|(?<![\d:./-])(?P<h2>\d{1,2})\s*o'?clock\b"
    # "9 tonight", "7 in the morning", "8 tomorrow evening": the part of day makes it a time.
    r"|(?<![\d:./-])(?P<h3>\d{1,2})(?=\s+(?:tonight|in\s+the\s+(?:morning|afternoon|evening)"
    r"|tomorrow\s+(?:morning|afternoon|evening|night))\b)"
)
_PART_OF_DAY = re.compile(
    r"\b(?:in\s+the\s+|this\s+|at\s+)?(?P<part>morning|afternoon|evening|tonight|night)\b"
)
# Today's part of day alone: ``parts_of_day.py`` reads it when told of the past.
_THIS_PART = re.compile(r"this\s+(?P<part>morning|afternoon|evening)|tonight")
# Texting abbreviations of day words, spelled out before reading ("tmrw", "thurs", "fri").
_SPELLED_OUT = {"tmr": "tomorrow", "tmrw": "tomorrow", "tmw": "tomorrow", "2moro": "tomorrow",
                "2morrow": "tomorrow", "thur": "thursday", "thurs": "thursday",
                "fri": "friday", "weds": "wednesday", "tues": "tuesday"}  # fmt: skip
_TEXTING_DAY = re.compile(rf"\b(?:{'|'.join(_SPELLED_OUT)})\b")
# A date written out in full with its year: the time beside it is 24-hour writing.
_FULL_DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{4}\b")


def _clock_time(
    text: str, clock_24h: bool = False, waking: bool = False
) -> tuple[str, list[time], str | None, bool] | None:
    """Find the clock-time token: (text without it, candidate times, kind, ok).

    kind is "midnight", "eod" or None. Returns None when there is no clock time.
    ``ok`` is False for impossible times ("13pm", "25:00").
    """
    for pattern, fixed, kind in ((_EOD, time(23, 59), "eod"), (_MIDNIGHT, time(0), "midnight"),
                                 (_NOON, time(12), None)):  # fmt: skip
        match = pattern.search(text)
        if match:
            return cut(text, match), [fixed], kind, True
    match = _CLOCK_12.search(text)
    if match:
        hour, minute, second = int(match["h"]), int(match["m"] or 0), int(match["s"] or 0)
        ok = 1 <= hour <= 12 and minute < 60 and second < 60
        pm = match["ap"].startswith("p")
        hour = (hour % 12) + (12 if pm else 0)
        return cut(text, match), [time(hour % 24, minute % 60, second % 60)], None, ok
    match = _CLOCK_24.search(text)
    if match and not clock_24h and _on_twelve_hour_dial(match, text):
        return _twelve_hour(cut(text, match), int(match["h"]), int(match["m"]), waking)
    match = match or _CLOCK_H.search(text)
    if match:
        hour = int(match["h"])
        minute = int(match.groupdict().get("m") or 0)
        second = int(match.groupdict().get("s") or 0)
        ok = hour < 24 and minute < 60 and second < 60
        return cut(text, match), [time(hour % 24, minute % 60, second % 60)], None, ok
    match = _BARE_HOUR.search(text)
    if match:
        hour = int(match["h"] or match["h2"] or match["h3"])
        if hour == 0 or 13 <= hour <= 23:
            return cut(text, match), [time(hour)], None, True
        return _twelve_hour(cut(text, match), hour, 0, waking)
    return None


def _on_twelve_hour_dial(match: re.Match[str], text: str) -> bool:
    """Could this "h:mm" be either side of noon? Not "09:30" (a leading zero), "14:30",
    "10:30:00" (seconds) nor a time in a full numeric date: those are 24-hour writing."""
    written = match["h"]
    return (
        ":" in match[0]  # "10h30" is 24-hour writing
        and 1 <= int(written) <= 12
        and not written.startswith("0")
        and match["s"] is None
        and _FULL_DATE.search(text) is None
    )


def _twelve_hour(
    rest: str, hour: int, minute: int, waking: bool = False
) -> tuple[str, list[time], None, bool]:
    """An hour 1-12 with no am/pm: a part-of-day cue in ``rest`` picks the side of noon,
    then ``waking`` picks the morning for 1-11 (12 stays in question: noon or midnight),
    else both readings are candidates (morning first). "Tonight" has one reading: an hour
    of the small hours ("tonight at 2") is that hour after tonight's midnight, since 14:00
    is no one's tonight, and any other the evening's."""
    ok = 1 <= hour <= 12 and minute < 60
    rises = waking and hour != 12
    hour, minute = hour % 12, minute % 60
    part = _PART_OF_DAY.search(rest)
    cue = part["part"] if part else ("morning" if rises else None)
    small_hours = in_small_hours(time(hour, minute))
    if cue == "morning" or (cue == "tonight" and small_hours) or (cue == "night" and hour == 0):
        return rest, [time(hour, minute)], None, ok
    if cue in {"afternoon", "evening", "tonight"} or (cue == "night" and hour >= 6):
        return rest, [time(hour + 12, minute)], None, ok
    return rest, [time(hour, minute), time(hour + 12, minute)], None, ok


def _span(value: datetime, period: str) -> LocalReading:
    day = value.date()
    if period == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    elif period == "month":
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    elif period == "year":
        start, end = day.replace(month=1, day=1), day.replace(year=day.year + 1, month=1, day=1)
    else:
        start, end = day, day + timedelta(days=1)
    return LocalReading("span", (datetime.combine(start, time()), datetime.combine(end, time())))


def _week_end(base: datetime, *, next_week: bool, work: bool) -> LocalReading:
    """The last day of this (or next) ISO week as a span: Sunday, or Friday for the work
    week."""
    monday = base.date() - timedelta(days=base.weekday())
    day = monday + timedelta(days=(4 if work else 6) + (7 if next_week else 0))
    start = datetime.combine(day, time())
    return LocalReading("span", (start, start + timedelta(days=1)))


def _month_end(base: datetime, *, next_month: bool) -> LocalReading:
    """The last day of this (or next) month as a span."""
    first = base.date().replace(day=1)
    if next_month:
        first = (first + timedelta(days=32)).replace(day=1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    start = datetime.combine(last, time())
    return LocalReading("span", (start, start + timedelta(days=1)))


def _day_of_month(base: datetime, day: int, past: bool) -> LocalReading | None:
    """The next (told of the past, the last) date with this day of the month, today
    included, as a span; None for a day no month has."""
    if not 1 <= day <= 31:
        return None
    step = -1 if past else 1
    year, month = base.year, base.month
    for _ in range(13):
        try:
            found = date(year, month, day)
        except ValueError:
            found = None
        if found is not None and (found <= base.date() if past else found >= base.date()):
            start = datetime.combine(found, time())
            return LocalReading("span", (start, start + timedelta(days=1)))
        year, month = divmod(year * 12 + month - 1 + step, 12)
        month += 1
    return None


def _days_from(found: re.Match[str], base: datetime, date_order: str) -> LocalReading | None:
    """The whole day some days or weeks on from a day ("a week from tuesday": the Tuesday
    after next); None when the day itself is in question ("a week from friday" said on
    a Friday: from today or from next Friday?)."""
    day = _read_lowered(found["day"], base, date_order, False, False, False)
    if day is None or day.kind != "span":
        return None
    count = found["count"]
    days = (_COUNTS.get(count) or int(count)) * _UNIT_DAYS[found["unit"][0]]
    start = datetime.combine(day.times[0].date() + timedelta(days=days), time())
    return LocalReading("span", (start, start + timedelta(days=1)))


def read_local(
    text: str,
    base: datetime,
    date_order: str = "MDY",
    *,
    clock_24h: bool = False,
    past: bool = False,
    waking: bool = False,
    speaker_now: datetime | None = None,
) -> LocalReading | None:
    """Read ``text`` relative to the naive local ``base``; None if it is not a time phrase
    (or, told of the past, an hour that cannot be settled).

    ``date_order`` is ``"MDY"``, ``"DMY"`` or ``"YMD"`` and decides numeric dates only;
    ``clock_24h`` reads every "h:mm" as 24-hour time ("10:30" is never 22:30); ``past``
    reads the phrase as told of the past and ``waking`` as said of rising (see the module
    docstring). ``speaker_now`` is the speaker's own wall time when ``base`` is another
    zone's (it decides whether the speaker is in the small hours).
    """
    lowered = _TEXTING_DAY.sub(lambda found: _SPELLED_OUT[found[0]], " ".join(text.lower().split()))
    reading = _read_lowered(lowered, base, date_order, clock_24h, past, waking)
    if reading is None:
        return None
    return small_hours_reading(lowered, reading, base, past, speaker_now)


def _read_lowered(
    lowered: str, base: datetime, date_order: str, clock_24h: bool, past: bool, waking: bool
) -> LocalReading | None:
    tidied = tidy(lowered)
    days_from = _DAYS_FROM.fullmatch(tidied)
    if days_from is not None:
        return _days_from(days_from, base, date_order)
    week_end = _END_OF_WEEK.fullmatch(tidied)
    if week_end is not None:
        return _week_end(base, next_week=bool(week_end["next"]), work=bool(week_end["work"]))
    month_end = _END_OF_MONTH.fullmatch(tidied)
    if month_end is not None:
        return _month_end(base, next_month=bool(month_end["next"]))
    day_of_month = _DAY_OF_MONTH.fullmatch(tidied)
    if day_of_month is not None:
        return _day_of_month(base, int(day_of_month["day"]), past)
    hours = find_hour_range(lowered)
    if hours is not None:
        return hour_range(lowered, hours, base, date_order, past)
    found = _clock_time(lowered, clock_24h, waking)
    if found is None:
        rest = tidy(lowered)
        parsed = read_date(rest, base, date_order, past) if rest else None
        if parsed is None:
            return None
        value, period = parsed
        if period in {"time", "part_of_day"}:
            reading = LocalReading("point", (value.replace(microsecond=0),))
        else:
            reading = _span(value, period)
        today = weekday_part_today(rest, reading, base, past)
        if today is not None:
            return today
        this_part = _THIS_PART.fullmatch(rest)
        if this_part is not None and reading.kind == "point":
            return part_of_today(this_part["part"] or "night", reading, base, past)
        return reading if past else weekday_choice(rest, reading, base)

    rest, clock_times, kind, ok = found
    if not ok:
        return None
    part = _PART_OF_DAY.search(rest)
    if part and (part["part"] == "tonight" or part[0].startswith("this")):
        rest = cut(rest, part) + " today"
    elif part:
        rest = cut(rest, part)
    rest = APPROXIMATELY.sub("", f" {tidy(rest)}").strip()
    explicit_day: date | None = None
    day_of_month = _DAY_OF_MONTH.fullmatch(re.sub(r"\s+(?:at|@)$", "", rest))
    if day_of_month is not None:  # "the 3rd at 3pm"
        on_day = _day_of_month(base, int(day_of_month["day"]), past)
        if on_day is None:
            return None
        explicit_day = on_day.times[0].date()
    elif rest and rest != "today":
        parsed = read_date(rest, base, date_order, past)
        if parsed is None or parsed[1] not in {"day", "part_of_day"}:
            return None
        explicit_day = parsed[0].date()
    elif rest == "today":
        explicit_day = base.date()

    if kind == "midnight":
        if past and explicit_day is None:
            return LocalReading("point", (datetime.combine(base.date(), time()),))
        if explicit_day is None or rest == "today":
            return LocalReading(
                "point", (datetime.combine(base.date() + timedelta(days=1), time()),)
            )
        start = datetime.combine(explicit_day, time())
        end = start + timedelta(days=1)
        question = (
            f"Do you mean midnight at the start of {describe_day(explicit_day)} (00:00) or at "
            f"its end (00:00 on {describe_day(end.date())})?"
        )
        return LocalReading("choice", (start, end), question)

    # "tonight 2:30am" said in the evening is the small hours after tonight's midnight;
    # said at 03:00, "tonight at 2" is the coming night's, not the hour just gone.
    tonight = bool(part and part["part"] == "tonight")
    in_the_night = in_small_hours(base.time())
    candidates = []
    for clock in clock_times:
        value = datetime.combine(explicit_day or base.date(), clock)
        if tonight and in_small_hours(clock) and (not in_the_night or (value <= base and not past)):
            value += timedelta(days=1)
        if explicit_day is None and past and value > base:
            value -= timedelta(days=1)  # told of the past: its last occurrence
        elif explicit_day is None and not past and value <= base:
            value += timedelta(days=1)  # a bare time is its next occurrence
        candidates.append(value)
    if len(candidates) == 2:
        candidates = settle_dial(candidates, base, explicit_day, past)
    if not candidates:
        return None
    if len(candidates) == 1:
        point = LocalReading("point", (candidates[0],))
        return point if past else weekday_choice(rest, point, base, part_of_day=bool(part))
    first, second = candidates
    if first.date() == second.date():
        question = f"Do you mean {first:%H:%M} or {second:%H:%M} on {describe_day(first.date())}?"
    else:
        question = (
            f"Do you mean {first:%H:%M} on {describe_day(first.date())} or "
            f"{second:%H:%M} on {describe_day(second.date())}?"
        )
    return LocalReading("choice", tuple(candidates), question)
