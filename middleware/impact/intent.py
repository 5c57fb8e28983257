"""Does a message ask for an impactful action (spec 000 §8.2)?

A cheap whole-word match, used to add the "confirm first" instruction to the block only
when it can matter: messages to third parties, calendar and reminder changes, purchases
and payments, publishing and deploying, deleting.
"""

from __future__ import annotations

import re

from middleware.actions.prefilter import Gate

_IMPACTFUL = re.compile(
    r"\b("
    r"send|email|e-mail|text (?:him|her|them)|message (?:him|her|them)|dm (?:him|her|them)|"
    r"post|tweet|reply to|forward|invite|"
    r"calendar|schedule|reschedule|book|remind(?:er)?s?|"
    r"buy|order|purchase|pay|transfer|checkout|subscribe|"
    r"publish|deploy|release|push to|merge|"
    r"delete|remove|erase|wipe|drop|unsubscribe"
    r")\b",
    re.IGNORECASE,
)
_GATE = Gate(_IMPACTFUL)  # most messages hold none of the words: one cheap search says so


def mentions_impactful_action(text: str) -> bool:
    """Whether ``text`` mentions an action that needs the user's confirmation first."""
    return _GATE.may_match(text) and _IMPACTFUL.search(text) is not None
