"""Recording: the inbound message is stored before anything else can fail, the reply after.

The inbound write is made or queued before any other stage runs, so nothing that fails
later (the upstream included) loses the user's message or its timestamp. A turn alone in
the relay queues it: it lands in the next loop iteration, after the request has gone
upstream, filling the time the loop would otherwise wait for the answer. With other turns
in flight there is no such idle time (the loop is busy with them), and writing at once,
right after its read while the rows it touches are in cache, costs less CPU (≈ 5 % of the
relay's per request under the bench's load). Either way the turn fails if its message could not
be stored: at once, or once the reply is back.

A request may bring again the message it brought before (an SDK retrying, a client
regenerating the answer). That message is not recorded twice: its second arrival would
make the user's gap "just now" and the transcript hold it twice. It goes on as a
continuation, replayed with the block it was sent with (see ``LatestMessages``). Memory
knows the recently active pairs; for a pair it does not know (the relay restarted since
its last message) the store is asked once: where the pair's newest stored message sat in
its request (stored with it) tells whether this is it; for a message stored before its
place was, the block saved for it does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from middleware.clock.source import Clock
from middleware.errors import StoreError
from middleware.identity import display_label, user_key
from middleware.injection import fingerprint, newest_user_index
from middleware.pipeline import Handler, Stage
from middleware.store import Durable, InboundRecord, Store, log_if_failed
from middleware.types import COMMAND, UNRECORDED, Reply, ReplyOutcome, Turn

log = logging.getLogger(__name__)

# ``Reply.meta`` key of the empty reply to an ``observe_only`` turn.
OBSERVED = "observed"

# (thread, user) pairs whose newest message is remembered: a message is sent again soon
# after it was first, while its pair is among the recently active.
_REMEMBERED_PAIRS = 4096
# How long after a message a request that holds nothing before it (a client that sends
# only the newest message) is taken as sending it again, rather than as the same words
# said anew: longer than an SDK's retries take (its default timeout is 10 minutes).
_BARE_RESEND_WINDOW = timedelta(minutes=15)
# Roles that are the agent's instructions, not conversation.
_INSTRUCTION_ROLES = frozenset({"system", "developer"})

Pair = tuple[str, str]  # thread key, user key
# What else reads a message the relay only witnesses (``observe_only``), once it is stored.
Witness = Callable[[Turn], Awaitable[None]]
# A user message as its request placed it: its fingerprint and its index in ``messages``.
Place = tuple[str, int]


class LatestMessages:
    """The newest message recorded from each recently active (thread, user) pair: its
    ``Place`` and when it was received.

    A request whose newest user message has the same place brings that message again: an
    SDK retry sends the same body, and a regenerated answer the same history up to the
    message. A new message with the same text ("ok" twice) comes after the reply to the
    first, so further on in the request; a reply recorded in between is no sign either
    way. A request with no conversation before its message cannot be told from the same
    words said anew except by time: it is a resend only within ``_BARE_RESEND_WINDOW``.
    A pair not held (``knows``) is looked up in the store (``stored_resend``).
    """

    def __init__(self, max_pairs: int = _REMEMBERED_PAIRS) -> None:
        self._max_pairs = max_pairs
        self._latest: dict[Pair, tuple[Place, datetime]] = {}

    def knows(self, pair: Pair) -> bool:
        """Whether the pair's newest message is held: if not, only the store can tell."""
        return pair in self._latest

    def resent(self, turn: Turn, place: Place | None) -> bool:
        """Whether ``place`` is that of the newest message recorded from the turn's pair,
        which the turn brings again."""
        latest = self._latest.get((turn.thread_key, turn.user_key))
        if place is None or latest is None or latest[0] != place:
            return False
        if _holds_conversation(turn.body["messages"][: place[1]]):
            return True
        return abs(turn.received_at - latest[1]) <= _BARE_RESEND_WINDOW

    def recorded(self, turn: Turn, place: Place | None) -> None:
        """The turn's message, at ``place`` (None: a turn that cannot be a resend), is being
        recorded: it is its pair's newest now."""
        self.remember((turn.thread_key, turn.user_key), place, turn.received_at)

    def remember(self, pair: Pair, place: Place | None, at: datetime) -> None:
        """The pair's newest message, received at ``at``, is the one at ``place``."""
        self._latest.pop(pair, None)
        if place is None:
            return
        if len(self._latest) >= self._max_pairs:
            del self._latest[next(iter(self._latest))]
        self._latest[pair] = (place, at)

    def not_recorded(self, pair: Pair, place: Place | None) -> None:
        """The message at ``place`` could not be stored: its resend must be recorded."""
        latest = self._latest.get(pair)
        if place is not None and latest is not None and latest[0] == place:
            del self._latest[pair]


