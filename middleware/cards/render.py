"""Render the three tier cards within their token budgets (spec 001 §6).

Tier 1 ``resume`` is this work context's state, Tier 2 ``recent_activity`` the user's other
recent work, Tier 3 ``living_memory`` their stable facts. Each card stays within its own
cap and all of them within the total: Tier 2 goes first, then Tier 1 is trimmed, and Tier
3 always lands when there is a fact (§6.4). Every count is :func:`count_tokens` of the
exact card string, tags included. Pure: no I/O, no clock; ``now`` is passed in.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from middleware.cards.content import CardBudget, CardItem, ResumeContent, SessionLine
from middleware.cards.tokens import count_tokens as _count_tokens
from middleware.continuity.model import MemoryFact, RollupSegment
from middleware.continuity.summary import item_key
from middleware.memory.candidate import MemoryCandidate
from middleware.memory.confidence import is_hedged
from middleware.memory.replacement import supersedes


@functools.lru_cache(maxsize=1024)
def count_tokens(text: str) -> int:
    """:func:`middleware.cards.tokens.count_tokens`, remembered: fitting a card counts
    the same candidate texts more than once (and a card is counted again at the end)."""
    return _count_tokens(text)


logger = logging.getLogger(__name__)

RESUME = "resume"
RECENT_ACTIVITY = "recent_activity"
LIVING_MEMORY = "living_memory"

ELLIPSIS = "…"
# How tier 1 introduces a cross-conversation update ("Since last session: advanced on …").
UPDATE_LABEL = "Since last session"
MAX_SESSIONS = 3
MAX_OPEN_QUESTIONS = 3
MAX_DECISIONS = 2
# A weekday names a session unambiguously only within the past week.
_WEEKDAY_WINDOW = timedelta(days=6)
# Cards are read by the model, in English and one fixed shape (as the temporal block).
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Living memory: the name first, then standing instructions, then facts (§6.3).
_MEMORY_RANK = {"name": 0, "directive": 1, "preference": 1, "fact": 2, "correction": 2}


@dataclass(frozen=True, slots=True)
class RenderedCards:
    """The cards that landed and what the budgets cost.

    ``cards`` are in tier order (resume, recent_activity, living_memory), only those that
    landed; ``tokens`` is the sum of their :func:`count_tokens`. ``dropped`` names each
    tier dropped for budget (``"recent_activity"``) or trimmed (``"resume:session_history"``,
    ``"recent_activity:segments"``, ``"living_memory:facts"``, ``"<tier>:shortened"`` for a
    line cut with "…"). A tier with nothing to show (no content, a stale rollup) is absent
    from both.
    """

    cards: tuple[str, ...]
    tokens: int
    dropped: tuple[str, ...]


def render_cards(
    resume: ResumeContent | None,
    activity: Sequence[RollupSegment],
    memory: Sequence[MemoryFact],
    *,
    current_context_id: str | None,
    budget: CardBudget,
    now: datetime,
    zone: ZoneInfo | None = None,
    activity_max_age: timedelta = timedelta(days=7),
) -> RenderedCards:
    """Render the tier cards for one turn (spec 001 §6).

    ``activity`` segments of ``current_context_id`` are left out (§6.2 anti-duplication),
    and the whole tier is skipped when its newest remaining segment was generated more than
    ``activity_max_age`` before ``now``. Dates show in ``zone`` (UTC when ``None``).

    Guarantees: each card is within its own cap and the cards together within
    ``budget.total``; the living memory card is present whenever ``memory`` has a fact and
    ``budget.living_memory`` holds its tags and one shortened line (it is never dropped; a
    cap too small for that is logged and the card lands over it).
    """
    tz: tzinfo = zone if zone is not None else UTC
    dropped: list[str] = []

    memory_card = _living_memory_card(memory, budget.living_memory, dropped, now, tz)
    room = budget.total - _cost(memory_card)

    sections = _resume_sections(resume, tz, now) if resume is not None else []
    header = _resume_header(resume) if resume is not None else ""
    resume_card = _fit_resume(header, sections, min(budget.resume, room), dropped)
    if resume_card is None and _has_items(sections):
        # Not even the header and one shortened line fit beside Tier 3: mis-sized budgets.
        dropped.append(RESUME)
        logger.warning(
            "card budgets (total %s, resume %s) cannot hold the resume card beside "
            "living_memory (%s tokens); injecting without it",
            budget.total,
            budget.resume,
            _cost(memory_card),
        )
    room -= _cost(resume_card)

    segments = _activity_segments(activity, current_context_id, now, activity_max_age)
    activity_card = _fit_activity(segments, min(budget.recent_activity, room), dropped)

    cards = tuple(card for card in (resume_card, activity_card, memory_card) if card)
    return RenderedCards(
        cards=cards,
        tokens=sum(count_tokens(card) for card in cards),
        dropped=tuple(dict.fromkeys(dropped)),
    )


# --- shared helpers -----------------------------------------------------------------


def _card(kind: str, tag: str, lines: Sequence[str]) -> str:
    body = "\n".join(lines)
    return f'<card type="{kind}" tag="{tag}">\n{body}\n</card>'


def _cost(card: str | None) -> int:
    return count_tokens(card) if card else 0


def _one_line(text: str) -> str:
    """An item is one line: newlines and runs of blanks collapse to a space."""
    return " ".join(text.split())


def _shorten(text: str, fits: Callable[[str], bool]) -> str | None:
    """The longest ``text[:n] + "…"`` that ``fits``, or ``None`` if not even "…" does.

    Binary search assumes longer never costs less; the result is checked, so a counter that
    breaks that only costs characters, never the budget.
    """
    low, high = 0, len(text) - 1
    best: str | None = None
    while low <= high:
        middle = (low + high) // 2
        candidate = text[:middle].rstrip() + ELLIPSIS
        if fits(candidate):
            best = candidate
            low = middle + 1
        else:
            high = middle - 1
    if best is None and fits(ELLIPSIS):
        best = ELLIPSIS
    return best


def _date(instant: datetime, tz: tzinfo, now: datetime) -> str:
    """'Mon' within the past week, '3 Nov' before it, '3 Nov 2025' in an earlier year."""
    local = instant.astimezone(tz)
    if timedelta(0) <= now - instant < _WEEKDAY_WINDOW:
        return _DAYS[local.weekday()]
    day = f"{local.day} {_MONTHS[local.month - 1]}"
    return day if local.year == now.astimezone(tz).year else f"{day} {local.year}"


# --- Tier 1: resume -------------------------------------------------------------------


@dataclass(slots=True)
class _Section:
    """Lines of one ResumeContent field, most important first; trimmed from the end."""

    name: str
    lines: list[str]


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


def _resume_header(content: ResumeContent) -> str:
    name = _one_line(content.work_context_name) or "This conversation"
    phase = _one_line(content.active_work_phase.replace("_", " "))
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
    text = _one_line(item.text)
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
    return f"{_DAYS[local.weekday()]} {local.day} {_MONTHS[local.month - 1]}"


def _resume_sections(content: ResumeContent, tz: tzinfo, now: datetime) -> list[_Section]:
    sessions = sorted(
        (line for line in content.session_history if _one_line(line.summary)),
        key=lambda line: line.captured_at,
        reverse=True,
    )[:MAX_SESSIONS]
    questions = [q for q in content.open_questions if _one_line(q.text)][:MAX_OPEN_QUESTIONS]
    decisions = [d for d in content.key_decisions if _one_line(d.text)][:MAX_DECISIONS]
    shown = {item_key(item.text) for item in (*questions, *decisions)}
    history = [
        f"{'Last session' if index == 0 else 'Earlier'} "
        f"({_date(line.captured_at, tz, now)}): {_session_text(line, shown)}"
        for index, line in enumerate(sessions)
    ]
    by_name = {
        "session_history": history,
        "open_questions": [_item("Open", q, tz) for q in questions],
        "key_decisions": [_item("Decision", d, tz) for d in decisions],
        "obligations": [
            _item("Still open", item, tz) for item in content.obligations if _one_line(item.text)
        ],
        "standing_decisions": [
            f"Standing decision: {_one_line(text)}"
            for text in content.standing_decisions
            if _one_line(text)
        ],
        "cross_conversation_updates": [
            f"{UPDATE_LABEL}: {_one_line(text)}"
            for text in content.cross_conversation_updates
            if _one_line(text)
        ],
        "phase_hint": [_one_line(content.phase_hint)]
        if content.phase_hint and _one_line(content.phase_hint)
        else [],
    }
    return [_Section(name, by_name[name]) for name in _SHOW_ORDER]


def _session_text(line: SessionLine, shown: set[str]) -> str:
    """The session's summary without the items the card shows on their own Open/Decision
    lines, so the session line carries what the others don't (and costs less of the
    §6.1 budget, which cuts it first). A summary without parts (an LLM's free text, or one
    stored before parts were kept) is shown as it is."""
    if line.parts is None:
        return _one_line(line.summary)
    return line.parts.text(leave_out=shown)


def _has_items(sections: Sequence[_Section]) -> bool:
    return any(section.lines for section in sections)


def _resume_text(header: str, sections: Sequence[_Section]) -> str:
    lines = [header, *(line for section in sections for line in section.lines)]
    return _card("continuity", RESUME, lines)


def _fit_resume(header: str, sections: list[_Section], cap: int, dropped: list[str]) -> str | None:
    """The resume card within ``cap``, trimmed in §6.1 order; ``None`` when there is
    nothing to say or not even the header and one shortened line fit.

    §6.1 truncates session_history first: its earlier sessions go, then the last
    session's line is cut to the tokens left (:func:`_cut_session_line`), and only when
    not even a few of its words fit does it go too. A card a few tokens over the cap
    loses those few tokens, not the one line that says where the work stood."""
    if not _has_items(sections):
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
    """The card with its one session line cut at a word, with "…", to fit ``cap``
    exactly; ``None`` when fewer than :data:`_MIN_SESSION_WORDS` of its words fit."""
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
        return _card("continuity", RESUME, [header, candidate])

    shortened = _shorten(line, lambda text: count_tokens(with_line(text)) <= cap)
    if shortened is not None and shortened != ELLIPSIS:
        dropped.append(f"{RESUME}:shortened")
        return with_line(shortened)
    # Not even a word of the line fits beside the header: cut the header too.
    short_header = _shorten(
        header, lambda text: count_tokens(_card("continuity", RESUME, [text, ELLIPSIS])) <= cap
    )
    if short_header is None or short_header == ELLIPSIS:
        return None
    shortened = _shorten(
        line, lambda text: count_tokens(_card("continuity", RESUME, [short_header, text])) <= cap
    )
    if shortened is None or shortened == ELLIPSIS:
        return None
    dropped.append(f"{RESUME}:shortened")
    return _card("continuity", RESUME, [short_header, shortened])


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


# --- Tier 2: recent activity ------------------------------------------------------------

_ACTIVITY_HEADER = "Recently (other work):"


def _activity_segments(
    activity: Sequence[RollupSegment],
    current_context_id: str | None,
    now: datetime,
    max_age: timedelta,
) -> list[str]:
    """Texts of the other contexts' segments, newest activity first; none when stale."""
    others = [
        segment
        for segment in activity
        if segment.work_context_id != current_context_id and _one_line(segment.text)
    ]
    if not others or now - max(s.generated_at for s in others) > max_age:
        return []
    others.sort(key=lambda segment: segment.last_activity_at, reverse=True)
    return [_one_line(segment.text) for segment in others]


