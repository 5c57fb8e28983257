"""Place names → IANA zones, and where a message says the user is (spec 000 §4.2 step 4).

Pure: no store, no network. The index is built once from data already on disk (tzdata
via ``zoneinfo``, CLDR via babel) and cached; every lookup is a dict hit.
:func:`lookup_place` resolves one name; :func:`find_place_mentions` finds where the user
*says they are* ("I'm in Lisbon this week", "I live in Berlin"). Zones a message names
explicitly ("Tokyo time") are ``middleware.clock.references``'s job, via :func:`place_at`
and :func:`place_ending_at`.

The index, strictest first:

* The city part of every geographic tz id ("America/Los_Angeles" → "los angeles") and
  CLDR's English exemplar city ("Kolkata", "Ho Chi Minh City"); renamed ids stay as
  aliases ("Calcutta", "Saigon", "Kiev", via babel's ``zone_aliases``). Cities are read
  from ``Locale("en").time_zones`` because ``get_timezone_location(return_city=True)``
  looks CLDR data up under the renamed id and returns "Ho Chi Minh" for Asia/Saigon.
* Countries with exactly one zone in CLDR ``territory_zones`` ("Japan" → Asia/Tokyo).
  A country with several ("Portugal": Lisbon, Madeira, Azores; "Germany": Berlin,
  Busingen) yields all of them as candidates and no zone. US states are out of scope.
* ``_CURATED``: well-known cities that are not zone cities ("San Francisco", "Munich"),
  country names CLDR spells differently ("UK", "USA"), and names shared by well-known
  places in different zones ("Portland", "Springfield", "San Jose", "Georgia").

A name is unambiguous only when all its candidates are the *same* IANA id: two ids that
share today's rules are still two candidates, because the id is what gets stored and
shown. Minor namesakes of famous cities (Paris, Texas) are not recorded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal
from zoneinfo import available_timezones

from babel import Locale
from babel.core import get_global

from middleware.clock.zones import is_valid_zone

__all__ = [
    "PlaceMatch",
    "PlaceMention",
    "PlaceSpan",
    "find_place_mentions",
    "is_place_zone_id",
    "is_wordlike_place",
    "lookup_place",
    "normalize_place",
    "place_at",
    "place_ending_at",
    "place_question",
    "self_location_spans",
]

_AREAS = frozenset(
    "Africa America Antarctica Arctic Asia Atlantic Australia Europe Indian Pacific".split()
)
# Legacy ids named after a region or direction ("Australia/North"), or whose name now
# means something else ("Pacific/Samoa" is American Samoa; Samoa is Pacific/Apia).
_NOT_PLACE_IDS = frozenset(
    f"Australia/{part}" for part in "ACT NSW LHI North South West Victoria".split()
) | {"Antarctica/South_Pole", "America/Knox_IN", "America/Virgin", "Pacific/Samoa"}
# Under these, the last part is a small town ("Center", "Knox"); only CLDR's qualified
# city ("Knox, Indiana") is indexed.
_QUALIFIED_AREAS = ("America/Indiana/", "America/Kentucky/", "America/North_Dakota/")

# "names, ... = zone [zone ...]; ...": several zones make every name there ambiguous.
# Names shared with an indexed zone city or country are merged with it.
_CURATED = """
San Francisco, SF, Oakland, San Diego, Sacramento, Las Vegas, Seattle = America/Los_Angeles
Portland Oregon, Silicon Valley, Palo Alto, Hollywood = America/Los_Angeles
Boston, Washington DC, DC, Miami, Atlanta, Philadelphia, Pittsburgh, Baltimore = America/New_York
Orlando, Tampa, Charlotte, Cleveland, Brooklyn, Manhattan, NYC, New York City = America/New_York
Portland Maine = America/New_York; Ottawa, Quebec City = America/Toronto
Dallas, Houston, Austin, San Antonio, Minneapolis, St Louis, Kansas City = America/Chicago
New Orleans, Nashville, Milwaukee = America/Chicago; Calgary = America/Edmonton
Salt Lake City, Albuquerque = America/Denver; Guadalajara = America/Mexico_City
Munich, Frankfurt, Hamburg, Cologne, Stuttgart, Dusseldorf = Europe/Berlin
Barcelona, Seville, Valencia Spain, Bilbao, Malaga = Europe/Madrid; Porto = Europe/Lisbon
Milan, Florence, Venice, Naples, Turin = Europe/Rome
Lyon, Marseille, Nice, Toulouse, Bordeaux = Europe/Paris
Manchester, Edinburgh, Glasgow, Liverpool, Oxford, Bristol, Leeds, UK = Europe/London
Great Britain, Britain, England, Scotland, Wales, Northern Ireland = Europe/London
Rotterdam, The Hague, Holland = Europe/Amsterdam; Antwerp, Ghent = Europe/Brussels
Geneva, Basel = Europe/Zurich; Krakow, Gdansk = Europe/Warsaw; Salzburg = Europe/Vienna
Gothenburg, Malmo = Europe/Stockholm; Czech Republic = Europe/Prague
Turkey, Ankara = Europe/Istanbul; Osaka, Kyoto, Yokohama = Asia/Tokyo; Busan = Asia/Seoul
Mumbai, Bombay, Delhi, New Delhi, Bangalore, Bengaluru, Chennai, Madras, Pune = Asia/Kolkata
Beijing, Peking, Shenzhen, Guangzhou = Asia/Shanghai; Hanoi, Saigon = Asia/Ho_Chi_Minh
Abu Dhabi, UAE = Asia/Dubai; Tel Aviv = Asia/Jerusalem; Lahore, Islamabad = Asia/Karachi
Bali = Asia/Makassar; Burma = Asia/Yangon; Gold Coast = Australia/Brisbane
Wellington, Christchurch = Pacific/Auckland; Rio de Janeiro, Rio, Brasilia = America/Sao_Paulo
Medellin = America/Bogota; Quito = America/Guayaquil; Marrakech = Africa/Casablanca
Cape Town, Durban, Pretoria = Africa/Johannesburg; Abuja = Africa/Lagos
Ivory Coast = Africa/Abidjan
Portland = America/Los_Angeles America/New_York; Columbus = America/New_York America/Chicago
Springfield = America/Chicago America/New_York; Georgia = Asia/Tbilisi America/New_York
San Jose = America/Los_Angeles America/Costa_Rica
Washington = America/New_York America/Los_Angeles
Birmingham = Europe/London America/Chicago; Cambridge = Europe/London America/New_York
Hyderabad = Asia/Kolkata Asia/Karachi; Kingston = America/Jamaica America/Toronto
Victoria = America/Vancouver Australia/Melbourne Indian/Mahe
Congo = Africa/Kinshasa Africa/Brazzaville; Korea = Asia/Seoul Asia/Pyongyang
USA, US, United States of America, America = @US
"""
# Longer names whose last word is an indexed name; they stop "Wales" or "Jersey" matching
# inside them and resolve to nothing.
_BLOCKING = ("New Jersey", "New South Wales", "New Mexico", "New England", "Western Australia")
# Index keys that are everyday words: a place only when written capitalised, and never in
# "<name> time" ("Christmas time" is not Indian/Christmas).
_WORDLIKE = frozenset(
    "christmas easter reunion wake midway chad turkey jersey nice man stanley regina casey "
    "davis palmer troll yap phoenix jordan guinea norfolk mayotte victoria georgia america "
    "us".split()
)
_MAX_WORDS = 6


@dataclass(frozen=True, slots=True)
class PlaceMatch:
    """What one place name means.

    ``candidates`` are distinct IANA ids in source order (the curated list puts the
    best-known first; countries follow CLDR); empty when the name is unknown. ``zone``
    is set only when there is exactly one candidate.
    ``canonical_name`` is the display name ("Kolkata" for "calcutta"), or the query
    stripped when unknown.
    """

    query: str
    canonical_name: str
    candidates: tuple[str, ...]

    @property
    def zone(self) -> str | None:
        return self.candidates[0] if len(self.candidates) == 1 else None

    @property
    def found(self) -> bool:
        return bool(self.candidates)

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


@dataclass(frozen=True, slots=True)
class PlaceSpan:
    """A place name found in a text; ``text[start:end]`` is the name as written."""

    start: int
    end: int
    place: PlaceMatch


@dataclass(frozen=True, slots=True)
class PlaceMention:
    """A place the user says they are in; ``text[start:end]`` is the place as written.

    ``kind`` is ``"home"`` for residence ("I live in", "based in", "moved to") and
    ``"current"`` for where they are now ("I'm in", "here in", "landed in").
    """

    start: int
    end: int
    kind: Literal["current", "home"]
    place: PlaceMatch

    @property
    def zone(self) -> str | None:
        return self.place.zone


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    zones: tuple[str, ...]


_PUNCT_DROP = re.compile(r"[.'’`]|\s*\(.*?\)")
_PUNCT_SPACE = re.compile(r"[_\-,/]+")


def normalize_place(name: str) -> str:
    """Index key for ``name``: accents folded, case folded, ``_``/``-``/punctuation to
    spaces, "&" to "and", "saint" to "st", a leading "the" dropped ("São Paulo",
    "sao_paulo" and "SAO PAULO" → "sao paulo")."""
    return _key(_fold(name))


def _fold(name: str) -> list[str]:
    text = name
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _PUNCT_DROP.sub("", text.casefold().replace("&", " and "))
    return ["st" if word == "saint" else word for word in _PUNCT_SPACE.sub(" ", text).split()]


def _key(words: list[str]) -> str:
    return " ".join(words[1:] if words[:1] == ["the"] else words)


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


@cache
def _index() -> dict[str, _Entry]:
    zones = _zones()
    aliases: Mapping[str, str] = get_global("zone_aliases")
    locale = Locale("en")

    def canonical(zone: str) -> str:
        target = str(aliases.get(zone, zone))
        return target if target in zones else zone

    # CLDR keys its data by its own ids, some of them renamed in tzdata since (CLDR
    # "Asia/Calcutta" is tzdata "Asia/Kolkata"): such an old id shows the current name,
    # while an id merged into another city's zone keeps its own ("Montreal").
    cldr_by_id = {
        str(zone): str(info["city"]) for zone, info in locale.time_zones.items() if "city" in info
    }
    cldr_city = {canonical(zone): city for zone, city in cldr_by_id.items()}

    def display(zone: str) -> str:
        if zone in cldr_by_id:
            return cldr_by_id[zone]
        if zone == canonical(zone) and zone in cldr_city:
            return cldr_city[zone]
        return zone.rsplit("/", 1)[-1].replace("_", " ")

    merged: dict[str, tuple[str, dict[str, None]]] = {}

    def add(name: str, shown: str, ids: Iterable[str]) -> None:
        key = normalize_place(name)
        if key:
            merged.setdefault(key, (shown, {}))[1].update(dict.fromkeys(ids))

    for zone in sorted(zones):
        if not is_place_zone_id(zone):
            continue
        target = canonical(zone)
        if not zone.startswith(_QUALIFIED_AREAS):
            add(zone.rsplit("/", 1)[-1], display(zone), [target])
        if target in cldr_city:
            add(cldr_city[target], cldr_city[target], [target])

    territories: Mapping[str, list[str]] = get_global("territory_zones")
    country_zones: dict[str, list[str]] = {}
    for code, ids in territories.items():
        name = locale.territories.get(code)
        if name and code not in ("001", "ZZ"):
            country_zones[code] = [canonical(str(z)) for z in ids]
            add(str(name), str(name), country_zones[code])

    for entry in _CURATED.replace("\n", ";").split(";"):
        names, _, targets = entry.strip().partition(" = ")
        if not names:
            continue
        ids = country_zones["US"] if targets == "@US" else targets.split()
        for name in names.split(", "):
            add(name, name, ids)

    index = {key: _Entry(shown, tuple(ids)) for key, (shown, ids) in merged.items()}
    for name in _BLOCKING:
        index[normalize_place(name)] = _Entry(name, ())
    return index


def _extra_index(known_places: Mapping[str, str] | None) -> dict[str, _Entry]:
    if not known_places:
        return {}
    return {
        normalize_place(name): _Entry(name.strip(), (zone,))
        for name, zone in known_places.items()
        if is_valid_zone(zone)
    }


def _entry(key: str, extra: Mapping[str, _Entry]) -> _Entry | None:
    return extra.get(key) or _index().get(key)


@cache
def _word_limits() -> tuple[dict[str, int], dict[str, int]]:
    """For each first (last) word of a key, the most words a key starting (ending) with
    it has: most runs of words are rejected on one word, without building longer keys."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for key in _index():
        words = key.split()
        first[words[0]] = max(first.get(words[0], 0), len(words))
        last[words[-1]] = max(last.get(words[-1], 0), len(words))
    return first, last


