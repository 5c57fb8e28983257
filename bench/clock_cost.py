"""What the Core Clock costs per ordinary turn, counted in instructions rather than timed.

The shared machine's wall clock is too noisy to see a change of a few per cent in the
clock's path; an instruction count is not. This driver runs N ordinary turns in-process
through the pipeline the served relay composes (``proxy.services.open_services``: the real
config model, the real SQLite store in a temporary directory, every stage), with the clock
on or off, and nothing else. Count it under callgrind for N=0 and N=2000; startup cancels
out in the difference::

    for mode in on off; do for n in 0 2000; do
      valgrind --tool=callgrind --callgrind-out-file=/tmp/cc.$mode.$n \\
        .venv/bin/python bench/clock_cost.py $n --clock $mode
    done; done
    # instructions per turn of the clock's path:
    #   ((on,2000) - (on,0) - (off,2000) + (off,0)) / 2000   ("summary:" in each file)

Or let it run callgrind itself: ``.venv/bin/python bench/clock_cost.py --callgrind 2000``.
Without callgrind, ``--profile`` prints a cProfile of the turns (attribution; callgrind
sees CPython's eval loop, not the Python functions).

What is the same as the served relay: the config is ``bench/overhead.py``'s relay config
(every feature on; ``--clock off`` is its ``no-clock`` variant), the messages are its
texts in its order over 32 conversation threads with 32 turns in flight, and each turn is
built from its JSON body as the HTTP edge builds it (``proxy.openai_api``). What is not:
no HTTP (neither the client side nor aiohttp's server or client), and the upstream is an
in-process fake that serialises the forwarded body (as ``HttpUpstream`` does) and answers
``bench/overhead.py``'s completion at once, after one pass of the event loop. Time is
virtual so that runs are deterministic: the relay's clock (a ``FakeClock``) and the event
loop's clock (which times the store's shared commits) both move 1/1500 s per turn
started, the bench's rate at 32 concurrent, so a commit carries about as many turns as
under the bench's load. Every run starts with 128 turns of warm-up (4 a thread), N=0
included, so what the first turns load once (babel's locale data, the store's caches) is
startup too.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.overhead import (  # noqa: E402
    COMPLETION,
    DEFAULT_COMPARISONS,
    relay_raw_config,
    request_bodies,
)
from middleware import json_codec  # noqa: E402
from middleware.clock.source import FakeClock  # noqa: E402
from middleware.types import JSON, Reply, Turn, completion_text  # noqa: E402
from proxy.config import Config  # noqa: E402
from proxy.openai_api import _newest_role, last_user_text  # noqa: E402
from proxy.services import open_services  # noqa: E402

THREADS = 32
WARMUP = 128  # turns run before the counted ones, in every run (N=0 included)
TURN_INTERVAL = 1 / 1500  # seconds of virtual time per turn started
START = datetime(2026, 3, 10, 14, 0, tzinfo=UTC)  # a Tuesday afternoon


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only when the driver says so."""

    def __init__(self) -> None:
        super().__init__()
        self.virtual_now = 0.0

    def time(self) -> float:
        return self.virtual_now


class FakeUpstream:
    """Answers every body with the bench's completion, after one pass of the loop."""

    def __init__(self) -> None:
        self.answer = COMPLETION

    async def complete(self, body: JSON) -> Reply:
        json_codec.dump(body)  # what HttpUpstream sends
        await asyncio.sleep(0)
        return Reply(text=completion_text(self.answer), body=self.answer)

    async def ready(self) -> bool:
        return True

    async def close(self) -> None:
        pass


def config(clock_on: bool, store_path: Path) -> Config:
    overrides: dict[str, Any] = {} if clock_on else DEFAULT_COMPARISONS["no-clock"]
    raw = relay_raw_config("http://127.0.0.1:9/v1", store_path, overrides)
    return Config.model_validate(raw)


async def run(turns: int, clock_on: bool, profile: cProfile.Profile | None) -> None:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop)
    clock = FakeClock(START)
    raw_bodies = request_bodies(stream=False)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = config(clock_on, Path(tmp) / "relay.db")
        async with open_services(cfg, clock=clock, upstream=FakeUpstream()) as services:
            started = 0

            async def worker(index: int, until: int) -> None:
                nonlocal started
                thread = f"c{index}"
                while started < until:
                    raw = raw_bodies[started % len(raw_bodies)]
                    started += 1
                    loop.virtual_now += TURN_INTERVAL
                    clock.advance(timedelta(seconds=TURN_INTERVAL))
                    # As proxy.openai_api builds a turn from a request.
                    body = json_codec.load(raw)
                    assert isinstance(body, dict)
                    turn = Turn(
                        channel="api",
                        thread_id=thread,
                        user_id="bench",
                        text=last_user_text(body["messages"]),
                        continuation=_newest_role(body["messages"]) != "user",
                        resendable=True,
                        received_at=clock.now(),
                        body=body,
                        chat_type="dm",
                        display_name=None,
                    )
                    turn.commands_allowed = cfg.server.api_commands
                    reply = await services.pipeline(turn)
                    assert reply.body is not None and reply.body.startswith(b'{"id"')

            # Warm-up: what the first turns load once (babel's locale data, say) is no
            # part of a turn's cost, and an N=0 run must load it too.
            await asyncio.gather(*(worker(i, WARMUP) for i in range(THREADS)))
            if profile is not None:
                profile.enable()
            await asyncio.gather(*(worker(i, WARMUP + turns) for i in range(THREADS)))
            if profile is not None:
                profile.disable()


def drive(turns: int, clock_on: bool, profile: cProfile.Profile | None = None) -> None:
    loop = VirtualTimeLoop()
    try:
        loop.run_until_complete(run(turns, clock_on, profile))
    finally:
        loop.close()


def callgrind_total(turns: int, clock: str, out: Path) -> int:
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            __file__,
            str(turns),
            "--clock",
            clock,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    summary = re.search(r"^summary: (\d+)", out.read_text(), re.MULTILINE)
    assert summary is not None, f"no summary line in {out}"
    return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", type=int, help="ordinary turns to run (0: startup only)")
    parser.add_argument("--clock", choices=("on", "off"), default="on")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the turns")
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="run the four callgrind counts (on/off, 0/turns) and print the clock's cost",
    )
    args = parser.parse_args()
    if args.callgrind:
        with tempfile.TemporaryDirectory() as tmp:
            totals = {
                (clock, n): callgrind_total(n, clock, Path(tmp) / f"cg.{clock}.{n}")
                for clock in ("on", "off")
                for n in (0, args.turns)
            }
        on = totals["on", args.turns] - totals["on", 0]
        off = totals["off", args.turns] - totals["off", 0]
        per = args.turns or 1
        print(f"clock on:  {on / per:,.0f} instructions per turn")
        print(f"clock off: {off / per:,.0f} instructions per turn")
        print(f"the clock's path: {(on - off) / per:,.0f} instructions per turn")
        return
    profile = cProfile.Profile() if args.profile else None
    drive(args.turns, args.clock == "on", profile)
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(60)


if __name__ == "__main__":
    main()