def _fit_activity(texts: list[str], cap: int, dropped: list[str]) -> str | None:
    """The recent activity card within ``cap``, dropping the oldest segments first."""
    if not texts:
        return None

    def card(body: Sequence[str]) -> str:
        return _card(
            RECENT_ACTIVITY, RECENT_ACTIVITY, [_ACTIVITY_HEADER, *(f"- {t}" for t in body)]
        )

    kept = list(texts)
    while len(kept) > 1 and count_tokens(card(kept)) > cap:
        kept.pop()
    if len(kept) < len(texts):
        dropped.append(f"{RECENT_ACTIVITY}:segments")
    if count_tokens(card(kept)) <= cap:
        return card(kept)
    shortened = _shorten(kept[0], lambda text: count_tokens(card([text])) <= cap)
    if shortened is None or shortened == ELLIPSIS:
        dropped.append(RECENT_ACTIVITY)
        return None
    dropped.append(f"{RECENT_ACTIVITY}:shortened")
    return card([shortened])


# --- Tier 3: living memory ----------------------------------------------------------------


def _living_memory_card(
    memory: Sequence[MemoryFact], cap: int, dropped: list[str], now: datetime, tz: tzinfo
) -> str | None:
    """The living memory card: never dropped while there is a fact (§6.3). A fact memory
    is no longer sure of (spec 003 §8) says when it was last said and that it may be out
    of date, so the model asks rather than asserts it."""
    facts = _standing([fact for fact in memory if _one_line(fact.text)])
    if not facts:
        return None
    # Most important first: by kind, the sure before the doubtful, then newest; trimming
    # pops from the end.
    facts.sort(key=lambda fact: fact.created_at, reverse=True)
    facts.sort(
        key=lambda fact: (_MEMORY_RANK.get(fact.kind, len(_MEMORY_RANK)), is_hedged(fact, now))
    )
    lines = [_memory_line(fact, now, tz) for fact in facts]

    def card(body: Sequence[str]) -> str:
        return _card(LIVING_MEMORY, LIVING_MEMORY, body)

    kept = list(lines)
    while len(kept) > 1 and count_tokens(card(kept)) > cap:
        kept.pop()
    if len(kept) < len(lines):
        dropped.append(f"{LIVING_MEMORY}:facts")
    if count_tokens(card(kept)) <= cap:
        return card(kept)
    dropped.append(f"{LIVING_MEMORY}:shortened")
    shortened = _shorten(kept[0], lambda text: count_tokens(card([text])) <= cap)
    if shortened is None:
        logger.warning(
            "living_memory cap %s is below the card's own size; it lands over the cap", cap
        )
        shortened = ELLIPSIS
    return card([shortened])


