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
    ready = store_ok and upstream_ok
    body = {
        "status": "ready" if ready else "not ready",
        "store": "ok" if store_ok else "unavailable",
        "upstream": "ok" if upstream_ok else "unreachable",
    }
    return web.json_response(body, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    return web.Response(body=services.metrics.render(), headers={"Content-Type": CONTENT_TYPE})
