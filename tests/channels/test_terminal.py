"""The terminal channel is a real channel: keys, transcript history, replies."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
import threading
import time
from asyncio.subprocess import Process
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from channels.terminal import (
    CLEAR_LINE,
    INSPECT_NOTE,
    PROMPT,
    SAVING,
    WAITING,
    ConsoleInput,
    TerminalChannel,
    environment_locale,
)
from middleware.clock.source import FakeClock
from middleware.store import SqliteStore, StoredMessage
from middleware.types import Reply, Turn
from proxy.config import Config
from proxy.services import Services, open_services
from tests.conftest import relay_config
from tests.fakes.upstream import FakeUpstream


async def test_chat_lines_go_through_the_pipeline_with_history(tmp_path: Path) -> None:
    config = Config.model_validate(
        {"store": {"path": str(tmp_path / "s.sqlite3")}, "upstream": {"mode": "inspect"}}
    )
    lines = iter(["hello", "", "second line", "/quit", "never read"])
    out = io.StringIO()
    async with open_services(config) as services:
        channel = TerminalChannel(services, user_id="ana", read_line=lambda: next(lines), out=out)
        await channel.run()
        transcript = await services.store.transcript("agent:main:terminal:dm:local")
        user = await services.store.get_user("terminal:ana")
    printed = out.getvalue()
    assert "you are terminal:ana" in printed and "/help lists the commands" in printed
    # Why the answers are JSON: the inspect upstream, said before the first one.
    assert printed.splitlines()[1] == INSPECT_NOTE.strip()
    replies = [line for line in printed.splitlines() if line.startswith("bot> ")]
    assert len(replies) == 2
    # The inspect upstream shows what was forwarded: the second turn carries the first.
    assert [m.role for m in transcript] == ["user", "assistant", "user", "assistant"]
    first_request = json.loads(transcript[1].text)
    second_request = json.loads(transcript[3].text)
    # The history is replayed exactly as it was forwarded the first time (block included).
    assert second_request[0] == first_request[0]
    assert first_request[0]["content"].startswith("hello\n\n<relay_context>")
    assert second_request[-1]["content"].startswith("second line\n\n<relay_context>")
    assert user is not None


async def test_a_command_between_two_conversations_leaves_the_gap_to_the_model(
    tmp_path: Path,
) -> None:
    """Three hours away, then /time (answered by the relay), then a question: the block
    tells of the three hours, not of the command a minute ago."""
    out, transcript = await scripted_chat(
        tmp_path,
        [
            (timedelta(0), "Let's plan the trip"),
            (timedelta(hours=3), "/time"),
            (timedelta(minutes=1), "Where were we?"),
        ],
    )
    assert "bot> It's " in out  # /time was answered by the relay
    forwarded = json.loads(transcript[-1].text)  # the inspect upstream's answer
    block = forwarded[-1]["content"]
    assert block.startswith("Where were we?\n\n<relay_context>")
    assert "Last message here: 3 hours 1 minute ago (Sat 21 Nov 10:00)." in block, block
    assert "Gap: several hours — summarize where you left off before continuing." in block


def inspect_config(tmp_path: Path) -> Config:
    return Config.model_validate(
        {"store": {"path": str(tmp_path / "s.sqlite3")}, "upstream": {"mode": "inspect"}}
    )


async def scripted_chat(
    tmp_path: Path, steps: list[tuple[timedelta, str]]
) -> tuple[str, list[StoredMessage]]:
    """Ana's terminal chat on the inspect upstream, from Sat 21 Nov 2026 10:00 UTC: each
    line typed after its wait on a fake clock, then /quit. What was printed, and the
    thread's transcript (the inspect upstream's answers are the bodies it was sent)."""
    clock = FakeClock(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))
    lines = iter([*steps, (timedelta(0), "/quit")])

    def read_line() -> str:
        wait, line = next(lines)
        clock.advance(wait)
        return line

    out = io.StringIO()
    async with open_services(inspect_config(tmp_path), clock=clock) as services:
        channel = TerminalChannel(services, user_id="ana", read_line=read_line, out=out)
        await channel.run()
        transcript = await services.store.transcript("agent:main:terminal:dm:local")
    return out.getvalue(), transcript


async def test_a_failing_turn_is_reported_and_the_chat_goes_on(tmp_path: Path) -> None:
    lines = iter(["explode", "hello", "/quit"])
    out = io.StringIO()
    async with open_services(inspect_config(tmp_path)) as services:
        pipeline = services.pipeline

        async def failing_once(turn: Turn) -> Reply:
            if turn.text == "explode":
                raise ValueError("unknown timezone 'Etc/GMT+2'")
            return await pipeline(turn)

        services.pipeline = failing_once
        channel = TerminalChannel(services, user_id="ana", read_line=lambda: next(lines), out=out)
        await channel.run()
    replies = [line for line in out.getvalue().splitlines() if line.startswith("bot> ")]
    assert replies[0] == "bot> [relay error: unknown timezone 'Etc/GMT+2']"
    assert replies[1] == "bot> ["  # the inspect upstream's answer to "hello"


async def test_piped_input_replaces_undecodable_bytes_and_is_not_prompted(
    tmp_path: Path,
) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"caf\xe9 ok\n/tz Lisbon")  # the last line has no newline
    os.close(write_end)
    out = io.StringIO()
    try:
        async with open_services(inspect_config(tmp_path)) as services:
            console = ConsoleInput(read_end, out, encoding="utf-8")
            await TerminalChannel(services, user_id="ana", read_line=console, out=out).run()
            transcript = await services.store.transcript("agent:main:terminal:dm:local")
    finally:
        os.close(read_end)
    assert transcript[0].text == "caf\ufffd ok"
    assert "bot> Your timezone is now Europe/Lisbon." in out.getvalue()
    # Piped in: no prompts in the output a script reads, and no new line for one at the end.
    assert PROMPT not in out.getvalue()
    assert out.getvalue().endswith(") there.\n")


def test_a_cancelled_chat_does_not_wait_for_the_line_being_read(tmp_path: Path) -> None:
    # Ctrl-C cancels the chat while a thread waits for a line that may never come; then
    # asyncio.run closes its loop, which waited for that thread (until Enter) under
    # asyncio.to_thread.
    read_end, write_end = os.pipe()
    out = io.StringIO()

    async def chat_then_cancel() -> None:
        loop, reading = asyncio.get_running_loop(), asyncio.Event()
        console = ConsoleInput(read_end, out, encoding="utf-8")

        def read_line() -> str:
            loop.call_soon_threadsafe(reading.set)
            return console()

        async with open_services(inspect_config(tmp_path)) as services:
            channel = TerminalChannel(services, read_line=read_line, out=out)
            task = asyncio.create_task(channel.run())
            await reading.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    runner = asyncio.Runner()
    try:
        runner.run(chat_then_cancel())
        closing = threading.Thread(target=runner.close)
        closing.start()
        closing.join(timeout=5)
        assert not closing.is_alive(), "closing the loop waits for the line being read"
    finally:
        os.write(write_end, b"\n")  # releases the reading thread either way
        os.close(write_end)
        runner.close()
        os.close(read_end)
    # The banner's lines (the inspect upstream's note), and the one that moves the
    # shell's prompt off the chat's.
    assert out.getvalue().count("\n") == 3


@asynccontextmanager
async def chat_on_a_terminal(config: Path) -> AsyncIterator[tuple[Process, int]]:
    """``chronorelay chat`` on ``config`` in a subprocess whose input is a pseudo-terminal,
    and the fd to type on it; killed at the end if still running."""
    # A test run started in the background (``pytest &`` from a script) ignores SIGINT,
    # and a child inherits that: the chat, like any program, would then stay deaf to Ctrl-C.
    # Handled here for the spawn, SIGINT is back to its default in the child, as in a shell.
    ours = signal.signal(signal.SIGINT, signal.default_int_handler)
    # A terminal nobody types on: the prompt (shown on a terminal only) waits for a line.
    main, terminal = os.openpty()
    try:
        chat = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "proxy", "chat", "--config", str(config),
            stdin=terminal,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, ours)
        os.close(terminal)
    try:
        yield chat, main
    finally:
        if chat.returncode is None:
            chat.kill()
            await chat.wait()
        os.close(main)


async def test_ctrl_c_at_the_prompt_ends_the_chat_at_once(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[upstream]\nmode = "inspect"\n[store]\npath = "{tmp_path / "s.db"}"\n')
    async with chat_on_a_terminal(config) as (chat, _):
        assert chat.stdout is not None and chat.stderr is not None
        await asyncio.wait_for(chat.stdout.readuntil(PROMPT.encode()), timeout=30)
        chat.send_signal(signal.SIGINT)
        status = await asyncio.wait_for(chat.wait(), timeout=10)
        errors = (await chat.stderr.read()).decode()
    # 130 is the shell's code for SIGINT; a thread left reading stdin must not abort the
    # interpreter's exit ("could not acquire lock for <_io.BufferedReader name='<stdin>'>").
    assert status == 130, errors
    assert "Traceback" not in errors and "Fatal" not in errors


async def test_a_command_exchange_is_no_history_the_model_sees(tmp_path: Path) -> None:
    """/time and the relay's answer to it are left out of every later turn's history, so
    the model never sees a message a minute ago while its block says three hours, and the
    forwarded prefix only grows turn to turn."""
    _, transcript = await scripted_chat(
        tmp_path,
        [
            (timedelta(0), "Let's plan the trip"),
            (timedelta(hours=3), "/time"),
            (timedelta(minutes=1), "Where were we?"),
            (timedelta(minutes=1), "/whoami"),
            (timedelta(minutes=1), "And the hotel?"),
        ],
    )
    # The inspect upstream answers with what it was sent.
    sent = [json.loads(m.text) for m in transcript if m.role == "assistant" and m.text[:1] == "["]
    assert len(sent) == 3
    for body in sent:
        texts = [str(m["content"]) for m in body]
        assert not any(t.startswith(("/time", "/whoami", "It's ")) for t in texts), texts
    # Each turn's history is the previous turn's whole body plus its answer.
    assert sent[1][: len(sent[0]) - 1] == sent[0][:-1]
    assert sent[2][: len(sent[1]) - 1] == sent[1][:-1]
    assert [m["role"] for m in sent[2]] == ["user", "assistant", "user", "assistant", "user"]


def test_lines_pasted_on_a_terminal_are_one_message() -> None:
    # A pasted paragraph reaches the terminal at once: sent a line at a time, the model
    # would answer each fragment. A line typed later is a message of its own.
    main, terminal = os.openpty()
    out = io.StringIO()
    try:
        console = ConsoleInput(terminal, out, encoding="utf-8")
        os.write(main, "Notes from today:\n- call Ana 📞\n- مرحبا 你好\n".encode())
        assert console() == "Notes from today:\n- call Ana 📞\n- مرحبا 你好"
        os.write(main, b"typed later\n")
        assert console() == "typed later"
        os.write(main, b"last words\n\x04")  # then Ctrl-D, on a line of its own
        assert console() == "last words"
        with pytest.raises(EOFError):
            console()
    finally:
        os.close(main)
        os.close(terminal)
    assert out.getvalue() == PROMPT * 4


async def test_the_chat_terminal_shows_no_routine_log_lines(tmp_path: Path) -> None:
    # A first chat creates its store: its migrations, logged at INFO, are no news for
    # the person chatting, on the terminal the chat writes to.
    config = tmp_path / "c.toml"
    config.write_text(f'[upstream]\nmode = "inspect"\n[store]\npath = "{tmp_path / "s.db"}"\n')
    chat = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "proxy", "chat", "--config", str(config),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, errors = await asyncio.wait_for(chat.communicate("hello 👋\n".encode()), timeout=60)
    assert chat.returncode == 0, errors.decode()
    assert "bot> [" in out.decode()
    assert PROMPT not in out.decode()  # piped in: nobody to prompt
    assert errors.decode() == ""


async def test_a_line_cut_by_the_terminal_is_not_sent(tmp_path: Path) -> None:
    # A terminal in line mode keeps 4095 bytes of a line and drops the rest: sent, the
    # model would get part of what the user pasted, and nobody would know.
    main, terminal = os.openpty()
    out = io.StringIO()

    def type_in() -> None:
        text = "word " * 2000 + "the end\n"
        for start in range(0, len(text), 512):  # as a terminal passes on a paste
            os.write(main, text[start : start + 512].encode())
        for _ in range(500):  # then, told, a shorter line
            if "Not sent" in out.getvalue():
                break
            time.sleep(0.01)
        os.write(main, b"short one\n\x04")

    try:
        typing = threading.Thread(target=type_in, daemon=True)
        typing.start()
        async with open_services(inspect_config(tmp_path)) as services:
            console = ConsoleInput(terminal, out, encoding="utf-8")
            await TerminalChannel(services, user_id="ana", read_line=console, out=out).run()
            transcript = await services.store.transcript("agent:main:terminal:dm:local")
        typing.join(timeout=5)
    finally:
        os.close(main)
        os.close(terminal)
    assert "bot> [Not sent: a line reached the 4095-byte limit of a terminal line" in out.getvalue()
    assert [m.text for m in transcript if m.role == "user"] == ["short one"]


@pytest.mark.parametrize("directive", ["clock: kind project", "clock: off", "clock: kind epic"])
async def test_a_settings_directive_is_no_contact_on_any_channel(
    tmp_path: Path, directive: str
) -> None:
    """Three hours away, then a settings directive in another chat (answered by the relay,
    like /tz), then a question here: the block tells of the three hours, and of no
    contact elsewhere a minute ago."""
    clock = FakeClock(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))
    async with open_services(inspect_config(tmp_path), clock=clock) as services:
        here = TerminalChannel(services, user_id="ana", thread_id="trip")
        elsewhere = TerminalChannel(services, user_id="ana", thread_id="work")
        await here.handle("Let's plan the trip")
        clock.advance(timedelta(hours=3))
        answered = await elsewhere.handle(directive)
        clock.advance(timedelta(minutes=1))
        forwarded = json.loads(await here.handle("Where were we?"))
    assert not answered.startswith("["), answered  # the relay's answer, not the model's
    block = forwarded[-1]["content"]
    assert "Last message here: 3 hours 1 minute ago (Sat 21 Nov 10:00)." in block, block
    assert "Last contact on any channel" not in block, block


class TerminalOut(io.StringIO):
    """What a chat prints to a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("on_a_terminal", [True, False])