def newest_place(turn: Turn) -> Place | None:
    """The place of the request's newest user message, for a turn that may be a resend."""
    messages = turn.body.get("messages")
    if not turn.resendable or not isinstance(messages, list):
        return None
    index = newest_user_index(messages)
    return None if index is None else (fingerprint(messages[index]), index)


async def stored_resend(store: Store, latest: LatestMessages, turn: Turn, place: Place) -> bool:
    """Whether the turn brings again its pair's newest stored message, for a pair that
    ``latest`` does not hold: one read, of that message's place (stored with it since
    schema version 16), the same rule memory applies. A message stored before without
    its place takes a second read, by the key its block was saved under: the message is
    the one at ``place`` when that block was saved at the instant it was received (a
    block is saved with its message's time). It is then held, so the pair's later turns
    ask memory only.
    """
    newest = await store.newest_message_place(turn.thread_key, turn.user_key)
    if newest is None:
        return False
    stored_place, at = newest
    if stored_place is None:
        found = await _injected_at(store, turn, place)
        if found is None:
            return False
        at = found
    elif stored_place != place:
        return False
    latest.remember((turn.thread_key, turn.user_key), place, at)
    return latest.resent(turn, place)


async def _injected_at(store: Store, turn: Turn, place: Place) -> datetime | None:
    """When the pair's newest message was received, if the block saved for the request's
    message at ``place`` was made for it."""
    messages: list[Any] = turn.body["messages"]
    content = messages[place[1]].get("content")
    # Equal content, equal fingerprint: the earlier copies need no hashing.
    ordinal = sum(
        1
        for message in messages[: place[1]]
        if isinstance(message, dict)
        and message.get("role") == "user"
        and message.get("content") == content
    )
    key = (place[0], ordinal)
    return await store.newest_message_injected_at(turn.thread_key, turn.user_key, key)


def mentioned_member_names(turn: Turn) -> tuple[tuple[str, str], ...]:
    """The names ``turn``'s mentions show other members of its group by, by user key and
    as the block shows a name (``display_label``); none in a DM."""
    if turn.chat_type != "group":
        return ()
    names = []
    for user_id, name in sorted(turn.mentioned_names.items()):
        label = display_label(name)
        if label is not None and user_id != turn.user_id:
            names.append((user_key(turn.channel, user_id), label))
    return tuple(names)


def _holds_conversation(messages: list[Any]) -> bool:
    """Whether ``messages`` hold more than the agent's instructions."""
    return any(
        not isinstance(message, dict) or message.get("role") not in _INSTRUCTION_ROLES
        for message in messages
    )


