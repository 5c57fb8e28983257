"""Find the time phrases in a free-form message (spec 000 §4.4), each parsed by
``parsing.parse_anchored_time``.

dateparser's ``search_dates`` finds most of them; the patterns here take in what it misses
(bare hours "at 9", lone "9am", "end of day", day words beside punctuation and their
texting abbreviations) and the cheap gate ``looks_timeish`` spares dateparser the
messages with no time-ish token at all. ``idioms.py`` drops the uses of ordinary chat
that name no time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from dateparser.search import search_dates

from middleware.actions.prefilter import fold, gate_text, needle_search
from middleware.clock.abbreviations import find_zone_names
from middleware.clock.idioms import names_no_time
from middleware.clock.mentions import PlaceZone, find_zone_mention, place_after_clock
from middleware.clock.parsing import ParseResult, parse_anchored_time
from middleware.clock.parts_of_day import PART_HOURS
from middleware.clock.small_hours import SMALL_HOURS_END
from middleware.clock.tense import sat_of_sitting, texting_saturdays, told_of_the_past
from middleware.clock.zones import session_tzinfo
from middleware.text_cache import MAX_CHARS

__all__ = ["TEXTING_DAYS", "find_time_expressions", "looks_timeish"]


_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
#: Texting abbreviations of day words ("cant tmrw", "u free thurs", "lmk by fri"), which
#: ``wallclock.py`` spells out. "mon", "wed", "sat" and "sun" are words or names first.
TEXTING_DAYS = r"(?:tmrw?|tmw|2moro|2morrow|thurs?|fri|weds|tues)"
# A day named alone, in full or texted ("tomorrow", "friday", "tmrw").
_DAY = rf"(?:today|tonight|tomorrow|yesterday|{_WEEKDAYS}|{TEXTING_DAYS})"
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
    r"|\bthis\s+(?:morning|afternoon|evening)\b|\blast\s+night\b"
    r"|\bsat\s+(?:morning|afternoon|evening|night)\b"
    rf"|\b{TEXTING_DAYS}\b"
    r"|\bend\s+of\s+(?:the\s+|this\s+|next\s+)?(?:(?:work|working|business)\s+)?week"
    r"|\bend\s+of\s+(?:the\s+|this\s+|next\s+)?month\b|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b"
    rf"|\b{_WEEKDAYS}\b|\b(?:next|this|last)\s+(?:week|month|year|weekend)\b"
    rf"|\bin\s+{_COUNT}\s*{_UNITS}|\b{_COUNT}\s*{_UNITS}s?\s+(?:ago|from\s+now)\b"
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
# A range of hours after "between" ("call me between 2 and 4 tomorrow"), which dateparser
# cuts short or reads as a whole day. Its hours are a time with am/pm or minutes on one of
# them, or a day word right beside it; "a number between 1 and 10", "between 2 and 4
# people" are counts.
_BETWEEN_HOURS = re.compile(
    r"\bbetween\s+(?:[01]?\d|2[0-3])(?P<first>(?::[0-5]\d)?\s*(?:[ap]\.?m\.?)?)\s+and\s+"
    r"(?:[01]?\d|2[0-3])(?P<last>(?::[0-5]\d)?(?:\s*[ap]\.?m\b\.?)?)(?![\w:./-])",
    re.I,
)
# A range of hours that ends with am/pm ("2-3pm", "from 2pm to 3:30pm", "10pm-1am"),
# which dateparser reads in part ("3:30pm tomorrow", "10pm" and "saturday" apart).
_CLOCK_RANGE = re.compile(
    r"(?<![\w:./-])(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*(?:[ap]\.?m\.?)?\s*(?:-|–|—|to|till|until)\s*"
    r"(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s*[ap]\.?m\b\.?",
    re.I,
)
_DAY_AFTER = re.compile(rf"\s*,?\s+(?:on\s+)?{_DAY}\b", re.I)
_DAY_BEFORE = re.compile(rf"\b{_DAY}\s*,?\s+$", re.I)
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
# "waited 2 hours yesterday", "worked 3 hours today": dateparser reads a duration before a
# day word as that long before the day's start (yesterday 22:00); the duration says how
# long, not when. Days and weeks stay: "a week tomorrow" is a date.
_DURATION_BEFORE_DAY = re.compile(
    rf"{_COUNT}\s*(?:sec(?:ond)?|min(?:ute)?|hour|hr)s?\s+"
    rf"(?=(?:today|tonight|tomorrow|yesterday|{_WEEKDAYS})\b)",
    re.I,
)
# "30th on the 21st": dateparser takes in an ordinal before a day of the month.
_ON_DAY_OF_MONTH = re.compile(
    r"\b(?:on|by|until|till|before|after|from)\s+the\s+\d{1,2}(?:st|nd|rd|th)\b", re.I
)
# Day words dateparser misses beside some punctuation ("yesterday: fixed the bug").
# ... and never finds their texting abbreviations ("cant tmrw sorry").
_DAY_WORD = re.compile(rf"\b(?:today|tonight|tomorrow|yesterday|{TEXTING_DAYS})\b", re.I)
# Today's parts of day and the night just gone, which dateparser misses ("I ran 5k this
# morning") or finds only a word of ("this" of "this morning's meeting").
_PART_OF_TODAY = re.compile(r"\b(?:this\s+(?:morning|afternoon|evening)|last\s+night)\b", re.I)
# A weekday with its part of day, which dateparser cuts short after a number ("I ran 5k
# Monday morning" gives "Monday" alone, a whole day a week off).
# The texting "sat" counts here, as it does before a clock time ("sat night?").
_WEEKDAY_PART = re.compile(rf"\b(?:{_WEEKDAYS}|sat)\s+(?:morning|afternoon|evening|night)\b", re.I)
# Half hours, which dateparser misses ("in half an hour", "half an hour from now") or cuts
# short ("in an hour" of "in an hour and a half"; nothing of "in 1.5 hours").
_HALF_HOURS = re.compile(
    r"\bin\s+(?:half\s+an?\s+hour|an?\s+hour\s+and\s+a\s+half|\d+\.\d+\s*h(?:ou)?rs?)\b"
    r"|\bhalf\s+an?\s+hour\s+(?:from\s+now|ago)\b",
    re.I,
)
# Days on from a day ("a week from tuesday"), of which dateparser finds only the day.
_DAYS_FROM = re.compile(
    rf"\b(?:an?|one|two|three|four|\d{{1,2}})\s+(?:days?|weeks?|fortnights?)\s+(?:from|after)\s+"
    rf"(?:today|tomorrow|{_WEEKDAYS})\b",
    re.I,
)
# A day alone: two of them side by side ("not tomorrow, friday") are two days, not one.
_DAY_ALONE = re.compile(rf"(?:on\s+)?{_DAY}", re.I)
# A day turned down right before it is said ("not tomorrow", "can't do friday"): no plan.
_TURNED_DOWN = re.compile(r"\b(?:not|can'?t\s+do|cannot\s+do|can'?t\s+make)\s+$", re.I)
_LEAD_IN = re.compile(r"(?:\b(?:at|by|around|about|until|till)\s+|@\s*)$", re.I)
# ... and a word that begins the rest of the sentence ("tomorrow about" + "the mortgage
# letter", "friday after the" + "standup"): a time phrase never ends on one.
_DANGLING = re.compile(
    r"(?:\s+(?:in|at|on|by|from|to|and|or|the|a|an|about|around|before|after|until|till))+\s*$",
    re.I,
)
# What may stand between a day and its clock time in one phrase: "friday at 3pm", "tomorrow
# around noon", "friday sometime around 3pm", "tmrw ~noon".
_JOINER = re.compile(
    r"^[\s,]*(?:at|on|from)?[\s,]*"
    r"(?:(?:sometime|around|about|approx(?:imately|\.)?|roughly|~)[\s,]*){0,2}$",
    re.I,
)


# Every alternative of ``_TIMEISH`` needs a digit or one of these (case-folded) fragments:
# "day" stands for today, yesterday, midday, the weekdays and "end of day", "week" for
# weekend, "noon" for afternoon, "morning", "evening" and "night" for the parts of day
# ("this morning", "last night"); "tmr", "tmw", "thur", "fri", "weds", "tues" for the
# texting abbreviations (a digit lets "2moro" through). ``_TIMEISH`` costs about half a
# microsecond per character (many alternatives, ignoring case); this test costs a few
# nanoseconds, and most messages fail it.
_TIME_FRAGMENTS = ("day", "tomorrow", "night", "noon", "morning", "evening", "eod", "tmr",
                   "tmw", "thur", "fri", "weds", "tues")  # fmt: skip
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
    speaker_tz: str | None = None,
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
    zone = session_tzinfo(tz) if tz else UTC
    speaker = speaker_tz or tz
    speaker_zone = session_tzinfo(speaker) if speaker else UTC
    # The night is under way from its evening hour to the end of the small hours.
    speaker_hour = reference_instant.astimezone(speaker_zone).hour
    night_begun = speaker_hour >= PART_HOURS["night"][0] or speaker_hour < SMALL_HOURS_END
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
        duration = _DURATION_BEFORE_DAY.match(found)
        if duration is not None:
            start += duration.end()
        inner = _ON_DAY_OF_MONTH.search(found)
        if inner is not None and inner.start() > 0:
            start += inner.start()
        sitting = sat_of_sitting(text, end - len(found))
        if sitting is not None:  # "I sat at 3pm", "we sat": no Saturday, an hour stays
            if sitting >= end:
                continue
            start = max(start, sitting)
        # "friday at 3pm in" + "Berlin", "friday at the" + "latest", "tomorrow about the"
        trimmed = _DANGLING.sub("", text[start:end])
        lead_in = _LEAD_IN.search(text, 0, start) if text[start].isdigit() else None
        found_spans.append((lead_in.start() if lead_in else start, start + len(trimmed)))
    found_spans = _with_ranges_of_hours(text, found_spans)
    found_spans.extend(_bare_clock_spans(text, found_spans))
    found_spans.extend(_end_of_spans(text, found_spans))
    found_spans.extend(_uncovered(_DAY_WORD, text, found_spans))
    found_spans.extend(_texting_saturday_spans(text, found_spans))
    found_spans = _with_parts_of_today(text, found_spans)
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found_spans):
        if (
            spans
            and _JOINER.match(text[spans[-1][1] : start])
            and not _two_days(text[slice(*spans[-1])], text[start:end])
        ):
            spans[-1] = (spans[-1][0], end)  # "friday" + " at " + "3pm"
        else:
            spans.append((start, end))

    def parse(start: int, end: int) -> ParseResult | None:
        phrase = text[start:end].strip(" ,")
        if not looks_timeish(phrase):
            return None
        past = told_of_the_past(text, start, end, night_begun=night_begun)
        waking = _WAKING_BEFORE.search(text, max(0, start - 40), start) is not None
        result = parse_anchored_time(
            phrase, tz, reference_instant, date_order=date_order, locale=locale,
            place_zone=place_zone, abbreviation_context=abbreviation_context, past=past,
            waking=waking, speaker_tz=speaker_tz,
        )  # fmt: skip
        return None if result.kind == "invalid" else result

    results: list[ParseResult] = []
    index = 0
    while index < len(spans):
        start, end = spans[index]
        index += 1
        # "it's friday!", "in a minute", "24/7", "Mon-Fri after 5pm"
        if names_no_time(text, start, end):
            continue
        if _DAY_ALONE.fullmatch(text[start:end]) and _TURNED_DOWN.search(text, 0, start):
            continue  # "not tomorrow, friday": only Friday is meant
        extended = _extend(text, end, place_zone)
        result = None
        if (
            extended > end
            and index < len(spans)
            and _JOINER.match(text[extended : spans[index][0]])
        ):
            # "9am Berlin time" + " " + "tomorrow": one phrase, read in the zone it names.
            result = parse(start, spans[index][1])
            index += result is not None
        result = result or parse(start, extended) or parse(start, end)
        if result is not None:
            results.append(result)
    return results


def _two_days(first: str, second: str) -> bool:
    """Are two phrases side by side each a day alone ("tomorrow, friday")?"""
    return bool(_DAY_ALONE.fullmatch(first.strip()) and _DAY_ALONE.fullmatch(second.strip()))


def _with_ranges_of_hours(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``taken`` with each range of hours put in whole: one that ends with am/pm ("from
    2pm to 3:30pm", "10pm-1am"), and one after "between" that is told as hours. What the
    spans it overlaps hold outside it is kept beside it ("2 and 4 tomorrow" of "between 2
    and 4 tomorrow" gives " tomorrow", which joins it again)."""
    spans = list(taken)
    for match in (*_BETWEEN_HOURS.finditer(text), *_CLOCK_RANGE.finditer(text)):
        start, end = match.span()
        if match.re is _BETWEEN_HOURS and not _told_as_hours(text, match):
            continue
        kept: list[tuple[int, int]] = []
        for first, last in spans:
            if last <= start or end <= first:
                kept.append((first, last))
                continue
            kept.extend(part for part in ((first, start), (end, last)) if part[0] < part[1])
        spans = [*kept, (start, end)]
    return spans


