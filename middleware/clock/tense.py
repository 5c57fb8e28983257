"""Whether a time phrase tells of the past ("the meeting was at 3pm", "we spoke yesterday
at 10") rather than of something ahead ("see you at 9").

A time with no date is read as its next occurrence (``wallclock.py``); a sentence in the
past tense means the last one, and an hour it gives with no am/pm is not a plan to ask
about. This reads the one sentence around the phrase with two small word lists, not a
grammar: a sentence with any sign of the future ("will", "tomorrow", "moved to") is
never past, so a miss reads a phrase as before, never the other way round.
"""

from __future__ import annotations

import re

__all__ = ["sentence_around", "tells_of_the_past"]

# Past forms of the verbs people tell of their day with, the past auxiliaries, and a
# subject followed straight by a regular past ("I called at 9", "we landed at 6").
_PAST = re.compile(
    r"\b(?:was|were|did|had|woke|spoke|met|got|went|came|left|ate|slept|took|saw|heard|told"
    r"|sent|ran|began|fell|made|rang|wrote|drove|flew|yesterday|ago|last\s+night)\b"
    r"|\b(?:i|we|you|he|she|they|it)\s+(?:(?:already|just|only|finally)\s+)?[a-z]+ed\b",
    re.IGNORECASE,
)
# Anything that points ahead wins: a plan, a request, or a past verb that sets a new time
# ("they moved the meeting to 3pm" is about this afternoon).
_AHEAD = re.compile(
    r"\b(?:will|shall|gonna|going\s+to|let['’]?s|tomorrow|tonight|next|later|soon|can"
    r"|could|should|would|want|need|please|remind|see\s+you|(?:re)?scheduled|moved|pushed"
    r"|postponed|delayed|brought\s+forward|booked|planned|set|changed|agreed|until|till)\b"
    r"|['’](?:ll|d)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?;\n](?!\d)")


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` holding ``text[start:end]``, with its closing mark."""
    begin = 0
    for mark in _SENTENCE_END.finditer(text, 0, start):
        begin = mark.end()
    close = _SENTENCE_END.search(text, end)
    return text[begin : close.end() if close else len(text)]


def tells_of_the_past(sentence: str) -> bool:
    """Is ``sentence`` in the past tense, with nothing in it pointing ahead?"""
    return _PAST.search(sentence) is not None and _AHEAD.search(sentence) is None
