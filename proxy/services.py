"""The relay's long-lived resources, opened and closed together by one owner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from middleware.clock.source import Clock, SystemClock
from middleware.continuity.service import ContinuityService
from middleware.notices import Notices
from middleware.pipeline import Handler
from middleware.store import Store
from middleware.store.sqlite import SqliteStore
from middleware.types import Upstream
from proxy.assembly import build_pipeline, continuity_service
from proxy.auth import Authenticator
from proxy.config import ANY_CHANNEL, Config
from proxy.inspect_upstream import InspectUpstream
from proxy.metrics import Metrics
from proxy.upstream import HttpUpstream


@dataclass(slots=True)
class Services:
    """Everything a channel or the HTTP edge needs to run a turn."""

    config: Config
    clock: Clock
    store: Store
    upstream: Upstream
    metrics: Metrics
    auth: Authenticator
    pipeline: Handler
    continuity: ContinuityService
    # What to tell a user on their next message; the admin API's links add to it too.
    notices: Notices


def make_upstream(config: Config, clock: Clock, metrics: Metrics) -> Upstream:
    if config.upstream.mode == "inspect":
        return InspectUpstream(clock)
    return HttpUpstream(config.upstream, metrics, clock)


@asynccontextmanager
async def open_services(
    config: Config,
    *,
    clock: Clock | None = None,
    store: Store | None = None,
    upstream: Upstream | None = None,
    stop_grace: Callable[[], float] | None = None,
    serving: bool = False,
) -> AsyncIterator[Services]:
    """Open the store and upstream, build the pipeline; close both on exit.

    ``stop_grace()``, asked on exit, is how long captures in flight may still run (a
    graceful stop's time left); without it, the continuity service's own default.
    ``serving``: the relay's server, which no other server may run beside on the same
    store file (``sqlite_serving``)."""
    clock = clock or SystemClock()
    metrics = Metrics(
        channels=[c for k in config.auth.keys for c in k.channels if c != ANY_CHANNEL]
    )
    store = store or SqliteStore(
        Path(config.store.path),
        commit_delay=config.store.commit_delay_ms / 1000,
        serving=serving,
    )
    upstream = upstream or make_upstream(config, clock, metrics)
    await store.open()
    metrics.watch_store(store.lost_writes)
    continuity = continuity_service(config, store, clock, upstream)
    continuity.start()
    notices = Notices()
    try:
        yield Services(
            config=config,
            clock=clock,
            store=store,
            upstream=upstream,
            metrics=metrics,
            auth=Authenticator(config.auth),
            pipeline=build_pipeline(config, store, clock, upstream, continuity, notices),
            continuity=continuity,
            notices=notices,
        )
    finally:
        # Captures in flight still need the upstream and the store: let them finish.
        if stop_grace is None:
            await continuity.stop()
        else:
            await continuity.stop(grace=stop_grace())
        # Upstream first: nothing new can be sent once the store is going away.
        await upstream.close()
        await store.close()
