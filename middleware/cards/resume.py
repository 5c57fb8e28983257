"""Tier 1, the ``resume`` card: where this work context stood, trimmed in §6.1 order to
its cap (spec 001 §6.1).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from middleware.cards.content import CardItem, ResumeContent, SessionLine
from middleware.cards.fitting import (
    DAYS,
    ELLIPSIS,
    MONTHS,
    RESUME,
    count_tokens,
    one_line,
    shorten,
    tagged_card,
)
from middleware.continuity.summary import item_key

# How tier 1 introduces a cross-conversation update ("Since last session: advanced on …").
UPDATE_LABEL = "Since last session"
MAX_SESSIONS = 3
MAX_OPEN_QUESTIONS = 3
MAX_DECISIONS = 2
# A weekday names a session unambiguously only within the past week.
_WEEKDAY_WINDOW = timedelta(days=6)


def _date(instant: datetime, tz: tzinfo, now: datetime) -> str:
    """'Mon' within the past week, '3 Nov' before it, '3 Nov 2025' in an earlier year."""
    local = instant.astimezone(tz)
    if timedelta(0) <= now - instant < _WEEKDAY_WINDOW:
        return DAYS[local.weekday()]
    day = f"{local.day} {MONTHS[local.month - 1]}"
    return day if local.year == now.astimezone(tz).year else f"{day} {local.year}"


@dataclass(slots=True)
class _Section:
    """Lines of one ResumeContent field, most important first; trimmed from the end."""

    name: str
    lines: list[str]
    # session_history's first line without its duration: what it is cut from, since
    # where the work stood says more than how long it took.
    shorter_first: str | None = None


# §6.1: truncate session_history first, then key_decisions, then open_questions, then
# cross_conversation_updates. Obligations go with the open questions they grew from, and
# standing decisions after them (promoted: they outlast the rest); the phase hint (§6.5)
# is one short line kept to the end.
_TRIM_ORDER = (
    "session_history",
    "key_decisions",
    "open_questions",
    "obligations",
    "standing_decisions",
    "cross_conversation_updates",
    "phase_hint",
)
# The order lines appear in, as in the §6.1 example.
_SHOW_ORDER = (
    "session_history",
    "open_questions",
    "key_decisions",
    "standing_decisions",
    "obligations",
    "cross_conversation_updates",
    "phase_hint",
)


def resume_header(content: ResumeContent) -> str:
    name = one_line(content.work_context_name) or "This conversation"
    phase = one_line(content.active_work_phase.replace("_", " "))
    if not phase or phase == "unknown":
        return f"{name}."
    return f"{name} — {phase} phase."


def _item(label: str, item: CardItem, tz: tzinfo) -> str:
    marks = [
        *_said(item, tz),
        *put_off_marks(item, tz),
        *(["unconfirmed"] if item.tentative else []),
    ]
    mark = f" ({'; '.join(marks)})" if marks else ""
    text = one_line(item.text)
    if item.put_off_at is not None:
        # Put off since: the day first said for it ("tomorrow") is no longer when it is
        # due, and the model would take it for the current plan.
        text = without_relative_days(text) or text
    return f"{label}: {text}{mark}"


# Words whose day depends on when they were said: "by Friday", "tomorrow", "next week".
_RELATIVE_DAY = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|weekend|(?:this|next|last)\s+(?:week|month|year)"
    r"|end\s+of\s+(?:the\s+)?(?:day|week|month)|in\s+(?:a|\d+)\s+(?:days?|weeks?|months?)"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    re.IGNORECASE,
)


# A relative day with the word that ties it to the item: "by Friday", "on Monday".
_DAY_PHRASE = re.compile(
    r"(?:\s+(?:by|on|for|before|until|till|from|due))?\s*" + _RELATIVE_DAY.pattern,
    re.IGNORECASE,
)


def _said(item: CardItem, tz: tzinfo) -> list[str]:
    """ "said Mon 2 Nov" for an item whose words name a day relative to when it was said,
    so "by Friday" is read against that week, not the one the card is shown in (kept for
    an item put off since: when it was first said is still true)."""
    if item.said_at is None or not _RELATIVE_DAY.search(item.text):
        return []
    return [f"said {_day(item.said_at, tz)}"]


def put_off_marks(item: CardItem, tz: tzinfo) -> list[str]:
    """ "put off to Mon 16 Nov" for an item the user put off to a day since; "put off
    Tue 10 Nov" when they gave none ("till the freeze ends")."""
    if item.put_off_at is None:
        return []
    if item.put_off_to is not None:
        return [f"put off to {_day(item.put_off_to, tz)}"]
    return [f"put off {_day(item.put_off_at, tz)}"]


