"""A recording OpenAI-compatible upstream: a real aiohttp server on loopback.

It records every request (body and headers) and answers like an OpenAI endpoint.
Tests steer it with a queue of scripted failures, a delay, or a stream that holds.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

RELAY_BLOCK = "\n\n<relay_context>"


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Scripted:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeUpstream:
    """Answers ``/v1/chat/completions`` and ``/v1/models``; records what it receives."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._recorded = asyncio.Condition()
        self.failures: list[Scripted] = []
        self.delay = 0.0
        # Seconds between streamed events, so a client reads them one at a time.
        self.event_delay = 0.0
        self.hold_stream = False
        # When False, a stream ends without ``data: [DONE]`` (some OpenAI-compatible
        # servers just close it after the finish_reason chunk).
        self.send_done = True
        # When set, answers are compressed with whatever the request's Accept-Encoding
        # allows, as many real endpoints (and the CDNs in front of them) do.
        self.compress = False
        # Added to every successful answer (e.g. a Set-Cookie, as CDNs send).
        self.answer_headers: dict[str, str] = {}
        # When set, the assistant says this instead of echoing.
        self.reply_content: str | None = None
        # The answer to continuity capture passes (recognised by their system prompt);
        # None answers them like any other request.
        self.synthesis_reply: str | None = None
        self.synthesis_delay = 0.0
        # When set, capture passes wait for this event before being answered.
        self.synthesis_gate: asyncio.Event | None = None
        self.synthesis_seen = asyncio.Event()
        self.stream_cancelled = asyncio.Event()
        self.request_cancelled = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        # As a real endpoint does, it takes bodies larger than aiohttp's default 1 MiB.
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    async def wait_for_requests(self, count: int, within: float = 5.0) -> None:
        """Wait until at least ``count`` requests were received (and recorded)."""
        async with asyncio.timeout(within), self._recorded:
            await self._recorded.wait_for(lambda: len(self.requests) >= count)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model"}]})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._answer(request)
        except asyncio.CancelledError:
            # Wherever the client went away: reading the body, waiting, answering.
            self.request_cancelled.set()
            raise

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(Recorded(request.path, dict(request.headers), body))
        async with self._recorded:
            self._recorded.notify_all()
        if self.failures:
            failure = self.failures.pop(0)
            return web.json_response(failure.body, status=failure.status, headers=failure.headers)
        if self.delay:
            await asyncio.sleep(self.delay)
        if is_synthesis(body):
            self.synthesis_seen.set()
        if self.synthesis_reply is not None and is_synthesis(body):
            await asyncio.sleep(self.synthesis_delay)
            if self.synthesis_gate is not None:
                await self.synthesis_gate.wait()
            body = {**body, "messages": [*body["messages"], _say(self.synthesis_reply)]}
        elif self.reply_content is not None:
            body = {**body, "messages": [*body["messages"], _say(self.reply_content)]}
        if body.get("stream"):
            return await self._stream(request, body)
        answer = web.json_response(completion(body), headers=self.answer_headers)
        if self.compress:
            answer.enable_compression()
        return answer

    async def _stream(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", **self.answer_headers}
        )
        if self.compress:
            response.enable_compression()
        await response.prepare(request)
        try:
            async for event in stream_events(body):
                if event.startswith(b"data: [DONE]") and not self.send_done:
                    continue
                await response.write(event)
                if self.event_delay:
                    await asyncio.sleep(self.event_delay)
                if self.hold_stream:
                    await asyncio.sleep(30)
        except (asyncio.CancelledError, ConnectionResetError):
            self.stream_cancelled.set()
            raise
        await response.write_eof()
        return response


def is_synthesis(body: dict[str, Any]) -> bool:
    """Whether ``body`` is a continuity capture pass rather than a chat turn."""
    first = (body.get("messages") or [{}])[0]
    return first.get("role") == "system" and str(first.get("content", "")).startswith(
        "You are reviewing a conversation to capture"
    )


def _say(text: str) -> dict[str, Any]:
    return {"role": "fake-says", "content": text}


def reply_text(body: dict[str, Any]) -> str:
    last = body["messages"][-1]
    if last.get("role") == "fake-says":
        return str(last["content"])
    content = last.get("content")
    if last.get("role") == "tool":
        return f"tool said: {content}"
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    # Echo what the user wrote, not the relay's block (tests of the block read the body).
    return f"echo: {str(content).split(RELAY_BLOCK)[0]}"


def _tool_call(body: dict[str, Any]) -> dict[str, Any] | None:
    if not body.get("tools") or body["messages"][-1].get("role") == "tool":
        return None
    name = body["tools"][0]["function"]["name"]
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": '{"city": "Tokyo"}'},
    }


def completion(body: dict[str, Any]) -> dict[str, Any]:
    call = _tool_call(body)
    message: dict[str, Any] = {"role": "assistant", "content": None if call else reply_text(body)}
    if call:
        message["tool_calls"] = [call]
    finish = "tool_calls" if call else "stop"
    choices = [{"index": 0, "message": message, "finish_reason": finish}]
    for index, text in _alternatives(body):
        choices.append({"index": index, "message": _said(text), "finish_reason": "stop"})
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_790_000_000,
        "model": body.get("model", "fake-model"),
        "choices": choices,
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


async def stream_events(body: dict[str, Any]) -> AsyncIterator[bytes]:
    base = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_790_000_000,
        "model": body.get("model", "fake-model"),
    }
    call = _tool_call(body)
    deltas: list[dict[str, Any]]
    if call:
        fn = call["function"]
        deltas = [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ],
            },
            {"tool_calls": [{"index": 0, "function": {"arguments": fn["arguments"]}}]},
        ]
        finish = "tool_calls"
    else:
        words = reply_text(body).split(" ")
        deltas = [{"role": "assistant", "content": ""}]
        deltas += [{"content": w if i == 0 else " " + w} for i, w in enumerate(words)]
        finish = "stop"
    alternatives = _alternatives(body)
    for position, delta in enumerate(deltas):
        yield _event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        # The other answers' chunks come interleaved with the first's, as OpenAI sends them.
        for index, text in alternatives:
            if position == 0:
                other: dict[str, Any] = {"role": "assistant", "content": text}
                yield _event({**base, "choices": [{"index": index, "delta": other}]})
    yield _event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    for index, _ in alternatives:
        stop = {"index": index, "delta": {}, "finish_reason": "stop"}
        yield _event({**base, "choices": [stop]})
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        yield _event({**base, "choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"


def _alternatives(body: dict[str, Any]) -> list[tuple[int, str]]:
    """The answers after the first a request with ``n`` > 1 asked for, by index."""
    n = body.get("n")
    count = n if isinstance(n, int) and n > 1 else 1
    return [(index, f"alternative {index}") for index in range(1, count)]


def _said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"
