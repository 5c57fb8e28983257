"""The hot-path JSON helpers: orjson's speed without its edge cases reaching the upstream."""

from __future__ import annotations

import json
import math

import pytest

from middleware import json_codec


def test_dump_keeps_every_value_a_client_can_send() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "Grüße, 東京 🌸"}],
        "seed": 2**70,  # beyond 64 bits: orjson refuses it, the fallback keeps it exact
        "temperature": 0.7,
        "tools": [],
        "metadata": {"nested": [1, None, True, "x"]},
    }
    assert json.loads(json_codec.dump(body)) == body


def test_dump_keeps_a_lone_surrogate_as_an_escape() -> None:
    body = {"content": "broken \ud800 pair"}
    raw = json_codec.dump(body)
    raw.decode("utf-8")  # still valid UTF-8 on the wire
    assert json.loads(raw) == body


def test_dump_is_compact_utf8() -> None:
    assert json_codec.dump({"a": "é", "b": [1, 2]}) == '{"a":"é","b":[1,2]}'.encode()


def test_peek_reads_what_json_reads() -> None:
    assert json_codec.peek(b'{"choices": [{"delta": {"content": "hi"}}]}') == {
        "choices": [{"delta": {"content": "hi"}}]
    }
    assert math.isnan(json_codec.peek(b'{"x": NaN}')["x"])


def test_peek_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        json_codec.peek(b"data: [DONE]")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"messages": [{"role": "user", "content": "hi"}], "temperature": 0.1}',
        b'{"seed": 1180591620717411303424, "n": -9223372036854775809}',  # beyond 64 bits
        b'{"user": "order 12345678901234567890", "x": 18446744073709551615}',
        b'{"x": NaN, "y": -Infinity}',  # not JSON, but json reads it
        b'{"content": "broken \\ud800 pair"}',  # a lone surrogate
        '{"content": "Grüße"}'.encode("utf-16"),  # another encoding json detects
        b'{"a": 1, "a": 2, "f": 1.0000000000000002, "tiny": 5e-324, "z": -0.0}',
    ],
)
def test_load_reads_exactly_what_json_reads(raw: bytes) -> None:
    loaded = json_codec.load(raw)
    expected = json.loads(raw)
    # repr: NaN is not equal to itself, and 1 == 1.0 would hide an int read as a float.
    assert repr(loaded) == repr(expected)


def test_load_keeps_big_integers_exact() -> None:
    assert json_codec.load(b'{"seed": 1180591620717411303425}')["seed"] == 2**70 + 1


@pytest.mark.parametrize("raw", [b"", b"{", b'{"a": }', b"\xff\xfe\xfa", b"[1, 2"])
def test_load_says_what_json_says_about_what_is_not_json(raw: bytes) -> None:
    with pytest.raises(ValueError) as loaded:
        json_codec.load(raw)
    with pytest.raises(ValueError) as expected:
        json.loads(raw)
    assert str(loaded.value) == str(expected.value)
