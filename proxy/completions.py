"""Answers the relay writes itself (the ``inspect`` upstream, chat commands), shaped as an
OpenAI-compatible upstream would send them: one ``chat.completion`` body, or the
``chat.completion.chunk`` events of a stream (``[DONE]`` and the usage chunk included)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator

from middleware.types import JSON, ReplyStream

ZERO_USAGE: JSON = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def completion_body(envelope: JSON, content: str) -> bytes:
    """A whole ``chat.completion``; ``envelope`` holds its ``id``, ``created`` and ``model``."""
    completion = {
        **envelope,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": ZERO_USAGE,
    }
    return json.dumps(completion).encode()


def completion_events(envelope: JSON, content: str, *, include_usage: bool) -> Iterator[bytes]:
    """The SSE events of the same answer streamed: role, content, finish, then the usage
    chunk when the client asked for it (``stream_options.include_usage``) and ``[DONE]``."""
    chunk = {**envelope, "object": "chat.completion.chunk"}
    deltas: list[JSON] = [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None},
        {"index": 0, "delta": {"content": content}, "finish_reason": None},
        {"index": 0, "delta": {}, "finish_reason": "stop"},
    ]
    for delta in deltas:
        event = {**chunk, "choices": [delta]}
        if include_usage:
            event["usage"] = None
        yield _event(event)
    if include_usage:
        yield _event({**chunk, "choices": [], "usage": ZERO_USAGE})
    yield b"data: [DONE]\n\n"


def completion_stream(envelope: JSON, content: str, body: JSON) -> ReplyStream:
    """``completion_events`` as the stream of a ``Reply``, for the request ``body``."""
    events = completion_events(envelope, content, include_usage=wants_usage(body))
    return ReplyStream(_each(events), _nothing_to_close)


def wants_usage(body: JSON) -> bool:
    """Whether a streamed answer to ``body`` ends with a usage chunk."""
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def _event(event: JSON) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"


async def _each(events: Iterable[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


def _nothing_to_close() -> None:
    return None
