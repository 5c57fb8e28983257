"""Temporal awareness through the HTTP endpoint (spec 000 §5–§9): what the upstream is told
as a fake clock moves through minutes, hours and months."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, Scripted

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
ADMIN = "admin-token-0123456789"
AWARENESS_MARKERS = ("Check-in", "Gap:", "Welcome back", "Possible connection", "clocked")


class Conversation:
    """One user in one thread; ``say`` sends a message at the fake clock's now."""

    def __init__(
        self,
        relay: RunningServer,
        upstream: FakeUpstream,
        clock: FakeClock,
        *,
        user: str = "ana",
        thread: str = "t1",
        chat_type: str = "dm",
    ) -> None:
        self.relay, self.upstream, self.clock = relay, upstream, clock
        self.user, self.thread, self.chat_type = user, thread, chat_type

    def as_user(self, user: str) -> Conversation:
        return Conversation(
            self.relay,
            self.upstream,
            self.clock,
            user=user,
            thread=self.thread,
            chat_type=self.chat_type,
        )

    async def say(self, text: str, *, after: timedelta = timedelta(0)) -> dict[str, Any]:
        self.clock.advance(after)
        async with self._posted(text) as response:
            assert response.status == 200, await response.text()
            return dict(await response.json())

    async def post(self, text: str) -> int:
        """Send ``text`` at the fake clock's now; the status the relay answered with."""
        async with self._posted(text) as response:
            return response.status

    @asynccontextmanager
    async def _posted(self, text: str) -> AsyncIterator[aiohttp.ClientResponse]:
        headers = {
            "X-Chronorelay-User": self.user,
            "X-Chronorelay-Thread": self.thread,
            "X-Chronorelay-Chat-Type": self.chat_type,
        }
        body = {"model": "m", "messages": [{"role": "user", "content": text}]}
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"{self.relay.url}/v1/chat/completions", json=body, headers=headers
            ) as response:
                yield response

    async def block_for(self, text: str, *, after: timedelta = timedelta(0)) -> str:
        """Send ``text``; return the relay block the upstream received with it."""
        sent = len(self.upstream.requests)
        await self.say(text, after=after)
        assert len(self.upstream.requests) == sent + 1, "the message was not forwarded"
        content = str(self.upstream.last.body["messages"][-1]["content"])
        return content.split("<relay_context>\n", 1)[1].split("\n</relay_context>")[0]

    async def admin_user(self) -> dict[str, Any]:
        async with aiohttp.ClientSession() as http:
            async with http.get(
                f"{self.relay.url}/admin/users/api:{self.user}",
                headers={"Authorization": f"Bearer {ADMIN}"},
            ) as response:
                assert response.status == 200, await response.text()
                return dict(await response.json())


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
async def talk(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> Conversation:
    relay = await relay_factory(
        fake_clock=clock, server={"api_commands": True}, auth={"admin_token": ADMIN}
    )
    return Conversation(relay, fake_upstream, clock)


def reply_text(reply: dict[str, Any]) -> str:
    return str(reply["choices"][0]["message"]["content"])


# -- the default rules at their boundaries ------------------------------------------------


async def test_project_rule_fires_at_one_day_not_a_minute_before(talk: Conversation) -> None:
    answer = await talk.say("clock: kind project")
    assert "project thread" in reply_text(answer)

    before = await talk.block_for("where were we?", after=timedelta(hours=23, minutes=59))
    assert "Check-in" not in before
    at = await talk.block_for("where were we?", after=timedelta(days=1))
    assert "Check-in (project_gap_1d)" in at
    assert "ask the user for any updates" in at


async def test_project_rule_stays_quiet_in_a_conversation_thread(talk: Conversation) -> None:
    await talk.say("hello")
    block = await talk.block_for("hello again", after=timedelta(days=2))
    assert "Check-in" not in block


async def test_action_rule_fires_at_two_hours_not_a_minute_before(talk: Conversation) -> None:
    await talk.say("heading to the gym now")
    before = await talk.block_for("hey", after=timedelta(hours=1, minutes=59))
    assert "Check-in" not in before

    other = Conversation(talk.relay, talk.upstream, talk.clock, thread="t2")
    await other.say("heading to the gym now")
    at = await other.block_for("hey", after=timedelta(hours=2))
    assert "Check-in (action_gap_2h)" in at
    assert "gym" in at.lower()
    assert "Never state it as fact" in at


async def test_a_pasted_transcript_clocks_no_plan_for_the_user(talk: Conversation) -> None:
    await talk.say("Summarize this transcript:\nBob: I'm heading to the gym\nAlice: ok see you")
    await talk.say("> I'm off to the airport\nwho says that?", after=timedelta(minutes=1))
    assert (await talk.admin_user())["latest_actions"] == []
    block = await talk.block_for("thanks", after=timedelta(hours=3))
    assert "Check-in" not in block and "gym" not in block.lower()
    # A line of the user's own under a header word is theirs.
    await talk.say("Note: I'm off to the gym")
    assert [a["activity"] for a in (await talk.admin_user())["latest_actions"]] == ["gym"]


async def test_off_to_the_airport_is_asked_about_as_a_flight(talk: Conversation) -> None:
    await talk.say("off to the airport!")
    (action,) = (await talk.admin_user())["latest_actions"]
    assert (action["activity"], action["expected_typical_minutes"]) == ("flight", 180)
    block = await talk.block_for("hey", after=timedelta(hours=5))
    assert "Check-in (action_gap_2h)" in block
    assert "did you make your flight okay?" in block


CONFIRM_FIRST = "wait for the user's explicit yes"


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


async def _block_with_tools(talk: Conversation, text: str, tools: list[str]) -> str:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": text}]}
    body["tools"] = [_tool(name) for name in tools]
    headers = {"X-Chronorelay-User": talk.user, "X-Chronorelay-Thread": talk.thread}
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{talk.relay.url}/v1/chat/completions", json=body, headers=headers
        ) as response:
            assert response.status == 200, await response.text()
    return str(talk.upstream.last.body["messages"][-1]["content"])


