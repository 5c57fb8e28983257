"""The command line: ``chronorelay serve | chat | check-config`` (also ``python -m proxy``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from middleware.errors import ChronorelayError, ConfigError
from proxy.config import CONFIG_ENV, Config, config_path, load_config

log = logging.getLogger("chronorelay")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        config = load_config(config_path(args.config))
        if args.command == "check-config":
            return _check_config(args.config, config)
        if args.command == "chat":
            asyncio.run(_chat(config))
            return 0
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
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config", metavar="PATH", help=f"TOML config file (default: ${CONFIG_ENV}, else defaults)"
    )
    common.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", parents=[common], help="run the relay's HTTP server")
    commands.add_parser("chat", parents=[common], help="chat with the relay in this terminal")
    commands.add_parser("check-config", parents=[common], help="validate the configuration")
    return parser


def _check_config(path: str | None, config: Config) -> int:
    where = config_path(path)
    upstream = config.upstream
    target = upstream.base_url if upstream.mode == "forward" else "(answers with the prompt)"
    admin = "on" if config.auth.admin_token else "off"
    print(f"{where or 'built-in defaults'}: OK")
    print(f"  upstream: {upstream.mode} {target}")
    print(f"  store:    {config.store.path}")
    print(f"  listen:   {config.server.host}:{config.server.port}")
    print(f"  api keys: {len(config.auth.keys)}; admin API {admin}")
    return 0


async def _serve(config: Config) -> None:
    from proxy.app import build_app
    from proxy.server import serve

    await serve(build_app(config), config)


async def _chat(config: Config) -> None:
    from channels.terminal import TerminalChannel
    from proxy.services import open_services

    async with open_services(config) as services:
        await TerminalChannel(services).run()