def is_place_zone_id(zone: str) -> bool:
    """Does the last part of ``zone`` name the place it is for? False for legacy region
    ids ("Australia/Victoria" is not the city of Victoria) and non-geographic ids."""
    return zone.split("/", 1)[0] in _AREAS and zone not in _NOT_PLACE_IDS


def is_wordlike_place(name: str) -> bool:
    """Is ``name`` a place name that is also an everyday word ("nice", "reunion")? Such a
    name means the place only when written capitalised."""
    return normalize_place(name) in _WORDLIKE


def place_question(name: str, candidates: tuple[str, ...]) -> str:
    """The question to ask about an ambiguous place name with these candidate zones."""
    if len(candidates) <= 4:
        options = ", ".join(candidates[:-1]) + f" or {candidates[-1]}"
        return f"Which {name} do you mean — {options}?"
    return f"{name} spans {len(candidates)} timezones; which city or timezone do you mean?"


def lookup_place(name: str, *, known_places: Mapping[str, str] | None = None) -> PlaceMatch:
    """Resolve one place name (a city, a zone city, a country, an IANA id).

    ``known_places`` maps names the caller already knows for this user to IANA ids (e.g.
    "Springfield" → "America/Chicago" from memory); they win over the global index and
    make an otherwise ambiguous name unambiguous. Invalid ids in it are ignored.
    Only ids the relay accepts (``zones.is_valid_zone``) resolve: "Etc/GMT+2" does not.
    """
    query = name.strip()
    if "/" in query and is_valid_zone(query):
        return PlaceMatch(query, query, (query,))
    entry = _entry(normalize_place(query), _extra_index(known_places))
    if entry is None:
        return PlaceMatch(query, query, ())
    return PlaceMatch(query, entry.name, entry.zones)


