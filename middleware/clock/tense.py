"""Whether a time phrase tells of the past ("the meeting was at 3pm", "we spoke yesterday
at 10") rather than of something ahead ("see you at 9").

A time with no date is read as its next occurrence (``wallclock.py``); a sentence in the
past tense means the last one, and an hour it gives with no am/pm is not a plan to ask
about. This reads the clause around the phrase, else its whole sentence, not a grammar
("I ran 5k this morning, can we talk tomorrow?" tells of this morning and asks of
tomorrow; "at 9 this morning, I went for a run" has its verb past the comma): the irregular past
forms people tell of their day with, any regular "-ed" past ("landed at 7", "finished at
5") but for words that only end like one ("need", "indeed") or are adjectives of the
moment ("I'm tired", "the delayed flight"), and a sentence with any sign of the future
("will", "tomorrow", "moved to", "tonight" before the night has begun) is never past, so
a miss reads a phrase as before. It runs only on messages with a time phrase in them.
"""

from __future__ import annotations

import re

__all__ = [
    "points_ahead",
    "sat_of_sitting",
    "sentence_around",
    "tells_of_the_past",
    "texting_saturdays",
    "told_of_the_past",
]

# Irregular past forms of the verbs people tell of their day with, the past auxiliaries
# and the words that date a sentence in the past.
_IRREGULAR_PAST = re.compile(
    r"\b(?:was|were|did|had|woke|awoke|spoke|met|got|went|came|left|ate|drank|slept|took"
    r"|saw|heard|told|said|sent|ran|began|fell|made|rang|wrote|drove|rode|flew|swam|caught"
    r"|bought|brought|thought|taught|fought|stood|lost|found|kept|felt|paid|spent|gave"
    r"|forgot|knew|built|sold|threw|broke|chose|won|held|became|yesterday|ago|last\s+night)\b",
    re.IGNORECASE,
)
# "Sat" is the texting Saturday right before its clock time or part of day ("ok Sat 10am
# then", "sat night?"), and before "at <hour>" with no subject before it: at the start of
# a clause or after a word of arranging ("Sat at 3?", "ok sat at 3"). "We sat at 9" and
# "sat for 2 hours" are past.
_SAT = re.compile(r"\bsat\b", re.IGNORECASE)
_SAT_AND_SPACE = re.compile(r"sat\b\s*", re.IGNORECASE)
_TEXTING_SATURDAY = re.compile(
    r"\bsat(?=\s+(?:\d{1,2}(?::\d\d|\s*[ap]\.?m)|(?:morning|afternoon|evening|night)\b))"
    r"|(?:^|[,;:(!?.]|\b(?:ok(?:ay)?|k|on|this|next|by|till|until|or|maybe|say|about)\b)\s*"
    r"(?P<day>sat)(?=\s*(?:at\s+|@\s*)\d)",
    re.IGNORECASE,
)
# "Sat" right after its subject is the past of "sit" ("I sat at 3pm", "they sat at 9"):
# "you" only where it begins a clause, since "see you sat at 3" is the texting Saturday.
_SUBJECT_BEFORE = re.compile(
    r"(?:\b(?:i|we|he|she|they)|(?:^|[,;:(!?.]|\b(?:and|but|then|so|when|while|as|if)\b)"
    r"\s*you)\s+$",
    re.IGNORECASE,
)
# A regular past, with the word before it: "the" or "so" before it makes it an adjective
# ("the delayed flight", "so tired"), as a form of "be", "get" or "feel" does ("I'm booked").
_REGULAR_PAST = re.compile(r"(?:\b(?P<before>[a-z]+)\W+)?\b(?P<word>[a-z]{2,}ed)\b", re.IGNORECASE)
_NOT_A_PAST = frozenset(
    "need seed feed weed deed heed reed shed sled speed breed bleed greed creed steed tweed"
    " indeed proceed succeed exceed embed hundred sacred naked wicked kindred rugged ragged"
    " wretched beloved crooked tired bored excited interested worried scared stressed"
    " exhausted married used supposed pleased relaxed".split()
)
_ADJECTIVE_BEFORE = frozenset(
    "am m is s are re be been being get gets getting got feel feels feeling seem seems look"
    " looks so very too really quite pretty more most less a an the my your our his her"
    " their its this that".split()
)
# Anything that points ahead wins: a plan, a request, or a past verb that sets a new time
# ("they moved the meeting to 3pm" is about this afternoon).
_AHEAD = re.compile(
    r"\b(?:will|shall|gonna|going\s+to|let['’]?s|tomorrow|next|later|soon|can"
    r"|could|should|would|want|need|please|remind|see\s+you|(?:re)?scheduled|moved|pushed"
    r"|postponed|delayed|brought\s+forward|booked|planned|set|changed|agreed)\b"
    r"|['’](?:ll|d)\b",
    re.IGNORECASE,
)
# "Tonight" points ahead until the night has begun; then it may be told of ("had a great
# time tonight", "tonight was fun" said at 23:00).
_TONIGHT = re.compile(r"\btonight\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;\n](?!\d)")
# Where a clause ends inside a sentence: a comma (not one in "3,5") or a dash set apart.
_CLAUSE_END = re.compile(r",(?!\d)|\s[-–—]\s")


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` holding ``text[start:end]``, with its closing mark."""
    begin, close = _bounds(text, start, end, _SENTENCE_END, 0, len(text))
    return text[begin:close]


def _bounds(
    text: str, start: int, end: int, boundary: re.Pattern[str], first: int, last: int
) -> tuple[int, int]:
    """Where the stretch of ``text[first:last]`` holding ``text[start:end]`` between two
    ``boundary`` marks begins and ends, its closing mark in."""
    begin = first
    for mark in boundary.finditer(text, first, start):
        begin = mark.end()
    close = boundary.search(text, end, last)
    return begin, close.end() if close else last


def told_of_the_past(text: str, start: int, end: int, *, night_begun: bool = False) -> bool:
    """Is the phrase ``text[start:end]`` told of the past: its clause is, or its whole
    sentence is (``tells_of_the_past``)?"""
    first, last = _bounds(text, start, end, _SENTENCE_END, 0, len(text))
    begin, close = _bounds(text, start, end, _CLAUSE_END, first, last)
    return tells_of_the_past(text[begin:close], night_begun=night_begun) or tells_of_the_past(
        text[first:last], night_begun=night_begun
    )


def tells_of_the_past(sentence: str, *, night_begun: bool = False) -> bool:
    """Is ``sentence`` in the past tense, with nothing in it pointing ahead? "Tonight"
    points ahead unless ``night_begun`` says it was said once the night had begun."""
    if not night_begun and _TONIGHT.search(sentence) is not None:
        return False
    return _has_past_verb(sentence) and _AHEAD.search(sentence) is None


def points_ahead(sentence: str) -> bool:
    """Does ``sentence`` point ahead: a plan, a request, a future tense or a new time set
    ("let's", "can we", "will", "moved to")?"""
    return _AHEAD.search(sentence) is not None


def texting_saturdays(text: str) -> list[tuple[int, int]]:
    """Where ``text`` says "sat" for Saturday (``_TEXTING_SATURDAY``), not the past of "sit"."""
    return [
        found.span("day") if found["day"] else found.span()
        for found in _TEXTING_SATURDAY.finditer(text)
    ]


def sat_of_sitting(text: str, start: int) -> int | None:
    """Where the words after the "sat" at ``text[start:]`` begin, when it is the past of
    "sit" said right after its subject ("I sat at 3pm", where dateparser reads the
    Saturday); None when no such "sat" is there."""
    sat = _SAT_AND_SPACE.match(text, start)
    if sat is None or _SUBJECT_BEFORE.search(text, max(0, start - 16), start) is None:
        return None
    return sat.end()


def _has_past_verb(sentence: str) -> bool:
    if _IRREGULAR_PAST.search(sentence) is not None:
        return True
    saturdays = texting_saturdays(sentence)
    if any(found.span() not in saturdays for found in _SAT.finditer(sentence)):
        return True
    for found in _REGULAR_PAST.finditer(sentence):
        before = (found["before"] or "").lower()
        if found["word"].lower() not in _NOT_A_PAST and before not in _ADJECTIVE_BEFORE:
            return True
    return False
