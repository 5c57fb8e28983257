"""parse_anchored_time / find_time_expressions against hand-computed instants.

Every expected instant is written out as ISO text with the local offset, worked out by
hand from the reference instant; nothing here asks the code under test for the answer.

Reference instant REF = 2026-11-21T15:40:00Z, a Saturday. Local "now" in each zone:
Tokyo Sun 00:40 (+09:00), Berlin Sat 16:40 (+01:00), New York Sat 10:40 (-05:00),
Los Angeles Sat 07:40 (-08:00), Kathmandu Sat 21:25 (+05:45), Kolkata Sat 21:10 (+05:30),
Lord Howe Sun 02:40 (+11:00, DST), Chatham Sun 05:25 (+13:45, DST), Sao Paulo Sat 12:40
(-03:00), UTC Sat 15:40.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.clock.finding import (
    _CAPITAL_MONTH_DAY,
    _TIMEISH,
    find_time_expressions,
    looks_timeish,
)
from middleware.clock.mentions import iana_place_zone
from middleware.clock.parsing import (
    ParseResult,
    date_order_for_locale,
    parse_anchored_time,
)
from middleware.clock.places import lookup_place

REF = datetime(2026, 11, 21, 15, 40, tzinfo=UTC)  # Saturday
SUNDAY = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # Berlin Sun 13:00
MONDAY = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)  # New York Mon 03:00
TUESDAY = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)  # Tokyo Tue 12:00
BEFORE_NY_SPRING = datetime(2026, 3, 7, 15, 0, tzinfo=UTC)  # NY Sat 10:00 EST
BEFORE_BERLIN_SPRING = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
BEFORE_BERLIN_FALL = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Case:
    text: str
    tz: str | None
    kind: str
    start: str | None = None
    end: str | None = None
    clarify: bool = False
    candidates: tuple[str, ...] = ()
    ref: datetime = REF
    options: Mapping[str, Any] = field(default_factory=dict)
    zone: str | None = None


def iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def case(*args: Any, id: str | None = None, **kwargs: Any) -> Any:  # noqa: A002
    built = Case(*args, **kwargs)
    return pytest.param(built, id=id or f"{built.text}|{built.tz}")


def floating(text: str, tz: str | None) -> Any:
    """A wall-clock phrase that cannot become instants: no zone, or an unresolved
    abbreviation."""
    return case(text, tz, "floating", clarify=True)


CASES = [
    # --- relative: exact durations from the reference instant, no zone needed ---------
    case("in 2 hours", None, "relative", "2026-11-21T17:40:00+00:00"),
    case("in 30 minutes", "Asia/Tokyo", "relative", "2026-11-22T01:10:00+09:00"),
    case("2 days ago", None, "relative", "2026-11-19T15:40:00+00:00"),
    case("in an hour", "Europe/Berlin", "relative", "2026-11-21T17:40:00+01:00"),
    case("in 1.5 hours", None, "relative", "2026-11-21T17:10:00+00:00"),
    case("3 weeks ago", "UTC", "relative", "2026-10-31T15:40:00+00:00"),
    case("in half an hour", None, "relative", "2026-11-21T16:10:00+00:00"),
    case("now", None, "relative", "2026-11-21T15:40:00+00:00"),
    case("in 3 months", "Europe/Berlin", "relative", "2027-02-21T16:40:00+01:00"),
    # Days and weeks are calendar days in the Session TZ: across the spring-forward night
    # 10:00 EST + 1 day is 10:00 EDT (23 h later), as "in a month" keeps 10:00 too.
    case(
        "in 1 day",
        "America/New_York",
        "relative",
        "2026-03-08T10:00:00-04:00",
        ref=BEFORE_NY_SPRING,
    ),  # fmt: skip
    case(
        "in 2 days",
        "Europe/Berlin",
        "relative",
        "2026-03-30T13:00:00+02:00",
        ref=BEFORE_BERLIN_SPRING,
    ),  # fmt: skip
    case(
        "in a week",
        "Europe/Berlin",
        "relative",
        "2026-10-31T14:00:00+01:00",
        ref=BEFORE_BERLIN_FALL,
    ),  # fmt: skip
    case(
        "2 days ago",
        "Europe/Berlin",
        "relative",
        "2026-03-27T13:00:00+01:00",
        ref=datetime(2026, 3, 29, 11, 0, tzinfo=UTC),
    ),  # fmt: skip
    # Hours stay exact across the same night: 13:00 CET + 48 h = 14:00 CEST.
    case(
        "in 48 hours",
        "Europe/Berlin",
        "relative",
        "2026-03-30T14:00:00+02:00",
        ref=BEFORE_BERLIN_SPRING,
    ),  # fmt: skip
    # --- floating: wall-clock phrases with no zone are not parsed into instants --------
    floating("tomorrow at 9am", None),
    floating("2026-11-22 14:30", None),
    floating("noon", None),
    floating("tonight", None),
    floating("on Monday", None),
    floating("end of day", None),
    # --- absolute, anchored to the Session TZ -------------------------------------------
    # 00:40 on Sunday in Tokyo: "tomorrow" may be the day just begun (wallclock.py).
    case(
        "tomorrow at 9am",
        "Asia/Tokyo",
        "absolute",
        clarify=True,
        candidates=("2026-11-22T09:00:00+09:00", "2026-11-23T09:00:00+09:00"),
    ),  # fmt: skip
    case("on Monday at 9am", "Asia/Tokyo", "absolute", "2026-11-23T09:00:00+09:00"),
    case("tomorrow at 9am", "America/New_York", "absolute", "2026-11-22T09:00:00-05:00"),
    case("9am", "America/New_York", "absolute", "2026-11-22T09:00:00-05:00"),  # passed
    case("9am", "Asia/Tokyo", "absolute", "2026-11-22T09:00:00+09:00"),
    case("3pm", "Europe/Berlin", "absolute", "2026-11-22T15:00:00+01:00"),
    case("5pm", "Europe/Berlin", "absolute", "2026-11-21T17:00:00+01:00"),
    case("today at 9am", "America/Los_Angeles", "absolute", "2026-11-21T09:00:00-08:00"),
    case("today at 9am", "Europe/Berlin", "absolute", "2026-11-21T09:00:00+01:00"),
    case("noon", "America/Los_Angeles", "absolute", "2026-11-21T12:00:00-08:00"),
    case("noon", "Asia/Kolkata", "absolute", "2026-11-22T12:00:00+05:30"),
    case("midnight", "Asia/Kathmandu", "absolute", "2026-11-22T00:00:00+05:45"),
    case("midnight", "UTC", "absolute", "2026-11-22T00:00:00+00:00"),
    case("midnight tonight", "America/Sao_Paulo", "absolute", "2026-11-22T00:00:00-03:00"),
    case("end of day", "Pacific/Chatham", "absolute", "2026-11-22T23:59:00+13:45"),
    case("end of day", "America/New_York", "absolute", "2026-11-21T23:59:00-05:00"),
    case("end of day friday", "Europe/Berlin", "absolute", "2026-11-27T23:59:00+01:00"),
    case("tonight", "Europe/Berlin", "absolute", "2026-11-21T20:00:00+01:00"),
    case("tonight at 9", "Europe/Berlin", "absolute", "2026-11-21T21:00:00+01:00"),
    case("tomorrow evening at 8", "America/Los_Angeles", "absolute", "2026-11-22T20:00:00-08:00"),
    case(
        "tomorrow morning",
        "Australia/Lord_Howe",  # 02:40 there
        "absolute",
        clarify=True,
        candidates=("2026-11-22T09:00:00+11:00", "2026-11-23T09:00:00+11:00"),
    ),  # fmt: skip
    case("monday morning", "Australia/Lord_Howe", "absolute", "2026-11-23T09:00:00+11:00"),
    case("next Tuesday evening", "Europe/Berlin", "absolute", "2026-11-24T18:00:00+01:00"),
    case("2026-11-22 14:30", "Asia/Tokyo", "absolute", "2026-11-22T14:30:00+09:00"),
    case("2026-11-22 14:30", "Asia/Kathmandu", "absolute", "2026-11-22T14:30:00+05:45"),
    case("friday at 3pm", "America/Sao_Paulo", "absolute", "2026-11-27T15:00:00-03:00"),
    case("nov 21 at 14:00", "America/New_York", "absolute", "2026-11-21T14:00:00-05:00"),
    case("12/25 at 6pm", "America/Los_Angeles", "absolute", "2026-12-25T18:00:00-08:00"),
    case("at 18", "Europe/Berlin", "absolute", "2026-11-21T18:00:00+01:00"),
    # Dates without a time are the whole local day (or week, month): [start, end).
    case(
        "tomorrow",
        "Pacific/Chatham",
        "absolute",
        "2026-11-23T00:00:00+13:45",
        "2026-11-24T00:00:00+13:45",
    ),  # fmt: skip
    case(
        "next week",
        "Europe/Berlin",
        "absolute",
        "2026-11-23T00:00:00+01:00",
        "2026-11-30T00:00:00+01:00",
    ),  # fmt: skip
    case("in march", "UTC", "absolute", "2027-03-01T00:00:00+00:00", "2027-04-01T00:00:00+00:00"),
    # The 8 March spring-forward day is 23 hours long.
    case(
        "2026-03-08",
        "America/New_York",
        "absolute",
        "2026-03-08T00:00:00-05:00",
        "2026-03-09T00:00:00-04:00",
    ),  # fmt: skip
    # --- a zone in the text wins over the Session TZ -----------------------------------
    case("14:30 Tokyo time", None, "absolute", "2026-11-22T14:30:00+09:00", zone="Asia/Tokyo"),
    case(
        "14:30 Tokyo time",
        "America/New_York",
        "absolute",
        "2026-11-22T14:30:00+09:00",
        zone="Asia/Tokyo",
    ),  # fmt: skip
    case("9am UTC+9", None, "absolute", "2026-11-22T09:00:00+09:00", zone="UTC+09:00"),
    case("at 10:00+05:45", None, "absolute", "2026-11-22T10:00:00+05:45", zone="UTC+05:45"),
    case("2026-11-22T09:00:00+09:00", "Europe/Berlin", "absolute", "2026-11-22T09:00:00+09:00"),
    case(
        "3pm in Berlin", "Asia/Tokyo", "absolute", "2026-11-22T15:00:00+01:00", zone="Europe/Berlin"
    ),  # fmt: skip
    case("9am Europe/Berlin", None, "absolute", "2026-11-22T09:00:00+01:00"),
    case("6pm UTC", "Asia/Tokyo", "absolute", "2026-11-21T18:00:00+00:00", zone="UTC"),
    case("09:00Z", None, "absolute", "2026-11-22T09:00:00+00:00", zone="UTC"),
    case("10am GMT-3", None, "absolute", "2026-11-22T10:00:00-03:00", zone="UTC-03:00"),
    case("3pm new york time", None, "absolute", "2026-11-21T15:00:00-05:00"),
    case("noon in São Paulo", "Asia/Tokyo", "absolute", "2026-11-22T12:00:00-03:00"),
    # --- abbreviations: only with context, else a question ------------------------------
    floating("9am PST", None),
    floating("9am IST", "Europe/London"),
    floating("3pm EST", "Asia/Tokyo"),
    floating("9am ACT", "UTC"),  # one dateparser knows and we do not list
    case(
        "9am IST",
        None,
        "absolute",
        "2026-11-22T09:00:00+05:30",
        options={"abbreviation_context": {"IST": "Asia/Kolkata"}},
    ),  # fmt: skip
    # BST is London's summer time (UTC+01:00): in November it may mean London or +01:00.
    case(
        "noon BST",
        None,
        "absolute",
        clarify=True,
        candidates=("2026-11-22T12:00:00+00:00", "2026-11-22T12:00:00+01:00"),
        options={"abbreviation_context": {"bst": "Europe/London"}},
    ),  # fmt: skip
    case("9am PST", "America/Los_Angeles", "absolute", "2026-11-21T09:00:00-08:00"),
    case("5pm CST", "America/Chicago", "absolute", "2026-11-21T17:00:00-06:00"),
    # --- DST gaps and folds: never shifted silently -------------------------------------
    case(
        "2026-03-08 02:30",
        "America/New_York",
        "absolute",
        clarify=True,
        candidates=("2026-03-08T03:30:00-04:00",),
    ),  # fmt: skip
    case(
        "2026-11-01 01:30",
        "America/New_York",
        "absolute",
        clarify=True,
        candidates=("2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"),
    ),  # fmt: skip
    case(
        "tomorrow at 2:30am",
        "Europe/Berlin",
        "absolute",
        clarify=True,
        candidates=("2026-03-29T03:30:00+02:00",),
        ref=BEFORE_BERLIN_SPRING,
    ),  # fmt: skip
    case(
        "tomorrow at 2:30am",
        "Europe/Berlin",
        "absolute",
        clarify=True,
        candidates=("2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00"),
        ref=BEFORE_BERLIN_FALL,
    ),  # fmt: skip
    case(
        "2026-10-04 02:15",
        "Australia/Lord_Howe",
        "absolute",
        clarify=True,
        candidates=("2026-10-04T02:45:00+11:00",),
    ),  # fmt: skip
    case(
        "2026-04-05 01:45",
        "Australia/Lord_Howe",
        "absolute",
        clarify=True,
        candidates=("2026-04-05T01:45:00+11:00", "2026-04-05T01:45:00+10:30"),
    ),  # fmt: skip
    case(
        "2026-09-27 03:00",
        "Pacific/Chatham",
        "absolute",
        clarify=True,
        candidates=("2026-09-27T04:00:00+13:45",),
    ),  # fmt: skip
    case(
        "2026-04-05 03:00",
        "Pacific/Chatham",
        "absolute",
        clarify=True,
        candidates=("2026-04-05T03:00:00+13:45", "2026-04-05T03:00:00+12:45"),
    ),  # fmt: skip
    # --- ambiguous hours and midnights ---------------------------------------------------
    case(
        "tomorrow at 9",
        "Asia/Tokyo",
        "absolute",
        clarify=True,
        candidates=(
            "2026-11-22T09:00:00+09:00",
            "2026-11-22T21:00:00+09:00",
            "2026-11-23T09:00:00+09:00",
            "2026-11-23T21:00:00+09:00",
        ),
    ),  # fmt: skip
    case(
        "tomorrow at 9",
        "America/New_York",
        "absolute",
        clarify=True,
        candidates=("2026-11-22T09:00:00-05:00", "2026-11-22T21:00:00-05:00"),
    ),  # fmt: skip
    # An hour with no am/pm and no date is asked about while both readings are still
    # ahead today; once the morning one has passed it is the next occurrence.
    case(
        "at 9",
        "America/Los_Angeles",
        "absolute",
        clarify=True,
        candidates=("2026-11-21T09:00:00-08:00", "2026-11-21T21:00:00-08:00"),
    ),  # Sat 07:40  # fmt: skip
    case(
        "at 9",
        "Asia/Tokyo",
        "absolute",
        clarify=True,
        candidates=("2026-11-22T09:00:00+09:00", "2026-11-22T21:00:00+09:00"),
    ),  # Sun 00:40  # fmt: skip
    case(
        "at 10:30",
        "America/Los_Angeles",
        "absolute",
        clarify=True,
        candidates=("2026-11-21T10:30:00-08:00", "2026-11-21T22:30:00-08:00"),
    ),  # fmt: skip
    case("at 7", "Europe/Berlin", "absolute", "2026-11-21T19:00:00+01:00"),  # Sat 16:40
    case("at 10:30", "America/New_York", "absolute", "2026-11-21T22:30:00-05:00"),  # 10:40
    case("at 9", "Asia/Kolkata", "absolute", "2026-11-22T09:00:00+05:30"),  # Sat 21:10
    case("at 12", "America/Los_Angeles", "absolute", "2026-11-21T12:00:00-08:00"),
    case("today at 8", "Europe/Berlin", "absolute", "2026-11-21T20:00:00+01:00"),
    case("9 tonight", "America/Los_Angeles", "absolute", "2026-11-21T21:00:00-08:00"),
    case("at 10:30 in the morning", "Europe/Berlin", "absolute", "2026-11-22T10:30:00+01:00"),
    # 24-hour writing: a leading zero, seconds, a full date, UTC, a 24-hour locale.
    case("at 09:30", "America/Los_Angeles", "absolute", "2026-11-21T09:30:00-08:00"),
    case("at 10:30:00", "America/Los_Angeles", "absolute", "2026-11-21T10:30:00-08:00"),
    case("2026-11-22 9:30", "Asia/Tokyo", "absolute", "2026-11-22T09:30:00+09:00"),
    case("at 10:30 UTC", None, "absolute", "2026-11-22T10:30:00+00:00", zone="UTC"),
    case(
        "at 10:30",
        "Europe/London",
        "absolute",
        "2026-11-22T10:30:00+00:00",
        options={"locale": "en_GB"},
    ),  # fmt: skip
    case(
        "tomorrow midnight",
        "Europe/Berlin",
        "absolute",
        clarify=True,
        candidates=("2026-11-22T00:00:00+01:00", "2026-11-23T00:00:00+01:00"),
    ),  # fmt: skip
    # --- weekday names near the week boundary --------------------------------------------
    case(
        "on Monday",
        "Europe/Berlin",
        "absolute",
        "2026-11-23T00:00:00+01:00",
        "2026-11-24T00:00:00+01:00",
        ref=SUNDAY,
    ),  # fmt: skip
    case(
        "next Monday",
        "Europe/Berlin",
        "absolute",
        "2026-11-23T00:00:00+01:00",
        "2026-11-24T00:00:00+01:00",
        ref=SUNDAY,
    ),  # fmt: skip
    case(
        "next Sunday",
        "Europe/Berlin",
        "absolute",
        clarify=True,
        candidates=("2026-11-22T00:00:00+01:00", "2026-11-29T00:00:00+01:00"),
    ),  # fmt: skip
    # At REF it is already Sunday in Tokyo but still Saturday in New York.
    case(
        "on Sunday",
        "Asia/Tokyo",
        "absolute",
        clarify=True,
        candidates=("2026-11-22T00:00:00+09:00", "2026-11-29T00:00:00+09:00"),
    ),  # fmt: skip
    case(
        "on Sunday",
        "America/New_York",
        "absolute",
        "2026-11-22T00:00:00-05:00",
        "2026-11-23T00:00:00-05:00",
    ),  # fmt: skip
    case(
        "Monday 9am",
        "America/New_York",
        "absolute",
        clarify=True,
        ref=MONDAY,
        candidates=("2026-11-23T09:00:00-05:00", "2026-11-30T09:00:00-05:00"),
    ),  # fmt: skip
    case(
        "this Monday 9am", "America/New_York", "absolute", "2026-11-23T09:00:00-05:00", ref=MONDAY
    ),  # fmt: skip
    case(
        "next friday at 10am",
        "Asia/Tokyo",
        "absolute",
        clarify=True,
        ref=TUESDAY,
        candidates=("2026-11-27T10:00:00+09:00", "2026-12-04T10:00:00+09:00"),
    ),  # fmt: skip
    case(
        "friday",
        "Asia/Tokyo",
        "absolute",
        "2026-11-27T00:00:00+09:00",
        "2026-11-28T00:00:00+09:00",
        ref=TUESDAY,
    ),  # fmt: skip
    # --- month/day order by locale -------------------------------------------------------
    case(
        "03/04",
        "America/New_York",
        "absolute",
        "2027-03-04T00:00:00-05:00",
        "2027-03-05T00:00:00-05:00",
        options={"locale": "en_US"},
    ),  # fmt: skip
    case(
        "03/04",
        "Europe/London",
        "absolute",
        "2027-04-03T00:00:00+01:00",
        "2027-04-04T00:00:00+01:00",
        options={"locale": "en_GB"},
    ),  # fmt: skip
    case(
        "03/04", "Asia/Tokyo", "absolute", "2027-03-04T00:00:00+09:00", "2027-03-05T00:00:00+09:00"
    ),  # MDY by default  # fmt: skip
    case(
        "03/04/2027 10:00",
        "Europe/Berlin",
        "absolute",
        "2027-04-03T10:00:00+02:00",
        options={"date_order": "DMY"},
    ),  # fmt: skip
    case(
        "22.11.2026",
        "Europe/Berlin",
        "absolute",
        "2026-11-22T00:00:00+01:00",
        "2026-11-23T00:00:00+01:00",
        options={"locale": "de_DE"},
    ),  # fmt: skip
    case("11/21", "Europe/London", "invalid", options={"locale": "en_GB"}),
    # --- not time phrases ----------------------------------------------------------------
    case("hello there", "UTC", "invalid"),
    case("25:00", "UTC", "invalid"),
    case("13pm", "UTC", "invalid"),
    case("   ", None, "invalid", id="blank"),
    case("2 hours", None, "invalid"),
]


@pytest.mark.parametrize("c", CASES)
def test_parse_table(c: Case) -> None:
    result = parse_anchored_time(c.text, c.tz, c.ref, **c.options)
    assert result.kind == c.kind
    assert result.needs_clarification is c.clarify
    assert result.start_instant == (iso(c.start) if c.start else None)
    assert result.end_instant == (iso(c.end) if c.end else None)
    assert result.candidates == tuple(iso(text) for text in c.candidates)
    for instant in (result.start_instant, result.end_instant, *result.candidates):
        assert instant is None or instant.tzinfo is UTC
    if c.clarify:
        assert result.clarification_question
    else:
        assert result.clarification_question is None
    if c.zone is not None:
        assert result.zone == c.zone
    assert result.matched_text == " ".join(c.text.split()) or c.text.strip() == ""


def test_table_is_broad() -> None:
    params = [p.values[0] for p in CASES]
    assert len(params) >= 60
    assert len({c.tz for c in params if c.tz}) >= 8


# --- exact questions -----------------------------------------------------------------


def question(text: str, tz: str | None, ref: datetime = REF, **options: Any) -> str | None:
    return parse_anchored_time(text, tz, ref, **options).clarification_question


def test_abbreviation_question_lists_the_meanings() -> None:
    assert question("9am IST", None) == (
        "Which timezone do you mean by IST — India (Asia/Kolkata), Israel (Asia/Jerusalem) "
        "or Ireland (Europe/Dublin)?"
    )
    assert question("9am JST", None) == (
        "By JST, do you mean Japan time (Asia/Tokyo)? If not, which city or timezone?"
    )


def test_fold_and_gap_questions() -> None:
    assert question("2026-11-01 01:30", "America/New_York") == (
        "Which 01:30 on Sunday 1 November in America/New_York — the first (UTC-04:00) "
        "or the second (UTC-05:00)?"
    )
    assert question("2026-03-08 02:30", "America/New_York") == (
        "02:30 on Sunday 8 March in America/New_York does not exist — clocks jump from "
        "02:00 to 03:00. Did you mean 03:30?"
    )


def test_the_readings_a_fold_or_gap_question_offers() -> None:
    """A repeated 01:30 offers the first reading first; a skipped 02:30 offers the next
    valid time, 03:30 (zoneinfo's ``fold=0``: the offset before the jump)."""
    fold = parse_anchored_time("2026-11-01 01:30", "America/New_York", REF)
    assert fold.candidates == (
        iso("2026-11-01T01:30:00-04:00"),
        iso("2026-11-01T01:30:00-05:00"),
    )
    gap = parse_anchored_time("2026-03-08 02:30", "America/New_York", REF)
    assert gap.candidates == (iso("2026-03-08T03:30:00-04:00"),)


EVE_OF_FALL_BACK = datetime(2026, 10, 24, 17, tzinfo=UTC)  # Berlin Sat 19:00, +02:00
EVE_OF_SPRING_FORWARD = datetime(2026, 3, 28, 17, tzinfo=UTC)  # Berlin Sat 18:00, +01:00


@pytest.mark.parametrize(
    ("text", "ref", "start", "end"),
    [
        ("tonight 11pm to 4am", EVE_OF_FALL_BACK,
         "2026-10-24T23:00:00+02:00", "2026-10-25T04:00:00+01:00"),
        ("tonight from 1am to 3am", EVE_OF_FALL_BACK,
         "2026-10-25T01:00:00+02:00", "2026-10-25T03:00:00+01:00"),
        ("tonight between 2 and 4", EVE_OF_FALL_BACK,
         "2026-10-25T02:00:00+02:00", "2026-10-25T04:00:00+01:00"),
        ("tonight between 8 and 10", EVE_OF_FALL_BACK,
         "2026-10-24T20:00:00+02:00", "2026-10-24T22:00:00+02:00"),
        ("tonight 11pm-4am", EVE_OF_SPRING_FORWARD,
         "2026-03-28T23:00:00+01:00", "2026-03-29T04:00:00+02:00"),
        ("tomorrow from 2:30am to 4am", EVE_OF_SPRING_FORWARD,
         "2026-03-29T03:30:00+02:00", "2026-03-29T04:00:00+02:00"),
    ],
)  # fmt: skip
def test_a_range_of_hours_tonight_is_the_night_ahead_each_end_on_its_own_date(
    text: str, ref: datetime, start: str, end: str
) -> None:
    result = parse_anchored_time(text, "Europe/Berlin", ref)
    assert (result.start_instant, result.end_instant) == (iso(start), iso(end))


def test_an_hour_in_the_small_hours_tonight_is_after_midnight() -> None:
    """ "tonight at 1am" said on Saturday evening is 01:00 on Sunday, not Saturday's."""
    result = parse_anchored_time("tonight at 1am", "Europe/Berlin", EVE_OF_FALL_BACK)
    assert result.start_instant == iso("2026-10-25T01:00:00+02:00")


SATURDAY_MORNING = datetime(2026, 10, 17, 7, tzinfo=UTC)  # Berlin Sat 09:00, +02:00
SATURDAY_SMALL_HOURS = datetime(2026, 10, 17, 1, tzinfo=UTC)  # Berlin Sat 03:00, +02:00


@pytest.mark.parametrize(
    ("text", "ref", "start"),
    [
        # 1-4 with no am/pm is the small hours after tonight's midnight, never 14:00.
        ("tonight at 2", SATURDAY_MORNING, "2026-10-18T02:00:00+02:00"),
        ("2 tonight", SATURDAY_MORNING, "2026-10-18T02:00:00+02:00"),
        ("tonight at 4:30", SATURDAY_MORNING, "2026-10-18T04:30:00+02:00"),
        ("tonight at 5", SATURDAY_SMALL_HOURS, "2026-10-17T17:00:00+02:00"),
        ("tonight at 8", SATURDAY_MORNING, "2026-10-17T20:00:00+02:00"),
        ("tonight at 11", SATURDAY_MORNING, "2026-10-17T23:00:00+02:00"),
        ("tonight at 12", SATURDAY_MORNING, "2026-10-18T00:00:00+02:00"),
        # Said at 03:00, the small hours of tonight are the coming night's once passed.
        ("tonight at 2", SATURDAY_SMALL_HOURS, "2026-10-18T02:00:00+02:00"),
        ("tonight at 4", SATURDAY_SMALL_HOURS, "2026-10-17T04:00:00+02:00"),
    ],
)
def test_tonight_with_an_hour_and_no_am_pm_is_one_reading_of_the_night(
    text: str, ref: datetime, start: str
) -> None:
    result = parse_anchored_time(text, "Europe/Berlin", ref)
    assert not result.needs_clarification, result.clarification_question
    assert result.start_instant == iso(start)


@pytest.mark.parametrize(
    ("message", "phrase", "minutes"),
    [
        ("call me in half an hour", "in half an hour", 30),
        ("half an hour from now", "half an hour from now", 30),
        ("half an hour ago", "half an hour ago", -30),
        ("back in an hour and a half", "in an hour and a half", 90),
        ("back in 1.5 hours", "in 1.5 hours", 90),
        ("3 hours from now", "3 hours from now", 180),
    ],
)
def test_half_hours_and_from_now_are_found_whole(message: str, phrase: str, minutes: int) -> None:
    [found] = find_time_expressions(message, "Europe/Berlin", REF)
    assert found.matched_text == phrase
    assert found.start_instant == REF + timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("message", "phrase", "day"),
    [  # REF is Saturday 21 November in Berlin
        ("a week from today", "a week from today", "2026-11-28"),
        ("let's meet a week from tuesday", "a week from tuesday", "2026-12-01"),
        ("two days from tomorrow", "two days from tomorrow", "2026-11-24"),
    ],
)
def test_days_on_from_a_day_are_that_day_moved_on(message: str, phrase: str, day: str) -> None:
    """ "a week from today" was a week ago, "a week from tuesday" only the Tuesday."""
    [found] = find_time_expressions(message, "Europe/Berlin", REF)
    assert found.matched_text == phrase
    assert found.start_instant == iso(f"{day}T00:00:00+01:00")
    assert found.end_instant == found.start_instant + timedelta(days=1)