@pytest.mark.parametrize(
    "text",
    [
        "email Bob the forecast",
        "can you book a table for two at 8?",
        "ok, please delete the old draft",
        "remind me at 5 to call mom",
    ],
)
async def test_confirm_first_when_the_user_asks_for_an_impactful_action(
    talk: Conversation, text: str
) -> None:
    assert CONFIRM_FIRST in await talk.block_for(text)


@pytest.mark.parametrize(
    "text",
    [
        "what's on my schedule today?",
        "I booked my flight last week",
        "heading to the post office",
        "I'll pay rent tomorrow",
        "Summarize this transcript:\nBob: send me the invite\nAlice: will do",
    ],
)
async def test_no_confirm_first_for_a_mere_mention(talk: Conversation, text: str) -> None:
    assert CONFIRM_FIRST not in await talk.block_for(text)


async def test_confirm_first_follows_the_tools_that_can_act(talk: Conversation) -> None:
    assert CONFIRM_FIRST not in await _block_with_tools(talk, "weather?", ["get_weather"])
    assert CONFIRM_FIRST in await _block_with_tools(talk, "hi", ["get_weather", "send_email"])


async def test_long_gap_rule_fires_at_thirty_days_not_a_day_before(talk: Conversation) -> None:
    await talk.say("hello")
    before = await talk.block_for("hi", after=timedelta(days=29))
    assert "long_gap_30d" not in before
    at = await talk.block_for("hi", after=timedelta(days=30))
    assert "Check-in (long_gap_30d)" in at
    assert "recap" in at


# -- latest actions ------------------------------------------------------------------------


async def test_sore_after_the_gym_gets_a_confirming_question(talk: Conversation) -> None:
    await talk.say("I'm heading to the gym")
    block = await talk.block_for("ugh I'm so sore", after=timedelta(hours=3))
    assert "Possible connection (unconfirmed)" in block
    assert "did you end up going to the gym" in block.lower()
    assert "Never state it as fact" in block


async def test_an_action_already_asked_about_is_not_asked_about_again(
    talk: Conversation,
) -> None:
    await talk.say("I'm heading to the gym")
    welcome = await talk.block_for("hi", after=timedelta(hours=3))
    assert "Check-in (action_gap_2h)" in welcome
    # The welcome back already asked about the gym: soreness asks no second time.
    assert "Possible connection" not in await talk.block_for("I'm sore", after=timedelta(minutes=1))


async def test_a_confirming_question_is_asked_once_not_on_every_cue(talk: Conversation) -> None:
    await talk.say("I'm heading to the gym")
    assert "Possible connection" in await talk.block_for("so sore", after=timedelta(minutes=90))
    assert "Possible connection" not in await talk.block_for(
        "still sore though", after=timedelta(minutes=2)
    )
    # Nor is the gym brought up again as a welcome back after the next gap.
    later = await talk.block_for("hey", after=timedelta(hours=2))
    assert "gym" not in later.lower()


@pytest.mark.parametrize("status", [502, 504])
async def test_a_cue_the_upstream_never_heard_is_told_on_the_next_message(
    talk: Conversation, status: int
) -> None:
    await talk.say("I'm heading to the gym")
    # Every attempt fails (the relay tries three times); the client gets the status.
    failure = Scripted(status, {"error": {"message": "bad gateway"}}, {"Retry-After": "0"})
    talk.upstream.failures = [failure] * 3
    talk.clock.advance(timedelta(hours=1))
    assert await talk.post("ugh I'm so sore") == status
    assert "Possible connection" in talk.upstream.last.body["messages"][-1]["content"]

    block = await talk.block_for("so sore, seriously", after=timedelta(minutes=1))
    assert "Possible connection (unconfirmed)" in block
    assert "Possible connection" not in await talk.block_for(
        "still sore", after=timedelta(minutes=1)
    )


async def test_sore_without_an_action_gets_no_inference(talk: Conversation) -> None:
    await talk.say("hello")
    block = await talk.block_for("ugh I'm so sore", after=timedelta(hours=3))
    assert "Possible connection" not in block


async def test_waking_up_after_sleep_gets_a_hedged_welcome_back(talk: Conversation) -> None:
    await talk.say("going to sleep, good night!")
    block = await talk.block_for("morning", after=timedelta(hours=8))
    assert "Welcome back — did you end up getting some sleep?" in block
    assert "not confirmed" in block


async def test_an_expired_action_is_never_referenced(talk: Conversation) -> None:
    await talk.say("heading to the gym")
    block = await talk.block_for("I'm so sore", after=timedelta(hours=25))
    assert "gym" not in block.lower()
    assert "Possible connection" not in block
    user = await talk.admin_user()
    assert [a["status_now"] for a in user["latest_actions"]] == ["expired"]


async def test_an_action_set_for_later_stays_planned_until_its_time(talk: Conversation) -> None:
    # START is Mon 2 Nov 09:00 UTC; "tomorrow at 9" in Berlin is 08:00 UTC at the earliest.
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: call the bank tomorrow at 9")
    before = await talk.block_for("hey there", after=timedelta(hours=3))
    assert "Call the bank" not in before
    assert "likely done" not in before
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["start_iso"] == "2026-11-03T08:00:00+00:00"
    assert stored["status_now"] == "planned"

    talk.clock.set(datetime(2026, 11, 3, 10, 0, tzinfo=UTC))
    # The day it was set for: "tomorrow" would now mean Wednesday, so the label says no
    # time; the start is given as it stands now, and it was planned, not under way.
    after = await talk.block_for("hey again")
    assert 'the user planned: "Call the bank", set for 2 hours ago (likely done by now' in after
    assert "tomorrow" not in after
    listing = reply_text(await talk.say("/actions"))
    assert "1. Call the bank — set for 2 hours ago, likely done" in listing


