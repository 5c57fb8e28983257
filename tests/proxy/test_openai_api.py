"""The edge's own handling of a streamed reply, seen at the socket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from unittest import mock

from aiohttp import web
from aiohttp.http_writer import StreamWriter
from aiohttp.test_utils import make_mocked_request

from middleware.types import ReplyStream
from proxy.openai_api import _stream_out, last_user_text
from proxy.server import SHUTDOWN_DEADLINE, ShutdownDeadline

EVENTS = [b'data: {"choices": []}\n\n', b"data: [DONE]\n\n"]


class _Transport:
    """Records each write the response makes on the client's connection."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def writelines(self, lines: list[bytes]) -> None:
        self.writes.append(b"".join(lines))

    def is_closing(self) -> bool:
        return False


async def _events() -> AsyncIterator[bytes]:
    for event in EVENTS:
        yield event


async def test_stream_headers_leave_with_the_first_chunk() -> None:
    transport = _Transport()
    protocol = mock.Mock(transport=transport, _paused=False)
    writer = StreamWriter(protocol, asyncio.get_running_loop())
    app = web.Application()
    app[SHUTDOWN_DEADLINE] = ShutdownDeadline()
    request = make_mocked_request("POST", "/v1/chat/completions", writer=writer, app=app)

    await _stream_out(request, ReplyStream(_events(), lambda: None), {"X-Test": "1"})

    first = transport.writes[0]
    assert first.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Type: text/event-stream\r\n" in first
    assert first.endswith(EVENTS[0] + b"\r\n")  # chunked: the first event, in one send
    assert b"".join(transport.writes).endswith(EVENTS[1] + b"\r\n0\r\n\r\n")


def test_a_file_part_is_named_by_its_first_60_characters_on_one_line() -> None:
    name = "quarterly\nreport   " + "x" * 70 + ".pdf"
    parts = [
        {"type": "text", "text": "see attached"},
        {"type": "file", "file": {"filename": name}},
        {"type": "file", "file": {"filename": "  "}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
    ]
    text = last_user_text([{"role": "user", "content": parts}])
    assert text == "see attached\n[file quarterly report " + "x" * 43 + "]\n[file]\n[image]"
