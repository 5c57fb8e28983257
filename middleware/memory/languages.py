"""The languages a person speaks, and how well: "I speak English, German and a bit of
Spanish" → "Speaks English, German and a little Spanish"; and those they are learning:
"I'm learning Spanish" → "Is learning Spanish"."""

from __future__ import annotations

import re

from middleware.memory.candidate import MemoryCandidate

__all__ = ["LANGUAGE", "LANGUAGES_SAID", "languages_left", "spoken_languages"]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Named, so that "I speak to my boss" or "I speak for everyone" is not a language.
LANGUAGE = (
    r"(?:english|german|french|spanish|portuguese|italian|dutch|flemish|danish|swedish"
    r"|norwegian|finnish|icelandic|polish|czech|slovak|slovenian|croatian|serbian|bosnian"
    r"|hungarian|romanian|bulgarian|greek|turkish|russian|ukrainian|belarusian|lithuanian"
    r"|latvian|estonian|albanian|armenian|georgian|hebrew|arabic|persian|farsi|urdu|hindi"
    r"|bengali|punjabi|tamil|telugu|marathi|gujarati|nepali|sinhala|mandarin|cantonese"
    r"|chinese|japanese|korean|vietnamese|thai|indonesian|malay|tagalog|filipino|swahili"
    r"|amharic|yoruba|igbo|hausa|zulu|xhosa|afrikaans|catalan|basque|galician|welsh|irish"
    r"|gaelic|latin|esperanto|sign\s+language|asl|bsl)"
)
# How well, said before the language; each has one card form ("a bit of" → "a little").
_LEVELS = {
    "a bit of": "a little",
    "a little bit of": "a little",
    "a little": "a little",
    "a tiny bit of": "a little",
    "some": "some",
    "basic": "basic",
    "broken": "basic",
    "conversational": "conversational",
    "decent": "decent",
    "good": "good",
    "fluent": "fluent",
    "native": "native",
}
_LEVEL = (
    r"(?:a\s+(?:(?:little|tiny)\s+)?bit\s+of|a\s+little|some|basic|broken|conversational"
    r"|decent|good|fluent|native)"
)
_ONE = rf"(?:{_LEVEL}\s+)?{LANGUAGE}\b"
_AND = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)"
_LIST = rf"{_ONE}(?:{_AND}{_ONE})*"
# "I speak English, German and a bit of Spanish", "I speak French fluently", "I'm
# fluent in Italian", "I'm a native Spanish speaker"; and one being learned: "I'm
# learning Spanish (on Duolingo)", "I've been studying Japanese", "I'm trying to learn
# Greek".
LANGUAGES_SAID = _re(
    rf"(?:i\s+(?:also\s+|only\s+)?speak\s+(?:only\s+)?(?P<spoken>{_LIST})(?P<fluently>\s+fluently)?"
    rf"|i\s*(?:'\s*m|\s+am)\s+(?:also\s+)?fluent\s+in\s+(?P<fluent>{_LIST})"
    rf"|i\s*(?:'\s*m|\s+am)\s+a\s+native\s+(?P<native>{LANGUAGE})\s+speaker)"
    r"(?:\s+(?:too|as\s+well|well))?\W*$"
    r"|i\s*(?:'\s*m|\s+am|'\s*ve\s+been|\s+have\s+been)\s+(?:(?:also|now|still)\s+)?"
    rf"(?:learning|studying|trying\s+to\s+learn)\s+(?P<learning>{LANGUAGE}(?:{_AND}{LANGUAGE})*)\b"
    r"(?:\s+(?:too|as\s+well)|\s+(?:on|at|with|for|in|from|because|since)\b.*)?\W*$"
)
_ONE_RE = _re(rf"(?P<level>{_LEVEL}\s+)?(?P<language>{LANGUAGE})\b")
# One level for several languages is said once, after them: "Speaks English and German
# fluently", not "fluent English and fluent German".
_ONCE = {
    "fluent": "fluently",
    "native": "natively",
    "good": "well",
    "decent": "decently",
    "conversational": "conversationally",
    "basic": "at a basic level",
    "a little": "a little",
}
_OF_ONCE = {said: level for level, said in _ONCE.items()}
_CARD = _re(
    r"^speaks\s+(?P<list>.+?)(?:\s+(?P<once>fluently|natively|well|decently|conversationally"
    r"|at\s+a\s+basic\s+level|a\s+little))?$"
)


def spoken_languages(clause: str) -> MemoryCandidate | None:
    """The languages ``clause`` says the user speaks, in one card form however said:
    "Speaks English, German and a little Spanish", "Speaks fluent French"."""
    match = LANGUAGES_SAID.match(clause)
    if match is None:
        return None
    if match["native"]:
        return MemoryCandidate("fact", _text([("native", _name(match["native"]))]))
    if match["learning"]:
        learning = [language for _, language in _levels(match["learning"])]
        return MemoryCandidate("fact", f"Is learning {_joined(learning)}")
    listed = _levels(match["spoken"] or match["fluent"])
    if match["fluent"] or match["fluently"]:
        listed = [(level or "fluent", language) for level, language in listed]
    return MemoryCandidate("fact", _text(listed))


def languages_left(candidate: MemoryCandidate, earlier: str) -> str | None:
    """What still stands of ``earlier``, languages spoken, once ``candidate`` names some
    of them again: the ones it does not name ("" for none: "Speaks English and German",
    then "I speak English and a little Spanish" → "Speaks German"); None when either is
    not about languages, or ``candidate`` names none of those ``earlier`` does (then
    both stand: "I speak a little Japanese" adds to "Speaks English and German")."""
    new, old = _CARD.match(candidate.text), _CARD.match(earlier)
    if new is None or old is None or candidate.text.lower() == earlier.lower():
        return None
    named = {language.lower() for _, language in _levels(new["list"])}
    had = _levels(old["list"])
    if old["once"]:
        had = [(_OF_ONCE[" ".join(old["once"].lower().split())], language) for _, language in had]
    if not any(language.lower() in named for _, language in had):
        return None
    return _text([(level, language) for level, language in had if language.lower() not in named])


def _levels(listed: str) -> list[tuple[str | None, str]]:
    found = []
    for match in _ONE_RE.finditer(listed):
        level = " ".join(match["level"].lower().split()) if match["level"] else None
        found.append((_LEVELS.get(level) if level else None, _name(match["language"])))
    return found


def _name(language: str) -> str:
    word = " ".join(language.split())
    return word.upper() if word.lower() in ("asl", "bsl") else word[:1].upper() + word[1:].lower()


def _text(listed: list[tuple[str | None, str]]) -> str:
    """ "Speaks English, German and a little Spanish", "Speaks English and German
    fluently"; empty when none is listed."""
    levels = {level for level, _ in listed}
    if len(listed) > 1 and len(levels) == 1 and (level := levels.pop()) in _ONCE:
        return f"Speaks {_joined([language for _, language in listed])} {_ONCE[level]}"
    said = [f"{level} {language}" if level else language for level, language in listed]
    return f"Speaks {_joined(said)}" if said else ""


def _joined(said: list[str]) -> str:
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
