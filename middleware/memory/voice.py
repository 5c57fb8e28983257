"""Living memory is stored about the user, not in their voice (see
:mod:`middleware.memory.triggers`): the card is read by the model, for whom "I" is
itself."""

from __future__ import annotations

import re

__all__ = ["imperative", "third_person"]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_LEADING_I = _re(r"^i\s*(?P<aux>'\s*m|'\s*ve|'\s*d|'\s*ll|\s+am|\s+have|\s+was)?\s+(?P<rest>.*)$")
_AUX = {"'m": "is", "am": "is", "'ve": "has", "have": "has", "'d": "would", "'ll": "will"}
_MODALS = frozenset("can can't cannot could will won't would should must might may".split())
_NO_CONJUGATION = frozenset(
    "was had did went grew got made used meant said thought knew came left took gave never"
    " quit sold".split()
)
# Said before the verb, which is conjugated after them: "I usually drink …" → "usually
# drinks …".
_ADVERBS = frozenset(
    [
        "no longer",
        *"now just recently finally still currently usually always normally often also never"
        " generally really strongly much mostly typically sometimes rarely".split(),
    ]
)
_IRREGULAR = {"have": "has", "do": "does", "don't": "doesn't", "go": "goes", "be": "is"}
_PRONOUNS = (
    (_re(r"\bi\s*'\s*m\b"), "they're"),
    (_re(r"\bi\s+am\b"), "they are"),
    (_re(r"\bi\s*'\s*ve\b"), "they've"),
    (_re(r"\bmyself\b"), "themselves"),
    (_re(r"\bmine\b"), "theirs"),
    (_re(r"\bmy\b"), "their"),
    (_re(r"\bme\b"), "them"),
    (_re(r"\bi\b"), "they"),
)


def third_person(clause: str) -> str:
    """ "I prefer X" → "prefers X", "I'm a nurse" → "is a nurse", "my X" → "their X"."""
    match = _LEADING_I.match(clause)
    if match:
        aux = (match["aux"] or "").replace(" ", "").lower()
        rest = match["rest"]
        if aux == "was":
            head = "was"
        elif aux:
            head = _AUX[aux]
        else:
            verb, _, rest = rest.partition(" ")
            adverb = ""
            if verb.lower() == "no" and rest.lower().startswith("longer "):
                verb, rest = "no longer", rest[len("longer ") :]
            if verb.lower() in _ADVERBS and rest:
                # "I now live in Berlin" → "now lives in Berlin": the verb is the next word.
                adverb, (verb, _, rest) = f"{verb} ", rest.partition(" ")
            head = adverb + _conjugate(verb)
        clause = f"{head} {rest}".strip()
    for pattern, replacement in _PRONOUNS:
        clause = pattern.sub(replacement, clause)
    return clause


def _conjugate(verb: str) -> str:
    word = verb.lower()
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _MODALS or word in _NO_CONJUGATION or word.endswith("ed"):
        return word
    if word.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def imperative(clause: str) -> str:
    """A directive stays addressed to the assistant; the user is named, not "me"."""
    clause = _re(r"\bmy\b").sub("the user's", clause)
    clause = _re(r"\b(?:me|myself)\b").sub("the user", clause)
    return _re(r"\bi\s*'\s*m\b|\bi\s+am\b").sub("the user is", clause)
