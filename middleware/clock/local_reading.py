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
    * ``"span"``: ``times == (start, end)``, both at local midnight, end exclusive.
    * ``"choice"``: ``times`` are the candidates; ``question`` asks the user to pick.
    """

    kind: Literal["point", "span", "choice"]
    times: tuple[datetime, ...]
    question: str | None = None


def describe_day(day: date) -> str:
    """``"Sunday 22 November"`` - how questions name a date."""
    return f"{day:%A} {day.day} {day:%B}"
