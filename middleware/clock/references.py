"""Zones a chat message names explicitly (spec 000 §4.2 step 1).

Pure and cheap enough for every turn: precompiled patterns, each behind a substring
pre-check, and place names resolved through :mod:`middleware.clock.places`.

Recognised, in order of appearance:

* IANA ids as written (``Europe/Berlin``, ``Etc/GMT-9``).
* ``UTC``/``GMT`` alone (offset 0) or with an offset: ``UTC+9``, ``UTC-03:30``,
  ``GMT+5:45``, ``UTC+0530`` (from -12:00 to +14:00).
* The offset of an ISO 8601 timestamp: ``2026-11-22T09:00:00+09:00``, ``...Z``.
* "<place> time" ("Tokyo time", "New York time").
* "in <place>" right after a time cue ("what time is it in Tokyo", "3pm in London", "9am
  tomorrow in London") or right before a clock time ("the meeting in London at 3pm"); not
  where it only says where someone or something is ("my sister in Sydney calls me at
  8pm", "Kenji's in Tokyo, so 3pm for me…"). Right after a time cue it is one whatever
  words of place come between ("what time is it back in Berlin", "3pm over in Tokyo");
  otherwise not inside a self-location phrase ("I'm in Lisbon at 3pm"), which is a
  location.

Abbreviations (EST, IST) are never references: see ``middleware.clock.abbreviations``.

A zone that closes a fully written instant (a date and a clock time: a pasted log line's
"2026-11-20 14:02 UTC", a chat channel's rendering of a timestamp, any ISO 8601 timestamp)
is marked ``dates_instant``: it says when that instant was, not which zone the message's
other times or its writer are in.

A fixed offset is not an IANA zone. Whole hours map to the POSIX-style ``Etc/GMT`` ids,
whose sign is inverted (UTC+9 is ``Etc/GMT-9``); other offsets (+05:45) have no id, so
the reference keeps only the offset in minutes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from typing import Literal
from zoneinfo import available_timezones

from middleware.clock.places import (
    PlaceSpan,
    place_at,
    place_ending_at,
    self_location_spans,
)
from middleware.clock.zones import format_offset

__all__ = ["ZoneReference", "find_zone_references", "fixed_offset_zone", "format_offset"]


@dataclass(frozen=True, slots=True)
class ZoneReference:
    """A zone named explicitly in a message; ``text[start:end]`` is the reference.

    * ``kind="zone"``: an IANA id as written, or an unambiguous place ("Tokyo time",
      "in Tokyo"); ``zone`` is set.
    * ``kind="place"``: an ambiguous place ("Portland time"); ``zone`` is None and
      ``candidates`` lists the ids.
    * ``kind="offset"``: a fixed offset; ``offset_minutes`` is east of UTC and ``zone`` is
      :func:`fixed_offset_zone` of it (None unless a whole number of hours).

    ``name`` is the place's display name, or the reference as written.
    """

    start: int
    end: int
    kind: Literal["zone", "place", "offset"]
    zone: str | None
    name: str
    offset_minutes: int | None = None
    candidates: tuple[str, ...] = ()
    # The zone closes a written date and time ("2026-11-20 14:02 UTC"): it dates that
    # instant only.
    dates_instant: bool = False


def fixed_offset_zone(offset_minutes: int) -> str | None:
    """The IANA id for a fixed offset east of UTC: "UTC" for 0, ``Etc/GMT-9`` for +9:00.

    ``Etc/GMT`` ids invert the sign (``Etc/GMT-9`` is UTC+9) and exist only for whole
    hours from -12 to +14; anything else (+05:45) returns None.
    """
    hours, rest = divmod(offset_minutes, 60)
    if rest or not -12 <= hours <= 14:
        return None
    return "UTC" if hours == 0 else f"Etc/GMT{-hours:+d}"


_OFFSET = re.compile(
    r"(?<![\w/])(?:UTC|GMT)(?:\s*(?P<sign>[+\-−])\s*(?P<h>\d{1,2})(?:(?::|h)?(?P<m>\d{2}))?)?"
    r"(?![\w+\-−:])",
    re.IGNORECASE,
)
_ISO = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+\-]\d{2}(?::?\d{2})?)"
    r"(?![\w:])"
)
# A date with its year and a clock time, right before a zone: "2026-11-20 14:02",
# "20/11/2026 2:02pm", "Fri, 20 Nov 2026 14:02:11", "Nov 20, 2026 at 14:02".
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WRITTEN_DATE_TIME = re.compile(
    r"(?:\d{4}-\d{2}-\d{2}|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{4}"
    rf"|\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})"
    r"(?:T|,?\s+(?:at\s+)?)"
    r"\d{1,2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s*[ap]\.?m\.?)?|\s*[ap]\.?m\.?)\s*\Z",
    re.IGNORECASE,
)
# How far back a written date and time before a zone is looked for.
_DATE_TIME_REACH = 48
_IANA_ID = re.compile(r"(?<![\w/])[A-Z][A-Za-z]+(?:/[A-Za-z0-9_+\-]+){1,2}")
_TIME_WORD = re.compile(r"\btime\b", re.IGNORECASE)
_IN_WORD = re.compile(r"\bin\s+", re.IGNORECASE)
_TIME_CUE = re.compile(
    r"\b(?:time|clock|o['’]?clock|noon|midnight|date|what\s+day)\b"
    r"|\b\d{1,2}:[0-5]\d\b|\b\d{1,2}\s*[ap]\.?m\b",
    re.IGNORECASE,
)
# What may stand between a time cue and "in <place>": "what time is it in", "3pm
# tomorrow in", "noon on Friday in".
_CUE_TAIL = (
    r"(?:\s+(?:is\s+it|it\s+is|it|is|now|right\s+now|currently|today|tonight|tomorrow"
    r"|yesterday|this\s+(?:morning|afternoon|evening)|on\s+[a-z]+day"
    # "what time is it back in Berlin", "3pm over in Tokyo", "noon back home in Lisbon"
    r"|back|over|out|down|up|there|home))*"
)
_CUE_BEFORE_IN = re.compile(
    r"(?:\btime|\bclock|o['’]?clock|\bnoon|\bmidnight|\bdate|\bwhat\s+day"
    r"|\b\d{1,2}:[0-5]\d|\b\d{1,2}\s*[ap]\.?m\.?)" + _CUE_TAIL + r"\s*\Z",
    re.IGNORECASE,
)
# A clock time right after the place: "in London at 3pm", "in Tokyo it's 3am".
_CLOCK_AFTER_PLACE = re.compile(
    r"\s*,?\s*(?:(?:is\s+)?at\s+|it['’]?s\s+|it\s+is\s+)?"
    r"(?:\d{1,2}:[0-5]\d|\d{1,2}\s*[ap]\.?m\b|noon\b|midnight\b)",
    re.IGNORECASE,
)


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def _offset(start: int, end: int, minutes: int, written: str) -> ZoneReference:
    return ZoneReference(start, end, "offset", fixed_offset_zone(minutes), written, minutes)


def _offset_reference(match: re.Match[str]) -> ZoneReference | None:
    if match["sign"] is None:
        total = 0
    else:
        hours, minutes = int(match["h"]), int(match["m"] or 0)
        total = (hours * 60 + minutes) * (1 if match["sign"] == "+" else -1)
        if minutes >= 60 or not -12 * 60 <= total <= 14 * 60:
            return None
    found = _offset(match.start(), match.end(), total, match[0])
    before = match.string[max(0, match.start() - _DATE_TIME_REACH) : match.start()]
    if _WRITTEN_DATE_TIME.search(before) is not None:
        return replace(found, dates_instant=True)
    return found


def _iso_reference(match: re.Match[str]) -> ZoneReference | None:
    try:
        offset = datetime.fromisoformat(match[0].replace(",", ".")).utcoffset()
    except ValueError:  # "2026-13-45T99:00Z" looks like a timestamp but is not one
        return None
    if offset is None:
        return None
    minutes = int(offset.total_seconds()) // 60
    return replace(_offset(match.start(), match.end(), minutes, match[0]), dates_instant=True)


def _place_reference(start: int, end: int, found: PlaceSpan) -> ZoneReference:
    place = found.place
    if place.zone is not None:
        return ZoneReference(start, end, "zone", place.zone, place.canonical_name)
    return ZoneReference(
        start, end, "place", None, place.canonical_name, candidates=place.candidates
    )


def _asks_the_time_in(text: str, start: int) -> bool:
    """Is "in <place>" at ``start`` right after a time cue ("what time is it in", "3pm
    tomorrow in", "what time is it back in")? Then it says where that time is, even where
    the words between read as self-location ("back in Berlin")."""
    return _CUE_BEFORE_IN.search(text[max(0, start - 60) : start]) is not None


def _place_references(
    text: str, lowered: str, known_places: Mapping[str, str] | None
) -> list[ZoneReference]:
    refs: list[ZoneReference] = []
    if "time" in lowered:
        for match in _TIME_WORD.finditer(text):
            end = len(text[: match.start()].rstrip())
            found = place_ending_at(text, end, known_places=known_places)
            if found is not None and end < match.start():
                refs.append(_place_reference(found.start, match.end(), found))
    if " in " in f" {lowered}" and _TIME_CUE.search(text):
        self_spans: list[tuple[int, int]] | None = None
        for match in _IN_WORD.finditer(text):
            found = place_at(text, match.end(), known_places=known_places)
            if found is None:
                continue
            if not _asks_the_time_in(text, match.start()):
                # "in London at 3pm" says where the time is, but not inside "I'm in London
                # at 3pm", which says where the user will be.
                if _CLOCK_AFTER_PLACE.match(text, found.end) is None:
                    continue
                if self_spans is None:
                    self_spans = self_location_spans(text)
                if any(start <= match.start() < end for start, end in self_spans):
                    continue
            refs.append(_place_reference(match.start(), found.end, found))
    return refs


def find_zone_references(
    text: str, *, known_places: Mapping[str, str] | None = None
) -> list[ZoneReference]:
    """Zones ``text`` names explicitly, in order of appearance, overlaps removed.

    ``known_places`` is passed to :func:`middleware.clock.places.lookup_place` so names
    the caller knows for this user ("Springfield" → "America/Chicago") resolve.
    """
    refs: list[ZoneReference] = []
    lowered = text.casefold()
    if "utc" in lowered or "gmt" in lowered:
        refs.extend(r for r in map(_offset_reference, _OFFSET.finditer(text)) if r)
    if "-" in text and ":" in text:
        refs.extend(r for r in map(_iso_reference, _ISO.finditer(text)) if r)
    if "/" in text:
        refs.extend(
            ZoneReference(m.start(), m.end(), "zone", m[0], m[0])
            for m in _IANA_ID.finditer(text)
            if m[0] in _zones()
        )
    refs.extend(_place_references(text, lowered, known_places))
    refs.sort(key=lambda ref: (ref.start, -ref.end))
    unique: list[ZoneReference] = []
    for ref in refs:  # "in Tokyo time" is found by both place patterns: keep the first
        if not unique or ref.start >= unique[-1].end:
            unique.append(ref)
    return unique
