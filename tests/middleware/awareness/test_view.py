"""``awareness_view`` without HTTP: what one message decides, from a given prior state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from middleware.actions.model import Action
from middleware.awareness.view import AwarenessSettings, apply_ops, awareness_view
from middleware.clock.parsing import ParseResult
from middleware.clock.policy import CheckinRule, CheckinsPolicy, LatestActionsPolicy
from middleware.store import ClockData, PriorState
from middleware.types import Turn

NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)
THREAD = "agent:main:api:t1"


def turn(text: str, prior: PriorState) -> Turn:
    made = Turn(channel="api", thread_id="t1", user_id="ana", text=text, received_at=NOW, body={})
    made.user_key, made.thread_key, made.prior = "api:ana", THREAD, prior
    return made


def action(**changes: object) -> Action:
    base = Action(
        id="act_1",
        label="Finish the report",
        recorded_at=NOW - timedelta(days=3),
        expires_at=NOW + timedelta(days=20),
        status="planned",
        source="clock_it",
        thread_key=THREAD,
        user_key="api:ana",
        type="note",
    )
    return Action(**{**{f: getattr(base, f) for f in base.__slots__}, **changes})  # type: ignore[arg-type]


ACTION_FIRST = CheckinsPolicy(
    rules=[
        CheckinRule.model_validate(
            {
                "id": "action_first",
                "when": {"has_open_action": True, "elapsed_gte": "P1D"},
                "then": {"allow_hedged_reference": True},
            }
        ),
        CheckinRule.model_validate(
            {"id": "recap", "when": {"elapsed_gte": "P1D"}, "then": {"offer_recap": True}}
        ),
    ]
)


def prior_with(*actions: Action) -> PriorState:
    return PriorState(
        thread_last_conversation_at=NOW - timedelta(days=2),
        clock_data=ClockData(latest_actions=[a.to_json() for a in actions]),
    )


def test_a_hedged_reference_is_made_once_then_the_next_rule_speaks() -> None:
    settings = AwarenessSettings(checkins=ACTION_FIRST)
    first = awareness_view(turn("hi", prior_with(action())), settings)
    assert first.fired == ("action_first", "recap")
    assert len(first.lines) == 1 and "Check-in (action_first)" in first.lines[0]
    # Marked asked once the model heard it: a change of its own, not made with the rest.
    assert apply_ops(first.ops)(prior_with(action()).clock_data) is None
    [(owner, asked)] = first.told_ops
    stored = apply_ops([asked])(prior_with(action()).clock_data)
    assert owner == "api:ana"
    assert stored is not None and stored.latest_actions[0]["referenced_iso"]

    mentioned = action(referenced_at=NOW)
    again = awareness_view(turn("hi", prior_with(mentioned)), settings)
    assert len(again.lines) == 1 and "Check-in (recap)" in again.lines[0]


def test_nothing_applies_means_no_lines_and_no_writes() -> None:
    quiet = PriorState(thread_last_conversation_at=NOW - timedelta(minutes=5))
    view = awareness_view(turn("can you review this paragraph for me?", quiet), AwarenessSettings())
    assert view.lines == ()
    assert view.ops == ()
    assert view.kind_change is None and view.reply is None


def test_an_action_the_message_closes_is_not_asked_about_in_the_same_block() -> None:
    gym = action(
        label="Go to the gym",
        activity="gym",
        source="auto",
        recorded_at=NOW - timedelta(hours=2),
        expires_at=NOW + timedelta(hours=22),
    )
    view = awareness_view(turn("back. I'm so sore", prior_with(gym)), AwarenessSettings())
    assert any("done with" in line and "Go to the gym" in line for line in view.lines)
    assert not any("did you end up going" in line for line in view.lines)
    assert not any("Check-in" in line and "Go to the gym" in line for line in view.lines)


def test_a_reply_stamped_after_the_message_leaves_an_elapsed_of_zero() -> None:
    # The previous message at NOW - 1s, its reply stamped when it ended, at NOW + 1s.
    quick = CheckinsPolicy(
        rules=[
            CheckinRule.model_validate(
                {"id": "quick", "when": {"elapsed_lt": "PT5M"}, "then": {"offer_recap": True}}
            )
        ]
    )
    answered = PriorState(
        thread_last_conversation_at=NOW + timedelta(seconds=1),
        thread_last_user_message_at=NOW - timedelta(seconds=1),
    )
    view = awareness_view(turn("and another thing", answered), AwarenessSettings(checkins=quick))
    assert view.fired == ("quick",)
    assert "the last interaction here was just now" in view.lines[0]

    replayed = PriorState(
        thread_last_conversation_at=NOW + timedelta(seconds=1),
        thread_last_user_message_at=NOW + timedelta(seconds=1),
    )
    assert awareness_view(turn("old", replayed), AwarenessSettings(checkins=quick)).fired == ()


def test_in_a_group_a_hedged_reference_waits_for_the_speakers_own_return() -> None:
    group_action = action(chat_type="group", expires_at=NOW + timedelta(days=1))
    data = ClockData(latest_actions=[group_action.to_json()])

    def in_group(own_last: timedelta) -> Turn:
        made = turn("hi all", PriorState())
        made.chat_type = "group"
        # Bob spoke five minutes ago; Ana ``own_last`` ago.
        made.prior = PriorState(
            thread_last_conversation_at=NOW - timedelta(minutes=5),
            thread_last_user_message_at=NOW - timedelta(minutes=5),
            user_last_message_here_at=NOW - own_last,
            user_last_conversation_here_at=NOW - own_last,
            clock_data=data,
        )
        return made

    away = awareness_view(in_group(timedelta(hours=3)), AwarenessSettings())
    assert away.fired == ("action_gap_2h",)
    assert "Finish the report" in away.lines[0]
    assert awareness_view(in_group(timedelta(minutes=10)), AwarenessSettings()).fired == ()


def test_a_hedged_reference_keeps_the_users_capitals() -> None:
    # Only the label's first letter is lowered to sit inside the question.
    ci = action(label="Fix the CI before the Tokyo demo", source="auto", type="temporal_action")
    view = awareness_view(turn("morning", prior_with(ci)), AwarenessSettings())
    assert view.fired[0] == "action_gap_2h"
    assert "did you end up getting to fix the CI before the Tokyo demo?" in view.lines[0]


def test_cant_until_monday_postpones_the_call_instead_of_canceling_it() -> None:
    call = action(
        label="Call the bank",
        activity="call",
        source="auto",
        type="temporal_action",
        recorded_at=NOW - timedelta(days=1),
        start_at=NOW - timedelta(hours=2),
        due_by=NOW + timedelta(hours=12),
        expires_at=NOW + timedelta(days=2),
    )
    monday = datetime(2026, 11, 23, tzinfo=UTC)  # NOW is Saturday 21 November
    said = turn("I can't call the bank until Monday, they're closed.", prior_with(call))
    said.time_expressions = [
        ParseResult(
            "absolute",
            monday,
            monday + timedelta(days=1),
            matched_text="Monday",
            zone="UTC",
        )
    ]
    view = awareness_view(said, AwarenessSettings())
    assert not any("no longer doing" in line for line in view.lines)
    assert any("putting off" in line and "Call the bank" in line for line in view.lines)
    stored = apply_ops(view.ops)(prior_with(call).clock_data)
    assert stored is not None
    (kept,) = stored.latest_actions
    assert kept["status"] == "planned"
    assert kept["start_iso"] == monday.isoformat() and "deadline" not in kept

    # A true cancellation still closes it.
    for text in ("never mind the bank call", "no need to call the bank anymore"):
        view = awareness_view(turn(text, prior_with(call)), AwarenessSettings())
        stored = apply_ops(view.ops)(prior_with(call).clock_data)
        assert stored is not None and stored.latest_actions[0]["status"] == "canceled", text


def test_a_setting_the_relay_answers_itself_spends_no_check_in() -> None:
    # Back after two days with "clock: mode normal": the relay answers, the model hears
    # nothing, so the open plan is still asked about with the next message.
    view = awareness_view(turn("clock: mode normal", prior_with(action())), AwarenessSettings())
    assert view.reply is not None and view.lines == () and len(view.ops) == 1
    stored = apply_ops(view.ops)(prior_with(action()).clock_data)
    assert stored is not None and stored.latest_actions[0].get("referenced_iso") is None

    # Where the model passes the answer on (no chat commands), it hears the check-in too.
    api = turn("clock: mode normal", prior_with(action()))
    api.commands_allowed = False
    passed_on = awareness_view(api, AwarenessSettings())
    assert any(line.startswith("Check-in (action_gap_2h)") for line in passed_on.lines)


def test_a_call_set_for_a_time_just_come_is_looked_ahead_to_then_back_on() -> None:
    # "I'll call the bank tomorrow at 10"; back at 10:05 after a night away: the usual
    # 20-minute call may only be starting, so not "how did it go?" yet.
    call = {
        "label": "Call the bank",
        "activity": "call",
        "source": "auto",
        "type": "temporal_action",
        "recorded_at": NOW - timedelta(hours=20),
        "start_at": NOW - timedelta(minutes=5),
        "expected_typical_minutes": 20,
        "expected_max_minutes": 90,
    }
    ahead = awareness_view(turn("morning", prior_with(action(**call))), AwarenessSettings())
    assert "are you still planning to call the bank?" in ahead.lines[0]
    assert "how did it go" not in ahead.lines[0]

    # Looked ahead to at 10:05; back two hours later, it is looked back on, once.
    later = turn("hi again", prior_with(action(**call, referenced_at=NOW)))
    later.received_at = NOW + timedelta(hours=2)
    back = awareness_view(later, AwarenessSettings())
    assert "did the call happen — how did it go?" in back.lines[0]


def _stored_after(text: str, settings: AwarenessSettings) -> list[Action]:
    quiet = PriorState(thread_last_conversation_at=NOW - timedelta(minutes=5))
    view = awareness_view(turn(text, quiet), settings)
    stored = apply_ops(view.ops)(ClockData())
    assert stored is not None
    return [Action.from_json(entry) for entry in stored.latest_actions]


def test_actions_keep_a_label_only_unless_store_quotes_keeps_a_short_excerpt() -> None:
    """Spec 000 §0/§6.3: ``store_quotes: false`` (the default) stores the normalized
    summary only; true adds a short excerpt of the user's words."""
    said = "heading to the gym now, " + "leg day and then some cardio " * 12
    for text in (said, "clock it: " + said):
        [label_only] = _stored_after(text, AwarenessSettings())
        assert label_only.quote is None
        assert "cardio" not in label_only.label
        quoting = AwarenessSettings(actions=LatestActionsPolicy(store_quotes=True))
        [quoted] = _stored_after(text, quoting)
        assert quoted.quote is not None and quoted.quote.startswith("heading to the gym")
        assert len(quoted.quote) == 200  # a short excerpt, not the whole message
