"""The user's locale: the language and region dates are written in for them.

Two sources, in this order: the locale the user chose (``/lang``), else the one their
app reports on each message (Telegram's ``language_code``, a Discord interaction's
``locale``, an HTTP client's ``Accept-Language``). Both are kept as babel identifiers
("de", "pt_BR"); a tag babel does not know is ignored, never an error, since the app
sends it, not the user.
"""

from __future__ import annotations

from functools import lru_cache

from babel import Locale, UnknownLocaleError

# Longer than any real tag ("zh-Hant-TW", "sr-Latn-BA"); anything longer is not one.
_MAX_TAG = 35


@lru_cache(maxsize=256)  # a few tags, seen on every message
def babel_locale(tag: str | None) -> str | None:
    """The babel identifier of an IETF language tag ("de" → "de", "pt-br" → "pt_BR",
    "zh-Hant" → "zh_Hant"; "pt_BR" is taken too), or None when ``tag`` is empty, not a
    tag, or a language babel does not know."""
    if not tag or len(tag) > _MAX_TAG:
        return None
    try:
        return str(Locale.parse(tag.strip().replace("_", "-"), sep="-"))
    except (UnknownLocaleError, ValueError, TypeError):
        return None


def accept_language_locale(header: str | None) -> str | None:
    """The locale an HTTP ``Accept-Language`` header prefers: its highest-weighted tag
    babel knows (the first one, among equals), as ``babel_locale`` gives it. None for no
    header, "*", or nothing usable (RFC 9110 §12.5.4: a malformed header may be ignored)."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for place, entry in enumerate(header.split(",")):
        tag, _, params = entry.partition(";")
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if weight > 0 and tag.strip() not in ("", "*"):
            ranked.append((-weight, place, tag.strip()))
    for _, _, tag in sorted(ranked):
        locale = babel_locale(tag)
        if locale is not None:
            return locale
    return None
