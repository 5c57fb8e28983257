"""``/lang``: see or choose the language dates are written in for you.

A locale chosen here wins over the one the user's app reports with each message
(``middleware.locales``); ``/lang auto`` goes back to the app's.
"""

from __future__ import annotations

from datetime import datetime

from babel import Locale
from babel.dates import format_skeleton

from middleware.commands import Command, CommandHandler
from middleware.locales import babel_locale
from middleware.store import Store
from middleware.types import Turn

_EXAMPLE = "e.g. /lang de, /lang fr or /lang pt-BR"
_AUTO = frozenset({"auto", "app", "clear", "reset", "none"})


def _described(locale: str, instant: datetime) -> str:
    """'French — français (fr), as in "dim. 1 mars"'."""
    parsed = Locale.parse(locale)
    own = parsed.get_display_name(locale) or locale
    english = parsed.get_display_name("en") or locale
    names = f"{english} — {own}" if own != english else english
    sample = format_skeleton("EEEdMMM", instant.date(), locale=locale)
    return f'{names} ({locale}), as in "{sample}"'


def locale_commands(store: Store) -> dict[str, CommandHandler]:
    """The handler, keyed by command name."""

    async def lang(turn: Turn, command: Command) -> str:
        chosen = turn.prior.user_locale if turn.prior else None
        app = turn.prior.app_locale if turn.prior else None
        argument = command.args.strip()
        if not argument:
            if chosen is not None:
                shown = _described(chosen, turn.received_at)
                return (
                    f"Dates are written for you in {shown}, the language you chose. "
                    "/lang auto follows your app's language again."
                )
            if app is not None:
                return (
                    f"Dates follow your app's language, {_described(app, turn.received_at)}. "
                    f"Choose another with /lang <code>, {_EXAMPLE}."
                )
            return (
                "Your app hasn't told me your language, so dates are in English. "
                f"Choose one with /lang <code>, {_EXAMPLE}."
            )
        if argument.lower() in _AUTO:
            await store.set_user_locale(turn.user_key, None)
            if app is not None:
                shown = _described(app, turn.received_at)
                return f"Dates follow your app's language again: {shown}."
            return (
                "Your chosen language is cleared. Your app hasn't told me its language, so "
                "dates are in English until it does."
            )
        locale = babel_locale(argument)
        if locale is None:
            return f"I don't know the language '{argument}'. Send a language code, {_EXAMPLE}."
        await store.set_user_locale(turn.user_key, locale)
        return (
            f"Dates are now written for you in {_described(locale, turn.received_at)}. "
            "/lang auto follows your app's language again."
        )

    return {"lang": lang}
