"""What the relay costs: the same fake upstream reached directly, through a bare pass-through
proxy (the floor), and through the real relay, all on loopback.

Run from the repository root::

    .venv/bin/python bench/overhead.py [--requests N] [--concurrency 32] [--json]
    .venv/bin/python bench/overhead.py --relay-config-json '{"clock": {"enabled": false}}'
    .venv/bin/python bench/overhead.py --compare 'no-cards={"cards": {"enabled": false}}'
    .venv/bin/python bench/overhead.py --profile        # cProfile the relay process

Every server runs in its own process (``multiprocessing``, spawn), so the load generator
(this process), the upstream, the floor and the relay never share an event loop. The
upstream answers instantly, so what is measured is the cost of the hops. Sequential and
concurrent samples are taken in interleaved rounds (direct, floor, relay, direct, ...) so
a drift of the machine's speed hits every target alike.

Besides the relay as configured (every feature on unless ``--relay-config-json`` says
otherwise), the same run measures relay variants, each in a process and store of its own
and in the same interleaved rounds (``--compare NAME=JSON``; by default ``no-clock``, the
Core Clock off, and ``core``, every optional feature off: only the stages that always run),
so what a feature costs is a difference within one run, not across two runs of a noisy
machine.

Targets checked (PASS/MISS): the relay's added p50 latency is at most 1.5x the floor's,
its requests/s at 32 concurrent is at least 70% of the floor's, and its RSS after the load
is at most 80 MB (issue 2); the Core Clock adds at most 0.3 ms to the added p50 (the relay
against ``no-clock``, issue 3). This is a benchmark, not a test: it exits 0 whether targets
pass or miss, and 1 only if requests failed (the numbers are then not trustworthy).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import io
import itertools
import json
import logging
import math
import multiprocessing as mp
import os
import platform
import pstats
import signal
import sqlite3
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

import aiohttp
from aiohttp import web

HOST = "127.0.0.1"
REPO_ROOT = Path(__file__).resolve().parent.parent

# Hard bounds, so the bench always ends by itself.
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
CHILD_MAX_LIFETIME = 900.0  # a server process exits on its own after this, parent or not
REQUEST_TIMEOUT = 10.0

# The targets (see the module docstring).
MAX_ADDED_LATENCY_RATIO = 1.5
MIN_THROUGHPUT_RATIO = 0.70
MAX_RSS_MB = 80.0
MAX_CLOCK_ADDED_MS = 0.3

# Relay variants measured beside the relay by default (``--compare`` replaces them).
DEFAULT_COMPARISONS: dict[str, dict[str, Any]] = {
    "no-clock": {"clock": {"enabled": False}},
    # Only the stages that always run: identity, recording, commands, forwarding.
    "core": {
        "clock": {"enabled": False},
        "continuity": {"mode": "off"},
        "cards": {"enabled": False},
        "memory": {"enabled": False},
    },
}

# Sent to every target; the direct upstream and the floor ignore the relay's headers.
BENCH_API_KEY = "bench-relay-key-0123456789abcdef"
# Every request carries a different user message, as real traffic does, so nothing the
# relay keeps per text (its analysis caches) is reused across requests: 16 x 16 x 16
# ordinary chat lines, no explicit times or places (a message with a time phrase costs
# the relay's time parser milliseconds more; that is measured elsewhere).
_OPENERS = (
    "Quick question:", "Hey,", "Okay so", "Thanks for that.", "Hmm,", "One more thing:",
    "Sorry to bother you,", "Right,", "Alright,", "So,", "Listen,", "By the way,",
    "Good point.", "Interesting.", "Got it.", "Makes sense.",
)  # fmt: skip
_ASKS = (
    "what time is it where you are", "can you summarise the plan again",
    "how should I name this function", "what would you change in the draft",
    "is the test suite still green", "which option did we pick",
    "can you rephrase the second paragraph", "what is left on the list",
    "do you remember the recipe idea", "how big would the refactor be",
    "should I merge the branch", "what did the reviewer say", "can you check the numbers",
    "is there a simpler way", "what was the error message", "could you explain that step",
)  # fmt: skip
_ENDINGS = (
    "?", " please?", " for me?", "? Thanks.", "? No rush.", "? Just curious.", "? Ta.",
    "? Keep it short.", "? Be honest.", "? In one line.", " again?", "? Cheers.",
    "? I forgot.", "? Thank you!", "? Briefly.", "? Go on.",
)  # fmt: skip
USER_TEXTS = [f"{o} {a}{e}" for o in _OPENERS for a in _ASKS for e in _ENDINGS]


@functools.cache
def request_bodies(stream: bool) -> list[bytes]:
    """One request body per text (built on first use, so only the load generator holds
    them: every server process imports this module too, and its RSS is measured)."""
    extra: dict[str, Any] = (
        {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    )
    return [
        json.dumps(
            {
                "model": "fake-model",
                "messages": [
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": text},
                ],
                **extra,
            }
        ).encode()
        for text in USER_TEXTS
    ]


_next_body = itertools.count()


def next_body(bodies: Sequence[bytes]) -> bytes:
    """The next request body, cycling through every text before any comes again."""
    return bodies[next(_next_body) % len(bodies)]


Kind = Literal["upstream", "floor", "relay"]


# -- the fake upstream: answers instantly ----------------------------------------------------

_CHUNK_BASE = {
    "id": "chatcmpl-bench",
    "object": "chat.completion.chunk",
    "created": 1_790_000_000,
    "model": "fake-model",
}
_REPLY = "It is a quarter past four."
_USAGE = {"prompt_tokens": 21, "completion_tokens": 8, "total_tokens": 29}
COMPLETION = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_790_000_000,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": _REPLY},
                "finish_reason": "stop",
            }
        ],
        "usage": _USAGE,
    }
).encode()


def _sse(payload: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _stream_events() -> list[bytes]:
    words = _REPLY.split(" ")
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": w if i == 0 else " " + w} for i, w in enumerate(words)]
    events = [
        _sse({**_CHUNK_BASE, "choices": [{"index": 0, "delta": d, "finish_reason": None}]})
        for d in deltas
    ]
    events.append(
        _sse({**_CHUNK_BASE, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    )
    events.append(_sse({**_CHUNK_BASE, "choices": [], "usage": _USAGE}))
    events.append(b"data: [DONE]\n\n")
    return events


STREAM_EVENTS = _stream_events()


def upstream_app() -> web.Application:
    async def completions(request: web.Request) -> web.StreamResponse:
        body = json.loads(await request.read())
        if not body.get("stream"):
            return web.Response(body=COMPLETION, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in STREAM_EVENTS:
            await response.write(event)
        await response.write_eof()
        return response

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    return app


# -- the floor: the least an aiohttp relay can do ----------------------------------------------

_FLOOR_SESSION = web.AppKey("floor_session", aiohttp.ClientSession)


def floor_app(upstream_base: str) -> web.Application:
    """Read the body, POST it upstream on a pooled session, hand the answer back."""
    target = f"{upstream_base}/chat/completions"

    async def session_ctx(app: web.Application) -> AsyncIterator[None]:
        connector = aiohttp.TCPConnector(limit=100, keepalive_timeout=30)
        async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:
            app[_FLOOR_SESSION] = session
            yield

    async def relay(request: web.Request) -> web.StreamResponse:
        data = await request.read()
        headers = {"Content-Type": "application/json"}
        async with request.app[_FLOOR_SESSION].post(target, data=data, headers=headers) as up:
            if up.content_type != "text/event-stream":
                body = await up.read()
                return web.Response(body=body, status=up.status, content_type=up.content_type)
            response = web.StreamResponse(
                status=up.status, headers={"Content-Type": "text/event-stream"}
            )
            await response.prepare(request)
            async for chunk in up.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    app = web.Application()
    app.cleanup_ctx.append(session_ctx)
    app.router.add_post("/v1/chat/completions", relay)
    return app


# -- the relay: the real app, with a config that overrides can change --------------------------


def deep_merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` applied; nested tables merge, everything else replaces."""
    merged = dict(base)
    for key, value in overrides.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


