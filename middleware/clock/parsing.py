"""Anchored time parsing (spec 000 §4.3, §4.4 ``parse_anchored_time``).

A phrase becomes instants only when it is anchored: to a zone or offset named in the
phrase itself (§4.2 step 1), else to the Session TZ the caller passes. Without either,
a wall-clock phrase is *floating* and comes back unparsed with a question (§4.3).
Abbreviations are never mapped silently; local times that fall in a DST gap or fold are
never shifted silently. All zone arithmetic is done here with zoneinfo; dateparser only
reads the date words, on naive wall times (see ``wallclock.py`` for the phrase rules).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, timezone
from functools import lru_cache
from typing import Any, Literal

from babel.dates import get_date_format, get_time_format
from dateparser.search import search_dates
from dateparser.timezone_parser import pop_tz_offset_from_string

from middleware.actions.prefilter import fold, gate_text, needle_search
from middleware.clock.abbreviations import (
    clarification_for,
    find_zone_names,
    resolve_abbreviation,
    stated_offset,
)
from middleware.clock.idioms import names_no_time
from middleware.clock.mentions import PlaceZone, find_zone_mention, place_after_clock
from middleware.clock.places import place_question
from middleware.clock.tense import sentence_around, tells_of_the_past
from middleware.clock.wallclock import LocalReading, describe_day, read_local
from middleware.clock.zones import (
    format_offset,
    get_zone,
    is_valid_zone,
    localize,
    offset_minutes,
)
from middleware.text_cache import MAX_CHARS

__all__ = [
    "ParseResult",
    "date_order_for_locale",
    "find_time_expressions",
    "looks_timeish",
    "parse_anchored_time",
    "writes_24_hour_times",
]

Kind = Literal["absolute", "relative", "floating", "invalid"]


@dataclass(frozen=True)
class ParseResult:
    """What a time phrase means.

    * ``absolute``: anchored to ``zone`` (an IANA id, or ``"UTC+05:45"`` for a bare
      offset); ``start_instant`` set, ``end_instant`` set for spans (a day, week, ...:
      half-open, exclusive end).
    * ``relative``: a duration from the reference instant ("in 2 hours"); no zone needed.
    * ``floating``: a wall-clock phrase with no zone to anchor it, or with an abbreviation
      nobody has resolved; no instants, ``needs_clarification`` is True.
    * ``invalid``: not a time phrase.

    When ``needs_clarification`` is True the instants are None and ``candidates`` holds
    the instants to choose between (fold, ambiguous hour, "next Friday", ...) or, for a
    DST gap, the suggested instant. Instants are aware and in UTC.
    """

    kind: Kind
    start_instant: datetime | None = None
    end_instant: datetime | None = None
    needs_clarification: bool = False
    clarification_question: str | None = None
    matched_text: str = ""
    zone: str | None = None
    candidates: tuple[datetime, ...] = ()


@lru_cache(maxsize=64)
def writes_24_hour_times(locale: str) -> bool:
    """Does ``locale`` write clock times on the 24-hour clock (``en_GB``, ``de_DE``:
    "HH:mm"; not ``en_US``: "h:mm a")? Raises ValueError for an unknown locale."""
    try:
        pattern = get_time_format("short", locale=locale).pattern
    except Exception as exc:  # babel raises UnknownLocaleError or ValueError
        raise ValueError(f"unknown locale {locale!r}; use a code such as 'en_GB'") from exc
    return "H" in pattern or "k" in pattern


def date_order_for_locale(locale: str) -> str:
    """``"MDY"``, ``"DMY"`` or ``"YMD"`` from a locale's short date pattern
    (``en_US`` -> MDY, ``en_GB``/``de_DE`` -> DMY, ``ja_JP`` -> YMD). Raises ValueError
    for an unknown locale."""
    try:
        pattern = get_date_format("short", locale=locale).pattern
    except Exception as exc:  # babel raises UnknownLocaleError or ValueError
        raise ValueError(f"unknown locale {locale!r}; use a code such as 'en_GB'") from exc
    letters = [c for c in dict.fromkeys(pattern.lower()) if c in "ymd"]
    order = "".join(letters).upper()
    return order if order in {"MDY", "DMY", "YMD"} else "MDY"


_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                 "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12}  # fmt: skip
_RELATIVE = re.compile(
    r"^(?P<in>in\s+)?(?:(?P<half>half\s+an?\s+hour)|(?P<n>\d+(?:\.\d+)?|"
    + "|".join(_NUMBER_WORDS)
    + r")\s*(?P<unit>sec(?:ond)?s?|min(?:ute)?s?|h(?:ou)?rs?|hours?|days?|weeks?|fortnights?"
    r"|months?|years?))(?P<tail>\s+(?:time|from\s+now|later|ago))?$"
)
_NOW = re.compile(r"^(?:right\s+|just\s+)?now$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "f": 1209600}


def _days_later(instant: datetime, days: float, tz: str | None) -> datetime:
    """``days`` calendar days on in the Session TZ (UTC without one): the same wall-clock
    time, whatever DST does in between (aware arithmetic in one zone is wall-clock)."""
    local = instant.astimezone(get_zone(tz) if tz else UTC)
    return (local + timedelta(days=days)).astimezone(UTC)


def _months_later(instant: datetime, months: int, tz: str | None) -> datetime:
    zone = get_zone(tz) if tz else UTC
    local = instant.astimezone(zone)
    index = local.year * 12 + local.month - 1 + months
    year, month = divmod(index, 12)
    day = local.day
    while True:  # clamp 31 Jan + 1 month to 28/29 Feb
        try:
            moved = local.replace(year=year, month=month + 1, day=day)
            break
        except ValueError:
            day -= 1
    return moved.astimezone(UTC)


def _relative(phrase: str, reference: datetime, tz: str | None) -> ParseResult | None:
    """Durations: seconds to hours are exact; days and weeks keep the wall-clock time in
    the Session TZ (UTC without one) across DST, as people mean "in 2 days"; months and
    years move the calendar there too, clamping the day."""
    lowered = " ".join(phrase.lower().split())
    if _NOW.match(lowered):
        return ParseResult("relative", start_instant=reference, matched_text=phrase)
    match = _RELATIVE.match(lowered)
    if match is None:
        return None
    tail = (match["tail"] or "").strip()
    if bool(match["in"]) == (tail in {"ago", "from now", "later"}) or (
        tail == "time" and not match["in"]
    ):
        return None
    sign = -1 if tail == "ago" else 1
    if match["half"]:
        instant = reference + sign * timedelta(minutes=30)
    else:
        amount = float(_NUMBER_WORDS.get(match["n"], 0) or match["n"])
        unit = match["unit"]
        if unit.startswith(("month", "year")):
            if amount != int(amount):
                return None
            months = int(amount) * (12 if unit.startswith("year") else 1)
            instant = _months_later(reference, sign * months, tz)
        elif unit.startswith(("day", "week", "fortnight")):
            days = amount * _UNIT_SECONDS[unit[0]] / _UNIT_SECONDS["d"]
            instant = _days_later(reference, sign * days, tz)
        else:
            key = "m" if unit.startswith("min") else unit[0]
            instant = reference + timedelta(seconds=sign * amount * _UNIT_SECONDS[key])
    return ParseResult("relative", start_instant=instant.astimezone(UTC), matched_text=phrase)


@dataclass(frozen=True)
class _Anchor:
    zone: str | None = None  # IANA id
    offset: int | None = None  # minutes, for "UTC+9" and ISO offsets

    @property
    def label(self) -> str:
        if self.zone is not None:
            return self.zone
        return "UTC" if self.offset == 0 else format_offset(self.offset or 0)

    def local_now(self, reference: datetime) -> datetime:
        if self.zone is not None:
            return reference.astimezone(get_zone(self.zone)).replace(tzinfo=None)
        return (reference + timedelta(minutes=self.offset or 0)).replace(tzinfo=None)

    def fixed(self, naive: datetime) -> datetime:
        tzinfo = timezone(timedelta(minutes=self.offset or 0))
        return naive.replace(tzinfo=tzinfo).astimezone(UTC)


def _day_start(day: date, anchor: _Anchor) -> datetime:
    """First instant of a local date: midnight, or the end of a DST gap covering it."""
    naive = datetime.combine(day, time())
    if anchor.zone is None:
        return anchor.fixed(naive)
    found = localize(naive, anchor.zone)
    if found.status == "gap":
        assert found.transition is not None
        return found.transition
    return found.instants[0]


def _clock(local: datetime) -> str:
    return f"{local:%H:%M}" if local.second == 0 else f"{local:%H:%M:%S}"


def _anchor_point(naive: datetime, anchor: _Anchor, base: ParseResult) -> ParseResult:
    if anchor.zone is None:
        return replace(base, start_instant=anchor.fixed(naive))
    found = localize(naive, anchor.zone)
    if found.status == "ok":
        return replace(base, start_instant=found.instants[0])
    when = f"{_clock(naive)} on {describe_day(naive.date())} in {anchor.zone}"
    if found.status == "fold":
        first, second = (format_offset(o) for o in found.offsets)
        question = f"Which {when} — the first ({first}) or the second ({second})?"
        return replace(base, needs_clarification=True, clarification_question=question,
                       candidates=found.instants)  # fmt: skip
    assert found.gap_start and found.gap_end and found.shifted
    shifted_local = found.shifted.astimezone(get_zone(anchor.zone)).replace(tzinfo=None)
    question = (
        f"{when} does not exist — clocks jump from {_clock(found.gap_start)} to "
        f"{_clock(found.gap_end)}. Did you mean {_clock(shifted_local)}?"
    )
    return replace(base, needs_clarification=True, clarification_question=question,
                   candidates=(found.shifted,))  # fmt: skip


def _anchor(reading: LocalReading, anchor: _Anchor, phrase: str) -> ParseResult:
    base = ParseResult("absolute", matched_text=phrase, zone=anchor.label)
    if reading.kind == "span":
        start, end = (_day_start(t.date(), anchor) for t in reading.times)
        return replace(base, start_instant=start, end_instant=end)
    if reading.kind == "point":
        return _anchor_point(reading.times[0], anchor, base)
    candidates: list[datetime] = []
    for naive in reading.times:
        point = _anchor_point(naive, anchor, base)
        candidates.extend([point.start_instant] if point.start_instant else point.candidates)
    return replace(base, needs_clarification=True, clarification_question=reading.question,
                   candidates=tuple(candidates))  # fmt: skip


def _iso(phrase: str) -> ParseResult | None:
    try:
        value = datetime.fromisoformat(phrase.strip().replace("z", "Z"))
    except ValueError:
        return None
    offset = value.utcoffset()
    if offset is None or not re.search(r"\d:\d\d", phrase):
        return None
    anchor = _Anchor(offset=int(offset.total_seconds() // 60))
    return ParseResult("absolute", start_instant=value.astimezone(UTC), matched_text=phrase,
                       zone=anchor.label)  # fmt: skip


def _floating(phrase: str, question: str) -> ParseResult:
    return ParseResult("floating", needs_clarification=True, clarification_question=question,
                       matched_text=phrase)  # fmt: skip


def parse_anchored_time(
    text: str,
    tz: str | None,
    reference_instant: datetime,
    *,
    date_order: str | None = None,
    locale: str | None = None,
    place_zone: PlaceZone | None = None,
    abbreviation_context: Mapping[str, str] | None = None,
    past: bool = False,
    waking: bool = False,
) -> ParseResult:
    """Parse one time phrase (spec 000 §4.4) relative to the aware ``reference_instant``.

    ``tz`` is the Session TZ (IANA id) or None. A zone in the phrase wins over ``tz``:
    an ISO timestamp with offset, ``UTC+9``/``10:00+05:45``, ``UTC``/``GMT``/``Z``, an
    IANA id, or a place ("Tokyo time", "3pm in Berlin") resolved by ``place_zone`` and
    then by the IANA city names; a place the first of them that knows it calls
    ambiguous (``place_zone`` returns its candidates) makes the result floating with a
    question. An abbreviation ("9am PST") or its spelled-out name
    ("9am Pacific time") is used only when
    ``abbreviation_context`` maps it (e.g. ``{"IST": "Asia/Kolkata"}``) or ``tz`` is one
    of its usual zones; otherwise the result is floating with a question. A season's
    abbreviation its zone is not on at that time ("15:00 CEST" in November) asks which
    offset is meant, with both instants as candidates.

    ``date_order`` ("MDY", "DMY", "YMD") reads numeric dates; it defaults to the order
    of ``locale`` (babel) and then to MDY. The phrase rules are in ``wallclock.py``;
    relative hours and minutes are exact; days, weeks and months keep the wall-clock time
    in ``tz`` (``"in 2 days"`` across a DST change is 47 or 49 h). ``past`` reads a
    phrase told of the past ("was at 3pm") as its last occurrence, not its next; ``waking``
    reads an hour with no am/pm as the morning one (said of rising: "be up at 6"). Raises
    ValueError for a naive reference, an invalid ``tz`` or an unknown locale.
    """
    if reference_instant.tzinfo is None:
        raise ValueError("reference_instant must be an aware datetime")
    if tz is not None:
        get_zone(tz)
    order = date_order or (date_order_for_locale(locale) if locale else "MDY")
    phrase = " ".join(text.split())
    if not phrase:
        return ParseResult("invalid", matched_text=text)
    found = _iso(phrase) or _relative(phrase, reference_instant, tz)
    if found:
        return found

    anchor = _Anchor(zone=tz) if tz else None
    rest, question, abbreviation = phrase, None, None
    clock_24h = writes_24_hour_times(locale) if locale else False
    mention = find_zone_mention(phrase, place_zone)
    if mention is not None:
        rest = f"{phrase[: mention.start]} {phrase[mention.end :]}"
        # Times given in UTC or as an offset ("10:00 UTC+9") are 24-hour writing.
        clock_24h = clock_24h or mention.offset is not None or mention.zone == "UTC"
        if mention.zone is not None:
            anchor = _Anchor(zone=mention.zone)
        elif mention.offset is not None:
            anchor = _Anchor(offset=mention.offset)
        elif mention.candidates:
            anchor, question = None, place_question(mention.place or "", mention.candidates)
        else:
            abbr = mention.abbreviation or ""
            context = {key.upper(): value for key, value in (abbreviation_context or {}).items()}
            known = context.get(abbr.upper())
            from_tz = resolve_abbreviation(abbr, [tz], at=reference_instant)
            if known is not None and is_valid_zone(known):
                anchor, abbreviation = _Anchor(zone=known), abbr
            elif from_tz is not None:
                anchor, abbreviation = _Anchor(zone=from_tz), abbr
            else:
                anchor, question = None, clarification_for(abbr)
    # Any zone token dateparser knows but we did not take (say "ACT") must not be applied
    # silently by dateparser either.
    stripped, leftover = pop_tz_offset_from_string(rest, as_offset=False)
    if isinstance(leftover, str) and leftover.strip():
        rest = stripped
        anchor, question = None, clarification_for(leftover.strip().upper())
    if anchor is not None and anchor.zone is not None and not is_valid_zone(anchor.zone):
        anchor = None
    local_now = (anchor or _Anchor(zone="UTC")).local_now(reference_instant)
    reading = read_local(rest, local_now, order, clock_24h=clock_24h, past=past, waking=waking)
    if reading is None:
        return ParseResult("invalid", matched_text=phrase)
    if anchor is None:
        return _floating(
            phrase,
            question
            or f"Which timezone is '{phrase}' in? Name a city or an IANA zone such as "
            "Europe/Berlin.",
        )
    result = _anchor(reading, anchor, phrase)
    if abbreviation is not None and reading.kind == "point":
        return _check_stated_offset(result, abbreviation, reading.times[0])
    return result


def _check_stated_offset(result: ParseResult, abbr: str, naive: datetime) -> ParseResult:
    """Ask when the abbreviation states another offset than its zone has then: "15:00
    CEST" in November is 15:00 Berlin time (UTC+01:00) or 15:00 UTC+02:00 (spec 000 §4.2:
    never map an abbreviation silently)."""
    if result.start_instant is None or result.zone is None:
        return result
    stated = stated_offset(abbr, result.zone, result.start_instant)
    if stated is None:
        return result
    actual = format_offset(offset_minutes(result.zone, result.start_instant))
    when = f"{_clock(naive)} on {describe_day(naive.date())}"
    question = (
        f"{abbr} is {format_offset(stated)}, but {result.zone} is on {actual} at {when}: "
        f"did you mean {_clock(naive)} {result.zone} time ({actual}) or "
        f"{_clock(naive)} {format_offset(stated)}?"
    )
    candidates = (result.start_instant, _Anchor(offset=stated).fixed(naive))
    return replace(result, start_instant=None, needs_clarification=True,
                   clarification_question=question, candidates=candidates)  # fmt: skip


_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
#: Texting abbreviations of day words ("cant tmrw", "u free thurs", "lmk by fri"), which
#: ``wallclock.py`` spells out. "mon", "wed", "sat" and "sun" are words or names first.
TEXTING_DAYS = r"(?:tmrw?|tmw|2moro|2morrow|thurs?|fri|weds|tues)"
_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
           r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")  # fmt: skip
_COUNT = r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|half\s+an?)"
_UNITS = r"(?:sec|min|hour|hr|day|week|fortnight|month|year)"
#: Tokens that make a phrase clearly about time. Used twice: as the cheap pre-filter that
#: lets a message skip dateparser, and to drop dateparser matches that are only words.
_TIMEISH = re.compile(
    r"\d{1,2}\s*(?:[ap]\.?m\b\.?|o'?clock\b)|\b\d{1,2}[:h]\d\d\b|\b\d{4}-\d\d-\d\d"
    r"|\b\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b"
    r"|\b(?:today|tomorrow|tonight|yesterday|noon|midday|midnight|eod)\b|\bend\s+of\s+(?:the\s+)?day"
    rf"|\b{TEXTING_DAYS}\b"
    r"|\bend\s+of\s+(?:the\s+|this\s+|next\s+)?(?:(?:work|working|business)\s+)?week"
    r"|\bend\s+of\s+(?:the\s+|this\s+|next\s+)?month\b|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b"
    rf"|\b{_WEEKDAYS}\b|\b(?:next|this|last)\s+(?:week|month|year|weekend)\b"
    rf"|\bin\s+{_COUNT}\s*{_UNITS}|\b{_COUNT}\s*{_UNITS}s?\s+ago\b"
    r"|\b(?:at|by|around|until|till)\s+\d{1,2}h?\b|@\s*\d{1,2}\b"
    rf"|\b(?!may\b|mar\b|march\b){_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b",
    re.I,
)
# "may 5" is as likely a verb and a count as a date: only capitalised month words count.
_CAPITAL_MONTH_DAY = re.compile(r"\b(?:May|Mar|March)\s+\d{1,2}(?:st|nd|rd|th)?\b")
_TRAILING_CLOCK = re.compile(
    r"\s*(?:at\s+|@\s*)\d{1,2}(?::\d\d)?(?:\s*[ap]\.?m\b\.?)?|\s+\d{1,2}(?::\d\d|\s*[ap]\.?m\b\.?)",
    re.I,
)
# A bare hour dateparser does not see ("see you at 9", "call me at 7."): after at/by/
# around/until/@, and followed by what ends or continues a time phrase, never by a unit,
# a noun or more digits ("at 9 %", "at 9 years old", "by 6 points", "at 9.5", "at 9/10").
_BARE_CLOCK = re.compile(
    r"(?:\b(?:at|by|around|until|till)\s+|@\s*)"
    r"(?:(?:[1-9]|1[0-2])(?:\s*o'?clock)?|(?:1\d|2[0-3])\s*o'?clock|(?:[01]?\d|2[0-3])h)"
    r"(?=\s*(?:$|[!?,;)\]]|\.(?!\d)|:(?!\d)|\s(?:-?ish|sharp|on|in|at|and|or|then|so|if"
    r"|when|is|works?|ok|okay|please|pls|for|with|to|today|tonight|tomorrow|this|next"
    r"|your|my|local|latest|tops)\b))",
    re.I,
)
# A clock time with am/pm, which dateparser misses when it is the whole message ("9am").
_AM_PM_CLOCK = re.compile(r"(?<![\w:./-])(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s*[ap]\.?m\b\.?", re.I)
# ... nor after a word that makes it a quantity ("stuck at 9", "grew by 6").
_QUANTITY_BEFORE = re.compile(
    r"\b(?:stuck|capped|priced|rated|peaked|sits|stands|stood|level|aged|divided|multiplied"
    r"|increased|decreased|reduced|rose|grew|fell|dropped|up|down|won|lost|beat|led|leads?)"
    r"\s+$",
    re.I,
)
# ... but "up" after waking or getting up is the hour someone rises ("woke up at 7", "I'll
# be up at 6", "I'm up at 6"), where "shares are up at 7" stays a quantity.
_RISING_BEFORE = re.compile(
    r"\b(?:wake|wakes|waking|woke|woken|get|gets|getting|got|gotten|be|i\s*'?\s*m|i\s+am"
    r"|wake\s+(?:me|us))\s+up\s+$",
    re.I,
)
# Words of waking right before a time: an hour there with no am/pm is the morning one ("I'll
# be up at 6", "get up at 7", "wake me at 5", "alarm at 6"). "Be up" counts with a person
# as its subject only: "the results will be up at 5" is not someone rising.
_WAKING_BEFORE = re.compile(
    r"\b(?:(?:wake|wakes|waking|woke|woken|get|gets|getting|got|gotten)\s+up"
    r"|wake\s+(?:me|us)(?:\s+up)?|alarm(?:\s+(?:is\s+)?set)?"
    r"|(?:i|we|you|he|she|they)(?:\s*'?\s*(?:ll|d|m|re)|\s+(?:will|would|must|should|am|are"
    r"|is|gotta|gonna|(?:need|have|has|want|got)\s+to))?(?:\s+be)?\s+up)\s+$",
    re.I,
)
# The end of a day, a week or a month ("by end of day", "EOD", "end of month"), which
# dateparser does not find; ``wallclock.py`` reads them.
_END_OF = re.compile(
    r"\b(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|next\s+)?"
    r"(?:(?:(?:business|work|working)\s+)?(?:day|week)|month)|eod)\b",
    re.I,
)
# "a 1:1", "at 2:1": a ratio or a meeting, never a clock time (minutes have two digits).
_RATIO = re.compile(r"(?:(?:an?|at|the)\s+)?\d{1,2}:\d", re.I)
# "30th on the 21st": dateparser takes in an ordinal before a day of the month.
_ON_DAY_OF_MONTH = re.compile(
    r"\b(?:on|by|until|till|before|after|from)\s+the\s+\d{1,2}(?:st|nd|rd|th)\b", re.I
)
# Day words dateparser misses beside some punctuation ("yesterday: fixed the bug").
# ... and never finds their texting abbreviations ("cant tmrw sorry").
_DAY_WORD = re.compile(rf"\b(?:today|tonight|tomorrow|yesterday|{TEXTING_DAYS})\b", re.I)
_LEAD_IN = re.compile(r"(?:\b(?:at|by|around|about|until|till)\s+|@\s*)$", re.I)
_DANGLING = re.compile(r"(?:\s+(?:in|at|on|by|from|to|and|or|the))+\s*$", re.I)
_JOINER = re.compile(r"^[\s,]*(?:at|on|from)?[\s,]*$", re.I)


# Every alternative of ``_TIMEISH`` needs a digit or one of these (case-folded) fragments:
# "day" stands for today, yesterday, midday, the weekdays and "end of day", "week" for
# weekend; "tmr", "tmw", "thur", "fri", "weds", "tues" for the texting abbreviations (a
# digit lets "2moro" through). ``_TIMEISH`` costs about half a microsecond per character
# (many alternatives, ignoring case); this test costs a few nanoseconds, and most
# messages fail it.
_TIME_FRAGMENTS = ("day", "tomorrow", "tonight", "noon", "midnight", "eod", "tmr", "tmw",
                   "thur", "fri", "weds", "tues")  # fmt: skip
_UNIT_FRAGMENTS = ("sec", "min", "hour", "hr", "week", "fortnight", "month", "year")
_DIGIT = re.compile(r"\d")
# All fragments in one search of the text every stage's gates share (apostrophes made
# straight, which no fragment has).
_FRAGMENT = needle_search(_TIME_FRAGMENTS + _UNIT_FRAGMENTS)


def looks_timeish(text: str) -> bool:
    """Cheap check: does ``text`` hold any clearly time-related token? If not, there is
    no point calling dateparser (``find_time_expressions`` returns [] at once)."""
    if _DIGIT.search(text) is None:
        # Folded as IGNORECASE matches these letters (the dotted İ and dotless ı included).
        folded = gate_text(text) if len(text) <= MAX_CHARS else fold(text)
        if _FRAGMENT.search(folded) is None:
            return False
    return _TIMEISH.search(text) is not None or _CAPITAL_MONTH_DAY.search(text) is not None


def _extend(text: str, end: int, place_zone: PlaceZone | None) -> int:
    """Take in a clock time dateparser left out ("tomorrow" + " at 9") and a zone named
    right after the phrase ("14:30" + " Tokyo time", "3pm" + " PST", "9pm" + " Tokyo")."""
    clock = _TRAILING_CLOCK.match(text, end)
    if clock and not re.search(r"(?:\d|[ap]\.?m\.?)$", text[:end], re.I):
        end = clock.end()
    tail = re.split(r"[,;!?\n]|\.(?:\s|$)", text[end : end + 48], maxsplit=1)[0]
    mention = find_zone_mention(tail, place_zone)
    if mention is not None and not tail[: mention.start].strip():
        return end + mention.end
    after_clock = place_after_clock(text, end, place_zone)  # "9pm" + " Tokyo"
    if after_clock is not None:
        return after_clock.end
    # A bare region ("9am Pacific") names a zone only with its clock time before it.
    for start, stop, _ in find_zone_names(text[: end + len(tail)]):
        if start >= end and not text[end:start].strip():
            return stop
    return end


def find_time_expressions(
    text: str,
    tz: str | None,
    reference_instant: datetime,
    *,
    date_order: str | None = None,
    locale: str | None = None,
    place_zone: PlaceZone | None = None,
    abbreviation_context: Mapping[str, str] | None = None,
) -> list[ParseResult]:
    """Time phrases in a free-form message, in order, each parsed by
    ``parse_anchored_time`` (same arguments), as told of the past when its sentence is
    (``tense.py``) and as said of waking when words of rising come right before it ("be
    up at 6", "alarm at 6"). ``matched_text`` is the phrase as written.

    Conservative: a message with no time-ish token (``looks_timeish``) skips dateparser;
    dateparser matches made only of words such as "now", "may", "second", "we" are
    dropped, as are phrases that do not parse and the uses of ordinary chat that name no
    time (``idioms.py``: "it's friday!", "in a minute", "24/7"). Missing a phrase is
    preferred to inventing an absolute time.
    """
    if reference_instant.tzinfo is None:
        raise ValueError("reference_instant must be an aware datetime")
    if not looks_timeish(text):
        return []
    zone = get_zone(tz) if tz else UTC
    settings: dict[str, Any] = {
        "RELATIVE_BASE": reference_instant.astimezone(zone).replace(tzinfo=None),
        "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
        "TIMEZONE": "UTC",
        "PARSERS": ["relative-time", "absolute-time"],
    }
    found_spans: list[tuple[int, int]] = []
    cursor = 0
    for found, _ in search_dates(text, languages=["en"], settings=settings) or []:
        start = text.find(found, cursor)
        if start < 0:
            continue
        end = start + len(found)
        cursor = end
        if _RATIO.fullmatch(found.strip()):
            continue
        inner = _ON_DAY_OF_MONTH.search(found)
        if inner is not None and inner.start() > 0:
            start += inner.start()
        # "friday at 3pm in" + "Berlin", "friday at the" + "latest"
        trimmed = _DANGLING.sub("", text[start:end])
        lead_in = _LEAD_IN.search(text, 0, start) if text[start].isdigit() else None
        found_spans.append((lead_in.start() if lead_in else start, start + len(trimmed)))
    found_spans.extend(_bare_clock_spans(text, found_spans))
    found_spans.extend(_end_of_spans(text, found_spans))
    found_spans.extend(_uncovered(_DAY_WORD, text, found_spans))
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found_spans):
        if spans and _JOINER.match(text[spans[-1][1] : start]):
            spans[-1] = (spans[-1][0], end)  # "friday" + " at " + "3pm"
        else:
            spans.append((start, end))

    def parse(start: int, end: int) -> ParseResult | None:
        phrase = text[start:end].strip(" ,")
        if not looks_timeish(phrase):
            return None
        past = tells_of_the_past(sentence_around(text, start, end))
        waking = _WAKING_BEFORE.search(text, max(0, start - 40), start) is not None
        result = parse_anchored_time(
            phrase, tz, reference_instant, date_order=date_order, locale=locale,
            place_zone=place_zone, abbreviation_context=abbreviation_context, past=past,
            waking=waking,
        )  # fmt: skip
        return None if result.kind == "invalid" else result

    results: list[ParseResult] = []
    for start, end in spans:
        if names_no_time(text, start, end):  # "it's friday!", "in a minute", "24/7"
            continue
        result = parse(start, _extend(text, end, place_zone)) or parse(start, end)
        if result is not None:
            results.append(result)
    return results


def _bare_clock_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Bare hours ("at 9") and lone am/pm times ("9am") outside the phrases dateparser
    found, which it does not find."""
    if _DIGIT.search(text) is None:  # "today at noon" and the like: nothing to scan for
        return []
    spans: list[tuple[int, int]] = []
    for match in (*_BARE_CLOCK.finditer(text), *_AM_PM_CLOCK.finditer(text)):
        if any(start < match.end() and match.start() < end for start, end in (*taken, *spans)):
            continue
        if not _quantity_before(text, match.start()):
            spans.append(match.span())
    return spans


def _end_of_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ends of days, weeks and months ("end of day", "EOD", "the end of the week") outside
    the phrases dateparser found, which it does not find."""
    return _uncovered(_END_OF, text, taken)


def _uncovered(
    pattern: re.Pattern[str], text: str, taken: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Matches of ``pattern`` in ``text`` that overlap none of the spans ``taken``."""
    return [
        match.span()
        for match in pattern.finditer(text)
        if not any(start < match.end() and match.start() < end for start, end in taken)
    ]


def _quantity_before(text: str, start: int) -> bool:
    """Whether the words before ``start`` make the number there a quantity ("stuck at 9",
    "up at 7"), not an hour ("woke up at 7")."""
    if _QUANTITY_BEFORE.search(text, max(0, start - 16), start) is None:
        return False
    return _RISING_BEFORE.search(text, max(0, start - 24), start) is None
