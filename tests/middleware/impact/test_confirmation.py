"""Only short, unambiguous answers confirm a held impactful tool call."""

from __future__ import annotations

import pytest

from middleware.impact.confirmation import classify_answer


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "Yes.",
        "YES!!!",
        "y",
        "yep",
        "yeah",
        "yes please",
        "Yes, please!",
        "confirm",
        "Confirmed.",
        "go ahead",
        "Go ahead please",
        "do it",
        "send it",
        "ok",
        "OK",
        "okay",
        "sure",
        "approved",
        "proceed",
        "yes, send it",
        "Yes — send it, thanks",
        "👍",
        "👍🏽",
        "ok 👍",
        "ok👍",
        "  yes \n",
        "yes yes",
    ],
)
def test_confirmations(text: str) -> None:
    assert classify_answer(text) == "confirm"


@pytest.mark.parametrize(
    "text",
    [
        "no",
        "No.",
        "nope",
        "don't",
        "Don\u2019t send it",  # a typographic apostrophe
        "do not send it",
        "cancel",
        "stop!",
        "wait",
        "hold on",
        "not yet",
        "no thanks",
        "ok, wait",
        "don't go ahead",
        "no, don't do it",
        "👎",
    ],
)
def test_refusals(text: str) -> None:
    assert classify_answer(text) == "refuse"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "?!",
        "yes?",
        "ok？",
        "what would it send?",
        "yes but change the subject",
        "yes, and cc Alice",
        "send it to Carol instead",
        "not ok",
        "please",
        "thanks",
        "yes " * 9,
        "delete it",
        "sounds like a plan but let me think",
    ],
)
def test_anything_else_is_other(text: str) -> None:
    assert classify_answer(text) == "other"