@pytest.mark.parametrize(
    ("said", "label"),
    [
        ("I'll call the bank tomorrow about the mortgage letter",
         "Call the bank about the mortgage letter"),
        ("I'll email Sam on Monday regarding the invoice", "Email Sam regarding the invoice"),
        ("I'll call the bank tomorrow before work", "Call the bank before work"),
    ],
)  # fmt: skip
async def test_an_actions_label_drops_only_the_time_words(
    talk: Conversation, said: str, label: str
) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say(said)
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == label
    listing = reply_text(await talk.say("/actions", after=timedelta(minutes=1)))
    assert f"1. {label} — " in listing


async def test_a_plan_said_for_tomorrow_is_stored_with_its_start(talk: Conversation) -> None:
    # START is Mon 2 Nov 10:00 in Berlin; "tomorrow at 9" is 08:00 UTC at the earliest.
    await talk.say("/tz Europe/Berlin")
    await talk.say("I'll call the bank tomorrow at 9")
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == "Call the bank"
    assert stored["source"] == "auto"
    assert stored["start_iso"] == "2026-11-03T08:00:00+00:00"
    listing = reply_text(await talk.say("/actions", after=timedelta(hours=2)))
    assert "1. Call the bank — starts in 21 hours, planned" in listing
    # Not asked about before its day, however long the user was away.
    before = await talk.block_for("hey", after=timedelta(hours=3))
    assert "Check-in" not in before and "bank" not in before.lower()

    talk.clock.set(datetime(2026, 11, 3, 11, 0, tzinfo=UTC))
    after = await talk.block_for("hi again")
    assert 'the user planned: "Call the bank", set for 3 hours ago' in after
    assert "tomorrow" not in after


async def test_a_plan_for_a_later_day_without_a_start_is_not_stored(talk: Conversation) -> None:
    # No zone to anchor "tomorrow at 9" in (spec 000 §4.3), and no day at all: nothing
    # to place the action at, so nothing is stored rather than a plan asked about today.
    await talk.say("I'll call the bank tomorrow at 9")
    await talk.say("/tz Europe/Berlin")
    await talk.say("I'll call the bank someday")
    await talk.say("I'll call the bank in 3 months")
    assert (await talk.admin_user())["latest_actions"] == []


async def test_an_obligation_for_a_day_is_stored_as_a_plan(talk: Conversation) -> None:
    # START is Mon 2 Nov 10:00 in Berlin; "tomorrow" is all of Tue 3 Nov there.
    await talk.say("/tz Europe/Berlin")
    await talk.say("I need to book the dentist tomorrow")
    await talk.say("I should call the bank on Friday")
    await talk.say("I need to sleep")
    stored = (await talk.admin_user())["latest_actions"]
    assert [(item["label"], item["status"], item["due_by_iso"]) for item in stored] == [
        ("Book the dentist", "planned", "2026-11-03T23:00:00+00:00"),
        ("Call the bank", "planned", "2026-11-06T23:00:00+00:00"),
    ]


async def test_a_deadline_is_due_by_its_day_not_starting_on_it(talk: Conversation) -> None:
    # START is Mon 2 Nov 10:00 in Berlin; "by Friday" is due when Fri 6 Nov ends there.
    await talk.say("/tz Europe/Berlin")
    await talk.say("I need to finish the report by Friday")
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == "Finish the report"
    assert "start_iso" not in stored
    assert (stored["due_by_iso"], stored["deadline"]) == ("2026-11-06T23:00:00+00:00", "Fri 6 Nov")
    listing = reply_text(await talk.say("/actions", after=timedelta(hours=1)))
    assert "1. Finish the report — due by Fri 6 Nov, planned" in listing
    assert "starts in" not in listing

    # After Friday: looked back on as due, never as something that started.
    talk.clock.set(datetime(2026, 11, 7, 8, 0, tzinfo=UTC))
    after = await talk.block_for("hi again")
    assert '"Finish the report", due by Fri 6 Nov, which passed 9 hours ago' in after
    listing = reply_text(await talk.say("/actions"))
    assert "1. Finish the report — was due by Fri 6 Nov, likely done" in listing


@pytest.mark.parametrize(
    ("message", "due_by", "deadline"),
    [
        # START is Mon 2 Nov 10:00 in Berlin (UTC+01:00).
        ("I have to send the report by Friday", "2026-11-06T23:00:00+00:00", "Fri 6 Nov"),
        # Before Friday: done by the time Friday begins, so due when Thursday ends.
        ("I have to send the report before Friday", "2026-11-05T23:00:00+00:00", "Thu 5 Nov"),
        ("I have to send the report no later than Friday", "2026-11-06T23:00:00+00:00",
         "Fri 6 Nov"),
        ("I have to send the report Friday at the latest", "2026-11-06T23:00:00+00:00",
         "Fri 6 Nov"),
        ("I have to send the report by the end of the week", "2026-11-08T23:00:00+00:00",
         "Sun 8 Nov"),
        ("I have to send the report by the end of the work week", "2026-11-06T23:00:00+00:00",
         "Fri 6 Nov"),
        ("I have to send the report by end of day", "2026-11-02T22:59:00+00:00",
         "Mon 2 Nov 23:59"),
        ("I have to send the report by EOD", "2026-11-02T22:59:00+00:00", "Mon 2 Nov 23:59"),
        ("I have to send the report by tomorrow noon", "2026-11-03T11:00:00+00:00",
         "Tue 3 Nov 12:00"),
        ("I have to send the report before 5pm", "2026-11-02T16:00:00+00:00",
         "Mon 2 Nov 17:00"),
    ],
)  # fmt: skip
async def test_deadline_words_make_a_deadline(
    talk: Conversation, message: str, due_by: str, deadline: str
) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say(message)
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == "Send the report"
    assert "start_iso" not in stored
    assert (stored["due_by_iso"], stored["deadline"]) == (due_by, deadline)
    listing = reply_text(await talk.say("/actions", after=timedelta(minutes=1)))
    assert f"1. Send the report — due by {deadline}, planned" in listing


