"""The model's Markdown as Telegram messages: plain text plus message entities.

No ``parse_mode``, so no escaping can go wrong: ``telegramify_markdown`` converts the
Markdown to text and entities, and the text is split at Telegram's limit (4096 UTF-16 code
units) on line boundaries, code blocks and entities kept whole where they fit.

Telegram shows no HTML, and the converter drops what CommonMark reads as HTML (``Vec<u8>``,
``a<b and c>d``, the relay's own ``/tz <zone or city>``; a line starting ``<details>``
takes the rest of its block with it). So every ``<`` that opens HTML is backslash-escaped
first and shows as typed; code, autolinks and everything else are left to the converter.
"""

from __future__ import annotations

import logging

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
    parts = telegramify_markdown.split_entities(text, entities, max_utf16_len=limit)
    return [part for part in (_trimmed(t, e) for t, e in parts) if part[0]]


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