def without_relative_days(text: str) -> str:
    """``text`` without the days it names relative to when it was said: "call the bank
    tomorrow about the letter" → "call the bank about the letter"."""
    left = " ".join(_DAY_PHRASE.sub(" ", text).split())
    return re.sub(r"\s+(?=[,;:.!?])", "", left).strip(" ,;:-")


def _day(instant: datetime, tz: tzinfo) -> str:
    local = instant.astimezone(tz)
    return f"{DAYS[local.weekday()]} {local.day} {MONTHS[local.month - 1]}"


def resume_sections(content: ResumeContent, tz: tzinfo, now: datetime) -> list[_Section]:
    sessions = sorted(
        (line for line in content.session_history if one_line(line.summary)),
        key=lambda line: line.captured_at,
        reverse=True,
    )[:MAX_SESSIONS]
    questions = [q for q in content.open_questions if one_line(q.text)][:MAX_OPEN_QUESTIONS]
    decisions = [d for d in content.key_decisions if one_line(d.text)][:MAX_DECISIONS]
    shown = {item_key(item.text) for item in (*questions, *decisions)}
    history = [
        f"{'Last session' if index == 0 else 'Earlier'} "
        f"({_session_when(line, tz, now, last=index == 0)}): {_session_text(line, shown)}"
        for index, line in enumerate(sessions)
    ]
    without_duration = (
        f"Last session ({_date(sessions[0].when, tz, now)}): {_session_text(sessions[0], shown)}"
        if sessions
        else None
    )
    by_name = {
        "session_history": history,
        "open_questions": [_item("Open", q, tz) for q in questions],
        "key_decisions": [_item("Decision", d, tz) for d in decisions],
        "obligations": [
            _item("Still open", item, tz) for item in content.obligations if one_line(item.text)
        ],
        "standing_decisions": [
            f"Standing decision: {one_line(text)}"
            for text in content.standing_decisions
            if one_line(text)
        ],
        "cross_conversation_updates": [
            f"{UPDATE_LABEL}: {one_line(text)}"
            for text in content.cross_conversation_updates
            if one_line(text)
        ],
        "phase_hint": [one_line(content.phase_hint)]
        if content.phase_hint and one_line(content.phase_hint)
        else [],
    }
    return [
        _Section(name, by_name[name], without_duration if name == "session_history" else None)
        for name in _SHOW_ORDER
    ]


def _session_when(line: SessionLine, tz: tzinfo, now: datetime, *, last: bool) -> str:
    """ "Mon, 45 min" for the last session (spec 004 §2: when and how long; the gap since
    is the temporal block's); earlier sessions only say when: a duration there costs the
    §6.1 budget that is cut from their lines first."""
    when = _date(line.when, tz, now)
    length = session_length(line.duration_minutes) if last else None
    return f"{when}, {length}" if length else when


def session_length(minutes: int | None) -> str | None:
    """A session's duration as the card and /recap say it: "45 min", "2 h 10 min",
    "3 h"; ``None`` when unknown or under a minute (a one-message session has none to
    tell)."""
    if minutes is None or minutes < 1:
        return None
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def _session_text(line: SessionLine, shown: set[str]) -> str:
    """The session's summary without the items the card shows on their own Open/Decision
    lines, so the session line carries what the others don't (and costs less of the
    §6.1 budget, which cuts it first). A summary without parts (an LLM's free text, or one
    stored before parts were kept) is shown as it is."""
    if line.parts is None:
        return one_line(line.summary)
    return line.parts.text(leave_out=shown)


def has_items(sections: Sequence[_Section]) -> bool:
    return any(section.lines for section in sections)


def _resume_text(header: str, sections: Sequence[_Section]) -> str:
    lines = [header, *(line for section in sections for line in section.lines)]
    return tagged_card("continuity", RESUME, lines)


