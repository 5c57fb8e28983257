"""Show instants to readers in their own zones (spec 000 §7.3, §11). Pure, no I/O.

The model never converts between zones: it writes every concrete time as a markup carrying
an ISO-8601 instant, ``<time 2026-11-22T08:00:00Z>`` (any offset, e.g. ``+01:00``), and
``render_times`` replaces each markup on the way out for one ``Audience``:

``DirectAudience`` (a DM) — always weekday and date, then the time and the reader's zone in
the locale's "Tokyo time" form; the year only when it differs from the reference's year (or
when no reference is given); the GMT offset only when the wall time occurs twice (the hour
repeated when DST ends), so a time is never ambiguous::

    Sun, Nov 22, 9:00 AM Berlin Time                      (en, reference in 2026)
    So., 22. Nov. 2026, 09:00 Berlin (Ortszeit)           (de_DE, no reference)
    Sun, Nov 1, 1:30 AM New York Time (GMT-05:00)         (en, second 1:30 that night)

``GroupAudience`` — a UTC anchor with weekday and date (group locale, 24-hour; the year by
the same rule as above), then one part per zone of the mentioned viewers, in the order
given, viewers sharing a zone grouped. A part's time (and its weekday and date, shown only
when the local date differs from the UTC date) is written in its first viewer's locale —
24-hour for ``de_DE``, "9:00 AM" for ``en_US`` — and its city in the group's locale so the
line reads in one language; viewers in UTC join the anchor::

    Sat, Nov 21, 23:30 UTC · So., 22. Nov., 00:30 Berlin (Ana, Ben) · 3:30 PM Los Angeles (Maria)

``DiscordAudience`` — Discord's native ``<t:1795334400:f>``: each client shows its own zone.

A date-only markup, ``<time 2026-11-22>``, names a calendar date, which has no zone: it is
shown as weekday and date in the locale (the year by the same rule), for a DM in the
reader's, for a group once in the group's, on Discord (whose ``<t:…>`` always shows a
time) as text: ``Sun, Nov 22``. An instant whose UTC is written loosely — a lowercase
``z``, or ``UTC`` after a time without offset (``2026-11-22T08:00:00 UTC``) — is read as
the UTC instant it names; a space instead of ``T`` is ISO-8601 as Python reads it.

A malformed markup (not an ISO instant or date, or an instant without offset: a naive time
is never guessed) loses its angle brackets and the ``time`` keyword, its inner text stays
visible: ``<time tomorrow 9am>`` becomes ``tomorrow 9am``. Strings such as ``<timestamp>``
or ``<time>`` are not markups (the keyword must be followed by a space). A markup left open
at the very end of a reply (an answer cut off by its token limit) is read the same way:
``… until <time 2026-11-22T08:00:00Z`` is rendered, ``… until <time 2026-11`` becomes
``… until 2026-11``.

Markup inside Markdown code — an inline code span or a fenced code block (see
``code_regions`` for what counts) — stays exactly as written, so a code sample explaining
the markup is not changed and Discord, which shows no timestamp inside code, gets none.
``<time datetime="…">`` (an HTML element: its inner text starts with an attribute) is no
markup either and is left as written everywhere.

Times are babel's CLDR output unchanged, so English 12-hour times carry a narrow no-break
space (U+202F) before AM/PM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timezone
from functools import cache, lru_cache
from typing import Protocol
from zoneinfo import ZoneInfo

from babel import Locale, UnknownLocaleError
from babel.dates import (
    format_skeleton,
    format_time,
    get_datetime_format,
    get_timezone_gmt,
    get_timezone_location,
)

from middleware.clock.code_regions import CodeTracker
from middleware.clock.zones import get_zone, is_repeated_wall_time

__all__ = [
    "MARKUP_OPEN",
    "Audience",
    "DirectAudience",
    "DiscordAudience",
    "GroupAudience",
    "StreamingTimeRenderer",
    "Viewer",
    "markup_instruction",
    "render_times",
]

#: Every markup starts with this; text without it is returned untouched.
MARKUP_OPEN = "<time "
#: Longest inner text accepted; it bounds what a streaming renderer ever holds back.
_MAX_INNER = 64
# A backtick ends a markup's inner text: it begins code (``code_regions``).
_MARKUP = re.compile(rf"<time ([^<>\n`]{{0,{_MAX_INNER}}})>")
# The same, or one left open at the end of the text: only a complete text is read so.
_MARKUP_OR_OPEN_END = re.compile(rf"<time ([^<>\n`]{{0,{_MAX_INNER}}})(?:>|\Z)")
# ``<time datetime="…">``: an HTML element's attribute, not an instant.
_HTML_ATTRIBUTE = re.compile(r"\s*[A-Za-z_:][\w.:-]*\s*=")
# A time without offset followed by "Z"/"z" or "UTC" (any case, a space allowed): UTC.
_LOOSE_UTC = re.compile(
    r"(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?) ?(?:z|utc)", re.I
)
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_SEPARATOR = " · "
#: The UTC ids ``zones.get_zone`` accepts; their viewers join the group's UTC anchor.
_UTC_ZONES = frozenset({"UTC", "Etc/UTC"})


@lru_cache(maxsize=64)  # every turn builds an audience; babel's parse is the slow part
def _check_locale(name: str) -> str:
    """Return the babel identifier for ``name`` (``de-DE`` or ``de_DE``) or raise ValueError."""
    normalised = name.replace("-", "_")
    try:
        Locale.parse(normalised)
    except (UnknownLocaleError, ValueError, TypeError) as exc:
        raise ValueError(f"unknown locale {name!r}; use an identifier such as 'de_DE'") from exc
    return normalised


def _check_aware(instant: datetime | None, what: str) -> None:
    if instant is not None and instant.utcoffset() is None:
        raise ValueError(f"{what} must be timezone-aware; a naive time is never guessed")


@dataclass(frozen=True)
class Viewer:
    """One reader of a group message: a display label, an IANA zone and a babel locale.

    Raises ``ValueError`` for an unknown zone or locale.
    """

    label: str
    zone: str
    locale: str = "en"

    def __post_init__(self) -> None:
        get_zone(self.zone)
        object.__setattr__(self, "locale", _check_locale(self.locale))


class Audience(Protocol):
    """Who reads the text: decides how one instant is written for them."""

    def render(self, instant: datetime, *, reference: datetime | None = None) -> str:
        """Return ``instant`` (aware) as text for this audience.

        ``reference`` (aware, usually "now") lets a format leave out what the reader
        already knows, such as the year; ``None`` means nothing is left out.
        """
        ...

    def render_date(self, day: date, *, reference: datetime | None = None) -> str:
        """Return the calendar date ``day`` (no zone, the same for every reader) as text;
        ``reference`` as for ``render``."""
        ...


@dataclass(frozen=True)
class DirectAudience:
    """A direct message: render in the reader's own zone and locale."""

    zone: str
    locale: str = "en"

    def __post_init__(self) -> None:
        get_zone(self.zone)
        object.__setattr__(self, "locale", _check_locale(self.locale))

    def render(self, instant: datetime, *, reference: datetime | None = None) -> str:
        local = instant.astimezone(ZoneInfo(self.zone))
        show_year = reference is None or reference.astimezone(local.tzinfo).year != local.year
        text = _join_date_time(
            _date_text(local, self.locale, show_year),
            str(format_time(local, "short", locale=self.locale)),
            self.locale,
        )
        text = f"{text} {_zone_label(self.zone, self.locale)}"
        if is_repeated_wall_time(local):
            text += f" ({str(get_timezone_gmt(local, locale=self.locale))})"
        return text

    def render_date(self, day: date, *, reference: datetime | None = None) -> str:
        return _calendar_date(day, reference, ZoneInfo(self.zone), self.locale)


