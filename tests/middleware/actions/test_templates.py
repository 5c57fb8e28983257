"""Activity templates: matching by specificity and calibration overriding durations."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from middleware.actions.templates import TEMPLATES, expected_minutes, match_activity

REQUIRED = (
    "sleep nap meal:breakfast meal:lunch meal:dinner meal gym run walk shower commute "
    "meeting call errand cooking study night_out"
).split()


def test_every_required_activity_has_a_template() -> None:
    assert set(REQUIRED) <= set(TEMPLATES)
    for key, template in TEMPLATES.items():
        assert template.key == key
        assert 0 < template.typical_minutes <= template.max_minutes
        assert template.question.endswith("?")


def test_ttl_is_a_day_except_sleep_nap_and_a_moment_away() -> None:
    assert TEMPLATES["sleep"].ttl == timedelta(hours=12)
    assert TEMPLATES["sleep"].typical_minutes == 480
    assert TEMPLATES["sleep"].max_minutes == 720
    assert TEMPLATES["nap"].ttl < timedelta(hours=12)
    assert TEMPLATES["brb"].ttl == timedelta(hours=1)
    others = [t for k, t in TEMPLATES.items() if k not in ("sleep", "nap", "brb")]
    assert all(t.ttl == timedelta(hours=24) for t in others)


def test_sleep_question_is_the_spec_follow_up() -> None:
    assert TEMPLATES["sleep"].question == "did you end up getting some sleep?"
    assert TEMPLATES["gym"].question == "how did the gym go?"
    assert TEMPLATES["meal:dinner"].question == "how was dinner?"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("about to eat dinner", "meal:dinner"),
        ("grab some lunch", "meal:lunch"),
        ("Breakfast!", "meal:breakfast"),
        ("chug 2 gallons of milk", "meal"),
        ("get some food", "meal"),
        ("cook dinner", "cooking"),
        ("go to the gym", "gym"),
        ("leg day workout", "gym"),
        ("go for a run", "run"),
        ("my run", "run"),
        ("walk the dog", "walk"),
        ("take a shower", "shower"),
        ("heading home", "commute"),
        ("catch the bus", "commute"),
        ("the standup", "meeting"),
        ("call the bank", "call"),
        ("go to the bank", "errand"),
        ("pick up groceries", "errand"),
        ("take a nap", "nap"),
        ("go to bed", "sleep"),
        ("study for the exam", "study"),
        ("a party downtown", "night_out"),
        ("grab drinks", "night_out"),
        ("go to the airport", "flight"),
        ("catch a flight", "flight"),
        ("drive to the airport", "flight"),
        ("fly to Tokyo", "flight"),
        ("go to the doctor", "appointment"),
        ("go to dentist appointment", "appointment"),
        ("see the vet", "appointment"),
        ("call the doctor", "call"),
        ("do the school run", "school_run"),
        ("pick up the kids", "school_run"),
        ("drop the kids off", "school_run"),
        ("go for a bike ride", "ride"),
        ("go for a ride", "ride"),
        ("get a ride home", "commute"),
        ("go for a swim", "swim"),
        ("swim some laps", "swim"),
    ],
)
def test_match_activity_picks_the_most_specific(text: str, key: str) -> None:
    template = match_activity(text)
    assert template is not None
    assert template.key == key


@pytest.mark.parametrize(
    "text",
    ["run the tests", "call it a night", "review the pull request", "gotta run", "", "drunken"],
)
def test_match_activity_ignores_other_words(text: str) -> None:
    assert match_activity(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "book the dentist",
        "book an appointment",
        "book a doctor's appointment",
        "need to book the dentist",
        "make a dentist appointment",
        "rescheduling my haircut",
        "cancel the vet",
    ],
)
def test_booking_an_appointment_is_not_the_visit(text: str) -> None:
    template = match_activity(text)
    assert template is None or template.key != "appointment"


def test_departures_have_durations_and_a_hedged_question() -> None:
    assert expected_minutes(TEMPLATES["flight"], {}) == (180, 720)
    assert TEMPLATES["flight"].question == "did you make your flight okay?"
    assert expected_minutes(TEMPLATES["appointment"], {}) == (60, 180)
    assert TEMPLATES["school_run"].question == "did the school run go okay?"
    assert TEMPLATES["swim"].question == "how was the swim?"


def test_expected_minutes_without_calibration_is_the_template() -> None:
    assert expected_minutes(TEMPLATES["gym"], {}) == (120, 240)


def test_calibration_override_wins_over_the_template() -> None:
    calibration = {
        "activity_overrides": {
            "gym": {"typical_minutes": 180, "max_minutes": 270, "updated_iso": "2026-02-01"}
        }
    }
    assert expected_minutes(TEMPLATES["gym"], calibration) == (180, 270)
    # Other activities keep their template.
    assert expected_minutes(TEMPLATES["run"], calibration) == (45, 120)


def test_override_without_max_keeps_the_template_max_or_the_typical() -> None:
    short = {"activity_overrides": {"gym": {"typical_minutes": 60}}}
    long = {"activity_overrides": {"gym": {"typical_minutes": 300}}}
    assert expected_minutes(TEMPLATES["gym"], short) == (60, 240)
    assert expected_minutes(TEMPLATES["gym"], long) == (300, 300)


def test_max_below_typical_is_raised_to_typical() -> None:
    calibration = {"activity_overrides": {"gym": {"typical_minutes": 200, "max_minutes": 100}}}
    assert expected_minutes(TEMPLATES["gym"], calibration) == (200, 200)


@pytest.mark.parametrize(
    "calibration",
    [
        {"activity_overrides": "nope"},
        {"activity_overrides": {"gym": "three hours"}},
        {"activity_overrides": {"gym": {"typical_minutes": "180"}}},
        {"activity_overrides": {"gym": {"typical_minutes": 0}}},
        {"activity_overrides": {"gym": {"typical_minutes": -5}}},
        {"activity_overrides": {"gym": {"typical_minutes": True}}},
        {"activity_overrides": {"gym": {"typical_minutes": float("inf")}}},
        {"activity_overrides": {"gym": {"typical_minutes": float("nan")}}},
        {"activity_overrides": None},
        {"other": 1},
    ],
)
def test_malformed_calibration_is_ignored(calibration: dict[str, Any]) -> None:
    assert expected_minutes(TEMPLATES["gym"], calibration) == (120, 240)


def test_malformed_max_falls_back() -> None:
    calibration = {"activity_overrides": {"gym": {"typical_minutes": 90, "max_minutes": "x"}}}
    assert expected_minutes(TEMPLATES["gym"], calibration) == (90, 240)
