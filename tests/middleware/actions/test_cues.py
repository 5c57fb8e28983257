"""Bounded inference cues (spec 000 §6.5): an open action that could explain a message."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from middleware.actions.cues import CUES, find_cue, merge_cues
from middleware.actions.model import Action

NOW = datetime(2026, 2, 9, 18, 0, tzinfo=UTC)


def action(
    id: str,
    label: str,
    activity: str | None,
    *,
    ago: timedelta = timedelta(hours=3),
    typical: int | None = 120,
    hours: float = 24,
) -> Action:
    recorded = NOW - ago
    return Action(
        id=id,
        label=label,
        recorded_at=recorded,
        expires_at=recorded + timedelta(hours=hours),
        status="in_progress",
        source="auto",
        thread_key="agent:main:telegram:dm:42",
        user_key="telegram:42",
        activity=activity,
        expected_typical_minutes=typical,
    )


GYM = action("gym", "Go to the gym", "gym")
MILK = action("milk", "Chug 2 gallons of milk", "meal", ago=timedelta(hours=1))


def test_spec_gym_example() -> None:
    match = find_cue("I'm sore", [GYM], now=NOW)
    assert match is not None
    assert (match.action, match.cue) == (GYM, "sore")
    assert match.question == "Tough workout — did you end up going to the gym?"


def test_spec_milk_example_uses_the_label() -> None:
    match = find_cue("My stomach hurts", [MILK], now=NOW)
    assert match is not None
    assert match.cue == "stomach hurts"
    assert match.question == "Did you actually chug 2 gallons of milk? That would explain it."


def test_meal_subtypes_use_the_meal_cues() -> None:
    dinner = action("d", "Dinner", "meal:dinner")
    match = find_cue("so stuffed right now", [dinner], now=NOW)
    assert match is not None
    assert match.question == "Did you actually have dinner? That would explain it."
    time_for = action("t", "Time for dinner", "meal:dinner")
    match = find_cue("so stuffed right now", [time_for], now=NOW)
    assert match is not None
    assert match.question == "Did you actually have dinner? That would explain it."


@pytest.mark.parametrize(
    ("activity", "text", "cue", "question"),
    [
        ("run", "my legs hurt", "legs hurt", "Sounds like a hard run — did you end up going?"),
        (
            "sleep",
            "feeling groggy",
            "groggy",
            "Did you end up getting some sleep? That might explain it.",
        ),
        ("nap", "so refreshed", "refreshed", "Did you end up getting that nap in?"),
        ("night_out", "I'm so hungover", "hungover", "Big night? Did you end up going out?"),
        (
            "commute",
            "got stuck in traffic",
            "stuck in traffic",
            "Rough trip? Did you make it okay?",
        ),
        ("walk", "got blisters", "blisters", "Long walk? Did you end up going?"),
        ("meeting", "so drained", "drained", "Long meeting? Did it end up running over?"),
        (
            "study",
            "my brain is fried",
            "brain is fried",
            "Long study session? Did you end up getting to it?",
        ),
    ],
)
def test_cues_per_activity(activity: str, text: str, cue: str, question: str) -> None:
    match = find_cue(text, [action("x", "Something", activity)], now=NOW)
    assert match is not None
    assert (match.cue, match.question) == (cue, question)


@pytest.mark.parametrize(
    "text",
    [
        "I'm not sore at all",
        "I don't feel sore",
        "the soreness is gone",  # whole words only
        "pressure is high",
        "what a sunny day",
        "",
    ],
)
def test_no_cue(text: str) -> None:
    assert find_cue(text, [GYM], now=NOW) is None


def test_a_phone_keyboards_curly_apostrophe_reads_as_a_straight_one() -> None:
    # iOS and Android type "don’t" and "can’t": a negation and a cue all the same.
    assert find_cue("I don’t feel sore", [GYM], now=NOW) is None
    match = find_cue("I can’t feel my legs", [GYM], now=NOW)
    assert match is not None and match.cue == "can't feel my legs"


def test_a_cue_for_another_activity_does_not_match() -> None:
    assert find_cue("I'm so bloated", [GYM], now=NOW) is None


def test_the_newest_matching_action_wins() -> None:
    older_run = action("run", "Go for a run", "run", ago=timedelta(hours=5))
    newer_gym = action("gym2", "Hit the gym", "gym", ago=timedelta(hours=1))
    match = find_cue("exhausted and sore", [newer_gym, older_run], now=NOW)
    assert match is not None and match.action.id == "gym2"


def test_likely_done_actions_match() -> None:
    likely = action("gym", "Go to the gym", "gym", ago=timedelta(hours=3), typical=60)
    assert likely.status_at(NOW) == "likely_done"
    assert find_cue("sore", [likely], now=NOW) is not None


def test_expired_and_closed_actions_never_match() -> None:
    expired = action("e", "Go to the gym", "gym", ago=timedelta(hours=3), hours=3)
    closed = GYM.with_status("done", NOW)
    canceled = GYM.with_status("canceled", NOW)
    assert expired.status_at(NOW) == "expired"
    assert find_cue("so sore", [expired, closed, canceled], now=NOW) is None


def test_an_action_that_has_not_begun_explains_nothing() -> None:
    tomorrow = replace(GYM, status="planned", start_at=NOW + timedelta(hours=15))
    assert tomorrow.is_open(NOW)
    assert find_cue("so sore", [tomorrow], now=NOW) is None
    assert find_cue("so sore", [tomorrow], now=NOW + timedelta(hours=16)) is not None


def test_an_action_without_activity_has_no_cues() -> None:
    brb = action("b", "Be right back", None)
    assert find_cue("I'm sore and exhausted", [brb], now=NOW) is None


def test_extra_cues_add_to_the_table() -> None:
    extra = {"gym": ["my arms are jelly"], "errand": ["my feet hurt"]}
    match = find_cue("My arms are JELLY", [GYM], now=NOW, extra=extra)
    assert match is not None and match.cue == "my arms are jelly"
    # the built-in words still work with extras configured
    assert find_cue("sore", [GYM], now=NOW, extra=extra) is not None
    errand = action("e", "Pick up groceries", "errand")
    generic = find_cue("my feet hurt", [errand], now=NOW, extra=extra)
    assert generic is not None
    assert generic.question == (
        'Could that be from earlier ("Pick up groceries")? Did it end up happening?'
    )


def test_merge_cues_adds_without_replacing_or_duplicating() -> None:
    merged = merge_cues({"gym": ["SORE", "noodle arms", "", 3], "walk": "blistered"})  # type: ignore[list-item]
    assert merged["gym"][: len(CUES["gym"])] == CUES["gym"]
    assert merged["gym"][len(CUES["gym"]) :] == ("noodle arms",)
    assert merged["walk"][-1] == "blistered"
    assert merge_cues() == CUES


def test_the_longest_cue_at_a_place_is_reported_and_extras_are_not_doubled() -> None:
    extra = {"gym": ["sore legs", "Sore Legs ", "noodle arms"]}
    assert merge_cues(extra)["gym"][len(CUES["gym"]) :] == ("sore legs", "noodle arms")
    match = find_cue("sore legs today", [GYM], now=NOW, extra=extra)
    assert match is not None and match.cue == "sore legs"


def test_a_negation_at_the_very_start_of_a_long_message_counts() -> None:
    text = "Not sore at all today, though I did want to ask you about the quarterly numbers"
    assert find_cue(text, [GYM], now=NOW) is None


def test_longer_cue_phrases_are_reported() -> None:
    night = action("n", "Go out for drinks", "night_out")
    match = find_cue("ugh, rough night", [night], now=NOW)
    assert match is not None and match.cue == "rough night"
