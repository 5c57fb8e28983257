"""The ``inspect`` upstream: answers with the exact messages that would have been forwarded.

It lets a fresh machine with no LLM see what the relay does, and behaves like a real
OpenAI-compatible endpoint (same response shapes, streaming included).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from middleware.clock.source import Clock
from middleware.types import JSON, VERBATIM, Reply, ReplyStream

# The prompt is shown as it would be forwarded: its <time …> examples stay unrendered.
INSPECTED = {VERBATIM: "inspect"}


class InspectUpstream:
    """An in-process upstream whose answer is the forwarded ``messages`` as JSON."""

    def __init__(self, clock: Clock, model: str = "chronorelay-inspect") -> None:
        self._clock = clock
        self._model = model

    async def ready(self) -> bool:
        return True

    async def close(self) -> None:
        return None

    async def complete(self, body: JSON) -> Reply:
        content = json.dumps(body.get("messages", []), indent=2, ensure_ascii=False)
        model = str(body.get("model") or self._model)
        created = int(self._clock.now().timestamp())
        base = {"id": f"chatcmpl-inspect-{created}", "created": created, "model": model}
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        if not body.get("stream"):
            completion = {
                **base,
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
            return Reply(text=content, body=json.dumps(completion).encode(), meta=INSPECTED)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        stream = ReplyStream(_sse(base, content, usage, include_usage), _noop)
        return Reply(stream=stream, meta=INSPECTED)


async def _sse(base: JSON, content: str, usage: JSON, include_usage: bool) -> AsyncIterator[bytes]:
    chunk = {**base, "object": "chat.completion.chunk"}
    deltas: list[JSON] = [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None},
        {"index": 0, "delta": {"content": content}, "finish_reason": None},
        {"index": 0, "delta": {}, "finish_reason": "stop"},
    ]
    for delta in deltas:
        event = {**chunk, "choices": [delta]}
        if include_usage:
            event["usage"] = None
        yield b"data: " + json.dumps(event).encode() + b"\n\n"
    if include_usage:
        yield b"data: " + json.dumps({**chunk, "choices": [], "usage": usage}).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def _noop() -> None:
    return None
