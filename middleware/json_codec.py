"""JSON on the hot path: orjson where it is exact, the standard library where it is not.

orjson is 5-10x faster than ``json`` on the bodies a relay handles (long conversations,
streamed chunks), but it differs at the edges: it reads integers beyond 64 bits as floats,
and refuses NaN, lone surrogates and such integers when writing. So:

- ``dump`` (the body sent upstream) uses orjson and falls back to ``json`` for what orjson
  refuses (an integer beyond 64 bits, a lone surrogate), so those go out as they came in.
  NaN and Infinity, which are not JSON but which ``json`` reads, are written as null;
- ``load`` (a request body, which is forwarded, so it must be exact) uses orjson unless
  the text holds a run of 19 digits or more, which may be an integer beyond 64 bits, or
  orjson refuses it (NaN, a lone surrogate, UTF-16): those are read by ``json``;
- ``peek`` is for reading what the relay only looks at (the text of a reply or of a
  streamed chunk) and never sends on: there a big integer read as a float does no harm.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# 19 digits: the shortest integer that may not fit in 64 bits (-9223372036854775809),
# which orjson would read as a float. Digits in a string trip it too, harmlessly. Found by
# mapping every digit to "0" and every other byte to " ", then one substring search: a
# regex tries a match at every byte, which on a long conversation costs more than ``json``.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def dump(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: a >64-bit int, a lone surrogate
        return json.dumps(value, separators=(",", ":")).encode()


def load(raw: bytes) -> Any:
    """Parse JSON that is sent on, exactly as ``json`` reads it; raises ``ValueError`` if
    it is not JSON (``json``'s error, which says where)."""
    if _LONG_RUN not in raw.translate(_DIGITS_ONLY):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def peek(raw: bytes | str) -> Any:
    """Parse JSON the relay only reads; raises ``ValueError`` if it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # NaN, Infinity, lone surrogates: what ``json`` still accepts.
        return json.loads(raw)
