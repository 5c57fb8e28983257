"""Notices: news for a user, delivered with their next answered message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from middleware.errors import UpstreamUnavailable
from middleware.notices import Notices, notices_stage
from middleware.types import Reply, Turn

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def turn() -> Turn:
    made = Turn(channel="api", thread_id="t1", user_id="ana", text="hi", received_at=NOW, body={})
    made.user_key = "api:ana"
    return made


async def test_a_notice_the_model_never_heard_waits_for_the_next_message() -> None:
    notices = Notices()
    notices.add("api:ana", "Your account is now linked to telegram:8.")
    deliver = notices_stage(notices)

    async def unreachable(turn: Turn) -> Reply:
        raise UpstreamUnavailable("cannot reach the upstream")

    with pytest.raises(UpstreamUnavailable):
        await deliver(turn(), unreachable)

    told: list[str] = []

    async def answered(turn: Turn) -> Reply:
        told.extend(turn.context.sections)
        return Reply(text="ok")

    await deliver(turn(), answered)
    [section] = told
    assert "now linked to telegram:8" in section
    assert not notices.waiting_for("api:ana")  # heard once: not told again
