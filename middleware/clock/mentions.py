"""Explicit timezone mentions inside a time phrase (spec 000 §4.2 step 1).

Finds the one zone a phrase names, so the parser can anchor to it instead of the Session
TZ: a numeric offset (``UTC+9``, ``10:00+05:45``, ``09:00Z``), ``UTC``/``GMT``, an IANA
id (``Europe/Berlin``), a place (``Tokyo time``, ``3pm in Berlin``, ``9pm Tokyo``) or an
abbreviation (``PST``, ``IST``, from the one table in ``abbreviations.py``). Abbreviations
are reported, never resolved here: the caller resolves them from user context or asks
(§4.2 "MUST NOT be auto-mapped silently").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

from middleware.clock.abbreviations import ABBREVIATIONS, AFTER_TIME_ONLY, find_zone_names
from middleware.clock.places import is_place_zone_id, is_wordlike_place
from middleware.clock.zones import valid_zones

__all__ = [
    "PlaceZone",
    "ZoneMention",
    "find_zone_mention",
    "iana_place_zone",
    "place_after_clock",
]

#: Resolves a place name as typed ("Tokyo", "new york") to an IANA id; to its candidate
#: ids when the name is known but ambiguous ("Victoria"); or to None when it is unknown.
PlaceZone = Callable[[str], str | tuple[str, ...] | None]

# Abbreviations that are also words or initialisms count only when written in capitals.
_UPPERCASE_ONLY = AFTER_TIME_ONLY | frozenset({"WEST", "SGT"})


@dataclass(frozen=True)
class ZoneMention:
    """A zone named in a phrase; ``text[start:end]`` is the part to strip before parsing.

    Exactly one of ``zone`` (IANA id), ``offset`` (minutes east of UTC),
    ``abbreviation`` (an upper-cased abbreviation, possibly absent from
    ``ABBREVIATIONS``, or a key of ``ZONE_NAMES`` such as "Eastern Time") or
    ``candidates`` (kind ``"place"``: an ambiguous place, ``place`` as written) is set.
    """

    kind: Literal["zone", "offset", "abbreviation", "place"]
    start: int
    end: int
    zone: str | None = None
    offset: int | None = None
    abbreviation: str | None = None
    place: str | None = None
    candidates: tuple[str, ...] = ()


# Words that can follow "in" or precede "time" without being a place.
_NOT_PLACES = frozenset(
    "the a an my your our their his her local same this that next last time today tonight "
    "tomorrow yesterday morning afternoon evening night noon midnight day week month year "
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december an hour minutes hours "
    "advance total general case fact order short christmas easter".split()
)
# Zone ids whose last part is an everyday word: never matched as a bare place name.
_PLACE_STOPLIST = frozenset(
    "easter wake midway resolute troll casey davis palmer mawson vostok eucla creston christmas "
    "jersey north south west act lhi nsw".split()
)
# County-level ids ("America/Indiana/Petersburg", ".../North_Dakota/Center") are not what
# a bare place name means.
_SUB_AREAS = ("America/Indiana/", "America/Kentucky/", "America/North_Dakota/")
_PLACE_PREFERENCE = {"istanbul": "Europe/Istanbul", "nicosia": "Asia/Nicosia"}
_AREAS = ("Africa/", "America/", "Asia/", "Atlantic/", "Australia/", "Europe/", "Indian/",
          "Pacific/")  # fmt: skip


@cache
def _place_index() -> dict[str, str]:
    by_city: dict[str, list[str]] = {}
    for name in valid_zones():
        if name.startswith(_AREAS) and not name.startswith(_SUB_AREAS) and is_place_zone_id(name):
            city = name.rsplit("/", 1)[1].casefold()
            if city not in _PLACE_STOPLIST:
                by_city.setdefault(city, []).append(name)
    index: dict[str, str] = {}
    for city, names in by_city.items():
        # Duplicates are links to the same zone (Buenos_Aires); prefer the canonical name.
        index[city] = _PLACE_PREFERENCE.get(city) or max(names, key=len)
    return index


def iana_place_zone(name: str) -> str | None:
    """Fallback place resolver: the city part of an IANA id ("Tokyo", "new york",
    "Sao Paulo") -> that zone; ``"UTC"``/``"GMT"``/``"Z"`` -> ``"UTC"``. Else None."""
    key = re.sub(r"[\s-]+", "_", name.strip()).casefold()
    if key in {"utc", "gmt", "z", "zulu"}:
        return "UTC"
    return _place_index().get(key) or _place_index().get(key.replace("são", "sao"))


_ATTACHED_OFFSET = re.compile(r"(?<=\d:\d\d|\.\d\d\d)\s?(?P<sign>[+-])(?P<h>\d\d):?(?P<m>\d\d)\b")
_ATTACHED_Z = re.compile(r"(?<=\d)Z\b")
_NAMED_OFFSET = re.compile(
    r"\b(?:UTC|GMT)\s*(?P<sign>[+-])\s*(?P<h>\d{1,2})(?::?(?P<m>\d\d))?\b", re.I
)
_UTC_WORD = re.compile(r"\b(?:UTC|GMT)\b", re.I)
_IANA = re.compile(r"\b[A-Za-z]+(?:/[A-Za-z0-9_+-]+)+")
_IN_PLACE = re.compile(r"\bin\s+(?P<words>[^\W\d_][\w.'-]*(?:\s+[^\W\d_][\w.'-]*){0,2})", re.I)
_PLACE_TIME = re.compile(r"(?P<words>(?:[^\W\d_][\w.'-]*\s+){1,3})(?:local\s+)?time\b", re.I)
_WORD = re.compile(r"\b[A-Za-z]{2,5}\b")
# A clock time ("9pm", "9 p.m.", "14:30", "14h30") and the words right after it.
_CLOCK = re.compile(r"(?:\d\s*[ap]\.?m\b\.?|\b\d{1,2}[:h]\d\d)", re.I)
_CLOCK_AT_END = re.compile(rf"{_CLOCK.pattern}$", re.I)
_WORDS_AFTER = re.compile(r"[^\S\n]+(?P<words>[^\W\d_][\w'-]*(?:[^\S\n]+[^\W\d_][\w'-]*){0,2})")
# A capitalised word right after the place: it is part of a longer name ("London Bridge").
_LONGER_NAME = re.compile(r"[^\S\n]+[A-Z]")


def _offset(match: re.Match[str]) -> ZoneMention | None:
    hours, minutes = int(match["h"]), int(match["m"] or 0)
    if hours > 14 or minutes >= 60:
        return None
    total = (hours * 60 + minutes) * (-1 if match["sign"] == "-" else 1)
    return ZoneMention("offset", match.start(), match.end(), offset=total)


def _known_zones(answer: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """A resolver's answer as the valid zones it names (none when it knows nothing)."""
    zones = (answer,) if isinstance(answer, str) else answer or ()
    return tuple(zone for zone in zones if zone in valid_zones())


