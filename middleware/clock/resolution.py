"""Session timezone resolution for one message (spec 000 §4.2), as a pure function.

Precedence, first match wins:

1. ``explicit`` — a zone named in the message: an IANA id, "Tokyo time", "what time is it
   in Tokyo", ``UTC+9``. With several different ones the first wins and the rest are
   listed in ``other_explicit``. It applies to this message only: nothing here persists
   it. The zone of a fully written instant (an ISO timestamp's offset, a pasted log
   line's "2026-11-20 14:02 UTC") is not one: the instant is read in it, but it says
   when that instant was, not which zone the user or the message's other times are in.
2. ``thread`` — the thread's stored override.
3. ``user`` — the user's profile default.
4. ``location`` — an unambiguous place the user says they are in ("I'm in Lisbon"); where
   they are now beats where they live, and disagreeing places set nothing.
5. ``stated`` — the zone of the place the user said they are in in an earlier message
   (the caller remembers it, and decides for how long).
6. ``fallback`` — ``"UTC"`` with ``fallback=True``, so a time-sensitive reply can say so.

Abbreviations (EST, IST) never set the zone. Each one found is either resolved from the
user's known zones (thread override, profile default) into ``resolved_abbreviations``,
or reported with its question in ``unresolved_abbreviations``. Ambiguous places
("Portland time", "I'm in Springfield") set nothing and are reported in
``ambiguous_places`` with their question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from functools import cache, lru_cache
from typing import Literal
from zoneinfo import ZoneInfo, available_timezones

from middleware.clock.abbreviations import (
    candidates_for,
    clarification_for,
    find_abbreviations,
    resolve_abbreviation,
)
from middleware.clock.places import PlaceMention, find_place_mentions, place_question
from middleware.clock.references import ZoneReference, find_zone_references, format_offset

__all__ = [
    "AbbreviationQuestion",
    "AmbiguousPlace",
    "ResolvedAbbreviation",
    "Source",
    "TimezoneResolution",
    "resolve_session_timezone",
    "said_place",
]

Source = Literal["explicit", "thread", "user", "location", "stated", "fallback"]


@dataclass(frozen=True, slots=True)
class ResolvedAbbreviation:
    """An abbreviation the user's known zones settle: ``abbreviation`` means ``zone``."""

    abbreviation: str
    zone: str


@dataclass(frozen=True, slots=True)
class AbbreviationQuestion:
    """An abbreviation that needs an answer before any time in it is used."""

    abbreviation: str
    candidates: tuple[str, ...]
    question: str


@dataclass(frozen=True, slots=True)
class AmbiguousPlace:
    """A place name with several zones; ``explicit`` if named as a zone ("Portland time"),
    not as where the user is ("I'm in Portland")."""

    name: str
    candidates: tuple[str, ...]
    explicit: bool
    question: str


@dataclass(frozen=True, slots=True)
class TimezoneResolution:
    """The Session TZ for one message and how it was reached.

    ``zone`` is an IANA id, except for an explicit offset that is not a whole number of
    hours: then it is a label such as "UTC+05:45". Whenever the zone is a fixed offset
    (``UTC+9`` → "Etc/GMT-9", ``+05:45``) ``offset_minutes`` holds it, east of UTC; use
    :meth:`tzinfo` rather than parsing ``zone``.
    """

    zone: str
    source: Source
    fallback: bool = False
    offset_minutes: int | None = None
    other_explicit: tuple[str, ...] = ()
    mentioned_places: tuple[PlaceMention, ...] = ()
    resolved_abbreviations: tuple[ResolvedAbbreviation, ...] = ()
    unresolved_abbreviations: tuple[AbbreviationQuestion, ...] = ()
    ambiguous_places: tuple[AmbiguousPlace, ...] = ()
    notes: tuple[str, ...] = ()
    # The place this message says the user is in, whether or not a stored zone won: what
    # the caller remembers for the user's later messages.
    located: PlaceMention | None = None

    @property
    def questions(self) -> tuple[str, ...]:
        """What to ask the user before relying on the abbreviations and places found."""
        asked = [item.question for item in self.unresolved_abbreviations]
        return (*asked, *(place.question for place in self.ambiguous_places))

    @property
    def needs_clarification(self) -> bool:
        return bool(self.unresolved_abbreviations or self.ambiguous_places)

    def tzinfo(self) -> tzinfo:
        """The zone as a ``tzinfo``: a fixed ``timezone`` for offsets, else ``ZoneInfo``."""
        if self.offset_minutes is not None:
            return timezone(timedelta(minutes=self.offset_minutes))
        return ZoneInfo(self.zone)


@cache
def _valid_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def _reference_label(ref: ZoneReference) -> str:
    if ref.zone is not None:
        return ref.zone
    return format_offset(ref.offset_minutes or 0)


def _explicit(refs: list[ZoneReference]) -> tuple[ZoneReference | None, tuple[str, ...]]:
    """The first usable reference and the distinct labels of the other usable ones: not an
    ambiguous place, nor the zone of a written instant."""
    usable = [ref for ref in refs if ref.kind != "place" and not ref.dates_instant]
    if not usable:
        return None, ()
    first = _reference_label(usable[0])
    others = dict.fromkeys(_reference_label(ref) for ref in usable[1:])
    others.pop(first, None)
    return usable[0], tuple(others)


