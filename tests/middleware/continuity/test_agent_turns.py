"""An agent's own compaction turns, told from what the user says."""

from __future__ import annotations

import pytest

from middleware.continuity.agent_turns import is_compaction_turn


@pytest.mark.parametrize(
    "text",
    [
        "Your task is to create a detailed summary of the conversation so far, paying close "
        "attention to the user's explicit requests and your previous actions.",
        "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary.",
        "Pre-compaction memory flush. Store durable memories now. If nothing to store, "
        "reply with NO_REPLY.",
        "This session is being continued from a previous conversation that ran out of "
        "context. The conversation is summarized below: …",
        "Please summarize the discussion above.",
        "Write a brief summary of our conversation to date.",
    ],
)
def test_an_agents_compaction_turn(text: str) -> None:
    assert is_compaction_turn(text)


@pytest.mark.parametrize(
    "text",
    [
        "Summarize the chat with the client.",
        "Let's write a summary of the meeting.",
        "I need a summary of the session notes for Sam.",
        "We decided to go with Postgres for the billing service.",
        "The conversation with the landlord went fine so far.",
    ],
)
def test_the_users_own_words_are_not(text: str) -> None:
    assert not is_compaction_turn(text)
