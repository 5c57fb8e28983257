"""How the relay talks to the upstream: what it asks for, and what it does not keep."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from middleware.clock.source import FakeClock
from middleware.errors import UpstreamStatusError, UpstreamUnavailable
from proxy import upstream as upstream_module
from proxy.config import UpstreamConfig
from proxy.metrics import Metrics
from proxy.server import RunningServer
from proxy.upstream import HttpUpstream
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, Scripted

HI = [{"role": "user", "content": "hi there"}]


async def _post(relay: RunningServer, body: dict[str, object]) -> tuple[str | None, bytes]:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{relay.url}/v1/chat/completions", json=body) as response:
            assert response.status == 200
            return response.headers.get("Content-Encoding"), await response.read()


@pytest.mark.parametrize("stream", [False, True])
async def test_a_compressing_upstream_answers_the_relay_uncompressed(
    relay: RunningServer, fake_upstream: FakeUpstream, stream: bool
) -> None:
    # The relay forwards answers as they came and reads their text; a compressed answer
    # would reach the client without its Content-Encoding, unreadable.
    fake_upstream.compress = True
    encoding, raw = await _post(relay, {"model": "fake-model", "messages": HI, "stream": stream})
    assert encoding is None
    if stream:
        assert raw.startswith(b"data: {") and raw.endswith(b"data: [DONE]\n\n")
    else:
        assert json.loads(raw)["choices"][0]["message"]["content"] == "echo: hi there"
    assert fake_upstream.last.headers["Accept-Encoding"] == "identity"


async def test_cookies_an_upstream_sets_are_not_sent_back(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    # "localhost", not an IP: a cookie jar keeps cookies only from host names.
    base = fake_upstream.url.replace("127.0.0.1", "localhost")
    relay = await relay_factory(upstream={"base_url": base})
    cookie = {"Set-Cookie": "__cf_bm=abc; Path=/; Max-Age=1800"}
    fake_upstream.answer_headers = cookie
    # Also on a retried error answer, whose next attempt is the same caller's request.
    fake_upstream.failures.append(Scripted(503, {"error": {"message": "busy"}}, cookie))
    for _ in range(2):
        await _post(relay, {"model": "fake-model", "messages": HI})
    assert len(fake_upstream.requests) == 3
    assert all("Cookie" not in seen.headers for seen in fake_upstream.requests)


async def test_a_password_in_the_upstream_url_is_not_shown_to_clients_or_the_log(
    relay_factory: RelayFactory, unused_tcp_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    # Basic auth in the URL is how some self-hosted LLMs behind a proxy are reached; the
    # address in an error helps, the password in it would go to every API client.
    base = f"http://relay:s3cret-pw@127.0.0.1:{unused_tcp_port}/v1"
    relay = await relay_factory(upstream={"base_url": base, "api_key": "", "retries": 0})
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{relay.url}/v1/chat/completions", json={"messages": HI}) as r:
            assert r.status == 502
            message = (await r.json())["error"]["message"]
    assert f"the upstream at http://127.0.0.1:{unused_tcp_port}/v1" in message
    assert "s3cret-pw" not in message and "s3cret-pw" not in caplog.text
    assert "upstream error" in caplog.text


@pytest.mark.parametrize(
    ("retry_after", "attempts"),
    [
        # Two minutes after the answer's own Date: longer than the relay waits, so the
        # 429 goes back to the client at once, as "Retry-After: 120" does.
        ("Sun, 22 Nov 2026 10:02:00 GMT", 1),
        # Already due by the answer's Date: retried without waiting, and answered.
        ("Sun, 22 Nov 2026 09:59:00 GMT", 2),
    ],
)
async def test_a_retry_after_given_as_an_http_date_is_honoured(
    relay: RunningServer, fake_upstream: FakeUpstream, retry_after: str, attempts: int
) -> None:
    headers = {"Date": "Sun, 22 Nov 2026 10:00:00 GMT", "Retry-After": retry_after}
    fake_upstream.failures.append(Scripted(429, {"error": {"message": "slow down"}}, headers))
    async with aiohttp.ClientSession() as http:
        body = {"model": "fake-model", "messages": HI}
        async with http.post(f"{relay.url}/v1/chat/completions", json=body) as response:
            status = response.status
            returned_after = response.headers.get("Retry-After")
    assert len(fake_upstream.requests) == attempts
    if attempts == 1:
        assert (status, returned_after) == (429, retry_after)
    else:
        assert status == 200


class _Waits:
    """Stands in for ``asyncio`` in ``proxy.upstream``: records each wait between attempts
    instead of sleeping it."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.seconds.append(seconds)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> _Waits:
    recorded = _Waits()
    monkeypatch.setattr(upstream_module, "asyncio", recorded)
    return recorded


def _upstream(
    url: str, clock: FakeClock | None = None, metrics: Metrics | None = None, **settings: Any
) -> HttpUpstream:
    config = UpstreamConfig.model_validate(
        {"mode": "forward", "base_url": url, "api_key": "k", "retries": 2, **settings}
    )
    return HttpUpstream(config, metrics or Metrics(), clock)


def _retries_counted(metrics: Metrics) -> float | None:
    return metrics.registry.get_sample_value("chronorelay_upstream_retries_total")


