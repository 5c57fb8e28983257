"""The aiohttp application: routes, typed state, and the owner of every resource."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from middleware.clock.source import Clock
from middleware.store import Store
from middleware.types import Upstream
from proxy import admin, health, openai_api, webhooks
from proxy.channel_runner import channels_ctx
from proxy.config import Config
from proxy.errors import errors_middleware
from proxy.keys import SERVICES
from proxy.server import REQUESTS_IN_FLIGHT, SHUTDOWN_DEADLINE, RequestsInFlight, ShutdownDeadline
from proxy.services import open_services


def build_app(
    config: Config,
    *,
    clock: Clock | None = None,
    store: Store | None = None,
    upstream: Upstream | None = None,
) -> web.Application:
    """The relay app. Store and upstream are opened on startup and closed on cleanup."""
    in_flight = RequestsInFlight()
    app = web.Application(
        # Outermost first: the admin counter sees the answers the error middleware makes;
        # a request is in flight for all of them.
        middlewares=[in_flight.middleware(), admin.count_admin_requests, errors_middleware],
        client_max_size=config.server.max_body_bytes,
    )

    async def services_ctx(app: web.Application) -> AsyncIterator[None]:
        # Captures in flight finish by a graceful stop's deadline (then are cancelled).
        deadline = app[SHUTDOWN_DEADLINE]
        async with open_services(
            config,
            clock=clock,
            store=store,
            upstream=upstream,
            stop_grace=lambda: deadline.time_left(otherwise=config.server.shutdown_timeout),
            serving=True,
        ) as svc:
            app[SERVICES] = svc
            yield

    app[SHUTDOWN_DEADLINE] = ShutdownDeadline()  # set by a graceful stop (proxy.server)
    app[REQUESTS_IN_FLIGHT] = in_flight  # read by a graceful stop
    app.cleanup_ctx.append(services_ctx)
    # After the services: cleanup runs in reverse, so channels stop before the store.
    app.cleanup_ctx.append(channels_ctx)
    app.router.add_post("/v1/chat/completions", openai_api.chat_completions)
    app.router.add_get("/v1/models", openai_api.list_models)
    app.router.add_get("/v1/models/{model}", openai_api.get_model)
    app.router.add_get("/healthz", health.healthz)
    app.router.add_get("/readyz", health.readyz)
    app.router.add_get("/metrics", health.metrics)
    admin.add_routes(app)
    webhooks.add_routes(app)
    return app