# A word of a place name: starts with a letter; "St. John's", "Port-au-Prince", "D.C".
_TOKEN = re.compile(r"[^\W\d_](?:[\w'’.\-]*\w)?|&")
_GAP = re.compile(r"[ \t]*,?[ \t]+")


def _tokens_after(text: str, pos: int) -> list[re.Match[str]]:
    tokens: list[re.Match[str]] = []
    while len(tokens) < _MAX_WORDS:
        token = _TOKEN.match(text, pos)
        if token is None:
            break
        tokens.append(token)
        gap = _GAP.match(text, token.end())
        if gap is None:
            break
        pos = gap.end()
    return tokens


def _tokens_before(text: str, end: int) -> list[re.Match[str]]:
    tokens = list(_TOKEN.finditer(text, max(0, end - 80), end))
    run: list[re.Match[str]] = []
    for token in reversed(tokens):
        gap = text[token.end() : run[0].start() if run else end]
        if len(run) == _MAX_WORDS or (run and not _GAP.fullmatch(gap)) or (not run and gap):
            break
        run.insert(0, token)
    return run


def _longest(
    text: str, runs: Iterable[tuple[int, int, str]], extra: Mapping[str, _Entry], *, strict: bool
) -> PlaceSpan | None:
    """The first of ``runs`` (start, end, key; longest first) that names a place. A
    blocking name stops the search; a word-like name counts only capitalised, and never
    when ``strict``."""
    for start, end, key in runs:
        entry = _entry(key, extra)
        if entry is None:
            continue
        if not entry.zones or (key in _WORDLIKE and (strict or not text[start].isupper())):
            return None
        return PlaceSpan(start, end, PlaceMatch(text[start:end], entry.name, entry.zones))
    return None


