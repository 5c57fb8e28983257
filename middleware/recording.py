"""Recording: the inbound message is stored before anything else can fail, the reply after.

The inbound write is applied before the upstream is called (and committed as the request
goes out, in the same loop iteration), so an upstream failure never loses the user's
message or its timestamp.
"""

from __future__ import annotations

import logging

from middleware.clock.source import Clock
from middleware.pipeline import Handler, Stage
from middleware.store import InboundRecord, Store, log_if_failed
from middleware.types import UNRECORDED, Reply, ReplyOutcome, Turn

log = logging.getLogger(__name__)

# ``Reply.meta`` key of the empty reply to an ``observe_only`` turn.
OBSERVED = "observed"


def recording_stage(store: Store, clock: Clock, *, cross_channel: bool) -> Stage:
    """Store the user message, then the assistant reply (streamed replies when they end).

    An ``observe_only`` turn stops here once its message is stored.
    """

    async def record(turn: Turn, call_next: Handler) -> Reply:
        started = clock.now()
        if not turn.continuation:
            inbound = await store.record_inbound(
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
            turn.inbound_message_id = inbound.message_id
            turn.prior = inbound.prior
        if turn.observe_only:
            # Witnessed, not asked: recorded for the clock, never answered.
            return Reply(meta={OBSERVED: "1"})
        reply = await call_next(turn)
        if UNRECORDED in reply.meta:
            return reply

        async def record_reply(outcome: ReplyOutcome) -> None:
            # Replayed turns happen at ``received_at``; the reply follows it by however
            # long the answer really took.
            sent_at = turn.received_at + (clock.now() - started)
            # Queued, not awaited: it is applied right after the answer is handed out and
            # committed before any later read, so the user never waits for the disk.
            stored = store.record_reply(
                turn.thread_key, outcome.text, sent_at, complete=outcome.complete
            )
            stored.add_done_callback(log_if_failed(log, "record the reply", turn.thread_key))

        if reply.stream is not None:
            reply.stream.on_complete(record_reply)
        else:
            await record_reply(ReplyOutcome(reply.text, complete=True))
        return reply

    return record
