"""What chat users are told when the upstream refuses a request; what media is recorded as."""

from __future__ import annotations

from typing import get_args

import pytest

from channels.base import MediaKind, media_only_text, refusal_text, unanswered_text
from middleware.actions.detect import (
    detect_duration_report,
    detect_status_update,
    detect_temporal_action,
)
from middleware.continuity.extract import (
    ExtractTurn,
    extract_key_decisions,
    extract_open_questions,
)
from middleware.errors import (
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from middleware.memory.triggers import detect_memory


@pytest.mark.parametrize(
    ("status", "body", "retry_after", "told"),
    [
        (
            429,
            b'{"error": {"message": "Rate limit reached", "type": "requests"}}',
            20.0,
            "(HTTP 429): Rate limit reached — the LLM is busy; try again in 20 seconds",
        ),
        (429, b"", None, "(HTTP 429) — the LLM is busy; try again in a minute"),
        (503, b'{"detail": "overloaded"}', None, "(HTTP 503): overloaded — the LLM had a problem"),
        # A proxy's HTML error page: its title, never the markup.
        (502, b"<html>\n  Bad gateway\n</html>", None, "(HTTP 502) — the LLM had a problem"),
        (
            502,
            b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center>"
            b"<h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>",
            None,
            "(HTTP 502): 502 Bad Gateway — the LLM had a problem",
        ),
        (404, b'{"error": "no such model"}', None, "(HTTP 404): no such model — tell the"),
    ],
)
def test_a_refusal_says_what_the_upstream_said_and_what_to_do(
    status: int, body: bytes, retry_after: float | None, told: str
) -> None:
    text = refusal_text(UpstreamStatusError(status, body, {}, retry_after))
    assert text.startswith("[the LLM refused the request ") and text.endswith("]")
    assert told in text
    assert "b'" not in text and "<" not in text


@pytest.mark.parametrize(
    ("error", "told"),
    [
        (UpstreamTimeout("the upstream at http://10.0.0.5:8000/v1 did not answer within 60s"),
         "the LLM took too long to answer"),
        (UpstreamUnavailable("cannot reach the upstream at http://10.0.0.5:8000/v1: refused"),
         "the LLM could not be reached"),
    ],
)  # fmt: skip
def test_no_answer_says_what_happened_not_where_the_upstream_is(
    error: UpstreamError, told: str
) -> None:
    text = unanswered_text(error)
    assert text.startswith(f"{told} — try again in a moment")
    assert "10.0.0.5" not in text


def test_a_long_error_body_is_cut() -> None:
    text = refusal_text(UpstreamStatusError(500, b"x" * 5000, {}, None))
    assert "x" * 299 + "…" in text and "x" * 300 not in text


@pytest.mark.parametrize("kind", get_args(MediaKind))
def test_a_media_placeholder_is_no_action_memory_or_card_item(kind: MediaKind) -> None:
    # Stored as the user's message, it reaches continuity capture and later history.
    text = media_only_text(kind)
    assert text.startswith("[") and text.endswith(", not passed on]")
    assert detect_temporal_action(text) is None and detect_status_update(text) is None
    assert detect_duration_report(text) is None
    assert detect_memory(text) == []
    said = [ExtractTurn("user", text)]
    assert extract_open_questions(said) == [] and extract_key_decisions(said) == []
