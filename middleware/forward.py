"""The innermost handler: send the turn's body to the upstream."""

from __future__ import annotations

from middleware.pipeline import Handler
from middleware.types import Reply, Turn, Upstream


def forward_to(upstream: Upstream) -> Handler:
    """A handler that forwards ``turn.body`` (with whatever the stages injected)."""

    async def forward(turn: Turn) -> Reply:
        return await upstream.complete(turn.body)

    return forward
