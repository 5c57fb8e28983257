"""The user's locale as apps and HTTP clients report it."""

from __future__ import annotations

import pytest

from middleware.locales import accept_language_locale, babel_locale


@pytest.mark.parametrize(
    ("tag", "locale"),
    [
        ("de", "de"),
        ("pt-br", "pt_BR"),  # Telegram's lowercase region
        ("en-US", "en_US"),  # Discord's
        ("zh-hans", "zh_Hans"),
        ("pt_BR", "pt_BR"),  # as a user may type it
        (" fr ", "fr"),
    ],
)
def test_a_language_tag_becomes_a_babel_locale(tag: str, locale: str) -> None:
    assert babel_locale(tag) == locale


@pytest.mark.parametrize(
    "tag", [None, "", "xx", "klingon", "*", "de-DE-x-private", "1234", "e" * 80]
)
def test_a_tag_babel_does_not_know_is_ignored(tag: str | None) -> None:
    assert babel_locale(tag) is None


@pytest.mark.parametrize(
    ("header", "locale"),
    [
        ("fr-FR", "fr_FR"),
        ("fr-FR,fr;q=0.9,en;q=0.8", "fr_FR"),
        ("en;q=0.5, de", "de"),  # by weight, not by place
        ("xx, es;q=0.7", "es"),  # an unknown tag is passed over
        ("*", None),
        ("de;q=0", None),  # "not German"
        ("de;q=abc, it;q=0.3", "it"),  # a weight that is no number counts as 0
        ("", None),
        (None, None),
        (";;;,,,", None),
    ],
)
def test_accept_language_gives_the_preferred_locale(header: str | None, locale: str | None) -> None:
    assert accept_language_locale(header) == locale
