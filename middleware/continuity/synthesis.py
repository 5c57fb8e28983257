"""The "full" capture mode's one LLM pass (spec 001 §5.4): summary plus structured extras.

``build_synthesis_body`` turns the recent conversation into a bounded chat-completions
request with the spec's unified prompt; ``synthesize`` sends it, reads the JSON the model
answers and validates it into a ``SynthesisResult``. Every way this can go wrong ends in
``SynthesisFailed`` with a short reason, so the caller falls back to deterministic capture.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
)

from middleware.clock.temporal import estimate_tokens
from middleware.continuity.model import WORK_PHASES, WorkPhase
from middleware.errors import UpstreamError
from middleware.quoting import quoted
from middleware.types import JSON, Upstream, completion_text

# spec 001 §5.4, verbatim: the unified DOC73 §6.3 + CSA prompt.
SYNTHESIS_PROMPT = """\
You are reviewing a conversation to capture both a session summary and
work-state continuity for cross-session reference.
Given the recent conversation turns below:
PART A — SESSION SUMMARY (DOC73 §6.3):
A 1-2 sentence narrative of what was accomplished and what remains. Focus
on work state, not topic summary. Good: "Drafted subsections 1-3 of the
damages section. Event study section pending — waiting on expert data."
Bad: "Discussed the Henderson case." (200-500 tokens)
PART B — STRUCTURED EXTRAS (CSA):
1. OPEN QUESTIONS: Things the user said they'd come back to, asked but
didn't fully resolve, or explicitly deferred. Only genuine open items,
not rhetorical questions.
2. KEY DECISIONS: Strategic or directional decisions made during this
session that shape future work. Only decisions that would matter if
the user resumed this work next week.
3. WORK PHASE: The dominant phase of work in this session — research,
drafting, review, revision, waiting_for_external, completed, paused.
Respond in JSON:
{
"session_summary": "...",
"open_questions": [{"question": "...", "context": "..."}, ...],
"key_decisions": [{"decision": "...", "rationale": "..."}, ...],
"work_phase": "..."
}
If nothing meaningful was accomplished (casual chat, quick lookup), respond:
{"session_summary": null, "open_questions": [], "key_decisions": [],
"work_phase": "unknown"}"""

# spec 001 §5.4 "Input": the last 10 user turns with their answers, ~2,000 tokens.
MAX_USER_TURNS = 10
TRANSCRIPT_TOKENS = 2_000
# One message may take at most this share of the transcript, so a pasted document does
# not push every earlier turn out.
MESSAGE_TOKENS = TRANSCRIPT_TOKENS // 4
ELLIPSIS = " … "

# spec 001 §4.1: a question, decision or rationale is at most 300 characters, an open
# question's context at most 200.
MAX_ITEM_CHARS = 300
MAX_CONTEXT_CHARS = 200
# The summary is 200-500 tokens at most (spec 001 §5.4 PART A).
MAX_SUMMARY_CHARS = 2_000
MAX_OPEN_QUESTIONS = 10
MAX_KEY_DECISIONS = 5

_LABELS = {"user": "User", "assistant": "Assistant"}
# How many "{" in the answer are tried as the start of the JSON object.
_MAX_JSON_STARTS = 20
_JSON_KINDS: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}


class SynthesisFailed(Exception):
    """The synthesis pass gave no usable result; ``reason`` says why in a few words
    (e.g. "timed out after 30 s"), fit to show to the user or log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _clip(limit: int) -> AfterValidator:
    def clip(value: str) -> str:
        value = value.strip()
        return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"

    return AfterValidator(clip)


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _blank_to_none(value: str | None) -> str | None:
    return value or None


def _phase(value: Any) -> Any:
    # Models vary the spelling ("Waiting for external"); anything else is "unknown".
    if value is None:
        return "unknown"
    if isinstance(value, str):
        key = value.strip().lower().replace(" ", "_").replace("-", "_")
        return key if key in WORK_PHASES else "unknown"
    return value


ItemText = Annotated[str, _clip(MAX_ITEM_CHARS)]