def relay_raw_config(
    upstream_base: str, store_path: Path, overrides: Mapping[str, Any]
) -> dict[str, Any]:
    """The relay's config as a dict (what a TOML file would hold), overrides applied."""
    base: dict[str, Any] = {
        "server": {"host": HOST, "port": 0, "shutdown_timeout": 2.0},
        "upstream": {
            "mode": "forward",
            "base_url": upstream_base,
            "api_key": "sk-bench-upstream",
            "model": "fake-model",
            "connect_timeout": 2.0,
            "read_timeout": REQUEST_TIMEOUT,
        },
        "store": {"path": str(store_path)},
    }
    return deep_merge(base, overrides)


def _ensure_importable() -> None:
    # ``python bench/overhead.py`` puts bench/ first on sys.path; the project is normally
    # installed (editable) in the venv, but make the checkout importable regardless.
    if str(REPO_ROOT) not in sys.path:
        sys.path.append(str(REPO_ROOT))


def validate_relay_config(raw: Mapping[str, Any]) -> None:
    _ensure_importable()
    from proxy.config import Config

    Config.model_validate(raw)


def relay_app(raw_config: Mapping[str, Any]) -> web.Application:
    _ensure_importable()
    from proxy.app import build_app
    from proxy.config import Config

    return build_app(Config.model_validate(raw_config))


