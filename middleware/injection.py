"""Injection: put the turn's block into the forwarded request without breaking the cache.

The agent's system prompt and history are forwarded byte-for-byte except for the relay's
own blocks. Each block rides with the user message it was made for (appended to it, or,
with ``placement = "system"``, as a system message just before it). What was injected is
stored per thread and re-applied verbatim whenever that user message comes back in a
later request, so the forwarded conversation only ever grows at its end and the
upstream's prompt (prefix) cache stays valid.

A user message is recognised by the hash of its original content plus its ordinal among
equal messages in the request (a second "ok" is a different message from the first).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from typing import Any, Literal

from middleware.clock.temporal import estimate_tokens
from middleware.errors import StoreError
from middleware.pipeline import Handler, Stage
from middleware.store import Store
from middleware.types import JSON, Reply, Turn

log = logging.getLogger(__name__)

Placement = Literal["user", "system"]
OPEN_TAG = "<relay_context>"
CLOSE_TAG = "</relay_context>"
# Threads whose injections are kept in memory; older ones are re-read from the store.
_CACHED_THREADS = 4096


def wrap(block: str) -> str:
    """The block as it appears to the model: tagged, so it is never taken as the user's."""
    return f"{OPEN_TAG}\n{block}\n{CLOSE_TAG}"


def fingerprint(message: JSON) -> str:
    content = message.get("content")
    raw = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
    return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()


def trim_sections(sections: list[str], max_tokens: int) -> list[str]:
    """Keep sections in order within ``max_tokens``; the first one is never dropped."""
    kept: list[str] = []
    used = 0
    for index, section in enumerate(sections):
        cost = estimate_tokens(section) + 1
        if index and used + cost > max_tokens:
            continue
        kept.append(section)
        used += cost
    return kept


def apply_block(messages: list[Any], index: int, text: str, placement: Placement) -> None:
    """Attach ``text`` to ``messages[index]`` (a user message) in place."""
    if placement == "system":
        messages.insert(index, {"role": "system", "content": text})
        return
    message = dict(messages[index])
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [*content, {"type": "text", "text": text}]
    else:
        message["content"] = f"{content or ''}\n\n{text}"
    messages[index] = message


class InjectionMemory:
    """Per-thread record of injections: an LRU in memory over the store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._threads: OrderedDict[str, dict[tuple[str, int], str]] = OrderedDict()

    async def load(self, thread_key: str) -> dict[tuple[str, int], str]:
        known = self._threads.get(thread_key)
        if known is None:
            known = await self._store.injections(thread_key)
            self._threads[thread_key] = known
            if len(self._threads) > _CACHED_THREADS:
                self._threads.popitem(last=False)
        else:
            self._threads.move_to_end(thread_key)
        return known


def injection_stage(store: Store, *, placement: Placement, max_tokens: int) -> Stage:
    """Render ``turn.context`` into the newest user message and replay earlier blocks."""
    memory = InjectionMemory(store)

    async def inject(turn: Turn, call_next: Handler) -> Reply:
        messages = turn.body.get("messages")
        if not isinstance(messages, list):
            return await call_next(turn)
        known = await memory.load(turn.thread_key)
        newest = _newest_user_index(messages) if not turn.continuation else None
        # The cards were sized within their own budget (spec 001 §6.4); only the
        # temporal sections answer to the block's ceiling.
        sections = trim_sections(turn.context.sections, max_tokens) + turn.context.cards
        fresh = wrap("\n".join(sections)) if sections and newest is not None else None
        forwarded = list(messages)
        seen: dict[str, int] = {}
        save: tuple[str, int, str] | None = None
        # Walk backwards so inserting system messages does not shift indices still to visit.
        plan: list[tuple[int, str]] = []
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            key = fingerprint(message)
            ordinal = seen.get(key, 0)
            seen[key] = ordinal + 1
            text = known.get((key, ordinal))
            if index == newest and fresh is not None:
                # The newest message always gets a block made now: a client that sends only
                # the newest message says "hi" tomorrow as it did today, and must not get
                # today's time. Only the first block made for a message is remembered.
                if text is None:
                    known[(key, ordinal)] = fresh
                    save = (key, ordinal, fresh)
                text = fresh
            if text is not None:
                plan.append((index, text))
        for index, text in reversed(plan):
            apply_block(forwarded, index, text, placement)
        if fresh is not None:
            turn.context.text = fresh
            turn.context.tokens = estimate_tokens(fresh)
        turn.body = {**turn.body, "messages": forwarded}
        if save is None:
            return await call_next(turn)
        # Remember the block while the upstream works; both must finish before we answer.
        saving = asyncio.ensure_future(
            store.save_injection(turn.thread_key, save[0], save[1], save[2], turn.received_at)
        )
        try:
            reply = await call_next(turn)
        finally:
            try:
                await saving
            except StoreError as exc:
                # Only the cache-friendliness of later requests suffers; don't fail this one.
                log.error("could not remember the injection in %s: %s", turn.thread_key, exc)
        return reply

    return inject


def _newest_user_index(messages: list[Any]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") == "user":
            return index
    return None
