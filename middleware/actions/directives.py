"""Clock directives: the relay's own syntax in a message (spec 000 §5.2, §7.3).

``clock it: …`` clocks a label, ``clock: kind|mode|auto …`` changes a thread setting.
Directives are the same in every language (like slash commands), so unlike the
natural-language detectors in :mod:`middleware.actions.detect` they have no per-language
patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from middleware.clock.policy import MODES, THREAD_KINDS, Mode, ThreadKind

__all__ = [
    "SEPARATORS",
    "ClockIt",
    "Directive",
    "InvalidDirective",
    "SetAuto",
    "SetKind",
    "SetMode",
    "is_directive_only",
    "parse_directive",
]


@dataclass(frozen=True, slots=True)
class ClockIt:
    """``clock it: <label_text>`` (or a trailing ``clock it``); ``group`` when clocked for
    the whole group thread (§7.3)."""

    label_text: str
    group: bool = False


@dataclass(frozen=True, slots=True)
class SetKind:
    """``clock: kind <kind>`` (§5.2)."""

    kind: ThreadKind


@dataclass(frozen=True, slots=True)
class SetMode:
    """``clock: mode <mode>`` / ``clock: off``; ``mode`` None (``clock: on``) means back to
    the configured default."""

    mode: Mode | None


@dataclass(frozen=True, slots=True)
class SetAuto:
    """``clock: auto on|off``: auto-storage of temporal actions (§0 auto_clock_…)."""

    enabled: bool


@dataclass(frozen=True, slots=True)
class InvalidDirective:
    """A directive we recognised but cannot apply; ``problem`` tells the user what was
    wrong and what to write instead."""

    problem: str


Directive = ClockIt | SetKind | SetMode | SetAuto | InvalidDirective

_LEADING = re.compile(
    r"^\s*clock(?P<it>\s+it)?(?P<group>\s+(?:for\s+(?:the\s+)?)?group)?\s*:(?P<rest>.*)\Z",
    re.IGNORECASE | re.DOTALL,
)
_TRAILING = re.compile(
    r"(?:^|[\s,;:.!—–-])\s*clock\s+it(?P<group>\s+for\s+(?:the\s+)?group)?\s*[.!]*\s*\Z",
    re.IGNORECASE,
)
_TRAILING_NEGATED = re.compile(r"\b(?:don'?t|do\s+not|never|not|no\s+need\s+to)\s*$", re.I)
_SETTING = re.compile(r"^\s*(?P<key>kind|mode|auto)\b\s*(?P<value>[\w-]*)(?P<tail>.*)$", re.I)
_ON_OFF = re.compile(r"^\s*(?P<value>on|off)\s*[.!]*\s*$", re.IGNORECASE)
SEPARATORS = " \t\r\n.,;:!—–-"
_EMPTY = (
    "Nothing to clock: write what to remember after the colon — e.g. `clock it: heading to the gym`"
)


def parse_directive(text: str) -> Directive | None:
    """The clock directive ``text`` starts with (or ends with, for ``clock it``), or None.

    Case-insensitive. ``clock it: X`` / ``clock: X`` clock X; ``clock group: X`` and
    ``clock it for the group: X`` clock X for the group; ``clock: kind|mode|auto <value>``,
    ``clock: off`` and ``clock: on`` change settings. A bad setting value or an empty label
    is an :class:`InvalidDirective` saying what to write instead.
    """
    parsed = _parse(text)
    return parsed[0] if parsed else None


def is_directive_only(text: str, directive: Directive) -> bool:
    """Whether ``text`` holds nothing but ``directive`` (for :class:`ClockIt`, the label
    counts as part of it), so a settings change can be answered by the relay itself."""
    parsed = _parse(text)
    return parsed is not None and parsed[0] == directive and not parsed[1].strip(SEPARATORS)


def _parse(text: str) -> tuple[Directive, str] | None:
    """The directive and whatever else the message says."""
    leading = _LEADING.match(text)
    if leading:
        lines = [line for line in leading["rest"].strip().splitlines() if line.strip()]
        first, remainder = (lines[0].strip(), "\n".join(lines[1:])) if lines else ("", "")
        group = leading["group"] is not None
        if not leading["it"] and not group:
            setting = _setting(first)
            if setting is not None:
                return setting[0], f"{setting[1]}\n{remainder}"
        if not first.strip(SEPARATORS):
            return InvalidDirective(_EMPTY), remainder
        return ClockIt(first, group=group), remainder
    trailing = _TRAILING.search(text)
    if trailing is None:
        return None
    body = text[: trailing.start()].strip().rstrip(SEPARATORS)
    if _TRAILING_NEGATED.search(body):
        return None  # "please don't clock it"
    if not body:
        return InvalidDirective(_EMPTY), ""
    return ClockIt(body, group=trailing["group"] is not None), ""


def _setting(line: str) -> tuple[Directive, str] | None:
    """A settings directive on ``line`` and the text after it, or None for a label."""
    on_off = _ON_OFF.match(line)
    if on_off:
        return SetMode("off" if on_off["value"].lower() == "off" else None), ""
    match = _SETTING.match(line)
    if match is None:
        return None
    key, value, tail = match["key"].lower(), match["value"].lower(), match["tail"]
    directive = _setting_value(key, value)
    if directive is not None:
        return directive, tail
    if tail.strip(SEPARATORS):
        return None  # "clock: kind of tired today" is a label, not a setting
    return InvalidDirective(_setting_problem(key, value)), ""


def _setting_value(key: str, value: str) -> Directive | None:
    if key == "kind":
        kinds: dict[str, ThreadKind] = {kind: kind for kind in THREAD_KINDS}
        return SetKind(kinds[value]) if value in kinds else None
    if key == "mode":
        modes: dict[str, Mode] = {mode: mode for mode in MODES}
        if value in ("on", "default"):
            return SetMode(None)
        return SetMode(modes[value]) if value in modes else None
    if value in ("on", "yes", "true"):
        return SetAuto(True)
    if value in ("off", "no", "false"):
        return SetAuto(False)
    return None


def _setting_problem(key: str, value: str) -> str:
    if key == "kind":
        what, options, example = "a thread kind", ", ".join(THREAD_KINDS), "kind project"
    elif key == "mode":
        what, options, example = "a clock mode", ", ".join(MODES), "mode light"
    else:
        what, options, example = "an auto setting", "on, off", "auto off"
    said = f"'{value}' is not {what}" if value else f"`clock: {key}` needs {what}"
    return f"{said}; use one of: {options} — e.g. `clock: {example}`"
