"""Pure list operations on latest actions: creation, precedence, compaction, closing,
calibration and who sees what.

Reference instant NOW = 2026-02-09T09:10:00Z; every expected instant is written out.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from middleware.actions.detect import (
    DetectedAction,
    DurationReport,
    StatusUpdate,
    detect_status_update,
    detect_temporal_action,
    key_words,
    label_for_clocked,
)
from middleware.actions.lifecycle import (
    Speaker,
    add_action,
    calibrate,
    close_latest,
    compact,
    mark,
    new_action,
    postpone_latest,
    visible_actions,
)
from middleware.actions.model import Action, Scope, Source, load_actions
from middleware.types import ChatType

NOW = datetime(2026, 2, 9, 9, 10, tzinfo=UTC)
DM = "agent:main:telegram:dm:42"
DM_OTHER_CHANNEL = "agent:main:discord:dm:42"
API = "agent:main:api:thread-1"
API_GROUP = "agent:main:api:g1"  # an API group thread: its key has no chat-type segment
GROUP = "agent:main:telegram:group:-1001"
OTHER_GROUP = "agent:main:telegram:group:-2002"
ALICE = "telegram:42"
BOB = "telegram:7"

GYM = DetectedAction("Go to the gym", "gym", "in_progress", True)
SLEEP = DetectedAction("Sleep", "sleep", "in_progress", True)


def create(
    detected: DetectedAction = GYM,
    *,
    calibration: dict[str, Any] | None = None,
    project: bool = False,
    ttl_default: timedelta = timedelta(days=1),
    project_ttl: timedelta = timedelta(days=7),
    max_ttl: timedelta = timedelta(days=30),
    source: Source = "auto",
    start: datetime | None = None,
    due_by: datetime | None = None,
    deadline: str | None = None,
) -> Action:
    return new_action(
        detected,
        now=NOW,
        thread_key=DM,
        chat_type="dm",
        user_key=ALICE,
        source=source,
        scope="user",
        calibration=calibration or {},
        ttl_default=ttl_default,
        project=project,
        project_ttl=project_ttl,
        max_ttl=max_ttl,
        quote=None,
        action_id="act_1",
        start=start,
        due_by=due_by,
        deadline=deadline,
    )


def action(
    id: str,
    *,
    label: str = "Go to the gym",
    activity: str | None = "gym",
    at: datetime = NOW,
    source: Source = "auto",
    user: str = ALICE,
    thread: str = DM,
    scope: Scope = "user",
    hours: float = 24,
    chat_type: ChatType | None = None,
) -> Action:
    return Action(
        id=id,
        label=label,
        recorded_at=at,
        expires_at=at + timedelta(hours=hours),
        status="in_progress",
        source=source,
        thread_key=thread,
        user_key=user,
        activity=activity,
        expected_typical_minutes=120 if activity else None,
        expected_max_minutes=240 if activity else None,
        scope=scope,
        chat_type=chat_type,
    )


# --- new_action -----------------------------------------------------------------------


def test_new_action_takes_durations_from_the_template() -> None:
    created = create()
    assert created.label == "Go to the gym"
    assert created.type == "temporal_action"
    assert (created.expected_typical_minutes, created.expected_max_minutes) == (120, 240)
    assert created.recorded_at == NOW
    assert created.expires_at == datetime(2026, 2, 10, 9, 10, tzinfo=UTC)
    assert (created.user_key, created.thread_key, created.source) == (ALICE, DM, "auto")


def test_sleep_gets_its_short_ttl() -> None:
    created = create(SLEEP)
    assert created.expires_at == datetime(2026, 2, 9, 21, 10, tzinfo=UTC)  # +12h
    assert created.expected_typical_minutes == 480


def test_a_moment_away_is_gone_within_the_hour_even_in_a_project() -> None:
    # So a return hours later is never asked "did you end up getting to be right back?".
    brb = detect_temporal_action("back in 10")
    assert brb is not None
    assert create(brb).expires_at == NOW + timedelta(hours=1)
    assert create(brb, project=True).expires_at == NOW + timedelta(hours=1)


def test_calibration_overrides_template_durations() -> None:
    calibration = {"activity_overrides": {"gym": {"typical_minutes": 180, "max_minutes": 270}}}
    created = create(calibration=calibration)
    assert (created.expected_typical_minutes, created.expected_max_minutes) == (180, 270)


def test_project_threads_keep_actions_longer_but_not_sleep() -> None:
    assert create(project=True).expires_at == datetime(2026, 2, 16, 9, 10, tzinfo=UTC)
    assert create(SLEEP, project=True).expires_at == datetime(2026, 2, 9, 21, 10, tzinfo=UTC)
    nap = DetectedAction("Nap", "nap", "in_progress", True)
    assert create(nap, project=True).expires_at == datetime(2026, 2, 9, 13, 10, tzinfo=UTC)  # 4h


def test_ttl_is_clamped_to_max_ttl() -> None:
    created = create(project=True, project_ttl=timedelta(days=30), max_ttl=timedelta(days=2))
    assert created.expires_at == datetime(2026, 2, 11, 9, 10, tzinfo=UTC)


def test_a_shorter_default_ttl_applies_to_templates() -> None:
    assert create(ttl_default=timedelta(hours=6)).expires_at == NOW + timedelta(hours=6)


def test_expiry_is_never_before_the_expected_maximum() -> None:
    calibration = {"activity_overrides": {"gym": {"typical_minutes": 600, "max_minutes": 2000}}}
    created = create(calibration=calibration, max_ttl=timedelta(days=1))
    assert created.expires_at == NOW + timedelta(minutes=2000)
    assert create(ttl_default=timedelta(hours=1)).expires_at == NOW + timedelta(minutes=240)


def test_a_non_temporal_item_is_a_note_without_durations() -> None:
    created = create(DetectedAction("Paid invoice", None, "planned", False), source="clock_it")
    assert created.type == "note"
    assert created.expected_typical_minutes is None
    assert created.expires_at == NOW + timedelta(days=1)
    assert created.status_at(NOW + timedelta(hours=23)) == "planned"


def test_status_moves_with_time_at_exact_boundaries() -> None:
    created = create()  # typical 120 min, expires after 24h
    assert created.status_at(NOW + timedelta(minutes=119, seconds=59)) == "in_progress"
    assert created.status_at(NOW + timedelta(minutes=120)) == "likely_done"
    assert created.is_open(NOW + timedelta(minutes=120))
    assert created.status_at(created.expires_at - timedelta(seconds=1)) == "likely_done"
    assert created.status_at(created.expires_at) == "expired"
    assert not created.is_open(created.expires_at)


CALL = DetectedAction("Call the bank", "call", "planned", True)  # typical 20 min
TOMORROW_9 = datetime(2026, 2, 10, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def test_a_later_start_opens_the_window_and_the_ttl_then() -> None:
    created = create(CALL, start=TOMORROW_9)
    assert created.start_at == TOMORROW_9
    assert created.expires_at == datetime(2026, 2, 11, 9, 0, tzinfo=UTC)  # start + 24h
    # Planned until it begins, likely done only a typical duration after that.
    assert created.status_at(TOMORROW_9 - timedelta(seconds=1)) == "planned"
    assert not created.has_started(TOMORROW_9 - timedelta(seconds=1))
    assert created.has_started(TOMORROW_9)
    assert created.status_at(TOMORROW_9 + timedelta(minutes=19)) == "planned"
    assert created.status_at(TOMORROW_9 + timedelta(minutes=20)) == "likely_done"


def test_a_start_counts_only_for_a_planned_action_still_ahead() -> None:
    past = create(CALL, start=NOW - timedelta(minutes=1))
    assert past.start_at is None and past.expires_at == NOW + timedelta(days=1)
    under_way = create(GYM, start=NOW + timedelta(hours=3))  # "heading to the gym, back in 3h"
    assert under_way.start_at is None and under_way.expires_at == NOW + timedelta(days=1)


def test_a_plan_given_only_a_day_stays_planned_until_the_day_ends() -> None:
    # "gym tomorrow": the day runs from midnight to midnight, no hour given.
    day_start, day_end = datetime(2026, 2, 10, tzinfo=UTC), datetime(2026, 2, 11, tzinfo=UTC)
    planned = replace(GYM, status="planned")
    created = create(planned, start=day_start, due_by=day_end)
    assert created.due_by == day_end
    # The TTL counts from the day's end: it is looked back on the day after.
    assert created.expires_at == day_end + timedelta(days=1)
    morning = day_start + timedelta(hours=9)
    assert created.status_at(morning) == "planned"
    assert created.has_started(morning) and not created.is_past_due(morning)
    assert created.status_at(day_end - timedelta(seconds=1)) == "planned"
    assert created.status_at(day_end) == "likely_done" and created.is_past_due(day_end)
    assert Action.from_json(created.to_json()) == created
    # A day already over, or one given for something under way, is not kept.
    assert create(planned, due_by=NOW).due_by is None
    assert create(GYM, due_by=day_end).due_by is None


def test_a_clocked_activity_given_a_later_day_or_time_is_a_plan_for_then() -> None:
    # "clock it: standup notes due tomorrow" on Monday: tomorrow's, not one under way now
    # that would be gone before its day.
    day_start, day_end = datetime(2026, 2, 10, tzinfo=UTC), datetime(2026, 2, 11, tzinfo=UTC)
    standup = label_for_clocked("standup notes due tomorrow")
    created = create(standup, source="clock_it", start=day_start, due_by=day_end)
    assert (created.status, created.start_at, created.due_by) == ("planned", day_start, day_end)
    assert created.expires_at == day_end + timedelta(days=1)
    assert created.status_at(day_start + timedelta(hours=9)) == "planned"
    # "clock it: gym 6pm": later today, for that time; "gym by 5pm": due by then.
    six = NOW + timedelta(hours=8)
    gym = label_for_clocked("gym")
    at_six = create(gym, source="clock_it", start=six)
    assert (at_six.status, at_six.start_at, at_six.expires_at) == ("planned", six, six + DAY)
    by_five = create(gym, source="clock_it", due_by=six, deadline="Mon 9 Feb 17:00")
    assert (by_five.status, by_five.due_by, by_five.deadline) == ("planned", six, "Mon 9 Feb 17:00")


def test_a_clocked_activity_said_to_be_under_way_keeps_no_later_day() -> None:
    # "gym today" is under way now; "gym now, back tomorrow" is too.
    tonight = NOW + timedelta(hours=14)
    today = create(label_for_clocked("gym today"), source="clock_it", due_by=tonight)
    assert (today.status, today.due_by) == ("in_progress", None)
    now = create(label_for_clocked("gym now"), source="clock_it", start=NOW + timedelta(days=1))
    assert (now.status, now.start_at, now.expires_at) == ("in_progress", None, NOW + DAY)


def test_a_deadline_already_past_is_not_kept() -> None:
    # "clock it: gym by 8am" said at 09:10: no day is left to be due by, so the plan is not
    # shown as "due by 08:00" (the due time and its words go together).
    gym = label_for_clocked("gym")
    late = create(
        gym, source="clock_it", due_by=NOW - timedelta(hours=1), deadline="Mon 9 Feb 08:10"
    )
    assert (late.due_by, late.deadline) == (None, None)
    planned = replace(GYM, status="planned")
    now = create(planned, source="clock_it", due_by=NOW, deadline="Mon 9 Feb 09:10")
    assert (now.due_by, now.deadline) == (None, None)


def test_a_far_start_still_expires_within_max_ttl() -> None:
    created = create(CALL, start=NOW + timedelta(days=40), max_ttl=timedelta(days=30))
    assert created.expires_at == NOW + timedelta(days=30)


def test_the_start_is_stored_and_old_entries_without_one_still_load() -> None:
    created = create(CALL, start=TOMORROW_9)
    stored = created.to_json()
    assert stored["start_iso"] == "2026-02-10T09:00:00+00:00"
    assert Action.from_json(stored) == created
    del stored["start_iso"]
    old = Action.from_json(stored)
    assert old.start_at is None and old.has_started(NOW)
    assert old.status_at(NOW + timedelta(minutes=20)) == "likely_done"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"expected_typical_minutes": 1e300}, "at most a year"),
        ({"recorded_iso": "9999-12-31T23:30:00+00:00"}, "within the years 1 to 9999"),
        ({"expires_iso": "9999-12-31T23:59:59-01:00"}, "expires_iso is out of range"),
        ({"activity": 5}, "activity must be a string"),
        ({"quote": ["said"]}, "quote must be a string"),
    ],
)
def test_an_entry_whose_times_cannot_be_worked_out_does_not_load(
    change: dict[str, Any], problem: str
) -> None:
    # Such entries (imported before they were checked) failed every read of their user.
    stored = {**create(GYM).to_json(), **change}
    with pytest.raises(ValueError, match=problem):
        Action.from_json(stored)
    assert load_actions([stored, create(CALL).to_json()]) == [create(CALL)]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"id": ""}, "id must be a non-empty string"),
        ({"label": "   "}, "label must be a non-empty string"),
        ({"label": 5}, "label must be a non-empty string"),
        ({"recorded_iso": 1770628200}, "recorded_iso must be an ISO 8601 instant"),
        ({"recorded_iso": "yesterday"}, "recorded_iso is not an ISO 8601 instant: 'yesterday'"),
        ({"recorded_iso": "2026-02-09T09:10:00"}, "recorded_iso needs an offset"),
        (
            {"status": "finished"},
            "status must be one of planned, in_progress, likely_done, done, canceled, expired, "
            "not 'finished'",
        ),
        ({"scope": "everyone"}, "scope must be one of user, group, not 'everyone'"),
        ({"expected_typical_minutes": 0}, "expected minutes must be a positive number"),
        ({"expected_max_minutes": -30}, "expected minutes must be a positive number"),
        ({"expected_typical_minutes": True}, "expected minutes must be a positive number"),
        ({"expected_typical_minutes": "90"}, "expected minutes must be a positive number"),
    ],
)
def test_a_malformed_entry_is_refused_naming_what_is_wrong(
    change: dict[str, Any], problem: str
) -> None:
    stored = {**create(GYM).to_json(), **change}
    with pytest.raises(ValueError, match=f"^{re.escape(problem)}"):
        Action.from_json(stored)


def test_an_entry_from_elsewhere_loads_with_defaults_and_in_utc() -> None:
    # A v3 entry written by another tool: "Z" or any offset, only the required fields.
    assert Action.from_json(
        {"id": "x1", "label": "Gym", "recorded_iso": "2026-02-09T18:10:00+09:00"}
    ) == Action(
        id="x1",
        label="Gym",
        recorded_at=NOW,
        expires_at=NOW + DAY,
        status="planned",
        source="auto",
        thread_key="",
    )
    zulu = Action.from_json({"id": "x1", "label": "Gym", "recorded_iso": "2026-02-09T09:10:00Z"})
    assert zulu.recorded_at == NOW and zulu.recorded_at.tzinfo == UTC
    # Up to a year is an expected length; a whole number of minutes is kept.
    longest = {**create(GYM).to_json(), "expected_max_minutes": 366 * 24 * 60}
    assert Action.from_json(longest).expected_max_minutes == 366 * 24 * 60
    with pytest.raises(ValueError, match="at most a year"):
        Action.from_json({**longest, "expected_max_minutes": 366 * 24 * 60 + 1})
    assert (
        Action.from_json({**longest, "expected_typical_minutes": 90.0}).expected_typical_minutes
        == 90
    )


def test_only_a_list_of_objects_loads_as_latest_actions() -> None:
    gym = create(GYM)
    assert load_actions(None) == []
    assert load_actions(gym.to_json()) == []
    assert load_actions(["gym", 5, gym.to_json()]) == [gym]


# --- add_action: precedence -----------------------------------------------------------


def test_clocked_action_replaces_an_auto_one_of_the_same_activity() -> None:
    auto = action("a1", at=NOW - timedelta(minutes=5))
    clocked = action("c1", label="Gym session", source="clock_it")
    assert add_action([auto], clocked, now=NOW, max_items=25) == [clocked]


def test_clocked_action_replaces_an_auto_one_with_the_same_label() -> None:
    auto = action("a1", label="Be right back", activity=None, at=NOW - timedelta(minutes=1))
    clocked = action("c1", label="be right back", activity=None, source="clock_it")
    assert add_action([auto], clocked, now=NOW, max_items=25) == [clocked]


def test_auto_action_never_replaces_a_clocked_one() -> None:
    clocked = action("c1", source="clock_it", at=NOW - timedelta(minutes=30))
    auto = action("a1", label="Hit the gym")
    assert add_action([clocked], auto, now=NOW, max_items=25) == [clocked]


def test_auto_action_does_not_replace_a_user_confirmed_one() -> None:
    confirmed = replace(action("u1", at=NOW - timedelta(minutes=30)), source="user_confirmed")
    assert add_action([confirmed], action("a1"), now=NOW, max_items=25) == [confirmed]


def test_newer_action_supersedes_an_older_open_one_of_the_same_activity() -> None:
    older = action("a1", at=NOW - timedelta(hours=3))
    newer = action("a2", label="Hit the gym")
    assert add_action([older], newer, now=NOW, max_items=25) == [newer]


def test_two_actions_of_one_activity_about_different_things_both_stand() -> None:
    # "I'll call the bank tomorrow" then "I'll call mom tomorrow": the bank call was
    # dropped, as if one call replaced the other.
    bank = action("a1", label="Call the bank", activity="call", at=NOW - timedelta(minutes=5))
    mom = action("a2", label="Call mom", activity="call")
    assert add_action([bank], mom, now=NOW, max_items=25) == [bank, mom]
    # The same thing said again still replaces it, in other words too.
    again = action("a3", label="Ring the bank", activity="call")
    assert add_action([bank, mom], again, now=NOW, max_items=25) == [mom, again]


def test_unrelated_actions_are_kept() -> None:
    gym = action("a1", at=NOW - timedelta(hours=1))
    bob_gym = action("b1", user=BOB, at=NOW - timedelta(hours=1))
    group_gym = action("g1", thread=GROUP, at=NOW - timedelta(hours=1))
    done_gym = replace(action("d1", at=NOW - timedelta(hours=2)), status="done")
    dinner = action("a2", label="Eat dinner", activity="meal:dinner")
    kept = add_action([done_gym, gym, bob_gym, group_gym], dinner, now=NOW, max_items=25)
    assert kept == [done_gym, gym, bob_gym, group_gym, dinner]
    newer_gym = action("a3", label="Hit the gym")
    after = add_action([done_gym, gym, bob_gym, group_gym], newer_gym, now=NOW, max_items=25)
    assert after == [done_gym, bob_gym, group_gym, newer_gym]


def test_add_action_compacts() -> None:
    old = [action(f"x{i}", activity=None, label=f"Thing {i}", at=NOW - timedelta(minutes=i + 1))
           for i in range(3)]  # fmt: skip
    new = action("n", activity=None, label="New thing")
    result = add_action(old, new, now=NOW, max_items=2)
    assert [a.id for a in result] == ["x0", "n"]


# --- compact --------------------------------------------------------------------------


def test_compact_caps_to_the_newest_keeping_oldest_first() -> None:
    actions = [
        action(f"a{i}", activity=None, label=f"Thing {i}", at=NOW - timedelta(minutes=i))
        for i in range(30)
    ]
    kept = compact(actions, now=NOW, max_items=25)
    assert [a.id for a in kept] == [f"a{i}" for i in range(24, -1, -1)]


def test_compact_drops_expired_exactly_at_expiry() -> None:
    expiring = action("e", at=NOW - timedelta(hours=24))  # expires exactly NOW
    almost = action("k", at=NOW - timedelta(hours=24) + timedelta(seconds=1))
    stored_expired = replace(action("s"), status="expired")
    assert compact([expiring, almost, stored_expired], now=NOW, max_items=25) == [almost]


def test_compact_keeps_closed_actions_for_a_day() -> None:
    recent = action("r", at=NOW - timedelta(hours=3)).with_status("done", NOW - timedelta(hours=2))
    old = action("o", at=NOW - timedelta(hours=20), hours=100).with_status(
        "canceled", NOW - timedelta(days=1, seconds=1)
    )
    assert compact([old, recent], now=NOW, max_items=25) == [recent]


def test_compact_with_zero_items_keeps_nothing() -> None:
    assert compact([action("a")], now=NOW, max_items=0) == []


# --- close_latest and mark ------------------------------------------------------------


def test_done_closes_the_most_recent_open_action_as_user_confirmed() -> None:
    older = action("a1", label="Eat dinner", activity="meal:dinner", at=NOW - timedelta(hours=2))
    newer = action("a2", at=NOW - timedelta(hours=1))
    later = NOW + timedelta(minutes=5)
    actions, changed = close_latest(
        [older, newer], StatusUpdate("done", None), now=later, speaker=Speaker(ALICE, DM, "dm")
    )
    assert changed is not None and changed.id == "a2"
    assert (changed.status, changed.source, changed.updated_at) == ("done", "user_confirmed", later)
    assert actions == [older, changed]


def test_a_postponed_action_stays_open_and_begins_at_its_new_day() -> None:
    call = replace(
        action("a1", label="Call the bank", activity="call", hours=30),
        start_at=NOW + timedelta(hours=20),
        due_by=NOW + timedelta(hours=30),
        deadline="Tue 10 Feb",
        referenced_at=NOW,
    )
    monday, monday_ends = NOW + timedelta(days=7), NOW + timedelta(days=8)
    update = StatusUpdate("postponed", "call", until="Monday")
    args: dict[str, Any] = {"speaker": Speaker(ALICE, DM, "dm")}
    actions, moved = postpone_latest(
        [call], update, now=NOW, start=monday, due_by=monday_ends, **args
    )
    assert moved is not None and actions == [moved]
    assert (moved.status, moved.start_at, moved.due_by) == ("planned", monday, monday_ends)
    assert moved.deadline is None and moved.referenced_at is None
    # Marked put off (the cards no longer show its first day), and stored so.
    assert moved.postponed_at == NOW and Action.from_json(moved.to_json()) == moved
    assert moved.is_open(monday + timedelta(hours=12)), "it lives until its new day is over"
    assert moved.expires_at >= monday_ends
    # close_latest leaves a postponement alone: nothing is closed.
    assert close_latest([call], update, now=NOW, **args) == ([call], None)
    # Words with no time ("till the freeze ends"): open, its times unchanged.
    _, kept = postpone_latest([call], update, now=NOW, start=None, **args)
    assert kept is not None and (kept.status, kept.start_at) == ("planned", call.start_at)


def test_a_postponement_in_other_words_puts_off_the_action_about_that_thing() -> None:
    # "can't ring the bank" put off the latest call, which was to mom: it went by the
    # activity alone. It goes by what the call is about, whatever the verb.
    bank = action("a1", label="Call the bank", activity="call", at=NOW - timedelta(hours=2))
    mom = action("a2", label="Call mom", activity="call", at=NOW - timedelta(hours=1))
    args: dict[str, Any] = {"speaker": Speaker(ALICE, DM, "dm"), "start": None}
    ring = detect_status_update("I can't ring the bank until Monday, they're closed.")
    assert ring is not None
    _, moved = postpone_latest([bank, mom], ring, now=NOW, **args)
    assert moved is not None and moved.id == "a1"
    # Named in words with no activity: the object still joins them.
    landlord = action("a3", label="Write to the landlord", activity=None)
    email = detect_status_update("can't email the landlord until Friday")
    assert email is not None and email.activity is None
    _, moved = postpone_latest([landlord], email, now=NOW, **args)
    assert moved is not None and moved.id == "a3"
    # A different object stays separate: nothing is put off.
    dentist = detect_status_update("can't ring the dentist until Monday")
    assert dentist is not None
    assert postpone_latest([bank, mom], dentist, now=NOW, **args) == ([bank, mom], None)


def test_a_named_activity_closes_only_that_activity() -> None:
    gym = action("a1", at=NOW - timedelta(hours=2))
    dinner = action("a2", label="Eat dinner", activity="meal:dinner", at=NOW - timedelta(hours=1))
    _, changed = close_latest(
        [gym, dinner], StatusUpdate("canceled", "gym"), now=NOW, speaker=Speaker(ALICE, DM, "dm")
    )
    assert changed is not None and changed.id == "a1"
    assert (changed.status, changed.source) == ("canceled", "auto")


def test_a_named_activity_passes_over_actions_of_no_activity() -> None:
    # "back from the gym" with a newer clocked note open: the note is not the gym.
    gym = action("a1", at=NOW - timedelta(hours=2))
    note = action("a2", label="Paid the invoice", activity=None, at=NOW - timedelta(hours=1))
    _, changed = close_latest(
        [gym, note], StatusUpdate("done", "gym"), now=NOW, speaker=Speaker(ALICE, DM, "dm")
    )
    assert changed is not None and changed.id == "a1"
    assert (
        close_latest(
            [note], StatusUpdate("done", "gym"), now=NOW, speaker=Speaker(ALICE, DM, "dm")
        )[1]
        is None
    )


def test_activity_families_match() -> None:
    dinner = action("a1", label="Eat dinner", activity="meal:dinner")
    nap = action("a2", label="Take a nap", activity="nap")
    _, meal = close_latest(
        [dinner], StatusUpdate("done", "meal"), now=NOW, speaker=Speaker(ALICE, DM, "dm")
    )
    _, woke = close_latest(
        [nap], StatusUpdate("done", "sleep"), now=NOW, speaker=Speaker(ALICE, DM, "dm")
    )
    assert meal is not None and woke is not None


def test_nothing_closes_without_a_matching_open_action() -> None:
    gym = action("a1")
    expired = action("a2", label="Eat dinner", activity="meal:dinner", at=NOW - timedelta(days=2))
    bobs = action("b1", label="Take a shower", activity="shower", user=BOB)
    actions = [gym, expired, bobs]
    for update in (StatusUpdate("done", "meal:dinner"), StatusUpdate("done", "shower")):
        result = close_latest(actions, update, now=NOW, speaker=Speaker(ALICE, DM, "dm"))
        assert result == (actions, None)


def _close(actions: list[Action], update: StatusUpdate) -> Action | None:
    return close_latest(actions, update, now=NOW, speaker=Speaker(ALICE, DM, "dm"))[1]


def test_a_completion_closes_the_one_action_its_words_name() -> None:
    bank = action("a1", label="Call the bank", activity="call", at=NOW - timedelta(hours=2))
    report = action("a2", label="Finish the report", activity=None, at=NOW - timedelta(hours=1))
    gym = action("a3", at=NOW - timedelta(minutes=5))
    actions = [bank, report, gym]
    called = _close(actions, StatusUpdate("done", None, key_words("called the bank")))
    assert called is not None and called.id == "a1"
    assert (called.status, called.source) == ("done", "user_confirmed")
    done = _close(actions, StatusUpdate("done", None, key_words("the report")))
    assert done is not None and done.id == "a2"


def test_a_completion_closes_nothing_its_words_do_not_all_name_or_name_twice() -> None:
    bank = action("a1", label="Call the bank", activity="call")
    mum = action("a2", label="Call mum", activity="call")
    email = action("a3", label="Email the bank", activity=None)
    bobs = action("b1", label="Finish the report", activity=None, user=BOB)
    actions = [bank, mum, email, bobs]
    for words in ("the report", "the bank", "called the bank yesterday", "the car"):
        assert _close(actions, StatusUpdate("done", None, key_words(words))) is None, words
    # Named by its words, a call to the bank does not close the newer call to mum.
    called = _close(actions, StatusUpdate("done", None, key_words("called the bank")))
    assert called is not None and called.id == "a1"


def test_a_done_naming_nothing_never_closes_an_action_not_yet_begun() -> None:
    gym = action("a1", at=NOW - timedelta(hours=1))
    tomorrow = replace(
        action("a2", label="Call the bank", activity="call"), start_at=NOW + timedelta(hours=20)
    )
    back = _close([gym, tomorrow], StatusUpdate("done", None))
    assert back is not None and back.id == "a1"
    assert _close([tomorrow], StatusUpdate("done", "call")) is None
    # Said by its words, it was done early; "cancel that" drops it before it begins.
    early = _close([tomorrow], StatusUpdate("done", None, key_words("called the bank")))
    assert early is not None and early.id == "a2"
    assert _close([tomorrow], StatusUpdate("canceled", None)) is not None


def test_closing_in_a_group_only_touches_that_thread() -> None:
    dm_gym = action("a1", at=NOW - timedelta(minutes=1))
    group_gym = action("a2", thread=GROUP, at=NOW - timedelta(hours=1))
    _, changed = close_latest(
        [group_gym, dm_gym],
        StatusUpdate("done", None),
        now=NOW,
        speaker=Speaker(ALICE, GROUP, "group"),
    )
    assert changed is not None and changed.id == "a2"


def test_a_member_closes_a_plan_another_clocked_for_the_group_only_by_naming_it() -> None:
    standup = action(
        "a1", label="Standup notes", activity=None, user=BOB, thread=GROUP, scope="group"
    )
    alice_in_group = Speaker(ALICE, GROUP, "group")
    named = detect_status_update("the standup notes are done")
    assert named is not None
    _, changed = close_latest([standup], named, now=NOW, speaker=alice_in_group)
    assert changed is not None and (changed.id, changed.status) == ("a1", "done")
    # A bare "done" is about Alice's own doings; another group's plan is never hers.
    assert (
        close_latest([standup], StatusUpdate("done", None), now=NOW, speaker=alice_in_group)[1]
        is None
    )
    elsewhere = Speaker(ALICE, OTHER_GROUP, "group")
    assert close_latest([standup], named, now=NOW, speaker=elsewhere)[1] is None


def test_closing_in_a_dm_reaches_the_users_other_private_threads() -> None:
    api_gym = action("a1", thread=API, at=NOW - timedelta(hours=1))
    group_gym = action("a2", thread=GROUP, at=NOW - timedelta(minutes=1))
    _, changed = close_latest(
        [api_gym, group_gym], StatusUpdate("done", None), now=NOW, speaker=Speaker(ALICE, DM, "dm")
    )
    assert changed is not None and changed.id == "a1"


def test_mark() -> None:
    actions = [action("a1"), action("a2", label="Eat dinner", activity="meal:dinner")]
    done = mark(actions, "a1", "done", now=NOW)
    assert (done[0].status, done[0].source, done[0].updated_at) == ("done", "user_confirmed", NOW)
    assert done[1] == actions[1]
    canceled = mark(actions, "a2", "canceled", now=NOW)
    assert (canceled[1].status, canceled[1].source) == ("canceled", "auto")
    assert mark(actions, "nope", "done", now=NOW) == actions


# --- calibrate ------------------------------------------------------------------------


def test_calibrate_records_the_reported_duration() -> None:
    before: dict[str, Any] = {
        "activity_overrides": {"meal:dinner": {"typical_minutes": 90, "max_minutes": 240}},
        "other": "kept",
    }
    after = calibrate(before, DurationReport("gym", 180), now=NOW)
    assert after["activity_overrides"]["gym"] == {
        "typical_minutes": 180,
        "max_minutes": 270,
        "updated_iso": "2026-02-09T09:10:00+00:00",
    }
    assert after["activity_overrides"]["meal:dinner"] == before["activity_overrides"]["meal:dinner"]
    assert after["other"] == "kept"
    assert "gym" not in before["activity_overrides"]  # the input is not changed


def test_calibrated_max_is_never_below_the_template_max() -> None:
    after = calibrate({}, DurationReport("gym", 45), now=NOW)
    assert after["activity_overrides"]["gym"]["max_minutes"] == 240
    after = calibrate({}, DurationReport("gym", 181), now=NOW)
    assert after["activity_overrides"]["gym"]["max_minutes"] == 272  # ceil(271.5)


def test_calibrate_replaces_malformed_overrides_and_feeds_new_actions() -> None:
    after = calibrate({"activity_overrides": ["junk"]}, DurationReport("gym", 180), now=NOW)
    assert list(after["activity_overrides"]) == ["gym"]
    created = create(calibration=after)
    assert (created.expected_typical_minutes, created.expected_max_minutes) == (180, 270)


def test_calibrate_ignores_a_non_positive_report() -> None:
    assert calibrate({"x": 1}, DurationReport("gym", 0), now=NOW) == {"x": 1}


# --- visible_actions ------------------------------------------------------------------


@pytest.fixture
def everyone() -> list[Action]:
    return [
        action("alice-dm", thread=DM),
        action("alice-api", thread=API),
        action("alice-other-dm", thread=DM_OTHER_CHANNEL),
        action("alice-group", thread=GROUP),
        action("alice-other-group", thread=OTHER_GROUP),
        action("alice-group-shared", thread=GROUP, scope="group", label="Standup at 3pm"),
        action("bob-group", thread=GROUP, user=BOB),
        action("bob-group-shared", thread=GROUP, user=BOB, scope="group", label="Deploy"),
        action("bob-dm", thread="agent:main:telegram:dm:7", user=BOB),
    ]


def ids(actions: list[Action]) -> set[str]:
    return {a.id for a in actions}


def test_group_shows_own_actions_in_that_group_plus_group_scoped_ones(
    everyone: list[Action],
) -> None:
    alice = visible_actions(everyone, now=NOW, speaker=Speaker(ALICE, GROUP, "group"))
    assert ids(alice) == {"alice-group", "alice-group-shared", "bob-group-shared"}
    bob = visible_actions(everyone, now=NOW, speaker=Speaker(BOB, GROUP, "group"))
    assert ids(bob) == {"bob-group", "alice-group-shared", "bob-group-shared"}


def test_another_group_sees_nothing_from_this_one(everyone: list[Action]) -> None:
    seen = visible_actions(everyone, now=NOW, speaker=Speaker(BOB, OTHER_GROUP, "group"))
    assert seen == []


def test_dm_shows_the_users_private_actions_never_group_ones(everyone: list[Action]) -> None:
    seen = visible_actions(everyone, now=NOW, speaker=Speaker(ALICE, DM, "dm"))
    assert ids(seen) == {"alice-dm", "alice-api", "alice-other-dm"}


def test_a_linked_accounts_private_actions_are_the_users_own_in_a_dm(
    everyone: list[Action],
) -> None:
    """Alice linked her Discord account: what she clocked on Telegram is hers there too
    (in a DM, and closable there), never what she said in a group, nor Bob's."""
    on_discord = "discord:420"
    dm = "agent:main:discord:dm:5555"
    seen = visible_actions(everyone, now=NOW, speaker=Speaker(on_discord, dm, "dm", [ALICE]))
    assert ids(seen) == {"alice-dm", "alice-api", "alice-other-dm"}
    assert visible_actions(everyone, now=NOW, speaker=Speaker(on_discord, dm, "dm")) == []
    _, closed = close_latest(
        seen, StatusUpdate("done", None), now=NOW, speaker=Speaker(on_discord, dm, "dm", [ALICE])
    )
    assert closed is not None and closed.user_key == ALICE


