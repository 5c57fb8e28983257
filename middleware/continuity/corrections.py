"""Corrections: "actually the report is due Monday", "no wait, the call is on Thursday".

A correction replaces something said before, so the continuity log must not keep the old
version on the card. As with the other heuristics (:mod:`middleware.continuity.extract`),
precision beats recall: a correction is a user sentence that *starts* with a correction
marker, and it supersedes an earlier open question or key decision only when the two
share words and the correction brings a new value (a day, a date or number, a name). "Actually,
the call went fine" names no new value and replaces nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from middleware.continuity.extract import ExtractTurn, clean_item, split_sentences
from middleware.continuity.words import content_words
from middleware.quoting import own_words

# Share of the shorter side's content words the correction and the item must have in common.
MATCH_OVERLAP = 0.5

_MARKER = re.compile(
    r"^(?:(?:oh|ah|oops|sorry|hmm+|um+)\b[\s,!.]*)*"
    r"(?:actually|no\s*,?\s*wait|wait\s*,?\s*no|correction|sorry\s*,?\s*i\s+meant|i\s+meant"
    r"|scratch\s+that|my\s+(?:mistake|bad))\b[\s,:;!.—–-]*(?P<item>\S.*)$",
    re.IGNORECASE,
)
_REQUEST = re.compile(r"^(?:please\b|(?:can|could|would|will)\s+you\b)", re.IGNORECASE)
_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec noon midnight""".split()
)
_TOKEN = re.compile(r"[\w'’-]+")


@dataclass(frozen=True, slots=True)
class Correction:
    """A corrected statement: ``text`` as a card shows it, the ``turn`` it was said in."""

    text: str
    turn: int


def extract_corrections(turns: Sequence[ExtractTurn]) -> list[Correction]:
    """The user's corrections in ``turns``, oldest first; never a question or a request."""
    found: list[Correction] = []
    for index, turn in enumerate(turns):
        if turn.role != "user":
            continue
        for sentence in split_sentences(own_words(turn.text)):
            match = _MARKER.match(" ".join(sentence.replace("’", "'").split()))
            if match is None or sentence.rstrip().endswith("?"):
                continue
            item = match["item"]
            if _REQUEST.match(item) or not (text := clean_item(item)):
                continue
            found.append(Correction(text, index))
    return found


def corrected_index(correction: str, items: Sequence[str]) -> int | None:
    """The index of the item of ``items`` that ``correction`` replaces, or ``None``.

    An item matches when it shares at least :data:`MATCH_OVERLAP` of the shorter side's
    content words with the correction, and the correction's own new words include a value
    (a weekday or month, a number, a capitalised name). The best overlap wins; on a tie the
    later item (the most recent statement of the thing being corrected).
    """
    said = content_words(correction)
    new_values = _values(correction)
    best: tuple[float, int] | None = None
    for index, item in enumerate(items):
        words = content_words(item)
        shared = said & words
        if not shared or not (new_values - words):
            continue
        score = len(shared) / min(len(said), len(words))
        if score >= MATCH_OVERLAP and (best is None or score >= best[0]):
            best = (score, index)
    return None if best is None else best[1]


def restates(candidate: str, correction: str, corrected: str) -> bool:
    """Whether ``candidate`` states what ``correction`` brings new over ``corrected``: "Use
    MySQL for billing" restates "actually we're using MySQL" over "go with Postgres"."""
    return bool((_values(correction) - content_words(corrected)) & content_words(candidate))


# "not Postgres", "instead of Friday": what a correction turns away from, not what it brings.
_TURNED_AWAY = re.compile(
    r"\b(?:not|instead\s+of|rather\s+than|no\s+longer)\s+(?:the\s+|a\s+|an\s+)?[\w'’-]+",
    re.IGNORECASE,
)


def still_states(text: str, corrected: str, correction: str) -> bool:
    """Whether ``text`` (a session's summary) states ``corrected`` as it was before
    ``correction`` replaced it: it names a word the correction dropped ("Postgres" of "use
    Postgres" → "actually we're using MySQL, not Postgres") and none it brought ("MySQL").
    "Switched from Postgres to MySQL" states the change, not the old item; when the two
    differ in no word, nothing can tell, and ``text`` is taken not to state it."""
    brought_text = _TURNED_AWAY.sub(" ", correction)
    old, new = content_words(corrected), content_words(brought_text)
    gone = old - new
    brought = (_values(brought_text) - old) or (new - old)
    said = content_words(text)
    return bool(gone & said) and not (brought & said)


def names_a_value(text: str) -> bool:
    """Whether ``text`` names a value (a weekday or month, a number, a capitalised name):
    "the report is due Monday" does, "the weather is fine" does not."""
    return bool(_values(text))


def _values(text: str) -> set[str]:
    """The words of ``text`` that name a value: calendar words, numbers, and capitalised
    words after the first."""
    values: set[str] = set()
    for position, match in enumerate(_TOKEN.finditer(text)):
        word = match.group()
        folded = word.casefold()
        if folded in _CALENDAR or any(c.isdigit() for c in word):
            values.add(folded)
        elif position > 0 and word[0].isupper():
            values.add(folded)
    return values
