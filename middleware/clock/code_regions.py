r"""Where Markdown code is in text that may arrive in pieces. Pure, no I/O.

Time markups inside code are left as written (a code sample explaining the markup must
not change, and Discord shows no timestamp inside code), so the renderer needs to know,
character by character, whether it reads prose or code. ``CodeTracker.scan`` labels each
piece it is given and carries its state to the next piece, so the labels never depend on
where the text was cut.

Code is, after CommonMark:

* an inline code span: a run of n backticks up to the next run of exactly n backticks;
* a fenced code block: a line whose first characters other than spaces and tabs are three
  or more backticks (and no backtick later on that line) or three or more tildes, up to a
  line made of the same character, at least as many, and spaces or tabs (any indentation,
  so a fence inside a list item counts), or to the end of the text. In a block quote the
  line's ``>`` markers come first (``> ```…``); the block then ends where its quote does,
  at a line with fewer of them.

In prose a backslash escapes a backtick (``\```: a literal backtick, no delimiter) or a
backslash; in code a backslash is literal, so it never escapes a span's closing run.

Where this differs from CommonMark, it is so that a stream never has to hold text back to
learn whether it was code:

* a backtick run that no run of the same length closes on its line is code up to the end
  of that line. CommonMark would make it literal text (markup after it rendered), but a
  stream learns that only when the line ends, and holding a line back would delay it; a
  stray backtick next to a markup is rare, and one meant to open a span is not. For the
  same reason a span does not continue on the next line.

Indented code blocks are not recognised. Backtick runs and fence lines are labelled code
too; they never hold a markup.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

__all__ = ["CodeTracker"]

#: Labels a slice of the piece being scanned: ``(start, end, is_prose)``.
_Mark = Callable[[int, int, bool], None]

_SPAN_OR_LINE_END = re.compile(r"[`\n]")
_PROSE_STOP = re.compile(r"[`\n\\]")  # a span's opening, an escape, the line's end


class CodeTracker:
    """The code state of a text read so far; ``scan`` reads the next piece."""

    __slots__ = (
        "_closing",
        "_escaped",
        "_fence",
        "_fence_len",
        "_fence_quotes",
        "_line_blank",
        "_may_open_fence",
        "_quotes",
        "_run",
        "_run_at_line_start",
        "_run_len",
        "_span",
    )

    def __init__(self) -> None:
        self._fence = ""  # "`" or "~" inside a fenced code block
        self._fence_len = 0
        self._fence_quotes = 0  # the block quote depth of the line that opened the fence
        self._span = 0  # length of the backtick run that opened the span we are in
        # That run began its line with three or more backticks and none followed since:
        # at the line's end it opens a fenced block.
        self._may_open_fence = False
        self._line_blank = True  # only spaces, tabs and quote markers since the line began
        self._quotes = 0  # the block quote markers (">") that began this line
        self._escaped = False  # the last character was a backslash escaping the next
        self._closing = False  # in a fence: this line so far is its closing fence
        self._run = ""  # the character of a backtick or tilde run not yet ended
        self._run_len = 0
        self._run_at_line_start = False

    @property
    def settled(self) -> bool:
        """True when a piece with no backtick and no line break changes nothing."""
        return not (self._run or self._line_blank or self._closing or self._escaped)

    def scan(self, text: str) -> list[tuple[int, int, bool]]:
        """Label ``text``, the next piece, as ``(start, end, is_prose)`` slices in order."""
        labels: list[tuple[int, int, bool]] = []
        mark = functools.partial(_mark, labels)
        i, n = 0, len(text)
        while i < n:
            if self._run:
                j = i
                while j < n and text[j] == self._run:
                    j += 1
                mark(i, j, False)
                self._run_len += j - i
                i = j
                if i < n:
                    self._end_run()
                continue
            char = text[i]
            if self._escaped:
                self._escaped = False
                if char in "`\\":  # an escaped backtick or backslash: literal prose
                    mark(i, i + 1, True)
                    i += 1
                    continue
            in_code = bool(self._fence or self._span)
            if self._line_blank:
                if char == "\n" and self._quotes < self._fence_quotes:
                    self._end_fence()  # its block quote ended with a blank line
                    in_code = False
                if char in " \t\n":
                    mark(i, i + 1, not in_code)
                    i += 1
                    if char == "\n":
                        self._quotes = 0
                    continue
                if char == ">" and (not self._fence or self._quotes < self._fence_quotes):
                    self._quotes += 1
                    mark(i, i + 1, not in_code)
                    i += 1
                    continue
                self._line_blank = False
                if self._quotes < self._fence_quotes:
                    self._end_fence()  # the block quote holding the fence ended
                if char == self._fence or (not self._fence and char in "`~"):
                    self._start_run(char, at_line_start=True)
                    continue
            if self._fence:
                i = self._scan_fence_line(text, i, mark)
                continue
            found = (_SPAN_OR_LINE_END if self._span else _PROSE_STOP).search(text, i)
            end = n if found is None else found.start()
            mark(i, end, not self._span)
            i = end
            if found is None:
                break
            if text[i] == "`":
                self._start_run("`", at_line_start=False)
                continue
            mark(i, i + 1, not self._span)
            i += 1
            if text[i - 1] == "\\":
                self._escaped = True
                continue
            if self._span and self._may_open_fence:
                self._fence, self._fence_len, self._fence_quotes = "`", self._span, self._quotes
            self._span, self._may_open_fence = 0, False
            self._new_line()
        return labels

    def _new_line(self) -> None:
        self._line_blank, self._quotes = True, 0

    def _end_fence(self) -> None:
        self._fence, self._fence_len, self._fence_quotes, self._closing = "", 0, 0, False

    def _scan_fence_line(self, text: str, i: int, mark: _Mark) -> int:
        """Read fence content from ``i`` to its line's end (included); return where it stops."""
        if self._closing:
            while i < len(text) and text[i] in " \t":
                mark(i, i + 1, False)
                i += 1
            if i == len(text):
                return i
            if text[i] == "\n":
                mark(i, i + 1, False)
                self._end_fence()
                self._new_line()
                return i + 1
            self._closing = False
        newline = text.find("\n", i)
        if newline < 0:
            mark(i, len(text), False)
            return len(text)
        mark(i, newline + 1, False)
        self._new_line()
        return newline + 1

    def _start_run(self, char: str, *, at_line_start: bool) -> None:
        self._run, self._run_len, self._run_at_line_start = char, 0, at_line_start

    def _end_run(self) -> None:
        char, length, at_line_start = self._run, self._run_len, self._run_at_line_start
        self._run, self._run_len = "", 0
        if self._fence:  # a run of the fence's character began the line
            self._closing = length >= self._fence_len
        elif char == "~":  # began a prose line
            if length >= 3:
                self._fence, self._fence_len, self._fence_quotes = "~", length, self._quotes
        elif self._span:
            if length == self._span:
                self._span = 0
            # A backtick after a fence's opening backticks: an inline span, no fence.
            self._may_open_fence = False
        else:
            self._span = length
            self._may_open_fence = at_line_start and length >= 3


def _mark(labels: list[tuple[int, int, bool]], start: int, end: int, prose: bool) -> None:
    """Append a labelled slice, joined to the previous one when it continues it."""
    if start >= end:
        return
    if labels and labels[-1][2] == prose and labels[-1][1] == start:
        labels[-1] = (labels[-1][0], end, prose)
    else:
        labels.append((start, end, prose))
