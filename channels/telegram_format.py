"""The model's Markdown as Telegram messages: plain text plus message entities.

No ``parse_mode``, so no escaping can go wrong: ``telegramify_markdown`` converts the
Markdown to text and entities, and the text is split at Telegram's limit (4096 UTF-16 code
units): at the last line break outside a code block that fits, so a code block that fits in
one message is never cut in two; else at the last line break; else (one long paragraph) at
the last space, so no word is cut; only a text without any of these is cut at the limit.

Telegram shows no HTML, and the converter drops what CommonMark reads as HTML (``Vec<u8>``,
``a<b and c>d``, the relay's own ``/tz <zone or city>``; a line starting ``<details>``
takes the rest of its block with it). So every ``<`` that opens HTML is backslash-escaped
first and shows as typed; code, autolinks and everything else are left to the converter.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable

import pyromark
import telegramify_markdown
from telegram.constants import MessageLimit
from telegramify_markdown.converter import STANDARD_OPTIONS

log = logging.getLogger(__name__)

MESSAGE_LIMIT: int = MessageLimit.MAX_TEXT_LENGTH

Part = tuple[str, list[telegramify_markdown.MessageEntity]]


def _render_config() -> telegramify_markdown.RenderConfig:
    config = telegramify_markdown.RenderConfig.isolated()
    symbols = config.markdown_symbol
    # Headings stay bold text; emoji prefixes would be words the model never wrote.
    symbols.heading_level_1 = symbols.heading_level_2 = ""
    symbols.heading_level_3 = symbols.heading_level_4 = ""
    symbols.unordered_list_item = "•"
    return config


_RENDER = _render_config()


def telegram_parts(markdown: str, limit: int = MESSAGE_LIMIT) -> list[Part]:
    """``markdown`` as Telegram messages: plain text plus entities, each part at most
    ``limit`` UTF-16 code units, split on line boundaries where one fits."""
    try:
        text, entities = telegramify_markdown.convert(html_as_text(markdown), config=_RENDER)
    except Exception:  # a formatting bug must not lose the reply: send it unformatted
        log.warning("could not convert a reply's Markdown; sending it as plain text")
        text, entities = markdown, []
    parts = (_trimmed(t, e) for t, e in _split(text, entities, limit))
    return [part for part in parts if part[0]]


# Entities whose text is a code block or inline code: a cut inside one splits the code.
_CODE = frozenset({"pre", "code"})


def _split(text: str, entities: list[telegramify_markdown.MessageEntity], limit: int) -> list[Part]:
    """``text`` cut into pieces of at most ``limit`` UTF-16 code units (see the module
    docstring for where), each with the entities on it, offsets made its own."""
    # units[i]: the UTF-16 length of text[:i], as Telegram counts offsets and lengths.
    units = [0]
    for char in text:
        units.append(units[-1] + (2 if ord(char) > 0xFFFF else 1))
    code = [(e.offset, e.offset + e.length) for e in entities if e.type in _CODE]

    def in_code(index: int) -> bool:
        return any(start < units[index] < end for start, end in code)

    pieces: list[Part] = []
    start = 0
    while units[-1] - units[start] > limit:
        # The furthest end the limit allows: text[start:fits] is at most ``limit`` long.
        fits = max(bisect.bisect_right(units, units[start] + limit) - 1, start + 1)
        cut = _last_break(text, start, fits, in_code) or fits
        pieces.append(_sliced(text, entities, units, start, cut))
        # Telegram strips a message's leading blanks: they must not use up the next one's room.
        start = len(text) - len(text[cut:].lstrip())
    pieces.append(_sliced(text, entities, units, start, len(text)))
    return pieces


def _last_break(text: str, start: int, fits: int, in_code: Callable[[int], bool]) -> int:
    """Where to end the piece starting at ``start`` and ending by ``fits``: the last line
    break outside code, else the last line break, else the last space; 0 for none."""
    last_newline = newline = text.rfind("\n", start + 1, fits + 1)
    while newline > 0 and in_code(newline):
        newline = text.rfind("\n", start + 1, newline)
    if newline > 0:
        return newline
    if last_newline > 0:
        return last_newline
    return max(text.rfind(" ", start + 1, fits + 1), text.rfind("\t", start + 1, fits + 1), 0)


def _sliced(
    text: str,
    entities: list[telegramify_markdown.MessageEntity],
    units: list[int],
    start: int,
    end: int,
) -> Part:
    """``text[start:end]`` with the parts of the entities that fall on it."""
    lo, hi = units[start], units[end]
    kept = []
    for entity in entities:
        first, last = max(entity.offset, lo), min(entity.offset + entity.length, hi)
        if last > first:
            kept.append(entity.copy_with(offset=first - lo, length=last - first))
    return text[start:end], kept


def html_as_text(markdown: str) -> str:
    """``markdown`` with every ``<`` that CommonMark reads as opening HTML escaped, so it
    renders as the characters typed instead of vanishing.

    The parser finds the HTML (never inside code); escaping it can turn an HTML block back
    into a paragraph holding inline HTML of its own, so this repeats until none is left.
    Escaped ``<`` never opens HTML again, so it ends.
    """
    while opens := _html_openings(markdown):
        source = markdown.encode()
        for offset in reversed(opens):
            source = source[:offset] + b"\\" + source[offset:]
        markdown = source.decode()
    return markdown


def _html_openings(markdown: str) -> list[int]:
    """UTF-8 byte offsets of the ``<`` in what the parser reads as HTML, in order."""
    if "<" not in markdown:
        return []
    source = markdown.encode()
    opens: list[int] = []
    for event, span in pyromark.events_with_range(markdown, options=STANDARD_OPTIONS):
        if isinstance(event, dict) and ("Html" in event or "InlineHtml" in event):
            start, end = span["start"], span["end"]
            opens += (start + i for i, byte in enumerate(source[start:end]) if byte == ord("<"))
    return sorted(opens)


def _trimmed(text: str, entities: list[telegramify_markdown.MessageEntity]) -> Part:
    """Strip the whitespace Telegram would strip, moving the entities with the text."""
    utf16 = telegramify_markdown.utf16_len
    body = text.strip()
    start = utf16(text[: len(text) - len(text.lstrip())])
    end = start + utf16(body)
    kept = []
    for entity in entities:
        lo, hi = max(entity.offset, start), min(entity.offset + entity.length, end)
        if hi > lo:
            kept.append(entity.copy_with(offset=lo - start, length=hi - lo))
    return body, kept
