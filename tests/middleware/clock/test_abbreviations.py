from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import available_timezones

import pytest

from middleware.clock.abbreviations import (
    ABBREVIATIONS,
    ZONE_NAMES,
    candidates_for,
    clarification_for,
    find_abbreviations,
    resolve_abbreviation,
    stated_offset,
)


def test_table_zones_are_valid() -> None:
    zones = available_timezones()
    for abbr, meanings in ABBREVIATIONS.items():
        assert abbr.isupper()
        assert meanings and all(meaning.zone in zones for meaning in meanings), abbr


def test_utc_and_gmt_are_not_abbreviations() -> None:
    assert "UTC" not in ABBREVIATIONS and "GMT" not in ABBREVIATIONS
    assert find_abbreviations("3pm UTC or 4pm GMT") == []


def test_candidates() -> None:
    assert candidates_for("IST") == ("Asia/Kolkata", "Asia/Jerusalem", "Europe/Dublin")
    assert candidates_for("CST") == ("America/Chicago", "Asia/Shanghai", "America/Havana")
    assert candidates_for("BST") == ("Europe/London", "Asia/Dhaka")
    assert candidates_for("XYZ") == ()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("call at 3pm EST", ["EST"]),
        ("IST or CST? IST!", ["IST", "CST"]),
        ("the best test, est. 1999, Ist das gut?", []),
        ("AEST vs AEDT", ["AEST", "AEDT"]),
        ("at 3pm CAT", ["CAT"]),
        ("15:00 PT", ["PT"]),
        ("meet 9:30 am ET", ["ET"]),
        ("I LOVE MY CAT", []),
        ("PT session at the gym", []),
        ("America/EST", []),
        ("no capitals here", []),
    ],
)
def test_find_abbreviations(text: str, found: list[str]) -> None:
    assert find_abbreviations(text) == found


@pytest.mark.parametrize(
    ("abbr", "context", "zone"),
    [
        ("IST", ["Asia/Kolkata"], "Asia/Kolkata"),
        ("IST", ["Europe/Dublin"], "Europe/Dublin"),
        ("IST", [None, "Bogus/Zone", "Asia/Jerusalem"], "Asia/Jerusalem"),
        ("EST", ["America/Toronto"], "America/Toronto"),
        ("EDT", ["America/New_York"], "America/New_York"),
        ("CST", ["Asia/Taipei"], "Asia/Taipei"),
        ("CST", ["America/Mexico_City"], "America/Mexico_City"),
        ("CST", ["Europe/Berlin", "America/Chicago"], "America/Chicago"),
        ("BST", ["Europe/London"], "Europe/London"),
        ("BST", ["Asia/Dhaka"], "Asia/Dhaka"),
        ("IST", ["Asia/Kolkata", "Asia/Kolkata"], "Asia/Kolkata"),
    ],
)
def test_resolved_from_known_zones(abbr: str, context: list[str | None], zone: str) -> None:
    assert resolve_abbreviation(abbr, context) == zone


@pytest.mark.parametrize(
    ("abbr", "context"),
    [
        ("EST", []),  # one usual meaning is still not a licence to map silently
        ("IST", []),
        ("PST", ["Europe/Berlin"]),
        ("IST", ["Asia/Kolkata", "Europe/Dublin"]),
        ("CST", ["America/Chicago", "Asia/Shanghai"]),
        ("CDT", ["America/Mexico_City"]),
        ("XYZ", ["Europe/Berlin"]),
    ],
)
def test_not_resolved_without_one_matching_zone(abbr: str, context: list[str | None]) -> None:
    assert resolve_abbreviation(abbr, context) is None


def test_rules_of_the_given_year() -> None:
    # Mexico City kept CDT until 2022; in 2021 its clock matched Chicago's.
    at = datetime(2021, 3, 1, tzinfo=UTC)
    assert resolve_abbreviation("CDT", ["America/Mexico_City"], at=at) == "America/Mexico_City"
    assert resolve_abbreviation("CDT", ["America/Mexico_City"]) is None


def test_clarification_wording() -> None:
    assert clarification_for("IST") == (
        "Which timezone do you mean by IST — India (Asia/Kolkata), Israel (Asia/Jerusalem) "
        "or Ireland (Europe/Dublin)?"
    )
    assert clarification_for("BST") == (
        "Which timezone do you mean by BST — UK (Europe/London) or Bangladesh (Asia/Dhaka)?"
    )
    assert clarification_for("EST") == (
        "By EST, do you mean US Eastern time (America/New_York)? If not, which city or timezone?"
    )
    assert "XYZ" in clarification_for("XYZ")


def test_zone_names_are_valid_and_spelled_out() -> None:
    zones = available_timezones()
    for name, meanings in ZONE_NAMES.items():
        assert name.endswith(" Time") and name not in ABBREVIATIONS
        assert meanings and all(meaning.zone in zones for meaning in meanings), name


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("meet 9am Eastern time", ["Eastern Time"]),
        (
            "9am eastern time or 3pm  Central   European Summer Time",
            ["Eastern Time", "Central European Summer Time"],
        ),
        ("is that Pacific Standard Time?", ["Pacific Standard Time"]),
        ("noon Australian Eastern time, not ET", ["Australian Eastern Time"]),
        ("a central time slot in the mountain time-out", []),
        ("3pm ET or Eastern time, 4pm ET", ["ET", "Eastern Time"]),
        # A US region right after a clock time is its zone, "time" or not.
        ("9am Pacific works for me", ["Pacific Time"]),
        ("5pm eastern or 10:30 Central?", ["Eastern Time", "Central Time"]),
        ("9am Eastern European time", ["Eastern European Time"]),
        ("meet at 3pm Central Park, then 5pm mountain hike", []),
        ("the Pacific at 9am", []),
    ],
)
def test_find_spelled_out_zone_names(text: str, found: list[str]) -> None:
    assert find_abbreviations(text) == found


def test_spelled_out_names_resolve_or_ask_like_abbreviations() -> None:
    assert resolve_abbreviation("Eastern Time", ["America/Toronto"]) == "America/Toronto"
    assert resolve_abbreviation("Central European Time", ["Europe/Paris"]) == "Europe/Paris"
    assert resolve_abbreviation("Eastern Time", ["Europe/Berlin"]) is None
    assert candidates_for("Mountain Standard Time") == ("America/Denver", "America/Phoenix")
    assert clarification_for("Pacific Time") == (
        "By Pacific Time, do you mean US Pacific time (America/Los_Angeles)? "
        "If not, which city or timezone?"
    )


def test_stated_offset_only_when_the_zone_is_on_another_season() -> None:
    november = datetime(2026, 11, 21, 14, 0, tzinfo=UTC)
    july = datetime(2026, 7, 1, 13, 0, tzinfo=UTC)
    assert stated_offset("CEST", "Europe/Berlin", november) == 120
    assert stated_offset("CEST", "Europe/Berlin", july) is None
    assert stated_offset("CET", "Europe/Berlin", july) == 60
    assert stated_offset("EDT", "America/Toronto", november) == -240
    assert stated_offset("IST", "Europe/Dublin", november) == 60
    assert stated_offset("IST", "Asia/Kolkata", november) is None
    assert stated_offset("ET", "America/New_York", november) is None
    assert stated_offset("CEST", "Bogus/Zone", november) is None
