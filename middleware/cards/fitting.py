"""What every tier card is made of and fitted with: the tier names, the card tags,
token counts (remembered), one-line items and lines shortened with "…".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from middleware.cards.tokens import count_tokens as _count_tokens


@functools.lru_cache(maxsize=1024)
def count_tokens(text: str) -> int:
    """:func:`middleware.cards.tokens.count_tokens`, remembered: fitting a card counts
    the same candidate texts more than once (and a card is counted again at the end)."""
    return _count_tokens(text)


RESUME = "resume"
RECENT_ACTIVITY = "recent_activity"
LIVING_MEMORY = "living_memory"

ELLIPSIS = "…"
# Cards are read by the model, in English and one fixed shape (as the temporal block).
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def tagged_card(kind: str, tag: str, lines: Sequence[str]) -> str:
    body = "\n".join(lines)
    return f'<card type="{kind}" tag="{tag}">\n{body}\n</card>'


def one_line(text: str) -> str:
    """An item is one line: newlines and runs of blanks collapse to a space."""
    return " ".join(text.split())


def drop_from_end(lines: Sequence[str], fits: Callable[[Sequence[str]], bool]) -> list[str]:
    """``lines`` less the last ones, one at a time, until they ``fit`` or one is left (the
    most important come first; a last line over the cap alone is for :func:`shorten`)."""
    kept = list(lines)
    while len(kept) > 1 and not fits(kept):
        kept.pop()
    return kept


def shorten(text: str, fits: Callable[[str], bool]) -> str | None:
    """The longest ``text[:n] + "…"`` that ``fits``, or ``None`` if not even "…" does.

    Binary search assumes longer never costs less; the result is checked, so a counter that
    breaks that only costs characters, never the budget.
    """
    low, high = 0, len(text) - 1
    best: str | None = None
    while low <= high:
        middle = (low + high) // 2
        candidate = text[:middle].rstrip() + ELLIPSIS
        if fits(candidate):
            best = candidate
            low = middle + 1
        else:
            high = middle - 1
    if best is None and fits(ELLIPSIS):
        best = ELLIPSIS
    return best