@pytest.mark.parametrize(
    ("message", "phrases"),
    [
        ("not tomorrow, monday", ["monday"]),
        ("can't do tomorrow, monday?", ["monday"]),
        ("tomorrow, monday or tuesday all work", ["tomorrow", "monday", "tuesday"]),
    ],
)
def test_a_day_turned_down_is_no_time_and_two_days_side_by_side_are_two(
    message: str, phrases: list[str]
) -> None:
    """ "not tomorrow, monday" was read as nothing ("tomorrow, monday" as one phrase)."""
    found = find_time_expressions(message, "Europe/Berlin", REF)
    assert [result.matched_text for result in found] == phrases


def test_floating_question_asks_for_a_zone() -> None:
    text = question("tomorrow at 9am", None)
    assert text is not None and "timezone" in text and "tomorrow at 9am" in text


# --- plug-ins and errors ---------------------------------------------------------------


def test_place_zone_plugs_in_a_city_index() -> None:
    offices = {"hq": "Asia/Tokyo", "bad": "EST"}

    def place_zone(name: str) -> str | None:
        return offices.get(name.lower())

    result = parse_anchored_time("3pm in HQ", None, REF, place_zone=place_zone)
    assert result.kind == "absolute" and result.zone == "Asia/Tokyo"
    assert result.start_instant == iso("2026-11-22T15:00:00+09:00")
    # A resolver answer that is not an IANA id is ignored, not trusted.
    assert parse_anchored_time("3pm in bad", None, REF, place_zone=place_zone).kind != "absolute"


