"""Other people's words inside a user's message, and the speaker's own words around them.

A chat channel puts what a reader sees with a message into its text, so the model can
follow: a forwarded message is ``[forwarded from Bo] …`` (``[forwarded] …`` where the
platform does not say whose), and a reply to someone's message starts with what it replies
to, ``[replying to Bo: "meet at 9"] is that too late for me?``. The channels write these
prefixes with the functions here, and the stages that learn about the speaker (living
memory, actions, continuity, the clock's places and time phrases, confirmations) read only
:func:`own_words`: Bo's "I'm vegan" or "meet at 9" is not the speaker's. The model, the
stored transcript and everything shown later keep the whole text.

What a user pastes is not theirs either: a transcript's speaker lines ("Bob: I'm heading to
the gym"), a block quote ("> …") and a code block (```` ``` ````). A line that only looks
like one is kept: a header word is the user's own ("Note: I'm off to the gym", "Re: …",
"PS: …"), as is a list of their own ("Gym: 7am"), and a lone "Name: …" line is pasted
only after a line of the user's that introduces it ("what did he mean?\nBob: I'm vegan");
otherwise two speaker lines make a transcript.
"Me: …" in a transcript is left out as well: it is the user's words from whenever that
conversation was, not what they say now ("Me: I'm heading out" pasted from last week is no
trip today).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["QUOTE_LIMIT", "Quoted", "forwarded", "own_words", "quoted", "replying_to"]

# How much of a message replied to is quoted to the model: enough to tell which one.
QUOTE_LIMIT = 200

# A transcript's speaker line: a name of up to three capitalised words or a @handle, maybe
# after a time ("[10:02] Bob:", "10:02 Bob:") or with one after it ("Bob (10:02):").
_SPEAKER_LINE = re.compile(
    r"\s*(?:\[[^\]\n]{1,24}\]\s*|\d{1,2}:\d\d(?::\d\d)?(?:\s*[ap]\.?m\.?)?\s+)?"
    r"(?P<name>@[\w.-]+|[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2})"
    # What follows is said words: "Gym: 7am" in a list of the user's own is not a line
    # someone said.
    r"(?:\s*\([^)\n]{1,24}\))?:\s+(?!\d)\S",
)
# Labels a user writes over their own words, never a speaker.
_HEADER_WORDS = frozenset(
    "note notes nb re fwd fw ps p.s pps edit update updates todo reminder subject summary"
    " tldr tl;dr q a question answer context fyi btw important warning tip also plan plans"
    " status goal goals today tonight tomorrow eta time date where when why how what"
    " example step day morning afternoon evening".split()
)
_FENCE = re.compile(r"\s*(?:```|~~~)")
_BLOCK_QUOTE = re.compile(r"\s*>")
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
    message it replies to or the lines it pasted (``_without_pasted``), and nothing of a
    forwarded message. A message without these is returned as it is."""
    if text.startswith("["):
        if _FORWARDED.match(text):
            return ""
        quote = _REPLYING_TO.match(text)
        if quote:
            text = text[quote.end() :]
    return _without_pasted(text) if _may_paste(text) else text


@dataclass(frozen=True, slots=True)
class Quoted:
    """A message that carries someone else's words: ``words`` of ``origin`` (``None``
    when the platform does not say whose), forwarded whole or quoted in a reply, and
    the speaker's ``own`` text after the quote, as written."""

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


def _may_paste(text: str) -> bool:
    """Whether ``text`` may hold pasted lines at all: most messages are one line of chat
    (string tests, not a regex: this runs several times on every turn)."""
    return "\n" in text or text.lstrip().startswith((">", "```", "~~~"))


def _without_pasted(text: str) -> str:
    """``text`` without the lines the user pasted: block quotes, code blocks, and a
    transcript's speaker lines (see the module docstring for which lines are one)."""
    lines = text.split("\n")
    kept: list[str] = []
    in_code = False
    for line in lines:
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and not _BLOCK_QUOTE.match(line):
            kept.append(line)
    speakers = [i for i, line in enumerate(kept) if _is_speaker_line(line)]
    introduced = bool(speakers) and any(line.strip() for line in kept[: speakers[0]])
    if len(speakers) >= 2 or introduced:
        pasted = set(speakers)
        kept = [line for i, line in enumerate(kept) if i not in pasted]
    return "\n".join(kept).strip() if len(kept) != len(lines) else text


def _is_speaker_line(line: str) -> bool:
    found = _SPEAKER_LINE.match(line)
    return found is not None and found["name"].casefold().rstrip(".") not in _HEADER_WORDS
