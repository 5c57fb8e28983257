"""Word-level helpers shared by capture and promotion: folding text for comparison and
the content words two mentions of the same thing have in common."""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w'’-]+")
STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from about into over
    is are was were be been being am do does did done have has had i me my we our us you
    your it its this that these those there here what which who whom how when where why
    will would shall should can could may might must not no yes just also too very really
    ok okay let lets let's go going get got make made use using up out as than""".split()
)


def folded(text: str) -> str:
    """``text`` for equality checks: case-folded, whitespace collapsed, no end punctuation."""
    return " ".join(text.casefold().split()).strip(" .!?;:,")


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning (stopwords and one-letter words dropped)."""
    return {
        word
        for word in (match.group().strip("'’-") for match in _WORD.finditer(text.casefold()))
        if len(word) > 1 and word not in STOPWORDS
    }
