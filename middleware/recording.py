"""Recording: the inbound message is stored before anything else can fail, the reply after.

The inbound write is made or queued before any other stage runs, so nothing that fails
later (the upstream included) loses the user's message or its timestamp. A turn alone in
the relay queues it: it lands in the next loop iteration, after the request has gone
upstream, filling the time the loop would otherwise wait for the answer. With other turns
in flight there is no such idle time (the loop is busy with them), and writing at once,
right after its read while the rows it touches are in cache, costs less CPU (≈ 5 % of the
relay's per request under the bench's load). Either way the turn fails if its message could not
be stored: at once, or once the reply is back.
"""

from __future__ import annotations

import asyncio
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

    in_flight = 0  # turns between here and their reply

    async def record(turn: Turn, call_next: Handler) -> Reply:
        nonlocal in_flight
        in_flight += 1
        try:
            return await recorded(turn, call_next, alone=in_flight == 1)
        finally:
            in_flight -= 1

    async def recorded(turn: Turn, call_next: Handler, *, alone: bool) -> Reply:
        started = clock.now()
        if not turn.continuation:
            record = InboundRecord(
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
            if alone:
                queued = await store.queue_inbound(record)
                turn.inbound_id, turn.prior = queued.message_id, queued.prior
            else:
                written = await store.record_inbound(record)
                turn.inbound_id = asyncio.get_running_loop().create_future()
                turn.inbound_id.set_result(written.message_id)
                turn.prior = written.prior
        if turn.observe_only:
            # Witnessed, not asked: recorded for the clock, never answered.
            if turn.inbound_id is not None:
                await turn.inbound_id
            return Reply(meta={OBSERVED: "1"})
        try:
            reply = await call_next(turn)
        except BaseException as failure:
            stored = turn.inbound_id
            if stored is not None and not (stored.done() and _raised(stored, failure)):
                # The turn failed for another reason: the message's own fate is logged.
                stored.add_done_callback(log_if_failed(log, "record the message", turn.thread_key))
            raise
        if turn.inbound_id is not None:
            # Landed by now unless the turn never waited; a message that could not be
            # stored fails its turn (StoreError), as it would have before the upstream.
            try:
                await turn.inbound_id
            except BaseException:
                if reply.stream is not None:
                    reply.stream.discard()
                raise
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


def _raised(stored: asyncio.Future[int], failure: BaseException) -> bool:
    """Whether ``failure`` is the error of the message's write (a stage waited for it)."""
    return not stored.cancelled() and stored.exception() is failure