BUSY = {"error": {"message": "busy"}}


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_every_transient_status_is_retried_and_counted(
    fake_upstream: FakeUpstream, waits: _Waits, status: int
) -> None:
    fake_upstream.failures.append(Scripted(status, BUSY, {"Retry-After": "1"}))
    metrics = Metrics()
    upstream = _upstream(fake_upstream.url, metrics=metrics)
    try:
        reply = await upstream.complete({"model": "m", "messages": HI})
    finally:
        await upstream.close()
    assert reply.text == "echo: hi there"
    assert len(fake_upstream.requests) == 2
    assert waits.seconds == [1.0]
    assert _retries_counted(metrics) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422, 501])
async def test_a_status_that_would_fail_again_is_neither_retried_nor_sent_to_a_fallback(
    fake_upstream: FakeUpstream, waits: _Waits, status: int
) -> None:
    fake_upstream.failures.append(Scripted(status, BUSY))
    upstream = _upstream(fake_upstream.url, fallbacks=[{"base_url": fake_upstream.url}])
    try:
        with pytest.raises(UpstreamStatusError) as caught:
            await upstream.complete({"model": "m", "messages": HI})
    finally:
        await upstream.close()
    assert caught.value.status == status
    assert len(fake_upstream.requests) == 1
    assert waits.seconds == []


async def test_a_fallback_is_tried_once_the_primary_keeps_failing(
    fake_upstream: FakeUpstream, waits: _Waits
) -> None:
    fake_upstream.failures.extend(Scripted(503, BUSY, {"Retry-After": "0"}) for _ in range(3))
    fallback = {"base_url": fake_upstream.url, "model": "spare"}
    upstream = _upstream(fake_upstream.url, fallbacks=[fallback])
    try:
        reply = await upstream.complete({"model": "m", "messages": HI})
    finally:
        await upstream.close()
    assert reply.text == "echo: hi there"
    assert [seen.body["model"] for seen in fake_upstream.requests] == ["m", "m", "m", "spare"]


@pytest.mark.parametrize(("retry_after", "waited"), [("60", [60.0]), ("61", []), ("-5", [0.0])])
async def test_a_retry_after_up_to_a_minute_is_waited_and_a_longer_one_passed_on(
    fake_upstream: FakeUpstream, waits: _Waits, retry_after: str, waited: list[float]
) -> None:
    fake_upstream.failures.append(Scripted(429, BUSY, {"Retry-After": retry_after}))
    upstream = _upstream(fake_upstream.url)
    try:
        if waited:
            await upstream.complete({"model": "m", "messages": HI})
        else:
            with pytest.raises(UpstreamStatusError) as caught:
                await upstream.complete({"model": "m", "messages": HI})
            assert caught.value.headers["Retry-After"] == retry_after
    finally:
        await upstream.close()
    assert waits.seconds == waited


async def test_a_retry_after_date_with_no_readable_date_counts_from_the_relays_clock(
    fake_upstream: FakeUpstream, waits: _Waits
) -> None:
    # aiohttp always sends a Date; one it cannot read stands for one that is missing.
    clock = FakeClock(datetime(2026, 11, 22, 10, 0, tzinfo=UTC))
    retry_at = {"Date": "sometime today", "Retry-After": "Sun, 22 Nov 2026 10:00:30 GMT"}
    fake_upstream.failures.append(Scripted(503, BUSY, retry_at))
    upstream = _upstream(fake_upstream.url, clock)
    try:
        await upstream.complete({"model": "m", "messages": HI})
    finally:
        await upstream.close()
    assert waits.seconds == [30.0]


async def test_backoff_doubles_per_attempt_up_to_its_cap_with_jitter(
    fake_upstream: FakeUpstream, waits: _Waits, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without Retry-After: initial × 2^attempt, capped, then scaled into [½, 1) of that.
    upstream = _upstream(fake_upstream.url, retries=3, backoff_initial=1.0, backoff_max=3.0)
    monkeypatch.setattr(upstream_module, "random", SimpleNamespace(random=lambda: 0.999))
    assert [upstream._backoff(attempt) for attempt in range(4)] == pytest.approx(
        [0.9995, 1.999, 2.9985, 2.9985]
    )
    monkeypatch.setattr(upstream_module, "random", SimpleNamespace(random=lambda: 0.0))
    fake_upstream.failures.extend(Scripted(503, BUSY) for _ in range(3))
    try:
        await upstream.complete({"model": "m", "messages": HI})
    finally:
        await upstream.close()
    assert waits.seconds == [0.5, 1.0, 1.5]


async def test_an_unreachable_upstream_is_retried_after_backoff_then_reported(
    unused_tcp_port: int, waits: _Waits
) -> None:
    metrics = Metrics()
    upstream = _upstream(f"http://127.0.0.1:{unused_tcp_port}/v1", metrics=metrics, backoff_max=0)
    try:
        with pytest.raises(UpstreamUnavailable, match="cannot reach the upstream"):
            await upstream.complete({"model": "m", "messages": HI})
    finally:
        await upstream.close()
    assert waits.seconds == [0.0, 0.0]
    assert _retries_counted(metrics) == 2