def said_place(mentions: list[PlaceMention]) -> tuple[PlaceMention | None, str | None]:
    """(place, note): where the user says they are, from the unambiguous self-locations
    (``find_place_mentions``): current places beat home ones; two different zones in the
    winning group set nothing and return a note."""
    known = [mention for mention in mentions if mention.zone is not None]
    current = [mention for mention in known if mention.kind == "current"]
    group = current or known
    zones = list(dict.fromkeys(mention.zone for mention in group if mention.zone))
    if not zones:
        return None, None
    if len(zones) > 1:
        names = ", ".join(mention.place.query for mention in group)
        return None, f"Conflicting locations in the message ({names}); none was used."
    return group[0], None


def resolve_session_timezone(
    text: str,
    *,
    thread_tz: str | None,
    user_tz: str | None,
    stated_tz: str | None = None,
    known_places: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> TimezoneResolution:
    """Resolve the Session TZ for one message following the §4.2 precedence.

    ``thread_tz`` and ``user_tz`` are IANA ids or None; an invalid one is ignored with a
    note. ``known_places`` maps place names known for this user to IANA ids (see
    :func:`middleware.clock.places.lookup_place`). ``now`` only picks the year whose rules
    are used to match abbreviations to the user's zones.
    """
    refs = find_zone_references(text, known_places=known_places)
    mentions = find_place_mentions(text, known_places=known_places)
    abbreviations = find_abbreviations(text)
    if not refs and not mentions and not abbreviations:
        # Most messages name no zone, place or abbreviation: then the stored zones alone
        # decide, and the answer for them is kept.
        return _from_stored_zones(thread_tz, user_tz, stated_tz)
    return _resolve(refs, mentions, abbreviations, thread_tz, user_tz, stated_tz, now)


@lru_cache(maxsize=256)
def _from_stored_zones(
    thread_tz: str | None, user_tz: str | None, stated_tz: str | None
) -> TimezoneResolution:
    """The resolution of a message that names nothing: the same for every such message."""
    return _resolve([], [], [], thread_tz, user_tz, stated_tz, None)


def _resolve(
    refs: list[ZoneReference],
    mentions: list[PlaceMention],
    abbreviations: list[str],
    thread_tz: str | None,
    user_tz: str | None,
    stated_tz: str | None,
    now: datetime | None,
) -> TimezoneResolution:
    """The §4.2 precedence over what the message names (see ``resolve_session_timezone``)."""
    notes: list[str] = []
    context: list[str] = []
    for label, zone in (("thread", thread_tz), ("user", user_tz), ("stated", stated_tz)):
        if zone is not None and zone not in _valid_zones():
            notes.append(f"Ignored the {label} timezone {zone!r}: not an IANA timezone.")
        elif zone is not None:
            context.append(zone)
    valid_thread = thread_tz if thread_tz in context else None
    valid_user = user_tz if user_tz in context else None
    valid_stated = stated_tz if stated_tz in context else None

    ambiguous = [
        AmbiguousPlace(ref.name, ref.candidates, True, place_question(ref.name, ref.candidates))
        for ref in refs
        if ref.kind == "place"
    ] + [
        AmbiguousPlace(
            m.place.canonical_name,
            m.place.candidates,
            False,
            place_question(m.place.canonical_name, m.place.candidates),
        )
        for m in mentions
        if m.place.ambiguous
    ]

    resolved: list[ResolvedAbbreviation] = []
    unresolved: list[AbbreviationQuestion] = []
    for abbr in abbreviations:
        zone = resolve_abbreviation(abbr, context, at=now)
        if zone is not None:
            resolved.append(ResolvedAbbreviation(abbr, zone))
        else:
            unresolved.append(
                AbbreviationQuestion(abbr, candidates_for(abbr), clarification_for(abbr))
            )

    place, conflict = said_place(mentions)
    located = place.zone if place is not None else None
    if conflict:
        notes.append(conflict)

    first, others = _explicit(refs)
    source: Source
    offset: int | None = None
    if first is not None:
        zone, source, offset = _reference_label(first), "explicit", first.offset_minutes
    elif valid_thread is not None:
        zone, source = valid_thread, "thread"
    elif valid_user is not None:
        zone, source = valid_user, "user"
    elif located is not None:
        zone, source = located, "location"
    elif valid_stated is not None:
        zone, source = valid_stated, "stated"
    else:
        zone, source = "UTC", "fallback"
        notes.append("No timezone is known for this user; using UTC.")
    if located is not None and source in ("thread", "user") and located != zone:
        notes.append(f"The user says they are in {located}; the {source} timezone {zone} wins.")

    return TimezoneResolution(
        zone=zone,
        source=source,
        fallback=source == "fallback",
        offset_minutes=offset,
        other_explicit=others,
        mentioned_places=tuple(mentions),
        resolved_abbreviations=tuple(resolved),
        unresolved_abbreviations=tuple(unresolved),
        ambiguous_places=tuple(ambiguous),
        notes=tuple(notes),
        located=place,
    )