def _resolve_place(
    words: list[str], resolvers: list[PlaceZone]
) -> tuple[int, tuple[str, ...]] | None:
    """Longest leading run of ``words`` that a resolver knows, with the zones it means
    (one, or several for an ambiguous name). The first resolver that knows a name has
    the last word on it: an ambiguous answer is never settled by a later resolver.
    A place name that is also a word ("nice", "reunion") counts only capitalised."""
    for count in range(len(words), 0, -1):
        candidate = words[:count]
        if any(word.casefold() in _NOT_PLACES for word in candidate):
            continue
        name = " ".join(candidate)
        if is_wordlike_place(name) and not name[:1].isupper():
            continue
        for resolve in resolvers:
            zones = _known_zones(resolve(name))
            if zones:
                return count, zones
    return None


def _place_mention(start: int, end: int, name: str, zones: tuple[str, ...]) -> ZoneMention:
    if len(zones) == 1:
        return ZoneMention("zone", start, end, zone=zones[0])
    return ZoneMention("place", start, end, place=name, candidates=zones)


def _find_place(text: str, resolvers: list[PlaceZone]) -> ZoneMention | None:
    for match in _IN_PLACE.finditer(text):
        words = match["words"].split()
        found = _resolve_place(words, resolvers)
        if found:
            count, zones = found
            name = " ".join(words[:count])
            end = match.start("words") + len(name)
            return _place_mention(match.start(), end, name, zones)
    for match in _PLACE_TIME.finditer(text):
        words = match["words"].split()
        if words[-1].casefold() == "local":
            words.pop()
        for skip in range(len(words)):  # the place is the words nearest to "time"
            found = _resolve_place(words[skip:], resolvers)
            if found and found[0] == len(words) - skip:
                start = match.start() + match[0].index(words[skip])
                return _place_mention(start, match.end(), " ".join(words[skip:]), found[1])
    return None