@pytest.mark.parametrize(
    "message",
    [
        "meet 9am Eastern time",
        "meet 9am Pacific time",
        "9am Central European time",
        "9am Pacific works for me",
        "ok, 5pm eastern?",
    ],
)
def test_a_spelled_out_zone_name_is_asked_about_not_read_in_the_session_zone(
    message: str,
) -> None:
    [found] = find_time_expressions(message, "Asia/Tokyo", REF)
    assert found.kind == "floating" and found.needs_clarification
    assert found.start_instant is None
    assert found.clarification_question is not None
    assert found.clarification_question.startswith("By ")


def test_a_spelled_out_zone_name_resolves_from_the_users_zone() -> None:
    [eastern] = find_time_expressions("meet 9am Eastern time", "America/Toronto", REF)
    assert eastern.zone == "America/Toronto"
    assert eastern.start_instant == iso("2026-11-22T09:00:00-05:00")
    [pacific] = find_time_expressions(
        "meet 9am Pacific time", "Asia/Tokyo", REF,
        abbreviation_context={"Pacific Time": "America/Vancouver"},
    )  # fmt: skip
    assert pacific.start_instant == iso("2026-11-21T09:00:00-08:00")  # 07:40 there
    [bare] = find_time_expressions("9am Pacific works for me", "America/Los_Angeles", REF)
    assert bare.zone == "America/Los_Angeles"
    assert bare.start_instant == iso("2026-11-21T09:00:00-08:00")