def test_expired_and_closed_actions_are_never_visible() -> None:
    expired = action("old", at=NOW - timedelta(hours=24))
    done = action("done").with_status("done", NOW)
    open_ = action("open", label="Eat dinner", activity="meal:dinner")
    seen = visible_actions([expired, done, open_], now=NOW, speaker=Speaker(ALICE, DM, "dm"))
    assert seen == [open_]


def test_visible_actions_are_oldest_first() -> None:
    newer = action("n", label="Eat dinner", activity="meal:dinner")
    older = action("o", at=NOW - timedelta(hours=1))
    seen = visible_actions([newer, older], now=NOW, speaker=Speaker(ALICE, DM, "dm"))
    assert [a.id for a in seen] == ["o", "n"]


def test_an_action_keeps_the_chat_type_it_was_recorded_in() -> None:
    created = create()
    assert created.chat_type == "dm"
    stored = created.to_json()
    assert stored["chat_type"] == "dm"
    assert Action.from_json(stored) == created
    del stored["chat_type"]  # stored before the chat type was kept
    assert Action.from_json(stored).chat_type is None


def test_an_api_group_action_stays_in_its_group() -> None:
    in_group = action("g", thread=API_GROUP, chat_type="group")
    in_api_dm = action("d", label="Eat dinner", activity="meal:dinner", thread=API, chat_type="dm")
    seen = visible_actions([in_group, in_api_dm], now=NOW, speaker=Speaker(ALICE, DM, "dm"))
    assert ids(seen) == {"d"}
    _, closed = close_latest(
        [in_group], StatusUpdate("done", None), now=NOW, speaker=Speaker(ALICE, DM, "dm")
    )
    assert closed is None
    # In the group itself it is seen and closed as before.
    assert visible_actions([in_group], now=NOW, speaker=Speaker(ALICE, API_GROUP, "group")) == [
        in_group
    ]


