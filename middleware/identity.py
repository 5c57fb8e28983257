"""Identity resolution: stable ``user_key`` and ``thread_key`` for every turn (spec 000 §7.2).

- ``user_key`` = ``<channel>:<platform user id>`` (channel-scoped unless linked).
- ``thread_key`` = ``agent:<agent_id>:<channel>:<dm|group>:<id>[:topic:<id>]``; the API
  channel has no chat-type segment: ``agent:<agent_id>:api:<thread id>``.
"""

from __future__ import annotations

import re

from middleware.pipeline import Handler, Stage
from middleware.types import ChatType, Reply, Turn

API_CHANNEL = "api"
_CHANNEL = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# Line breaks, tabs and other control characters in a display name.
_NAME_BREAKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")
DISPLAY_NAME_MAX = 100


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


def split_user_key(key: str) -> tuple[str, str]:
    """``(channel, platform user id)`` of a user key.

    Raises ``ValueError`` saying what a user key looks like when ``key`` is not one.
    """
    channel, sep, user_id = key.partition(":")
    if not sep or not _CHANNEL.match(channel) or not user_id or user_id.strip() != user_id:
        raise ValueError(
            f"{key!r} is not a user key; user keys look like '<channel>:<platform user id>', "
            "e.g. 'telegram:123456'"
        )
    return channel, user_id


def thread_channel(key: str) -> tuple[str, ChatType]:
    """The channel and chat type a thread key names (``agent:<agent>:<channel>:...``).

    A key with a ``:group:`` segment is a group; anything else (API threads included) is a
    DM. Raises ``ValueError`` saying what a thread key looks like when ``key`` is not one.
    """
    parts = key.split(":")
    if len(parts) < 4 or parts[0] != "agent" or not parts[1] or not _CHANNEL.match(parts[2]):
        raise ValueError(
            f"{key!r} is not a thread key; thread keys look like "
            "'agent:<agent id>:<channel>:<dm|group>:<id>' or 'agent:<agent id>:api:<id>'"
        )
    if any(not part for part in parts[3:]):
        raise ValueError(f"{key!r} is not a thread key: it has an empty segment")
    return parts[2], "group" if ":group:" in key else "dm"


def key_chat_type(key: str) -> ChatType | None:
    """The chat type a channel thread key names in its own segment
    (``agent:main:telegram:group:-100`` → ``group``); ``None`` for a key without one, such
    as an API thread's, whose chat type only its messages tell."""
    parts = key.split(":")
    if len(parts) > 4 and parts[2] != API_CHANNEL and parts[3] in ("dm", "group"):
        return "group" if parts[3] == "group" else "dm"
    return None


def display_label(name: str | None) -> str | None:
    """A display name as the block and the stored user show it: one line, its runs of
    spaces, line breaks and control characters made one space, at most
    ``DISPLAY_NAME_MAX`` characters; ``None`` when nothing is left. A name is the user's
    own text, quoted on a line of its own in the block ("Speaker: …"): a line break in it
    would start a line that reads as the relay's."""
    if name is None:
        return None
    label = _NAME_BREAKS.sub(" ", name).strip()
    if len(label) > DISPLAY_NAME_MAX:
        label = label[: DISPLAY_NAME_MAX - 1].rstrip() + "…"
    return label or None


# How people name the relay's channels; another channel is named by its own key.
CHANNEL_NAMES = {"telegram": "Telegram", "discord": "Discord", "api": "API", "terminal": "terminal"}


def channel_name(channel: str) -> str:
    """A channel as a person names it: "Telegram", "API" (not the key's "Api")."""
    return CHANNEL_NAMES.get(channel, channel)


def name_key(name: str | None) -> str | None:
    """What tells two display names apart, or not: Unicode case folding, so "Élodie" and
    "élodie", or "Strauß" and "STRAUSS", are one name to whoever reads them. The one rule
    for namesakes: the block's list (``member_labels``) and the store's SQL (its
    ``name_key`` function, ``sqlite_functions``) both call it."""
    return None if name is None else name.casefold()


def identity_stage(agent_id: str) -> Stage:
    """Fill ``turn.user_key`` and ``turn.thread_key`` from the channel's ids, and make the
    display name one line (``display_label``)."""

    async def identity(turn: Turn, call_next: Handler) -> Reply:
        turn.user_key = user_key(turn.channel, turn.user_id)
        if turn.display_name is not None:
            turn.display_name = display_label(turn.display_name)
        turn.thread_key = thread_key(
            agent_id, turn.channel, turn.chat_type, turn.thread_id, turn.topic_id
        )
        return await call_next(turn)

    return identity