def test_a_summer_abbreviation_in_winter_asks_which_offset_is_meant() -> None:
    result = parse_anchored_time("15:00 CEST", "Europe/Berlin", REF)
    assert result.start_instant is None and result.needs_clarification
    assert result.clarification_question == (
        "CEST is UTC+02:00, but Europe/Berlin is on UTC+01:00 at 15:00 on Sunday 22 "
        "November: did you mean 15:00 Europe/Berlin time (UTC+01:00) or 15:00 UTC+02:00?"
    )
    assert result.candidates == (
        iso("2026-11-22T15:00:00+01:00"),
        iso("2026-11-22T15:00:00+02:00"),
    )
    # The season's own abbreviation, and a generic one, are taken as they come.
    for text in ("15:00 CET", "15:00 CEST on July 1"):
        assert parse_anchored_time(text, "Europe/Berlin", REF).start_instant is not None
    ny = parse_anchored_time("9am ET", "America/New_York", REF)
    assert ny.start_instant == iso("2026-11-22T09:00:00-05:00")


def test_context_with_an_invalid_zone_still_asks() -> None:
    result = parse_anchored_time("9am EST", None, REF, abbreviation_context={"EST": "EST"})
    assert result.kind == "floating" and result.needs_clarification


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        parse_anchored_time("9am", "UTC", datetime(2026, 11, 21, 15, 40))
    with pytest.raises(ValueError, match="abbreviation"):
        parse_anchored_time("9am", "EST", REF)
    with pytest.raises(ValueError, match="locale"):
        parse_anchored_time("03/04", "UTC", REF, locale="xx_NOPE")