async def test_a_slow_answer_shows_a_waiting_line_on_a_terminal_only(
    tmp_path: Path, on_a_terminal: bool
) -> None:
    out = TerminalOut() if on_a_terminal else io.StringIO()
    lines = iter(["hello", "/quit"])

    async def slow_upstream(turn: Turn) -> Reply:
        if not on_a_terminal:
            await asyncio.sleep(0.1)  # five times the wait before a terminal is told
        for _ in range(500):  # on a terminal, answers once the chat shows it waits
            if not on_a_terminal or WAITING in out.getvalue():
                break
            await asyncio.sleep(0.01)
        return Reply(text="hi there")

    async with open_services(inspect_config(tmp_path)) as services:
        services.pipeline = slow_upstream
        channel = TerminalChannel(
            services, user_id="ana", read_line=lambda: next(lines), out=out, waiting_after=0.02
        )
        await channel.run()
    printed = out.getvalue()
    if on_a_terminal:
        # Shown, then erased from its line before the answer prints.
        assert f"{WAITING}{CLEAR_LINE}bot> hi there\n" in printed
    else:
        assert WAITING not in printed and CLEAR_LINE not in printed
        assert "bot> hi there\n" in printed


async def test_a_quick_answer_shows_no_waiting_line(tmp_path: Path) -> None:
    out, lines = TerminalOut(), iter(["/time", "/quit"])
    async with open_services(inspect_config(tmp_path)) as services:
        channel = TerminalChannel(services, user_id="ana", read_line=lambda: next(lines), out=out)
        await channel.run()
    assert "bot> It's " in out.getvalue()
    assert WAITING not in out.getvalue() and CLEAR_LINE not in out.getvalue()


