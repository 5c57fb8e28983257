"""Reading the user's answer on the turn after an impactful tool call was held (§8.2).

A confirmation releases a real action (an email sent, money spent), so only short,
unambiguous answers count: the message, with case, punctuation and emoji variants
ignored, must be made entirely of known confirmation phrases and politeness words.
Anything else, including a question ("yes?") or a condition ("yes but change the
subject"), is ``"other"``. English only.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

__all__ = ["Answer", "classify_answer"]

Answer = Literal["confirm", "refuse", "other"]

# Phrases after normalisation: lower case, apostrophes dropped ("don't" -> "dont"), other
# punctuation gone, emoji as their own words without skin tones or variation selectors.
_CONFIRM = frozenset(
    {
        "yes", "y", "yep", "yeah", "yea", "ya", "yup", "sure", "sure thing", "ok", "okay",
        "k", "kk", "alright", "all right", "confirm", "confirmed", "i confirm", "approve",
        "approved", "i approve", "proceed", "go", "go ahead", "go for it", "do it",
        "please do", "do so", "send", "send it", "affirmative", "absolutely", "definitely",
        "of course", "correct", "thats right", "thats correct", "sounds good", "looks good",
        "lgtm", "👍", "✅", "👌",
    }
)  # fmt: skip
_REFUSE = frozenset(
    {
        "no", "n", "nope", "nah", "no way", "negative", "dont", "do not", "dont do it",
        "do not do it", "dont do that", "dont send", "dont send it", "do not send",
        "do not send it", "cancel", "cancel it", "cancel that", "stop", "wait", "hold",
        "hold on", "hold off", "not yet", "not now", "never mind", "nevermind", "abort",
        "👎", "❌", "🛑", "✋",
    }
)  # fmt: skip
# Words that change nothing on their own ("yes please", "no thanks").
_FILLER = frozenset({"please", "pls", "plz", "thanks", "thank you", "thx", "ty", "now"})
_LONGEST = 4  # words in the longest phrase above
_MAX_WORDS = 8
_APOSTROPHES = "'\u2019\u02bc`"  # typed, typographic and modifier-letter apostrophes
_INVISIBLE = {"\ufe0f", "\u200d"} | {chr(c) for c in range(0x1F3FB, 0x1F400)}


def _words(text: str) -> list[str]:
    out: list[str] = []
    for char in unicodedata.normalize("NFKC", text).lower():
        if char in _APOSTROPHES or char in _INVISIBLE:
            continue
        category = unicodedata.category(char)
        if category.startswith("P"):
            out.append(" ")
        elif category.startswith("S"):
            # Emoji are words of their own, even when written against one ("ok👍").
            out.append(f" {char} ")
        else:
            out.append(char)
    return "".join(out).split()


def classify_answer(text: str) -> Answer:
    """Whether ``text``, the user's reply to a request to confirm, confirms or refuses.

    ``"confirm"`` only when every word belongs to a confirmation phrase or is politeness
    ("Yes, send it!", "ok 👍", "yes please"); ``"refuse"`` when every word belongs to a
    phrase or is politeness and at least one phrase refuses ("no", "not yet", "ok, wait",
    "don't send it"); ``"other"`` for anything else: a question, a condition, more than
    eight words, or politeness alone.
    """
    if text.strip().endswith(("?", "\uff1f")):  # a question is not an answer
        return "other"
    words = _words(text)
    if not words or len(words) > _MAX_WORDS:
        return "other"
    kinds: set[Answer] = set()
    start = 0
    while start < len(words):
        # Longest phrase first, so "dont send it" is read whole, not as "dont" + "send it".
        for length in range(min(_LONGEST, len(words) - start), 0, -1):
            phrase = " ".join(words[start : start + length])
            if phrase in _REFUSE:
                kinds.add("refuse")
            elif phrase in _CONFIRM:
                kinds.add("confirm")
            elif phrase not in _FILLER:
                continue
            start += length
            break
        else:
            return "other"
    if "refuse" in kinds:
        return "refuse"
    return "confirm" if kinds else "other"