# -- server processes --------------------------------------------------------------------------


async def _start_runner(app: web.Application) -> tuple[int, Callable[[], Awaitable[None]]]:
    # The same runner settings as proxy.server.start, so only the app differs.
    runner = web.AppRunner(app, shutdown_timeout=2.0, handler_cancellation=True, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, HOST, 0).start()
    return int(runner.addresses[0][1]), runner.cleanup


async def _child_main(kind: Kind, conn: Connection, options: dict[str, Any]) -> None:
    stop: Callable[[], Awaitable[None]]
    if kind == "relay":
        from proxy.server import start

        server = await start(relay_app(options["config"]), HOST, 0, shutdown_timeout=2.0)
        port, stop = server.port, server.stop
    elif kind == "floor":
        port, stop = await _start_runner(floor_app(options["upstream_base"]))
    else:
        port, stop = await _start_runner(upstream_app())

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def parent_spoke() -> None:
        # A "stop" message, or EOF because the parent is gone: either way, stop.
        loop.remove_reader(conn.fileno())
        stopping.set()

    loop.add_reader(conn.fileno(), parent_spoke)
    profile_path: str | None = options.get("profile_path")
    profiler = cProfile.Profile() if profile_path else None
    conn.send(port)
    if profiler is not None:
        profiler.enable()
    try:
        await asyncio.wait_for(stopping.wait(), CHILD_MAX_LIFETIME)
    except TimeoutError:
        logging.getLogger("bench").warning("%s: lifetime limit reached, stopping", kind)
    finally:
        if profiler is not None:
            profiler.disable()
        await stop()
    if profiler is not None and profile_path:
        profiler.dump_stats(profile_path)


def _child(kind: Kind, conn: Connection, options: dict[str, Any]) -> None:
    """Entry point of a server process."""
    # Ctrl-C goes to the whole process group; the parent handles it and stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format=f"[{kind}] %(levelname)s %(message)s")
    asyncio.run(_child_main(kind, conn, options))


@dataclass(frozen=True)
class Server:
    kind: Kind
    pid: int
    port: int

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}/v1"


class BenchError(Exception):
    pass


