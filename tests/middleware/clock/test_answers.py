"""Reading a reply as the answer to the relay's "09:00 or 21:00?" question."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from middleware.clock.answers import answers_hour_choice, pick_hour
from middleware.clock.finding import find_time_expressions

SAID = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)  # Berlin Sat 07:00
ASKED = find_time_expressions("see you at 9", "Europe/Berlin", SAID)


@pytest.mark.parametrize(
    ("answer", "hour"),
    [("9am", 9), ("9 p.m.", 21), ("21:00", 21), ("the morning one", 9), ("I meant 9pm", 21),
     ("ok, evening then", 21), ("the first one", 9)],
)  # fmt: skip
def test_an_answer_picks_its_side_of_noon(answer: str, hour: int) -> None:
    assert answers_hour_choice(answer)
    picked = pick_hour(answer, ASKED)
    assert picked is not None and picked.matched_text == answer
    assert picked.start_instant == datetime(2026, 11, 21, hour - 1, tzinfo=UTC)


@pytest.mark.parametrize("answer", ["9", "10am", "8:30pm"])
def test_an_answer_naming_no_side_or_another_hour_picks_nothing(answer: str) -> None:
    assert pick_hour(answer, ASKED) is None


@pytest.mark.parametrize("answer", ["pm", "the afternoon one", "2pm", "14:00"])
def test_an_answer_to_a_range_of_hours_picks_the_range(answer: str) -> None:
    """ "between 2 and 4 tomorrow" asks "02:00 to 04:00 or 14:00 to 16:00": the answer is
    the range from 14:00 to 16:00, not the hour 14:00 alone."""
    asked = find_time_expressions("call me between 2 and 4 tomorrow", "Europe/Berlin", SAID)
    picked = pick_hour(answer, asked)
    assert picked is not None
    assert (picked.start_instant, picked.end_instant) == (
        datetime(2026, 11, 22, 13, tzinfo=UTC),
        datetime(2026, 11, 22, 15, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    "question", ["Morning or afternoon?", "Do you mean 2 to 4 am or pm?", "Which one?"]
)
def test_the_answered_range_is_the_users_phrase_whatever_the_question_said(
    question: str,
) -> None:
    """The span comes from "between 2 and 4" as the user said it, not from how the
    question was worded: a question put in other words picks the same two hours."""
    (asked,) = find_time_expressions("call me between 2 and 4 tomorrow", "Europe/Berlin", SAID)
    picked = pick_hour("pm", [replace(asked, clarification_question=question)])
    assert picked is not None
    assert (picked.start_instant, picked.end_instant) == (
        datetime(2026, 11, 22, 13, tzinfo=UTC),
        datetime(2026, 11, 22, 15, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("said", "answer", "span"),
    [  # Berlin goes back from 03:00 to 02:00 on 25 October, forward from 02:00 on 29 March
        (datetime(2026, 10, 24, 6, tzinfo=UTC), "am",
         (datetime(2026, 10, 24, 23, tzinfo=UTC), datetime(2026, 10, 25, 2, tzinfo=UTC))),
        (datetime(2026, 3, 28, 6, tzinfo=UTC), "am",
         (datetime(2026, 3, 29, 0, tzinfo=UTC), datetime(2026, 3, 29, 1, tzinfo=UTC))),
    ],
)  # fmt: skip
def test_an_answered_range_across_a_dst_change_is_its_real_length(
    said: datetime, answer: str, span: tuple[datetime, datetime]
) -> None:
    """ "between 1 and 3" on the night the clocks change is 01:00 to 03:00 on the wall:
    three hours when they go back, one when they go forward."""
    asked = find_time_expressions("call me between 1 and 3 tomorrow", "Europe/Berlin", said)
    picked = pick_hour(answer, asked)
    assert picked is not None
    assert (picked.start_instant, picked.end_instant) == span


def test_an_hour_on_the_day_the_clocks_go_back_is_still_asked_between_its_two_sides() -> None:
    """01:00 and 13:00 on 25 October in Berlin are 13 hours apart: still one question."""
    asked = find_time_expressions(
        "see you tomorrow at 1", "Europe/Berlin", SAID.replace(month=10, day=24)
    )
    picked = pick_hour("1pm", asked)
    assert picked is not None and picked.start_instant == datetime(2026, 10, 25, 12, tzinfo=UTC)
    assert picked.end_instant is None


def test_nothing_is_picked_when_no_hour_was_asked_about() -> None:
    assert pick_hour("9pm", find_time_expressions("see you at 9pm", "Europe/Berlin", SAID)) is None
    assert not answers_hour_choice("see you at 9am, then we can go for lunch")


@pytest.mark.parametrize("message", ["9", "10", "12", "2"])
def test_a_bare_hour_on_the_dial_is_no_answer_worth_looking_back_for(message: str) -> None:
    """A message of only "9" (or "2": a count, a choice) names no side of noon, so the
    clock does not read the previous message for it."""
    assert not answers_hour_choice(message)
    assert answers_hour_choice("21")