# The kinds a later fact may retire (as ``middleware.memory.learn`` retires them when said).
_RETIRABLE = ("fact", "correction", "preference")


def _standing(facts: Sequence[MemoryFact]) -> list[MemoryFact]:
    """The facts no fact said later replaces. Said on one account, a new home retires
    the old one when it is stored; two accounts linked later each bring their own ("Lives
    in Paris" on Telegram, "Lives in Tokyo" on Discord), and the model, shown both, could
    not tell which holds: the one said last does, as if both were said on one account.
    ``/memory`` still lists both, for the user to delete one. Facts of one account were
    reconciled when stored: only another account's are compared."""
    if len({fact.user_key for fact in facts}) < 2:
        return list(facts)
    newest_first = sorted(facts, key=lambda fact: fact.last_mentioned_at, reverse=True)
    kept: list[MemoryFact] = []
    for fact in newest_first:
        if not any(_replaces(later, fact) for later in kept):
            kept.append(fact)
    return [fact for fact in facts if fact in kept]


def _replaces(later: MemoryFact, earlier: MemoryFact) -> bool:
    if later.user_key == earlier.user_key:
        return False
    if later.kind == "name" or earlier.kind == "name":
        return later.kind == earlier.kind  # a person has one name
    return (
        later.kind in _RETIRABLE
        and earlier.kind in _RETIRABLE
        and supersedes(MemoryCandidate(later.kind, later.text), earlier.text)
    )


def _memory_line(fact: MemoryFact, now: datetime, tz: tzinfo) -> str:
    text = _one_line(fact.text)
    if not is_hedged(fact, now):
        return text
    said = fact.last_mentioned_at.astimezone(tz)
    return f"{text} (said {_MONTHS[said.month - 1]} {said.year}, may be out of date)"
