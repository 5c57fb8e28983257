"""Does a message ask for an impactful action (spec 000 §8.2)?

Spec 000 §8.2 requires confirmation *before* the assistant sends messages or emails to
third parties, creates or changes calendar events or reminders, buys or pays, publishes or
deploys, or deletes data. The "confirm first" instruction is added to the block only when
the user's own words ask the assistant to do one of these: a request, said as one ("send
Bob the forecast", "can you book a table", "please delete the draft", "go ahead and
merge it", "remind me at 5"). A message that only mentions such a word does not: "what's
on my schedule today?", "I booked my flight", "the post office", "in order to", "I'll pay
rent tomorrow" ask the assistant for nothing it must confirm.
"""

from __future__ import annotations

import re

from middleware.actions.prefilter import Gate

# What opens a request, at the start of a clause: nothing (an imperative), "please",
# "can/could/would/will you", "go ahead and", "I want/need you to", "help me".
_OPENER = (
    r"(?:(?:ok(?:ay)?|so|and|then|now|also|hey|pls|please)[\s,]+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+|pls\s+)?(?:go\s+ahead\s+and\s+)?"
    r"|go\s+ahead\s+and\s+|(?:i\s+(?:want|need)|i\s*'?d\s+like)\s+you\s+to\s+"
    r"|help\s+me\s+|let\s*'?s\s+)?"
)
_VERB = (
    r"(?:send|e-?mail|text|message|dm|post|tweet|reply\s+to|forward|invite|"
    r"schedule|reschedule|book|remind|add\s+(?:\S+\s+){0,4}?to\s+(?:my\s+|the\s+)?calendar|"
    r"set\s+(?:up\s+)?(?:an?\s+)?(?:reminder|meeting|event|alarm)|cancel|"
    r"buy|order|purchase|pay|transfer|checkout|check\s+out|subscribe|"
    r"publish|deploy|release|push|merge|"
    r"delete|remove|erase|wipe|drop|unsubscribe)"
)
_REQUEST = re.compile(
    rf"(?:^|[.!?;\n]\s*|,\s+)\s*{_OPENER}{_VERB}\b",
    re.IGNORECASE,
)
_GATE = Gate(_REQUEST)  # most messages hold none of the words: one cheap search says so


def asks_for_impactful_action(text: str) -> bool:
    """Whether ``text`` asks the assistant for an action that needs the user's
    confirmation first (spec 000 §8.2)."""
    return _GATE.may_match(text) and _REQUEST.search(text) is not None
