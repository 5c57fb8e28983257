"""IANA zone helpers for the Core Clock (spec 000 §4.4): validation, offsets, ISO output,
and turning a local wall-clock time into instants without ever shifting it silently.

Zone policy (what ``is_valid_zone`` accepts):

* ``"UTC"`` and ``"Etc/UTC"``;
* every ``Area/Location`` key of ``zoneinfo.available_timezones()``, including the
  backward-compatible links such as ``US/Eastern`` (they name a place unambiguously);
* nothing else. Rejected on purpose: the single-word legacy keys (``EST``, ``MST``,
  ``HST``, ``EST5EDT``, ``CST6CDT``, ``MST7MDT``, ``PST8PDT``, ``CET``, ``GB``, ``Japan``,
  ``Zulu``, ... — abbreviations and country aliases the spec forbids as internal ids) and
  ``Etc/*`` other than ``Etc/UTC`` (``Etc/GMT+5`` means UTC-05:00, a trap for readers).

All instants handed out are aware ``datetime`` objects; naive inputs are only accepted
where the contract says "local wall-clock time".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import cache
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, available_timezones

__all__ = [
    "LEGACY_KEYS",
    "LocalizeResult",
    "agent_timezone",
    "format_offset",
    "label_tzinfo",
    "session_tzinfo",
    "get_zone",
    "is_repeated_wall_time",
    "is_valid_zone",
    "localize",
    "offset_minutes",
    "to_iso",
    "valid_zones",
]

#: Keys present in the tz database that are abbreviations, POSIX-style rules or country
#: aliases rather than ``Area/Location`` ids. They are rejected even though zoneinfo
#: loads them; the set is informative (``is_valid_zone`` rejects any key without "/").
LEGACY_KEYS: frozenset[str] = frozenset(
    {
        "CET", "CST6CDT", "EET", "EST", "EST5EDT", "HST", "MET", "MST", "MST7MDT",
        "PST8PDT", "WET", "GMT", "GMT+0", "GMT-0", "GMT0", "Greenwich", "UCT",
        "Universal", "Zulu", "Cuba", "Egypt", "Eire", "GB", "GB-Eire", "Hongkong",
        "Iceland", "Iran", "Israel", "Jamaica", "Japan", "Kwajalein", "Libya", "NZ",
        "NZ-CHAT", "Navajo", "PRC", "Poland", "Portugal", "ROC", "ROK", "Singapore",
        "Turkey", "W-SU", "Factory", "localtime",
    }
)  # fmt: skip

_UTC_NAMES = frozenset({"UTC", "Etc/UTC"})
_REJECTED_PREFIXES = ("Etc/", "posix/", "right/", "SystemV/")
_UTC_ALIASES = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Universal", "Etc/Universal",
                          "Zulu", "Etc/Zulu", "Etc/GMT", "GMT", "Etc/Greenwich"})  # fmt: skip


@cache
def valid_zones() -> frozenset[str]:
    """Every zone id ``is_valid_zone`` accepts (computed once per process)."""
    return frozenset(
        name
        for name in available_timezones()
        if name in _UTC_NAMES or ("/" in name and not name.startswith(_REJECTED_PREFIXES))
    )


def is_valid_zone(name: str) -> bool:
    """Whether ``name`` is an IANA ``Area/Location`` id (or ``UTC``) per the module policy.

    Exact, case-sensitive match: ``"asia/tokyo"`` and ``"EST"`` are both rejected.
    """
    return name in valid_zones()


@cache
def _casefold_index() -> dict[str, str]:
    return {name.casefold(): name for name in valid_zones()}


def get_zone(name: str) -> ZoneInfo:
    """Return the ``ZoneInfo`` for a valid zone id.

    Raises ``ValueError`` whose message says what is wrong and what to use instead, e.g.
    for an abbreviation (``"EST"``) or a miscased id (``"asia/tokyo"``).
    """
    if is_valid_zone(name):
        return ZoneInfo(name)
    suggestion = _casefold_index().get(name.strip().casefold())
    if suggestion is not None:
        raise ValueError(f"unknown timezone {name!r}; did you mean {suggestion!r}?")
    if name.startswith("Etc/") and name in available_timezones():
        offset = ZoneInfo(name).utcoffset(datetime(2000, 1, 1)) or timedelta(0)
        if not offset:
            raise ValueError(f"{name!r} is UTC under another name; use 'UTC'")
        raise ValueError(
            f"{name!r} is a fixed offset ({format_offset(int(offset.total_seconds()) // 60)}; "
            "Etc ids invert the sign), not a place, and ignores daylight saving; name a place "
            "instead, such as 'America/Sao_Paulo' or 'Asia/Kolkata', or 'UTC'"
        )
    if name in LEGACY_KEYS or name.isupper():
        raise ValueError(
            f"{name!r} is an abbreviation or legacy alias, not an IANA timezone; "
            "name a place instead, such as 'America/New_York' or 'Asia/Kolkata'"
        )
    raise ValueError(f"unknown timezone {name!r}; use an IANA id such as 'Europe/Berlin' or 'UTC'")


def _require_aware(instant: datetime, what: str = "instant") -> None:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{what} must be an aware datetime, got naive {instant!r}")


def offset_minutes(tz: str, instant: datetime) -> int:
    """UTC offset of zone ``tz`` at the aware ``instant``, in whole minutes (DST-aware).

    Examples: Asia/Kathmandu 345; Pacific/Chatham 765 (standard) / 825 (daylight);
    Australia/Lord_Howe 630 / 660. A sub-minute historical offset (only
    Africa/Monrovia before 1972, -00:44:30) is truncated toward zero.
    """
    _require_aware(instant)
    offset = instant.astimezone(get_zone(tz)).utcoffset()
    assert offset is not None  # a ZoneInfo always yields an offset for aware datetimes
    return int(offset.total_seconds() / 60)


def to_iso(instant: datetime, tz: str) -> str:
    """ISO-8601 text of the aware ``instant`` as wall time in ``tz``, seconds precision.

    ``to_iso(datetime(2026, 2, 10, 3, 2, tzinfo=UTC), "Asia/Tokyo")`` is
    ``"2026-02-10T12:02:00+09:00"``; ``datetime.fromisoformat`` reads it back to the same
    instant (sub-second parts are dropped).
    """
    _require_aware(instant)
    return instant.astimezone(get_zone(tz)).isoformat(timespec="seconds")


def is_repeated_wall_time(local: datetime) -> bool:
    """True when ``local``'s wall-clock time occurs twice in its zone (DST fall-back), so
    the time alone does not say which instant it is."""
    other = local.replace(fold=1 - local.fold)
    return other.utcoffset() != local.utcoffset()


def format_offset(minutes: int) -> str:
    """Human label for an offset in minutes: ``345`` -> ``"UTC+05:45"``, ``-210`` ->
    ``"UTC-03:30"``, ``0`` -> ``"UTC+00:00"``."""
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{mins:02d}"


_OFFSET_LABEL = re.compile(r"UTC(?P<sign>[+-])(?P<h>\d\d):(?P<m>\d\d)")


def label_tzinfo(label: str) -> tzinfo | None:
    """The tzinfo a phrase was read in: a valid zone id's, or a fixed offset's for a label
    ``format_offset`` wrote (``"UTC+05:30"``); None for anything else."""
    if is_valid_zone(label):
        return ZoneInfo(label)
    match = _OFFSET_LABEL.fullmatch(label)
    if match is None:
        return None
    minutes = int(match["h"]) * 60 + int(match["m"])
    return timezone(timedelta(minutes=-minutes if match["sign"] == "-" else minutes))


def session_tzinfo(name: str) -> tzinfo:
    """The tzinfo of a Session TZ: a valid zone id's, or a fixed offset's for a label
    ``format_offset`` wrote (``"UTC+02:00"``, an offset the message named). Raises
    ValueError, as ``get_zone`` does, for anything else."""
    found = label_tzinfo(name)
    if found is not None:
        return found
    if name.upper().startswith(("UTC+", "UTC-", "GMT+", "GMT-")):
        raise ValueError(
            f"{name!r} is neither a timezone nor an offset label; write an offset as "
            "'UTC+02:00' (sign, two-digit hours and minutes) or use an IANA id such as "
            "'Europe/Berlin'"
        )
    return get_zone(name)


@dataclass(frozen=True)
class LocalizeResult:
    """Outcome of reading a naive wall-clock time in a zone.

    * ``status == "ok"``: ``instants`` holds the single instant.
    * ``status == "fold"`` (clocks went back, the wall time happened twice): ``instants``
      holds both, earlier first; ``offsets`` their UTC offsets in minutes.
    * ``status == "gap"`` (clocks jumped forward, the wall time never happened):
      ``instants`` is empty. ``gap_start``/``gap_end`` are the naive wall times the clocks
      jumped from/to, ``transition`` is the first valid instant after the gap (the nearest
      valid time; the last valid one is just before it) and ``shifted`` is the instant
      reached by moving the wall time forward by the gap length (02:30 -> 03:30).
    """

    local: datetime
    zone: str
    status: Literal["ok", "gap", "fold"]
    instants: tuple[datetime, ...]
    offsets: tuple[int, ...] = ()
    gap_start: datetime | None = None
    gap_end: datetime | None = None
    transition: datetime | None = None
    shifted: datetime | None = None

    @property
    def instant(self) -> datetime | None:
        """The instant when the wall time is unambiguous, else ``None``."""
        return self.instants[0] if self.status == "ok" else None


def _minutes(delta: timedelta | None) -> int:
    assert delta is not None
    return int(delta.total_seconds() / 60)


def localize(naive_local: datetime, tz: str) -> LocalizeResult:
    """Read ``naive_local`` as a wall-clock time in ``tz`` (zoneinfo ``fold`` semantics).

    Never shifts silently: a non-existent time is reported as ``"gap"`` and an ambiguous
    one as ``"fold"`` with both candidate instants. Instants are returned in UTC.
    Raises ``ValueError`` for an aware input or an invalid zone.
    """
    if naive_local.tzinfo is not None:
        raise ValueError("localize() takes a naive wall-clock datetime")
    zone = get_zone(tz)
    first = naive_local.replace(tzinfo=zone, fold=0)
    second = naive_local.replace(tzinfo=zone, fold=1)
    off_first, off_second = first.utcoffset(), second.utcoffset()
    if off_first == off_second:
        instant = first.astimezone(UTC)
        return LocalizeResult(naive_local, tz, "ok", (instant,), (_minutes(off_first),))
    round_trip = first.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    if round_trip == naive_local.replace(fold=0):
        instants = (first.astimezone(UTC), second.astimezone(UTC))
        return LocalizeResult(
            naive_local, tz, "fold", instants, (_minutes(off_first), _minutes(off_second))
        )
    # In a gap, fold=1 reads the time with the offset after the jump (an instant before
    # the transition) and fold=0 with the offset before it (an instant after it).
    shifted = first.astimezone(UTC)
    low, high = second.astimezone(UTC), shifted
    assert off_second is not None
    while high - low > timedelta(seconds=1):
        mid = low + (high - low) / 2
        if mid.astimezone(zone).utcoffset() == off_second:
            high = mid
        else:
            low = mid
    transition = high.replace(microsecond=0)
    before = (transition - timedelta(microseconds=1)).astimezone(zone).utcoffset()
    assert before is not None
    return LocalizeResult(
        naive_local,
        tz,
        "gap",
        (),
        gap_start=(transition + before).replace(tzinfo=None),
        gap_end=(transition + off_second).replace(tzinfo=None),
        transition=transition,
        shifted=shifted,
    )


def _zone_from_path(path: str) -> str | None:
    marker = "zoneinfo/"
    if marker in path:
        return path.split(marker, 1)[1]
    return None


def _normalise_agent_zone(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip()
    if name in _UTC_ALIASES:
        return "UTC"
    return name if is_valid_zone(name) else None


def agent_timezone(
    environ: Mapping[str, str] | None = None,
    localtime: Path = Path("/etc/localtime"),
    timezone_file: Path = Path("/etc/timezone"),
) -> str:
    """The host's IANA zone (spec 000 §4.2 Agent TZ), or ``"UTC"`` when it cannot be told.

    Looks, in order, at the ``TZ`` environment variable (``Asia/Tokyo``, ``:Asia/Tokyo`` or
    a path into a ``zoneinfo`` directory), the ``/etc/localtime`` symlink target and the
    Debian-style ``/etc/timezone`` file. UTC aliases (``Etc/UTC``, ``Zulu``, ...) read as
    ``"UTC"``; legacy keys such as ``EST5EDT`` are skipped. The arguments exist for tests.
    """
    env = os.environ if environ is None else environ
    tz_var = env.get("TZ", "").lstrip(":")
    found = _normalise_agent_zone(_zone_from_path(tz_var) or tz_var)
    if found:
        return found
    try:
        if localtime.is_symlink():
            # Read one link level first: Etc/UTC may itself link on to a legacy key.
            for target in (os.readlink(localtime), str(localtime.resolve())):
                found = _normalise_agent_zone(_zone_from_path(target))
                if found:
                    return found
    except OSError:
        pass
    try:
        found = _normalise_agent_zone(timezone_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        found = None
    return found or "UTC"
