"""Starting and stopping the server: the GC threshold is raised while any server runs, and
an address that cannot be listened on is a clear error."""

from __future__ import annotations

import gc
import socket
from collections.abc import AsyncIterator, Iterator

import pytest
from aiohttp import web

from middleware.errors import ConfigError
from proxy.server import GC_THRESHOLD, start


@pytest.fixture
def default_threshold() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield (700, 10, 10)
    gc.set_threshold(*saved)


async def test_gc_threshold_raised_while_serving_and_restored_after_the_last(
    default_threshold: tuple[int, int, int],
) -> None:
    first = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    assert gc.get_threshold() == (GC_THRESHOLD, 10, 10)
    second = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    await first.stop()
    assert gc.get_threshold() == (GC_THRESHOLD, 10, 10)  # the second still runs
    await second.stop()
    assert gc.get_threshold() == default_threshold
    await second.stop()  # stopping twice releases once
    assert gc.get_threshold() == default_threshold


async def test_a_higher_threshold_set_by_the_operator_is_kept(
    default_threshold: tuple[int, int, int],
) -> None:
    gc.set_threshold(GC_THRESHOLD * 5, 20, 30)
    server = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    assert gc.get_threshold() == (GC_THRESHOLD * 5, 20, 30)
    await server.stop()
    assert gc.get_threshold() == (GC_THRESHOLD * 5, 20, 30)


async def test_automatic_collection_switched_off_stays_off(
    default_threshold: tuple[int, int, int],
) -> None:
    gc.set_threshold(0, 10, 10)
    server = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    assert gc.get_threshold() == (0, 10, 10)
    await server.stop()
    assert gc.get_threshold() == (0, 10, 10)


@pytest.fixture
def taken_port() -> Iterator[int]:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    yield int(holder.getsockname()[1])
    holder.close()


async def test_a_port_in_use_is_a_clear_error_and_what_startup_opened_is_closed(
    default_threshold: tuple[int, int, int], taken_port: int
) -> None:
    events: list[str] = []

    async def resource(app: web.Application) -> AsyncIterator[None]:
        events.append("opened")
        yield
        events.append("closed")

    app = web.Application()
    app.cleanup_ctx.append(resource)
    with pytest.raises(ConfigError) as caught:
        await start(app, "127.0.0.1", taken_port, shutdown_timeout=1)
    assert str(caught.value) == (
        f"cannot listen on 127.0.0.1:{taken_port}: address already in use; "
        "stop the other process or set [server] port"
    )
    assert events == ["opened", "closed"]
    assert gc.get_threshold() == default_threshold


async def test_a_host_that_does_not_resolve_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unknown(*args: object, **kwargs: object) -> None:
        # Stands in for the resolver, so the test asks no DNS server.
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    with pytest.raises(ConfigError) as caught:
        await start(web.Application(), "relay.example", 0, shutdown_timeout=1)
    assert str(caught.value) == (
        "cannot listen on relay.example:0: the host name does not resolve (Name or service "
        "not known); set [server] host to an address of this machine, e.g. 127.0.0.1"
    )


async def test_an_address_not_on_this_machine_is_a_clear_error() -> None:
    with pytest.raises(
        ConfigError, match=r"^cannot listen on 192\.0\.2\.1:0: .*; check \[server\]"
    ):
        await start(web.Application(), "192.0.2.1", 0, shutdown_timeout=1)
