"""The command line (also ``python -m proxy``): ``chronorelay serve | chat | check-config |
export-clock-state | import-clock-state``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from middleware.clock.source import SystemClock
from middleware.clock.state_file import read_clock_state
from middleware.errors import ChronorelayError, ConfigError, StoreError
from middleware.store import ImportCounts, SqliteStore, Store
from middleware.types import JSON
from proxy.config import CONFIG_ENV, Config, config_path, load_config

T = TypeVar("T")

log = logging.getLogger("chronorelay")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    # The chat's terminal is its log's too: only what goes wrong interrupts the chat.
    level = args.log_level or ("warning" if args.command == "chat" else "info")
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        named_by = "--config" if args.config else f"${CONFIG_ENV}"
        config = load_config(config_path(args.config), named_by=named_by)
        if args.command == "check-config":
            return _check_config(args.config, config, full=args.full)
        if args.command == "chat":
            asyncio.run(_chat(config, config_path(args.config)))
            return 0
        if args.command == "export-clock-state":
            return _export_clock_state(config, args.output)
        if args.command == "import-clock-state":
            return _import_clock_state(config, args.file)
        asyncio.run(_serve(config))
        return 0
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    except ChronorelayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chronorelay",
        description="A relay between chat channels and an LLM that keeps time and continuity.",
        epilog="'chronorelay COMMAND --help' describes a command and its defaults.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        metavar="PATH",
        help=f"TOML config file (default: ${CONFIG_ENV}, else the built-in defaults)",
    )
    common.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        help="the least severe log records written to stderr (default: info; warning for "
        "chat, whose terminal they share)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, summary, description in _COMMANDS:
        commands.add_parser(name, parents=[common], help=summary, description=description)
    export = commands.choices["export-clock-state"]
    export.add_argument(
        "--output", "-o", metavar="FILE", default="-", help="where to write it (default: stdout)"
    )
    commands.choices["check-config"].add_argument(
        "--full",
        action="store_true",
        help="check the store with PRAGMA integrity_check, which also compares every index "
        "with its table (slower), instead of PRAGMA quick_check",
    )
    merge = commands.choices["import-clock-state"]
    merge.add_argument("file", metavar="FILE", help="the JSON file ('-' reads stdin)")
    return parser


# Each command: its line in 'chronorelay --help', and what its own --help says first.
_COMMANDS = (
    (
        "serve",
        "run the relay's HTTP server and its chat channels",
        "Run the relay: the OpenAI-compatible HTTP API on [server] host and port (default: "
        "127.0.0.1:8790) and the chat channels the config enables, until Ctrl-C. Without a "
        "config the upstream is 'inspect' (each answer shows the messages that would be "
        "forwarded) and the store is ./chronorelay.sqlite3.",
    ),
    (
        "chat",
        "chat with the relay in this terminal",
        "Chat with the relay in this terminal, through the same pipeline as every channel. "
        "You are terminal:<your login name>, always in the same thread, kept in the "
        "config's store: a later chat goes on from it, and a second chat run at the same "
        "time writes to it too. Each line is a message (lines pasted at once are one); "
        "/help lists the commands; /quit, Ctrl-D or Ctrl-C leaves, saving where you left "
        "off if there is something new. Dates in answers are written in your terminal's "
        "language (LC_ALL, else LC_TIME, else LANG); /lang chooses another.",
    ),
    (
        "check-config",
        "validate the configuration and check the store",
        "Validate the configuration and show what serve would use: the upstream, the "
        "address it binds, the API keys, the chat channels and the store. Every problem is "
        "listed with its line; the exit status is then 2. Then check the store file "
        "without writing to it (safe while serve runs on it): its schema version against "
        "this relay's, its size and its WAL's, and PRAGMA quick_check, which reads every "
        "page and finds corruption that serve's start-up does not (about 1 s per 250 MB). "
        "A store with a problem gives exit status 1 and what to do; a missing one is "
        "created by serve.",
    ),
    (
        "export-clock-state",
        "write the clock state as spec 000 §10.2 version 3 JSON",
        "Write the store's clock state (users, threads, links, latest actions) as spec 000 "
        "§10.2 clock-state.json version 3, UTC instants.",
    ),
    (
        "import-clock-state",
        "merge a version 3 clock-state file into the store (times never move back)",
        "Merge a version 3 clock-state file into the config's store: new users and "
        "threads are added, known ones keep the later of each time (times never move "
        "back). The file is checked before the store is touched.",
    ),
)


def _check_config(path: str | None, config: Config, *, full: bool) -> int:
    where = config_path(path)
    upstream = config.upstream
    from proxy.upstream import shown_url

    target = (
        shown_url(upstream.base_url) if upstream.mode == "forward" else "(answers with the prompt)"
    )
    admin = "on" if config.auth.admin_token else "off"
    print(f"{where or 'built-in defaults'}: OK")
    print(f"  upstream: {upstream.mode} {target}")
    # What serve will bind, which is loopback whatever [server] host says while no key is set.
    from proxy.server import bind_host

    loopback = "" if config.auth.keys else " (loopback only: no [auth] keys)"
    print(f"  listen:   {bind_host(config)}:{config.server.port}{loopback}")
    print(f"  api keys: {len(config.auth.keys)}; admin API {admin}")
    from proxy.channel_runner import enabled_channels

    print(f"  channels: {', '.join(enabled_channels(config)) or 'none'} (with serve)")
    return _check_store(Path(config.store.path), full=full)


def _check_store(path: Path, *, full: bool) -> int:
    from middleware.store.sqlite_health import check_store_health

    health = asyncio.run(check_store_health(path, full=full))
    if not health.exists:
        print(f"  store:    {path} (not there yet: serve creates it)")
        return 0
    print(f"  store:    {path}")
    if health.version is not None:
        print(f"    schema: version {health.version} (this relay's: {health.expected_version})")
    wal = "no WAL" if health.wal_size is None else f"WAL {_size(health.wal_size)}"
    print(f"    size:   {_size(health.size)}, {wal}")
    if health.findings == ():
        print(f"    {health.check}: ok")
    elif health.findings:
        print(f"    {health.check}: {len(health.findings)} problem(s)")
        for finding in health.findings[:_FINDINGS_SHOWN]:
            print(f"      {finding}")
        if len(health.findings) > _FINDINGS_SHOWN:
            print(f"      … and {len(health.findings) - _FINDINGS_SHOWN} more")
    for problem in health.problems:
        print(f"store problem: {problem}", file=sys.stderr)
    return 0 if health.healthy else 1


# How many of SQLite's findings check-config prints: the first say where the damage is.
_FINDINGS_SHOWN = 5


def _size(count: int) -> str:
    """``count`` bytes for a reader: 4.0 KiB, 240.3 MiB."""
    if count < 1024:
        return f"{count} bytes"
    value = float(count)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


async def _serve(config: Config) -> None:
    from proxy.app import build_app
    from proxy.server import serve

    await serve(build_app(config), config)


async def _chat(config: Config, config_file: Path | None) -> None:
    from channels.terminal import TerminalChannel, environment_locale
    from proxy.services import open_services

    async with open_services(config) as services:
        locale = environment_locale(os.environ)
        await TerminalChannel(services, config_file=config_file, locale=locale).run()


def _export_clock_state(config: Config, output: str) -> int:
    if not Path(config.store.path).exists():
        raise StoreError(
            f"there is no store at {config.store.path}; check [store] path (and --config)"
        )

    async def export(store: Store) -> tuple[JSON, tuple[str, ...]]:
        from proxy.admin import export_document

        return await export_document(store, config, SystemClock().now())

    document, warnings = asyncio.run(_with_store(config, export))
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if output == "-":
        sys.stdout.write(text)
        return 0
    try:
        _write_atomically(Path(output), text)
    except OSError as exc:
        print(f"error: cannot write {output}: {exc}", file=sys.stderr)
        return 1
    users, threads = len(document["users"]), len(document["threads"])
    print(f"wrote {users} users and {threads} threads to {output}", file=sys.stderr)
    return 0


def _import_clock_state(config: Config, source: str) -> int:
    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {source}: {exc}", file=sys.stderr)
        return 1
    try:
        document = json.loads(raw)
    except ValueError as exc:
        print(f"error: {source} is not valid JSON: {exc}", file=sys.stderr)
        return 1

    # Validated before the store is opened: a bad file touches nothing.
    now = SystemClock().now()
    snapshot = read_clock_state(document, now=now)

    async def merge(store: Store) -> ImportCounts:
        return await store.import_clock_state(snapshot, now=now)

    counts = asyncio.run(_with_store(config, merge))
    print(
        f"imported {source}: users {counts.users_created} new, {counts.users_merged} merged; "
        f"threads {counts.threads_created} new, {counts.threads_merged} merged; "
        f"{counts.links} links"
    )
    return 0


async def _with_store(config: Config, action: Callable[[Store], Awaitable[T]]) -> T:
    store = SqliteStore(Path(config.store.path), commit_delay=config.store.commit_delay_ms / 1000)
    await store.open()
    try:
        return await action(store)
    finally:
        await store.close()


def _write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename it over ``path`` (spec 000
    §10.3): a reader sees the old file or the new one, never half of it."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
