"""Running the app: bind, serve until SIGTERM/SIGINT, shut down in stages."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
from dataclasses import dataclass

from aiohttp import web

from proxy.config import Config

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RunningServer:
    runner: web.AppRunner
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def stop(self) -> None:
        # AppRunner.cleanup, in order: stop accepting (close the listening sites), let
        # in-flight requests and streams finish for up to shutdown_timeout, cancel the
        # rest, then run cleanup contexts (upstream pool, then the store).
        await self.runner.cleanup()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_host(config: Config) -> str:
    """The host to bind: forced to loopback while no relay API keys are configured."""
    host = config.server.host
    if not config.auth.keys and not is_loopback(host):
        log.warning(
            "no relay API keys in [auth] keys: binding to 127.0.0.1 instead of %s so the "
            "relay is not open to the network; add a key to listen on %s",
            host,
            host,
        )
        return "127.0.0.1"
    return host


async def start(
    app: web.Application, host: str, port: int, shutdown_timeout: float
) -> RunningServer:
    """Start serving ``app``; ``port`` 0 picks a free port."""
    runner = web.AppRunner(
        app, shutdown_timeout=shutdown_timeout, handler_cancellation=True, access_log=None
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = int(runner.addresses[0][1]) if runner.addresses else port
    return RunningServer(runner, host, bound)


async def serve(app: web.Application, config: Config) -> None:
    """Serve until SIGTERM or SIGINT, then shut down gracefully."""
    host = bind_host(config)
    if not config.auth.keys:
        log.warning("no relay API keys configured: anyone on this machine can use the relay")
    server = await start(app, host, config.server.port, config.server.shutdown_timeout)
    log.info("chronorelay listening on %s (upstream mode: %s)", server.url, config.upstream.mode)
    if config.upstream.mode == "inspect":
        log.info(
            "upstream mode is 'inspect': replies show the messages that would be forwarded; "
            'set [upstream] mode = "forward" and base_url to use an LLM'
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
        log.info(
            "shutting down: draining in-flight requests for up to %.0fs",
            config.server.shutdown_timeout,
        )
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await server.stop()
    log.info("chronorelay stopped")
