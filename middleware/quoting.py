"""Other people's words inside a user's message, and the speaker's own words around them.

A chat channel puts what a reader sees with a message into its text, so the model can
follow: a forwarded message is ``[forwarded from Bo] …`` (``[forwarded] …`` where the
platform does not say whose), and a reply to someone's message starts with what it replies
to, ``[replying to Bo: "meet at 9"] is that too late for me?``. The channels write these
prefixes with the functions here, and the stages that learn about the speaker (living
memory, actions, continuity, the clock's places and time phrases, confirmations) read only
:func:`own_words`: Bo's "I'm vegan" or "meet at 9" is not the speaker's. The model, the
stored transcript and everything shown later keep the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["QUOTE_LIMIT", "Quoted", "forwarded", "own_words", "quoted", "replying_to"]

# How much of a message replied to is quoted to the model: enough to tell which one.
QUOTE_LIMIT = 200

# A forwarded message: all of it is someone else's words (neither platform keeps a comment
# in the forwarded message itself; the user's comment arrives as a message of its own).
_FORWARDED = re.compile(r"\[forwarded(?: from (?P<origin>[^\n]*?))?\] ")
# A reply's quote: the words, in straight quotes ("]" never inside them, see
# ``replying_to``), or a message that was not written words, as it is ("[photo, not
# passed on]"). The speaker's name is matched lazily: the quote's end is what counts.
_REPLYING_TO = re.compile(
    r'\[replying to (?P<origin>[^\n]*?): (?P<words>"[^\n]*?"|\[[^\n\]]*\])\] '
)


def forwarded(text: str, origin: str | None = None) -> str:
    """``text``, a message forwarded from ``origin`` (``None``: the platform does not say
    whose), as the model reads it: ``[forwarded from Bo] …``. None of it is the
    forwarding user's own words."""
    return f"[forwarded from {origin}] {text}" if origin else f"[forwarded] {text}"


def replying_to(text: str, speaker: str, replied: str) -> str:
    """``text``, written in reply to ``speaker``'s message ``replied``, as the model reads
    it: ``[replying to Bo: "meet at 9"] …``, the quote on one line and cut to
    ``QUOTE_LIMIT`` characters; a message that was not written words
    (``[photo, not passed on]``) is quoted as it is."""
    words = " ".join(replied.split())
    if len(words) > QUOTE_LIMIT:
        words = words[: QUOTE_LIMIT - 1].rstrip() + "…"
    if words.startswith("[") and words.endswith("]") and "]" not in words[:-1]:
        return f"[replying to {speaker}: {words}] {text}"
    # A '"]' inside the quote would end it early for a reader (and for ``own_words``).
    words = words.replace('"]', "”]")
    return f'[replying to {speaker}: "{words}"] {text}'


def own_words(text: str) -> str:
    """What the speaker of ``text`` said themselves: ``text`` without a leading quote of the
    message it replies to, and nothing of a forwarded message. A message without these
    prefixes is returned as it is."""
    if not text.startswith("["):
        return text
    if _FORWARDED.match(text):
        return ""
    quote = _REPLYING_TO.match(text)
    return text[quote.end() :] if quote else text


@dataclass(frozen=True, slots=True)
class Quoted:
    """A message that carries someone else's words: ``words`` of ``origin`` (``None``
    when the platform does not say whose), forwarded whole or quoted in a reply, and
    the speaker's ``own`` words (:func:`own_words`)."""

    forwarded: bool
    origin: str | None
    words: str
    own: str


def quoted(text: str) -> Quoted | None:
    """Whose words ``text`` carries besides the speaker's, and which: ``None`` for a
    message that is all the speaker's own. A reply's quote is as the model read it,
    in its straight quotes (``"meet at 9"``) or brackets (``[photo, not passed on]``)."""
    if not text.startswith("["):
        return None
    forward = _FORWARDED.match(text)
    if forward:
        return Quoted(True, forward["origin"], text[forward.end() :], "")
    quote = _REPLYING_TO.match(text)
    if quote:
        return Quoted(False, quote["origin"], quote["words"], text[quote.end() :])
    return None
