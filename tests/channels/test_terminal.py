"""The terminal channel is a real channel: keys, transcript history, replies."""

from __future__ import annotations

import io
import json
from pathlib import Path

from channels.terminal import TerminalChannel
from proxy.config import Config
from proxy.services import open_services


async def test_chat_lines_go_through_the_pipeline_with_history(tmp_path: Path) -> None:
    config = Config.model_validate(
        {"store": {"path": str(tmp_path / "s.sqlite3")}, "upstream": {"mode": "inspect"}}
    )
    lines = iter(["hello", "", "second line", "/quit", "never read"])
    out = io.StringIO()
    async with open_services(config) as services:
        channel = TerminalChannel(services, user_id="ana", read_line=lambda: next(lines), out=out)
        await channel.run()
        transcript = await services.store.transcript("agent:main:terminal:dm:local")
        user = await services.store.get_user("terminal:ana")
    printed = out.getvalue()
    assert "you are terminal:ana" in printed
    replies = [line for line in printed.splitlines() if line.startswith("bot> ")]
    assert len(replies) == 2
    # The inspect upstream shows what was forwarded: the second turn carries the first.
    assert [m.role for m in transcript] == ["user", "assistant", "user", "assistant"]
    first_request = json.loads(transcript[1].text)
    second_request = json.loads(transcript[3].text)
    # The history is replayed exactly as it was forwarded the first time (block included).
    assert second_request[0] == first_request[0]
    assert first_request[0]["content"].startswith("hello\n\n<relay_context>")
    assert second_request[-1]["content"].startswith("second line\n\n<relay_context>")
    assert user is not None
