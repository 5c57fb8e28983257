"""Which group messages name a time the members must agree on (``whose_time.py``): said
in Berlin on Monday 2 March 2026 at 15:00, each line read as the clock stage reads it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from middleware.clock.finding import find_time_expressions
from middleware.clock.whose_time import names_a_time_to_agree_on

NOW = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)  # Monday 15:00 in Berlin
ZONE = "Europe/Berlin"


def to_agree_on(text: str) -> bool:
    return names_a_time_to_agree_on(text, find_time_expressions(text, ZONE, NOW), NOW)


@pytest.mark.parametrize(
    "text",
    [
        "let's meet at 3pm",
        "standup tomorrow at 9",
        "due friday",
        "the report is due today",
        "standup today",
        "is everyone free today?",
        "can we do it today?",
        "dinner tonight at 8",
        "lunch tomorrow",
        "so sore today. let's meet tomorrow at 10",
    ],
)
def test_a_plan_a_meeting_or_a_deadline_is_a_time_to_agree_on(text: str) -> None:
    assert to_agree_on(text)


@pytest.mark.parametrize(
    "text",
    [
        "so sore today",
        "I'm tired today",
        "had a long day yesterday",
        "today was great",
        "so sore today lol",
        "my back hurts today",
        "what a day today",
        "the call was at 3pm",
        "I ran 5k this morning",
        # Pinned to the speaker's zone, or a span everyone shares.
        "let's meet at 5pm my time",
        "busy week next week",
        # No time at all.
        "so sore",
    ],
)
def test_the_speakers_own_day_is_no_time_to_agree_on(text: str) -> None:
    assert not to_agree_on(text)


def test_an_hour_picked_from_an_earlier_message_is_that_messages_plan() -> None:
    """ "9pm" answering "see you at 9": the phrase read is not in the answer's text."""
    [earlier] = find_time_expressions("see you at 9", ZONE, NOW)
    assert names_a_time_to_agree_on("9pm", [earlier], NOW)
