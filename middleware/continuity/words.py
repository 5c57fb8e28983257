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


# Stopwords that flip what an item says: kept when two items are compared.
_NEGATIONS = frozenset({"not", "no"})


def item_form(text: str) -> str:
    """``text`` as two mentions of one open item or decision compare: case-folded, its
    words in order without punctuation and stopwords, so "Send the report Friday." and
    "send the report on Friday" are one item. Negations stay ("do not ship" is not
    "ship"); an item of stopwords only compares by :func:`folded`."""
    words = [
        word
        for word in (match.group().strip("'’-") for match in _WORD.finditer(text.casefold()))
        if word and (word not in STOPWORDS or word in _NEGATIONS)
    ]
    return " ".join(words) or folded(text)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning (stopwords and one-letter words dropped)."""
    return {
        word
        for word in (match.group().strip("'’-") for match in _WORD.finditer(text.casefold()))
        if len(word) > 1 and word not in STOPWORDS
    }
