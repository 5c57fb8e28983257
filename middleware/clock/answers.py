"""A reply that answers the relay's own "09:00 or 21:00?" question.

For a bare hour ("see you at 9") the block asks the model to ask the user which side of
noon is meant. The answer comes alone in the next message: "9am", "9pm", "the morning
one", "evening". Read by itself it is a new time (a bare "9am" is the next 09:00, maybe
not on the day asked about; "the morning one" is no time at all), so the clock reads it
against the question's candidates, taken again from the previous user message. A range
of hours is asked about the same way ("02:00 to 04:00 or 14:00 to 16:00?"); its answer is
the range it picks, as long as the user's own phrase made it (each end the wall time in
the zone, so a range across a DST change is its real length), whatever words the
question was put in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from middleware.clock.parsing import ParseResult
from middleware.clock.zones import get_zone, is_valid_zone

__all__ = ["answers_hour_choice", "pick_hour"]

_MORNING = "morning|am|a\\.m\\.?|first|earlier|early"
_EVENING = "afternoon|evening|night|tonight|pm|p\\.m\\.?|second|later|late"
# The whole message is the answer: a side of noon in words, or a clock time that names it
# ("9am", "21:00"), with at most a few words around it ("the morning one, thanks").
_ANSWER = re.compile(
    r"^\W*(?:(?:yes|ok|okay|oh|sorry)\W+)?(?:i\s+meant?\s+|in\s+the\s+|at\s+|the\s+)*"
    rf"(?:(?P<morning>{_MORNING})|(?P<evening>{_EVENING})"
    r"|(?P<h>\d{1,2})(?::(?P<m>\d\d))?\s*(?P<ap>[ap])?\.?m?\.?)"
    r"(?:\s+(?:one|please|pls|thanks|thank\s+you|then|obviously|of\s+course))*\W*$",
    re.IGNORECASE,
)
_TWELVE_HOURS = timedelta(hours=12)


def answers_hour_choice(text: str) -> bool:
    """Cheap check: could ``text`` be nothing but the answer to "09:00 or 21:00?". A bare
    hour on the dial ("9", "10") cannot be (it is the question again), so it costs no
    look at the previous message."""
    match = _ANSWER.match(text) if len(text) <= 48 else None
    return match is not None and not _is_bare_dial_hour(match)


def pick_hour(answer: str, asked: Sequence[ParseResult]) -> ParseResult | None:
    """The instant ``answer`` picks from the last hour-of-the-dial question in ``asked``
    (the previous message's phrases), as a resolved phrase; ``None`` when there was no
    such question or the answer names another hour."""
    match = _ANSWER.match(answer)
    question = next((found for found in reversed(asked) if _is_dial(found)), None)
    if match is None or question is None:
        return None
    morning, evening = question.candidates
    if _is_bare_dial_hour(match):
        return None
    if match["h"] is not None:
        hour, minute = int(match["h"]), int(match["m"] or 0)
        side = match["ap"].lower() if match["ap"] else None
        chosen = evening if side == "p" or hour >= 12 else morning
        if not _shows(chosen, question.zone, hour % 12, minute):
            return None
    else:
        chosen = morning if match["morning"] else evening
    return ParseResult("absolute", start_instant=chosen, end_instant=_range_end(question, chosen),
                       matched_text=answer.strip(), zone=question.zone)  # fmt: skip


def _range_end(question: ParseResult, chosen: datetime) -> datetime | None:
    """The end of the range of hours ``chosen`` starts, as the user's phrase gave it
    ("between 2 and 4": 16:00 for 14:00); None when the question was between hours."""
    if not question.candidate_ends:
        return None
    return question.candidate_ends[question.candidates.index(chosen)]


def _is_bare_dial_hour(match: re.Match[str]) -> bool:
    """ "9" answers nothing: it is the question again (13 and later name their side)."""
    return match["h"] is not None and not match["ap"] and int(match["h"]) < 13


def _is_dial(found: ParseResult) -> bool:
    """A question between the same hour on either side of noon, on one day: twelve hours
    apart on the wall clock, which on the day the clocks change is 11 or 13 elapsed."""
    pair = found.candidates
    if not found.needs_clarification or len(pair) != 2 or found.zone is None:
        return False
    first, second = (_wall_time(instant, found.zone) for instant in pair)
    return second - first == _TWELVE_HOURS


def _wall_time(instant: datetime, zone: str) -> datetime:
    """``instant`` as the naive wall time in ``zone``; a zone that is only an offset label
    keeps UTC, whose hours are as far apart."""
    if not is_valid_zone(zone):
        return instant.replace(tzinfo=None)
    return instant.astimezone(get_zone(zone)).replace(tzinfo=None)


def _shows(instant: datetime, zone: str | None, hour: int, minute: int) -> bool:
    """Does ``instant`` read ``hour``:``minute`` (on the 12-hour dial) in ``zone``? A
    zone that is only an offset label is not checked."""
    if zone is None or not is_valid_zone(zone):
        return True
    local = instant.astimezone(get_zone(zone))
    return (local.hour % 12, local.minute) == (hour, minute)