@pytest.mark.parametrize(
    ("message", "due_by", "deadline"),
    [
        ("I need to pay the rent by Friday UTC+5:30", "2026-11-06T18:30:00+00:00", "Fri 6 Nov"),
        ("I need to pay the rent by Friday 17:00 UTC-3", "2026-11-06T20:00:00+00:00",
         "Fri 6 Nov 17:00"),
    ],
)  # fmt: skip
async def test_a_deadline_in_a_fixed_offset_reads_like_a_named_zones(
    talk: Conversation, message: str, due_by: str, deadline: str
) -> None:
    await talk.say(message)
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == "Pay the rent"
    assert (stored["due_by_iso"], stored["deadline"]) == (due_by, deadline)
    listing = reply_text(await talk.say("/actions", after=timedelta(minutes=1)))
    assert f"1. Pay the rent — due by {deadline}, planned" in listing


async def test_a_plan_for_a_day_with_no_time_is_open_all_that_day(talk: Conversation) -> None:
    # START is Mon 2 Nov 10:00 in Berlin; "tomorrow" is all of Tue 3 Nov there.
    await talk.say("/tz Europe/Berlin")
    await talk.say("I'll go to the gym tomorrow")
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == "Go to the gym"
    assert stored["due_by_iso"] == "2026-11-03T23:00:00+00:00"
    # Looked back on for the default day after its day, not from its midnight.
    assert stored["expires_iso"] == "2026-11-04T23:00:00+00:00"

    # 09:00 on the day: nobody has been to the gym "by now", but the day has come and the
    # user is back after a night (spec 000 §9): the plan may be looked ahead to, hedged.
    talk.clock.set(datetime(2026, 11, 3, 8, 0, tzinfo=UTC))
    morning = await talk.block_for("morning!")
    assert "likely done" not in morning and "how did" not in morning
    assert (
        'the user planned: "Go to the gym", set for a day (no time given) that ends in '
        "15 hours (planned, not confirmed). If it fits, mention it in a hedged way, e.g. "
        '"Welcome back — are you still planning to go to the gym?"'
    ) in morning
    listing = reply_text(await talk.say("/actions"))
    assert "1. Go to the gym — any time in the next 15 hours, planned" in listing
    evening = await talk.block_for("hey", after=timedelta(hours=12))
    assert "gym" not in evening.lower()

    # The next morning the day is over: now it may be asked about, hedged.
    talk.clock.set(datetime(2026, 11, 4, 8, 0, tzinfo=UTC))
    after = await talk.block_for("hi again")
    assert (
        'the user planned: "Go to the gym", set for a day (no time given) that ended '
        "9 hours ago (likely done by now, not confirmed)" in after
    )
    listing = reply_text(await talk.say("/actions"))
    assert "1. Go to the gym — set for a day that ended 9 hours ago, likely done" in listing


async def test_a_plan_for_today_with_no_time_is_not_likely_done_by_noon(
    talk: Conversation,
) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say("I'll go to the gym today")
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["due_by_iso"] == "2026-11-02T23:00:00+00:00"
    noon = await talk.block_for("hey", after=timedelta(hours=3))
    assert "gym" not in noon.lower()
    listing = reply_text(await talk.say("/actions"))
    assert "1. Go to the gym — any time in the next 11 hours, planned" in listing


async def test_saying_a_plan_is_done_closes_it_and_it_is_not_brought_up_again(
    talk: Conversation,
) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say("I'll call the bank tomorrow at 9")
    await talk.say("gonna finish the report tonight", after=timedelta(minutes=1))
    # Questions, "not yet" and a try close nothing.
    for text in (
        "is the bank call done?",
        "not done with the report yet",
        "called the bank but no answer",
    ):
        block = await talk.block_for(text, after=timedelta(minutes=1))
        assert "The user says they are done" not in block, text
    assert len(reply_text(await talk.say("/actions")).splitlines()) == 4

    talk.clock.set(datetime(2026, 11, 3, 10, 0, tzinfo=UTC))
    done = await talk.block_for("ok the bank call is done")
    assert 'The user says they are done with: "Call the bank"' in done
    # The welcome back after the night mentions the open report, not the closed call.
    [checkin] = [line for line in done.splitlines() if line.startswith("Check-in")]
    assert '"Finish the report"' in checkin and "bank" not in checkin.lower()
    listing = reply_text(await talk.say("/actions"))
    assert "bank" not in listing and "2. Finish the report" in listing
    back = await talk.block_for("hey", after=timedelta(hours=3))
    assert "bank" not in back.lower()
    assert "Report" not in await talk.block_for("done with the report", after=timedelta(hours=1))
    assert "no open actions" in reply_text(await talk.say("/actions"))
    statuses = {a["label"]: a["status"] for a in (await talk.admin_user())["latest_actions"]}
    assert statuses == {"Call the bank": "done", "Finish the report": "done"}


async def test_an_action_at_a_bare_hour_starts_at_its_next_occurrence(
    talk: Conversation,
) -> None:
    # START is Mon 2 Nov 10:00 in Berlin: 07:00 has passed, so "at 7" is 19:00 today,
    # as the block says.
    await talk.say("/tz Europe/Berlin")
    block = await talk.block_for("I'm going to call mum at 7")
    assert 'Times in this message: "at 7" = 2026-11-02T19:00:00+01:00 (Europe/Berlin).' in block
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["label"] == "Call mum"
    assert stored["start_iso"] == "2026-11-02T18:00:00+00:00"