@pytest.mark.parametrize("loaded", [True, False])
async def test_an_unreachable_llm_says_which_config_file_sets_its_address(
    tmp_path: Path, loaded: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # The one chatting runs the relay: told the address tried and where it is set.
    config_file = tmp_path / "chronorelay.toml"
    config = Config.model_validate(
        {
            "store": {"path": str(tmp_path / "s.sqlite3")},
            # Nothing listens on the discard port.
            "upstream": {"mode": "forward", "base_url": "http://127.0.0.1:9/v1", "retries": 0},
        }
    )
    async with open_services(config) as services:
        channel = TerminalChannel(
            services, user_id="ana", config_file=config_file if loaded else None
        )
        said = await channel.handle("hello?")
    assert said.startswith("[no answer: cannot reach the upstream at http://127.0.0.1:9/v1: ")
    if loaded:
        assert said.endswith(
            f" — check [upstream] base_url in {config_file}, and that the LLM there is running]"
        )
    else:
        assert "no config file was loaded: name one with --config" in said


THREAD = "agent:main:terminal:dm:local"


async def chat_then_quit(
    services: Services, lines: list[str], *, out: io.StringIO | None = None, **options: Any
) -> str:
    """Ana's chat: ``lines``, then the end of input (Ctrl-D). What was printed."""
    out = out if out is not None else io.StringIO()
    said = iter(lines)

    def read_line() -> str:
        line = next(said, None)
        if line is None:
            raise EOFError
        return line

    channel = TerminalChannel(services, user_id="ana", read_line=read_line, out=out, **options)
    await channel.run()
    return out.getvalue()


@pytest.mark.parametrize("leaving", ["/quit", "Ctrl-D"])
async def test_leaving_the_chat_captures_where_the_user_left_off(
    tmp_path: Path, leaving: str
) -> None:
    # Spec 004 §4: captured when the user exits, not 15 idle minutes later, by when the
    # chat's process (and its scheduler) is long gone.
    clock = FakeClock(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))
    said = ["Let's go with MkDocs for the docs site", "I still need to write the API page"]
    async with open_services(inspect_config(tmp_path), clock=clock) as services:
        await chat_then_quit(services, said + (["/quit"] if leaving == "/quit" else []))
        session = await services.store.current_session(THREAD)
        assert session is not None
        entries = await services.store.continuity_entries(session.work_context_id, now=clock.now())
    assert session.summary is not None and "MkDocs" in session.summary
    assert session.last_capture_at == clock.now()
    kinds = {entry.entry_type for entry in entries}
    assert {"session_summary_ref", "key_decision", "open_question"} <= kinds, kinds


