"""Rendering ``<time ISO>`` markup in replies for the people who will read them.

The model writes absolute instants as markup (the clock stage tells it to); on the way out
each one becomes local time: the user's own zone in DMs, UTC plus every participant's
zone in groups, native ``<t:…>`` timestamps on Discord. The transcript keeps the markup,
so history forwarded later stays unambiguous for the model.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

from middleware.clock.presentation import (
    MARKUP_OPEN,
    Audience,
    StreamingTimeRenderer,
    render_times,
)
from middleware.clock.sse_rewrite import rewrite_sse
from middleware.pipeline import Handler, Stage
from middleware.types import VERBATIM, Reply, ReplyStream, Turn


def time_rendering_stage() -> Stage:
    """Render markup in upstream replies once the clock stage has chosen an audience.

    Place it before the recording stage, so the transcript records the model's own text.
    """

    async def render(turn: Turn, call_next: Handler) -> Reply:
        reply = await call_next(turn)
        audience = turn.audience
        if audience is None or VERBATIM in reply.meta:
            return reply
        if reply.stream is not None:
            renderer = StreamingTimeRenderer(audience, reference=turn.received_at)
            reply.stream = ReplyStream(_rendered(reply.stream, renderer), reply.stream.discard)
        elif reply.body is not None and MARKUP_OPEN.encode() in reply.body:
            reply.body, reply.text = _render_body(reply.body, audience, turn)
        return reply

    return render


async def _rendered(
    original: ReplyStream, renderer: StreamingTimeRenderer
) -> AsyncGenerator[bytes, None]:
    inner = original.__aiter__()
    try:
        async for chunk in rewrite_sse(inner, renderer):
            yield chunk
    finally:
        # Closing the inner stream closes the upstream connection and records the reply.
        await inner.aclose()


def _render_body(body: bytes, audience: Audience, turn: Turn) -> tuple[bytes, str]:
    try:
        parsed = json.loads(body)
        choices = parsed["choices"]
    except (ValueError, KeyError, TypeError):
        return body, ""
    text = ""
    for index, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            continue
        rendered = render_times(message["content"], audience, reference=turn.received_at)
        message["content"] = rendered
        if index == 0:
            text = rendered
    return json.dumps(parsed).encode(), text
