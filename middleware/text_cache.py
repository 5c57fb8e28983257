"""Results of pure functions of a message text, kept for the most recent texts.

For an analysis that several readers of one message need on the same turn: the action
detectors' shared prefilter and sentence split. A function decorated with
:func:`per_text` computes each text once while it is among the last :data:`TEXTS` seen.
A detector that runs once per turn is not decorated: every turn's text is new, so the
cache would only add its bookkeeping (measured: a miss costs more than a direct call of
a gated detector, and a turn would make seven of them). Only texts up to
:data:`MAX_CHARS` characters are kept, so the cache stays small however large the
messages are; longer ones are computed every time.

Only for functions whose result depends on nothing but their (hashable) arguments and
is immutable (a frozen dataclass, a tuple, a number, None): every caller gets the same
object.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar, TypeVarTuple

__all__ = ["MAX_CHARS", "TEXTS", "per_text"]

T = TypeVar("T")
Args = TypeVarTuple("Args")

TEXTS = 256
MAX_CHARS = 2000


def per_text(func: Callable[[str, *Args], T]) -> Callable[[str, *Args], T]:
    """``func`` with its results for the last :data:`TEXTS` short texts kept; further
    arguments (positional, hashable) are part of the key."""
    cached = lru_cache(maxsize=TEXTS)(func)

    @wraps(func)
    def call(text: str, *args: *Args) -> T:
        return cached(text, *args) if len(text) <= MAX_CHARS else func(text, *args)

    return call