async def test_leaving_with_nothing_new_captures_nothing(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))
    async with open_services(inspect_config(tmp_path), clock=clock) as services:
        await chat_then_quit(services, ["Let's go with MkDocs for the docs site", "/quit"])
        first = await services.store.current_session(THREAD)
        assert first is not None and first.last_capture_at is not None
        entries = await services.store.continuity_entries(first.work_context_id, now=clock.now())
        clock.advance(timedelta(minutes=5))
        await chat_then_quit(services, ["/quit"])
        # A glance ("thanks") leaves the session clean too: nothing worth capturing.
        clock.advance(timedelta(minutes=5))
        await chat_then_quit(services, ["thanks"])
        again = await services.store.current_session(THREAD)
        entries_after = await services.store.continuity_entries(
            first.work_context_id, now=clock.now()
        )
    assert again is not None and again.last_capture_at == first.last_capture_at
    assert [e.entry_id for e in entries_after] == [e.entry_id for e in entries]


async def test_ctrl_c_at_the_prompt_captures_where_the_user_left_off(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))
    lines = iter(["Let's go with MkDocs for the docs site"])
    at_the_prompt = asyncio.Event()
    loop = asyncio.get_running_loop()

    def read_line() -> str:
        line = next(lines, None)
        if line is None:
            loop.call_soon_threadsafe(at_the_prompt.set)
            threading.Event().wait(5)  # nobody types: Ctrl-C comes instead
            raise EOFError
        return line

    async with open_services(inspect_config(tmp_path), clock=clock) as services:
        channel = TerminalChannel(services, user_id="ana", read_line=read_line, out=io.StringIO())
        chat = asyncio.create_task(channel.run())
        await at_the_prompt.wait()
        chat.cancel()
        with pytest.raises(asyncio.CancelledError):
            await chat
        session = await services.store.current_session(THREAD)
    assert session is not None and session.summary is not None and "MkDocs" in session.summary


