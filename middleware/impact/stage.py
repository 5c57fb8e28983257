"""The impactful tool-call guard (spec 000 §8.2) as a pipeline stage.

When the client passed ``tools`` and the upstream's answer calls one whose name matches
the configured patterns:

- ``enforce``: the call is held (in the store, per thread) and the client gets an
  assistant message asking the user to confirm instead. If the user's next message in
  the thread is an explicit yes, the relay answers it with the held call itself — the
  same ids and arguments — without asking the model again; anything else drops the call
  and tells the model it was not made. "Anything else" includes a chat command or a
  clock setting the relay answers itself: a later "ok" agrees with that answer, not with
  the call, so ``held_call_stage`` reads the user's answer before those stages run.

A held call belongs to the user whose turn produced it: in a group only their answer
confirms or drops it, and another member's message leaves it waiting. But once another
member's turn has gone upstream and been answered, the conversation has moved on: the
call lapses there and then, so the user's later "ok" (which may agree with what was just
said) never makes it; the model is told it was not made.
- ``annotate``: the answer passes unchanged, flagged in the
  ``X-Chronorelay-Impactful-Tool-Calls`` header (non-streamed) and the log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Literal

from middleware.impact.confirmation import classify_answer
from middleware.impact.tool_calls import (
    StreamToolCalls,
    ToolCall,
    confirmation_body,
    confirmation_text,
    guard_stream,
    impactful_names,
    release_body,
    release_stream,
    tool_calls_in_body,
)
from middleware.pipeline import Handler, Stage
from middleware.store import HeldToolCall, Store
from middleware.types import IMPACTFUL_TOOL_CALLS, Reply, ReplyStream, Turn

log = logging.getLogger(__name__)

Guard = Literal["enforce", "annotate", "off"]


@dataclass(frozen=True, slots=True)
class ImpactSettings:
    guard: Guard = "enforce"
    patterns: tuple[str, ...] = ()
    confirmation_ttl: timedelta = timedelta(hours=1)


def held_call_stage(store: Store, settings: ImpactSettings) -> Stage:
    """Release the thread's held call on the user's explicit yes, or drop it on any other
    message. Runs before the chat commands and settings the relay answers itself, since
    whatever the user says next is their answer to the request to confirm."""

    async def held_call(turn: Turn, call_next: Handler) -> Reply:
        if settings.guard != "off":
            released = await _answer_held(store, turn)
            if released is not None:
                return released
        return await call_next(turn)

    return held_call


def impact_stage(store: Store, settings: ImpactSettings) -> Stage:
    """Hold (or flag) impactful tool calls in the upstream's answer."""

    def impactful(calls: list[ToolCall]) -> list[str]:
        return impactful_names([call.name for call in calls], settings.patterns)

    async def impact(turn: Turn, call_next: Handler) -> Reply:
        if settings.guard == "off":
            return await call_next(turn)
        reply = await call_next(turn)
        await _lapse_others_held_call(store, turn)
        if not turn.body.get("tools"):
            return reply
        if reply.body is not None:
            return await _guard_body(store, turn, reply, impactful, settings)
        if reply.stream is not None:
            return _guard_stream(store, turn, reply.stream, impactful, settings)
        return reply

    return impact


async def _answer_held(store: Store, turn: Turn) -> Reply | None:
    """Release the held call on an explicit yes; otherwise drop it and tell the model."""
    prior = turn.prior
    if turn.continuation or prior is None or prior.held_call_expires_at is None:
        return None
    held = await store.take_held_tool_call(turn.thread_key)
    if held is None:
        return None
    if held.user_key != turn.user_key:
        # Someone else in the group spoke: the call still waits for its own user.
        await store.hold_tool_call(held)
        if held.expires_at > turn.received_at:
            turn.context.sections.append(await _waits_for_another(store, turn, held))
        return None
    names = ", ".join(held.names)
    if held.expires_at <= turn.received_at:
        turn.context.sections.append(
            f"A call to {names} waited for the user's confirmation and lapsed before they "
            "answered (its time ran out, or others spoke and were answered meanwhile); it "
            "was not made. Do not make it unless the user asks again."
        )
        return None
    answer = classify_answer(turn.own_text)
    if answer == "confirm":
        log.info(
            "releasing held tool call(s) %s in %s on the user's confirmation",
            names,
            turn.thread_key,
        )
        return _release(turn, held)
    turn.context.sections.append(
        f"The user did not confirm the call to {names}, so it was not made. Do not make it "
        "unless they clearly ask for it again."
    )
    return None