def fit_resume(header: str, sections: list[_Section], cap: int, dropped: list[str]) -> str | None:
    """The resume card within ``cap``, trimmed in §6.1 order; ``None`` when there is
    nothing to say or not even the header and one shortened line fit.

    §6.1 truncates session_history first: its earlier sessions go, then the last
    session's line loses its duration and is cut to the tokens left
    (:func:`_cut_session_line`), and only when not even a few of its words fit does it
    go too. A card a few tokens over the cap loses those few tokens, not the one line
    that says where the work stood."""
    if not has_items(sections):
        return None
    by_name = {section.name: section for section in sections}
    for name in _TRIM_ORDER:
        section = by_name[name]
        while section.lines:
            if count_tokens(_resume_text(header, sections)) <= cap:
                return _resume_text(header, sections)
            if sum(len(s.lines) for s in sections) == 1:
                return _shorten_last(header, sections, cap, dropped)
            if name == "session_history" and len(section.lines) == 1:
                cut = _cut_session_line(header, sections, section, cap)
                if cut is not None:
                    dropped.append(f"{RESUME}:shortened")
                    return cut
            section.lines.pop()
            dropped.append(f"{RESUME}:{name}")
    return None


# A session line cut shorter than this many words of its summary says too little to keep.
_MIN_SESSION_WORDS = 4


def _cut_session_line(
    header: str, sections: list[_Section], section: _Section, cap: int
) -> str | None:
    """The card with its one session line without its duration, and if that is still
    over ``cap``, cut at a word, with "…", to fit it exactly; ``None`` when fewer than
    :data:`_MIN_SESSION_WORDS` of its words fit."""
    line = section.lines[0]
    if section.shorter_first is not None and section.shorter_first != line:
        section.lines[0] = section.shorter_first
        if count_tokens(_resume_text(header, sections)) <= cap:
            return _resume_text(header, sections)
        line = section.lines[0]
    label, _, summary = line.partition("): ")
    words = summary.split()

    def card(count: int) -> str:
        section.lines[0] = f"{label}): {_cut(words[:count])}"
        return _resume_text(header, sections)

    # Binary search over the number of words kept: more words never cost fewer tokens.
    low, high, best = _MIN_SESSION_WORDS, len(words) - 1, None
    while low <= high:
        middle = (low + high) // 2
        if count_tokens(card(middle)) <= cap:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    # A cut inside the first bracket leaves fewer words than it kept ("On (3…" is "On…").
    if best is None or len(_cut(words[:best]).split()) < _MIN_SESSION_WORDS:
        section.lines[0] = line
        return None
    return card(best)


def _shorten_last(
    header: str, sections: list[_Section], cap: int, dropped: list[str]
) -> str | None:
    """Last resort: cut the one remaining line, then the header, with "…"."""
    section = next(s for s in sections if s.lines)
    line = section.lines[0]

    def with_line(candidate: str) -> str:
        return tagged_card("continuity", RESUME, [header, candidate])

    shortened = shorten(line, lambda text: count_tokens(with_line(text)) <= cap)
    if shortened is not None and shortened != ELLIPSIS:
        dropped.append(f"{RESUME}:shortened")
        return with_line(shortened)
    # Not even a word of the line fits beside the header: cut the header too.
    short_header = shorten(
        header,
        lambda text: count_tokens(tagged_card("continuity", RESUME, [text, ELLIPSIS])) <= cap,
    )
    if short_header is None or short_header == ELLIPSIS:
        return None
    shortened = shorten(
        line,
        lambda text: count_tokens(tagged_card("continuity", RESUME, [short_header, text])) <= cap,
    )
    if shortened is None or shortened == ELLIPSIS:
        return None
    dropped.append(f"{RESUME}:shortened")
    return tagged_card("continuity", RESUME, [short_header, shortened])


def _cut(words: Sequence[str]) -> str:
    """``words`` as a line cut short, with "…". A bracket the cut leaves open goes with
    what follows it ("(5 messages)" cut to "(5" reads as nothing); a quote it leaves open
    is closed after the "…": the user's words quoted are what the session was on, and
    going back to before the quote left "On…", which says nothing."""
    text = " ".join(words)
    while text.count("(") > text.count(")"):
        text = text[: text.rfind("(")].rstrip()
    text = text.rstrip(" .,;:")
    if text.count("“") > text.count("”"):
        return f"{text}{ELLIPSIS}”"
    return f"{text}{ELLIPSIS}"