@pytest.mark.parametrize(
    ("locale", "order"), [("en_US", "MDY"), ("en_GB", "DMY"), ("de_DE", "DMY"), ("ja_JP", "YMD")]
)
def test_date_order_for_locale(locale: str, order: str) -> None:
    assert date_order_for_locale(locale) == order


# --- free-form messages ----------------------------------------------------------------


def found(text: str, tz: str | None = "Asia/Tokyo") -> list[ParseResult]:
    return find_time_expressions(text, tz, REF)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Can we meet on Monday at 9am to discuss?",
         [("on Monday at 9am", "absolute", "2026-11-23T09:00:00+09:00")]),
        ("let's do it next Tuesday evening, or friday at 3pm",
         [("next Tuesday evening", "absolute", "2026-11-24T18:00:00+09:00"),
          ("friday at 3pm", "absolute", "2026-11-27T15:00:00+09:00")]),
        ("The flight lands at 14:30 Tokyo time",
         [("at 14:30 Tokyo time", "absolute", "2026-11-22T14:30:00+09:00")]),
        ("we could do friday at 3pm in Berlin",
         [("friday at 3pm in Berlin", "absolute", "2026-11-27T15:00:00+01:00")]),
        ("call me in 2 hours please", [("in 2 hours", "relative", "2026-11-21T17:40:00+00:00")]),
        ("meeting 2026-11-22 14:30 ok?",
         [("2026-11-22 14:30", "absolute", "2026-11-22T14:30:00+09:00")]),
        ("remind me at noon", [("at noon", "absolute", "2026-11-22T12:00:00+09:00")]),
        ("Let's talk at 9am PST tomorrow", [("at 9am PST tomorrow", "floating", None)]),
    ],
)  # fmt: skip
def test_find_time_expressions(message: str, expected: list[tuple[str, str, str | None]]) -> None:
    results = found(message)
    got = [(r.matched_text, r.kind, r.start_instant) for r in results]
    assert got == [(text, kind, iso(start) if start else None) for text, kind, start in expected]


# Los Angeles is at Sat 07:40 (09:00 and 21:00 both still ahead today), Berlin at Sat
# 16:40 (07:00 and 06:00 passed, so 19:00 and 18:00 are the next ones).
@pytest.mark.parametrize(
    ("message", "tz", "expected"),
    [
        ("see you at 9", "America/Los_Angeles",
         ("at 9", "2026-11-21T09:00:00-08:00", "2026-11-21T21:00:00-08:00")),
        ("let's meet at 10:30", "America/Los_Angeles",
         ("at 10:30", "2026-11-21T10:30:00-08:00", "2026-11-21T22:30:00-08:00")),
        ("dinner at 8?", "America/Los_Angeles",
         ("at 8", "2026-11-21T08:00:00-08:00", "2026-11-21T20:00:00-08:00")),
        ("call me at 7", "Europe/Berlin", ("at 7", "2026-11-21T19:00:00+01:00")),
        ("I'll be there by 6, promise", "Europe/Berlin", ("by 6", "2026-11-21T18:00:00+01:00")),
        ("call me around 8 tonight", "Europe/Berlin",
         ("around 8 tonight", "2026-11-21T20:00:00+01:00")),
        ("see you at 9 o'clock then", "Asia/Kolkata",
         ("at 9 o'clock", "2026-11-22T09:00:00+05:30")),
    ],
)  # fmt: skip
def test_a_bare_hour_in_a_message_is_asked_about_or_read_as_its_next_occurrence(
    message: str, tz: str, expected: tuple[str, ...]
) -> None:
    [result] = found(message, tz)
    text, *instants = expected
    assert result.matched_text == text
    if len(instants) == 1:
        assert not result.needs_clarification
        assert result.start_instant == iso(instants[0])
    else:
        assert result.needs_clarification and result.start_instant is None
        assert result.candidates == tuple(iso(instant) for instant in instants)
        first, second = (iso(instant).strftime("%H:%M") for instant in instants)
        assert result.clarification_question == (
            f"Do you mean {first} or {second} on Saturday 21 November?"
        )


@pytest.mark.parametrize(
    ("message", "text", "start"),
    [
        # Berlin is at Sat 16:40: a time told of the past is its last occurrence.
        ("the meeting was at 3pm", "at 3pm", "2026-11-21T15:00:00+01:00"),
        ("the meeting was at 5pm", "at 5pm", "2026-11-20T17:00:00+01:00"),
        ("I called at 17:00.", "at 17:00", "2026-11-20T17:00:00+01:00"),
        # 07:00 has passed and 19:00 is ahead: the hour that passed, with no question.
        ("I got home at 7", "at 7", "2026-11-21T07:00:00+01:00"),
        ("we met on Monday", "on Monday", "2026-11-16T00:00:00+01:00"),
        ("I went to bed at midnight", "at midnight", "2026-11-21T00:00:00+01:00"),
        # Regular pasts with no subject, irregular ones and "till".
        ("landed at 7", "at 7", "2026-11-21T07:00:00+01:00"),
        ("the flight landed at 9pm", "at 9pm", "2026-11-20T21:00:00+01:00"),
        ("finished at 5pm", "at 5pm", "2026-11-20T17:00:00+01:00"),
        ("got home at 11", "at 11", "2026-11-21T11:00:00+01:00"),
        ("slept till 9", "till 9", "2026-11-21T09:00:00+01:00"),
        ("caught the bus at 8", "at 8", "2026-11-21T08:00:00+01:00"),
        # Words that only end like a past, or adjectives of the moment, are not one.
        ("I'm tired, bed at 10pm", "at 10pm", "2026-11-21T22:00:00+01:00"),
        ("we're finished at 11pm", "at 11pm", "2026-11-21T23:00:00+01:00"),
        ("the delayed train leaves at 9pm", "at 9pm", "2026-11-21T21:00:00+01:00"),
        ("indeed, dinner at 9pm", "at 9pm", "2026-11-21T21:00:00+01:00"),
        # A sentence that also points ahead keeps the upcoming reading.
        ("they moved the meeting to 5pm", "5pm", "2026-11-21T17:00:00+01:00"),
        ("I called at 3pm. Call me back at 5pm", "at 5pm", "2026-11-21T17:00:00+01:00"),
    ],
)
def test_a_time_told_of_the_past_is_its_last_occurrence(
    message: str, text: str, start: str
) -> None:
    results = {result.matched_text: result for result in found(message, "Europe/Berlin")}
    assert not results[text].needs_clarification
    assert results[text].start_instant == iso(start)