def _too_long(key: str, limits: Mapping[str, int], edge: int) -> bool:
    words = key.split()
    return bool(words) and len(words) > limits.get(words[edge], 0)


def place_at(
    text: str, pos: int, *, known_places: Mapping[str, str] | None = None
) -> PlaceSpan | None:
    """The longest place name starting at ``pos`` ("New York" in "New York right now"),
    up to six words; None if the words there name no place. See :func:`lookup_place`."""
    extra, limits = _extra_index(known_places), _word_limits()[0]
    tokens = _tokens_after(text, pos)
    words: list[str] = []
    runs: list[tuple[int, int, str]] = []
    for token in tokens:
        words += _fold(token.group())
        key = _key(words)
        if not extra and _too_long(key, limits, 0):
            break
        runs.append((tokens[0].start(), token.end(), key))
    return _longest(text, reversed(runs), extra, strict=False)


def place_ending_at(
    text: str, end: int, *, known_places: Mapping[str, str] | None = None
) -> PlaceSpan | None:
    """The longest place name ending exactly at ``end`` ("New York" before " time" in
    "what is New York time"). Word-like names ("Christmas") never match here."""
    extra, limits = _extra_index(known_places), _word_limits()[1]
    tokens = _tokens_before(text, end)
    words: list[str] = []
    runs: list[tuple[int, int, str]] = []
    for token in reversed(tokens):
        words = _fold(token.group()) + words
        key = _key(words)
        if not extra and _too_long(key, limits, -1):
            break
        runs.append((token.start(), tokens[-1].end(), key))
    return _longest(text, reversed(runs), extra, strict=True)