async def _waits_for_another(store: Store, turn: Turn, held: HeldToolCall) -> str:
    """What the model is told when a member other than ``held``'s user speaks: their "yes"
    right after the request to confirm reads like the confirmation, and answering it
    makes the call lapse (``_lapse_others_held_call``), so it must not say it was made.
    Both are named as the group knows them, as their messages are (``Store.
    speaker_label``): by the name they go by in this thread, not their account's, and
    namesakes told apart by their user keys."""
    key = turn.thread_key
    owner = await store.speaker_label(key, turn.chat_type, held.user_key, None)
    name = owner or held.user_key.partition(":")[2]
    speaker = await store.speaker_label(key, turn.chat_type, turn.user_key, turn.display_name)
    speaker = speaker or turn.user_id
    return (
        f"A call to {', '.join(held.names)} was waiting for {name}'s confirmation. This "
        f"message is from {speaker}, so it does not confirm it, and once you answer it the "
        f"call lapses without being made: do not say it was made; {name} can ask again."
    )


async def _lapse_others_held_call(store: Store, turn: Turn) -> None:
    """After the upstream answered ``turn``: a call another member of the thread was
    asked to confirm is now stale, so it lapses at once (kept, expired, so that its user's
    next message hears it was not made)."""
    prior = turn.prior
    if turn.continuation or prior is None or prior.held_call_expires_at is None:
        return
    held = await store.take_held_tool_call(turn.thread_key)
    if held is None:
        return
    if held.user_key != turn.user_key and held.expires_at > turn.received_at:
        log.info(
            "held tool call(s) %s in %s lapsed: another member's turn was answered",
            ", ".join(held.names),
            turn.thread_key,
        )
        held = replace(held, expires_at=turn.received_at)
    await store.hold_tool_call(held)


def _release(turn: Turn, held: HeldToolCall) -> Reply:
    created = int(turn.received_at.timestamp())
    completion_id = f"chatcmpl-relay-{created}"
    text = f"[confirmed tool call: {', '.join(held.names)}]"
    if turn.body.get("stream"):
        chunks = release_stream(
            held.message, model=held.model, created=created, completion_id=completion_id
        )
        return Reply(text=text, stream=ReplyStream(_iterate(chunks), lambda: None))
    body = release_body(
        held.message, model=held.model, created=created, completion_id=completion_id
    )
    return Reply(text=text, body=body)


async def _guard_body(
    store: Store, turn: Turn, reply: Reply, impactful: Any, settings: ImpactSettings
) -> Reply:
    assert reply.body is not None
    message, calls = tool_calls_in_body(reply.body)
    names: list[str] = impactful(calls)
    if not names or message is None:
        return reply
    if settings.guard == "annotate":
        log.warning("impactful tool call(s) %s in %s (annotate mode)", names, turn.thread_key)
        reply.meta[IMPACTFUL_TOOL_CALLS] = ",".join(names)
        return reply
    original = json.loads(reply.body)
    await _hold(store, turn, message, names, str(original.get("model") or ""), settings)
    text = confirmation_text(calls, names, message.get("content"), _asked_of(turn))
    reply.body = confirmation_body(original, text)
    reply.text = text
    return reply


def _guard_stream(
    store: Store, turn: Turn, stream: ReplyStream, impactful: Any, settings: ImpactSettings
) -> Reply:
    if settings.guard == "annotate":
        return Reply(stream=ReplyStream(_annotated(turn, stream, impactful), stream.discard))

    async def on_hold(message: dict[str, Any], names: list[str]) -> str:
        calls = [
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"], i)
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        await _hold(store, turn, message, names, str(turn.body.get("model") or ""), settings)
        return confirmation_text(calls, names, message.get("content"), _asked_of(turn))

    async def guarded() -> AsyncIterator[bytes]:
        async with aclosing(stream.__aiter__()) as upstream:
            async with aclosing(guard_stream(upstream, impactful, on_hold)) as chunks:
                async for chunk in chunks:
                    yield chunk

    return Reply(stream=ReplyStream(guarded(), stream.discard))


def _asked_of(turn: Turn) -> str | None:
    """Who the request to confirm is for, named in a group (where only their answer
    counts, and everyone reads it); ``None`` in a private chat."""
    if turn.chat_type != "group":
        return None
    return turn.display_name or turn.user_id


async def _annotated(turn: Turn, stream: ReplyStream, impactful: Any) -> AsyncIterator[bytes]:
    """Pass the stream through; log impactful calls seen (headers went out already)."""
    seen = StreamToolCalls()
    async with aclosing(stream.__aiter__()) as chunks:
        async for chunk in chunks:
            seen.feed(chunk)
            yield chunk
    names = impactful(seen.calls())
    if names:
        log.warning("impactful tool call(s) %s in %s (annotate mode)", names, turn.thread_key)


async def _hold(
    store: Store,
    turn: Turn,
    message: dict[str, Any],
    names: list[str],
    model: str,
    settings: ImpactSettings,
) -> None:
    now = turn.received_at
    log.info("holding tool call(s) %s in %s until the user confirms", names, turn.thread_key)
    await store.hold_tool_call(
        HeldToolCall(
            thread_key=turn.thread_key,
            user_key=turn.user_key,
            message=message,
            names=tuple(names),
            model=model or str(turn.body.get("model") or ""),
            held_at=now,
            expires_at=now + settings.confirmation_ttl,
        )
    )


async def _iterate(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