@pytest.mark.parametrize(
    "message",
    # Both readings of the hour have passed, or it has a date: no upcoming time, no question.
    ["I called at 3", "we spoke yesterday at 10", "the train left at 4 o'clock"],
)
def test_an_unsettled_hour_told_of_the_past_is_neither_resolved_nor_asked_about(
    message: str,
) -> None:
    assert found(message, "Europe/Berlin") == []


@pytest.mark.parametrize(
    "message",
    [
        "I have 9 cats",
        "the fee is at 9 % now",
        "version 3.9 is out",
        "I learned to swim at 9 years old",
        "see page 9",
        "we won 3-1 at 7-2 odds",
        "it costs $9, at 9.99 with tax",
        "we've been stuck at 9 for weeks",
        "sales grew by 6 this quarter",
        "sold at 9 dollars each",
        "they live at 10 Downing Street",
        "shares are up at 7",
        "the index is up at 7%",
        "we were up 7 points at half time",
    ],
)
def test_numbers_that_are_not_clock_times_are_left_alone(message: str) -> None:
    assert found(message, "America/Los_Angeles") == []


@pytest.mark.parametrize(
    ("message", "start"),
    [
        # Berlin 16:40 now: the hours already passed today, the coming one ahead.
        ("I woke up at 7", "2026-11-21T06:00:00+00:00"),
        ("got up at 6:30 today", "2026-11-21T05:30:00+00:00"),
        # Said of rising, an hour with no am/pm is the morning one: 06:00 tomorrow.
        ("I'll be up at 6", "2026-11-22T05:00:00+00:00"),
        ("I'm up at 6", "2026-11-22T05:00:00+00:00"),
        ("we need to get up at 7 tomorrow", "2026-11-22T06:00:00+00:00"),
        ("wake me at 5", "2026-11-22T04:00:00+00:00"),
        ("alarm at 6:30", "2026-11-22T05:30:00+00:00"),
        ("I'll be up at 6 in the evening", "2026-11-21T17:00:00+00:00"),
        # Not someone rising: the next occurrence, as any hour with no am/pm.
        ("see you at 6", "2026-11-21T17:00:00+00:00"),
        ("let's meet at 6", "2026-11-21T17:00:00+00:00"),
        ("the results will be up at 6", "2026-11-21T17:00:00+00:00"),
    ],
)
def test_the_hour_someone_wakes_or_gets_up_is_a_time(message: str, start: str) -> None:
    [result] = found(message, "Europe/Berlin")
    assert result.start_instant == iso(start)


def places(name: str) -> str | tuple[str, ...] | None:
    """A place resolver as the clock stage passes it: ids, or candidates if ambiguous."""
    match = lookup_place(name)
    return match.zone or match.candidates or None


@pytest.mark.parametrize("message", ["call me at 3pm Victoria time", "call me at 3pm in Victoria"])
def test_an_ambiguous_place_is_asked_about_not_settled_by_the_zone_ids(message: str) -> None:
    [result] = find_time_expressions(message, "Europe/Berlin", REF, place_zone=places)
    assert result.kind == "floating" and result.start_instant is None
    assert result.clarification_question == (
        "Which Victoria do you mean — America/Vancouver, Australia/Melbourne or Indian/Mahe?"
    )


def test_legacy_region_ids_and_lowercase_words_are_not_places() -> None:
    assert iana_place_zone("Victoria") is None  # Australia/Victoria is a state, not a city
    assert iana_place_zone("Melbourne") == "Australia/Melbourne"
    [weather] = find_time_expressions("at 3pm in nice weather", "Europe/Berlin", REF)
    assert weather.zone == "Europe/Berlin"
    [nice] = find_time_expressions("at 3pm in Nice", "Asia/Tokyo", REF, place_zone=places)
    assert nice.zone == "Europe/Paris"
    [holiday] = find_time_expressions("at 3pm Christmas time", "Europe/Berlin", REF,
                                      place_zone=places)  # fmt: skip
    assert holiday.zone == "Europe/Berlin"


def test_find_without_a_session_zone_keeps_phrases_floating() -> None:
    (result,) = found("see you tomorrow at 9am", None)
    assert result.kind == "floating" and result.needs_clarification


# Friday 22:00 in New York is Saturday 04:00 in Berlin.
NY_FRIDAY_NIGHT = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "message", ["9am Berlin time tomorrow", "tomorrow at 9am Berlin time", "tmrw 9am Berlin"]
)
def test_tomorrow_in_a_zone_on_another_date_asks_whose_tomorrow(message: str) -> None:
    (result,) = find_time_expressions(message, "America/New_York", NY_FRIDAY_NIGHT)
    assert result.needs_clarification and result.start_instant is None
    assert result.candidates == (
        datetime(2026, 11, 21, 8, 0, tzinfo=UTC),  # Saturday: the speaker's tomorrow
        datetime(2026, 11, 22, 8, 0, tzinfo=UTC),  # Sunday: Berlin's tomorrow
    )
    # The relay anchors a message that names a zone to it and says whose zone is own.
    (anchored,) = find_time_expressions(
        message, "Europe/Berlin", NY_FRIDAY_NIGHT, speaker_tz="America/New_York"
    )
    assert anchored.candidates == result.candidates


def test_tomorrow_in_a_zone_on_the_same_date_is_read_there() -> None:
    friday_noon = NY_FRIDAY_NIGHT - timedelta(hours=10)  # NY 12:00, Berlin 18:00
    (result,) = find_time_expressions("9am Berlin time tomorrow", "America/New_York", friday_noon)
    assert result.start_instant == datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
    assert result.matched_text == "9am Berlin time tomorrow"


@pytest.mark.parametrize(
    "message",
    [
        "I may come in second place in march",
        "ok now I'm done",
        "I have 3 cats and 2 dogs",
        "we should sat down and talk",
        "Version 2 of the doc, page 14",
        "",
    ],
)
def test_find_ignores_words_that_are_not_times(message: str) -> None:
    assert found(message) == []


@pytest.mark.parametrize(
    ("text", "timeish"),
    [
        ("at 9am", True), ("14:30", True), ("tomorrow", True), ("next week", True),
        ("in 3 days", True), ("2 hours ago", True), ("Friday", True), ("nov 22", True),
        ("May 5", True), ("22nd of March", True), ("end of day", True), ("TONİGHT", True),
        ("ran 5k this morning", True), ("last night", True), ("THIS AFTERNOON", True),
        ("good morning", False), ("night owl", False),
        ("I may go", False), ("march on", False), ("a second", False), ("now", False),
        ("we will see", False), ("3 cats", False), ("may 5 people come", False),
    ],
)  # fmt: skip
def test_looks_timeish(text: str, timeish: bool) -> None:
    assert looks_timeish(text) is timeish


# Pieces of every _TIMEISH alternative, in odd cases and glued to neighbours, so the
# property below reaches the corners of the cheap pre-check.
_TIMEISH_PIECES = (
    "TODAY Tomorrow tonıght TONİGHT mİdnight NOON midnight EOD end of the day Monday SATURDAY "
    "next this "
    "last WEEKEND month year in an a two half an hour hours min sec hr fortnight ago at by "
    "around until @ 9 12 2026 - / . : h am p.m. o'clock 22nd of March Sept may May MAR "
    "holiday admin secure ſec morning AFTERNOON Evening nİght mornıng"
).split()


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(
        st.lists(st.sampled_from(_TIMEISH_PIECES), min_size=1, max_size=5).map(" ".join),
        st.lists(st.sampled_from(_TIMEISH_PIECES), min_size=1, max_size=5).map("".join),
        st.text(max_size=40),
    )
)
def test_looks_timeish_is_exactly_the_full_pattern(text: str) -> None:
    """The pre-check in front of the slow pattern only skips texts it cannot match."""
    full = _TIMEISH.search(text) is not None or _CAPITAL_MONTH_DAY.search(text) is not None
    assert looks_timeish(text) is full