@pytest.mark.parametrize("on_a_terminal", [True, False])
async def test_a_capture_slower_than_the_grace_is_left_for_later_and_said(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    on_a_terminal: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # In full mode the capture is an LLM call: the chat does not wait for it past the
    # grace, and says the session is saved later (it stays dirty for the idle capture
    # or the nightly job).
    fake_upstream.synthesis_reply = "{}"
    fake_upstream.synthesis_gate = asyncio.Event()  # never answered
    clock = FakeClock(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))
    out = TerminalOut() if on_a_terminal else io.StringIO()
    config = relay_config(tmp_path, fake_upstream.url)
    async with open_services(config, clock=clock) as services:
        said = ["Let's go with MkDocs for the docs site", "/quit"]
        printed = await chat_then_quit(services, said, out=out, waiting_after=0.02, save_within=0.5)
        session = await services.store.current_session(THREAD)
    assert fake_upstream.synthesis_seen.is_set()
    assert session is not None and session.last_capture_at is None and session.dirty_turns == 1
    told = (
        "Not saved: capturing where you left off took over 0.5 s; the relay's idle capture "
        "or nightly job saves it on its next run."
    )
    if on_a_terminal:
        assert f"{SAVING}{CLEAR_LINE}{told}" in printed, printed
    else:
        assert SAVING not in printed and told not in printed
        assert told in caplog.text