@dataclass(frozen=True)
class GroupAudience:
    """A group chat: UTC plus a conversion for each mentioned viewer (spec 000 §7.3)."""

    viewers: tuple[Viewer, ...] = ()
    locale: str = "en"
    # Viewers grouped by zone, in first-appearance order; built once per audience.
    _by_zone: tuple[tuple[str, tuple[Viewer, ...]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "locale", _check_locale(self.locale))
        groups: dict[str, list[Viewer]] = {}
        for viewer in self.viewers:
            groups.setdefault(viewer.zone, []).append(viewer)
        object.__setattr__(
            self, "_by_zone", tuple((zone, tuple(vs)) for zone, vs in groups.items())
        )

    def render(self, instant: datetime, *, reference: datetime | None = None) -> str:
        utc = instant.astimezone(UTC)
        show_year = reference is None or reference.astimezone(UTC).year != utc.year
        anchor = _join_date_time(
            _date_text(utc, self.locale, show_year),
            str(format_skeleton("Hm", utc, locale=self.locale)),
            self.locale,
        )
        anchor += " UTC"
        parts: list[str] = []
        for zone, viewers in self._by_zone:
            labels = ", ".join(v.label for v in viewers)
            if zone in _UTC_ZONES:
                anchor += f" ({labels})"
                continue
            time_text = _viewer_time(utc, zone, viewers[0].locale)
            parts.append(f"{time_text} {_city(zone, self.locale)} ({labels})")
        return _SEPARATOR.join([anchor, *parts])

    def render_date(self, day: date, *, reference: datetime | None = None) -> str:
        return _calendar_date(day, reference, UTC, self.locale)


@dataclass(frozen=True)
class DiscordAudience:
    """Discord: a native timestamp that every client shows in its own zone and locale.

    Discord has no native form for a date without a time, so a date is written as text in
    ``locale``."""

    locale: str = "en"

    def __post_init__(self) -> None:
        object.__setattr__(self, "locale", _check_locale(self.locale))

    def render(self, instant: datetime, *, reference: datetime | None = None) -> str:
        # Floor, not round: the markup never shows seconds, and 08:59:59.9 is not 09:00.
        return f"<t:{int(instant.timestamp() // 1)}:f>"

    def render_date(self, day: date, *, reference: datetime | None = None) -> str:
        return _calendar_date(day, reference, UTC, self.locale)


def _viewer_time(utc: datetime, zone: str, locale: str) -> str:
    """Local time in ``zone`` as ``locale`` writes it, dated when the date is not UTC's."""
    local = utc.astimezone(ZoneInfo(zone))
    text = str(format_time(local, "short", locale=locale))
    if local.date() == utc.date():
        return text
    return _join_date_time(_date_text(local, locale, show_year=False), text, locale)


def _calendar_date(
    day: date, reference: datetime | None, zone: ZoneInfo | timezone, locale: str
) -> str:
    """``day`` as ``_date_text`` writes it; the year only when it is not the year of
    ``reference`` read in ``zone`` (the reader's, or UTC for a group or Discord)."""
    show_year = reference is None or reference.astimezone(zone).year != day.year
    return _date_text(day, locale, show_year)


def _date_text(local: date, locale: str, show_year: bool) -> str:
    """Weekday, day and abbreviated month of ``local``'s own date, in ``locale``."""
    skeleton = "yMMMEd" if show_year else "MMMEd"
    return str(format_skeleton(skeleton, date(local.year, local.month, local.day), locale=locale))


def _join_date_time(date_text: str, time_text: str, locale: str) -> str:
    # The locale's own glue ("{1}, {0}" in English, "{1} {0}" in Japanese), as
    # babel.dates.format_datetime applies it.
    glue = str(get_datetime_format("medium", locale=locale)).replace("'", "")
    return glue.replace("{0}", time_text).replace("{1}", date_text)


@cache
def _city(zone: str, locale: str) -> str:
    city = str(get_timezone_location(ZoneInfo(zone), locale=locale, return_city=True))
    # babel falls back to everything after the first "/" ("Indiana/Indianapolis").
    return city.rsplit("/", 1)[-1]


@cache
def _zone_label(zone: str, locale: str) -> str:
    """The locale's "<city> time" form: "Tokyo Time", "Tokio (Ortszeit)", "東京時間"; plain
    "UTC" for UTC, which is no place's time ("UTC Time", "UTC (Ortszeit)": "local time")."""
    if zone in _UTC_ZONES:
        return "UTC"
    region_format = str(Locale.parse(locale).zone_formats["region"])
    return region_format % _city(zone, locale)


def _parse_markup(inner: str) -> datetime | date | None:
    """The aware instant or the calendar date ``inner`` names, or None when it names
    neither (a naive time, a date that does not exist, anything else)."""
    text = inner.strip()
    try:
        if _DATE_ONLY.fullmatch(text):
            return date.fromisoformat(text)
        loose_utc = _LOOSE_UTC.fullmatch(text)
        if loose_utc:
            return datetime.fromisoformat(loose_utc.group(1)).replace(tzinfo=UTC)
        instant = datetime.fromisoformat(text)
    except ValueError:
        return None
    return instant if instant.utcoffset() is not None else None


def render_times(
    text: str, audience: Audience, *, reference: datetime | None = None, complete: bool = True
) -> str:
    """Replace every ``<time ISO-instant>`` markup outside code in ``text`` for ``audience``.

    A date-only markup is rendered as the audience's date, a time followed by ``z`` or
    ``UTC`` as that UTC instant. A markup whose inner text is neither an ISO-8601 date nor
    an instant with an offset is replaced by its inner text (no zone is invented); one
    inside Markdown code, or an HTML ``<time datetime=…>``, is left as written. While
    ``complete`` (``text`` is a whole reply, or its end), a markup left open at the end of
    ``text`` is read as if closed there. Text without ``"<time "`` is returned as is after
    one substring check. Raises ``ValueError`` if ``reference`` is naive.
    """
    if MARKUP_OPEN not in text:
        return text
    _check_aware(reference, "reference")
    if "`" not in text and "~" not in text:  # no code
        return _render_markups(text, audience, reference, complete=complete)
    parts: list[str] = []
    for start, end, prose in CodeTracker().scan(text):
        piece = text[start:end]
        if prose:
            at_end = complete and end == len(text)
            piece = _render_markups(piece, audience, reference, complete=at_end)
        parts.append(piece)
    return "".join(parts)


def _render_markups(
    prose: str, audience: Audience, reference: datetime | None, *, complete: bool
) -> str:
    """``render_times`` for text known to hold no code."""
    if MARKUP_OPEN not in prose:
        return prose

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        if _HTML_ATTRIBUTE.match(inner):
            return match.group(0)
        named = _parse_markup(inner)
        if named is None:
            return inner.strip()
        if isinstance(named, datetime):  # a datetime is a date too: test it first
            return audience.render(named, reference=reference)
        return audience.render_date(named, reference=reference)

    return (_MARKUP_OR_OPEN_END if complete else _MARKUP).sub(replace, prose)


def _could_become_markup(tail: str) -> bool:
    """True when more text appended to ``tail`` could make it a complete markup."""
    if len(tail) <= len(MARKUP_OPEN):
        return MARKUP_OPEN.startswith(tail)
    inner = tail[len(MARKUP_OPEN) :]
    return (
        tail.startswith(MARKUP_OPEN)
        and len(inner) <= _MAX_INNER
        and not any(c in inner for c in "<>\n`")
    )


class StreamingTimeRenderer:
    """``render_times`` for text that arrives in pieces.

    ``feed`` returns what can be shown now, holding back only a tail of prose that may
    still become a markup (at most ``len("<time ") + 64 + 1`` characters); ``flush``
    returns the rest and resets the renderer. The concatenation of every output equals
    ``render_times`` of the concatenated input. Markups cannot nest or contain ``<``, so
    such a tail always starts at the last ``<`` and everything before it renders exactly
    as in the whole text. Whether text is code is tracked across pieces
    (``code_regions.CodeTracker``) and decided as each character arrives, so code holds
    nothing back; a held tail is let go as written when code follows it (a markup never
    contains a backtick, and the tail has no ``>`` yet).
    """

    def __init__(self, audience: Audience, *, reference: datetime | None = None) -> None:
        _check_aware(reference, "reference")
        self._audience = audience
        self._reference = reference
        self._held = ""
        self._code = CodeTracker()
        self._idle = False  # see ``idle``; a text's start is a line start, not settled

    def fresh(self) -> StreamingTimeRenderer:
        """A renderer for another text read by the same audience (another answer)."""
        return StreamingTimeRenderer(self._audience, reference=self._reference)

    @property
    def holding(self) -> bool:
        """True while some text is held back."""
        return bool(self._held)

    @property
    def idle(self) -> bool:
        """True when a piece with no ``<``, backtick, backslash or line break would come back
        from ``feed`` unchanged and change nothing, so a caller may skip feeding it."""
        return self._idle

    def feed(self, delta: str) -> str:
        """Add ``delta`` and return the text that is safe to emit now."""
        if self._idle and not ("<" in delta or "`" in delta or "\n" in delta or "\\" in delta):
            return delta
        out: list[str] = []
        for start, end, prose in self._code.scan(delta):
            if prose:
                out.append(self._feed_prose(delta[start:end]))
            else:
                out.append(self._held)
                self._held = ""
                out.append(delta[start:end])
        self._idle = not self._held and self._code.settled
        return "".join(out)

    def flush(self) -> str:
        """Return the held text (the end of the text: a markup open in it is read as if
        closed there) and reset."""
        held, self._held = self._held, ""
        self._code = CodeTracker()
        self._idle = False
        return _render_markups(held, self._audience, self._reference, complete=True)

    def _feed_prose(self, prose: str) -> str:
        text = self._held + prose
        cut = text.rfind("<")
        if cut >= 0 and _could_become_markup(text[cut:]):
            self._held = text[cut:]
            text = text[:cut]
        else:
            self._held = ""
        # Not the end: a markup open at the end of ``text`` (none when a tail is held,
        # else one cut off by a later "<") is left as the whole text leaves it.
        return _render_markups(text, self._audience, self._reference, complete=False)


def markup_instruction() -> str:
    """The paragraph that tells the model how to write concrete times."""
    return (
        "Write a concrete date and time as <time ISO-8601 instant with offset> (e.g. "
        "<time 2026-11-22T08:00:00Z> or <time 2026-11-22T09:00:00+01:00>), and a date "
        "without a time as <time 2026-11-22>: each reader sees it in their own timezone and "
        "language. Do not convert between timezones or add a zone name beside the tag; if "
        "you do not know the exact instant, say so in words."
    )
