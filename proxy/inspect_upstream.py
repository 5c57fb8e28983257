"""The ``inspect`` upstream: answers with the exact messages that would have been forwarded.

It lets a fresh machine with no LLM see what the relay does, and behaves like a real
OpenAI-compatible endpoint (same response shapes, streaming included).
"""

from __future__ import annotations

import json

from middleware.clock.source import Clock
from middleware.types import JSON, VERBATIM, Reply
from proxy.completions import completion_body, completion_stream

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
        created = int(self._clock.now().timestamp())
        envelope = {
            "id": f"chatcmpl-inspect-{created}",
            "created": created,
            "model": str(body.get("model") or self._model),
        }
        if not body.get("stream"):
            return Reply(text=content, body=completion_body(envelope, content), meta=INSPECTED)
        return Reply(stream=completion_stream(envelope, content, body), meta=INSPECTED)
