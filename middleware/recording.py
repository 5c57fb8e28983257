"""Recording: the inbound message is stored before anything else can fail, the reply after.

The inbound write happens before the upstream is called, so an upstream failure (or a
crash after forwarding) never loses the user's message or its timestamp.
"""

from __future__ import annotations

import logging

from middleware.clock.source import Clock
from middleware.pipeline import Handler, Stage
from middleware.store import InboundRecord, Store
from middleware.types import Reply, ReplyOutcome, Turn

log = logging.getLogger(__name__)


def recording_stage(store: Store, clock: Clock, *, cross_channel: bool) -> Stage:
    """Store the user message, then the assistant reply (streamed replies when they end)."""

    async def record(turn: Turn, call_next: Handler) -> Reply:
        started = clock.now()
        turn.inbound_message_id = await store.record_inbound(
            InboundRecord(
                user_key=turn.user_key,
                channel=turn.channel,
                platform_user_id=turn.user_id,
                display_name=turn.display_name,
                thread_key=turn.thread_key,
                chat_type=turn.chat_type,
                text=turn.text,
                received_at=turn.received_at,
                cross_channel=cross_channel,
            )
        )
        reply = await call_next(turn)

        async def record_reply(outcome: ReplyOutcome) -> None:
            # Replayed turns happen at ``received_at``; the reply follows it by however
            # long the answer really took.
            sent_at = turn.received_at + (clock.now() - started)
            await store.record_reply(
                turn.thread_key, outcome.text, sent_at, complete=outcome.complete
            )

        if reply.stream is not None:
            reply.stream.on_complete(record_reply)
        else:
            await record_reply(ReplyOutcome(reply.text, complete=True))
        return reply

    return record
