"""How long a remembered fact said with a relative time holds: "Is in Lisbon this week",
"Has a dentist appointment tomorrow" are true of the week or the day they were said in,
not of every later one (spec 003 §5.1: an event is tied to its date).

The period is read from the text and anchored to when the fact was last said, in the
reader's timezone; it ends at a local midnight. A fact with no such words has no period.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo

__all__ = ["period_end"]

_PERIOD = re.compile(
    r"\b(?:(?P<day>today|tonight|this\s+(?:morning|afternoon|evening))"
    r"|(?P<tomorrow>tomorrow|tmrw|tomoz)"
    r"|(?P<which>this|next)\s+(?P<unit>week(?:end)?|month|year))\b",
    re.IGNORECASE,
)


def period_end(text: str, said_at: datetime, tz: tzinfo) -> datetime | None:
    """When the period ``text`` names ("today", "tomorrow", "this week", "next month"…),
    counted from ``said_at`` in ``tz``, is over; None when it names none. A text naming
    several holds until the last of them ends."""
    said = said_at.astimezone(tz).date()
    ends = [_end_of(match, said) for match in _PERIOD.finditer(text)]
    if not ends:
        return None
    return datetime.combine(max(ends), time(), tzinfo=tz)


def _end_of(match: re.Match[str], said: date) -> date:
    """The first day after the period ``match`` names, counted from the day ``said``."""
    if match["day"]:
        return said + timedelta(days=1)
    if match["tomorrow"]:
        return said + timedelta(days=2)
    ahead = 1 if match["which"].lower() == "next" else 0
    unit = match["unit"].lower()
    if unit.startswith("week"):
        # A weekend is the end of its week: both are over when the Monday after comes.
        return said - timedelta(days=said.weekday()) + timedelta(weeks=1 + ahead)
    if unit == "month":
        month = said.month + ahead  # 1…13
        year, month = said.year + month // 12, month % 12 + 1
        return date(year, month, 1)
    return date(said.year + 1 + ahead, 1, 1)
