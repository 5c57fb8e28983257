"""Activity templates: how long common activities take and how to ask about them afterwards.

A latest action (spec 000 §6) that names a known activity gets an expected duration window
from its template — past ``typical_minutes`` it reads as ``likely_done`` — and a hedged
follow-up ``question`` for when the user comes back (§6.5: "did you end up getting some
sleep?"). A user's own numbers (spec 000 §10.2 ``calibration.activity_overrides``) win
over the template's.

Matching is by keyword, English first; the table is ordered most specific first, so
"cook dinner" is cooking rather than dinner and "call the bank" is a call, not an errand.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType
from typing import Any

__all__ = ["TEMPLATES", "ActivityTemplate", "expected_minutes", "match_activity", "said_minutes"]

_DAY = timedelta(hours=24)
# The longest duration a calibration may hold for an activity: a week.
MAX_CALIBRATED_MINUTES = 7 * 24 * 60


@dataclass(frozen=True, slots=True)
class ActivityTemplate:
    """One activity: its key (as stored in ``Action.activity``), duration window, TTL for
    an open action of this kind, follow-up question, and the words that name it."""

    key: str
    typical_minutes: int
    max_minutes: int
    ttl: timedelta
    question: str
    keywords: re.Pattern[str]
    # A keyword right after these words does not name the activity: booking a doctor's
    # appointment is not the visit. Searched at the end of the text before the keyword.
    not_after: re.Pattern[str] | None = None

    def named_in(self, text: str) -> bool:
        """Whether ``text`` names this activity: a keyword not right after ``not_after``."""
        return any(
            self.not_after is None or not self.not_after.search(text, 0, found.start())
            for found in self.keywords.finditer(text)
        )


def _template(
    key: str,
    typical: int,
    maximum: int,
    question: str,
    keywords: str,
    ttl: timedelta = _DAY,
    not_after: str | None = None,
) -> ActivityTemplate:
    # Whole words/phrases only; ``keywords`` is a regex alternation so plurals can be optional.
    pattern = re.compile(rf"\b(?:{keywords})\b", re.IGNORECASE)
    before = re.compile(rf"\b(?:{not_after})\s+$", re.IGNORECASE) if not_after else None
    return ActivityTemplate(key, typical, maximum, ttl, question, pattern, before)


# Most specific first: match_activity returns the first template whose keywords match.
_ORDERED = (
    _template(
        "nap",
        30,
        120,
        "did you manage to get a nap in?",
        r"(?:power\s+)?nap(?:s|ping)?|napped|siesta|lie\s+down",
        ttl=timedelta(hours=4),
    ),
    _template(
        "sleep",
        480,
        720,
        "did you end up getting some sleep?",
        r"sleep(?:ing)?|slept|bed(?:time)?|hit\s+the\s+(?:hay|sack)|turn\s+in",
        ttl=timedelta(hours=12),
    ),
    # Getting to the airport and through it, then the flight: the question is whether
    # they made it, which is all the relay can hope to know.
    _template(
        "flight",
        180,
        720,
        "did you make your flight okay?",
        r"airport|flights?|fl(?:y|ying|ew)\s+(?:to|out|home|back)|flying|(?:catch(?:ing)?|board(?:ing)?|take|taking)\s+(?:a|my|the)\s+plane"
        r"|boarding",
    ),
    _template(
        "cooking",
        60,
        150,
        "how did the cooking turn out?",
        r"cook(?:s|ing|ed)?|bak(?:e|es|ing|ed)|mak(?:e|ing)\s+(?:dinner|lunch|breakfast)"
        r"|meal[\s-]?prep(?:ping)?",
    ),
    _template("meal:breakfast", 30, 90, "how was breakfast?", "breakfast"),
    _template("meal:lunch", 45, 120, "how was lunch?", "lunch"),
    _template("meal:dinner", 75, 180, "how was dinner?", "dinner|supper"),
    _template(
        "call",
        20,
        90,
        "did the call happen — how did it go?",
        # "call it a night" is not a phone call
        r"(?:phone|video|zoom|conference)\s+call|call(?:s|ed|ing)?(?!\s+it\b)|facetime"
        r"|ring(?:ing)?\s+(?:the|my)",
    ),
    _template(
        "meeting",
        60,
        180,
        "how did the meeting go?",
        r"meetings?|stand-?ups?|interview|1:1|one[\s-]on[\s-]one",
    ),
    # A doctor's, dentist's or vet's visit, or any appointment: the wait is part of it.
    _template(
        "appointment",
        60,
        180,
        "how did the appointment go?",
        r"appointments?|doctor'?s?|dentist'?s?|gp|vet'?s?|check-?up|physio(?:therapy)?"
        r"|therapy|therapist|hospital|clinic|haircut|hairdresser'?s?|barber'?s?",
        # Booking, moving or cancelling one is a call or an errand, not the visit: "book a
        # doctor's appointment", "need to book the dentist", "make a dentist appointment".
        not_after=r"(?:book\w*|mak(?:e|es|ing)|made|(?:re)?schedul\w*|cancel\w*|arrang\w*"
        r"|set(?:ting)?\s+up)(?:\s+(?:a|an|the|my|our|another|new|that))?(?:\s+[\w']+){0,2}?",
    ),
    _template(
        "gym",
        120,
        240,
        "how did the gym go?",
        r"gym|work(?:ing)?\s?out|workouts?|training|lift(?:ing)?\s+weights|lifting|weights"
        r"|crossfit",
    ),
    _template(
        "errand",
        60,
        180,
        "did you get your errands done?",
        r"errands?|shopping|groceries|grocery(?:\s+store)?|supermarket|bank|post\s+office"
        r"|pharmacy|drugstore|the\s+store|mall",
    ),
    _template(
        "run",
        45,
        120,
        "how was the run?",
        # bare "run" is too often something else ("run the tests", "gotta run")
        r"(?:a|my|the)\s+run|running|jog(?:ging)?|(?:5|10)k|(?:half\s+)?marathon"
        r"|run\s+\d+(?:\.\d+)?\s*(?:k|km|mi|miles?)",
    ),
    _template("walk", 30, 120, "how was the walk?", r"walk(?:s|ing)?|stroll|dog\s+out"),
    _template("shower", 15, 45, "did you get your shower in?", r"shower(?:ing)?|bath"),
    _template(
        "commute",
        45,
        180,
        "did you make it okay?",
        r"commut(?:e|ing)|driv(?:e|ing)|train|bus|subway|metro|tram|on\s+my\s+way|omw"
        r"|(?:head(?:ing)?|headed|going|way|ride|drive)\s+home",
    ),
    _template(
        "school_run",
        30,
        90,
        "did the school run go okay?",
        r"school\s+run|(?:pick(?:s|ing)?|collect(?:s|ing)?|fetch(?:es|ing)?|drop(?:s|ping)?)"
        r"\s+(?:up\s+|off\s+)?(?:the\s+)?(?:kids|children|son|daughter|boys|girls)"
        r"(?:\s+(?:up|off))?",
    ),
    # After the commute: "a ride home" is going home.
    _template(
        "ride",
        90,
        240,
        "how was the ride?",
        r"(?:bike|cycle|horse)\s+ride|(?:a|my|the)\s+ride|cycling|biking|spin\s+class",
    ),
    _template(
        "swim",
        60,
        120,
        "how was the swim?",
        r"swim(?:s|ming)?|swam|(?:the|a)\s+pool|(?:a\s+few\s+|some\s+)?laps",
    ),
    _template(
        "study",
        120,
        300,
        "how did studying go?",
        r"stud(?:y|ying)|homework|revis(?:e|ing|ion)|exams?|lectures?|class",
    ),
    _template(
        "night_out",
        240,
        480,
        "how was the night out?",
        r"part(?:y|ying)|drinks|going\s+(?:out|drinking)|night\s+out|bar|pub|club(?:bing)?"
        r"|late\s+night",
    ),
    _template(
        "meal",
        30,
        120,
        "did you end up eating?",
        r"eat(?:ing)?|ate|food|snacks?|meal|brunch|coffee|chug(?:ging)?|drink(?:ing)?|milk"
        r"|pizza|takeout",
    ),
    # A moment away ("brb", "back in 10"): any later message is the return, so it lives
    # an hour and is never looked back on after a long gap ("did you end up getting to
    # be right back?" three hours on).
    _template(
        "brb",
        10,
        60,
        "all sorted with what you stepped away for?",
        r"brb|be\s+right\s+back",
        ttl=timedelta(hours=1),
    ),
)

TEMPLATES: Mapping[str, ActivityTemplate] = MappingProxyType({t.key: t for t in _ORDERED})


def match_activity(text: str) -> ActivityTemplate | None:
    """The most specific template whose keywords occur in ``text`` (case-insensitive,
    whole words), or None. "about to eat dinner" is ``meal:dinner``, not ``meal``."""
    for template in _ORDERED:
        if template.named_in(text):
            return template
    return None


def expected_minutes(template: ActivityTemplate, calibration: Mapping[str, Any]) -> tuple[int, int]:
    """``(typical, max)`` minutes for ``template``, a user's calibration winning.

    ``calibration`` is spec 000 §10.2's ``calibration`` object. A malformed override (not a
    mapping, a non-positive or non-numeric ``typical_minutes``) is ignored; a missing or
    too-small ``max_minutes`` becomes the larger of the template's max and the typical.
    """
    overrides = calibration.get("activity_overrides")
    entry = overrides.get(template.key) if isinstance(overrides, Mapping) else None
    if not isinstance(entry, Mapping):
        return template.typical_minutes, template.max_minutes
    typical = _positive(entry.get("typical_minutes"))
    if typical is None:
        return template.typical_minutes, template.max_minutes
    maximum = _positive(entry.get("max_minutes"))
    if maximum is None:
        maximum = max(template.max_minutes, typical)
    return typical, max(maximum, typical)


def said_minutes(minutes: int, template: ActivityTemplate | None) -> tuple[int, int]:
    """``(typical, max)`` minutes for an activity the user says lasts (or took) ``minutes``
    ("in a meeting for an hour", "the gym took 2 hours"): that long, and at most 1.5×
    that, never less than the template's maximum."""
    floor = template.max_minutes if template else 0
    return minutes, max(floor, math.ceil(minutes * 1.5))


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    # the upper bound keeps inf (and absurd values) out of int()
    return int(value) if 1 <= value <= MAX_CALIBRATED_MINUTES else None
