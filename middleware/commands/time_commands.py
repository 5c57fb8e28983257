"""``/tz`` and ``/time``: see and set your timezone, see the time for you (and the group)."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from datetime import datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from babel.dates import format_datetime

from middleware.clock.abbreviations import ABBREVIATIONS, clarification_for
from middleware.clock.places import lookup_place
from middleware.clock.stage import member_labels, member_time, said_verb, stated_location
from middleware.clock.temporal import ago
from middleware.clock.zones import format_offset, is_valid_zone, offset_minutes, valid_zones
from middleware.commands import Command, CommandHandler
from middleware.store import ClockData, StatedLocation, Store
from middleware.types import Turn

# Group members who spoke within this window are listed by /time.
GROUP_WINDOW = timedelta(days=14)
GROUP_LIMIT = 12


def local_time(instant: datetime, zone: str) -> str:
    """'Sat 21 Nov 2026 16:40 (Europe/Berlin, UTC+01:00)'."""
    stamp = format_datetime(instant, "EEE d MMM y HH:mm", tzinfo=ZoneInfo(zone), locale="en")
    return f"{stamp} ({zone}, {format_offset(offset_minutes(zone, instant))})"


# "UTC+5", "GMT-03:30", "+0530": an offset, not a zone.
_OFFSET = re.compile(r"(?:UTC|GMT)?\s*[+\-\u2212]\s*\d{1,2}(?::?\d{2})?", re.IGNORECASE)
_SEND_A_PLACE = "Send your city or a region id, e.g. /tz Europe/Berlin or /tz Lisbon"
# Keys that mean UTC (alone or after "Etc/"), casefolded.
_UTC_ALIASES = frozenset({"gmt", "gmt0", "gmt+0", "gmt-0", "greenwich", "uct", "universal", "zulu"})


@cache
def _zone_names() -> dict[str, str]:
    return {zone.casefold(): zone for zone in valid_zones()}


@cache
def _refused_zone_names() -> dict[str, str]:
    """Keys zoneinfo loads that the relay refuses (``Etc/GMT+2``, ``GMT``, ``EST5EDT``…)."""
    return {zone.casefold(): zone for zone in available_timezones() - valid_zones()}


def _refused_zone_problem(zone: str) -> str:
    """Why a tz key the relay refuses is refused, and what to send instead."""
    if zone.casefold().removeprefix("etc/") in _UTC_ALIASES:
        return (
            f"{zone} is UTC under another name: send /tz UTC, or /tz Europe/London for UK "
            "time (GMT in winter, BST in summer)."
        )
    if zone.startswith("Etc/"):
        # An Etc zone's offset is fixed: any instant gives it.
        offset = datetime(2000, 1, 1, tzinfo=ZoneInfo(zone)).utcoffset() or timedelta(0)
        return (
            f"{zone} is a fixed offset ({format_offset(int(offset.total_seconds()) // 60)}: "
            "Etc ids invert the sign), and offsets and Etc ids aren't accepted as timezones "
            f"because they ignore daylight saving. {_SEND_A_PLACE}."
        )
    return f"{zone} is a legacy alias, not a timezone I accept. {_SEND_A_PLACE}."


def resolve_zone_argument(argument: str) -> tuple[str | None, str]:
    """An IANA id or a place → (zone, '') or (None, what went wrong and what to do)."""
    text = argument.strip()
    exact = _zone_names().get(text.casefold().replace(" ", "_"))
    if exact is not None:
        return exact, ""
    if text.upper() in ABBREVIATIONS:
        return None, (
            f"{clarification_for(text.upper())} Abbreviations are ambiguous, so send the "
            "zone itself, e.g. /tz Asia/Kolkata, or your city."
        )
    if _OFFSET.fullmatch(text):
        return None, (
            f"'{text}' is an offset, and offsets aren't accepted as timezones because they "
            f"ignore daylight saving. {_SEND_A_PLACE} (or /tz UTC for UTC itself)."
        )
    place = lookup_place(text)
    if place.zone is not None:
        return place.zone, ""
    if place.ambiguous:
        options = ", ".join(place.candidates[:6])
        return None, (
            f"'{place.canonical_name}' could be several places ({options}). Send the zone "
            "you mean, e.g. /tz " + place.candidates[0]
        )
    refused = _refused_zone_names().get(text.casefold().replace(" ", "_"))
    if refused is not None:
        return None, _refused_zone_problem(refused)
    close = difflib.get_close_matches(text.casefold().replace(" ", "_"), _zone_names(), n=3)
    hint = ", ".join(_zone_names()[c] for c in close) if close else "Europe/Berlin, Asia/Tokyo"
    return None, (
        f"I don't know the timezone or place '{text}'. Try an IANA zone such as {hint}, "
        "or a bigger city nearby."
    )


def stated_zone_in_use(stated: StatedLocation, now: datetime, shown: str) -> str:
    """Why the zone in use is that of the place the user said (``stated``), as /tz and
    /whoami say it; ``shown`` is that zone as the command shows it."""
    return (
        f"You said you {said_verb(stated)} in {stated.place} ({ago(now - stated.said_at)}), "
        f"so I use its timezone for now: {shown}. /tz {stated.place} keeps it."
    )


def _stated(turn: Turn) -> StatedLocation | None:
    """The place the user said they are in, while it stands for their zone."""
    return stated_location(turn.prior, turn.received_at) if turn.prior else None


def _forget_location(data: ClockData) -> ClockData | None:
    return replace(data, located=None) if data.located is not None else None


def time_commands(store: Store) -> dict[str, CommandHandler]:
    """The handlers, keyed by command name."""

    async def tz(turn: Turn, command: Command) -> str:
        if not command.args:
            zone = turn.prior.user_tz if turn.prior else None
            stated = _stated(turn)
            if zone is None and stated is not None:
                shown = f"it's {local_time(turn.received_at, stated.zone)}"
                return "You haven't set a timezone. " + stated_zone_in_use(
                    stated, turn.received_at, shown
                )
            if zone is None:
                return (
                    "I don't know your timezone yet, so I assume UTC. Set it with "
                    "/tz <zone or city>, e.g. /tz Europe/Berlin or /tz Lisbon."
                )
            return f"Your timezone is {zone}. It's {local_time(turn.received_at, zone)} there."
        if command.args.lower() in ("clear", "reset", "none"):
            await store.set_user_timezone(turn.user_key, None)
            stated = _stated(turn)
            if stated is not None:
                # A place said since the zone was set stands for it now, not UTC.
                shown = f"it's {local_time(turn.received_at, stated.zone)}"
                return "Your timezone is cleared. " + stated_zone_in_use(
                    stated, turn.received_at, shown
                )
            return "Your timezone is cleared; I'll assume UTC and ask when it matters."
        zone, problem = resolve_zone_argument(command.args)
        if zone is None:
            return problem
        if not is_valid_zone(zone):
            # Every later turn reads the zone back: never store one the relay refuses.
            return f"{zone} is not a timezone I accept. {_SEND_A_PLACE}."
        await store.set_user_timezone(turn.user_key, zone)
        # Setting a zone settles where the user is: a place said before it no longer
        # stands for them (nor comes back as their zone if they clear it later).
        await store.update_clock_data(turn.user_key, _forget_location)
        return f"Your timezone is now {zone}. It's {local_time(turn.received_at, zone)} there."

    async def time(turn: Turn, command: Command) -> str:
        own = turn.prior.user_tz if turn.prior else None
        stated = _stated(turn)
        if own is None and stated is not None:
            lines = [
                f"It's {local_time(turn.received_at, stated.zone)} for you in {stated.place}, "
                f"where you said you {said_verb(stated)}. Set your timezone with /tz to keep it."
            ]
        elif own is None:
            lines = [
                f"It's {local_time(turn.received_at, 'UTC')}. I don't know your timezone — "
                "set it with /tz <zone or city>."
            ]
        else:
            lines = [f"It's {local_time(turn.received_at, own)} for you."]
            if stated is not None and stated.kind == "current" and stated.zone != own:
                # Said since the zone was set (``/tz`` forgets earlier places).
                lines.append(
                    f"You said you're in {stated.place} ({ago(turn.received_at - stated.said_at)})"
                    f": it's {local_time(turn.received_at, stated.zone)} there. "
                    f"/tz {stated.place} switches to it."
                )
        if turn.chat_type == "group":
            members = await store.group_participants(
                turn.thread_key, turn.received_at - GROUP_WINDOW, GROUP_LIMIT
            )
            labels = member_labels(members)
            for member in members:
                if member.user_key == turn.user_key:
                    continue
                shown = member_time(member, turn.received_at, label=labels[member.user_key])
                if shown.zone is None:
                    lines.append(f"{shown.label}: timezone unknown (they can set it with /tz)")
                    continue
                source = f", they said they {shown.said}" if shown.said else ""
                lines.append(f"{shown.label}: {local_time(turn.received_at, shown.zone)}{source}")
        return "\n".join(lines)

    return {"tz": tz, "time": time}
