"""The work phase from the user's verbs (spec 001 §3.2, §5.3)."""

from __future__ import annotations

import pytest

from middleware.continuity.extract import ExtractTurn
from middleware.continuity.model import WORK_PHASES, WorkPhase
from middleware.continuity.phase import infer_work_phase, mentioned_phase


def _user(text: str) -> ExtractTurn:
    return ExtractTurn("user", text)


def _assistant(text: str) -> ExtractTurn:
    return ExtractTurn("assistant", text)


@pytest.mark.parametrize(
    ("text", "phase"),
    [
        ("Can you research recent cases on loss causation?", "research"),
        ("Look up the statute of limitations for fraud in Delaware.", "research"),
        ("Compare the two lease offers for me.", "research"),
        ("Let's analyze the crash logs.", "research"),
        ("Help me draft the intro to the damages brief.", "drafting"),
        ("I'm writing the second verse now.", "drafting"),
        ("Let's outline the expert report.", "drafting"),
        ("Can you proofread this cover letter?", "review"),
        ("Please review my pull request.", "review"),
        ("Go over the exhibit list with me.", "review"),
        ("Rewrite this paragraph so it's shorter.", "revision"),
        ("I need to revise section 2 based on the comments.", "revision"),
        ("Let's fix the failing migration.", "revision"),
        ("We're waiting on the expert's numbers.", "waiting_for_external"),
        ("I'm blocked on the API keys from ops.", "waiting_for_external"),
        ("Still pending a signature from the client.", "waiting_for_external"),
        ("Submitted the brief this morning!", "completed"),
        ("We shipped it.", "completed"),
        ("That's all done, thanks.", "completed"),
        ("Let's put this on hold until after the holidays.", "paused"),
        ("I'm going to park the album for a while.", "paused"),
        ("Shelving the side project for now.", "paused"),
    ],
)
def test_mentioned_phase(text: str, phase: WorkPhase) -> None:
    assert mentioned_phase(text) == phase


@pytest.mark.parametrize(
    "text",
    [
        "Hi, how are you?",
        "Thanks!",
        "What time is it in Tokyo?",
        "I'm not done yet.",
        "We haven't submitted anything.",
        "If we were waiting on the expert, what would change?",
        "She said they're blocked on legal.",
        "I can't find my keys.",
    ],
)
def test_no_phase(text: str) -> None:
    assert mentioned_phase(text) is None


def test_last_mention_in_a_message_wins() -> None:
    assert mentioned_phase("Finished the research, now drafting the intro.") == "drafting"


def test_unknown_without_signal() -> None:
    assert infer_work_phase([]) == "unknown"
    assert infer_work_phase([_user("hello"), _assistant("Hi! Let's draft something.")]) == (
        "unknown"
    )


def test_assistant_turns_do_not_count() -> None:
    turns = [_user("Help me draft the intro."), _assistant("Let me research that and review it.")]
    assert infer_work_phase(turns) == "drafting"


def test_dominant_phase_with_recency() -> None:
    turns = [
        _user("Research the precedents on scienter."),
        _user("Find cases from the Second Circuit."),
        _user("Now let's draft the argument section."),
        _user("Draft the counter-argument too."),
    ]
    # Two research mentions early, two drafting mentions later: later turns weigh more.
    assert infer_work_phase(turns) == "drafting"


def test_many_early_mentions_outweigh_one_late() -> None:
    turns = [_user("Research the precedents.")] * 4 + [_user("Maybe draft a line or two.")]
    assert infer_work_phase(turns) == "research"


def test_state_in_the_latest_turn_wins() -> None:
    drafting = [_user("Draft the intro."), _user("Draft the conclusion.")]
    assert infer_work_phase([*drafting, _user("Ok, submitted it.")]) == "completed"
    assert infer_work_phase([*drafting, _user("Let's park this.")]) == "paused"
    waiting = _user("Waiting for the client's comments now.")
    assert infer_work_phase([*drafting, waiting]) == "waiting_for_external"
    # A state the session has moved past does not stick.
    assert infer_work_phase([waiting, _user("They replied, let's revise the draft.")]) == (
        "revision"
    )


def test_phases_are_the_model_phases() -> None:
    texts = ["research it", "draft it", "review it", "revise it", "waiting on them", "shipped"]
    assert {mentioned_phase(t) for t in texts} <= set(WORK_PHASES)
