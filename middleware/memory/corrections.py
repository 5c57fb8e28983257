"""Corrections and denials of what the user said of themselves (spec 003 §2, §8).

A correction states the fact that now holds ("actually, I moved to Lisbon" → "Lives in
Lisbon"); a denial names a remembered fact to retire ("I'm not vegan any more" → "Is
vegan", ``denies``). Both are read with the same statement reader as everything else
(:mod:`middleware.memory.triggers` passes its own as ``read``), so that the fact they
touch is worded as it was stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from middleware.continuity.model import MemoryKind
from middleware.memory.candidate import MemoryCandidate, made, plain
from middleware.memory.everyday import DIET, points_back
from middleware.memory.voice import third_person

__all__ = [
    "CORRECTION",
    "DENIAL",
    "GAINSAY",
    "RECALL_FAILURE",
    "Reader",
    "corrected",
    "denied",
    "recalled",
]

# Reads a clause as a statement: a name, directive, preference or fact, or anything else
# as ``default`` (``None``: nothing).
Reader = Callable[[str, MemoryKind | None], MemoryCandidate | None]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# A correction; ``fix`` is one about the speaker, the kind a group may teach of them.
CORRECTION = _re(
    r"correction\s*[:—–-]\s*(?P<body>.+)"
    r"|(?:no|nope|sorry|oops|wait)\b[\s,.!]*(?P<meant>i\s+meant\s+.+)"
    r"|actually\s*[,:]?\s*(?P<fix>my\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|was|'s)\s+.+"
    rf"|i\s*'?\s*m\s+(?:(?:a|an|based|from|not|now|in)\b|(?:(?:now|strictly)\s+)?{DIET}\b).+"
    r"|i\s+(?:live|work|moved|switched|changed)\b.+)"
)
_LIVES_IN = _re(r"i\s+live\s+(?:in|on|near)\b")
# How a denial or a correction may open: "that's wrong, …", "no, …", "actually, …".
GAINSAY = (
    r"(?:(?:that|it|this)\s*(?:'\s*s|\s+is)\s+(?:(?:all|just)\s+)?(?:wrong|incorrect|outdated"
    r"|not\s+(?:right|true|correct|so))|not\s+true|wrong|no|nope|actually)\s*[,.!:;—–-]*\s*"
)
# A remembered fact denied: "I'm not vegan (any more)", "I'm no longer vegan", "that's
# wrong, I don't live in Berlin", "no, I don't work at Acme", "I no longer work at
# Google". What follows "not" is read as the fact it denies ("I'm vegan" → "Is vegan");
# not something not yet true ("I don't live in Berlin yet").
DENIAL = _re(
    rf"(?:{GAINSAY})?"
    r"(?!.*\byet\b)(?:i\s*(?:'\s*m|\s+am)\s+(?:not|no\s+longer)\s+(?P<am>.+?)"
    r"|i\s+(?:don\s*'?\s*t|do\s+not|no\s+longer)\s+(?P<do>(?:work"
    # "I don't live in Berlin any more" is a move, kept as said (everyday "left").
    r"|live(?!.*\bany\s?(?:more|longer)\W*$))\s+(?:in|at|for|near|as|from)\s+.+?))"
    r"(?:\s+(?:any\s?more|any\s+longer|no\s+more))?\W*$"
)


# The user saying memory failed them, and what they had said (spec 003 §7's explicit
# recall-failure triggers, word for word where they carry it: "i (already|just) told
# you", "i mentioned (this|that|it) (before|earlier|already|yesterday|last)", "no,? i
# said", "you forgot"): "I already told you I'm vegetarian", "no, I said I live in
# Lisbon", "you forgot that I'm allergic to nuts", "I mentioned it before: I'm a nurse".
RECALL_FAILURE = _re(
    r"(?:(?:i\s+(?:already|just)\s+told\s+you|i\s+told\s+you\s+(?:already|before|earlier))"
    r"|i\s+(?:already\s+)?mentioned(?:\s+(?:this|that|it))?\s+(?:before|earlier|already"
    r"|yesterday|last\s+\w+)"
    r"|(?:no|nope)\b[\s,.!]*i\s+(?:already\s+)?said|you\s+forgot)"
    r"(?:\s+(?:already|before|earlier|twice))*\s*(?:[,:;—–-]\s*)*(?:that\b\s*)?(?P<told>.+)"
)


def recalled(told: str, read: Reader) -> MemoryCandidate | None:
    """What the user says memory should have known, after saying it failed them
    (``RECALL_FAILURE``'s ``told``): a fact is a correction (spec 003 §5.3: the user's
    correction is sure, 1.0, and wins), "I already told you I'm not vegan" denies "Is
    vegan", and a name, preference or standing instruction is that, said again. Nothing
    when ``told`` states nothing of the user ("I already told you that yesterday")."""
    said = read(told, None)
    if said is None:
        return denied(told, read)
    if said.kind == "fact" and not said.retire_only:
        return MemoryCandidate("correction", said.text)
    return said


def corrected(fix: str, read: Reader) -> MemoryCandidate | None:
    """A correction the user makes of themselves, in the words the fact it states is
    stored with ("actually, I'm vegetarian now, not vegan" → "Is vegetarian", "actually,
    I moved to Lisbon" → "Lives in Lisbon"), so that saying it again plainly later is the
    same fact said again (spec 003 §8); "actually, my name is X" is a name, and
    "actually, I'm not vegan" denies "Is vegan"."""
    said = read(fix, None)
    if said is None and (denial := denied(fix, read)) is not None:
        return denial
    if said is None and (_LIVES_IN.match(fix) or points_back(fix)):
        # "actually, I live in hope" is no place they live in; "actually, I work for them
        # now" says nothing out of the conversation.
        return None
    if said is not None and said.kind == "name":
        return said
    if said is not None and said.kind == "fact" and not said.retire_only:
        return MemoryCandidate("correction", said.text)
    return made("correction", plain(fix), third_person)


def denied(sentence: str, read: Reader) -> MemoryCandidate | None:
    """The remembered fact ``sentence`` denies, to retire ("I'm not vegan" → "Is vegan",
    ``denies``), when what it denies is a fact as it would be stated."""
    match = DENIAL.match(sentence)
    if match is None:
        return None
    stated = read(f"I'm {match['am']}" if match["am"] else f"I {match['do']}", None)
    if stated is None or stated.kind != "fact" or stated.retire_only:
        return None
    return MemoryCandidate("fact", stated.text, retire_only=True, denies=True)
