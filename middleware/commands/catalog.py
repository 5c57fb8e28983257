"""The chat command set as users see it: names and one-line descriptions.

One list for every channel that advertises commands (Telegram's ``setMyCommands`` menu,
Discord's slash commands) and for ``/help`` on every channel, so they all offer the same
set in the same order. Names have no slash and fit every platform's rules (lowercase
letters, at most 32 characters); descriptions stay under Discord's 100 characters.
"""

from __future__ import annotations

COMMANDS: tuple[tuple[str, str], ...] = (
    ("tz", "Show or set your timezone, e.g. /tz Europe/Berlin"),
    ("time", "Show the time for you and this chat"),
    ("lang", "Show or choose the language dates are written in, e.g. /lang de"),
    ("actions", "List what you said you were about to do"),
    ("recap", "Where this work stands: phase, last sessions, open questions"),
    ("context", "Show the work context, or move this chat into another"),
    ("capture", "Capture where this conversation stands, now"),
    ("memory", "List, add or delete what the relay remembers about you"),
    ("link", "Link your accounts on other channels with a one-time code"),
    ("unlink", "Unlink this account, or another of yours: /unlink <account>"),
    ("whoami", "Show your keys, timezone and linked accounts"),
    ("forget", "Delete everything stored about you (asks to confirm)"),
    ("admin", "Admins only: link, unlink or look up users"),
    ("help", "List these commands"),
)
