"""The request check's fast path never accepts what the pydantic model would refuse."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from proxy.openai_api import _ChatRequest, _plainly_valid

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_MESSAGE = st.one_of(
    _VALUES,
    st.fixed_dictionaries(
        {"role": _VALUES}, optional={"content": _VALUES, "name": _VALUES, "tool_calls": _VALUES}
    ),
)
_BODY = st.fixed_dictionaries(
    {},
    optional={
        "messages": st.one_of(_VALUES, st.lists(_MESSAGE, max_size=4)),
        "stream": _VALUES,
        "model": _VALUES,
        "user": _VALUES,
        "temperature": _VALUES,
    },
)


@settings(max_examples=500, deadline=None)
@given(body=_BODY)
def test_the_fast_path_accepts_only_what_the_model_accepts(body: dict[str, Any]) -> None:
    if not _plainly_valid(body):
        return
    try:
        _ChatRequest.model_validate(body)
    except ValidationError as exc:  # pragma: no cover - the failure being tested for
        raise AssertionError(f"fast path accepted a body pydantic refuses: {exc}") from exc


def test_an_ordinary_request_takes_the_fast_path() -> None:
    body = {
        "model": "m",
        "stream": True,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": None, "tool_calls": []},
        ],
    }
    assert _plainly_valid(body)
    assert not _plainly_valid({**body, "messages": []})
    assert not _plainly_valid({**body, "stream": "yes"})
