"""What chat users are told when the upstream refuses a request."""

from __future__ import annotations

import pytest

from channels.base import refusal_text
from middleware.errors import UpstreamStatusError


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
        (502, b"<html>\n  Bad gateway\n</html>", None, "(HTTP 502): <html> Bad gateway </html>"),
        (404, b'{"error": "no such model"}', None, "(HTTP 404): no such model — tell the"),
    ],
)
def test_a_refusal_says_what_the_upstream_said_and_what_to_do(
    status: int, body: bytes, retry_after: float | None, told: str
) -> None:
    text = refusal_text(UpstreamStatusError(status, body, {}, retry_after))
    assert text.startswith("[the LLM refused the request ") and text.endswith("]")
    assert told in text
    assert "b'" not in text


def test_a_long_error_body_is_cut() -> None:
    text = refusal_text(UpstreamStatusError(500, b"x" * 5000, {}, None))
    assert "x" * 299 + "…" in text and "x" * 300 not in text
