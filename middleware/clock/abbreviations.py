"""Timezone abbreviations: found, resolved from the user's known zones, or asked about.

Spec 000 §4.2: abbreviations (EST/CST/PST) MUST NOT be auto-mapped silently; they MUST be
resolved via known user context or asked about. Their spelled-out names ("Eastern time",
"Central European Summer Time", :data:`ZONE_NAMES`) are the same shorthand and take the
same path: every function here accepts such a name wherever it takes an abbreviation.
So nothing here maps an abbreviation on its own, not even one with a single usual
meaning (EST): :func:`resolve_abbreviation` answers only from the zones the caller already
knows for the user (thread override, profile default), and :func:`clarification_for`
words the question otherwise.

``UTC`` and ``GMT`` are not abbreviations in this sense (they name one offset) and are
handled as explicit references by ``middleware.clock.references``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from types import MappingProxyType
from zoneinfo import ZoneInfo, available_timezones

__all__ = [
    "ABBREVIATIONS",
    "AFTER_TIME_ONLY",
    "ZONE_NAMES",
    "Meaning",
    "candidates_for",
    "clarification_for",
    "find_abbreviations",
    "find_zone_names",
    "resolve_abbreviation",
    "stated_offset",
]


@dataclass(frozen=True, slots=True)
class Meaning:
    """One thing an abbreviation is used for: a representative zone and a label."""

    zone: str
    label: str


def _table(rows: str, separator: str | None = None) -> Mapping[str, tuple[Meaning, ...]]:
    table: dict[str, tuple[Meaning, ...]] = {}
    for row in rows.strip().splitlines():
        keys, _, meanings = row.partition(" = ")
        parsed = tuple(
            Meaning(*part.strip().split(" ", 1)) for part in meanings.split(";") if part.strip()
        )
        for key in keys.split(separator):
            table[key.strip()] = parsed
    return MappingProxyType(table)


# "ABBR [ABBR...] = zone label; zone label": usual meanings, most common first.
ABBREVIATIONS: Mapping[str, tuple[Meaning, ...]] = _table(
    """
EST EDT ET = America/New_York US Eastern
CST = America/Chicago US Central; Asia/Shanghai China; America/Havana Cuba
CDT = America/Chicago US Central; America/Havana Cuba
CT = America/Chicago US Central
MST = America/Denver US Mountain; America/Phoenix Arizona
MDT MT = America/Denver US Mountain
PST = America/Los_Angeles US Pacific; Asia/Manila the Philippines
PDT PT = America/Los_Angeles US Pacific
AKST AKDT = America/Anchorage Alaska
HST = Pacific/Honolulu Hawaii
AST = America/Halifax Atlantic Canada; America/Puerto_Rico the Caribbean; Asia/Riyadh Arabia
ADT = America/Halifax Atlantic Canada
NST NDT = America/St_Johns Newfoundland
IST = Asia/Kolkata India; Asia/Jerusalem Israel; Europe/Dublin Ireland
IDT = Asia/Jerusalem Israel
BST = Europe/London the UK; Asia/Dhaka Bangladesh
WET WEST = Europe/Lisbon Western Europe
CET CEST = Europe/Berlin Central Europe
EET EEST = Europe/Athens Eastern Europe
MSK = Europe/Moscow Moscow
TRT = Europe/Istanbul Turkey
GST = Asia/Dubai the Gulf; Atlantic/South_Georgia South Georgia
PKT = Asia/Karachi Pakistan
NPT = Asia/Kathmandu Nepal
ICT = Asia/Bangkok Indochina
WIB = Asia/Jakarta Western Indonesia
SGT = Asia/Singapore Singapore
MYT = Asia/Kuala_Lumpur Malaysia
PHT = Asia/Manila the Philippines
HKT = Asia/Hong_Kong Hong Kong
JST = Asia/Tokyo Japan
KST = Asia/Seoul Korea
AEST = Australia/Sydney Eastern Australia; Australia/Brisbane Queensland
AEDT = Australia/Sydney Eastern Australia
ACST = Australia/Adelaide South Australia; Australia/Darwin the Northern Territory
ACDT = Australia/Adelaide South Australia
AWST = Australia/Perth Western Australia
NZST NZDT = Pacific/Auckland New Zealand
LHST LHDT = Australia/Lord_Howe Lord Howe Island
CHAST CHADT = Pacific/Chatham the Chatham Islands
SAST = Africa/Johannesburg South Africa
WAT = Africa/Lagos West Africa
CAT = Africa/Maputo Central Africa
EAT = Africa/Nairobi East Africa
ART = America/Argentina/Buenos_Aires Argentina
BRT = America/Sao_Paulo Brasília
CLT = America/Santiago Chile
COT = America/Bogota Colombia
PET = America/Lima Peru
SST = Pacific/Pago_Pago Samoa; Asia/Singapore Singapore
AMT = America/Manaus the Amazon; Asia/Yerevan Armenia
IRST = Asia/Tehran Iran
AFT = Asia/Kabul Afghanistan
"""
)

# "Name Time, ... = zone label; ...": spelled-out names (a backslash continues a row).
# "Central Standard Time" is the US one: China's is "China Standard Time".
ZONE_NAMES: Mapping[str, tuple[Meaning, ...]] = _table(
    """
