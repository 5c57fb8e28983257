"""The date part of a time phrase ("tomorrow", "next Tuesday", "22 Nov", "03/04"), read
through dateparser and checked against the text, and the small text helpers that cut a
clock time out of a phrase and tidy what is left for it (``wallclock.py`` reads the
clock time; its docstring says how each phrase is read).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from dateparser.date import DateDataParser

__all__ = ["APPROXIMATELY", "cut", "read_date", "tidy"]

_FILLER = re.compile(r"^(?:(?:at|by|around|about|before|after|until|till|til|on|@)(?:\s+|$))+")
# Words that only say a clock time is rough ("friday around 3pm", "3/20 sometime about
# 3"): what is left of the date part once the time is cut out must not end on one.
APPROXIMATELY = re.compile(
    r"(?:\s+(?:at|@|around|about|approx(?:imately|\.)?|roughly|~|sometime|circa))+$"
)
_NUMERIC_DATE = re.compile(r"(?<![\d:])(\d{1,4})[/.-](\d{1,2})(?:[/.-](\d{2,4}))?(?![\d:])")
_MONTH_NAME = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b")
_EXPLICIT_YEAR = re.compile(r"\b\d{4}\b")
# dateparser reads "2 hours" as "2 hours ago"; a duration alone names no time.
_BARE_DURATION = re.compile(r"(?:\d+(?:\.\d+)?|an?)\s*(?:sec|min|h|hour|hr|day|week|month|year)s?")


def _parse_date_part(
    text: str, base: datetime, date_order: str, past: bool
) -> tuple[datetime, str] | None:
    settings: dict[str, Any] = {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": "past" if past else "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
        "TIMEZONE": "UTC",  # a label only: input and output are naive wall times
        "DATE_ORDER": date_order,
        "PREFER_LOCALE_DATE_ORDER": False,
        "RETURN_TIME_AS_PERIOD": True,
        "PARSERS": ["relative-time", "absolute-time"],
    }
    data = DateDataParser(languages=["en"], settings=settings).get_date_data(text)
    if data.date_obj is None or data.period is None:
        return None
    return data.date_obj, str(data.period)


def _numeric_date_agrees(text: str, found: date, date_order: str) -> bool:
    """dateparser turns impossible numeric dates into odd ones ("11/21" in DMY became the
    year 2121); accept a result only if its month and day are the ones written, read in
    ``date_order`` (or the other way round when that order is impossible, as "22.11")."""
    match = _NUMERIC_DATE.search(text)
    if match is None:
        return True
    first, second, third = match.groups()
    if len(first) == 4:
        readings = [(int(first), int(second), int(third or 0))]
        has_year = third is not None
    else:
        year = int(third or 0) + (2000 if third is not None and len(third) == 2 else 0)
        has_year = third is not None
        day_first = (year, int(second), int(first))
        month_first = (year, int(first), int(second))
        # YMD locales write two-part dates month/day, as MDY ones do.
        readings = [day_first, month_first] if date_order == "DMY" else [month_first, day_first]
        if readings[0][1] <= 12:
            readings = readings[:1]
    return any(
        (found.month, found.day) == (month, day) and (not has_year or found.year == year)
        for year, month, day in readings
    )


def read_date(
    text: str, base: datetime, date_order: str, past: bool = False
) -> tuple[datetime, str] | None:
    """Date part through dateparser, checked and corrected; None if unusable."""
    if _BARE_DURATION.fullmatch(text):
        return None
    parsed = _parse_date_part(text, base, date_order, past)
    if parsed is None:
        return None
    value, period = parsed
    if not _numeric_date_agrees(text, value.date(), date_order):
        return None
    # "nov 21" said on 21 November is today, not next year (or, told of the past, last
    # year): dateparser's preference for one side is strict.
    written_date = _MONTH_NAME.search(text) or _NUMERIC_DATE.search(text)
    away = -1 if past else 1
    if written_date and not _EXPLICIT_YEAR.search(text) and value.year == base.year + away:
        if (value.month, value.day) == (base.month, base.day):
            value = value.replace(year=base.year)
    return value, period


def cut(text: str, match: re.Match[str]) -> str:
    return f"{text[: match.start()]} {text[match.end() :]}"


def tidy(text: str) -> str:
    text = re.sub(r"[,;]|(?<=\d)t\b", " ", text)
    text = " ".join(text.split())
    return _FILLER.sub("", text).strip()