# --- invariants on arbitrary input -------------------------------------------------------

_WORDS = (
    "at in on next this last tomorrow today tonight noon midnight 9 12 25 9am 3pm 14:30 "
    "02:30 monday friday sunday march may nov 22 2026 03/04 2026-11-22 +05:45 Z UTC GMT+9 "
    "PST IST Tokyo Berlin time end of day evening ago hours 2 days week , ? o'clock"
).split()


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
                   st.text(max_size=30)),
    tz=st.sampled_from([None, "Asia/Tokyo", "America/New_York", "Pacific/Chatham", "UTC"]),
)  # fmt: skip
def test_results_keep_their_invariants(text: str, tz: str | None) -> None:
    result = parse_anchored_time(text, tz, REF)
    if result.needs_clarification:
        assert result.clarification_question and result.start_instant is None
    elif result.kind in {"absolute", "relative"}:
        assert result.start_instant is not None and result.start_instant.tzinfo is UTC
    if result.kind == "floating":
        assert result.needs_clarification and not result.candidates
    if result.kind == "invalid":
        assert result.start_instant is None and not result.needs_clarification
    for item in find_time_expressions(text, tz, REF):
        assert item.kind != "invalid" and item.matched_text in text


@pytest.mark.parametrize(
    ("message", "candidates"),
    [
        ("tomorrow morning works", ("2026-03-03T09:00:00+09:00", "2026-03-04T09:00:00+09:00")),
        ("see you tomorrow at 9am", ("2026-03-03T09:00:00+09:00", "2026-03-04T09:00:00+09:00")),
        ("tomorrow", ("2026-03-03T00:00:00+09:00", "2026-03-04T00:00:00+09:00")),
    ],
)
def test_tomorrow_said_in_the_small_hours_is_asked_about(
    message: str, candidates: tuple[str, ...]
) -> None:
    # 02:00 on Tuesday in Tokyo: not yet slept, "tomorrow" may be the day just begun.
    [result] = find_time_expressions(message, "Asia/Tokyo", iso("2026-03-02T17:00:00+00:00"))
    assert result.needs_clarification and result.start_instant is None
    assert result.candidates == tuple(iso(instant) for instant in candidates)
    assert result.clarification_question == (
        'By "tomorrow", said at 02:00, do you mean Tuesday 3 March (the day that has just '
        "begun) or Wednesday 4 March?"
    )


@pytest.mark.parametrize(
    ("message", "candidates", "hour_question"),
    [
        ("yesterday I finished the report",
         ("2026-03-02T00:00:00+09:00", "2026-03-01T00:00:00+09:00"), ""),
        ("what did we decide yesterday?",
         ("2026-03-02T00:00:00+09:00", "2026-03-01T00:00:00+09:00"), ""),
        ("yesterday at 3pm I sent it",
         ("2026-03-02T15:00:00+09:00", "2026-03-01T15:00:00+09:00"), ""),
        ("can you check what broke yesterday at 9?",
         ("2026-03-02T09:00:00+09:00", "2026-03-02T21:00:00+09:00",
          "2026-03-01T09:00:00+09:00", "2026-03-01T21:00:00+09:00"),
         " And do you mean 09:00 or 21:00 on that day?"),
    ],
)  # fmt: skip
def test_yesterday_said_in_the_small_hours_is_asked_about(
    message: str, candidates: tuple[str, ...], hour_question: str
) -> None:
    # 02:00 on Tuesday in Tokyo: not yet slept, "yesterday" may be Sunday, not Monday.
    [result] = find_time_expressions(message, "Asia/Tokyo", iso("2026-03-02T17:00:00+00:00"))
    assert result.needs_clarification and result.start_instant is None
    assert result.candidates == tuple(iso(instant) for instant in candidates)
    assert result.clarification_question == (
        'By "yesterday", said at 02:00, do you mean Monday 2 March (the day that has just '
        f"ended) or Sunday 1 March?{hour_question}"
    )


@pytest.mark.parametrize(
    ("message", "candidates"),
    [
        ("today I finished the report",
         ("2026-03-03T00:00:00+09:00", "2026-03-02T00:00:00+09:00")),
        ("I sent it today at 1am",
         ("2026-03-03T01:00:00+09:00", "2026-03-02T01:00:00+09:00")),
    ],
)  # fmt: skip
def test_today_told_of_the_past_in_the_small_hours_is_asked_about(
    message: str, candidates: tuple[str, ...]
) -> None:
    # 02:00 on Tuesday in Tokyo: not yet slept, what was done "today" may be Monday's.
    [result] = find_time_expressions(message, "Asia/Tokyo", iso("2026-03-02T17:00:00+00:00"))
    assert result.needs_clarification and result.start_instant is None
    assert result.candidates == tuple(iso(instant) for instant in candidates)
    assert result.clarification_question == (
        'By "today", said at 02:00, do you mean Tuesday 3 March (the day that has just '
        "begun) or Monday 2 March (the day that has just ended)?"
    )


@pytest.mark.parametrize(
    ("message", "utc", "start"),
    [
        # 04:00 in Tokyo: the small hours are over, "yesterday" is the calendar's.
        ("yesterday I finished the report", "2026-03-02T19:00:00+00:00",
         "2026-03-02T00:00:00+09:00"),
        # 02:00 in Tokyo: a day that is not the calendar's yesterday is not asked about.
        ("the day before yesterday", "2026-03-02T17:00:00+00:00", "2026-03-01T00:00:00+09:00"),
    ],
)  # fmt: skip
def test_yesterday_outside_the_small_hours_question_is_resolved(
    message: str, utc: str, start: str
) -> None:
    [result] = find_time_expressions(message, "Asia/Tokyo", iso(utc))
    assert not result.needs_clarification
    assert result.start_instant == iso(start)


@pytest.mark.parametrize(
    ("message", "utc", "start"),
    [
        # 02:00 in Tokyo: "tonight" and "this morning" have one reading still ahead.
        ("tonight at 9", "2026-03-02T17:00:00+00:00", "2026-03-03T21:00:00+09:00"),
        ("this morning at 10am", "2026-03-02T17:00:00+00:00", "2026-03-03T10:00:00+09:00"),
        ("today at 5pm", "2026-03-02T17:00:00+00:00", "2026-03-03T17:00:00+09:00"),
        # 04:00 in Tokyo: what was done today was done on the day begun at midnight.
        ("today I finished the report", "2026-03-02T19:00:00+00:00", "2026-03-03T00:00:00+09:00"),
        # 04:00 in Tokyo: the small hours are over, "tomorrow" is the calendar's.
        ("tomorrow morning", "2026-03-02T19:00:00+00:00", "2026-03-04T09:00:00+09:00"),
        # 23:30: still the evening before, "tomorrow" is the next day.
        ("tomorrow morning", "2026-03-02T14:30:00+00:00", "2026-03-03T09:00:00+09:00"),
    ],
)
def test_day_words_outside_the_small_hours_question_are_resolved(
    message: str, utc: str, start: str
) -> None:
    [result] = find_time_expressions(message, "Asia/Tokyo", iso(utc))
    assert not result.needs_clarification
    assert result.start_instant == iso(start)


@pytest.mark.parametrize(
    ("message", "berlin_now", "start"),
    [
        # Saturday 21 November 2026 in Berlin. Its usual hour gone by: the rest of that
        # night from now. Told of the past: that night so far (from 18:00).
        ("saturday night", "2026-11-21T23:00:00+01:00", "2026-11-21T23:00:00+01:00"),
        ("see you saturday night", "2026-11-21T19:00:00+01:00", "2026-11-21T20:00:00+01:00"),
        ("saturday night was fun", "2026-11-21T23:00:00+01:00", "2026-11-21T18:00:00+01:00"),
        ("saturday evening", "2026-11-21T10:00:00+01:00", "2026-11-21T18:00:00+01:00"),
        # That morning is over: the next Saturday morning, as before.
        ("saturday morning", "2026-11-21T19:00:00+01:00", "2026-11-28T09:00:00+01:00"),
        # Friday 20 November.
        ("friday evening", "2026-11-20T19:00:00+01:00", "2026-11-20T19:00:00+01:00"),
    ],
)
def test_a_weekday_naming_today_with_a_part_of_day_still_ahead_is_today(
    message: str, berlin_now: str, start: str
) -> None:
    [result] = find_time_expressions(message, "Europe/Berlin", iso(berlin_now))
    assert not result.needs_clarification
    assert result.start_instant == iso(start)