def _told_as_hours(text: str, between: re.Match[str]) -> bool:
    """Are the numbers of "between 2 and 4" hours: am/pm or minutes on one of them, or a
    day word right beside them ("a number between 1 and 10" is a count)?"""
    if (between["first"] + between["last"]).strip():
        return True
    start, end = between.span()
    return bool(_DAY_AFTER.match(text, end) or _DAY_BEFORE.search(text, 0, start))


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


def _texting_saturday_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The texting "sat" for Saturday ("Sat at 3?") outside the phrases dateparser found,
    which it leaves out; its clock time joins it."""
    return [
        (first, last)
        for first, last in texting_saturdays(text)
        if not any(start < last and first < end for start, end in taken)
    ]


def _end_of_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ends of days, weeks and months ("end of day", "EOD", "the end of the week") outside
    the phrases dateparser found, which it does not find."""
    return _uncovered(_END_OF, text, taken)


def _with_parts_of_today(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``taken`` with each "this morning" (afternoon, evening), "last night", weekday
    with its part of day ("Monday morning") and half hour ("in an hour and a half") that
    no span holds whole put in, in place of the spans inside it ("this" of "this
    morning's", "Monday" of "5k Monday morning", "in an hour" of "in an hour and a half")."""
    spans = list(taken)
    parts = (*_PART_OF_TODAY.finditer(text), *_WEEKDAY_PART.finditer(text))
    for match in (*parts, *_HALF_HOURS.finditer(text), *_DAYS_FROM.finditer(text)):
        start, end = match.span()
        if any(s <= start and end <= e for s, e in spans):
            continue
        spans = [(s, e) for s, e in spans if not (start <= s and e <= end)]
        spans.append((start, end))
    return spans


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
