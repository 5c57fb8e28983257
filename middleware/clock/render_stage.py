"""Rendering ``<time ISO>`` markup in replies for the people who will read them.

The model writes absolute instants as markup (the clock stage tells it to); on the way out
each one becomes local time: the user's own zone in DMs, UTC plus every participant's
zone in groups, native ``<t:…>`` timestamps on Discord. The transcript keeps the markup,
so history forwarded later stays unambiguous for the model.

A turn the clock stage does not see (a tool result coming back, a message sent again) is
read by the same people as the turn before it: its reply is rendered for the audience its
thread and user last had, or, when the relay has not seen them since it started, for the
zone the store knows for them (UTC when none; native timestamps on Discord).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncGenerator

from middleware.clock.presentation import (
    MARKUP_OPEN,
    Audience,
    DirectAudience,
    DiscordAudience,
    GroupAudience,
    StreamingTimeRenderer,
    render_times,
)
from middleware.clock.sse_rewrite import rewrite_sse
from middleware.clock.zones import is_valid_zone
from middleware.pipeline import Handler, Stage
from middleware.store import PriorState, Store
from middleware.types import VERBATIM, Reply, ReplyStream, Turn

#: How many (thread, user) pairs keep their last audience for the turns the clock skips.
_REMEMBERED_AUDIENCES = 4096


def time_rendering_stage(store: Store, *, clock_enabled: bool = True) -> Stage:
    """Render markup in upstream replies for the audience the clock stage chose.

    A continuation (``Turn.continuation``) gets no audience from the clock stage; while
    ``clock_enabled`` (the model is then told to write markup) its reply is rendered for
    the audience its thread and user last had, else one made from what ``store`` knows.
    Place it before the recording stage, so the transcript records the model's own text.
    """
    last_audience: OrderedDict[tuple[str, str], Audience] = OrderedDict()

    async def audience_for(turn: Turn) -> Audience | None:
        pair = (turn.thread_key, turn.user_key)
        if turn.audience is not None:
            last_audience[pair] = turn.audience
            last_audience.move_to_end(pair)
            if len(last_audience) > _REMEMBERED_AUDIENCES:
                last_audience.popitem(last=False)
            return turn.audience
        if not (clock_enabled and turn.continuation):
            return None
        known = last_audience.get(pair)
        if known is not None:
            return known
        # Only after a restart: a resent turn read its prior state already.
        prior = turn.prior or await store.peek_prior(turn.thread_key, turn.user_key)
        return _known_audience(turn, prior)

    async def render(turn: Turn, call_next: Handler) -> Reply:
        reply = await call_next(turn)
        audience = await audience_for(turn)
        if audience is None or VERBATIM in reply.meta:
            return reply
        if reply.stream is not None:
            renderer = StreamingTimeRenderer(audience, reference=turn.received_at)
            reply.stream = ReplyStream(_rendered(reply.stream, renderer), reply.stream.discard)
        elif reply.body is not None and MARKUP_OPEN.encode() in reply.body:
            reply.body, reply.text = _render_body(reply.body, audience, turn)
        return reply

    return render


def _known_audience(turn: Turn, prior: PriorState) -> Audience:
    """An audience for a continuation of a thread the relay has not seen since it started:
    the user's stored zone and locale in a DM, the UTC anchor in a group (its members are
    not read for a turn the clock skips)."""
    locale = prior.reader_locale or "en"
    if turn.channel == "discord":
        return DiscordAudience(locale)
    if turn.chat_type == "group":
        return GroupAudience((), locale)
    zones = (prior.thread_tz, prior.user_tz)
    zone = next((z for z in zones if z is not None and is_valid_zone(z)), "UTC")
    return DirectAudience(zone, locale)


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