@contextmanager
def running(kind: Kind, options: dict[str, Any]) -> Iterator[Server]:
    """A server in its own (spawned) process; stopped, and waited for, on exit."""
    ctx = mp.get_context("spawn")
    parent_conn, child_conn = ctx.Pipe()
    process = ctx.Process(
        target=_child, args=(kind, child_conn, options), name=f"bench-{kind}", daemon=True
    )
    process.start()
    child_conn.close()
    try:
        if not parent_conn.poll(STARTUP_TIMEOUT):
            raise BenchError(f"the {kind} did not start within {STARTUP_TIMEOUT:g}s")
        try:
            port = int(parent_conn.recv())
        except EOFError:
            process.join(STOP_TIMEOUT)
            raise BenchError(
                f"the {kind} process died while starting (exit code {process.exitcode}); "
                "its error is printed above"
            ) from None
        assert process.pid is not None
        yield Server(kind, process.pid, port)
    finally:
        with suppress(OSError):
            parent_conn.send("stop")
        parent_conn.close()
        process.join(STOP_TIMEOUT)
        if process.is_alive():
            process.terminate()
            process.join(STOP_TIMEOUT)
        if process.is_alive():
            process.kill()
            process.join()


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MB, from /proc; NaN where unavailable."""
    found = {"VmRSS": math.nan, "VmHWM": math.nan}
    with suppress(OSError), open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in found:
                found[name] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


# -- the load generator ------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    url: str


@dataclass(frozen=True)
class Plan:
    sequential: int  # plain requests one at a time, per target; as many streamed
    concurrent: int  # plain requests at `concurrency` in flight, per target
    concurrency: int
    rounds: int
    warmup: int
    phase_seconds: float  # time cap for one phase of one target, over all rounds


@dataclass
class Samples:
    plain: list[float] = field(default_factory=list)
    first_chunk: list[float] = field(default_factory=list)
    stream: list[float] = field(default_factory=list)
    concurrent_requests: int = 0
    concurrent_seconds: float = 0.0
    errors: int = 0
    first_error: str = ""

    def failed(self, exc: BaseException) -> None:
        self.errors += 1
        if not self.first_error:
            self.first_error = f"{type(exc).__name__}: {exc}"


HEADERS = {
    "Content-Type": "application/json",
    "Authorization": f"Bearer {BENCH_API_KEY}",
    "X-Chronorelay-Channel": "api",
}
_FAILURES = (aiohttp.ClientError, TimeoutError, BenchError)


async def plain_request(session: aiohttp.ClientSession, url: str, thread: str) -> float:
    started = time.perf_counter()
    async with session.post(
        url,
        data=next_body(request_bodies(stream=False)),
        headers={**HEADERS, "X-Chronorelay-Thread": thread},
    ) as response:
        body = await response.read()
    elapsed = time.perf_counter() - started
    if response.status != 200 or not body.startswith(b'{"id"'):
        raise BenchError(f"HTTP {response.status}: {body[:200]!r}")
    return elapsed


async def stream_request(
    session: aiohttp.ClientSession, url: str, thread: str
) -> tuple[float, float]:
    """(time to the first body chunk, time to the end of the stream)."""
    started = time.perf_counter()
    async with session.post(
        url,
        data=next_body(request_bodies(stream=True)),
        headers={**HEADERS, "X-Chronorelay-Thread": thread},
    ) as response:
        if response.status != 200:
            raise BenchError(f"HTTP {response.status}: {(await response.read())[:200]!r}")
        tail = await response.content.readany()
        first = time.perf_counter() - started
        async for chunk in response.content.iter_any():
            tail = (tail + chunk)[-64:]
    total = time.perf_counter() - started
    if not tail.endswith(b"data: [DONE]\n\n"):
        raise BenchError(f"the stream did not end with [DONE]: ...{tail!r}")
    return first, total


async def sequential(
    session: aiohttp.ClientSession,
    target: Target,
    samples: Samples,
    count: int,
    streamed: bool,
    seconds: float,
) -> None:
    deadline = time.perf_counter() + seconds
    for _ in range(count):
        if time.perf_counter() > deadline:
            break
        try:
            if streamed:
                first, total = await stream_request(session, target.url, "seq")
                samples.first_chunk.append(first)
                samples.stream.append(total)
            else:
                samples.plain.append(await plain_request(session, target.url, "seq"))
        except _FAILURES as exc:
            samples.failed(exc)


async def concurrent(
    session: aiohttp.ClientSession,
    target: Target,
    samples: Samples | None,
    count: int,
    workers: int,
    seconds: float,
) -> None:
    """``count`` plain requests with ``workers`` in flight; recorded unless a warm-up."""
    remaining = count
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        nonlocal remaining, done
        while remaining > 0 and time.perf_counter() < deadline:
            remaining -= 1
            try:
                await plain_request(session, target.url, f"c{index}")
                done += 1
            except _FAILURES as exc:
                if samples is not None:
                    samples.failed(exc)

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(workers)))
    if samples is not None:
        samples.concurrent_seconds += time.perf_counter() - started
        samples.concurrent_requests += done


async def warm_up(session: aiohttp.ClientSession, target: Target, plan: Plan) -> None:
    # Not recorded: opens the pooled connections on every hop, fills caches, lets the
    # relay's store settle, and runs each code path a few hundred times.
    scratch = Samples()
    await sequential(session, target, scratch, plan.warmup, False, plan.phase_seconds)
    await sequential(session, target, scratch, plan.warmup // 2, True, plan.phase_seconds)
    await concurrent(
        session, target, None, plan.concurrency * 8, plan.concurrency, plan.phase_seconds
    )
    if scratch.errors:
        raise BenchError(f"{target.name}: warm-up failed: {scratch.first_error}")


async def run_load(targets: Sequence[Target], plan: Plan) -> dict[str, Samples]:
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
    results = {t.name: Samples() for t in targets}
    per_round_seq = math.ceil(plan.sequential / plan.rounds)
    per_round_conc = math.ceil(plan.concurrent / plan.rounds)
    cap = plan.phase_seconds / plan.rounds
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        for target in targets:
            await warm_up(session, target, plan)
        for _ in range(plan.rounds):
            for target in targets:
                await sequential(session, target, results[target.name], per_round_seq, False, cap)
            for target in targets:
                await sequential(session, target, results[target.name], per_round_seq, True, cap)
            for target in targets:
                await concurrent(
                    session, target, results[target.name], per_round_conc, plan.concurrency, cap
                )
    return results


# -- the report --------------------------------------------------------------------------------


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile; NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def summarize(samples: Samples) -> dict[str, float]:
    ms = 1000.0
    seconds = samples.concurrent_seconds
    return {
        "plain_n": len(samples.plain),
        "plain_p50_ms": percentile(samples.plain, 0.50) * ms,
        "plain_p99_ms": percentile(samples.plain, 0.99) * ms,
        "stream_n": len(samples.stream),
        "stream_first_chunk_p50_ms": percentile(samples.first_chunk, 0.50) * ms,
        "stream_first_chunk_p99_ms": percentile(samples.first_chunk, 0.99) * ms,
        "stream_total_p50_ms": percentile(samples.stream, 0.50) * ms,
        "stream_total_p99_ms": percentile(samples.stream, 0.99) * ms,
        "concurrent_n": samples.concurrent_requests,
        "concurrent_rps": samples.concurrent_requests / seconds if seconds else math.nan,
        "errors": samples.errors,
    }


ADDED = {
    "plain": "plain_p50_ms",
    "stream_first_chunk": "stream_first_chunk_p50_ms",
    "stream_total": "stream_total_p50_ms",
}


def added_latency(summary: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """p50 minus the direct p50, per proxied target (every target but "direct") and measure."""
    direct = summary["direct"]
    return {
        name: {measure: summary[name][key] - direct[key] for measure, key in ADDED.items()}
        for name in summary
        if name != "direct"
    }


def _ratio(numerator: float, denominator: float) -> float:
    if denominator <= 0 or math.isnan(denominator):
        return math.inf if numerator > 0 else math.nan
    return numerator / denominator


def checks(
    summary: Mapping[str, Mapping[str, float]],
    added: Mapping[str, Mapping[str, float]],
    relay_rss: float,
    clock_off: str | None = None,
) -> list[dict[str, Any]]:
    """Issue 2's targets for the relay; with ``clock_off`` (a variant that differs from the
    relay only by the Core Clock being off), issue 3's budget for the clock too."""
    rows: list[dict[str, Any]] = []
    labels = {
        "plain": "added p50, plain",
        "stream_first_chunk": "added p50, stream first chunk",
        "stream_total": "added p50, stream complete",
    }
    for measure, label in labels.items():
        ratio = _ratio(added["relay"][measure], added["floor"][measure])
        rows.append(
            {
                "name": f"relay/floor {label}",
                "value": ratio,
                "unit": "x",
                "target": f"<= {MAX_ADDED_LATENCY_RATIO:g}x",
                "pass": ratio <= MAX_ADDED_LATENCY_RATIO,
            }
        )
    ratio = _ratio(summary["relay"]["concurrent_rps"], summary["floor"]["concurrent_rps"])
    rows.append(
        {
            "name": "relay/floor req/s",
            "value": ratio * 100,
            "unit": "%",
            "target": f">= {MIN_THROUGHPUT_RATIO * 100:g}%",
            "pass": ratio >= MIN_THROUGHPUT_RATIO,
        }
    )
    rows.append(
        {
            "name": "relay RSS after load",
            "value": relay_rss,
            "unit": " MB",
            "target": f"<= {MAX_RSS_MB:g} MB",
            "pass": relay_rss <= MAX_RSS_MB,
        }
    )
    if clock_off is not None:
        cost = added["relay"]["plain"] - added[clock_off]["plain"]
        rows.append(
            {
                "name": f"Core Clock cost (relay - {clock_off}) p50",
                "value": cost,
                "unit": " ms",
                "target": f"<= {MAX_CLOCK_ADDED_MS:g} ms",
                "pass": cost <= MAX_CLOCK_ADDED_MS,
            }
        )
    return rows