def test_a_weekday_naming_today_with_at_and_a_time_asks_which_week() -> None:
    # "friday 8pm" asked already; "friday at 8pm" took the next Friday with no question.
    [result] = find_time_expressions(
        "friday at 8pm", "Europe/Berlin", iso("2026-11-20T19:00:00+01:00")
    )
    assert result.clarification_question == (
        "Do you mean today (Friday 20 November) or Friday 27 November?"
    )


@pytest.mark.parametrize(
    ("message", "matched", "start"),
    [
        # Friday 20 November 2026, 10:00 in New York (Saturday 00:00 in Tokyo).
        ("here in New York, 9pm Tokyo is 7am for me", "9pm Tokyo", "2026-11-21T21:00:00+09:00"),
        ("call at 9am Berlin?", "at 9am Berlin", "2026-11-21T09:00:00+01:00"),
        ("14:30 Paris, ok?", "14:30 Paris", "2026-11-21T14:30:00+01:00"),
        # Not a place but a longer name, or a place with more than one zone: New York's 3pm.
        ("see you 3pm Central Park", "3pm", "2026-11-20T15:00:00-05:00"),
        ("3pm London Bridge", "3pm", "2026-11-20T15:00:00-05:00"),
        ("meet 5pm Victoria", "5pm", "2026-11-20T17:00:00-05:00"),
    ],
)
def test_a_city_named_right_after_a_clock_time_anchors_it(
    message: str, matched: str, start: str
) -> None:
    first, *_ = find_time_expressions(message, "America/New_York", iso("2026-11-20T10:00:00-05:00"))
    assert (first.matched_text, first.start_instant) == (matched, iso(start))
    assert not first.needs_clarification


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I'll call the bank tomorrow about the mortgage letter", "tomorrow"),
        ("I'll email Sam on Monday regarding the invoice", "on Monday"),
        ("meeting Ana tomorrow for lunch", "tomorrow"),
        ("ping me friday after the standup", "friday"),
        ("see you tomorrow before work", "tomorrow"),
        # A clock time after the word is still part of the phrase.
        ("call the bank tomorrow about 3pm", "tomorrow about 3pm"),
    ],
)
def test_a_time_phrase_never_ends_on_the_word_that_begins_the_rest(
    message: str, expected: str
) -> None:
    [result] = find_time_expressions(message, "Europe/Berlin", REF)
    assert result.matched_text == expected


# Monday 2 November 2026 in Berlin, at the hour given.
def _berlin(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 2, hour, minute, tzinfo=ZoneInfo("Europe/Berlin"))


@pytest.mark.parametrize(
    ("message", "said_at", "start", "end"),
    [
        # Told of the past while under way: the part of day so far, not 09:00.
        ("I ran 5k this morning", (8, 4),
         "2026-11-02T05:00:00+01:00", "2026-11-02T08:04:00+01:00"),
        # Told of the past once over: the whole of it.
        ("this morning was slow", (15, 0),
         "2026-11-02T05:00:00+01:00", "2026-11-02T12:00:00+01:00"),
        ("the call this afternoon went well", (19, 30),
         "2026-11-02T12:00:00+01:00", "2026-11-02T18:00:00+01:00"),
        ("the gig this evening was great", (23, 10),
         "2026-11-02T17:00:00+01:00", "2026-11-02T23:10:00+01:00"),
        # Said of what is ahead: the usual hour, as before (a plan's start).
        ("gonna fix the CI tonight", (19, 35), "2026-11-02T20:00:00+01:00", None),
        ("can we sync this afternoon?", (10, 0), "2026-11-02T15:00:00+01:00", None),
        ("last night was rough", (8, 0), "2026-11-01T20:00:00+01:00", None),
    ],
)  # fmt: skip
def test_todays_part_of_day_under_way_or_over_is_never_an_hour_after_now(
    message: str, said_at: tuple[int, int], start: str, end: str | None
) -> None:
    now = _berlin(*said_at)
    [result] = find_time_expressions(message, "Europe/Berlin", now)
    assert not result.needs_clarification
    assert result.start_instant == iso(start)
    assert result.end_instant == (iso(end) if end else None)


@pytest.mark.parametrize(
    ("message", "said_at", "tomorrow"),
    [
        ("can we talk this morning?", (14, 0), "2026-11-03T09:00:00+01:00"),
        ("let's sync this afternoon", (19, 30), "2026-11-03T15:00:00+01:00"),
    ],
)
def test_a_part_of_day_ahead_that_is_over_is_asked_about(
    message: str, said_at: tuple[int, int], tomorrow: str
) -> None:
    [result] = find_time_expressions(message, "Europe/Berlin", _berlin(*said_at))
    part = message.split("this ")[1].rstrip("?")
    assert result.needs_clarification
    assert result.start_instant is None
    assert result.candidates == (iso(tomorrow),)
    assert result.clarification_question == (
        f'By "this {part}", said at {said_at[0]:02d}:{said_at[1]:02d} once the {part} is '
        f"over, do you mean tomorrow {part} (Tuesday 3 November) or later today?"
    )


def test_a_part_of_day_told_of_the_past_before_it_began_is_not_read() -> None:
    assert find_time_expressions("I was tired this evening", "Europe/Berlin", _berlin(8)) == []


# Monday 22:00 in New York is Tuesday 03:00 in UTC: the small hours there, not the speaker's.
NY_MONDAY_NIGHT = datetime(2026, 11, 3, 3, 0, tzinfo=UTC)


def test_the_small_hours_are_the_speakers_not_the_named_zones() -> None:
    for tz, speaker in (("America/New_York", None), ("UTC", "America/New_York")):
        [result] = find_time_expressions(
            "call me tomorrow 9am UTC", tz, NY_MONDAY_NIGHT, speaker_tz=speaker
        )
        assert result.needs_clarification
        assert "said at 03:00" not in (result.clarification_question or "")
        assert result.clarification_question == (
            'By "tomorrow", do you mean 09:00 on Tuesday 3 November in UTC (tomorrow where '
            "you are, in America/New_York) or 09:00 on Wednesday 4 November (tomorrow in UTC)?"
        )


def test_a_speaker_in_the_small_hours_is_asked_about_tomorrow_in_another_zone() -> None:
    # 03:30 on Tuesday in Berlin, 06:30 in Dubai: the speaker has not slept yet.
    said = datetime(2026, 11, 3, 2, 30, tzinfo=UTC)
    [result] = find_time_expressions("tomorrow 9am Dubai time", "Europe/Berlin", said)
    assert result.needs_clarification
    assert result.clarification_question == (
        'By "tomorrow", said at 03:30, do you mean Tuesday 3 November (the day that has just '
        "begun) or Wednesday 4 November?"
    )


def test_the_session_tz_may_be_an_offset_the_message_named() -> None:
    """The clock stage anchors a message that names "GMT+2" to its label."""
    now = datetime(2026, 11, 18, 14, 0, tzinfo=UTC)
    [at_3] = find_time_expressions("restart it at 3am tomorrow", "UTC+02:00", now)
    assert at_3.zone == "UTC+02:00"
    assert at_3.start_instant == iso("2026-11-19T03:00:00+02:00")
    [later] = find_time_expressions("in 2 days", "UTC-03:30", now)
    assert later.start_instant == now + timedelta(days=2)
    with pytest.raises(ValueError, match="write an offset as 'UTC\\+02:00'"):
        parse_anchored_time("3am", "UTC+2", now)
