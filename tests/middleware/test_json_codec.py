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
