"""Running the app: bind, serve until SIGTERM/SIGINT, shut down in stages."""

from __future__ import annotations

import asyncio
import errno
import gc
import ipaddress
import logging
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from middleware.errors import ConfigError, ShuttingDown
from proxy.config import Config

log = logging.getLogger(__name__)

# The cyclic GC's first-generation threshold while a server runs. At the default (700), the
# objects that in-flight requests hold for a moment (frames, futures, headers, bodies) are
# enough to start a collection every few requests; each one walks them all and promotes
# them towards the oldest generation, whose collections walk every object the relay has
# loaded. Measured with the bench's load (32 concurrent plain requests): ~45 µs of CPU
# per request spent collecting at 700, under 1 µs at 10 000. Garbage cycles are still
# collected, only after more allocations; RSS after the bench's load is unchanged.
GC_THRESHOLD = 10_000


class _GcTuning:
    """Raises the GC threshold while at least one server runs; restores it after the last.

    A higher threshold, or 0 (automatic collection off), set by whoever runs the relay
    is left alone.
    """

    def __init__(self) -> None:
        self._servers = 0
        self._saved: tuple[int, int, int] | None = None

    def acquire(self) -> None:
        if self._servers == 0:
            self._saved = gc.get_threshold()
            gen0, gen1, gen2 = self._saved
            if 0 < gen0 < GC_THRESHOLD:
                gc.set_threshold(GC_THRESHOLD, gen1, gen2)
        self._servers += 1

    def release(self) -> None:
        self._servers -= 1
        if self._servers == 0 and self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None


_gc_tuning = _GcTuning()


# Of the shutdown timeout, the share kept for ending what the drain left running (at most
# END_GRACE_MAX), twice over: aiohttp's Server.shutdown waits this long for the handlers
# still running to finish, then, having failed their requests' bodies, as long again
# before cancelling them.
END_GRACE_SHARE = 0.1
END_GRACE_MAX = 1.0


# How often the drain looks whether the connections in flight have all closed.
DRAIN_POLL = 0.05


def end_grace(shutdown_timeout: float) -> float:
    return min(shutdown_timeout * END_GRACE_SHARE, END_GRACE_MAX)


class ShutdownDeadline:
    """When the work in flight must end: never while the relay serves; a graceful stop
    sets it. Each request's answer is made inside ``scope()``; channels and background
    work read ``time_left``."""

    def __init__(self) -> None:
        self._when: float | None = None
        self._scopes: set[asyncio.Timeout] = set()
        self._listeners: list[Callable[[float], None]] = []

    def on_end(self, listener: Callable[[float], None]) -> None:
        """Call ``listener(when)`` once a stop sets the deadline: what runs beside the
        HTTP server (the chat channels) starts stopping with it."""
        self._listeners.append(listener)

    def end_at(self, when: float) -> None:
        """End the answers in the making, and those started from now on, at ``when``
        (event loop time)."""
        self._when = when
        for scope in self._scopes:
            if not scope.expired():  # an expired one is already ending
                scope.reschedule(when)
        for listener in self._listeners:
            listener(when)

    def time_left(self, otherwise: float) -> float:
        """Seconds until the deadline (none left: 0), or ``otherwise`` while none is set."""
        if self._when is None:
            return otherwise
        return max(0.0, self._when - asyncio.get_running_loop().time())

    def scope(self) -> _AnswerScope:
        """Make one answer (or send one stream) inside. At the deadline, what it awaits is
        cancelled (a partial reply is recorded as incomplete as it unwinds) and the scope
        raises ``ShuttingDown``: a 503 before the response started, else an in-band error
        event, as when the upstream breaks off. The request can be sent again.
        """
        return _AnswerScope(self._scopes, asyncio.timeout_at(self._when))


class _AnswerScope:
    """``ShutdownDeadline.scope()``. A class, not an ``asynccontextmanager``: it wraps
    every request, and as a generator it cost 3.9 µs instead of 2.3."""

    __slots__ = ("_scopes", "_timeout")

    def __init__(self, scopes: set[asyncio.Timeout], timeout: asyncio.Timeout) -> None:
        self._scopes = scopes
        self._timeout = timeout

    async def __aenter__(self) -> None:
        await self._timeout.__aenter__()
        self._scopes.add(self._timeout)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._scopes.discard(self._timeout)
        try:
            await self._timeout.__aexit__(kind, exc, traceback)
        except TimeoutError as timeout:
            if not self._timeout.expired():
                raise  # the answer's own, not the deadline's
            raise ShuttingDown(
                "the relay is shutting down and did not finish this answer; send the request again"
            ) from timeout


SHUTDOWN_DEADLINE = web.AppKey("shutdown_deadline", ShutdownDeadline)


