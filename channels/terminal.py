"""The terminal channel: ``chronorelay chat``, a REPL that is a real channel.

You type as a user; each line becomes a ``Turn`` with its own user and thread keys, goes
through the same pipeline as every other channel, and the reply is printed. The relay owns
the conversation here, so the forwarded history comes from the stored transcript.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import getpass
import logging
import os
import select
import sys
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TextIO

from channels.base import answer
from channels.history import conversation_body
from middleware.continuity.service import DRAIN_GRACE
from middleware.errors import UpstreamError, UpstreamTimeout
from middleware.identity import thread_key
from middleware.locales import babel_locale
from middleware.types import Turn, valid_text
from proxy.services import Services

PROMPT = "you> "
INSPECT_NOTE = (
    "The upstream is 'inspect': each answer shows the messages the model would get. "
    'Set [upstream] mode = "forward" and base_url in a config file to chat with an LLM.\n'
)
# The longest line a terminal in line mode hands a reader (Linux's n_tty buffer, its
# newline aside); it drops what is typed or pasted past it.
TERMINAL_LINE_BYTES = 4095
# Lines that reach a terminal within this many seconds of each other were pasted together.
PASTE_GAP = 0.02
# An answer slower than this many seconds shows WAITING until it comes (on a terminal).
WAITING_AFTER = 1.0
WAITING = "bot> … waiting for the answer"
# Shown on a terminal while the session is captured as the user leaves, if that is slow.
SAVING = "saving where you left off…"
# Back to the start of the line, and erase it (ANSI "erase in line").
CLEAR_LINE = "\r\x1b[K"

log = logging.getLogger(__name__)


class TerminalChannel:
    """A line-oriented chat on stdin/stdout."""

    name = "terminal"

    def __init__(
        self,
        services: Services,
        *,
        user_id: str | None = None,
        thread_id: str = "local",
        read_line: Callable[[], str] | None = None,
        out: TextIO | None = None,
        history_limit: int = 40,
        waiting_after: float = WAITING_AFTER,
        config_file: Path | None = None,
        save_within: float = DRAIN_GRACE,
        locale: str | None = None,
    ) -> None:
        self._services = services
        self._user_id = user_id or getpass.getuser()
        self._thread_id = thread_id
        self._out = out or sys.stdout
        self._read_line = read_line
        self._history_limit = history_limit
        self._waiting_after = waiting_after
        self._config_file = config_file
        self._save_within = save_within
        # The user's language, as their terminal's environment says (``environment_locale``).
        self._locale = locale
        self._running = False

    async def start(self) -> None:
        self._running = True

    async def stop(self) -> None:
        self._running = False

    async def send(self, thread_id: str, text: str) -> None:
        # A reply may hold a lone surrogate (from the upstream's JSON): not printable.
        self._out.write(f"bot> {valid_text(text)}\n")
        self._out.flush()

    async def run(self) -> None:
        """Read lines until EOF or ``/quit``, answering each.

        A turn that fails is logged and answered ``[relay error: …]``; the chat goes on.
        Cancelling ``run`` (Ctrl-C) ends it at once, even while it waits for a line.
        However the chat ends, the session is captured first if it has something new
        (``_save_where_you_left_off``): the process, and its scheduler, end with it.
        """
        await self.start()
        read_line = self._read_line or ConsoleInput(sys.stdin.fileno(), self._out)
        # A piped chat shows no prompt, so its end needs no new line.
        prompted = not isinstance(read_line, ConsoleInput) or read_line.interactive
        self._out.write(
            f"chronorelay chat — you are terminal:{self._user_id}; "
            "/help lists the commands, /quit leaves\n"
        )
        if self._services.config.upstream.mode == "inspect":
            # Else a newcomer's first answer is a JSON dump with no word of why.
            self._out.write(INSPECT_NOTE)
        try:
            while self._running:
                try:
                    line = await _read_on_daemon_thread(read_line)
                except EOFError:
                    break
                except LineCut as cut:
                    await self.send(self._thread_id, f"[{cut}]")
                    continue
                text = line.strip()
                if not text:
                    continue
                if text in ("/quit", "/exit"):
                    return
                await self.send(self._thread_id, await self._waited_for(self._answer(text)))
            if prompted:
                # End of input (Ctrl-D) leaves the cursor after the prompt.
                self._out.write("\n")
        except asyncio.CancelledError:
            if prompted:
                self._out.write("\n")
            raise
        finally:
            self._out.flush()
            await self._save_where_you_left_off()
            await self.stop()

    async def _save_where_you_left_off(self) -> None:
        """Capture the chat's session as its user leaves (spec 004 §4: "user exits"),
        within ``save_within`` seconds.

        Only a dirty session is captured (trigger ``session_end``): quitting after nothing
        new ends at once. Deterministic capture is instant; in ``full`` mode it is an LLM
        call, and on a terminal a slow one shows ``SAVING`` meanwhile. One not done in
        time is cancelled and left to the idle capture or the nightly job (of a relay
        running on the same store later), which finds the session still dirty.
        """
        key = thread_key(self._services.config.server.agent_id, self.name, "dm", self._thread_id)
        saving = asyncio.ensure_future(self._services.continuity.capture_thread(key, "session_end"))
        shown = False
        try:
            done, _ = await asyncio.wait(
                {saving}, timeout=min(self._waiting_after, self._save_within)
            )
            if not done and self._out.isatty():
                self._out.write(SAVING)
                self._out.flush()
                shown = True
            if not done:
                done, _ = await asyncio.wait(
                    {saving}, timeout=max(0.0, self._save_within - self._waiting_after)
                )
        finally:
            saving.cancel()  # not done in time, or the chat's exit was forced (Ctrl-C again)
            if shown:
                self._out.write(CLEAR_LINE)
                self._out.flush()
        if not done:
            left = (
                f"Not saved: capturing where you left off took over {self._save_within:g} s; "
                "the relay's idle capture or nightly job saves it on its next run."
            )
            if self._out.isatty():
                self._out.write(f"{left}\n")
                self._out.flush()
            else:  # on stderr, not in the output a script reads
                log.warning("%s", left)
        elif (error := saving.exception()) is not None:
            log.error("Not saved: capturing where you left off failed: %s", error, exc_info=error)

    async def _waited_for(self, answering: Coroutine[object, object, str]) -> str:
        """``answering``'s answer; on a terminal, a slow one shows ``WAITING`` meanwhile,
        erased before the answer prints. Piped out, nobody watches: nothing is shown."""
        if not self._out.isatty():
            return await answering
        task = asyncio.ensure_future(answering)
        try:
            done, _ = await asyncio.wait({task}, timeout=self._waiting_after)
            if done:
                return task.result()
            self._out.write(WAITING)
            self._out.flush()
            try:
                return await task
            finally:
                self._out.write(CLEAR_LINE)
                self._out.flush()
        finally:
            task.cancel()  # only if the chat itself was cancelled (Ctrl-C) meanwhile

    async def _answer(self, text: str) -> str:
        try:
            return await self.handle(text)
        except Exception as exc:
            log.error("a terminal turn failed", exc_info=True)
            return f"[relay error: {exc or type(exc).__name__}]"

    async def handle(self, text: str) -> str:
        """Run one user line through the pipeline and return the reply text."""
        turn = Turn(
            channel=self.name,
            thread_id=self._thread_id,
            user_id=self._user_id,
            text=text,
            received_at=self._services.clock.now(),
            body={},
            locale=self._locale,
        )
        turn.body = await conversation_body(self._services, turn, self._history_limit)
        return await answer(self._services, turn, unanswered=self._unanswered)

    def _unanswered(self, exc: UpstreamError) -> str:
        """Why no answer came, for the person running the chat: the relay's operator, who
        is told the address tried and where it is set."""
        if self._config_file is None:
            where = (
                "no config file was loaded: name one with --config (or $CHRONORELAY_CONFIG) "
                "and set its [upstream] base_url"
            )
        else:
            where = f"check [upstream] base_url in {self._config_file.resolve()}"
        if isinstance(exc, UpstreamTimeout):
            return f"{exc} — {where}, that the LLM there is running, or raise read_timeout"
        return f"{exc} — {where}, and that the LLM there is running"


# The variables that say which locale a program writes dates in, strongest first (POSIX
# "Internationalization Variables"): the first one set decides, even when it says "C".
_TIME_LOCALE_VARIABLES = ("LC_ALL", "LC_TIME", "LANG")


def environment_locale(environ: Mapping[str, str]) -> str | None:
    """The locale a terminal program writes dates in, as a babel identifier: that of the
    first of ``LC_ALL``, ``LC_TIME``, ``LANG`` set and not empty ("de_DE.UTF-8" →
    "de_DE"; the encoding and any "@modifier" are dropped). "en" for "C" and "POSIX",
    the untranslated default, which is English: said, it replaces a language an earlier
    chat reported. None for a locale babel does not know, or when none is set.

    Read by hand: babel's ``default_locale`` also reads ``LANGUAGE`` (a message
    catalog list) and ``LC_CTYPE``, puts the asked category before ``LC_ALL``, and takes
    "C" for American English.
    """
    for name in _TIME_LOCALE_VARIABLES:
        value = environ.get(name)
        if value:
            language = value.split(".", 1)[0].split("@", 1)[0]
            return "en" if language in ("C", "POSIX") else babel_locale(language)
    return None


class LineCut(Exception):
    """A line typed or pasted on a terminal was longer than the terminal keeps: it
    dropped the rest, so the line read is not what the user wrote."""


class ConsoleInput:
    """Lines typed on a terminal or piped in, for :class:`TerminalChannel`: each call shows
    the prompt and returns the next message without its newline; ``EOFError`` at the end.

    On a terminal, lines pasted at once are one message: the lines already waiting when
    one is read (or arriving within ``PASTE_GAP``, faster than anyone types) join it, so
    a pasted paragraph is not sent to the model a line at a time. Piped in, each line is
    a message of its own, as a script writes them, and no prompt is shown: nobody types,
    and the prompts would only clutter the output the script reads.

    Reads the file descriptor with ``os.read``, not ``input()``: while it waits it holds
    no lock of ``sys.stdin``'s (a daemon thread blocked in ``sys.stdin.readline()`` makes
    the interpreter abort at exit), and bytes that are not in ``encoding`` read as U+FFFD
    instead of failing the line. The terminal still edits the line (backspace, Ctrl-U).
    """

    def __init__(self, fd: int, out: TextIO, encoding: str | None = None) -> None:
        self._fd = fd
        self._out = out
        name = encoding or getattr(sys.stdin, "encoding", None) or "utf-8"
        self._encoding = name
        self._decoder = codecs.getincrementaldecoder(name)(errors="replace")
        self._pending = ""
        self.interactive = os.isatty(fd)
        # A terminal's end of input (Ctrl-D) is read once: met while taking in a paste, it
        # ends the chat on the next call.
        self._ended = False

    def __call__(self) -> str:
        if self.interactive:
            self._out.write(PROMPT)
            self._out.flush()
        lines = [self._line()]
        while self.interactive and not self._ended and self._more_waiting():
            try:
                lines.append(self._line())
            except EOFError:
                break
        if self.interactive and any(self._filled_the_terminal(line) for line in lines):
            raise LineCut(
                f"Not sent: a line reached the {TERMINAL_LINE_BYTES}-byte limit of a terminal "
                "line, and the terminal dropped what came after it. Break long text into "
                "lines (lines pasted together are one message), or pipe it in: "
                "chronorelay chat < message.txt"
            )
        return "\n".join(lines)

    def _filled_the_terminal(self, line: str) -> bool:
        return len(line.encode(self._encoding, "replace")) >= TERMINAL_LINE_BYTES

    def _more_waiting(self) -> bool:
        if "\n" in self._pending:
            return True
        ready, _, _ = select.select([self._fd], [], [], PASTE_GAP)
        return bool(ready)

    def _line(self) -> str:
        if self._ended:
            raise EOFError
        while "\n" not in self._pending:
            chunk = os.read(self._fd, 4096)
            self._pending += self._decoder.decode(chunk, final=not chunk)
            if not chunk:
                self._ended = True
                if not self._pending:
                    raise EOFError
                line, self._pending = self._pending, ""
                return line
        line, _, self._pending = self._pending.partition("\n")
        return line


async def _read_on_daemon_thread(read: Callable[[], str]) -> str:
    """``read()`` on a daemon thread of its own.

    ``input()`` cannot be interrupted: under ``asyncio.to_thread`` a Ctrl-C cancelled
    the chat, then ``asyncio.run`` waited for the executor thread until Enter was
    pressed. Nothing waits for this thread: a cancelled wait returns at once and the
    process exits with the thread still reading.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()

    def settle(line: str, error: Exception | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(line)

    def work() -> None:
        line, error = "", None
        try:
            line = read()
        except Exception as exc:  # EOFError among them: the waiter gets it
            error = exc
        # The loop may be closed by now (the chat ended meanwhile): nobody waits.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, line, error)

    threading.Thread(target=work, name="terminal-input", daemon=True).start()
    return await done