async def test_an_appointment_days_ahead_outlives_the_default_ttl(talk: Conversation) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: dentist appointment next Friday at 3pm")
    listing = reply_text(await talk.say("/actions", after=timedelta(days=2)))
    assert "1. Dentist appointment — starts in 2 days 5 hours, planned" in listing
    [stored] = (await talk.admin_user())["latest_actions"]
    # Fri 6 Nov 15:00 Berlin, open for the default day from then.
    assert stored["start_iso"] == "2026-11-06T14:00:00+00:00"
    assert stored["expires_iso"] == "2026-11-07T14:00:00+00:00"


async def test_a_clocked_activity_naming_a_later_day_is_a_plan_for_then(
    talk: Conversation,
) -> None:
    # Mon 2 Nov, 10:00 in Berlin. A bare activity ("gym") is under way now; one whose
    # words name a later day or time is planned for then, and kept until after it.
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: standup notes tomorrow")
    await talk.say("clock: call mom friday 6pm")
    await talk.say("clock it: gym")
    listing = reply_text(await talk.say("/actions"))
    assert "1. Standup notes — starts in 14 hours, planned" in listing
    assert "2. Call mom — starts in 4 days 8 hours, planned" in listing
    assert "3. Gym — just now, in progress" in listing

    # Tuesday, the standup's day: looked ahead to, never as done.
    block = await talk.block_for("morning", after=timedelta(days=1))
    assert 'the user planned: "Standup notes", set for a day (no time given)' in block
    listing = reply_text(await talk.say("/actions"))
    assert "1. Standup notes — any time in the next 14 hours, planned" in listing
    assert "2. Call mom — starts in 3 days 8 hours, planned" in listing
    assert "Gym" not in listing

    # Friday 18:05 in Berlin: the call has just begun.
    talk.clock.set(datetime(2026, 11, 6, 17, 5, tzinfo=UTC))
    block = await talk.block_for("hi")
    assert 'the user planned: "Call mom", set for 5 minutes ago' in block
    listing = reply_text(await talk.say("/actions"))
    assert "2. Call mom — set for 5 minutes ago, planned" in listing
    assert "Standup" not in listing


async def test_due_and_a_day_is_a_deadline_and_due_leaves_the_label(talk: Conversation) -> None:
    # Mon 2 Nov, 10:00 in Berlin: "due tomorrow" is due when Tuesday ends, as "by" is.
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: standup notes due tomorrow")
    listing = reply_text(await talk.say("/actions"))
    assert "1. Standup notes — due by Tue 3 Nov, planned" in listing
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["due_by_iso"] == "2026-11-03T23:00:00+00:00"
    assert stored.get("start_iso") is None

    # Wednesday: the deadline has passed, and the question reads as the user meant it.
    block = await talk.block_for("morning", after=timedelta(days=2))
    assert '"Standup notes", due by Tue 3 Nov, which passed' in block
    assert "notes due" not in block


async def test_a_deadline_is_looked_ahead_to_on_its_day_and_back_on_after(
    talk: Conversation,
) -> None:
    # Mon 2 Nov, 10:00 in Berlin: due when Tuesday ends there (23:00 UTC).
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: standup notes due tomorrow")
    # Monday evening: not its day yet.
    block = await talk.block_for("hey", after=timedelta(hours=10))
    assert "Standup notes" not in block
    # Tuesday morning in Berlin: its day, looked ahead to once.
    talk.clock.set(datetime(2026, 11, 3, 7, 30, tzinfo=UTC))
    block = await talk.block_for("morning")
    assert "Check-in (action_gap_2h)" in block
    assert "are you still planning to" in block and "standup notes" in block.lower()
    block = await talk.block_for("hi again", after=timedelta(hours=3))
    assert "Standup notes" not in block
    # Wednesday: looked back on.
    talk.clock.set(datetime(2026, 11, 4, 8, 0, tzinfo=UTC))
    block = await talk.block_for("morning")
    assert '"Standup notes", due by Tue 3 Nov, which passed' in block


async def test_a_deadline_at_a_time_is_looked_ahead_to_hours_before(talk: Conversation) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: send the invoice by 17:00 tomorrow")
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["due_by_iso"] == "2026-11-03T16:00:00+00:00", stored
    talk.clock.set(datetime(2026, 11, 3, 3, 0, tzinfo=UTC))
    assert "invoice" not in await talk.block_for("up early")
    talk.clock.set(datetime(2026, 11, 3, 6, 0, tzinfo=UTC))
    assert "are you still planning to" in await talk.block_for("morning")


async def test_the_acknowledgement_says_when_a_clocked_plan_is_for(talk: Conversation) -> None:
    # Mon 2 Nov, 10:00 in Berlin; days and times as the user's zone shows them.
    await talk.say("/tz Europe/Berlin")
    block = await talk.block_for("clock it: gym tomorrow")
    assert 'clocked an action: "Gym" (usually takes about 2 hours), for tomorrow, Tue 3 Nov.' in (
        block
    )
    block = await talk.block_for("clock it: call mom friday 6pm")
    assert '"Call mom" (usually takes about 20 minutes), starting Fri 6 Nov 18:00.' in block
    block = await talk.block_for("clock it: report due friday")
    assert 'clocked an action: "Report", due by Fri 6 Nov.' in block
    block = await talk.block_for("clock it: nap now")
    assert 'clocked an action: "Nap" (usually takes about 30 minutes). Acknowledge' in block


async def test_a_clocked_plan_beyond_max_ttl_is_refused_not_kept(talk: Conversation) -> None:
    # It would expire before it begins (max_ttl is 30 days): the user is told, not misled.
    await talk.say("/tz Europe/Berlin")
    answer = reply_text(await talk.say("clock it: dentist appointment in 3 months"))
    assert answer == (
        'Not clocked: "Dentist appointment", starting Tue 2 Feb 10:00, is further ahead than '
        "this relay keeps plans (30 days: max_ttl in [clock.store.latest_actions]), so it "
        "would be dropped before then. Clock it again nearer the time, or ask the relay's "
        "admin to raise max_ttl."
    )
    assert (await talk.admin_user())["latest_actions"] == []
    # Within max_ttl it is kept.
    await talk.say("clock it: dentist appointment in 3 weeks")
    [kept] = (await talk.admin_user())["latest_actions"]
    assert kept["start_iso"] == "2026-11-23T09:00:00+00:00"


async def test_explicit_clock_it_wins_over_the_automatic_action(talk: Conversation) -> None:
    await talk.say("heading to the gym")
    block = await talk.block_for("clock it: gym with Sam, leg day", after=timedelta(minutes=2))
    assert "The user clocked an action" in block
    actions = (await talk.admin_user())["latest_actions"]
    open_gym = [a for a in actions if a["status_now"] != "canceled" and a.get("activity") == "gym"]
    assert len(open_gym) == 1
    assert open_gym[0]["source"] == "clock_it"


async def test_saying_how_long_it_took_calibrates_the_next_estimate(talk: Conversation) -> None:
    await talk.say("heading to the gym")
    default_minutes = (await talk.admin_user())["latest_actions"][0]["expected_typical_minutes"]
    await talk.say("the gym took 3 hours today", after=timedelta(hours=4))
    user = await talk.admin_user()
    assert user["calibration"]["activity_overrides"]["gym"]["typical_minutes"] == 180
    assert default_minutes < 180

    await talk.say("heading to the gym again", after=timedelta(days=1))
    newest = max((await talk.admin_user())["latest_actions"], key=lambda a: str(a["recorded_iso"]))
    assert newest["expected_typical_minutes"] == 180
    # Past the template's typical time but inside the calibrated one: still under way.
    block = await talk.block_for("hey", after=timedelta(minutes=default_minutes + 30))
    assert "under way" in block
    assert "likely done" not in block


async def test_a_group_member_never_sees_another_members_action(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock)
    ana = Conversation(relay, fake_upstream, clock, thread="g1", chat_type="group")
    bob = ana.as_user("bob")
    await ana.say("heading to the gym")
    await bob.say("anyone around?", after=timedelta(minutes=5))

    bobs = await bob.block_for("I'm so sore, long day", after=timedelta(hours=3))
    assert "gym" not in bobs.lower()
    assert "Possible connection" not in bobs
    anas = await ana.block_for("I'm so sore", after=timedelta(minutes=1))
    assert "did you end up going to the gym" in anas.lower()


async def test_in_a_group_the_action_rule_measures_the_speakers_own_return(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock)
    ana = Conversation(relay, fake_upstream, clock, thread="g1", chat_type="group")
    bob = ana.as_user("bob")
    await ana.say("heading to the gym")
    # The group goes on without Ana; Bob spoke five minutes before she comes back.
    for _ in range(5):
        await bob.say("anyone around?", after=timedelta(minutes=35))
    back = await ana.block_for("hi all", after=timedelta(minutes=5))
    assert "Check-in (action_gap_2h)" in back
    assert "gym" in back.lower()

    # Ana spoke ten minutes ago: however quiet the thread was, she has not been away.
    await ana.say("heading to the gym again", after=timedelta(days=1))
    await bob.say("ok", after=timedelta(hours=2))
    await ana.say("quick question", after=timedelta(minutes=1))
    again = await ana.block_for("and another", after=timedelta(minutes=10))
    assert "Check-in" not in again


async def test_a_command_is_no_return_of_the_group_member_who_sent_it(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, server={"api_commands": True})
    ana = Conversation(relay, fake_upstream, clock, thread="g1", chat_type="group")
    bob = ana.as_user("bob")
    await ana.say("heading to the gym")
    for _ in range(5):
        await bob.say("anyone around?", after=timedelta(minutes=35))
    # Ana's first message back is a command the relay answers: she has not spoken yet.
    assert reply_text(await ana.say("/time", after=timedelta(minutes=4))).startswith("It's ")
    back = await ana.block_for("hi all", after=timedelta(minutes=1))
    assert "Check-in (action_gap_2h)" in back, back
    assert "gym" in back.lower()


async def test_an_api_group_action_never_reaches_the_users_dm(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock)
    group = Conversation(relay, fake_upstream, clock, thread="g1", chat_type="group")
    dm = Conversation(relay, fake_upstream, clock, thread="d1")
    await group.say("heading to the gym")
    await dm.say("hello")
    block = await dm.block_for("hey", after=timedelta(hours=3))
    assert "gym" not in block.lower()
    assert "Check-in" not in block
    await dm.say("I'm back")  # closes nothing said in the group
    anas = await group.block_for("I'm so sore", after=timedelta(minutes=1))
    assert "did you end up going to the gym" in anas.lower()


async def test_actions_in_a_group_say_they_are_the_groups_only(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, server={"api_commands": True})
    dm = Conversation(relay, fake_upstream, clock, thread="d1")
    group = Conversation(relay, fake_upstream, clock, thread="g1", chat_type="group")
    await dm.say("heading to the doctor, clock it")
    # Her private action is not shown to the group, and the group is not told she has none.
    empty = reply_text(await group.say("/actions", after=timedelta(minutes=5)))
    assert "Doctor" not in empty and "doctor" not in empty
    assert empty.startswith(
        "You have no open actions from this group (the ones from your private chats are "
        "listed only there)."
    )
    await group.say("heading to the gym")
    listing = reply_text(await group.say("/actions"))
    assert listing.startswith("Your open actions from this group:\n")
    assert "doctor" not in listing.lower()
    assert reply_text(await dm.say("/actions")).startswith("Your open actions:\n")


async def test_five_minute_gaps_get_no_check_in_text_at_all(talk: Conversation) -> None:
    await talk.say("let's plan the trip")
    for turn in range(12):
        block = await talk.block_for(f"next idea {turn}", after=timedelta(minutes=5))
        for marker in AWARENESS_MARKERS:
            assert marker not in block, (turn, marker, block)


async def test_actions_command_lists_and_closes(talk: Conversation) -> None:
    await talk.say("heading to the gym")
    listing = reply_text(await talk.say("/actions", after=timedelta(minutes=30)))
    assert "1. Go to the gym" in listing or "1. " in listing
    assert "30 minutes ago" in listing
    done = reply_text(await talk.say("/actions done 1"))
    assert "as done" in done
    assert "no open actions" in reply_text(await talk.say("/actions"))
    # A closed action no longer supports check-ins.
    block = await talk.block_for("hey", after=timedelta(hours=3))
    assert "Check-in" not in block


async def test_actions_numbers_stay_as_listed_after_one_is_closed(talk: Conversation) -> None:
    await talk.say("clock it: call the bank")
    await talk.say("clock it: water the plants", after=timedelta(minutes=1))
    await talk.say("clock it: pay rent", after=timedelta(minutes=1))
    listing = reply_text(await talk.say("/actions"))
    assert "1. Call the bank" in listing and "2. Water the plants" in listing
    assert "3. Pay rent" in listing
    # The user works down the list they were shown: 2 is still the plants.
    assert "Call the bank" in reply_text(await talk.say("/actions done 1"))
    assert "Water the plants" in reply_text(await talk.say("/actions done 2"))
    listing = reply_text(await talk.say("/actions"))
    assert "3. Pay rent" in listing and "Water" not in listing and "bank" not in listing


@pytest.mark.parametrize(
    ("plan", "put_off", "listed"),
    [
        (
            "finish the quarterly report tomorrow",
            "we postponed the quarterly report until next wednesday",
            "1. Finish the quarterly report — starts in 1 day 14 hours, planned",
        ),
        (
            "finish the quarterly report tomorrow",
            "the quarterly report is put off until next wednesday",
            "1. Finish the quarterly report — starts in 1 day 14 hours, planned",
        ),
        (
            "finish the quarterly report tomorrow",
            "let's push the report to next week",
            "1. Finish the quarterly report — starts in 6 days 14 hours, planned",
        ),
        ("dentist tomorrow at 10", "moving the dentist to friday", "1. Dentist — starts in 3 days"),
        (
            "call the bank at 2pm",
            "rescheduled the call to 3pm",
            "1. Call the bank — starts in 5 hours",
        ),
        ("standup at 11am", "the standup is delayed by an hour", "1. Standup — starts in 2 hours"),
    ],
)
async def test_a_plan_put_off_in_other_words_moves_to_its_new_time(
    talk: Conversation, plan: str, put_off: str, listed: str
) -> None:
    # Mon 2 Nov, 10:00 in Berlin. Only "can't … until" was read as putting a plan off.
    await talk.say("/tz Europe/Berlin")
    await talk.say(f"clock it: {plan}")
    block = await talk.block_for(put_off)
    assert "The user is putting off, not calling off:" in block
    listing = reply_text(await talk.say("/actions"))
    assert listed in listing


async def test_moving_one_of_two_calls_moves_the_one_it_names(talk: Conversation) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: call the bank at 2pm")
    await talk.say("clock it: call mom at 2pm")
    await talk.say("pushed the bank call to 4pm")
    listing = reply_text(await talk.say("/actions"))
    assert "1. Call the bank — starts in 6 hours, planned" in listing
    assert "2. Call mom — starts in 4 hours, planned" in listing


async def test_a_plan_only_thought_of_being_put_off_stays_when_it_was(talk: Conversation) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say("clock it: finish the quarterly report tomorrow")
    for maybe in ("we might postpone the report", "moving the report to the shared drive"):
        assert "putting off" not in await talk.block_for(maybe)
    listing = reply_text(await talk.say("/actions"))
    assert "1. Finish the quarterly report — starts in 14 hours, planned" in listing


@pytest.mark.parametrize(
    ("said", "listed", "activity"),
    [
        (
            "I have a doctor appointment at 3",
            "1. Doctor appointment — starts in 5 hours, planned",
            "appointment",
        ),
        ("got the dentist at 4", "1. Dentist — ", "appointment"),
        ("doing the school run", "1. Do the school run — just now, in progress", "school_run"),
        ("on the school run", "1. School run — just now, in progress", "school_run"),
        ("flying to Lisbon tomorrow morning", "1. Fly to Lisbon — starts in 23 hours", "flight"),
        ("my flight is at 6am", "1. Flight — starts in 20 hours, planned", "flight"),
    ],
)
async def test_appointments_school_runs_and_flights_are_clocked_as_such(
    talk: Conversation, said: str, listed: str, activity: str
) -> None:
    # Mon 2 Nov, 10:00 in Berlin.
    await talk.say("/tz Europe/Berlin")
    await talk.say(said)
    assert listed in reply_text(await talk.say("/actions"))
    [stored] = (await talk.admin_user())["latest_actions"]
    assert stored["activity"] == activity


