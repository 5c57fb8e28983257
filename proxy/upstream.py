"""The client for the upstream OpenAI-compatible endpoint: pooled, timed, retried.

Retries (with backoff that honours ``Retry-After``) and fallbacks happen only before any
byte of the answer has been handed to the caller; once a stream has started, a failure
ends that stream.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from middleware import json_codec
from middleware.clock.source import Clock, SystemClock
from middleware.errors import (
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from middleware.types import JSON, Reply, ReplyStream, completion_text
from proxy.config import UpstreamConfig
from proxy.metrics import Metrics

log = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# A Retry-After longer than this is not waited for: the error goes back to the client.
_MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True, slots=True)
class Target:
    """One endpoint to try: the primary, or a fallback in order."""

    base_url: str
    api_key: str = field(repr=False)
    model: str = ""
    # Built once: every request to this target sends the same URL and headers.
    completions_url: URL = field(init=False, compare=False, repr=False)
    headers: CIMultiDictProxy[str] = field(init=False, compare=False, repr=False)
    # The address errors and the log name: never a password in the URL.
    shown: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "completions_url", URL(f"{self.base_url}/chat/completions"))
        object.__setattr__(self, "shown", shown_url(self.base_url))
        object.__setattr__(self, "headers", CIMultiDictProxy(CIMultiDict(_headers(self))))


class HttpUpstream:
    """Forwards chat-completions bodies to the configured endpoints."""

    def __init__(
        self,
        config: UpstreamConfig,
        metrics: Metrics,
        clock: Clock | None = None,
    ) -> None:
        """``clock``: what an HTTP-date ``Retry-After`` is counted from when the answer
        has no ``Date`` header."""
        self._config = config
        self._metrics = metrics
        self._clock = clock or SystemClock()
        self._targets = [
            Target(config.base_url, config.api_key, ""),
            *(Target(f.base_url.rstrip("/"), f.api_key, f.model) for f in config.fallbacks),
        ]
        self._session: aiohttp.ClientSession | None = None
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=config.connect_timeout,
            sock_read=config.read_timeout,
        )

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self._config.max_connections, keepalive_timeout=30
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                # Bodies pass through as they came; ``_headers`` asks for them uncompressed.
                auto_decompress=False,
                # One session serves every caller: a cookie one upstream answer sets must
                # not ride along on another caller's requests (nor be parsed per answer).
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def ready(self) -> bool:
        target = self._targets[0]
        try:
            async with self._client().get(
                f"{target.base_url}/models",
                headers=_headers(target),
                timeout=aiohttp.ClientTimeout(total=self._config.connect_timeout),
            ) as response:
                return response.status < 500
        except (aiohttp.ClientError, TimeoutError):
            return False

    async def complete(self, body: JSON) -> Reply:
        last: UpstreamError | None = None
        stream = bool(body.get("stream"))
        for index, target in enumerate(self._targets):
            payload = body if not target.model else {**body, "model": target.model}
            try:
                return await self._with_retries(target, json_codec.dump(payload), stream)
            except UpstreamStatusError as exc:
                # A client error (bad request, unknown model…) is the same everywhere.
                if exc.status not in _RETRY_STATUSES:
                    raise
                last = exc
            except UpstreamError as exc:
                last = exc
            if index + 1 < len(self._targets):
                log.warning("upstream %s failed (%s); trying fallback", target.shown, last)
        assert last is not None
        raise last

    async def _with_retries(self, target: Target, data: bytes, stream: bool) -> Reply:
        attempts = self._config.retries + 1
        for attempt in range(attempts):
            try:
                return await self._attempt(target, data, stream)
            except UpstreamStatusError as exc:
                retryable = exc.status in _RETRY_STATUSES
                wait = exc.retry_after if exc.retry_after is not None else self._backoff(attempt)
                if not retryable or attempt + 1 == attempts or wait > _MAX_RETRY_AFTER:
                    raise
            except UpstreamUnavailable:
                if attempt + 1 == attempts:
                    raise
                wait = self._backoff(attempt)
            self._metrics.upstream_retries.inc()
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        base = self._config.backoff_initial * (1 << attempt)
        return min(self._config.backoff_max, base) * (0.5 + random.random() / 2)

    async def _attempt(self, target: Target, data: bytes, stream: bool) -> Reply:
        started = time.perf_counter()
        try:
            response = await self._client().post(
                target.completions_url, data=data, headers=target.headers
            )
        except TimeoutError as exc:
            raise UpstreamTimeout(
                f"the upstream at {target.shown} did not answer within "
                f"{self._config.connect_timeout:g}s (connect) / "
                f"{self._config.read_timeout:g}s (read)"
            ) from exc
        except aiohttp.ClientError as exc:
            raise UpstreamUnavailable(
                f"cannot reach the upstream at {target.shown}: {exc}"
            ) from exc
        try:
            if response.status >= 400:
                raw = await response.read()
                raise UpstreamStatusError(
                    response.status,
                    raw,
                    _passed_on(response.headers),
                    _retry_after(response.headers.get("Retry-After"), self._sent_at(response)),
                )
            if stream:
                first = await response.content.readany()
                self._metrics.upstream_latency.observe(time.perf_counter() - started)
                if not first:
                    raise UpstreamUnavailable(
                        f"the upstream at {target.shown} closed the stream before any data"
                    )
                return Reply(
                    stream=ReplyStream(_chunks(first, response), response.close),
                    content_type=response.headers.get("Content-Type", "text/event-stream"),
                )
            raw = await response.read()
            self._metrics.upstream_latency.observe(time.perf_counter() - started)
            response.release()
            return Reply(text=completion_text(raw), body=raw, content_type=_json_type(response))
        except TimeoutError as exc:
            response.close()
            raise UpstreamTimeout(
                f"the upstream at {target.shown} sent no data for {self._config.read_timeout:g}s"
            ) from exc
        except aiohttp.ClientError as exc:
            response.close()
            raise UpstreamUnavailable(
                f"the upstream at {target.shown} broke off the answer: {exc}"
            ) from exc
        except BaseException:
            # Cancelled (client went away) or an error status: drop the connection so
            # the upstream sees the request end and nothing half-read is pooled.
            response.close()
            raise

    def _sent_at(self, response: aiohttp.ClientResponse) -> datetime:
        """When the upstream sent ``response``: its ``Date``, else the relay's now. An
        HTTP-date ``Retry-After`` counted from the upstream's own clock waits as long as
        it meant, however far the two clocks are apart."""
        return _http_date(response.headers.get("Date")) or self._clock.now()


async def _chunks(first: bytes, response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    yield first
    try:
        async for chunk in response.content.iter_any():
            yield chunk
    except TimeoutError as exc:
        raise UpstreamTimeout("the upstream stopped sending mid-stream") from exc
    except aiohttp.ClientError as exc:
        raise UpstreamUnavailable(f"the upstream broke off the stream: {exc}") from exc


def shown_url(base_url: str) -> str:
    """``base_url`` as errors, the log and ``check-config`` show it: without the user and
    password a URL may carry for HTTP basic auth, which clients and log readers must not
    learn."""
    return str(URL(base_url).with_user(None))


def _headers(target: Target) -> dict[str, str]:
    # "identity": the relay neither decompresses nor forwards Content-Encoding, and it reads
    # the answer's text; without it aiohttp would offer gzip/deflate/br on our behalf.
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Accept-Encoding": "identity",
    }
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"
    return headers


def _json_type(response: aiohttp.ClientResponse) -> str:
    return response.headers.get("Content-Type", "application/json")


# An error's headers a client acts on: when to retry, its rate limits, what to quote.
_PASSED_ON = ("retry-after", "retry-after-ms", "x-request-id", "x-ratelimit-")


def _passed_on(headers: Mapping[str, str]) -> dict[str, str]:
    kept = {name: value for name, value in headers.items() if name.lower().startswith(_PASSED_ON)}
    kept["Content-Type"] = headers.get("Content-Type", "application/json")
    return kept


def _retry_after(value: str | None, sent_at: datetime) -> float | None:
    """The seconds a ``Retry-After`` asks to wait: delay-seconds ("120") or an HTTP-date
    ("Wed, 21 Oct 2026 07:28:00 GMT", counted from ``sent_at``); None when there is none
    or it is neither."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    retry_at = _http_date(value)
    if retry_at is None:
        return None
    return max(0.0, (retry_at - sent_at).total_seconds())


def _http_date(value: str | None) -> datetime | None:
    """An HTTP-date header value as an aware instant; None when absent or unreadable."""
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    # An HTTP-date is always GMT; one written without a zone is read as such.
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
