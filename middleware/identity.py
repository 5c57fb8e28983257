"""Identity resolution: stable ``user_key`` and ``thread_key`` for every turn (spec 000 §7.2).

- ``user_key`` = ``<channel>:<platform user id>`` (channel-scoped unless linked).
- ``thread_key`` = ``agent:<agent_id>:<channel>:<dm|group>:<id>[:topic:<id>]``; the API
  channel has no chat-type segment: ``agent:<agent_id>:api:<thread id>``.
"""

from __future__ import annotations

from middleware.pipeline import Handler, Stage
from middleware.types import Reply, Turn

API_CHANNEL = "api"


def user_key(channel: str, user_id: str) -> str:
    return f"{channel}:{user_id}"


def thread_key(
    agent_id: str, channel: str, chat_type: str, thread_id: str, topic_id: str | None = None
) -> str:
    if channel == API_CHANNEL:
        key = f"agent:{agent_id}:{channel}:{thread_id}"
    else:
        key = f"agent:{agent_id}:{channel}:{chat_type}:{thread_id}"
    return f"{key}:topic:{topic_id}" if topic_id else key


def identity_stage(agent_id: str) -> Stage:
    """Fill ``turn.user_key`` and ``turn.thread_key`` from the channel's ids."""

    async def identity(turn: Turn, call_next: Handler) -> Reply:
        turn.user_key = user_key(turn.channel, turn.user_id)
        turn.thread_key = thread_key(
            agent_id, turn.channel, turn.chat_type, turn.thread_id, turn.topic_id
        )
        return await call_next(turn)

    return identity