class RequestsInFlight:
    """Which connections are answering a request: its ``middleware`` (outermost) marks a
    connection busy while a handler runs. A graceful stop closes the others at once: an
    idle keep-alive connection has nothing to finish, and aiohttp would otherwise keep it
    open (and the drain waiting) until the client or the keep-alive timeout ends it.

    A response a handler returns is written to the connection's transport before the
    connection waits on anything (only a handler-prepared stream is sent piecemeal, and
    that is inside the handler), and closing a transport sends what it holds first: a
    connection is not cut mid-answer just after its handler returned.
    """

    def __init__(self) -> None:
        self._busy: set[web.RequestHandler] = set()

    def middleware(self) -> Middleware:
        busy = self._busy

        @web.middleware
        async def mark_busy(request: web.Request, handler: Handler) -> web.StreamResponse:
            protocol = request.protocol
            busy.add(protocol)
            try:
                return await handler(request)
            finally:
                busy.discard(protocol)

        return mark_busy

    async def close_idle(self, server: web.Server) -> None:
        """Close ``server``'s connections that are not answering a request."""
        # A request read just before the listening sockets closed has its handler task
        # created by now (``RunningServer._stop_accepting``); one more turn and the
        # handler has entered ``mark_busy``.
        await asyncio.sleep(0)
        for connection in server.connections:
            if connection not in self._busy:
                connection.force_close()


REQUESTS_IN_FLIGHT = web.AppKey("requests_in_flight", RequestsInFlight)


@dataclass(slots=True)
class RunningServer:
    runner: web.AppRunner
    host: str
    port: int
    shutdown_timeout: float
    _stopped: bool = field(default=False, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def stop(self) -> None:
        """Shut down in stages, all within ``shutdown_timeout``: stop accepting; close the
        idle keep-alive connections; drain the requests, streams and channel turns in
        flight until the deadline, then end what is
        still running (a stream with an in-band error event, a request not yet answered
        with a 503); then run the cleanup contexts (channels, then background captures,
        the upstream pool and the store), with what time is left.

        ``AppRunner.cleanup`` alone would wait its timeout for the handlers, then, having
        only failed their requests' bodies, as long again before cutting the connections:
        twice the timeout, and a stream cut without a word to its client.
        """
        loop = asyncio.get_running_loop()
        grace = end_grace(self.shutdown_timeout)
        deadline = loop.time() + self.shutdown_timeout - 2 * grace
        try:
            server = self.runner.server
            if server is not None:  # None once stopped
                # Answers still in the making at the deadline end with the relay's error,
                # and the channels begin to stop now, draining beside the HTTP server.
                work = self.runner.app.get(SHUTDOWN_DEADLINE)
                if work is not None:
                    work.end_at(deadline)
                await self._stop_accepting(server)
                # Idle keep-alive connections: nothing in flight, closed now; what stays
                # open is a connection answering a request.
                in_flight = self.runner.app.get(REQUESTS_IN_FLIGHT)
                if in_flight is not None:
                    await in_flight.close_idle(server)
                await _drain(server, deadline)
                if server.connections:
                    log.warning(
                        "shutdown timeout: ending the %d requests still in flight",
                        len(server.connections),
                    )
                # End the rest: the handlers still running get `grace` to finish (an
                # answer just ended sends its error and the end of its response); then
                # their request bodies fail, `grace` again, and they are cancelled.
                await server.shutdown(grace)
            # The cleanup contexts: channels, then the continuity service, the upstream
            # pool and the store.
            await self.runner.cleanup()
        finally:
            if not self._stopped:
                self._stopped = True
                _gc_tuning.release()

    async def _stop_accepting(self, server: web.Server) -> None:
        # Close the listening sockets: new connections are refused.
        for site in list(self.runner.sites):
            await site.stop()
        # As AppRunner.cleanup does: let the requests that came in before the sockets
        # closed start, then close the idle keep-alive connections.
        await asyncio.sleep(0)
        server.pre_shutdown()


async def _drain(server: web.Server, deadline: float) -> None:
    """Let the requests and streams in flight finish, until ``deadline``: each connection
    closes once its request is done (none is kept alive now)."""
    loop = asyncio.get_running_loop()
    # Polled, as uvicorn does: aiohttp signals no connection's end. Its Server.shutdown
    # does wait for them, but cut short it can fail a handler that ends at that moment.
    while server.connections and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(min(DRAIN_POLL, deadline - loop.time()))


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
    """Start serving ``app``; ``port`` 0 picks a free port.

    Raises ``ConfigError`` when ``host``:``port`` cannot be listened on, after closing
    what the app had opened on startup (its cleanup contexts: store, upstream, channels).
    """
    runner = web.AppRunner(
        app, shutdown_timeout=shutdown_timeout, handler_cancellation=True, access_log=None
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise ConfigError(_cannot_listen(host, port, exc)) from exc
    bound = int(runner.addresses[0][1]) if runner.addresses else port
    _gc_tuning.acquire()
    return RunningServer(runner, host, bound, shutdown_timeout)


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    where = f"cannot listen on {host}:{port}"
    if isinstance(exc, socket.gaierror):
        return (
            f"{where}: the host name does not resolve ({exc.strerror}); "
            "set [server] host to an address of this machine, e.g. 127.0.0.1"
        )
    # asyncio words its bind errors around the address; the plain reason reads better.
    reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    if exc.errno == errno.EADDRINUSE:
        return f"{where}: {reason}; stop the other process or set [server] port"
    return f"{where}: {reason}; check [server] host and port"


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