# Three alternatives, so the scan stays cheap on long messages: "I'm / we're ...",
# "I / we (have) ... live in / moved to / landed in", and subject-less phrases.
_SELF_LOCATION_BODY = (
    r"(?:\bi['’]?m|\bi\s+am|\bwe['’]re|\bwe\s+are)\s+"
    r"(?:(?:currently|now|still|just|already|finally|back|home|here|out|over|staying|working"
    r"|travell?ing|temporarily|actually|also)\s+){0,3}"
    r"(?:(?:based|living|located|settled)\s+(?:in|at|out\s+of)|visiting|in|at)\s+"
    r"|\b(?:i|we)(?:\s+have|['’]ve)?\s+(?:(?:currently|now|still|also|just|recently)\s+)?"
    r"(?:live\s+in|(?:moved|relocated)\s+to|(?:landed|arrived)\s+(?:in|at))\s+"
    r"|\b(?:here\s+in|(?:currently|right\s+now)\s+(?:(?:staying|living|based|located)\s+)?"
    r"(?:in|at)|(?:just\s+)?(?:landed|arrived)\s+(?:in|at)"
    r"|(?:back\s+(?:home\s+)?|home\s+)(?:in|at))\s+"
)
# Every alternative starts with one of these letters (in any case ``re`` folds to them):
# the lookahead lets the scan pass every other position at once (twice as fast on
# ordinary messages, which mostly have no phrase at all).
_SELF_LOCATION_FIRST_LETTERS = "iwhcrjlab"
_SELF_LOCATION = re.compile(
    rf"(?=[{_SELF_LOCATION_FIRST_LETTERS}])(?:{_SELF_LOCATION_BODY})", re.IGNORECASE
)
# Subject-less "landed in", "back (home) in" and "currently in" do not count right after a
# word or a handle, which is then their subject ("my friend landed in", "my brother is back
# in", "@Bo currently in Tokyo": someone else's place); at the start of a message, a line
# or a clause they are the speaker's ("Hi all, currently in Tokyo"), as "here in" always is.
_SUBJECTLESS = re.compile(r"(?:just|landed|arrived|back|home|currently|right)\b", re.IGNORECASE)
_AFTER_A_SUBJECT = re.compile(r"[\w@'’][ \t]*\Z")
_HOME_WORDS = re.compile(r"live|living|based|located|settled|moved|relocated", re.I)
# "when I'm in Tokyo", "I'm not currently in Tokyo": hypothetical or negated.
_NOT_NOW = re.compile(
    r"(?:\b(?:if|when|whenever|once|until|unless|not|never)|n['’]t)\s+$", re.IGNORECASE
)


def find_place_mentions(
    text: str, *, known_places: Mapping[str, str] | None = None
) -> list[PlaceMention]:
    """Places the user says they are in or live in, in order of appearance.

    Only self-location phrases count ("I'm in Lisbon this week", "here in Tokyo", "I live
    in Berlin", "currently in New York", "landed in São Paulo", "I'm at Osaka", "I moved
    to Porto", "back home in Berlin"); negated or hypothetical ones ("when I'm in Tokyo",
    "not in Tokyo"), questions ("what time is it in Tokyo") and a subject-less phrase after
    someone's name or handle ("@Bo currently in Tokyo") do not. Unknown names are
    skipped; ambiguous ones are returned with several candidates and no zone.
    """
    mentions: list[PlaceMention] = []
    for trigger in _SELF_LOCATION.finditer(text):
        before = text[max(0, trigger.start() - 16) : trigger.start()]
        if _NOT_NOW.search(before) or (
            _SUBJECTLESS.match(trigger.group()) and _AFTER_A_SUBJECT.search(before)
        ):
            continue
        found = place_at(text, trigger.end(), known_places=known_places)
        if found is not None:
            kind: Literal["current", "home"] = (
                "home" if _HOME_WORDS.search(trigger.group()) else "current"
            )
            mentions.append(PlaceMention(found.start, found.end, kind, found.place))
    return mentions


def self_location_spans(text: str) -> list[tuple[int, int]]:
    """Spans of self-location phrases up to the place ("I'm currently in "), so a caller
    can tell "in Lisbon" in "I'm in Lisbon" from "in Lisbon" in a question."""
    return [(m.start(), m.end()) for m in _SELF_LOCATION.finditer(text)]