class OpenQuestionOut(BaseModel):
    """One open question as the model states it."""

    model_config = ConfigDict(frozen=True)

    question: ItemText
    context: Annotated[str, _clip(MAX_CONTEXT_CHARS), BeforeValidator(_none_to_empty)] = ""


class KeyDecisionOut(BaseModel):
    """One key decision as the model states it."""

    model_config = ConfigDict(frozen=True)

    decision: ItemText
    rationale: Annotated[ItemText | None, AfterValidator(_blank_to_none)] = None


def _questions(items: list[OpenQuestionOut]) -> list[OpenQuestionOut]:
    return [item for item in items if item.question][:MAX_OPEN_QUESTIONS]


def _decisions(items: list[KeyDecisionOut]) -> list[KeyDecisionOut]:
    return [item for item in items if item.decision][:MAX_KEY_DECISIONS]


class SynthesisResult(BaseModel):
    """What the synthesis pass found (spec 001 §5.4).

    Strict about shape: an object with all four keys, lists of objects with a
    ``question``/``decision`` string. Lenient about content: extra keys are ignored,
    overlong strings are cut (300 characters for list items, 200 for a question's
    context), blank items dropped, lists capped (10 questions, 5 decisions), and a work
    phase it does not know becomes ``"unknown"``. A blank summary is ``None`` (nothing
    meaningful happened).
    """

    model_config = ConfigDict(frozen=True)

    session_summary: Annotated[
        Annotated[str, _clip(MAX_SUMMARY_CHARS)] | None, AfterValidator(_blank_to_none)
    ]
    open_questions: Annotated[list[OpenQuestionOut], AfterValidator(_questions)]
    key_decisions: Annotated[list[KeyDecisionOut], AfterValidator(_decisions)]
    work_phase: Annotated[WorkPhase, BeforeValidator(_phase)]


NOTHING = SynthesisResult(
    session_summary=None, open_questions=[], key_decisions=[], work_phase="unknown"
)


def _shorten(text: str, max_tokens: int) -> str:
    """``text`` cut in the middle with " … " so its estimate is at most ``max_tokens``."""
    if estimate_tokens(text) <= max_tokens:
        return text
    keep = max(0, max_tokens * 4 - len(ELLIPSIS))
    head = keep - keep // 2
    return text[:head].rstrip() + ELLIPSIS + text[len(text) - keep // 2 :].lstrip()


def transcript(messages: Sequence[tuple[str, str]]) -> str:
    """The bounded "User: …"/"Assistant: …" lines the synthesis pass reads.

    Only user and assistant messages count (tool results are not given); what a user
    message forwards or quotes is marked as someone else's words (``_user_line``). The last
    ``MAX_USER_TURNS`` user messages are kept with the answers after them; a message over
    ``MESSAGE_TOKENS`` is cut in the middle; then the oldest turns go until the lines fit
    ``TRANSCRIPT_TOKENS``. The newest turn always stays, cut in the middle if it alone is
    too long.
    """
    # A turn is a user message and the answers after it (or answers before any).
    turns: list[list[str]] = []
    for role, text in messages:
        label = _LABELS.get(role)
        if label is None or not text.strip():
            continue
        if role == "user" or not turns:
            turns.append([])
        line = _user_line(text) if role == "user" else None
        turns[-1].append(line or f"{label}: {_shorten(text.strip(), MESSAGE_TOKENS)}")
    # With ten user turns or more, a leading answers-only turn is the eleventh from last.
    turns = turns[-MAX_USER_TURNS:]
    kept: list[str] = []
    used = 0
    for turn in reversed(turns):
        block = "\n".join(turn)
        # +1 for the newline joining it to the turn after it.
        cost = estimate_tokens(block) + (1 if kept else 0)
        if kept and used + cost > TRANSCRIPT_TOKENS:
            break
        kept.append(block)
        used += cost
    return _shorten("\n".join(reversed(kept)), TRANSCRIPT_TOKENS)


def _user_line(text: str) -> str | None:
    """A user message that carries someone else's words, as the synthesis pass reads
    it: those words marked as theirs, so the pass captures no forwarded "I'll send the
    contract" or quoted "we decided on Lisbon" as the user's own (the deterministic
    capture reads only ``own_words``); ``None`` for a message all the user's own."""
    quote = quoted(text.strip())
    if quote is None:
        return None
    whose = f"{quote.origin}'s words" if quote.origin else "someone else's words"
    words = _shorten(" ".join(quote.words.split()), MESSAGE_TOKENS)
    if quote.forwarded:
        return f"User forwarded a message ({whose}, not the user's): {words}"
    own = _shorten(quote.own.strip(), MESSAGE_TOKENS)
    return f"User, replying to {words} ({whose}, not the user's): {own}"


def build_synthesis_body(messages: Sequence[tuple[str, str]], *, model: str) -> JSON:
    """The chat-completions body for one synthesis pass over ``messages``.

    ``messages`` are ``(role, text)`` pairs, oldest first; the prompt is the system
    message and the bounded transcript (see ``transcript``) the one user message. No
    ``response_format``: not every OpenAI-compatible upstream accepts it.
    """
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": SYNTHESIS_PROMPT},
            {"role": "user", "content": transcript(messages)},
        ],
        "temperature": 0,
        "stream": False,
    }


