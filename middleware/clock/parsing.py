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
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache
from typing import Literal

from babel.dates import get_date_format, get_time_format
from dateparser.timezone_parser import pop_tz_offset_from_string

from middleware.clock.abbreviations import (
    clarification_for,
    resolve_abbreviation,
    stated_offset,
)
from middleware.clock.local_reading import LocalReading, describe_day
from middleware.clock.mentions import PlaceZone, find_zone_mention
from middleware.clock.places import place_question
from middleware.clock.wallclock import read_local
from middleware.clock.zones import (
    format_offset,
    get_zone,
    is_valid_zone,
    localize,
    offset_minutes,
    session_tzinfo,
)

__all__ = [
    "ParseResult",
    "date_order_for_locale",
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
    DST gap, the suggested instant. When the candidates are spans (a range of hours with
    no am/pm: "02:00 to 04:00 or 14:00 to 16:00?"), ``candidate_ends`` holds the end of
    each, in the same order, so an answer that picks one gets its whole span as said.
    Instants are aware and in UTC.
    """

    kind: Kind
    start_instant: datetime | None = None
    end_instant: datetime | None = None
    needs_clarification: bool = False
    clarification_question: str | None = None
    matched_text: str = ""
    zone: str | None = None
    candidates: tuple[datetime, ...] = ()
    candidate_ends: tuple[datetime, ...] = ()


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
    r"^(?P<in>in\s+)?(?:(?P<half>half\s+an?\s+hour)|(?P<and_half>an?\s+hour\s+and\s+a\s+half)"
    r"|(?P<n>\d+(?:\.\d+)?|"
    + "|".join(_NUMBER_WORDS)
    + r")\s*(?P<unit>sec(?:ond)?s?|min(?:ute)?s?|h(?:ou)?rs?|hours?|days?|weeks?|fortnights?"
    r"|months?|years?))(?P<tail>\s+(?:time|from\s+now|later|ago))?$"
)
_NOW = re.compile(r"^(?:right\s+|just\s+)?now$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "f": 1209600}


def _days_later(instant: datetime, days: float, tz: str | None) -> datetime:
    """``days`` calendar days on in the Session TZ (UTC without one): the same wall-clock
    time, whatever DST does in between (aware arithmetic in one zone is wall-clock)."""
    local = instant.astimezone(session_tzinfo(tz) if tz else UTC)
    return (local + timedelta(days=days)).astimezone(UTC)


def _months_later(instant: datetime, months: int, tz: str | None) -> datetime:
    local = instant.astimezone(session_tzinfo(tz) if tz else UTC)
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
    if match["half"] or match["and_half"]:
        instant = reference + sign * timedelta(minutes=90 if match["and_half"] else 30)
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


def _session_anchor(tz: str) -> _Anchor:
    """The anchor of a Session TZ: a zone id, or a fixed offset's label ("UTC+02:00", an
    offset the message named). Raises ValueError for anything else."""
    tzinfo = session_tzinfo(tz)
    if is_valid_zone(tz):
        return _Anchor(zone=tz)
    offset = tzinfo.utcoffset(None) or timedelta(0)
    return _Anchor(offset=int(offset.total_seconds()) // 60)


def _span_bound(naive: datetime, anchor: _Anchor) -> datetime:
    """The instant of a local wall time bounding a span: a day's midnight, or another
    time ("this morning" so far: 05:00 to now, "from 1am to 3am"). In a DST gap it is
    read with the offset before the jump, as zoneinfo's ``fold=0`` does (02:30 on the
    night clocks go from 02:00 to 03:00 is 03:30; a midnight the day starts in a gap is
    the jump itself); in a fold it is the first reading."""
    if anchor.zone is None:
        return anchor.fixed(naive)
    found = localize(naive, anchor.zone)
    if found.status == "gap":
        assert found.shifted is not None
        return found.shifted
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
        start, end = (_span_bound(t, anchor) for t in reading.times)
        return replace(base, start_instant=start, end_instant=end)
    if reading.kind == "point":
        return _anchor_point(reading.times[0], anchor, base)
    candidates: list[datetime] = []
    ends: list[datetime] = []
    for index, naive in enumerate(reading.times):
        point = _anchor_point(naive, anchor, base)
        starts = [point.start_instant] if point.start_instant else point.candidates
        candidates.extend(starts)
        if reading.ends:  # each end is its own wall time in the zone, DST or not
            ends.extend(_span_bound(reading.ends[index], anchor) for _ in starts)
    return replace(base, needs_clarification=True, clarification_question=reading.question,
                   candidates=tuple(candidates), candidate_ends=tuple(ends))  # fmt: skip


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
    speaker_tz: str | None = None,
) -> ParseResult:
    """Parse one time phrase (spec 000 §4.4) relative to the aware ``reference_instant``.

    ``tz`` is the Session TZ (an IANA id, or the label of an offset the message named, such
    as "UTC+02:00") or None. A zone in the phrase wins over ``tz``:
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
    reads an hour with no am/pm as the morning one (said of rising: "be up at 6").
    ``speaker_tz`` is the speaker's own zone when ``tz`` is another one the message named
    (defaults to ``tz``): a day word ("tomorrow", "today") read in a zone that is on
    another date than the speaker's is asked about (``_check_day_word_calendar``), and the
    small hours ("which day is tomorrow at 02:00?") are the speaker's, not the zone's. Raises
    ValueError for a naive reference, an invalid ``tz`` or an unknown locale.
    """
    if reference_instant.tzinfo is None:
        raise ValueError("reference_instant must be an aware datetime")
    session = _session_anchor(tz) if tz is not None else None
    order = date_order or (date_order_for_locale(locale) if locale else "MDY")
    phrase = " ".join(text.split())
    if not phrase:
        return ParseResult("invalid", matched_text=text)
    found = _iso(phrase) or _relative(phrase, reference_instant, tz)
    if found:
        return found

    anchor = session
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
    speaker = speaker_tz or tz
    speaker_now = _session_anchor(speaker).local_now(reference_instant) if speaker else None
    reading = read_local(rest, local_now, order, clock_24h=clock_24h, past=past, waking=waking,
                         speaker_now=speaker_now)  # fmt: skip
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
    if speaker is not None and speaker != anchor.label and reading.kind == "point" and not past:
        return _check_day_word_calendar(
            result, reading.times[0], anchor, speaker, reference_instant
        )
    return result


# Day words counted from today: "tomorrow" in a named zone may be the speaker's tomorrow.
_RELATIVE_DAY = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|tmrw?|tmw|2moro|2morrow)\b", re.I
)


def _check_day_word_calendar(
    result: ParseResult, naive: datetime, anchor: _Anchor, speaker: str, reference: datetime
) -> ParseResult:
    """Ask which day a day word means when the zone the phrase is read in is on another
    date than the ``speaker``'s: "9am Berlin time tomorrow" said at 22:00 on Friday in New
    York (04:00 on Saturday in Berlin) is 09:00 on Sunday by Berlin's calendar, the
    phrase's anchor (spec 000 §4.2 step 1), or 09:00 on Saturday, the speaker's
    tomorrow; neither is silently right."""
    word = _RELATIVE_DAY.search(result.matched_text)
    if word is None or result.start_instant is None:
        return result
    speaker_today = reference.astimezone(session_tzinfo(speaker)).date()
    shift = speaker_today - anchor.local_now(reference).date()
    if not shift:
        return result
    speakers = _anchor_point(naive + shift, anchor, result)
    if speakers.start_instant is None or speakers.start_instant <= reference:
        return result  # the speaker's reading is gone by or does not exist: no choice
    said = word[0].lower()
    question = (
        f'By "{said}", do you mean {_clock(naive)} on {describe_day((naive + shift).date())} '
        f"in {anchor.label} ({said} where you are, in {speaker}) or {_clock(naive)} on "
        f"{describe_day(naive.date())} ({said} in {anchor.label})?"
    )
    candidates = (speakers.start_instant, result.start_instant)
    return replace(result, start_instant=None, needs_clarification=True,
                   clarification_question=question, candidates=candidates)  # fmt: skip


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