async def test_ctrl_c_in_the_real_chat_saves_where_the_user_left_off(tmp_path: Path) -> None:
    store_path = tmp_path / "s.db"
    config = tmp_path / "c.toml"
    config.write_text(f'[upstream]\nmode = "inspect"\n[store]\npath = "{store_path}"\n')
    async with chat_on_a_terminal(config) as (chat, typing):
        assert chat.stdout is not None and chat.stderr is not None
        await asyncio.wait_for(chat.stdout.readuntil(PROMPT.encode()), timeout=30)
        os.write(typing, b"Let's go with MkDocs for the docs site\n")
        await asyncio.wait_for(chat.stdout.readuntil(b"bot> "), timeout=30)
        await asyncio.wait_for(chat.stdout.readuntil(PROMPT.encode()), timeout=30)
        chat.send_signal(signal.SIGINT)
        status = await asyncio.wait_for(chat.wait(), timeout=20)
        errors = (await chat.stderr.read()).decode()
    assert status == 130, errors
    store = SqliteStore(store_path)
    await store.open()
    try:
        session = await store.current_session(THREAD)
    finally:
        await store.close()
    assert session is not None and session.summary is not None and "MkDocs" in session.summary


@pytest.mark.parametrize(
    ("environ", "locale"),
    [
        ({"LANG": "de_DE.UTF-8"}, "de_DE"),
        ({"LANG": "pt_BR.utf8"}, "pt_BR"),
        ({"LANG": "de_DE@euro"}, "de_DE"),
        ({"LANG": "fr"}, "fr"),
        # LC_ALL over LC_TIME over LANG; an empty one is not set.
        ({"LC_ALL": "es_ES.UTF-8", "LC_TIME": "de_DE.UTF-8", "LANG": "fr_FR.UTF-8"}, "es_ES"),
        ({"LC_ALL": "", "LC_TIME": "de_DE.UTF-8", "LANG": "fr_FR.UTF-8"}, "de_DE"),
        # The first one set decides, even when it is the untranslated default: English,
        # said, so that it replaces a language an earlier chat on the same store reported.
        ({"LC_ALL": "C", "LANG": "de_DE.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({"LANGUAGE": "de", "LC_CTYPE": "de_DE.UTF-8"}, None),  # not about dates
        ({"LANG": "klingon"}, None),
        ({}, None),
    ],
)
def test_the_terminals_locale_comes_from_its_environment(
    environ: dict[str, str], locale: str | None
) -> None:
    assert environment_locale(environ) == locale


async def test_the_real_chat_writes_dates_in_the_terminals_language(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = "Bis <time 2026-11-22T15:00:00Z>!"
    config = tmp_path / "c.toml"
    config.write_text(
        f'[upstream]\nmode = "forward"\nbase_url = "{fake_upstream.url}"\nretries = 0\n'
        f'[store]\npath = "{tmp_path / "s.db"}"\n[continuity]\nmode = "deterministic"\n'
    )
    environ = {
        name: value
        for name, value in os.environ.items()
        if name not in ("LC_ALL", "LC_TIME", "LANGUAGE")
    }
    chat = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "proxy", "chat", "--config", str(config),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**environ, "LANG": "de_DE.UTF-8"},
    )  # fmt: skip
    typed = b"wann?\n/lang fr\nquand?\n"
    out, errors = await asyncio.wait_for(chat.communicate(typed), timeout=60)
    assert chat.returncode == 0, errors.decode()
    replies = [line for line in out.decode().splitlines() if line.startswith("bot> ")]
    assert replies[0] == "bot> Bis So., 22. Nov., 15:00 UTC!", replies
    # The language the user chooses wins over the terminal's.
    assert replies[2] == "bot> Bis dim. 22 nov., 15:00 UTC!", replies