def parse_synthesis(text: str) -> SynthesisResult:
    """The result in a model's answer, validated: the answer when it is JSON as a whole
    (then it must be an object), else the first JSON object in it (fences and prose
    around it are fine). Raises ``SynthesisFailed``."""
    if not text.strip():
        raise SynthesisFailed("empty answer")
    try:
        whole = json.loads(text)
    except ValueError:
        pass  # wrapped in fences or prose: look for the object inside
    else:
        if not isinstance(whole, dict):
            raise SynthesisFailed(
                "the model's JSON has the wrong shape: expected an object, "
                f"got {_JSON_KINDS.get(type(whole), 'something else')}"
            )
        return _validate(whole)
    decoder = json.JSONDecoder()
    first_error: ValueError | None = None
    start = text.find("{")
    for _ in range(_MAX_JSON_STARTS):
        if start < 0:
            break
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError as exc:
            first_error = first_error or exc
        else:
            if isinstance(value, dict):
                return _validate(value)
        start = text.find("{", start + 1)
    if first_error is None:
        raise SynthesisFailed("invalid JSON from the model: no JSON object in the answer")
    raise SynthesisFailed(f"invalid JSON from the model: {first_error}") from first_error


def _validate(value: dict[str, Any]) -> SynthesisResult:
    try:
        return SynthesisResult.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "answer"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise SynthesisFailed(
            f"the model's JSON has the wrong shape: {where}: {error['msg']}{more}"
        ) from exc


async def synthesize(
    upstream: Upstream,
    messages: Sequence[tuple[str, str]],
    *,
    model: str,
    # The limit is part of the contract: overrunning it is a reported failure reason.
    timeout: float,  # noqa: ASYNC109
) -> SynthesisResult:
    """Run one synthesis pass over ``messages`` (``(role, text)``, oldest first).

    One ``upstream.complete`` call, limited to ``timeout`` seconds in all (retries of
    the upstream client included). With no user or assistant text there is nothing to
    summarise and no call is made. Raises ``SynthesisFailed`` on any failure (timeout,
    upstream error, empty answer, invalid JSON, wrong shape) and nothing else but
    ``asyncio.CancelledError``.
    """
    if not any(role in _LABELS and text.strip() for role, text in messages):
        return NOTHING
    body = build_synthesis_body(messages, model=model)
    try:
        async with asyncio.timeout(timeout):
            reply = await upstream.complete(body)
    except TimeoutError as exc:
        raise SynthesisFailed(f"timed out after {timeout:g} s") from exc
    except UpstreamError as exc:
        raise SynthesisFailed(f"the upstream failed: {exc}") from exc
    except Exception as exc:
        # Another Upstream implementation's own error: still only a failed pass.
        raise SynthesisFailed(f"the upstream failed: {type(exc).__name__}: {exc}") from exc
    text = completion_text(reply.body) if reply.body is not None else reply.text
    return parse_synthesis(text)
