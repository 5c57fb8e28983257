"""``per_text``: results kept per short text, recomputed for long ones."""

from __future__ import annotations

from middleware.text_cache import MAX_CHARS, per_text


def test_a_repeated_text_is_computed_once() -> None:
    calls: list[str] = []

    @per_text
    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert shout("hi") == "HI"
    assert shout("hi") == "HI"
    assert calls == ["hi"]


def test_a_changed_text_or_argument_is_computed_again() -> None:
    calls: list[tuple[str, str]] = []

    @per_text
    def join(text: str, suffix: str) -> str:
        calls.append((text, suffix))
        return text + suffix

    assert join("hi", "!") == "hi!"
    assert join("ho", "!") == "ho!"
    assert join("hi", "?") == "hi?"
    assert join("hi", "!") == "hi!"
    assert calls == [("hi", "!"), ("ho", "!"), ("hi", "?")]


def test_a_long_text_is_never_kept() -> None:
    calls: list[int] = []

    @per_text
    def size(text: str) -> int:
        calls.append(len(text))
        return len(text)

    long = "x" * (MAX_CHARS + 1)
    assert size(long) == size(long) == MAX_CHARS + 1
    assert calls == [MAX_CHARS + 1, MAX_CHARS + 1]
