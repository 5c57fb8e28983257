"""Turns an agent sends on its own behalf in the user's role: compacting its history.

An agent whose context fills up asks the model, in a user message of its own, for a
summary of the conversation so far ("Your task is to create a detailed summary of the
conversation so far …", "You are performing a CONTEXT CHECKPOINT COMPACTION …"), or to
save what matters first (OpenClaw's "Pre-compaction memory flush …"), and goes on with
that summary in place of the history ("This session is being continued from a previous
conversation …"). The relay records such a message like any other, but it is neither
what the user said nor where their work stood: capture reads past it and its answer.

As elsewhere in continuity, precision beats recall: a summary is one of the
conversation *so far* (or "above", "to date"), so "summarize the chat with the client"
is the user's work, and "can you summarize our conversation so far?" is left out like
the agent's own request (it says nothing of the work either).
"""

from __future__ import annotations

import re

_HOUSEKEEPING = re.compile(
    r"\b(?:summari[sz]e|(?:create|write|produce|provide|generate|give)\s+(?:me\s+)?"
    r"(?:a\s+|an\s+)?(?:[\w-]+\s+){0,3}?(?:summary|recap|handoff)\s+of)\s+(?:the|this|our)"
    r"\s+(?:entire\s+|whole\s+)?(?:conversation|session|chat|discussion|context)\s+"
    r"(?:so\s+far|above|to\s+date|up\s+to\s+(?:now|this\s+point)|until\s+now|thus\s+far)\b"
    r"|\bcontext\s+checkpoint\s+compaction\b"
    r"|^\W*pre-?compaction\s+memory\s+flush\b"
    r"|^\W*this\s+(?:session|conversation)\s+is\s+being\s+continued\s+from\s+a\s+previous"
    r"\s+(?:conversation|session)\b",
    re.IGNORECASE,
)


def is_compaction_turn(text: str) -> bool:
    """Whether a user-role message is an agent compacting its history: asking for a
    summary of the conversation so far, flushing memory before compaction, or going on
    from such a summary."""
    return _HOUSEKEEPING.search(text[:2000]) is not None
