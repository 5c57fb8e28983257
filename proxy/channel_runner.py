"""The chat channels ``chronorelay serve`` runs: started with the app, stopped before the
store and upstream close (they hand turns to the pipeline until the very end)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from channels.base import Channel, load_channel_class
from middleware.errors import ChronorelayError
from proxy.config import Config
from proxy.keys import SERVICES
from proxy.server import SHUTDOWN_DEADLINE
from proxy.webhooks import WEBHOOKS, WebhookHandler

log = logging.getLogger(__name__)


def enabled_channels(config: Config) -> list[str]:
    """The ``[channels.<name>]`` tables with ``enabled = true``, in file order (the
    ``[channels]`` keys shared by every channel are not tables)."""
    names = type(config.channels).model_fields
    return [name for name in names if getattr(getattr(config.channels, name), "enabled", False)]


async def channels_ctx(app: web.Application) -> AsyncIterator[None]:
    """aiohttp cleanup context: start every enabled channel; stop them on cleanup.

    Append it after the services context, so channels stop before the store closes.
    A channel that cannot start fails startup (with the ones already started stopped).
    A channel with a ``webhook_path`` gets its route (``proxy.webhooks``) before it starts
    and loses it after it stopped. A graceful stop (``RunningServer.stop``) begins stopping
    the channels as it sets its deadline, so they drain beside the HTTP server and are
    stopped by the same deadline.
    """
    services = app[SERVICES]
    webhooks = app[WEBHOOKS]
    started: list[Channel] = []
    stopping: asyncio.Future[None] | None = None

    def begin_stop(deadline: float) -> None:
        nonlocal stopping
        if stopping is None:
            stopping = asyncio.ensure_future(_stop_all(list(started), webhooks, deadline))

    app[SHUTDOWN_DEADLINE].on_end(begin_stop)
    try:
        for name in enabled_channels(services.config):
            channel: Channel = load_channel_class(name)(services)
            path: str | None = getattr(channel, "webhook_path", None)
            if path is not None:
                webhooks[path] = channel.handle_webhook  # type: ignore[attr-defined]
            try:
                await channel.start()
            except BaseException:
                webhooks.pop(path or "", None)
                raise
            started.append(channel)
            log.info("channel %s started", name)
        yield
    finally:
        # Not begun by a graceful stop (a failed startup, a bare cleanup): begin it now.
        begin_stop(asyncio.get_running_loop().time() + services.config.server.shutdown_timeout)
        assert stopping is not None
        await stopping


async def _stop_all(
    channels: list[Channel], webhooks: dict[str, WebhookHandler], deadline: float
) -> None:
    """Stop the channels side by side: each stops receiving, then lets its turns in
    flight finish, until ``deadline`` (event loop time)."""

    async def stop(channel: Channel) -> None:
        try:
            async with asyncio.timeout_at(deadline):
                await channel.stop()
        except TimeoutError:
            log.warning("channel %s did not stop by the shutdown deadline", channel.name)
        except ChronorelayError as exc:
            log.error("channel %s did not stop cleanly: %s", channel.name, exc)
        webhooks.pop(getattr(channel, "webhook_path", None) or "", None)

    await asyncio.gather(*(stop(channel) for channel in reversed(channels)))
