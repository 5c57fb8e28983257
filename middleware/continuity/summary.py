"""A deterministic session summary, kept as its parts (spec 001 §5.3, §6.1).

Capture writes the summary's text for people (/recap, cross-conversation updates) and
its parts for the resume card, which leaves out the decisions and open items it already
shows on lines of their own. The card composes the session line from the parts: item
texts may hold ". " ("invite Dr. Smith"), so the text cannot be split back into them.
An LLM summary is free text and has no parts.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

ELLIPSIS = "…"
# A part that ends a sentence itself, maybe inside its closing quote ("Ended on “Fine.”"),
# takes no full stop of its own.
_ENDS_SENTENCE = re.compile(r"[.!?…][”’\"')]*$")
_TOPIC_CHARS = 80
_ENDED_CHARS = 60
_ITEM_CHARS = 70


@dataclass(frozen=True, slots=True)
class SummaryParts:
    """What a session was on (its first message with substance), how many messages it
    had, what it decided and left open (full item texts, the newest two of each) and the
    message it ended on (``None`` when that was the topic)."""

    topic: str
    messages: int
    decided: tuple[str, ...] = ()
    open: tuple[str, ...] = ()
    ended: str | None = None

    def text(self, leave_out: Collection[str] = ()) -> str:
        """The summary as one line, without the items whose :func:`item_key` is in
        ``leave_out`` (a list left empty is left out whole, and a topic that states one
        of them is left out for the message count alone)."""
        count = f"{self.messages} message{'s' if self.messages != 1 else ''}"
        # A topic that is itself an item left out ("Let's go with Postgres" beside
        # "Decision: go with Postgres") would say it twice: the count stands alone.
        topic = item_key(self.topic)
        if any(re.search(rf"(?<!\w){re.escape(key)}(?!\w)", topic) for key in leave_out if key):
            parts = [count]
        else:
            parts = [f"On “{snippet(self.topic, _TOPIC_CHARS)}” ({count})"]
        for label, items in (("Decided", self.decided), ("Open", self.open)):
            kept = [snippet(item, _ITEM_CHARS) for item in items if item_key(item) not in leave_out]
            if kept:
                parts.append(f"{label}: " + "; ".join(kept))
        if self.ended is not None:
            parts.append(f"Ended on “{snippet(self.ended, _ENDED_CHARS)}”")
        return " ".join(part if _ENDS_SENTENCE.search(part) else f"{part}." for part in parts)

    def without(self, keys: Collection[str]) -> SummaryParts:
        """These parts without the decided and open items whose :func:`item_key` is in
        ``keys`` (items since resolved or replaced)."""
        return replace(
            self,
            decided=tuple(item for item in self.decided if item_key(item) not in keys),
            open=tuple(item for item in self.open if item_key(item) not in keys),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "messages": self.messages,
            "decided": list(self.decided),
            "open": list(self.open),
            "ended": self.ended,
        }

    @classmethod
    def from_json(cls, value: object) -> SummaryParts | None:
        """The parts stored by :meth:`to_json`; ``None`` for anything else (a summary
        captured before parts were kept, or an LLM one)."""
        if not isinstance(value, Mapping):
            return None
        topic, messages = value.get("topic"), value.get("messages")
        decided, open_items = value.get("decided") or [], value.get("open") or []
        ended = value.get("ended")
        if not (
            isinstance(topic, str)
            and isinstance(messages, int)
            and isinstance(decided, list)
            and isinstance(open_items, list)
            and (ended is None or isinstance(ended, str))
        ):
            return None
        return cls(
            topic,
            messages,
            tuple(str(item) for item in decided),
            tuple(str(item) for item in open_items),
            ended,
        )


def item_key(text: str) -> str:
    """An item as compared with the card's Open/Decision lines: case and spacing folded,
    end punctuation off."""
    return " ".join(text.casefold().split()).rstrip(" .…")


def snippet(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with "…"."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS
