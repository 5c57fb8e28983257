"""What the model is told and the user is confirmed, word for word (stable wording: prompt
caches and users' expectations depend on it). Expected texts are written out in full."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from middleware.actions.cues import CueMatch
from middleware.actions.detect import DurationReport
from middleware.actions.model import Action
from middleware.awareness import wording

NOW = datetime(2026, 11, 2, 15, 0, tzinfo=UTC)  # Mon 2 Nov, 10:00 in New York
NEW_YORK = ZoneInfo("America/New_York")
CORRECTABLE = "Never state it as fact; if the user corrects you, accept it at once."


def action(label: str = "Heading to the gym", **changes: object) -> Action:
    fields: dict[str, object] = {
        "id": "a1",
        "label": label,
        "recorded_at": NOW - timedelta(hours=3),
        "expires_at": NOW + timedelta(days=5),
        "status": "in_progress",
        "source": "auto",
        "thread_key": "agent:main:telegram:dm:42",
        "user_key": "telegram:42",
    }
    return Action(**{**fields, **changes})  # type: ignore[arg-type]


def test_settings_confirmations_name_the_setting_and_what_it_means() -> None:
    assert wording.tell_user("Done.") == "Relay note for the user (pass it on briefly): Done."
    assert wording.mode_set(None, "light") == (
        "Clock mode is back to the default: light "
        "(check-ins only when a rule says the gap matters)."
    )
    assert wording.mode_set("normal", "normal") == (
        "Clock mode is now normal: more proactive check-ins and recaps after long gaps."
    )
    assert wording.mode_set("off", "off") == (
        "Clock mode is now off: no check-ins or action references, just the time."
    )
    assert wording.auto_set(True) == (
        "I'll note near-term plans like 'heading to the gym' automatically again."
    )
    assert wording.auto_set(False) == (
        "I won't note your plans automatically any more; say 'clock it: …' for anything "
        "you want me to remember."
    )
    assert wording.kind_set("project") == (
        "This thread is now a project thread: "
        "I'll ask for updates when you come back after a day or more."
    )
    assert wording.kind_set("scheduling") == (
        "This thread is now a scheduling thread: "
        "times are anchored and confirmed before anything is scheduled."
    )


def test_a_clocked_action_with_its_usual_length() -> None:
    gym = action(expected_typical_minutes=120)
    assert wording.clocked(gym) == (
        'The user clocked an action: "Heading to the gym" (usually takes about 2 hours). '
        "Acknowledge it briefly."
    )
    notes = action("Standup notes", scope="group", type="note")
    assert wording.clocked(notes) == (
        'The user clocked an action for the whole group: "Standup notes". Acknowledge it briefly.'
    )


def test_durations_read_in_minutes_below_an_hour_and_a_half_then_in_hours() -> None:
    said = {
        minutes: wording.calibrated(DurationReport("meal:dinner", minutes))
        for minutes in (45, 89, 90, 120, 150)
    }
    assert (
        said[45] == "The user says dinner took 45 minutes; their usual duration for it is updated."
    )
    assert said[89].startswith("The user says dinner took 89 minutes;")
    assert said[90].startswith("The user says dinner took 1.5 hours;")
    assert said[120].startswith("The user says dinner took 2 hours;")
    assert said[150].startswith("The user says dinner took 2.5 hours;")


def test_when_a_clocked_plan_is_for_is_written_in_the_users_zone() -> None:
    # 03:00 UTC on Tuesday is still Monday evening in New York.
    tonight = action("Call mom", status="planned", start_at=datetime(2026, 11, 3, 3, tzinfo=UTC))
    assert wording.clocked(tonight, NEW_YORK) == (
        'The user clocked an action: "Call mom", starting today, Mon 2 Nov 22:00. '
        "Acknowledge it briefly."
    )
    tomorrow = action(
        "Call mom", status="planned", start_at=datetime(2026, 11, 3, 14, 30, tzinfo=UTC)
    )
    assert ", starting tomorrow, Tue 3 Nov 09:30." in wording.clocked(tomorrow, NEW_YORK)
    # No zone: no phrase placed it later, so no day is claimed.
    assert (
        wording.clocked(tomorrow)
        == 'The user clocked an action: "Call mom". Acknowledge it briefly.'
    )
    friday = action(
        "Gym",
        status="planned",
        start_at=datetime(2026, 11, 6, 5, tzinfo=UTC),
        due_by=datetime(2026, 11, 7, 5, tzinfo=UTC),
    )
    assert ", for Fri 6 Nov." in wording.clocked(friday, NEW_YORK)
    report = action(
        "Finish the report", status="planned", due_by=NOW + timedelta(days=4), deadline="Fri 6 Nov"
    )
    assert ", due by Fri 6 Nov." in wording.clocked(report)


def test_a_plan_too_far_ahead_says_how_long_plans_are_kept_and_what_to_do() -> None:
    tokyo = action(
        "Fly to Tokyo", status="planned", start_at=datetime(2026, 12, 4, 14, 30, tzinfo=UTC)
    )
    assert wording.too_far_ahead(tokyo, NEW_YORK, timedelta(days=30)) == (
        'Not clocked: "Fly to Tokyo", starting Fri 4 Dec 09:30, is further ahead than this '
        "relay keeps plans (30 days: max_ttl in [clock.store.latest_actions]), so it would be "
        "dropped before then. Clock it again nearer the time, or ask the relay's admin to "
        "raise max_ttl."
    )
    assert wording.too_far_ahead(tokyo, None, timedelta(hours=12)).startswith(
        'Not clocked: "Fly to Tokyo" is further ahead than this relay keeps plans (12 hours: '
    )


def test_a_close_says_what_the_user_said_and_when_it_was_clocked() -> None:
    done = action(status="done")
    assert wording.closed(done, NOW) == (
        'The user says they are done with: "Heading to the gym" (said 3 hours ago).'
    )
    assert wording.closed(action(status="canceled"), NOW) == (
        'The user says they are no longer doing: "Heading to the gym" (said 3 hours ago).'
    )
    group_done = action("Standup notes", status="done", scope="group")
    assert wording.closed(group_done, NOW, by="Bo") == (
        'The user says the group\'s plan is done: "Standup notes" '
        "(clocked for the group by Bo, 3 hours ago)."
    )
    group_off = action("Standup notes", status="canceled", scope="group")
    assert wording.closed(group_off, NOW) == (
        'The user says the group\'s plan is off: "Standup notes" '
        "(clocked for the group by the user, 3 hours ago)."
    )


def test_a_postponement_is_not_a_cancel_and_says_when_it_can_happen() -> None:
    later = action("Call the bank", status="planned", start_at=NOW + timedelta(days=2, hours=4))
    assert wording.postponed(later, NOW) == (
        'The user is putting off, not calling off: "Call the bank" (said 3 hours ago). It stays '
        "open; it can happen at the earliest in 2 days 4 hours; do not treat it as canceled."
    )
    # A start that has come says nothing of "at the earliest".
    due_now = action("Call the bank", status="planned", start_at=NOW)
    assert wording.postponed(due_now, NOW) == (
        'The user is putting off, not calling off: "Call the bank" (said 3 hours ago). It stays '
        "open; do not treat it as canceled."
    )
    group = action("Standup notes", status="planned", scope="group")
    assert wording.postponed(group, NOW, by="Bo") == (
        'The user is putting off, not calling off: "Standup notes" (clocked for the group by Bo, '
        "3 hours ago). It stays open; do not treat it as canceled."
    )
    assert "(clocked for the group by the user, 3 hours ago)" in wording.postponed(group, NOW)


def test_gap_checkins_name_the_rule_and_the_gap() -> None:
    assert wording.ask_for_updates("project_gap", timedelta(days=2, hours=3), "project") == (
        "Check-in (project_gap): the last interaction in this project thread was 2 days 3 hours "
        "ago. Before continuing, briefly ask the user for any updates since then."
    )
    assert wording.offer_recap("recap", timedelta(days=1)) == (
        "Check-in (recap): the last interaction here was 1 day ago. Offer a one- or two-line "
        "recap of where things stood, then follow the user's lead."
    )


def test_a_hedged_reference_to_an_action_now_over_asks_the_templates_question() -> None:
    gym = action(activity="gym", expected_typical_minutes=120)
    assert wording.hedged_reference("action_gap_2h", gym, NOW) == (
        'Check-in (action_gap_2h): 3 hours ago the user was about to: "Heading to the gym" '
        "(likely done by now, not confirmed). If it fits, mention it in a hedged way, e.g. "
        f'"Welcome back — how did the gym go?" {CORRECTABLE}'
    )


def test_a_hedged_reference_without_a_template_keeps_the_labels_capitals() -> None:
    ci = action("Fix the CI", status="planned", start_at=NOW - timedelta(hours=2))
    assert wording.hedged_reference("r", ci, NOW) == (
        'Check-in (r): 3 hours ago the user planned: "Fix the CI", set for 2 hours ago '
        "(planned, not confirmed). If it fits, mention it in a hedged way, e.g. "
        f'"Welcome back — did you end up getting to fix the CI?" {CORRECTABLE}'
    )


def test_a_hedged_reference_before_its_day_is_over_asks_whether_it_is_still_planned() -> None:
    dentist = action(
        "Call the dentist", status="planned", activity="call", due_by=NOW + timedelta(hours=9)
    )
    assert wording.hedged_reference("r", dentist, NOW) == (
        'Check-in (r): 3 hours ago the user planned: "Call the dentist", set for a day (no time '
        "given) that ends in 9 hours (planned, not confirmed). If it fits, mention it in a "
        'hedged way, e.g. "Welcome back — are you still planning to call the dentist?" '
        f"{CORRECTABLE}"
    )


def test_when_a_day_or_deadline_passed_is_said_from_now() -> None:
    ended = action("Gym", status="planned", due_by=NOW - timedelta(hours=2))
    assert '"Gym", set for a day (no time given) that ended 2 hours ago (likely done' in (
        wording.hedged_reference("r", ended, NOW)
    )
    # Its end is now: it has ended, just now (not "ends in just now").
    ending = action("Gym", status="planned", due_by=NOW)
    assert '"Gym", set for a day (no time given) that ended just now (' in (
        wording.hedged_reference("r", ending, NOW)
    )
    overdue = action(
        "Report", status="planned", due_by=NOW - timedelta(days=1), deadline="Sun 1 Nov"
    )
    assert '"Report", due by Sun 1 Nov, which passed 1 day ago (' in (
        wording.hedged_reference("r", overdue, NOW)
    )
    ahead = action(
        "Report", status="planned", due_by=NOW + timedelta(days=3, hours=9), deadline="Fri 6 Nov"
    )
    assert '"Report", due by Fri 6 Nov (in 3 days 9 hours) (planned, not confirmed).' in (
        wording.hedged_reference("r", ahead, NOW)
    )


def test_an_action_under_way_is_said_to_be_so_until_its_usual_length_is_over() -> None:
    gym = action(activity="gym", expected_typical_minutes=240)
    assert "(under way when they said it, not confirmed)" in wording.hedged_reference("r", gym, NOW)


def test_a_group_plan_is_the_groups_and_credited_to_who_clocked_it() -> None:
    notes = action("Standup notes", status="planned", scope="group")
    assert wording.hedged_reference("r", notes, NOW) == (
        'Check-in (r): 3 hours ago the user clocked for the whole group: "Standup notes" '
        "(planned, not confirmed). If it fits, mention it as the group's plan in a hedged way, "
        f'e.g. "About the group\'s plan — did "Standup notes" happen?" {CORRECTABLE}'
    )
    today = action(
        "Standup notes", status="planned", scope="group", due_by=NOW + timedelta(hours=9)
    )
    assert wording.hedged_reference("r", today, NOW, by="Bo") == (
        'Check-in (r): 3 hours ago Bo clocked for the whole group: "Standup notes", set for a '
        "day (no time given) that ends in 9 hours (planned, not confirmed). It is the group's "
        "plan, not the user's own. If it fits, mention it as the group's plan in a hedged way, "
        f'e.g. "About the plan Bo clocked — is "Standup notes" still the plan?" {CORRECTABLE}'
    )


def test_a_cue_offers_its_question_as_a_possible_connection() -> None:
    gym = action(activity="gym")
    match = CueMatch(gym, "sore", "Tough workout — did you end up going to the gym?")
    assert wording.cue(match, NOW) == (
        'Possible connection (unconfirmed): 3 hours ago the user said "Heading to the gym", and '
        'this message mentions "sore". You may ask a confirming question such as '
        f'"Tough workout — did you end up going to the gym?" {CORRECTABLE}'
    )


def test_a_cue_about_another_members_group_plan_asks_about_the_plan() -> None:
    run = action("Team run", activity="run", scope="group")
    match = CueMatch(run, "sore", "Sounds like a hard run — did you end up going?")
    assert wording.cue(match, NOW, by="Bo") == (
        "Possible connection (unconfirmed): 3 hours ago Bo clocked for the whole group "
        '"Team run", and this message mentions "sore". It is the group\'s plan, not the user\'s '
        'own. You may ask a confirming question such as "About the plan Bo clocked — did '
        f'"Team run" happen?" {CORRECTABLE}'
    )
    assert wording.cue(match, NOW) == (
        "Possible connection (unconfirmed): 3 hours ago the user clocked for the whole group "
        '"Team run", and this message mentions "sore". You may ask a confirming question such '
        f'as "Sounds like a hard run — did you end up going?" {CORRECTABLE}'
    )
