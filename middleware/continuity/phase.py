"""The work phase of a session from what the user says (spec 001 §3.2, §5.3).

Deterministic capture has no routing decision to map (§5.3 ``mapActivityTypeToPhase``),
so the phase comes from the verbs of the user's turns: "let's research …" is research,
"draft the intro" drafting, "can you proofread this" review, "rewrite section 2"
revision, "waiting on the expert's numbers" waiting_for_external, "submitted it" completed,
"let's park this" paused. Activity phases are weighed over the session with more weight
to later turns; a state phase (waiting, completed, paused) stated in the latest turn that
says anything about the work wins outright, because it reports where the work stands
now. Questions count ("can you review this?" puts the work in review); conditionals,
reported speech and negations ("not done yet") do not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from middleware.continuity.extract import ExtractTurn
from middleware.continuity.model import WorkPhase

__all__ = ["infer_work_phase", "mentioned_phase"]

_SCAN_LIMIT = 4000
# The last user turn weighs this much more than the first; in between, linearly.
_RECENCY = 1.0
_STATES: frozenset[WorkPhase] = frozenset({"waiting_for_external", "completed", "paused"})


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_WORK_NOUN = (
    r"(?:research|reading|draft(?:ing)?|outline|review|edits?|revisions?|first\s+pass|intro"
    r"|section|chapter|part)"
)
# "revise the draft" is revision: "draft" after a determiner is the noun, not the verb.
_NOT_A_NOUN = "".join(
    rf"(?<!\b{word}\s)" for word in "the a my our your this that first rough final new".split()
)
_FAMILIES: tuple[tuple[WorkPhase, re.Pattern[str]], ...] = (
    (
        "research",
        _re(
            r"\b(?:research(?:ing|ed)?|look(?:ing)?\s+(?:up|into)|find(?:ing)?\s+(?:out|me\s+"
            r"|(?:some|any|all|the\s+)?(?:cases|sources|papers|articles|examples|precedents?"
            r"|studies|data|references))|analy[sz](?:e|es|ed|ing|is)|compar(?:e|es|ed|ing)"
            r"|investigat(?:e|es|ed|ing)|dig(?:ging)?\s+into|read(?:ing)?\s+up\s+on"
            r"|explor(?:e|es|ing)\s+(?:options|the\s+literature|alternatives))\b"
        ),
    ),
    (
        "drafting",
        _re(
            rf"\b(?:{_NOT_A_NOUN}draft(?:s|ed|ing)?"
            r"|writ(?:e|es|ing)\s+(?:up|out|the|a|an|my|our|some|this|that)|outlin(?:e|es|ed|ing)|compos(?:e|es|ed|ing)|sketch(?:ing)?\s+out"
            r"|first\s+pass)\b"
        ),
    ),
    (
        "review",
        _re(
            r"\b(?:review(?:s|ed|ing)?|proofread(?:s|ing)?|check(?:ing)?\s+(?:it\s+|this\s+|that"
            r"\s+)?over|go(?:ing)?\s+(?:back\s+)?over|look(?:ing)?\s+over|sanity[-\s]check"
            r"|critique|feedback\s+on)\b"
        ),
    ),
    (
        "revision",
        _re(
            r"\b(?:revis(?:e|es|ed|ing|ion)|rewrit(?:e|es|ing|ten)|re-?work(?:s|ed|ing)?"
            r"|edit(?:s|ed|ing)?|fix(?:es|ed|ing)?|tighten(?:ing)?\s+up|incorporat(?:e|ing)"
            r"\s+(?:the\s+)?(?:feedback|comments|edits))\b"
        ),
    ),
    (
        "waiting_for_external",
        _re(
            r"\b(?:waiting\s+(?:on|for)|wait\s+(?:on|for)\s+(?:the|their|his|her|a)\b"
            r"|pending\s+.{1,40}\bfrom|blocked\s+(?:on|by)|until\s+(?:I|we)\s+hear\s+back"
            r"|haven\s*'?\s*t\s+heard\s+back|on\s+(?:their|his|her)\s+end)"
        ),
    ),
    (
        "completed",
        _re(
            r"\b(?:(?:all|i\s*'?\s*m|we\s*'?\s*re|it\s*'?\s*s|that\s*'?\s*s|is|are)\s+(?:all\s+)?"
            rf"(?:done|finished|complete)(?!\s+(?:with\s+)?(?:the\s+)?{_WORK_NOUN})"
            r"|(?:just\s+|finally\s+)?(?:shipped|submitted|filed|delivered|sent\s+(?:it\s+)?off"
            r"|published|released|wrapped(?:\s+it)?\s+up|signed\s+off\s+on)"
            r"|finished\s+(?:it|the\s+whole\s+thing|everything))\b"
        ),
    ),
    (
        "paused",
        _re(
            r"\b(?:paus(?:e|es|ed|ing)|(?:put|putting|puts)\s+(?:it|this|that|the\s+\w+(?:\s+\w+)?)"
            r"\s+on\s+hold|on\s+hold|park(?:s|ed|ing)?\s+(?:it|this|that|the)\b|shelv(?:e|es|ed"
            r"|ing)|back\s*burner|step(?:ping)?\s+away\s+from)\b"
        ),
    ),
)
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
# Sentences that say nothing about the user's own work now.
_REJECT = _re(
    r"^\s*(?:if|unless|suppose|imagine|what\s+if)\b"
    r"|\b(?:said|says|told|asked|according\s+to)\b"
    r"|(?:\bnot|n\s*'\s*t|\bnever)\s+(?:\w+\s+)?(?:done|finished|complete|submitted|shipped"
    r"|filed|waiting|blocked|paused|ready)\b"
)


def mentioned_phase(text: str) -> WorkPhase | None:
    """The phase one message puts the work in, or None when it names none.

    When a message names several ("finished the research, now drafting the intro"), the
    one mentioned last wins: people say where they are after where they have been.
    """
    text = text[:_SCAN_LIMIT].replace("’", "'")
    best: tuple[int, WorkPhase] | None = None
    for sentence in _SENTENCE.finditer(text):
        if _REJECT.search(sentence[0]):
            continue
        for phase, pattern in _FAMILIES:
            for match in pattern.finditer(sentence[0]):
                at = sentence.start() + match.start()
                if best is None or at >= best[0]:
                    best = (at, phase)
    return best[1] if best else None


def infer_work_phase(turns: Sequence[ExtractTurn]) -> WorkPhase:
    """The dominant phase of the session's user turns; "unknown" when none names one.

    Each user turn's :func:`mentioned_phase` scores 1 for the first turn up to
    ``1 + _RECENCY`` for the last; the highest total wins, the later mention on a tie. A
    state phase (waiting_for_external, completed, paused) in the latest signalling turn
    wins outright.
    """
    user_texts = [t.text for t in turns if t.role == "user"]
    mentions = [
        (index, phase)
        for index, text in enumerate(user_texts)
        if (phase := mentioned_phase(text)) is not None
    ]
    if not mentions:
        return "unknown"
    if mentions[-1][1] in _STATES:
        return mentions[-1][1]
    span = max(len(user_texts) - 1, 1)
    scores: dict[WorkPhase, float] = {}
    last_seen: dict[WorkPhase, int] = {}
    for index, phase in mentions:
        if phase in _STATES:
            continue  # an earlier "waiting on X" the session has since moved past
        scores[phase] = scores.get(phase, 0.0) + 1.0 + _RECENCY * index / span
        last_seen[phase] = index
    return max(scores, key=lambda phase: (scores[phase], last_seen[phase]))
