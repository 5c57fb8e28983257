"""A name given in a greeting: "Hi! I'm Ana", "Hello, I'm Ana Silva, nice to meet you".

"I'm …" names the speaker only as an introduction: after a greeting that opens the
message, with the name written with a capital, and nothing after it but the end of the
sentence, "and …", "from …" or a pleasantry. "I'm tired", "I'm in Lisbon", "I'm on it",
"Hi, I'm German", "Hi, I'm Sikh" or "Hi, I'm Vegan" name no one; a lowercase "hi im ana"
is not read either, as nothing then tells a name from "hi im back".

Nor is "Hi, I'm Christian": a given name as often as a faith, and nothing in the sentence
tells which. Spec 003 §8 scores a statement as sure as the user is (0.95) and has no rung
for a guess, and a name replaces the one known before, so a faith misread would rename
them. With a surname ("Hi, I'm Christian Weber"), or said as a name ("my name is
Christian", "call me Christian"), it is one.
"""

from __future__ import annotations

import re

from middleware.memory.candidate import NOT_A_NAME, MemoryCandidate, proper_name
from middleware.memory.everyday import DIET
from middleware.memory.languages import LANGUAGE

__all__ = ["introduction"]

_INTRODUCTION = re.compile(
    r"\s*(?:hi+|hello+|hey+|heya|hiya|howdy|good\s+(?:morning|afternoon|evening|day))"
    r"(?:\s+(?:there|all|everyone|again))?[\s,!.:;—–-]+"
    r"i\s*['’]?\s*m\s+(?P<name>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])(?!\b)[\w'-]*){0,2})"
    # What may follow the name: the sentence's end, another clause, where they are from.
    r"(?P<rest>[^\w?]*$|\s*[.!,;:]|\s+(?:and|but|from)\b|\s+(?=i\s))",
    re.IGNORECASE,
)
# Capitalised words that say what someone is, not who: a nationality, a language, a faith.
_NOT_A_NAME = re.compile(
    rf"(?:{LANGUAGE}|american|canadian|british|australian|mexican|brazilian|indian|african"
    r"|european|asian|latino|latina|swiss|austrian|belgian|argentinian|argentine|colombian"
    r"|chilean|peruvian|venezuelan|cuban|nigerian|kenyan|egyptian|moroccan|israeli|iranian"
    r"|iraqi|pakistani|bangladeshi|scottish|english|kiwi|aussie|muslim|catholic|jewish"
    r"|hindu|buddhist|atheist|sikh|protestant|orthodox|mormon|agnostic|evangelical|baptist"
    r"|lutheran|methodist|anglican|quaker|pagan"
    rf"|{DIET}|deaf|blind|gay|lesbian|bi|straight|trans|queer|single|married|divorced"
    r"|widowed|retired|unemployed|pregnant|sick|ill|hungry|bored|lost|confused|stuck"
    r"|new|back|fine|good|ok|okay|sorry|here|home|done|ready|free"
    r"|busy|tired|late|so|not|just|still|also|really|very|from|on|in|at|with|mr|mrs|ms|dr"
    r"|prof)",
    re.IGNORECASE,
)
# A given name that is as often what someone is: a name only with a surname after it.
_NAME_OR_FAITH = frozenset({"christian"})


def introduction(text: str) -> tuple[MemoryCandidate, str] | None:
    """The name ``text`` gives when it opens with a greeting and "I'm <Name>", and what
    follows the introduction, to be read as any message is ("Hi! I'm Ana and I live in
    Lisbon" → ``Name: Ana`` and "and I live in Lisbon"); None when it is no introduction."""
    match = _INTRODUCTION.match(text)
    if match is None:
        return None
    words = match["name"].split()
    if words[0].lower() in NOT_A_NAME or _NOT_A_NAME.fullmatch(words[0]):
        return None
    if len(words) == 1 and words[0].lower() in _NAME_OR_FAITH:
        return None
    return MemoryCandidate("name", f"Name: {proper_name(words)}", replaces_kind=True), text[
        match.start("rest") :
    ]
