"""The naive wall-clock answer the phrase readers share (``wallclock.py``,
``weekdays.py``, ``small_hours.py``), and how their questions name a day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

__all__ = ["LocalReading", "describe_day"]


@dataclass(frozen=True)
class LocalReading:
    """Naive wall-clock meaning of a phrase.

    * ``"point"``: ``times == (t,)``.
    * ``"span"``: ``times == (start, end)``, end exclusive; both at local midnight but
      for today's part of day under way or over (``parts_of_day.py``).
    * ``"choice"``: ``times`` are the candidates; ``question`` asks the user to pick.
      When the candidates are spans ("between 2 and 4": 02:00 to 04:00 or 14:00 to
      16:00), ``ends`` holds the end of each, in the same order.
    """

    kind: Literal["point", "span", "choice"]
    times: tuple[datetime, ...]
    question: str | None = None
    ends: tuple[datetime, ...] = ()


def describe_day(day: date) -> str:
    """``"Sunday 22 November"`` - how questions name a date."""
    return f"{day:%A} {day.day} {day:%B}"
