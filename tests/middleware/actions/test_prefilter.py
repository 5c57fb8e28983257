"""The needle pre-checks (the action detectors' and the other stages' gates) only skip texts
no rule can match.

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
    _scheduling_score,
    detect_duration_report,
    detect_status_update,
    detect_temporal_action,
    scheduling_confidence,
)
from middleware.actions.language import DurationRule, IntentRule, StatusRule
from middleware.actions.prefilter import (
    GATES,
    Gate,
    _fold_chars,
    fold,
    gate_text,
    needle_search,
    needles,
)
from middleware.clock.temporal import asks_about_current_events, asks_with_recency_pattern
from middleware.impact.intent import _REQUEST, asks_for_impactful_action
from middleware.memory.triggers import _detect, detect_memory
from middleware.text_cache import MAX_CHARS
from tests.strategies import chat_texts, matches_of

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

_SPACES = (" ", "  ", "\t", "\n", "\u00a0", " - ", ", ", ". ", "? ", "! ", "’")
_WORDS = sorted(
    {word for needle in _NEEDLES for word in needle.split()}
    | set(
        "ok so I'm I’m we're just now gym dinner work the it that home back 10 2 hours "
        "mins tonight tomorrow later maybe said not never".split()
    )
)


_TEXTS = st.one_of(
    chat_texts(_WORDS, _SPACES),
    matches_of([rule.pattern for rule in _RULES]),
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
        assert detect_temporal_action(text) == _first_action(text, language)
        assert detect_status_update(text) == _first_status(text, language)
        assert detect_duration_report(text) == _first_report(text, language)


# --- the gates in front of the other stages' per-message checks -----------------------


_GATE_PATTERNS = [pattern for _, patterns in GATES for pattern in patterns]
_GATE_NEEDLES = sorted({needle for pattern in _GATE_PATTERNS for needle in needles(pattern) or ()})
_GATE_WORDS = sorted(
    {word for needle in _GATE_NEEDLES for word in needle.split()}
    | set(
        "I I'm I’m i‘m we're we’re my name is call me remember that don't don’t forget "
        "actually prefer like when you always never from now on going forward schedule "
        "meeting at what time are you free today news latest send email merge delete book "
        "a the it later 3pm tomorrow please ok so well".split()
    )
)
_GATE_SPACES = (" ", "  ", "\t", "\n", "\u00a0", ", ", ". ", "! ", "? ", ": ", "’", "‘", "")


_GATE_TEXTS = st.one_of(
    chat_texts(_GATE_WORDS, _GATE_SPACES),
    matches_of(_GATE_PATTERNS),
    st.text(max_size=40),
)


def test_every_check_behind_a_gate_has_needles() -> None:
    # A pattern without needles turns its gate off: every text would be searched.
    assert len(GATES) >= 4
    assert all(needles(pattern) for pattern in _GATE_PATTERNS)


def test_gate_needles_fold_as_ignorecase_matches() -> None:
    """As for the action rules: wherever a needle's letter matches a character ignoring
    case, the folds are equal."""
    alphabet = sorted({char for needle in _GATE_NEEDLES for char in needle} - {" "})
    candidates = re.compile(f"[{re.escape(''.join(alphabet))}]", re.IGNORECASE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if candidates.fullmatch(char):
            for letter in alphabet:
                if re.fullmatch(re.escape(letter), char, re.IGNORECASE):
                    assert _fold_chars(char) == _fold_chars(letter), (hex(code), letter)


@settings(max_examples=1500, deadline=None)
@given(text=_GATE_TEXTS)
def test_a_gate_lets_through_every_text_its_patterns_match(text: str) -> None:
    straight = text.replace("’", "'").replace("‘", "'")
    joined = " ".join(straight.split())
    for gate, patterns in GATES:
        if any(p.search(t) for p in patterns for t in (text, straight, joined)):
            assert gate.may_match(text), [p.pattern[:40] for p in patterns]


@settings(max_examples=1000, deadline=None)
@given(text=_GATE_TEXTS)
def test_the_gated_checks_answer_as_their_full_paths(text: str) -> None:
    assert asks_about_current_events(text) is asks_with_recency_pattern(text)
    assert asks_for_impactful_action(text) is (_REQUEST.search(text) is not None)
    full_score = max([0.0, *(_scheduling_score(text, p) for p in PATTERNS.values())])
    assert scheduling_confidence(text) == full_score
    assert detect_memory(text) == _detect(text)


def test_a_gate_says_no_only_without_needles_and_never_for_long_texts() -> None:
    pattern = re.compile(r"\bhello\b", re.IGNORECASE)
    gate = Gate(pattern)
    try:
        assert gate.may_match("well, HELLO there") and gate.may_match("say hellos")
        assert not gate.may_match("goodbye")
        assert gate.may_match("goodbye " * MAX_CHARS)  # not kept per text, so not folded
    finally:
        GATES.remove((gate, (pattern,)))
    assert gate_text("I’m  Here ‘now’") == "i'm here 'now'"