Eastern Time, US Eastern Time, Eastern Standard Time, Eastern Daylight Time = \
America/New_York US Eastern
Central Time, US Central Time, Central Standard Time, Central Daylight Time = \
America/Chicago US Central
Mountain Time, US Mountain Time, Mountain Daylight Time = America/Denver US Mountain
Mountain Standard Time = America/Denver US Mountain; America/Phoenix Arizona
Pacific Time, US Pacific Time, Pacific Standard Time, Pacific Daylight Time = \
America/Los_Angeles US Pacific
Alaska Time, Alaska Standard Time, Alaska Daylight Time = America/Anchorage Alaska
Hawaii Time, Hawaii Standard Time, Hawaii-Aleutian Time = Pacific/Honolulu Hawaii
Atlantic Time, Atlantic Standard Time, Atlantic Daylight Time = \
America/Halifax Atlantic Canada; America/Puerto_Rico the Caribbean
Newfoundland Time, Newfoundland Standard Time = America/St_Johns Newfoundland
Central European Time, Central European Standard Time, Central European Summer Time = \
Europe/Berlin Central Europe
Eastern European Time, Eastern European Standard Time, Eastern European Summer Time = \
Europe/Athens Eastern Europe
Western European Time, Western European Summer Time = Europe/Lisbon Western Europe
British Summer Time = Europe/London the UK
Australian Eastern Time, Australian Eastern Standard Time, Australian Eastern Daylight Time = \
Australia/Sydney Eastern Australia; Australia/Brisbane Queensland
Australian Central Time, Australian Central Standard Time = \
Australia/Adelaide South Australia; Australia/Darwin the Northern Territory
Australian Western Time, Australian Western Standard Time = Australia/Perth Western Australia
""",
    ",",
)

# Abbreviations that are also words or initialisms ("my CAT", "PT session", "GST" the
# tax) count only right after a clock time ("3pm PT", "15:00 CAT").
AFTER_TIME_ONLY = frozenset("ET CT MT PT CAT EAT WAT ART PET COT AFT AMT GST SST ICT".split())
_WORD = r"(?<![\w/])({})(?![\w/])"
_ANYWHERE = re.compile(
    _WORD.format("|".join(sorted(set(ABBREVIATIONS) - AFTER_TIME_ONLY, key=len, reverse=True)))
)
_AFTER_TIME = re.compile(
    r"\b\d{1,2}(?::[0-5]\d\s*(?:[ap]\.?m\.?)?|\s*[ap]\.?m\.?)\s*"
    + _WORD.format("|".join(sorted(AFTER_TIME_ONLY, key=len, reverse=True))),
    re.IGNORECASE,
)
_CAPITALS = re.compile(r"[A-Z]{2}")
_NAME_KEYS = {name.casefold(): name for name in ZONE_NAMES}
_ZONE_NAME = re.compile(
    r"(?<![\w/-])(?:"
    + "|".join(
        r"\s+".join(map(re.escape, name.split()))
        for name in sorted(ZONE_NAMES, key=len, reverse=True)
    )
    + r")\b",
    re.IGNORECASE,
)
_CLOCK_BEFORE = re.compile(r"\d{1,2}(?::[0-5]\d)?\s*(?:[ap]\.?m\.?)?\s*$", re.IGNORECASE)


# "9am Pacific", "5pm eastern": a US region right after a clock time is its zone's name
# without "time". Central and Mountain count capitalised only ("5pm mountain hike"), and
# none of them before a capitalised word: "3pm Central Park" is a place.
_REGION_AFTER_TIME = re.compile(
    r"\b\d{1,2}(?::[0-5]\d)?\s*(?:[ap]\.?m\.?)?\s*"
    r"((?i:pacific|eastern)|Central|Mountain)\b(?!\s+(?i:time\b)|\s+[A-Z])"
)
# What every match above starts with: a text without a digit (most messages) is not
# scanned at all.
_DIGIT = re.compile(r"\d")


def find_zone_names(text: str) -> list[tuple[int, int, str]]:
    """Spelled-out zone names in ``text`` as (start, end, key in :data:`ZONE_NAMES`).

    A name counts when its first word is capitalised ("Eastern time") or when it follows
    a clock time ("9am eastern time"): "a mountain time-out" is not a zone. A US region
    right after a clock time counts as its zone's name ("9am Pacific": "Pacific Time").
    """
    found: list[tuple[int, int, str]] = []
    if _DIGIT.search(text):
        found = [
            (match.start(1), match.end(1), f"{match[1].capitalize()} Time")
            for match in _REGION_AFTER_TIME.finditer(text)
        ]
    if "ime" not in text and "IME" not in text:
        return found
    for match in _ZONE_NAME.finditer(text):
        start = match.start()
        if match[0][0].isupper() or _CLOCK_BEFORE.search(text, max(0, start - 16), start):
            key = _NAME_KEYS[" ".join(match[0].split()).casefold()]
            found.append((start, match.end(), key))
    return sorted(found)


def find_abbreviations(text: str) -> list[str]:
    """Abbreviations from :data:`ABBREVIATIONS` and names from :data:`ZONE_NAMES` in
    ``text``, each once, in order.

    Matching is case-sensitive and by whole word, so "est" and "Ist" are words, not
    zones; the word-like ones (``AFTER_TIME_ONLY``) count only after a clock time. Names
    follow :func:`find_zone_names`.
    """
    found = [(start, name) for start, _, name in find_zone_names(text)]
    if _CAPITALS.search(text):
        found += [(m.start(1), m[1]) for m in _ANYWHERE.finditer(text)]
        found += [(m.start(1), m[1]) for m in _AFTER_TIME.finditer(text) if m[1].isupper()]
    return list(dict.fromkeys(abbr for _, abbr in sorted(found)))


def _meanings(abbr: str) -> tuple[Meaning, ...]:
    return ABBREVIATIONS.get(abbr) or ZONE_NAMES.get(abbr, ())


def candidates_for(abbr: str) -> tuple[str, ...]:
    """The representative zones ``abbr`` is used for, most common first; () if unknown."""
    return tuple(meaning.zone for meaning in _meanings(abbr))


@cache
def _valid_zones() -> frozenset[str]:
    return frozenset(available_timezones())


@cache
def _signature(zone: str, year: int) -> tuple[tuple[str | None, float], ...]:
    """(abbreviation, UTC offset) in mid-January and mid-July of ``year``: two zones with
    equal signatures keep the same clock that year (America/Toronto ~ America/New_York)."""
    tz = ZoneInfo(zone)
    signature: list[tuple[str | None, float]] = []
    for month in (1, 7):
        local = datetime(year, month, 15, 12, tzinfo=UTC).astimezone(tz)
        offset = local.utcoffset()
        signature.append((local.tzname(), offset.total_seconds() if offset else 0.0))
    return tuple(signature)


# Used when the caller passes no instant: abbreviations name rules, not instants, and the
# rules for these zones are stable from year to year.
_REFERENCE_YEAR = 2025


def resolve_abbreviation(
    abbr: str, context_zones: Iterable[str | None], *, at: datetime | None = None
) -> str | None:
    """The zone ``abbr`` means for this user, or None: then ask (:func:`clarification_for`).

    ``context_zones`` are the user's known zones, highest precedence first (thread
    override, then profile default); None and invalid ids are skipped. A known zone
    matches a meaning of ``abbr`` when it is that meaning's zone or keeps the same clock
    (abbreviation and offset in January and July of ``at``'s year, 2025 without ``at``):
    a user in America/Toronto writing "EST" gets America/Toronto, one in Asia/Taipei
    writing "CST" gets Asia/Taipei. Failing that, a known zone whose own tz database
    abbreviation is ``abbr`` is a meaning of its own (America/Mexico_City calls itself
    "CST" all year, unlike America/Chicago). The result is the first known zone that
    matches, and only if exactly one meaning is matched: a user known in both
    Asia/Kolkata and Europe/Dublin who writes "IST" is asked.
    """
    meanings = _meanings(abbr)
    year = at.year if at is not None else _REFERENCE_YEAR
    matched: dict[str, str] = {}  # meaning -> first context zone matching it
    for zone in context_zones:
        if zone is None or zone not in _valid_zones():
            continue
        signature = _signature(zone, year)
        same = [m.zone for m in meanings if zone == m.zone or signature == _signature(m.zone, year)]
        if not same and any(name == abbr for name, _ in signature):
            same = [zone]
        for meaning in same:
            matched.setdefault(meaning, zone)
    if len(matched) != 1:
        return None
    return next(iter(matched.values()))


def stated_offset(abbr: str, zone: str, at: datetime) -> int | None:
    """The UTC offset (minutes) ``abbr`` states when ``zone`` is not on it at ``at``.

    A season's abbreviation names an offset: "CEST" is Europe/Berlin's summer time,
    UTC+02:00. When ``zone`` calls one of its seasons ``abbr`` but is on another at
    ``at`` ("15:00 CEST" in November), that season's offset is returned, as the writer
    may mean either. None when the zone is on ``abbr`` at ``at`` or never uses it (a
    generic "ET", or a zone resolved from a name).
    """
    if zone not in _valid_zones():
        return None
    if datetime.fromtimestamp(at.timestamp(), ZoneInfo(zone)).tzname() == abbr:
        return None
    stated = [int(offset // 60) for name, offset in _signature(zone, at.year) if name == abbr]
    return stated[0] if stated else None


def _option(meaning: Meaning) -> str:
    label = meaning.label.removeprefix("the ")
    return f"{label[:1].upper()}{label[1:]} ({meaning.zone})"


def clarification_for(abbr: str) -> str:
    """The question to ask when ``abbr`` cannot be resolved from the user's zones.

    "Which timezone do you mean by IST — India (Asia/Kolkata), Israel (Asia/Jerusalem) or
    Ireland (Europe/Dublin)?"
    """
    meanings = _meanings(abbr)
    if not meanings:
        return f"Which timezone do you mean by {abbr}? A city or a zone like Europe/Berlin helps."
    if len(meanings) == 1:
        meaning = meanings[0]
        return (
            f"By {abbr}, do you mean {meaning.label} time ({meaning.zone})? "
            "If not, which city or timezone?"
        )
    options = [_option(meaning) for meaning in meanings]
    return f"Which timezone do you mean by {abbr} — {', '.join(options[:-1])} or {options[-1]}?"