def render_table(report: Mapping[str, Any]) -> str:
    summary = report["targets"]
    added = report["added_p50_ms"]
    names = list(summary)
    relays = names[2:]
    plan = report["plan"]
    env = report["environment"]
    lines = [
        f"chronorelay overhead bench: {HOST} only, {env['cpus']} CPUs, Python {env['python']}, "
        f"aiohttp {env['aiohttp']}",
        f"one at a time: {summary['relay']['plain_n']} plain + {summary['relay']['stream_n']} "
        f"streamed per target; {plan['concurrency']} concurrent: "
        f"{summary['relay']['concurrent_n']} plain per target; {plan['rounds']} interleaved "
        "rounds, after warm-up",
    ]
    if report["relay_config_overrides"]:
        lines.append(f"relay config overrides: {json.dumps(report['relay_config_overrides'])}")
    for name, overrides in report["comparisons"].items():
        lines.append(f"{name}: the relay with {json.dumps(overrides)}")
    lines.append("")
    header = f"{'':34}" + "".join(f"{n:>10}" for n in names)
    lines.append(header)
    lines.append("-" * len(header))

    def row(label: str, values: Sequence[float | None], fmt: str = "{:10.3f}") -> None:
        cells = "".join(
            f"{'-':>10}" if v is None or math.isnan(v) else fmt.format(v) for v in values
        )
        lines.append(f"{label:34}{cells}")

    def measure(label: str, key: str) -> None:
        row(label, [summary[n][key] for n in names])

    measure("plain p50 (ms)", "plain_p50_ms")
    measure("plain p99 (ms)", "plain_p99_ms")

    def added_row(label: str, measure: str) -> None:
        row(label, [None, *(added[n][measure] for n in names[1:])])

    def per_floor(label: str, values: Mapping[str, float], fmt: str) -> None:
        row(label, [None, None, *(values[n] for n in relays)], fmt)

    added_row("plain added p50 (ms)", "plain")
    measure("stream first chunk p50 (ms)", "stream_first_chunk_p50_ms")
    measure("stream first chunk p99 (ms)", "stream_first_chunk_p99_ms")
    added_row("stream first chunk added p50 (ms)", "stream_first_chunk")
    measure("stream complete p50 (ms)", "stream_total_p50_ms")
    measure("stream complete p99 (ms)", "stream_total_p99_ms")
    added_row("stream complete added p50 (ms)", "stream_total")
    row(
        f"req/s at {plan['concurrency']} concurrent (plain)",
        [summary[n]["concurrent_rps"] for n in names],
        "{:10.0f}",
    )
    per_floor(
        "added p50 / floor's, plain",
        {n: _ratio(added[n]["plain"], added["floor"]["plain"]) for n in relays},
        "{:9.2f}x",
    )
    per_floor(
        "req/s / floor's",
        {
            n: 100 * _ratio(summary[n]["concurrent_rps"], summary["floor"]["concurrent_rps"])
            for n in relays
        },
        "{:9.0f}%",
    )
    row("RSS after load (MB)", [report["rss_mb"][n] for n in names], "{:10.1f}")
    row("peak RSS (MB)", [report["peak_rss_mb"][n] for n in names], "{:10.1f}")
    errors = [summary[n]["errors"] for n in names]
    if any(errors):
        row("failed requests", errors, "{:10.0f}")
    lines.append("")
    for name in relays:
        stored = report["store_messages"][name]
        if stored is None:
            lines.append(f"{name} store: no readable SQLite file after the run")
        else:
            lines.append(f"{name} store: {stored} messages written to SQLite")
    lines.append("")
    for check in report["checks"]:
        verdict = "PASS" if check["pass"] else "MISS"
        value = f"{check['value']:.2f}{check['unit']}"
        lines.append(f"  {verdict}  {check['name']:40} {value:>9}   (target {check['target']})")
    for name in names:
        if report["first_errors"].get(name):
            lines.append(f"  ! {name}: first failure: {report['first_errors'][name]}")
    return "\n".join(lines)


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None (so the JSON is strict), floats rounded."""
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def count_messages(store_path: Path) -> int | None:
    """Messages in the relay's store after the run; None if it cannot be read."""
    if not store_path.exists():
        return None
    try:
        with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
    except sqlite3.Error:
        return None


