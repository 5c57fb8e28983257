"""``/tz`` and ``/time``: see and set your timezone, see the time for you (and the group)."""

from __future__ import annotations

import difflib
from datetime import datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from babel.dates import format_datetime

from middleware.clock.abbreviations import ABBREVIATIONS, clarification_for
from middleware.clock.places import lookup_place
from middleware.clock.zones import format_offset, offset_minutes, valid_zones
from middleware.commands import Command, CommandHandler
from middleware.store import Store
from middleware.types import Turn

# Group members who spoke within this window are listed by /time.
GROUP_WINDOW = timedelta(days=14)
GROUP_LIMIT = 12


def local_time(instant: datetime, zone: str) -> str:
    """'Sat 21 Nov 2026 16:40 (Europe/Berlin, UTC+01:00)'."""
    stamp = format_datetime(instant, "EEE d MMM y HH:mm", tzinfo=ZoneInfo(zone), locale="en")
    return f"{stamp} ({zone}, {format_offset(offset_minutes(zone, instant))})"


@cache
def _zone_names() -> dict[str, str]:
    return {zone.casefold(): zone for zone in valid_zones()}


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
    place = lookup_place(text)
    if place.zone is not None:
        return place.zone, ""
    if place.ambiguous:
        options = ", ".join(place.candidates[:6])
        return None, (
            f"'{place.canonical_name}' could be several places ({options}). Send the zone "
            "you mean, e.g. /tz " + place.candidates[0]
        )
    close = difflib.get_close_matches(text.casefold().replace(" ", "_"), _zone_names(), n=3)
    hint = ", ".join(_zone_names()[c] for c in close) if close else "Europe/Berlin, Asia/Tokyo"
    return None, (
        f"I don't know the timezone or place '{text}'. Try an IANA zone such as {hint}, "
        "or a bigger city nearby."
    )


def time_commands(store: Store) -> dict[str, CommandHandler]:
    """The handlers, keyed by command name."""

    async def tz(turn: Turn, command: Command) -> str:
        if not command.args:
            zone = turn.prior.user_tz if turn.prior else None
            if zone is None:
                return (
                    "I don't know your timezone yet, so I assume UTC. Set it with "
                    "/tz <zone or city>, e.g. /tz Europe/Berlin or /tz Lisbon."
                )
            return f"Your timezone is {zone}. It's {local_time(turn.received_at, zone)} there."
        if command.args.lower() in ("clear", "reset", "none"):
            await store.set_user_timezone(turn.user_key, None)
            return "Your timezone is cleared; I'll assume UTC and ask when it matters."
        zone, problem = resolve_zone_argument(command.args)
        if zone is None:
            return problem
        await store.set_user_timezone(turn.user_key, zone)
        return f"Your timezone is now {zone}. It's {local_time(turn.received_at, zone)} there."

    async def time(turn: Turn, command: Command) -> str:
        own = turn.prior.user_tz if turn.prior else None
        if own is None:
            lines = [
                f"It's {local_time(turn.received_at, 'UTC')}. I don't know your timezone — "
                "set it with /tz <zone or city>."
            ]
        else:
            lines = [f"It's {local_time(turn.received_at, own)} for you."]
        if turn.chat_type == "group":
            members = await store.group_participants(
                turn.thread_key, turn.received_at - GROUP_WINDOW, GROUP_LIMIT
            )
            for member in members:
                if member.user_key == turn.user_key:
                    continue
                name = member.display_name or member.user_key
                if member.default_tz is None:
                    lines.append(f"{name}: timezone unknown (they can set it with /tz)")
                else:
                    lines.append(f"{name}: {local_time(turn.received_at, member.default_tz)}")
        return "\n".join(lines)

    return {"tz": tz, "time": time}