def _resolvers(place_zone: PlaceZone | None) -> list[PlaceZone]:
    return [iana_place_zone] if place_zone is None else [place_zone, iana_place_zone]


def place_after_clock(
    text: str, at: int, place_zone: PlaceZone | None = None
) -> ZoneMention | None:
    """A place named right after the clock time that ends ``text[:at]``, as "Tokyo time"
    is without "time": "9pm Tokyo is 7am for me", "at 14:30 Berlin". Only a place with
    one zone counts ("5pm Victoria" may be a station: no question), and not one that
    starts a longer name ("3pm London Bridge", "3pm Central Park"). None otherwise."""
    if _CLOCK_AT_END.search(text, 0, at) is None:
        return None
    after = _WORDS_AFTER.match(text, at)
    if after is None:
        return None
    words = after["words"].split()
    found = _resolve_place(words, _resolvers(place_zone))
    if found is None or len(found[1]) != 1:
        return None
    count, (zone,) = found
    end = after.start("words")
    for word in words[:count]:
        end = text.index(word, end) + len(word)
    if _LONGER_NAME.match(text, end):
        return None
    return ZoneMention("zone", after.start("words"), end, zone=zone)


def find_zone_mention(text: str, place_zone: PlaceZone | None = None) -> ZoneMention | None:
    """The first explicit zone mention in ``text``, or None.

    Priority: numeric offsets, ``UTC``/``GMT``, IANA ids, spelled-out zone names
    ("Pacific time"), places (``place_zone`` first, then ``iana_place_zone``; an
    ambiguous place is a ``"place"`` mention with its candidates), abbreviations.
    ``place_zone`` results that are not valid IANA ids are ignored.
    """
    for pattern in (_ATTACHED_OFFSET, _NAMED_OFFSET):
        for match in pattern.finditer(text):
            # "10:00-11:00" is a range, not an offset: a minus counts only in ISO form.
            iso_form = re.search(r"T\d\d:\d\d(?::\d\d(?:\.\d+)?)?\s?$", text[: match.start()])
            if pattern is _ATTACHED_OFFSET and match["sign"] == "-" and not iso_form:
                continue
            mention = _offset(match)
            if mention:
                return mention
    for pattern in (_ATTACHED_Z, _UTC_WORD):
        utc = pattern.search(text)
        if utc:
            return ZoneMention("zone", utc.start(), utc.end(), zone="UTC")
    for match in _IANA.finditer(text):
        if match[0] in valid_zones():
            return ZoneMention("zone", match.start(), match.end(), zone=match[0])
    for start, end, name in find_zone_names(text)[:1]:
        return ZoneMention("abbreviation", start, end, abbreviation=name)
    place = _find_place(text, _resolvers(place_zone))
    if place:
        return place
    for clock in _CLOCK.finditer(text):
        after_clock = place_after_clock(text, clock.end(), place_zone)
        if after_clock:
            return after_clock
    for match in _WORD.finditer(text):
        abbr = match[0].upper()
        if abbr in ABBREVIATIONS and (abbr not in _UPPERCASE_ONLY or match[0] == abbr):
            return ZoneMention("abbreviation", match.start(), match.end(), abbreviation=abbr)
    return None
