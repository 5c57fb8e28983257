"""The needle pre-check in front of the action detectors only skips texts no rule can match.

Every detector first asks a gate built from its rules' needles
(:mod:`middleware.actions.prefilter`); these tests hold the gate to the full path on
adversarial texts made of pieces of the real patterns, in odd cases and spacing.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.actions.detect import (
    PATTERNS,
    _first_action,
    _first_report,
    _first_status,
    detect_duration_report,
    detect_status_update,
    detect_temporal_action,
)
from middleware.actions.language import DurationRule, IntentRule, StatusRule
from middleware.actions.prefilter import _fold_chars, fold, needle_search, needles

_RULES: list[IntentRule | StatusRule | DurationRule] = [
    rule
    for patterns in PATTERNS.values()
    for rule in (*patterns.intents, *patterns.status, *patterns.durations)
]
_NEEDLES = sorted({needle for rule in _RULES for needle in rule.needles or ()})


def test_every_rule_has_needles() -> None:
    # A rule without needles turns its detector's gate off: every text would be tried.
    assert all(rule.needles for rule in _RULES)


def test_fold_keeps_every_character_ignorecase_matches() -> None:
    """Wherever a needle's characters match a text's (ignoring case), the folds are equal:
    checked over all of Unicode for every character of every needle."""
    alphabet = sorted({char for needle in _NEEDLES for char in needle} - {" "})
    candidates = re.compile(f"[{re.escape(''.join(alphabet))}]", re.IGNORECASE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (re.fullmatch(r"\s", char) is not None) == char.isspace()
        if candidates.fullmatch(char):
            for letter in alphabet:
                if re.fullmatch(re.escape(letter), char, re.IGNORECASE):
                    assert _fold_chars(char) == _fold_chars(letter), (hex(code), letter)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"sleep|bed", {"sleep", "bed"}),
        (r"(?:woke|woken)\s+up\b", {"woke"}),  # one needle is cheaper than two as rare
        (r"on\s+my\s+way|omw", {"on my way", "omw"}),
        (r"i\s*'?\s*ll", {"ill", "i ll", "i'll", "i 'll", "i' ll", "i ' ll"}),
        (r"(?:just\s+)?went\s+(?P<act>.+)", {"went"}),
        (r"(?<![\w'])(?P<act>\w+)\s+took\s+(?:me\s+)?\d+", {"took"}),
        (r"go+d", {"g"}),
        (r"x?(?:\d+|y)", None),
        (r"(?:a|)bc?", {"b"}),
        (r"(?:a|)b?", None),
        (r".*", None),
    ],
)
def test_needles(pattern: str, expected: set[str] | None) -> None:
    found = needles(re.compile(pattern, re.IGNORECASE))
    assert found == (frozenset(expected) if expected is not None else None)


@settings(max_examples=300, deadline=None)
@given(
    strings=st.lists(st.text("abcd ' ", min_size=1, max_size=4), max_size=6),
    text=st.text("abcd ' ", max_size=20),
)
def test_needle_search_finds_exactly_the_strings(strings: list[str], text: str) -> None:
    found = needle_search(strings).search(text) is not None
    assert found == any(string in text for string in strings)


# --- adversarial texts from pieces of the real patterns -------------------------------

# Spellings IGNORECASE still matches: dotted and dotless i, long s, the Kelvin sign.
_ODD = {"i": "iIİı", "s": "sSſ", "k": "kK\u212a"}
_SPACES = (" ", "  ", "\t", "\n", "\u00a0", " - ", ", ", ". ", "? ", "! ", "’")
_WORDS = sorted(
    {word for needle in _NEEDLES for word in needle.split()}
    | set(
        "ok so I'm I’m we're just now gym dinner work the it that home back 10 2 hours "
        "mins tonight tomorrow later maybe said not never".split()
    )
)


@st.composite
def _texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=10))
    text = ""
    for word in words:
        if draw(st.booleans()):  # each letter in any case it matches in
            word = "".join(
                draw(st.sampled_from(_ODD.get(char.lower(), char + char.upper()))) for char in word
            )
        text += word + draw(st.sampled_from(_SPACES))
    return text


_TEXTS = st.one_of(
    _texts(),
    st.sampled_from(_RULES).flatmap(lambda rule: st.from_regex(rule.pattern)),
    st.text(max_size=40),
)


@settings(max_examples=1000, deadline=None)
@given(text=_TEXTS)
def test_a_rule_matching_anywhere_leaves_a_needle_in_the_text(text: str) -> None:
    folded = fold(text)
    for rule in _RULES:
        if rule.pattern.search(text):
            assert any(needle in folded for needle in rule.needles or ()), rule.pattern


@settings(max_examples=500, deadline=None)
@given(text=_TEXTS)
def test_the_detectors_find_what_the_full_path_finds(text: str) -> None:
    for language in PATTERNS:
        assert detect_temporal_action.__wrapped__(text) == _first_action(text, language)  # type: ignore[attr-defined]
        assert detect_status_update.__wrapped__(text) == _first_status(text, language)  # type: ignore[attr-defined]
        assert detect_duration_report.__wrapped__(text) == _first_report(text, language)  # type: ignore[attr-defined]