def hotspots(profile_path: Path, limit: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(str(profile_path), stream=out)
    stats.strip_dirs()
    out.write("relay process, by own time (tottime):\n")
    stats.sort_stats("tottime").print_stats(limit)
    out.write("relay process, by cumulative time:\n")
    stats.sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


# -- main --------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Measure the relay's added latency, throughput and memory against a "
        "direct call and a bare pass-through proxy, on loopback.",
    )
    parser.add_argument(
        "--requests",
        type=int,
        default=1000,
        metavar="N",
        help="one-at-a-time requests per target, plain and streamed each (default 1000); "
        "the concurrent phase sends 3N per target",
    )
    parser.add_argument("--concurrency", type=int, default=32, help="in flight (default 32)")
    parser.add_argument(
        "--rounds", type=int, default=4, help="interleaved rounds over the targets (default 4)"
    )
    parser.add_argument(
        "--phase-seconds",
        type=float,
        default=15.0,
        help="time cap for one phase of one target, all rounds together (default 15)",
    )
    parser.add_argument(
        "--relay-config-json",
        default="{}",
        metavar="JSON",
        help="overrides merged into the relay's config, e.g. "
        '\'{"clock": {"enabled": false}}\'. With [auth] keys, use the key '
        f"{BENCH_API_KEY!r} (the one the bench sends).",
    )
    parser.add_argument(
        "--compare",
        action="append",
        default=None,
        metavar="NAME=JSON",
        help="also measure the relay with these overrides (merged over --relay-config-json), "
        "in the same rounds; repeatable. Default: "
        + ", ".join(f"{n}={json.dumps(o)}" for n, o in DEFAULT_COMPARISONS.items()),
    )
    parser.add_argument(
        "--no-compare", action="store_true", help="measure the relay alone (no variants)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run cProfile in the relay process and print its hotspots (slows the relay)",
    )
    parser.add_argument("--profile-lines", type=int, default=25, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BenchError as exc:
        print(f"bench failed: {exc}", file=sys.stderr)
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.requests < 1 or args.concurrency < 1 or args.rounds < 1:
        raise SystemExit("--requests, --concurrency and --rounds must be at least 1")
    overrides = _json_object(args.relay_config_json, "--relay-config-json")
    comparisons = {} if args.no_compare else _comparisons(args.compare)
    plan = Plan(
        sequential=args.requests,
        concurrent=3 * args.requests,
        concurrency=args.concurrency,
        rounds=args.rounds,
        warmup=min(300, args.requests),
        phase_seconds=args.phase_seconds,
    )

    # Each relay's config overrides, the relay first.
    variants = {"relay": overrides} | {
        name: deep_merge(overrides, extra) for name, extra in comparisons.items()
    }
    for name, variant in variants.items():
        try:  # before starting anything; the real upstream address is filled in below
            validate_relay_config(relay_raw_config(f"http://{HOST}:9/v1", Path("x"), variant))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise SystemExit(f"the {name} config (with overrides) is invalid:\n{exc}") from exc

    with tempfile.TemporaryDirectory(prefix="chronorelay-bench-") as tmp:
        store_paths = {name: Path(tmp) / f"{name}.sqlite3" for name in variants}
        profile_path = Path(tmp) / "relay.prof" if args.profile else None
        with ExitStack() as servers:
            upstream = servers.enter_context(running("upstream", {}))
            floor = servers.enter_context(running("floor", {"upstream_base": upstream.base}))
            started_servers = {"direct": upstream, "floor": floor}
            for name, variant in variants.items():
                relay_options: dict[str, Any] = {
                    "config": relay_raw_config(upstream.base, store_paths[name], variant)
                }
                if profile_path is not None and name == "relay":
                    relay_options["profile_path"] = str(profile_path)
                started_servers[name] = servers.enter_context(running("relay", relay_options))
            targets = [
                Target(name, f"{server.base}/chat/completions")
                for name, server in started_servers.items()
            ]
            started = time.perf_counter()
            samples = asyncio.run(run_load(targets, plan))
            elapsed = time.perf_counter() - started
            memory = {name: rss_mb(server.pid) for name, server in started_servers.items()}
        # Servers stopped: the stores are closed and the profile written.
        store_messages = {name: count_messages(path) for name, path in store_paths.items()}
        profile_text = hotspots(profile_path, args.profile_lines) if profile_path else ""

    summary = {name: summarize(s) for name, s in samples.items()}
    added = added_latency(summary)
    report: dict[str, Any] = {
        "environment": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "aiohttp": aiohttp.__version__,
            "profiled": args.profile,
        },
        "plan": vars(plan) | {"load_seconds": round(elapsed, 1)},
        "relay_config_overrides": overrides,
        "comparisons": comparisons,
        "targets": summary,
        "added_p50_ms": added,
        # RSS of each server process; "direct" is the upstream's own process.
        "rss_mb": {name: rss for name, (rss, _) in memory.items()},
        "peak_rss_mb": {name: peak for name, (_, peak) in memory.items()},
        "store_messages": store_messages,
        "first_errors": {name: s.first_error for name, s in samples.items() if s.first_error},
    }
    report["checks"] = checks(
        summary, added, report["rss_mb"]["relay"], _clock_off_variant(overrides, comparisons)
    )
    if args.json:
        print(json.dumps(_finite(report), indent=2))
        if args.profile:
            print(profile_text, file=sys.stderr)
    else:
        print(render_table(report))
        print(f"\n(load phase {elapsed:.1f}s)")
        if args.profile:
            print("\nnote: the relay ran under cProfile; its timings above are inflated.\n")
            print(profile_text)
    return 1 if any(s.errors for s in samples.values()) else 0


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise SystemExit(f"{option} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise SystemExit(f"{option} must be a JSON object")
    return value


def _comparisons(specs: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    """``--compare NAME=JSON`` options as {name: overrides}; the defaults without any."""
    if specs is None:
        return dict(DEFAULT_COMPARISONS)
    found: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        if not sep or not name or name in ("direct", "floor", "relay") or name in found:
            raise SystemExit(
                f"--compare {spec!r}: expected NAME=JSON with a new name (not direct, floor, "
                'relay or one given before), e.g. --compare \'no-clock={"clock": '
                '{"enabled": false}}\''
            )
        found[name] = _json_object(text, f"--compare {name}")
    return found


def _clock_off_variant(
    overrides: Mapping[str, Any], comparisons: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The variant that is exactly the relay with the Core Clock off, while the relay has it
    on (what issue 3's clock budget compares); None if there is none."""
    if overrides.get("clock", {}).get("enabled", True) is False:
        return None
    clock_off = deep_merge(overrides, {"clock": {"enabled": False}})
    for name, extra in comparisons.items():
        if deep_merge(overrides, extra) == clock_off:
            return name
    return None


if __name__ == "__main__":
    sys.exit(main())
