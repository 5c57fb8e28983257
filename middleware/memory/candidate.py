"""A living-memory candidate, and how what the user said becomes the text it is stored with."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from middleware.continuity.model import MemoryKind

__all__ = [
    "NOT_A_NAME",
    "TEXT_MAX",
    "TRAILING",
    "MemoryCandidate",
    "made",
    "plain",
    "proper_name",
]

TEXT_MAX = 200
_MIN_WORDS = 2  # "remember that!" holds nothing to remember
# Punctuation a card text does not end with.
TRAILING = re.compile(r"[\s.!,;:…—–-]+$")


@dataclass(frozen=True, slots=True)
class MemoryCandidate:
    """Something to remember about the user: ``text`` as the card shows it (see
    :mod:`middleware.memory.triggers`); ``replaces_kind`` when it supersedes every earlier
    fact of its kind (a person has one name); ``retire_only`` when it says only that a
    remembered fact no longer holds ("my dog Rex died", "we broke up"): what it supersedes
    is retired and ``text``, which names what ended, is not kept; ``denies`` (with
    ``retire_only``) when it says ``text`` is not true of them ("I'm not vegan" → "Is
    vegan"): that remembered fact is retired, nothing else; ``committed`` when the user
    asked for it to be kept ("remember that …", ``/memory add``): never forgotten for its
    age or to make room (:class:`~middleware.continuity.model.MemoryFact`)."""

    kind: MemoryKind
    text: str
    replaces_kind: bool = False
    retire_only: bool = False
    denies: bool = False
    committed: bool = False


# Words that may follow "call me" or "my wife is called" without being a name.
NOT_A_NAME = frozenset(
    "a an the later back tomorrow tonight today now soon when if whenever anytime asap once"
    " after before at on in by crazy maybe whatever anything something old-fashioned lazy"
    " please sometime again first then and or but"
    # "call me Monday morning", "call me around noon": when to call, not a name
    " monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thurs fri"
    " sat sun weekday weekend morning afternoon evening night noon midnight tmrw tomoz"
    " around about any every this next up out over home here there".split()
)


# What a statement of fact may end with that is not the fact: when it holds ("… now",
# "… these days") and what it is not ("…, not vegan", "… rather than Porto").
_CONTRAST = re.compile(
    r"(?:,\s*(?:and\s+|but\s+)?not|\s+(?:and|but)\s+not|,?\s+(?:instead\s+of|rather\s+than))"
    r"\s+\S.*$",
    re.IGNORECASE,
)
# An aside that is not the fact: ", by the way", ", btw", ", as you know", ", which is …".
_ASIDE = re.compile(
    r"(?:,\s*|\s+)(?:by\s+the\s+way|btw|fyi|for\s+the\s+record|as\s+you\s+(?:know|may\s+know)"
    r"|as\s+i\s+(?:said|mentioned)|if\s+you\s+(?:must\s+know|remember)|too|as\s+well|also"
    # a laugh typed after it: "I love baking lol"
    r"|lol|lmao|rofl|xd|ha(?:ha)+h?|he(?:he)+)"
    r"(?=[\s,.!;:…—–-]*$|\s*,)|,\s*which\s+\S.*$",
    re.IGNORECASE,
)
_WHEN_TRUE = re.compile(
    r"(?:[\s,]+(?:(?:just\s+|right\s+)?now|rn|atm|these\s+days|nowadays|at\s+the\s+moment"
    # for how long ("for 5 years", "since two months" as a second language says it)
    r"|(?:for|since)\s+(?:(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|a\s+few|a\s+couple\s+of|several|many)\s+(?:years?|months?|weeks?)|ages|years"
    r"|a\s+(?:long\s+)?while|a\s+long\s+time)))+$",
    re.IGNORECASE,
)


def plain(clause: str) -> str:
    """``clause`` as the fact it states, in the words saying it again plainly would use:
    "I'm vegetarian now, not vegan" → "I'm vegetarian", "I live in Lisbon these days" →
    "I live in Lisbon", "I'm a nurse, by the way" → "I'm a nurse", so that the two are one
    fact said twice (spec 003 §8)."""
    clause = TRAILING.sub("", clause.strip())
    clause = TRAILING.sub("", _ASIDE.sub("", clause))
    clause = TRAILING.sub("", _CONTRAST.sub("", clause))
    return TRAILING.sub("", _WHEN_TRUE.sub("", clause)) or clause


def proper_name(words: list[str]) -> str:
    """A name as the card shows it: each word capitalised unless written with a capital."""
    return " ".join(w if any(c.isupper() for c in w) else w.capitalize() for w in words)


def made(kind: MemoryKind, clause: str, rewrite: Callable[[str], str]) -> MemoryCandidate | None:
    """``clause`` as a card text of ``kind``: trimmed, ``rewrite`` about the user, cut to
    ``TEXT_MAX`` and capitalised; None when it holds fewer than two words."""
    clause = TRAILING.sub("", " ".join(clause.split()))
    if len(clause.split()) < _MIN_WORDS:
        return None
    text = rewrite(clause)
    if len(text) > TEXT_MAX:
        text = text[: TEXT_MAX - 1].rsplit(" ", 1)[0] + "…"
    return MemoryCandidate(kind, text[:1].upper() + text[1:])
