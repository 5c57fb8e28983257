"""Conversation history for channels where the relay, not an agent, owns the conversation.

The forwarded body is the persona (``[channels] persona``) as a system message, then the
thread's stored messages from its *history start*, then the new message. In groups every
user message names its speaker: ``[Ana] see you at 9``, by the name stored with the
message (``Store.speaker_label``): a member whose name another member of the group already
went by is ``[Alex (telegram:51)]`` from then on, and neither that nor a rename ever changes
what earlier messages say. A command the relay answered
itself ("/time") and its answer are no part of it, from the first turn after them on: the
model took no part in them, and its block's "Last message here" leaves them out too.

The history is not a sliding window: a window that drops one old message per turn changes
the forwarded prefix every turn, and the upstream's prompt cache never hits. Instead the
history grows from a stored start until it (plus the new message) passes the budget
(``[channels] history_tokens``, or the channel's ``history_messages`` count); then the
relay *compacts*: it moves the start forward, whole oldest messages at a time, until about
half the budget remains, stores the new start and sets ``Turn.compacted``. Between two
compactions the forwarded prefix stays byte-for-byte the same.

The budget counts the messages' own text (``estimate_tokens``); the relay's context blocks
replayed into earlier user messages come on top (at most ``[clock] max_block_tokens`` each).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from middleware.clock.temporal import estimate_tokens
from middleware.identity import display_label, thread_key, user_key
from middleware.store import Store, StoredMessage
from middleware.types import JSON, ChatType, Turn

if TYPE_CHECKING:
    from proxy.services import Services

# Role, separators and framing each message costs beyond its text, in estimated tokens.
MESSAGE_OVERHEAD = 4
_UNSAFE_IN_NAME = re.compile(r"[\[\]\s]+")


@dataclass(frozen=True, slots=True)
class HistoryBudget:
    """How much earlier conversation may be forwarded with a new message."""

    # At most this many earlier messages.
    messages: int
    # Estimated tokens of the earlier messages plus the new one.
    tokens: int


@dataclass(frozen=True, slots=True)
class History:
    """The earlier messages to forward, and whether choosing them moved the start."""

    messages: list[StoredMessage]
    compacted: bool


def speaker_label(name: str) -> str:
    """``name`` as it goes between brackets: one line, no brackets of its own."""
    return _UNSAFE_IN_NAME.sub(" ", name).strip() or "someone"


def user_content(chat_type: ChatType, speaker: str | None, text: str) -> str:
    """A user message as forwarded: prefixed with ``[speaker]`` in groups, as is in DMs."""
    if chat_type != "group":
        return text
    return f"[{speaker_label(speaker or '')}] {text}"


def forwarded(message: StoredMessage, chat_type: ChatType) -> JSON:
    """A stored message as a chat-completions message."""
    if message.role != "user":
        return {"role": message.role, "content": message.text}
    speaker = message.speaker_name
    if speaker is None and message.user_key:
        # A nameless user is named by their platform id ("telegram:42" → "42").
        speaker = message.user_key.partition(":")[2] or message.user_key
    return {"role": "user", "content": user_content(chat_type, speaker, message.text)}


def message_tokens(message: JSON) -> int:
    content = message.get("content")
    return estimate_tokens(content if isinstance(content, str) else "") + MESSAGE_OVERHEAD


def compaction_cut(
    costs: Sequence[int], roles: Sequence[str], new_cost: int, budget: HistoryBudget
) -> int:
    """The index of the first message to keep when compacting.

    Keeps the newest messages whose cost, with the new message's, fits half the token
    budget, and at most half the message cap; then moves forward to a user message, so the
    kept history never opens with a reply whose question was dropped. ``len(costs)``
    means keep nothing.
    """
    tokens_left = budget.tokens // 2 - new_cost
    count_left = budget.messages // 2
    cut = len(costs)
    while cut > 0 and count_left > 0 and costs[cut - 1] <= tokens_left:
        cut -= 1
        tokens_left -= costs[cut]
        count_left -= 1
    while cut < len(roles) and roles[cut] != "user":
        cut += 1
    return cut


async def load_history(
    store: Store, key: str, chat_type: ChatType, new_cost: int, budget: HistoryBudget
) -> History:
    """The thread's history to forward before a new message costing ``new_cost`` tokens,
    compacting (and storing the new start) when it no longer fits ``budget``."""
    if budget.messages <= 0:
        return History([], compacted=False)
    start = await store.history_start(key)
    # One more than the cap, to see whether the cap is passed.
    stored = await store.transcript_from(key, start, budget.messages + 1)
    costs = [message_tokens(forwarded(m, chat_type)) for m in stored]
    if len(stored) <= budget.messages and sum(costs) + new_cost <= budget.tokens:
        return History(stored, compacted=False)
    cut = compaction_cut(costs, [m.role for m in stored], new_cost, budget)
    # Keeping nothing starts after the newest message: ids only grow.
    first_id = stored[cut].id if cut < len(stored) else stored[-1].id + 1
    await store.set_history_start(key, first_id)
    return History(stored[cut:], compacted=True)


async def conversation_body(services: Services, turn: Turn, history_limit: int) -> JSON:
    """The chat-completions body for ``turn`` in a channel where the relay owns the
    conversation: persona, history from its start (at most ``history_limit`` messages and
    ``[channels] history_tokens``), then the new message. Sets ``turn.compacted`` when the
    history start moved on this turn.

    The injection stage recognises the earlier user messages and replays their blocks, so
    between compactions the forwarded conversation only grows at its end.
    """
    config = services.config
    key = thread_key(
        config.server.agent_id, turn.channel, turn.chat_type, turn.thread_id, turn.topic_id
    )
    # The name as the identity stage stores it; in a group, the label the message will
    # be stored with, so the next turns forward it unchanged.
    speaker = display_label(turn.display_name)
    if turn.chat_type == "group":
        speaker = await services.store.speaker_label(
            key, turn.chat_type, user_key(turn.channel, turn.user_id), speaker
        )
    new: JSON = {
        "role": "user",
        "content": user_content(turn.chat_type, speaker or turn.user_id, turn.text),
    }
    budget = HistoryBudget(messages=history_limit, tokens=config.channels.history_tokens)
    history = await load_history(services.store, key, turn.chat_type, message_tokens(new), budget)
    turn.compacted = turn.compacted or history.compacted
    messages: list[JSON] = []
    if config.channels.persona:
        messages.append({"role": "system", "content": config.channels.persona})
    messages.extend(forwarded(m, turn.chat_type) for m in history.messages)
    messages.append(new)
    return {"model": config.upstream.model, "messages": messages}