def recording_stage(
    store: Store,
    clock: Clock,
    *,
    cross_channel: bool,
    latest: LatestMessages | None = None,
    witness: Witness | None = None,
    is_command: Callable[[Turn], bool] | None = None,
) -> Stage:
    """Store the user message, then the assistant reply (streamed replies when they end).

    A message ``is_command`` says the relay will answer itself (``answers_itself``) is
    stored as a command at once; one the relay answers only as it turns out (a settings
    directive) is marked once its answer is back.

    An ``observe_only`` turn stops here once its message is stored and ``witness`` (if
    any) has read it: no later stage runs for it. A message sent again
    (``LatestMessages``) is not stored: the turn becomes a ``resent`` continuation.
    ``latest`` is made here unless given.
    """

    in_flight = 0  # turns between here and their reply
    newest = LatestMessages() if latest is None else latest

    async def record(turn: Turn, call_next: Handler) -> Reply:
        nonlocal in_flight
        in_flight += 1
        try:
            return await recorded(turn, call_next, alone=in_flight == 1)
        finally:
            in_flight -= 1

    async def recorded(turn: Turn, call_next: Handler, *, alone: bool) -> Reply:
        started = clock.now()
        pair, place = (turn.thread_key, turn.user_key), None
        stored_as_command = False
        durable: Durable | None = None  # the message's commit, once it is stored
        if not turn.continuation:
            place = newest_place(turn)
            if newest.resent(turn, place) or (
                place is not None
                and not newest.knows(pair)
                and await stored_resend(store, newest, turn, place)
            ):
                turn.continuation = turn.resent = True
                # Read, not moved: a command sent again shows the user's zone as it is.
                turn.prior = await store.peek_prior(turn.thread_key, turn.user_key)
        if not turn.continuation:
            # Marked before the write is awaited: a resend arriving meanwhile is one.
            newest.recorded(turn, place)
            stored_as_command = is_command is not None and is_command(turn)
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
                place=place,
                command=stored_as_command,
                member_names=mentioned_member_names(turn),
            )
            try:
                if alone:
                    queued = await store.queue_inbound(record)
                    turn.inbound_id, turn.prior = queued.message_id, queued.prior
                    durable = queued.durable
                else:
                    written = await store.record_inbound(record)
                    turn.inbound_id = asyncio.get_running_loop().create_future()
                    turn.inbound_id.set_result(written.message_id)
                    turn.prior, durable = written.prior, written.durable
            except BaseException:
                newest.not_recorded(pair, place)
                raise
            if place is not None and turn.inbound_id.done():
                # Written already (other turns in flight, the usual case under load):
                # checked now, not in a callback scheduled on every such turn.
                _unless_stored(turn.inbound_id, newest, pair, place)
            elif place is not None:
                turn.inbound_id.add_done_callback(
                    lambda stored: _unless_stored(stored, newest, pair, place)
                )
            await _keep_app_locale(store, turn)
        if turn.observe_only:
            # Witnessed, not asked: recorded for the clock, never answered.
            if turn.inbound_id is not None:
                await turn.inbound_id
            if durable is not None:
                await _kept(durable, newest, pair, place)
            if witness is not None and not turn.continuation:
                await witness(turn)
            return Reply(meta={OBSERVED: "1"})
        try:
            reply = await call_next(turn)
        except BaseException as failure:
            stored = turn.inbound_id
            if durable is not None and isinstance(failure, Exception) and _landed(stored):
                # A stage may fail only because the message's commit failed (a read then
                # finds no thread): the store's error is the one that says why.
                await _kept(durable, newest, pair, place)
            if stored is not None and not (stored.done() and _raised(stored, failure)):
                # The turn failed for another reason: the message's own fate is logged.
                stored.add_done_callback(log_if_failed(log, "record the message", turn.thread_key))
            raise
        if turn.inbound_id is not None:
            # Landed by now unless the turn never waited; a message that could not be
            # stored fails its turn (StoreError), as it would have before the upstream.
            # So does one whose commit failed (a full disk): the answer, not yet out,
            # must not tell the client its message was kept.
            try:
                await turn.inbound_id
                if durable is not None:
                    await _kept(durable, newest, pair, place)
            except BaseException:
                if reply.stream is not None:
                    reply.stream.discard()
                raise
        if COMMAND in reply.meta and turn.inbound_id is not None and not stored_as_command:
            # Answered by the relay, not the model: no turn of the conversation (its
            # sessions' counts and dirty check leave it out, and its time is not the
            # thread's last message), even when the answer itself is not recorded.
            marked = store.mark_command(turn.thread_key, turn.inbound_id.result())
            marked.add_done_callback(log_if_failed(log, "mark a command", turn.thread_key))
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
            turn.reply_id = stored

        if reply.stream is not None:
            reply.stream.on_complete(record_reply)
        else:
            await record_reply(ReplyOutcome(reply.text, complete=True))
        return reply

    return record


async def _keep_app_locale(store: Store, turn: Turn) -> None:
    """Keep the locale the turn's app reports when it is not the one stored, and let this
    turn already read it: a write only when it changes (a new user, an app switched to
    another language), none on an ordinary turn. Losing it costs nothing the next
    message would not bring again, so a failure is logged, not the turn's."""
    prior = turn.prior
    if turn.locale is None or prior is None or turn.locale == prior.app_locale:
        return
    try:
        await store.set_app_locale(turn.user_key, turn.locale)
    except StoreError as exc:
        log.warning("could not keep the app locale of %s: %s", turn.user_key, exc)
        return
    turn.prior = replace(prior, app_locale=turn.locale)


async def _kept(durable: Durable, latest: LatestMessages, pair: Pair, place: Place | None) -> None:
    """Return once the stored message is committed; if its commit failed, forget it as the
    pair's newest (sent again, it is new) and raise the store's error."""
    try:
        await durable.committed()
    except StoreError:
        if place is not None:
            latest.not_recorded(pair, place)
        raise


def _landed(stored: asyncio.Future[int] | None) -> bool:
    """Whether the message's write was applied (its commit may still fail)."""
    return (
        stored is not None
        and stored.done()
        and not stored.cancelled()
        and stored.exception() is None
    )


def _raised(stored: asyncio.Future[int], failure: BaseException) -> bool:
    """Whether ``failure`` is the error of the message's write (a stage waited for it)."""
    return not stored.cancelled() and stored.exception() is failure


def _unless_stored(
    stored: asyncio.Future[int], latest: LatestMessages, pair: Pair, place: Place
) -> None:
    """Forget the message as the pair's newest if its queued write failed."""
    if stored.cancelled() or stored.exception() is not None:
        latest.not_recorded(pair, place)
