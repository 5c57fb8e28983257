"""The ``export-clock-state`` and ``import-clock-state`` verbs, against real store files."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from middleware.store import InboundRecord, SqliteStore
from middleware.store.migrations import LATEST_VERSION
from proxy.cli import main
from tests.middleware.test_store_health import make_store, overwrite, page_of

THREAD = "agent:main:telegram:dm:42"


def config_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    store = (tmp_path / f"{name}.sqlite3").as_posix()
    path.write_text(f'[store]\npath = "{store}"\n\n[clock]\nagent_timezone = "Europe/Berlin"\n')
    return path


async def seed(path: Path) -> None:
    store = SqliteStore(path)
    await store.open()
    try:
        await store.record_inbound(
            InboundRecord(
                user_key="telegram:42",
                channel="telegram",
                platform_user_id="42",
                display_name="Ada",
                thread_key=THREAD,
                chat_type="dm",
                text="hello",
                received_at=datetime(2026, 2, 9, 1, 0, tzinfo=UTC),
            )
        )
        await store.set_user_timezone("telegram:42", "Asia/Kathmandu")
        await store.set_thread_timezone(THREAD, "Asia/Kathmandu")
    finally:
        await store.close()


def export(config: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["export-clock-state", "--config", str(config)]) == 0
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


def test_export_then_import_into_another_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = config_file(tmp_path, "a"), config_file(tmp_path, "b")
    asyncio.run(seed(tmp_path / "a.sqlite3"))

    document = export(source, capsys)
    assert document["version"] == 3
    users = document["users"]
    assert isinstance(users, dict) and users["telegram:42"]["default_tz"] == "Asia/Kathmandu"

    saved = tmp_path / "out" / "clock-state.json"
    saved.parent.mkdir()
    assert main(["export-clock-state", "--config", str(source), "--output", str(saved)]) == 0
    assert "wrote 1 users and 1 threads" in capsys.readouterr().err
    assert json.loads(saved.read_text(encoding="utf-8")) == document
    assert [p.name for p in saved.parent.iterdir()] == ["clock-state.json"]  # no temp left

    assert main(["import-clock-state", "--config", str(target), str(saved)]) == 0
    assert "users 1 new, 0 merged; threads 1 new, 0 merged" in capsys.readouterr().out
    assert export(target, capsys) == document
    # Importing again merges into what is there.
    assert main(["import-clock-state", "--config", str(target), str(saved)]) == 0
    assert "users 0 new, 1 merged; threads 0 new, 1 merged" in capsys.readouterr().out


def test_an_export_always_imports_again_even_with_a_zone_the_relay_now_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = config_file(tmp_path, "a"), config_file(tmp_path, "b")
    asyncio.run(seed(tmp_path / "a.sqlite3"))

    async def set_old_zones() -> None:
        # As an older version's /tz could store them.
        store = SqliteStore(tmp_path / "a.sqlite3")
        await store.open()
        try:
            await store.set_user_timezone("telegram:42", "Etc/GMT+2")
            await store.set_thread_timezone(THREAD, "Etc/GMT+2")
        finally:
            await store.close()

    asyncio.run(set_old_zones())
    saved = tmp_path / "clock-state.json"
    assert main(["export-clock-state", "--config", str(source), "--output", str(saved)]) == 0
    err = capsys.readouterr().err
    assert "warning: user 'telegram:42': the stored timezone 'Etc/GMT+2'" in err
    assert f"warning: thread {THREAD!r}: the stored session timezone 'Etc/GMT+2'" in err
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert document["users"]["telegram:42"]["default_tz"] is None
    assert document["threads"][THREAD]["session_tz"] is None

    assert main(["import-clock-state", "--config", str(target), str(saved)]) == 0
    assert "users 1 new" in capsys.readouterr().out


def test_export_without_a_store_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export-clock-state", "--config", str(config_file(tmp_path, "none"))]) == 1
    assert "there is no store at" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite3").exists()


def test_import_reports_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(config_file(tmp_path, "a"))
    missing = tmp_path / "missing.json"
    assert main(["import-clock-state", "--config", config, str(missing)]) == 1
    assert "cannot read" in capsys.readouterr().err

    broken = tmp_path / "broken.json"
    broken.write_text("{nope", encoding="utf-8")
    assert main(["import-clock-state", "--config", config, str(broken)]) == 1
    assert "is not valid JSON" in capsys.readouterr().err

    old = tmp_path / "old.json"
    old.write_text('{"version": 2, "users": {}}', encoding="utf-8")
    assert main(["import-clock-state", "--config", config, str(old)]) == 1
    assert "this relay reads version 3" in capsys.readouterr().err
    assert not (tmp_path / "a.sqlite3").exists()  # a bad file never opens the store


def test_serve_on_a_port_in_use_exits_with_a_message_and_closes_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    config = config_file(tmp_path, "a")
    config.write_text(config.read_text(encoding="utf-8") + f"\n[server]\nport = {port}\n")
    try:
        assert main(["serve", "--config", str(config)]) == 2
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: address already in use" in err
    assert "Traceback" not in err
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    # Closed cleanly: the WAL was checkpointed away and the store opens again.
    assert not (tmp_path / "a.sqlite3-wal").exists()


@pytest.mark.parametrize(
    "command", ["serve", "chat", "check-config", "export-clock-state", "import-clock-state"]
)
def test_each_command_help_says_what_it_does_and_its_defaults(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    head, _, rest = text.partition(" options: ")
    # What follows the usage line (its last option, or import's FILE), before the lists.
    after_usage = head.split(" positional arguments: ")[0].rsplit("]", 1)[-1]
    description = after_usage.removeprefix(" FILE").strip()
    assert len(description) > 60 and description.endswith("."), description
    assert "--log-level {debug,info,warning,error} the least severe" in rest
    assert "(default: info; warning for chat" in rest and "(default: $CHRONORELAY_CONFIG" in rest


def test_check_config_checks_the_store_read_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, store = config_file(tmp_path, "a"), tmp_path / "a.sqlite3"
    asyncio.run(make_store(store, messages=3))
    before = store.read_bytes()
    assert main(["check-config", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"  store:    {store}\n" in out
    assert f"    schema: version {LATEST_VERSION} (this relay's: {LATEST_VERSION})\n" in out
    assert f"    size:   {len(before) / 1024:.1f} KiB, no WAL\n" in out
    assert out.endswith("    quick_check: ok\n")
    assert main(["check-config", "--config", str(config), "--full"]) == 0
    assert capsys.readouterr().out.endswith("    integrity_check: ok\n")
    assert store.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sqlite3", "a.toml"]


def test_check_config_with_no_store_yet_says_serve_creates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_file(tmp_path, "a")
    assert main(["check-config", "--config", str(config)]) == 0
    store = tmp_path / "a.sqlite3"
    assert f"  store:    {store} (not there yet: serve creates it)\n" in capsys.readouterr().out
    assert not store.exists()


def test_check_config_finds_a_corrupt_store_and_says_how_to_recover(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, store = config_file(tmp_path, "a"), tmp_path / "a.sqlite3"
    asyncio.run(make_store(store, messages=200))
    page_size, page = page_of(store, "messages")
    overwrite(store, (page - 1) * page_size + page_size // 2, b"\xff" * 256)
    assert main(["check-config", "--config", str(config)]) == 1
    out, err = capsys.readouterr()
    assert "    quick_check: " in out and f"      On tree page {page} cell" in out
    assert err.startswith(f"store problem: PRAGMA quick_check found the SQLite store at {store}")
    recovered = tmp_path / "a-recovered.sqlite3"
    assert f"`sqlite3 {store} .recover | sqlite3 {recovered}`" in err


def test_check_config_says_to_upgrade_for_a_store_of_a_newer_relay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, store = config_file(tmp_path, "a"), tmp_path / "a.sqlite3"
    asyncio.run(make_store(store))
    with sqlite3.connect(store) as conn:
        conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    assert main(["check-config", "--config", str(config)]) == 1
    out, err = capsys.readouterr()
    newer = LATEST_VERSION + 1
    assert f"    schema: version {newer} (this relay's: {LATEST_VERSION})\n" in out
    assert f"has schema version {newer}, newer than this relay understands" in err
    assert "upgrade chronorelay" in err


def test_check_config_help_describes_the_store_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check-config", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "check the store file without writing to it (safe while serve runs on it)" in text
    assert "PRAGMA quick_check, which reads every page" in text
    assert "A store with a problem gives exit status 1 and what to do" in text
    assert "--full check the store with PRAGMA integrity_check" in text


def test_chat_help_says_who_you_are_and_where_the_chat_is_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "You are terminal:<your login name>, always in the same thread" in text
    assert "a second chat run at the same time writes to it too" in text
    assert "saving where you left off if there is something new" in text
    assert "your terminal's language (LC_ALL, else LC_TIME, else LANG)" in text


def test_serve_beside_a_relay_serving_the_same_store_exits_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_file(tmp_path, "a")
    serving = SqliteStore(tmp_path / "a.sqlite3", serving=True)

    async def beside_a_serving_relay() -> int:
        await serving.open()
        try:
            # In a thread: serve runs its own event loop.
            return await asyncio.to_thread(main, ["serve", "--config", str(config)])
        finally:
            await serving.close()

    assert asyncio.run(beside_a_serving_relay()) == 1
    err = capsys.readouterr().err
    assert "is serving the SQLite store at" in err
    assert "Stop that relay first" in err
    assert "Traceback" not in err


def test_check_config_shows_the_upstream_without_its_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_file(tmp_path, "a")
    upstream = (
        '[upstream]\nmode = "forward"\nbase_url = "https://relay:s3cret-pw@llm.internal/v1"\n'
    )
    config.write_text(config.read_text() + upstream)
    assert main(["check-config", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "  upstream: forward https://llm.internal/v1\n" in out
    assert "s3cret-pw" not in out
