"""The middleware pipeline: stages are plain async callables composed once at startup.

A stage has the aiohttp middleware shape ``async def stage(turn, call_next) -> Reply``: it may
act before calling the next stage (enrich the turn, or short-circuit with its own reply)
and after (record, post-process the reply). The innermost handler forwards upstream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Protocol

from middleware.types import Reply, Turn

Handler = Callable[[Turn], Awaitable[Reply]]


class Stage(Protocol):
    """One step of the pipeline."""

    async def __call__(self, turn: Turn, call_next: Handler) -> Reply:
        """Handle ``turn``, usually by calling ``call_next(turn)`` once; return the reply."""
        ...


def compose(stages: Sequence[Stage], handler: Handler) -> Handler:
    """Build the chain once: ``stages[0]`` runs first and ``handler`` last."""
    chain = handler
    for stage in reversed(stages):
        chain = partial(stage, call_next=chain)
    return chain