def test_an_action_stored_without_a_chat_type_is_judged_by_its_thread_key() -> None:
    old_api = action("a", thread=API)
    old_group = action("g", label="Eat dinner", activity="meal:dinner", thread=GROUP)
    # A key that names neither a DM nor an API thread is not taken for a private one.
    odd = action("o", label="Walk the dog", activity=None, thread="agent:main:irc:#chan:42")
    seen = visible_actions([old_api, old_group, odd], now=NOW, speaker=Speaker(ALICE, DM, "dm"))
    assert ids(seen) == {"a"}


def test_how_long_the_user_said_it_lasts_sets_the_expected_length() -> None:
    meeting = DetectedAction("Go into a meeting", "meeting", "in_progress", True, minutes=60)
    created = create(meeting)
    # Likely over after the hour they gave, not the template's; the maximum as a report's.
    assert (created.expected_typical_minutes, created.expected_max_minutes) == (60, 180)
    unknown = DetectedAction("Pop out", None, "in_progress", True, minutes=40)
    assert (create(unknown).expected_typical_minutes, create(unknown).expected_max_minutes) == (
        40,
        60,
    )


def test_a_bare_return_says_nothing_of_a_plan_set_for_a_time() -> None:
    # "heading to the gym" at 7:00, "I'll call mom at 8" at 7:05; "back!" at 9:10: the
    # user is back from the gym, and has said nothing of the call.
    gym = action("a1", at=NOW - timedelta(hours=2, minutes=10))
    mom = replace(
        action("a2", label="Call mom", activity="call", at=NOW - timedelta(hours=2, minutes=5)),
        status="planned",
        start_at=NOW - timedelta(hours=1, minutes=10),
    )
    back = _close([gym, mom], StatusUpdate("done", None))
    assert back is not None and back.id == "a1"
    # Alone, the call is not closed by a return either; naming it closes it.
    assert _close([mom], StatusUpdate("done", None)) is None
    assert (
        _close([replace(mom, due_by=NOW + timedelta(hours=2))], StatusUpdate("done", None)) is None
    )
    called = _close([mom], StatusUpdate("done", None, key_words("called mom")))
    assert called is not None and called.id == "a2"
    assert _close([mom], StatusUpdate("done", "call")) == replace(
        mom, status="done", source="user_confirmed", updated_at=NOW
    )
