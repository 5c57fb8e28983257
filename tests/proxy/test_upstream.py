"""How the relay talks to the upstream: what it asks for, and what it does not keep."""

from __future__ import annotations

import json

import aiohttp
import pytest

from proxy.server import RunningServer
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
