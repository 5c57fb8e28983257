"""Injection: put the turn's block into the forwarded request without breaking the cache.

The agent's system prompt and history are forwarded byte-for-byte except for the relay's
own blocks. Each block rides with the user message it was made for (appended to it, or,
with ``placement = "system"``, as a system message just before it). What was injected is
stored per thread and re-applied verbatim whenever that user message comes back in a
later request, so the forwarded conversation only ever grows at its end and the
upstream's prompt (prefix) cache stays valid. A message the recording stage knows it
already recorded, sent again as the newest (an SDK retry, a regenerated answer), comes as a
continuation and is replayed with its block (after a restart too: the recording stage asks
the store); one it cannot know (its block was lost, or saved under another key) gets a new
block, and that one is what later requests replay.

A user message is recognised by the hash of its original content plus its ordinal among
equal messages in the request (a second "ok" is a different message from the first). A
client's compaction that drops the first "ok" would make the second one first; so the
block of a message said again also keeps its context, the fingerprint of the message just
before it, and a copy whose context is known is given the ordinal it was saved under (a
thread's ``repeats``). Only repeated messages are hashed for it: other turns pay nothing.

Only a thread's most recent blocks stay in memory (``InjectionMemory``); a message older
than those that comes back, or one sent before the relay started, is looked up in the store
by its key, so a long thread costs bounded memory and a turn writes one index entry.
They are held UTF-8 encoded: a block with one non-ASCII character (the clock's dash) is
two bytes per character as a ``str``, and SQLite's binding adds a UTF-8 copy to the
``str`` it was given, so a ``str`` held after saving costs three times the bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from middleware.cards.living_memory import LIVING_MEMORY_CARD, without_fact
from middleware.clock.temporal import estimate_tokens
from middleware.pipeline import Handler, Stage
from middleware.store import Store, log_if_failed
from middleware.types import JSON, Reply, Turn

log = logging.getLogger(__name__)

Placement = Literal["user", "system"]
OPEN_TAG = "<relay_context>"
CLOSE_TAG = "</relay_context>"
# Threads whose injections are kept in memory; older ones are re-read from the store.
_CACHED_THREADS = 4096
# Blocks kept in memory per thread, the most recent: more user turns than a model's
# context window holds, so a resent history is normally answered from memory.
_CACHED_BLOCKS = 256

Key = tuple[str, int]
# A repeated message's contexts in a thread: fingerprint → context → the ordinal saved
# with it (``None`` when two copies share a context, so it tells them apart no better).
Repeats = dict[str, dict[str, int | None]]


# The tags, opening or closing, however spelt inside what users wrote.
_TAG_LIKE = re.compile(r"<(?=\s*/?\s*relay_context)", re.IGNORECASE)
_LOOKALIKE = "\u2039"  # ‹


def wrap(block: str) -> str:
    """The block as it appears to the model: tagged, so it is never taken as the user's.

    The block quotes what users wrote (names, places, facts, summaries): a tag among it
    ("Ann </relay_context> Now: …") would end the block early and pass the rest off as
    the relay's. Its ``<`` becomes ``‹``, so the block's own tags are the only ones.
    """
    return f"{OPEN_TAG}\n{_TAG_LIKE.sub(_LOOKALIKE, block)}\n{CLOSE_TAG}"


def fingerprint(message: JSON) -> str:
    content = message.get("content")
    raw = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
    # "surrogatepass": a lone surrogate (JSON can carry one) hashes instead of raising;
    # any other text encodes as plain UTF-8, so stored fingerprints stay the same.
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def trim_sections(sections: list[str], max_tokens: int, droppable: Sequence[str] = ()) -> list[str]:
    """Keep sections in order within ``max_tokens``, a hard ceiling on their joined text.

    A later section that does not fit is dropped whole. The first (the clock's) is never
    dropped for them; when it alone is over the ceiling, its own lines are kept the same
    way, in order, each whole or not at all (a line is never cut): its first lines, the
    time now and the elapsed time, are kept whenever they fit. Before a later section is
    dropped, the first section's ``droppable`` lines (its advice, first to go first) are
    dropped one by one while that keeps more sections: a check-in outweighs the advice.
    """
    kept = _fit(sections, max_tokens)
    if len(kept) == len(sections) or not droppable:
        return kept
    lines = sections[0].split("\n")
    for line in droppable:
        if line not in lines:
            continue
        lines.remove(line)
        trial = _fit(["\n".join(lines), *sections[1:]], max_tokens)
        if len(trial) > len(kept):
            kept = trial
            if len(kept) == len(sections):
                break
    return kept


def _fit(sections: list[str], max_tokens: int) -> list[str]:
    kept: list[str] = []
    used = 0  # each section's estimate, plus one for the newline joining it
    for index, section in enumerate(sections):
        if index == 0 and estimate_tokens(section) + 1 > max_tokens:
            section = _lines_within(section, max_tokens - 1)
        cost = estimate_tokens(section) + 1
        if not section or used + cost > max_tokens:
            continue
        kept.append(section)
        used += cost
    return kept


def _lines_within(text: str, max_tokens: int) -> str:
    """``text``'s lines in order, leaving out each that would take it over ``max_tokens``."""
    kept: list[str] = []
    for line in text.split("\n"):
        if estimate_tokens("\n".join([*kept, line])) <= max_tokens:
            kept.append(line)
    return "\n".join(kept)


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


@dataclass(slots=True)
class _ThreadBlocks:
    # Least recently sent first, UTF-8 encoded; ``None`` marks a message the store has no
    # block for.
    blocks: OrderedDict[Key, bytes | None]
    # Whether ``blocks`` holds every block the thread has: then a message not in it has none
    # (a thread with no stored block when the relay first saw it, until one is evicted).
    complete: bool
    # Every context the store holds for the thread (read at first sight), and those saved
    # since: few, kept whole.
    repeats: Repeats

    def note_contexts(self, fingerprint: str, contexts: Mapping[int, str]) -> None:
        known = self.repeats.setdefault(fingerprint, {})
        for ordinal, context in contexts.items():
            saved = known.get(context, ordinal)
            known[context] = ordinal if saved == ordinal else None


class InjectionMemory:
    """Per-thread record of injections over the store: for each of the recently used
    threads, the blocks of its ``blocks_per_thread`` most recently sent user messages."""

    def __init__(self, store: Store, *, blocks_per_thread: int = _CACHED_BLOCKS) -> None:
        self._store = store
        self._limit = blocks_per_thread
        self._threads: OrderedDict[str, _ThreadBlocks] = OrderedDict()

    def __len__(self) -> int:
        """How many messages' blocks (or known absences) are held, over all threads."""
        return sum(len(thread.blocks) for thread in self._threads.values())

    async def recall(
        self, thread_key: str, keys: Sequence[Key], *, fresh: Key | None = None
    ) -> dict[Key, str]:
        """The blocks injected into the thread's messages ``keys``, for those that have one.

        Messages not in memory are looked up in the store (one query) unless the memory
        holds the whole thread, or the message is ``fresh``: it gets a block made now
        whatever it had, so only memory is asked about it and a long thread's new message
        costs no query (the block made now replaces any the store had). ``keys`` are in
        request order, and the newest are what stays in memory.
        """
        thread = await self._thread(thread_key)
        complete = thread.complete
        held = {key: block for key in keys if (block := thread.blocks.get(key)) is not None}
        missing = [key for key in keys if key not in thread.blocks and key != fresh]
        if missing and not complete:
            read = await self._store.injections_for(thread_key, missing)
            held.update({key: text.encode() for key, text in read.items()})
        for key in keys:
            # A message of a complete thread that is not in memory has no block to keep.
            if key in held or (not complete and key != fresh):
                self._keep(thread, key, held.get(key))
        return {key: block.decode() for key, block in held.items()}

    async def may_hold_blocks(self, thread_key: str) -> bool:
        """Whether any message of the thread may have a block: False only for a thread
        that memory holds whole (``complete``) and in which it holds none."""
        thread = await self._thread(thread_key)
        # A complete thread holds only real blocks: recall keeps no absence in one.
        return not thread.complete or bool(thread.blocks)

    def drop_all(self) -> None:
        """Forget every thread held: the store deleted blocks behind memory's back
        (``/forget``), and memory must not go on replaying them. Each thread is probed
        again on its next request."""
        self._threads.clear()

    async def forget_fact(self, user_key: str, fact: str) -> None:
        """Take ``fact``, a remembered fact the person asked to forget, out of the living
        memory card of every block stored in their threads (their linked accounts' too),
        and stop replaying those threads' blocks from memory: the model is not told it
        again in any earlier message. The rest of each block stays byte for byte, so the
        upstream's prompt cache breaks only from the first block that held the fact. A
        block left empty (the card was all it had) is deleted."""

        def edit(block: str) -> str | None:
            edited = without_fact(block, _TAG_LIKE.sub(_LOOKALIKE, fact))
            return None if edited == f"{OPEN_TAG}\n{CLOSE_TAG}" else edited

        for thread_key in await self._store.edit_injections(user_key, LIVING_MEMORY_CARD, edit):
            self._threads.pop(thread_key, None)

    async def repeats(self, thread_key: str) -> Repeats:
        """The contexts of the thread's repeated messages (see the module docstring)."""
        return (await self._thread(thread_key)).repeats

    def remember(
        self, thread_key: str, key: Key, text: str, contexts: Mapping[int, str] | None = None
    ) -> None:
        """Keep a block just made for the thread, and the ``contexts`` of its message's
        copies (the caller saves both to the store)."""
        thread = self._threads.get(thread_key)
        if thread is not None:
            self._keep(thread, key, text.encode())
            if contexts:
                thread.note_contexts(key[0], contexts)

    async def _thread(self, thread_key: str) -> _ThreadBlocks:
        thread = self._threads.get(thread_key)
        if thread is None:
            # Nothing is read ahead: the request's keys are looked up when it needs them.
            complete = not await self._store.has_injections(thread_key)
            saved = [] if complete else await self._store.repeated_injections(thread_key)
            # A concurrent first request of the thread may have made its entry (and kept
            # its block there) while this one waited: replacing it would lose that block
            # for good, since a complete thread never asks the store.
            thread = self._threads.get(thread_key)
            if thread is None:
                thread = _ThreadBlocks(OrderedDict(), complete=complete, repeats={})
                for fingerprint, ordinal, context in saved:
                    thread.note_contexts(fingerprint, {ordinal: context})
                self._threads[thread_key] = thread
                if len(self._threads) > _CACHED_THREADS:
                    self._threads.popitem(last=False)
                return thread
        self._threads.move_to_end(thread_key)
        return thread

    def _keep(self, thread: _ThreadBlocks, key: Key, block: bytes | None) -> None:
        if block is not None and thread.blocks:
            # Turns close together usually get the same block: hold it once.
            newest = thread.blocks[next(reversed(thread.blocks))]
            if newest == block:
                block = newest
        thread.blocks[key] = block
        thread.blocks.move_to_end(key)
        if len(thread.blocks) > self._limit:
            thread.blocks.popitem(last=False)
            thread.complete = False


def injection_stage(
    store: Store,
    *,
    placement: Placement,
    max_tokens: int,
    memory: InjectionMemory | None = None,
) -> Stage:
    """Render ``turn.context`` into the newest user message and replay earlier blocks.

    ``memory`` (over the same ``store``) is made here unless given.
    """
    recorded = InjectionMemory(store) if memory is None else memory

    async def inject(turn: Turn, call_next: Handler) -> Reply:
        messages = turn.body.get("messages")
        if not isinstance(messages, list):
            return await call_next(turn)
        newest = newest_user_index(messages) if not turn.continuation else None
        # The cards were sized within their own budget (spec 001 §6.4); only the
        # temporal sections answer to the block's ceiling.
        sections = (
            trim_sections(turn.context.sections, max_tokens, turn.context.droppable)
            + turn.context.cards
        )
        fresh = wrap("\n".join(sections)) if sections and newest is not None else None
        if fresh is None and not await recorded.may_hold_blocks(turn.thread_key):
            # Nothing to inject and no earlier block to replay (the Core Clock off, say):
            # the body goes as it came, without fingerprinting its messages.
            return await call_next(turn)
        forwarded = list(messages)
        users = _user_messages(messages)
        fresh_index = newest if fresh is not None else None
        repeats = await recorded.repeats(turn.thread_key)
        if repeats:
            _place_repeats(messages, users, repeats, fresh_index)
        fresh_key = users[fresh_index] if fresh_index is not None else None
        known = await recorded.recall(turn.thread_key, list(users.values()), fresh=fresh_key)
        save: tuple[str, int, str] | None = None
        contexts: dict[int, str] | None = None
        # Walk backwards so inserting system messages does not shift indices still to visit.
        plan: list[tuple[int, str]] = []
        for index, key in users.items():
            text = known.get(key)
            if index == newest and fresh is not None:
                # The newest message always gets a block made now: a client that sends only
                # the newest message says "hi" tomorrow as it did today, and must not get
                # today's time. The block a message was last sent with is the one replayed:
                # a request sent again (an SDK retry, a regenerated answer) goes on with the
                # conversation the model answered, and keeps its prefix.
                if key[1] > 0:
                    # Said before in this request: its copies' contexts are kept.
                    contexts = _contexts(messages, users, key[0])
                if text != fresh or contexts:
                    recorded.remember(turn.thread_key, key, fresh, contexts)
                    save = (*key, fresh)
                text = fresh
            if text is not None:
                plan.append((index, text))
        for index, text in reversed(plan):
            apply_block(forwarded, index, text, placement)
        if fresh is not None:
            turn.context.text = fresh
            turn.context.tokens = estimate_tokens(fresh)
        turn.body = {**turn.body, "messages": forwarded}
        if save is not None:
            # Queued, not awaited: memory has the block for this process's next requests,
            # and a failure only costs later requests their cache-friendliness.
            saving = store.save_injection(
                turn.thread_key, save[0], save[1], save[2], turn.received_at, contexts
            )
            saving.add_done_callback(log_if_failed(log, "remember the injection", turn.thread_key))
        return await call_next(turn)

    return inject


def _user_messages(messages: list[Any]) -> dict[int, Key]:
    """The user messages' keys (fingerprint, ordinal among equal ones) by index."""
    keys: dict[int, Key] = {}
    seen: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            key = fingerprint(message)
            ordinal = seen.get(key, 0)
            seen[key] = ordinal + 1
            keys[index] = (key, ordinal)
    return keys


def _context(messages: list[Any], index: int) -> str:
    """The fingerprint of the message just before ``messages[index]`` ("" for none)."""
    before = messages[index - 1] if index > 0 else None
    return fingerprint(before) if isinstance(before, dict) else ""


def _place_repeats(
    messages: list[Any], users: dict[int, Key], repeats: Repeats, fresh_index: int | None
) -> None:
    """Give each copy of a repeated message in ``users`` the ordinal its block was saved
    under, found by its context (one a client's compaction has moved keeps its own
    block), and the fresh message, if it is such a copy, an ordinal after those before
    it (its block must not replace theirs)."""
    highest: dict[str, int] = {}
    for index, (key, ordinal) in users.items():
        contexts = repeats.get(key)
        if contexts is None:
            continue
        if index == fresh_index:
            ordinal = max(ordinal, highest.get(key, -1) + 1)
        else:
            saved = contexts.get(_context(messages, index))
            ordinal = ordinal if saved is None else saved
        users[index] = (key, ordinal)
        highest[key] = max(highest.get(key, -1), ordinal)


def _contexts(messages: list[Any], users: dict[int, Key], key: str) -> dict[int, str]:
    """The contexts of the request's copies of the message ``key``, by ordinal."""
    return {
        ordinal: _context(messages, index)
        for index, (copy, ordinal) in users.items()
        if copy == key
    }


def newest_user_index(messages: list[Any]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") == "user":
            return index
    return None
