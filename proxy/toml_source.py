"""Where each key of a TOML document is, and how to name it: what config errors show.

``tomllib`` gives values without positions, so this walks the (already valid) document
once more and records the line of every table, key and array element, under the path
pydantic reports: keys by name, array elements (``[[table]]`` entries and the items of
inline arrays) by their 0-based index as a string.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

Path = tuple[str, ...]

_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SCALAR_END = frozenset(",]}\n#")


class TomlSource:
    """A parsed TOML document with the lines its keys are on."""

    def __init__(self, text: str, data: dict[str, Any]) -> None:
        self._lines = key_lines(text)
        self._data = data

    def line(self, path: Path) -> int | None:
        """The line of ``path``, else of the nearest table or entry above it that is in
        the file (a missing key is reported where its table is); ``None`` if none is."""
        for end in range(len(path), 0, -1):
            line = self._lines.get(path[:end])
            if line is not None:
                return line
        return None

    def key_line(self, path: Path) -> int | None:
        """The line of ``path`` itself, ``None`` when the file does not set it."""
        return self._lines.get(path)

    def name(self, path: Path) -> str:
        """``path`` as the operator knows it: dotted, with an array element named by its
        ``id`` when it has one, else as its 1-based entry (``auth.keys[entry 2].key``).

        Parts that name neither a key nor an element (pydantic's union member tags, such
        as ``literal['a','b']``) are left out.
        """
        parts: list[str] = []
        node: Any = self._data
        for part in path:
            if isinstance(node, list) and part.isdigit() and parts:
                index = int(part)
                node = node[index] if index < len(node) else None
                ident = node.get("id") if isinstance(node, dict) else None
                label = (
                    f"id {ident!r}" if isinstance(ident, str) and ident else f"entry {index + 1}"
                )
                parts[-1] += f"[{label}]"
            elif isinstance(node, dict) and part in node:
                parts.append(part)
                node = node[part]
            elif "[" not in part:
                parts.append(part)
                node = None
        return ".".join(parts)


def key_lines(text: str) -> dict[Path, int]:
    """The 1-based line of every path in ``text``: a table's header, a key, an element.

    ``text`` must be valid TOML (parse it with ``tomllib`` first); on anything else the
    paths found before the surprise are returned.
    """
    scanner = _Scanner(text)
    try:
        scanner.document()
    except (IndexError, ValueError):
        pass
    return scanner.lines


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.lines: dict[Path, int] = {}
        self._line_starts = [0, *(i + 1 for i, char in enumerate(text) if char == "\n")]
        # Per array of tables (its path, indices resolved): how many entries so far.
        self._entries: dict[Path, int] = {}

    def document(self) -> None:
        table: Path = ()
        while True:
            self._skip(newlines=True)
            if self.pos >= len(self.text):
                return
            if self.text.startswith("[[", self.pos):
                table = self._header(array=True)
            elif self.text[self.pos] == "[":
                table = self._header(array=False)
            else:
                self._key_value(table)

    def _header(self, *, array: bool) -> Path:
        line = self._line()
        self.pos += 2 if array else 1
        keys = self._key()
        self.pos += 2 if array else 1
        resolved: list[str] = []
        for key in keys:
            resolved.append(key)
            # A name that is an array of tables means its latest entry, as in TOML.
            count = self._entries.get(tuple(resolved))
            if count is not None and (len(resolved) < len(keys) or not array):
                resolved.append(str(count - 1))
        if array:
            count = self._entries.get(tuple(resolved), 0)
            self._entries[tuple(resolved)] = count + 1
            resolved.append(str(count))
        path = tuple(resolved)
        self._record(path, line)
        return path

    def _key_value(self, table: Path) -> None:
        line = self._line()
        path = (*table, *self._key())
        self._record(path, line)
        self._skip()
        self.pos += 1  # "="
        self._value(path)

    def _value(self, path: Path) -> None:
        self._skip()
        text, pos = self.text, self.pos
        if text.startswith(('"""', "'''"), pos):
            quote = text[pos : pos + 3]
            end = self._string_end(pos + 3, quote, escapes=quote == '"""')
            # Up to two quotes of the text may sit right before the closing delimiter.
            for _ in range(2):
                if end < len(text) and text[end] == quote[0]:
                    end += 1
            self.pos = end
        elif text[pos] in "\"'":
            self.pos = self._string_end(pos + 1, text[pos], escapes=text[pos] == '"')
        elif text[pos] == "[":
            self._array(path)
        elif text[pos] == "{":
            self._inline_table(path)
        else:
            while self.pos < len(text) and text[self.pos] not in _SCALAR_END:
                self.pos += 1

    def _array(self, path: Path) -> None:
        self.pos += 1
        index = 0
        while True:
            self._skip(newlines=True)
            if self.text[self.pos] == "]":
                self.pos += 1
                return
            element = (*path, str(index))
            self._record(element, self._line())
            self._value(element)
            self._skip(newlines=True)
            if self.text[self.pos] == ",":
                self.pos += 1
            index += 1

    def _inline_table(self, path: Path) -> None:
        self.pos += 1
        while True:
            self._skip(newlines=True)
            if self.text[self.pos] == "}":
                self.pos += 1
                return
            if self.text[self.pos] == ",":
                self.pos += 1
                continue
            self._key_value(path)

    def _key(self) -> list[str]:
        """A dotted key, each part bare or quoted; leaves ``pos`` after it."""
        parts: list[str] = []
        while True:
            self._skip()
            start = self.pos
            char = self.text[start]
            if char in "\"'":
                end = self._string_end(start + 1, char, escapes=char == '"')
                parts.append(self.text[start + 1 : end - 1])
                self.pos = end
            else:
                while self.text[self.pos] in _BARE_KEY:
                    self.pos += 1
                if self.pos == start:
                    raise ValueError(f"no key at offset {start}")
                parts.append(self.text[start : self.pos])
            self._skip()
            if self.text[self.pos] != ".":
                return parts
            self.pos += 1

    def _string_end(self, pos: int, quote: str, *, escapes: bool) -> int:
        """The offset just past the closing ``quote`` of a string whose text starts at
        ``pos``."""
        text = self.text
        while not text.startswith(quote, pos):
            pos += 2 if escapes and text[pos] == "\\" else 1
            if pos >= len(text):
                raise ValueError("unterminated string")
        return pos + len(quote)

    def _skip(self, *, newlines: bool = False) -> None:
        """Past spaces and comments, and line ends too with ``newlines``."""
        text = self.text
        blanks = " \t\r\n" if newlines else " \t"
        while self.pos < len(text):
            char = text[self.pos]
            if char in blanks:
                self.pos += 1
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def _line(self) -> int:
        return bisect_right(self._line_starts, self.pos)

    def _record(self, path: Path, line: int) -> None:
        # The first mention wins, and names every table above it that has no line yet.
        for end in range(1, len(path) + 1):
            self.lines.setdefault(path[:end], line)
