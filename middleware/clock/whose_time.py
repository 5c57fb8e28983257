"""Whether a group message names a time its members must agree on, so the block asks
whose time is meant when their clocks are far apart (spec 000 §0 ambiguity_threshold_hours,
§7.3: group scheduling is stored as absolute timestamps, UTC and each member's time).

A time the group plans by — a meeting, a call, a deadline ("let's meet at 3pm",
"standup tomorrow at 9", "due friday") — is read in the speaker's zone, which may not be
the reader's: whose hours are meant needs saying. The speaker's own day does not: a time
told of the past ("had a long day yesterday", "today was great"), one already over, or
the day or part of day under way said of how the speaker is ("so sore today", "I'm tired
today") with nothing in its sentence that arranges anything ("standup today", "free
today?", "due today" still ask). Spans of a week or more ("this week", "next month") mean
the same to everyone and a time the speaker pinned to their own zone ("5pm my time") is
already settled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from middleware.clock.parsing import ParseResult
from middleware.clock.tense import points_ahead, sentence_around, told_of_the_past

__all__ = ["WHOSE_HOURS_SPAN", "names_a_time_to_agree_on"]

# A span this long or longer ("this week", "next month") means the same to every member,
# however far apart their clocks are: whose hours are meant does not matter.
WHOSE_HOURS_SPAN = timedelta(days=7)
# "9am my time", "3pm my local time": the speaker pinned the message's times to their own
# zone, so in a group they are no one else's hours to confirm.
_SPEAKERS_OWN_TIME = re.compile(
    r"\bmy\s+(?:own\s+)?(?:local\s+)?(?:time(?:\s*zone)?|timezone|tz)\b", re.IGNORECASE
)
# Words that arrange something for a day under way: a meeting or an event, a deadline, a
# question of who is free. With none of them (nor a plan, ``tense.points_ahead``) "today"
# is the speaker's own day.
_ARRANGING = re.compile(
    r"\b(?:meet(?:ing|up)?s?|calls?|stand-?ups?|syncs?|due|deadlines?|by|until|till|before"
    r"|after|works?|free|available|plans?|schedul\w*|invites?|events?|party|dinner|lunch"
    r"|drinks|coffee|deploy\w*|releases?|launch\w*|ship\w*|demos?|reviews?|interviews?"
    r"|appointments?|class(?:es)?|starts?|begins?|ends?|opens?|closes?)\b",
    re.IGNORECASE,
)


def names_a_time_to_agree_on(text: str, expressions: Sequence[ParseResult], now: datetime) -> bool:
    """Does ``text``, said at ``now``, name a time whose hours differ between members far
    apart and that the group must agree on (see the module docstring)? ``expressions``
    are the time phrases found in it; one not found in ``text`` (an answer picked from an
    earlier message, "9pm" → "at 9") is the plan that message made."""
    if _SPEAKERS_OWN_TIME.search(text) is not None:
        return False
    cursor = 0
    for found in expressions:
        if not _hours_matter(found):
            continue
        start = text.find(found.matched_text, cursor)
        if start < 0:
            return True
        cursor = end = start + len(found.matched_text)
        if not _speakers_own_day(text, start, end, found, now):
            return True
    return False


def _hours_matter(found: ParseResult) -> bool:
    """Is ``found`` a time whose hours differ between members far apart: an instant or a
    span shorter than ``WHOSE_HOURS_SPAN``?"""
    if found.kind != "absolute":
        return False
    if found.start_instant is None or found.end_instant is None:
        return True
    return found.end_instant - found.start_instant < WHOSE_HOURS_SPAN


def _speakers_own_day(text: str, start: int, end: int, found: ParseResult, now: datetime) -> bool:
    """Is the phrase ``text[start:end]`` of the speaker's own day rather than a time to
    agree on: told of the past, over by ``now``, or the day under way said with nothing
    arranged?"""
    if told_of_the_past(text, start, end):
        return True
    if found.start_instant is None:  # asked about: which hour or day of a plan
        return False
    if (found.end_instant or found.start_instant) <= now:
        return True
    if found.end_instant is None or found.start_instant > now:
        return False
    sentence = sentence_around(text, start, end)
    return not points_ahead(sentence) and _ARRANGING.search(sentence) is None
