"""Platform webhooks on the relay's own HTTP server (Telegram in ``mode = "webhook"``).

A channel that receives updates over HTTP has a ``webhook_path`` (under ``/channels/``,
ending in a secret component) and a ``handle_webhook`` method. The channel runner
registers it here before the channel starts, so the route answers as soon as the platform
is told about it, and removes it once the channel has stopped. A path nobody registered
is a 404 like any unknown route. The handler checks the platform's own authentication
(a secret header); the relay's API keys do not apply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

WebhookHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

PREFIX = "/channels/"
WEBHOOKS: web.AppKey[dict[str, WebhookHandler]] = web.AppKey("webhooks")


def add_routes(app: web.Application) -> None:
    """Route ``POST /channels/<channel>/<secret>`` to whichever channel registered it."""
    app[WEBHOOKS] = {}
    app.router.add_post(PREFIX + "{channel}/{secret}", _dispatch)


async def _dispatch(request: web.Request) -> web.StreamResponse:
    handler = request.app[WEBHOOKS].get(request.path)
    if handler is None:
        raise web.HTTPNotFound()
    return await handler(request)
