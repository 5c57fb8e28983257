"""Hypothesis strategies shared by the tests of the text patterns."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import strategies as st

# Spellings re.IGNORECASE still matches: dotted and dotless i, long s, the Kelvin sign.
CASE_VARIANTS = {"i": "iIİı", "s": "sSſ", "k": "kK\u212a"}


def chat_texts(
    words: Sequence[str], separators: Sequence[str], *, max_words: int = 10
) -> st.SearchStrategy[str]:
    """Texts of ``words`` (or phrases), each followed by one of ``separators``; about half
    the words have each letter in any case ``re.IGNORECASE`` matches it in."""

    @st.composite
    def texts(draw: st.DrawFn) -> str:
        chosen = draw(st.lists(st.sampled_from(words), min_size=1, max_size=max_words))
        text = ""
        for word in chosen:
            if draw(st.booleans()):
                word = "".join(
                    draw(st.sampled_from(CASE_VARIANTS.get(char.lower(), char + char.upper())))
                    for char in word
                )
            text += word + draw(st.sampled_from(separators))
        return text

    return texts()


def matches_of(patterns: Sequence[re.Pattern[str]]) -> st.SearchStrategy[str]:
    """Texts that one of ``patterns``, picked at random, matches.

    Each pattern's ``from_regex`` is built once and kept here. Drawn through
    ``sampled_from(patterns).flatmap(st.from_regex)`` it was rebuilt whenever Hypothesis's
    strategy cache, which drawing such texts churns, had let it go: a second or more for
    the largest patterns, and most of the time of the property tests that used it."""
    return st.one_of([st.from_regex(pattern) for pattern in patterns])
