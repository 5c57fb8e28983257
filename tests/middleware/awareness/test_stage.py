"""The awareness stage's promise, told before a turn is recorded, of answering it itself."""

from __future__ import annotations

import pytest

from middleware.awareness.stage import answers_directive
from middleware.awareness.view import AwarenessSettings, awareness_view
from middleware.clock.policy import LatestActionsPolicy
from middleware.store import PriorState
from tests.middleware.awareness.test_view import turn

MESSAGES = [
    "clock: kind project",
    "CLOCK: mode light",
    "clock: off",
    "clock: on.",
    "clock: auto off",
    "clock: kind epic",  # invalid: the relay says what to write instead
    "clock:",
    "clock it:",
    "clock it: heading to the gym",
    "heading to the gym, clock it",
    "clock: kind project\nand what about the budget?",  # mixed: the model answers
    "clock: kind of tired today",  # a label, not a setting
    "please don't clock it",
    "what's the time?",
]


@pytest.mark.parametrize("clocking", [True, False])
@pytest.mark.parametrize("text", MESSAGES)
def test_answers_directive_agrees_with_the_views_reply(text: str, clocking: bool) -> None:
    settings = AwarenessSettings(actions=LatestActionsPolicy(enabled=clocking))
    message = turn(text, PriorState())
    view = awareness_view(message, settings)
    assert answers_directive(settings)(message) == (view.reply is not None)


def test_nothing_is_answered_where_commands_are_not_or_awareness_is_off() -> None:
    message = turn("clock: kind project", PriorState())
    assert answers_directive(AwarenessSettings())(message)
    assert not answers_directive(AwarenessSettings(enabled=False))(message)
    message.commands_allowed = False
    assert not answers_directive(AwarenessSettings())(message)
