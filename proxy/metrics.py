"""Prometheus metrics, one registry per app so several apps can live in one process."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

CONTENT_TYPE = CONTENT_TYPE_LATEST

# The channels the relay serves itself, and the API's default.
BUILT_IN_CHANNELS = ("api", "terminal", "telegram", "discord")


class Metrics:
    """The relay's counters and histograms."""

    def __init__(self, channels: Iterable[str] = ()) -> None:
        """``channels``: the channel names counted under their own label besides the
        built-in ones; any other name a client sends is counted as ``other``, so callers
        cannot grow the number of series."""
        self._channels = frozenset({*BUILT_IN_CHANNELS, *channels})
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "chronorelay_requests",
            "Chat requests handled, by channel and HTTP status.",
            ["channel", "status"],
            registry=self.registry,
        )
        self.errors = Counter(
            "chronorelay_errors",
            "Requests that ended in an error, by kind: upstream (no answer), upstream_status "
            "(an upstream refusal passed on), upstream_mid_stream / shutdown_mid_stream (a "
            "stream cut after its 200).",
            ["kind"],
            registry=self.registry,
        )
        self.admin_requests = Counter(
            "chronorelay_admin_requests",
            "Admin API requests answered, by method, route template and HTTP status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.upstream_latency = Histogram(
            "chronorelay_upstream_latency_seconds",
            "Time from sending a request upstream to its first byte (stream) or body.",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.upstream_retries = Counter(
            "chronorelay_upstream_retries",
            "Upstream attempts retried after a connect error, 429 or 5xx.",
            registry=self.registry,
        )
        self.injected_tokens = Counter(
            "chronorelay_injected_tokens",
            "Estimated tokens the relay injected into forwarded requests.",
            registry=self.registry,
        )

        # Children bound on first use: ``labels()`` costs more than the increment, and a
        # child made in advance would be exposed (at 0) before anything happened.
        self._request_children: dict[tuple[str, str], Counter] = {}
        self._error_children: dict[str, Counter] = {}

    def count_request(self, channel: str, status: str) -> None:
        """One chat request on ``channel`` answered with ``status``."""
        # Keyed by the label, not the name a client sent: unknown names share one child.
        label = channel if channel in self._channels else "other"
        child = self._request_children.get((label, status))
        if child is None:
            child = self._request_children[label, status] = self.requests.labels(label, status)
        child.inc()

    def count_admin_request(self, method: str, route: str, status: int) -> None:
        """One ``/admin/*`` request answered with ``status``. ``route`` is the matched
        route's template (``/admin/users/{user_key}``), never the path: user and thread
        keys would each become a series of their own."""
        self.admin_requests.labels(method, route, str(status)).inc()

    def count_error(self, kind: str) -> None:
        """One request that ended in an error of ``kind``."""
        child = self._error_children.get(kind)
        if child is None:
            child = self._error_children[kind] = self.errors.labels(kind)
        child.inc()

    def watch_store(self, lost_writes: Callable[[], int]) -> None:
        """Expose the store's count of lost writes (``Store.lost_writes``), read at each
        scrape."""
        self.registry.register(_StoreCollector(lost_writes))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _StoreCollector(Collector):
    """What the store counts itself, read when scraped."""

    def __init__(self, lost_writes: Callable[[], int]) -> None:
        self._lost_writes = lost_writes

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "chronorelay_store_lost_writes",
            "Replies, injected blocks and marks the store gave up after failed commits "
            "(more than it keeps for the next commit were waiting, or it closed first).",
            value=self._lost_writes(),
        )
