"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio

from aiohttp import web

from proxy.keys import SERVICES
from proxy.metrics import CONTENT_TYPE


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    store_ok, upstream_ok = await asyncio.gather(services.store.ping(), services.upstream.ready())
    # The store answers reads on a full disk: its last failed write says it cannot take
    # turns, until a write succeeds again.
    write_failure = services.store.write_failure() if store_ok else None
    ready = store_ok and write_failure is None and upstream_ok
    body = {
        "status": "ready" if ready else "not ready",
        "store": "ok" if store_ok and write_failure is None else "unavailable",
        "upstream": "ok" if upstream_ok else "unreachable",
    }
    if write_failure is not None:
        body["store_error"] = write_failure
    return web.json_response(body, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    return web.Response(body=services.metrics.render(), headers={"Content-Type": CONTENT_TYPE})