@pytest.mark.parametrize(
    "said",
    [
        "book a doctor's appointment",
        "need to book the dentist",
        "I need to book a doctor's appointment tomorrow",
        "I had a doctor appointment yesterday",
        "the school run was chaos",
        "I have a question at 3",
    ],
)
async def test_booking_a_visit_or_one_that_is_over_is_no_appointment(
    talk: Conversation, said: str
) -> None:
    await talk.say("/tz Europe/Berlin")
    await talk.say(said)
    stored = (await talk.admin_user())["latest_actions"]
    assert all(action.get("activity") is None for action in stored), stored


@pytest.mark.parametrize(
    ("plan", "later", "after", "cue", "question"),
    [
        (
            "my flight is at 6am",
            "just landed!",
            timedelta(days=1),
            '"Flight", set for 4 hours ago, and this message mentions "just landed"',
            "Was that the flight? Did it go okay?",
        ),
        (
            "I have a doctor appointment at 3",
            "ugh, still numb from the filling",
            timedelta(hours=7),
            'mentions "numb"',
            "Was that from the appointment? How did it go?",
        ),
        (
            "doing the school run",
            "phew, the school gates were packed",
            timedelta(minutes=40),
            'mentions "school gates"',
            "Was that the school run? Did it go okay?",
        ),
    ],
)
async def test_a_later_cue_word_asks_about_the_flight_appointment_or_school_run(
    talk: Conversation, plan: str, later: str, after: timedelta, cue: str, question: str
) -> None:
    # Mon 2 Nov, 10:00 in Berlin.
    await talk.say("/tz Europe/Berlin")
    await talk.say(plan)
    block = await talk.block_for(later, after=after)
    assert "Possible connection (unconfirmed)" in block
    assert cue in block
    assert f'a confirming question such as "{question}"' in block


# -- policy and overrides ----------------------------------------------------------------


async def test_clock_off_silences_check_ins_for_that_user(talk: Conversation) -> None:
    answer = reply_text(await talk.say("clock: off"))
    assert "Clock mode is now off" in answer
    block = await talk.block_for("back", after=timedelta(days=40))
    assert "Check-in" not in block
    assert "Now:" in block  # the Core Clock line stays
    assert "Clock mode is back" in reply_text(await talk.say("clock: on"))
    assert "Check-in (long_gap_30d)" in await talk.block_for("hi", after=timedelta(days=31))


async def test_normal_mode_set_by_an_admin_recaps_after_a_day(talk: Conversation) -> None:
    await talk.say("hello")
    async with aiohttp.ClientSession() as http:
        async with http.put(
            f"{talk.relay.url}/admin/users/api:ana/policy",
            json={"mode": "normal"},
            headers={"Authorization": f"Bearer {ADMIN}"},
        ) as response:
            assert response.status == 200
            assert (await response.json())["policy_overrides"] == {"mode": "normal"}
        async with http.put(
            f"{talk.relay.url}/admin/users/api:ana/policy",
            json={"mode": "loud"},
            headers={"Authorization": f"Bearer {ADMIN}"},
        ) as response:
            assert response.status == 400
            assert "mode" in (await response.json())["error"]["message"]
    block = await talk.block_for("hi", after=timedelta(days=1))
    assert "Check-in (normal_gap_1d)" in block


async def test_an_invalid_directive_is_answered_with_what_to_write(talk: Conversation) -> None:
    answer = reply_text(await talk.say("clock: kind banana"))
    assert "banana" in answer
    assert "project" in answer


async def test_a_directive_on_a_channel_without_commands_reaches_the_model(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock)
    talk = Conversation(relay, fake_upstream, clock)
    block = await talk.block_for("clock: kind project")
    assert "Relay note for the user" in block
    assert "project thread" in block
    assert "Check-in (project_gap_1d)" in await talk.block_for("hi", after=timedelta(days=1))


async def test_preview_shows_the_check_in_without_storing_anything(talk: Conversation) -> None:
    await talk.say("going to sleep")
    later = (START + timedelta(hours=9)).isoformat()
    async with aiohttp.ClientSession() as http:
        for _ in range(2):
            async with http.post(
                f"{talk.relay.url}/admin/threads/agent:main:api:t1/preview",
                json={"text": "morning!", "user_key": "api:ana", "received_at": later},
                headers={"Authorization": f"Bearer {ADMIN}"},
            ) as response:
                assert response.status == 200, await response.text()
                preview = await response.json()
            assert preview["checkins_fired"] == ["action_gap_2h"]
            assert "did you end up getting some sleep?" in preview["block"]
    # What preview showed is what the upstream gets.
    block = await talk.block_for("morning!", after=timedelta(hours=9))
    assert block in preview["block"]


async def test_an_action_is_mentioned_once_not_on_every_return(talk: Conversation) -> None:
    await talk.say("going to sleep")
    assert "getting some sleep" in await talk.block_for("morning", after=timedelta(hours=8))
    again = await talk.block_for("what's on today?", after=timedelta(hours=3))
    assert "sleep" not in again.lower()
    assert "Check-in" not in again


async def thread_kind(talk: Conversation) -> str:
    async with aiohttp.ClientSession() as http:
        async with http.get(
            f"{talk.relay.url}/admin/threads/agent:main:api:{talk.thread}/clock",
            headers={"Authorization": f"Bearer {ADMIN}"},
        ) as response:
            return str((await response.json())["kind"])


async def test_scheduling_is_inferred_only_when_confident_and_never_over_a_choice(
    talk: Conversation,
) -> None:
    await talk.say("what do you think about tomorrow?")
    assert await thread_kind(talk) == "conversation"
    await talk.say("can we schedule a meeting for tomorrow at 3pm?")
    assert await thread_kind(talk) == "scheduling"

    chosen = Conversation(talk.relay, talk.upstream, talk.clock, thread="t9")
    await chosen.say("clock: kind project")
    await chosen.say("can we schedule a meeting for tomorrow at 3pm?")
    assert await thread_kind(chosen) == "project"
