"""The synthesis pass against the recording fake upstream, through the real HTTP client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from middleware.clock.temporal import estimate_tokens
from middleware.continuity.synthesis import (
    MAX_ITEM_CHARS,
    SYNTHESIS_PROMPT,
    TRANSCRIPT_TOKENS,
    SynthesisFailed,
    SynthesisResult,
    build_synthesis_body,
    parse_synthesis,
    synthesize,
)
from middleware.types import JSON, Reply
from proxy.config import UpstreamConfig
from proxy.metrics import Metrics
from proxy.upstream import HttpUpstream
from tests.fakes.upstream import FakeUpstream, Scripted

GOOD: dict[str, Any] = {
    "session_summary": "Drafted subsections 1-3 of the damages section. Event study pending.",
    "open_questions": [{"question": "Which expert data set?", "context": "event study"}],
    "key_decisions": [{"decision": "Use the market model", "rationale": "court precedent"}],
    "work_phase": "drafting",
}

CONVERSATION = [
    ("user", "Let's draft the damages section."),
    ("assistant", "Here is a first draft of subsections 1-3."),
    ("user", "Good. The event study waits for the expert data."),
    ("assistant", "Noted; I will leave it pending."),
]


@pytest.fixture
async def upstream(fake_upstream: FakeUpstream) -> AsyncIterator[HttpUpstream]:
    config = UpstreamConfig(
        mode="forward", base_url=fake_upstream.url, api_key="sk-test", retries=0
    )
    client = HttpUpstream(config, Metrics())
    yield client
    await client.close()


async def run(upstream: HttpUpstream, limit: float = 5.0) -> SynthesisResult:
    return await synthesize(upstream, CONVERSATION, model="synth-model", timeout=limit)


def sent_turns(body: JSON) -> list[str]:
    return str(body["messages"][1]["content"]).split("\n")


async def test_valid_json(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.reply_content = json.dumps(GOOD)

    result = await run(upstream)

    assert result.session_summary == GOOD["session_summary"]
    assert [(q.question, q.context) for q in result.open_questions] == [
        ("Which expert data set?", "event study")
    ]
    assert [(d.decision, d.rationale) for d in result.key_decisions] == [
        ("Use the market model", "court precedent")
    ]
    assert result.work_phase == "drafting"
    body = fake_upstream.last.body
    assert body["model"] == "synth-model"
    assert body["messages"][0] == {"role": "system", "content": SYNTHESIS_PROMPT}
    assert body["temperature"] == 0
    assert body["stream"] is False
    assert "response_format" not in body
    assert sent_turns(body) == [
        "User: Let's draft the damages section.",
        "Assistant: Here is a first draft of subsections 1-3.",
        "User: Good. The event study waits for the expert data.",
        "Assistant: Noted; I will leave it pending.",
    ]


async def test_json_in_fences_with_prose(
    upstream: HttpUpstream, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = (
        "Here is the capture you asked for:\n```json\n" + json.dumps(GOOD) + "\n```\nDone."
    )

    result = await run(upstream)

    assert result.work_phase == "drafting"
    assert len(result.open_questions) == 1


async def test_nothing_meaningful(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.reply_content = (
        '{"session_summary": null, "open_questions": [], "key_decisions": [],\n'
        '"work_phase": "unknown"}'
    )

    result = await run(upstream)

    assert result.session_summary is None
    assert result.open_questions == [] and result.key_decisions == []
    assert result.work_phase == "unknown"


async def test_invalid_json(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.reply_content = '{"session_summary": "half an answer", "open_questions": ['

    with pytest.raises(SynthesisFailed) as caught:
        await run(upstream)

    assert caught.value.reason.startswith("invalid JSON from the model: ")
    assert isinstance(caught.value.__cause__, ValueError)


async def test_prose_without_json(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.reply_content = "Sorry, I cannot help with that."

    with pytest.raises(SynthesisFailed, match="no JSON object"):
        await run(upstream)


@pytest.mark.parametrize(
    "answer",
    [
        [GOOD],
        {**GOOD, "open_questions": "none"},
        {**GOOD, "key_decisions": [{"rationale": "no decision key"}]},
        {key: value for key, value in GOOD.items() if key != "work_phase"},
        {**GOOD, "open_questions": ["a bare string"]},
        {**GOOD, "work_phase": 3},
    ],
    ids=["array", "string-list", "missing-decision", "missing-key", "bare-item", "phase-int"],
)
async def test_wrong_shape(
    upstream: HttpUpstream, fake_upstream: FakeUpstream, answer: Any
) -> None:
    fake_upstream.reply_content = json.dumps(answer)

    with pytest.raises(SynthesisFailed) as caught:
        await run(upstream)

    assert caught.value.reason.startswith(
        ("the model's JSON has the wrong shape: ", "invalid JSON from the model: ")
    )


async def test_empty_answer(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.reply_content = ""

    with pytest.raises(SynthesisFailed) as caught:
        await run(upstream)

    assert caught.value.reason == "empty answer"


async def test_timeout(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.delay = 30
    fake_upstream.reply_content = json.dumps(GOOD)

    with pytest.raises(SynthesisFailed) as caught:
        await run(upstream, limit=0.2)

    assert caught.value.reason == "timed out after 0.2 s"
    assert isinstance(caught.value.__cause__, TimeoutError)
    # The abandoned request is cut, not left running on the upstream.
    await asyncio.wait_for(fake_upstream.request_cancelled.wait(), timeout=5)


async def test_upstream_500(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.failures.append(Scripted(500, {"error": {"message": "boom"}}))

    with pytest.raises(SynthesisFailed) as caught:
        await run(upstream)

    assert caught.value.reason == "the upstream failed: upstream answered HTTP 500"


async def test_unexpected_upstream_exception_is_translated() -> None:
    class Broken:
        async def complete(self, body: JSON) -> Reply:
            raise RuntimeError("socket on fire")

        async def ready(self) -> bool:
            return False

        async def close(self) -> None:
            return None

    with pytest.raises(SynthesisFailed, match="the upstream failed: RuntimeError"):
        await synthesize(Broken(), CONVERSATION, model="m", timeout=1)


async def test_no_text_makes_no_call(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    result = await synthesize(upstream, [("tool", "42"), ("user", "  ")], model="m", timeout=1)

    assert result.session_summary is None and result.work_phase == "unknown"
    assert fake_upstream.requests == []


def test_lenient_content() -> None:
    result = parse_synthesis(
        json.dumps(
            {
                "session_summary": "   ",
                "open_questions": [
                    {"question": "q" * 1000, "context": None, "extra": 1},
                    {"question": "  "},
                    *({"question": f"q{i}"} for i in range(20)),
                ],
                "key_decisions": [{"decision": f"d{i}", "rationale": ""} for i in range(9)],
                "work_phase": "Waiting for external",
                "confidence": "extra keys are ignored",
            }
        )
    )

    assert result.session_summary is None
    assert len(result.open_questions) == 10
    first = result.open_questions[0]
    assert len(first.question) == MAX_ITEM_CHARS and first.question.endswith("…")
    assert first.context == ""
    assert result.open_questions[1].question == "q0"
    assert [d.decision for d in result.key_decisions] == ["d0", "d1", "d2", "d3", "d4"]
    assert all(d.rationale is None for d in result.key_decisions)
    assert result.work_phase == "waiting_for_external"


@pytest.mark.parametrize("phase", ["brainstorming", None, ""])
def test_unknown_phase(phase: str | None) -> None:
    result = parse_synthesis(json.dumps({**GOOD, "work_phase": phase}))
    assert result.work_phase == "unknown"


async def test_at_most_ten_user_turns(upstream: HttpUpstream, fake_upstream: FakeUpstream) -> None:
    fake_upstream.reply_content = json.dumps(GOOD)
    messages = [("assistant", "Welcome back.")]
    for i in range(15):
        messages += [
            ("user", f"question {i}"),
            ("tool", f"tool result {i}"),
            ("assistant", f"answer {i}"),
        ]

    await synthesize(upstream, messages, model="m", timeout=5)

    lines = sent_turns(fake_upstream.last.body)
    assert [line for line in lines if line.startswith("User: ")] == [
        f"User: question {i}" for i in range(5, 15)
    ]
    assert lines[0] == "User: question 5" and lines[-1] == "Assistant: answer 14"
    assert not any("tool result" in line or "Welcome" in line for line in lines)


async def test_huge_transcript_is_bounded(
    upstream: HttpUpstream, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = json.dumps(GOOD)
    messages: list[tuple[str, str]] = []
    for i in range(12):
        messages += [("user", f"start {i} " + "words " * 400), ("assistant", "reply " * 800)]
    messages += [
        ("user", "NEWEST-START " + "x" * 100_000 + " NEWEST-END"),
        ("assistant", "ANSWER-START " + "y" * 100_000 + " ANSWER-END"),
    ]

    await synthesize(upstream, messages, model="m", timeout=5)

    content = str(fake_upstream.last.body["messages"][1]["content"])
    assert estimate_tokens(content) <= TRANSCRIPT_TOKENS
    # The newest turn survives, cut in the middle; older turns go first.
    for marker in ("NEWEST-START", "NEWEST-END", "ANSWER-START", "ANSWER-END"):
        assert marker in content
    assert " … " in content
    assert "start 0 " not in content
    assert content.split("\n")[-2].startswith("User: NEWEST-START")


def test_single_huge_message_is_cut_not_dropped() -> None:
    body = build_synthesis_body([("user", "BEGIN " + "z" * 50_000 + " END")], model="m")

    content = str(body["messages"][1]["content"])
    assert content.startswith("User: BEGIN") and content.endswith("END")
    assert " … " in content
    assert estimate_tokens(content) <= TRANSCRIPT_TOKENS


def test_items_are_cut_to_the_specs_lengths() -> None:
    # spec 001 §4.1: question, decision and rationale at most 300 characters; an open
    # question's context at most 200.
    result = parse_synthesis(
        json.dumps(
            {
                **GOOD,
                "open_questions": [{"question": "q" * 400, "context": "c" * 400}],
                "key_decisions": [{"decision": "d" * 400, "rationale": "r" * 400}],
            }
        )
    )

    [question] = result.open_questions
    [decision] = result.key_decisions
    assert len(question.question) == 300 and question.question.endswith("…")
    assert len(question.context) == 200 and question.context.endswith("…")
    assert len(decision.decision) == 300 and len(decision.rationale or "") == 300
    # Within the limits, nothing is cut.
    exact = parse_synthesis(
        json.dumps({**GOOD, "open_questions": [{"question": "q" * 300, "context": "c" * 200}]})
    )
    assert exact.open_questions[0].question == "q" * 300
    assert exact.open_questions[0].context == "c" * 200
