"""``/forget``: the confirmation step, and nothing left in any table about the user."""

from __future__ import annotations

import re
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream
from tests.proxy.test_clock_http import block
from tests.proxy.test_clock_http import chat as send
from tests.proxy.test_continuity_http import MONDAY, Person, admin, make_relay

ME = "telegram:42"
MARK = "zebracorn"  # in every message the forgotten user writes


@pytest.fixture
async def relay(relay_factory: RelayFactory) -> RunningServer:
    # This test reads and writes the file behind the relay's back, from the event loop's
    # own thread: it needs each turn committed when the turn ends, not a moment later (a
    # blocking write here would hold up the very loop that is to commit).
    return await relay_factory(server={"api_commands": True}, store={"commit_delay_ms": 0})


async def say(
    relay: RunningServer,
    text: str,
    at: str,
    who: str = ME,
    *,
    thread: str | None = None,
    group: bool = False,
) -> str:
    channel, _, user = who.partition(":")
    reply = await send(
        relay,
        text,
        at=at,
        channel=channel,
        user=user,
        thread=thread,
        chat_type="group" if group else "dm",
        name=f"Name of {user}",
    )
    return str(reply["choices"][0]["message"]["content"])


def rows_mentioning(db: Path, *needles: str) -> dict[str, int]:
    """For every table in the file, how many rows hold one of ``needles`` in a text value."""
    found: dict[str, int] = {}
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                if any(isinstance(v, str) and any(n in v for n in needles) for v in row):
                    found[table] = found.get(table, 0) + 1
    return found


def count(db: Path, sql: str, *params: object) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(sql, params).fetchone()[0])


def continuity_rows(
    db: Path, user_key: str, dm_thread: str, group_thread: str, held_in: str
) -> None:
    """Continuity rows for the user, as the continuity service would leave them: a named
    context and their DM's default one, sessions, log entries, a rollup, memory, a job mark,
    and a tool call held for them in ``held_in``."""
    at = "2026-11-21T08:00:00.000000+00:00"
    named, default = f"ctx-{user_key}", f"wc:{dm_thread}"
    with sqlite3.connect(db) as conn:
        for context, is_named in ((named, 1), (default, 0)):
            conn.execute(
                "INSERT OR IGNORE INTO work_contexts (work_context_id, owner_key, name, "
                "name_folded, named, created_at, last_active_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (context, user_key, f"work of {user_key}", context.lower(), is_named, at, at),
            )
        for session, thread, context in (
            (f"s1-{user_key}", dm_thread, default),
            (f"s2-{user_key}", group_thread, f"wc:{group_thread}"),
        ):
            conn.execute(
                "INSERT INTO sessions (session_id, thread_key, work_context_id, user_key, "
                "started_at, first_message_id, summary) VALUES (?, ?, ?, ?, ?, 1, ?)",
                (session, thread, context, user_key, at, f"talked about {user_key}'s plans"),
            )
            conn.execute(
                "INSERT INTO continuity_entries (entry_id, work_context_id, entry_type, "
                "source_session_id, captured_at, capture_mode, content, decay_at) "
                "VALUES (?, ?, 'open_question', ?, ?, 'deterministic', ?, ?)",
                (f"e-{session}", context, session, at, f'{{"q": "{user_key}?"}}', at),
            )
        conn.execute(
            "INSERT INTO rollup_segments VALUES (?, ?, ?, ?, ?)",
            (user_key, named, f"{user_key} worked on things", at, at),
        )
        conn.execute(
            "INSERT INTO memory_facts (user_key, kind, text, text_folded, source, created_at) "
            "VALUES (?, 'fact', ?, ?, 'user', ?)",
            (user_key, f"{user_key} likes tea", f"{user_key} likes tea", at),
        )
        conn.execute("INSERT INTO job_marks VALUES ('nightly', ?, '2026-11-21', ?)", (user_key, at))
        conn.execute(
            """INSERT INTO held_tool_calls VALUES (?, ?, '{}', '["send_email"]', 'm', ?, ?)""",
            (held_in, user_key, at, at),
        )


def thread_of(db: Path, user_key: str, chat_type: str) -> str:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT t.thread_key FROM threads AS t JOIN thread_participants AS p "
            "USING (thread_key) WHERE p.user_key = ? AND t.chat_type = ?",
            (user_key, chat_type),
        ).fetchone()
    return str(row[0])


async def test_forget_asks_first_then_leaves_nothing_behind(
    relay: RunningServer, tmp_path: Path
) -> None:
    db = tmp_path / "relay.sqlite3"
    other, linked = "telegram:43", "discord:44"
    # The user in their DM and in a group with someone else; their linked account.
    await say(relay, f"clock it: {MARK} walk with the dog", "2026-11-21T08:00:00Z")
    await say(relay, "/tz Europe/Paris", "2026-11-21T08:01:00Z")
    await say(relay, f"hello {MARK} group", "2026-11-21T08:02:00Z", thread="g1", group=True)
    await say(relay, "hello group", "2026-11-21T08:03:00Z", other, thread="g1", group=True)
    await say(relay, "clock it: reading", "2026-11-21T08:03:30Z", other)
    await say(relay, "hi", "2026-11-21T08:04:00Z", linked)
    await say(relay, "clock it: cooking", "2026-11-21T08:04:30Z", linked)
    offer = await say(relay, f"/link {MARK}", "2026-11-21T08:05:00Z")
    offer = await say(relay, "/link", "2026-11-21T08:05:00Z")
    code = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert code, offer
    assert "Linked:" in await say(relay, f"/link {code.group(1)}", "2026-11-21T08:06:00Z", linked)
    await say(relay, "/link", "2026-11-21T08:07:00Z")  # a live code of theirs
    mine_dm, group = thread_of(db, ME, "dm"), thread_of(db, ME, "group")
    # Held where the user does not speak again before forgetting: any next message of
    # theirs in the thread would answer (and so drop) it.
    continuity_rows(db, ME, mine_dm, group, held_in=thread_of(db, linked, "dm"))
    continuity_rows(
        db, other, thread_of(db, other, "dm"), group, held_in=thread_of(db, other, "dm")
    )
    before = rows_mentioning(db, ME, MARK)
    for table in ("users", "messages", "thread_participants", "link_codes", "persons"):
        assert table in before, (table, before)
    kept_before = rows_mentioning(db, other)

    preview = await say(relay, "/forget", "2026-11-21T09:00:00Z")
    assert f"This deletes everything I store about you ({ME}):" in preview
    assert "1 private conversation (whole)" in preview and "1 clocked action" in preview
    assert "send /forget confirm here within 10 minutes" in preview
    assert rows_mentioning(db, ME, MARK) != {}  # nothing deleted yet

    late = await say(relay, "/forget confirm", "2026-11-21T09:11:00Z")
    assert late.startswith("Send /forget first")
    assert "private conversation" in await say(relay, "/forget", "2026-11-21T09:12:00Z")
    elsewhere = await say(relay, "/forget confirm", "2026-11-21T09:13:00Z", thread="g1", group=True)
    assert elsewhere.startswith("Send /forget first")  # the request was made in the DM

    done = await say(relay, "/forget confirm", "2026-11-21T09:14:00Z")
    assert done.startswith(f"Done. I deleted everything I stored about you ({ME}):")
    for said in (
        "1 private conversation (whole)",
        "1 clocked action",
        "work contexts",
        "sessions",
        "continuity notes",
        "1 remembered fact",
        "1 held tool call",
        "1 link code",
        "the link to discord:44",
    ):
        assert said in done, said

    # Every table, including any added later: no row names the user or holds their words,
    # but for their count of wrong link codes (``/link zebracorn``), kept for its window.
    assert "cannot reset the limit on guessing codes" in done
    assert rows_mentioning(db, ME, MARK, mine_dm) == {"link_code_misses": 1}
    # The others keep theirs.
    kept = rows_mentioning(db, other)
    assert {table: kept.get(table, 0) for table in kept_before} == kept_before | {
        # The group's own work context, which the user happened to start, is now theirs.
        "work_contexts": kept_before["work_contexts"] + 1
    }
    assert count(db, "SELECT COUNT(*) FROM work_contexts WHERE owner_key = ?", other) >= 1
    assert count(db, "SELECT COUNT(*) FROM messages WHERE thread_key = ?", group) >= 2
    assert count(db, "SELECT COUNT(*) FROM users WHERE user_key = ?", linked) == 1
    assert count(db, "SELECT COUNT(*) FROM persons") == 0  # a person of one is dissolved
    who = await say(relay, "/whoami", "2026-11-21T09:20:00Z", linked)
    assert "Linked accounts: none." in who and "Timezone: Europe/Paris." in who
    actions = await say(relay, "/actions", "2026-11-21T09:21:00Z", linked)
    assert "cooking" in actions.lower() and MARK not in actions
    # Forgotten is forgotten: a new message starts from scratch.
    assert "nothing yet" not in await say(relay, "/forget", "2026-11-21T09:30:00Z")
    assert count(db, "SELECT COUNT(*) FROM messages WHERE user_key = ?", ME) == 1


async def test_forgotten_blocks_are_not_replayed_into_the_agents_history(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    """The agent resends its history after /forget: the blocks the relay deleted (their
    zone, their times) are not put back into it from memory, as after a restart."""
    channel, _, user = ME.partition(":")
    await say(relay, "/tz Europe/Paris", "2026-11-21T08:00:00Z")
    history: list[dict[str, Any]] = [{"role": "user", "content": f"hi {MARK}"}]
    reply = await send(
        relay, messages=history, at="2026-11-21T08:01:00Z", channel=channel, user=user
    )
    assert "Europe/Paris" in fake_upstream.last.body["messages"][0]["content"]
    await say(relay, "/forget", "2026-11-21T08:02:00Z")
    assert (await say(relay, "/forget confirm", "2026-11-21T08:03:00Z")).startswith("Done.")
    history += [reply["choices"][0]["message"], {"role": "user", "content": "and now?"}]
    await send(relay, messages=history, at="2026-11-21T08:04:00Z", channel=channel, user=user)
    assert fake_upstream.last.body["messages"][0] == {"role": "user", "content": f"hi {MARK}"}


async def test_forget_takes_the_users_words_out_of_a_groups_continuity(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, tmp_path: Path
) -> None:
    """A group session the user spoke in was captured (entries, summary, the group's
    view, everyone's rollup line of it): none of it may quote them after /forget."""
    db = tmp_path / "relay.sqlite3"
    clock = FakeClock(MONDAY)
    relay = await make_relay(
        relay_factory, clock, continuity={"mode": "deterministic"}, store={"commit_delay_ms": 0}
    )
    alice = Person(relay, fake_upstream, clock, user="alice", thread="grp", chat_type="group")
    bob = Person(relay, fake_upstream, clock, user="bob", thread="grp", chat_type="group")
    await bob.say("hello group")
    for text in (
        f"We decided to go with the {MARK} plan.",
        f"I still need to figure out the {MARK} budget.",
        f"{MARK} again",
    ):
        await alice.say(text, after=timedelta(minutes=1))
    status, report = await admin(relay, "POST", "/admin/jobs/nightly/run")
    assert status == 200 and report["captured"] == 1 and report["rollups"] == 2, report
    assert {"work_contexts", "continuity_entries", "rollup_segments"} <= set(
        rows_mentioning(db, MARK)
    )

    await alice.say("/forget", after=timedelta(minutes=1))
    assert "Done." in await alice.say("/forget confirm", after=timedelta(minutes=1))
    assert rows_mentioning(db, MARK) == {}
    # The group carries on: Bob's next session there gets no card quoting her.
    block = await bob.block_for("hi again", after=timedelta(days=1))
    assert MARK not in block
    assert count(db, "SELECT COUNT(*) FROM messages WHERE user_key = 'api:bob'") >= 2


async def test_forget_does_not_reset_the_limit_on_guessing_link_codes(
    relay: RunningServer,
) -> None:
    """A guesser refused after too many wrong link codes forgets their account: the next
    guess within the window is refused all the same."""
    for minute in range(5):
        await say(relay, f"/link WRONG{minute}", f"2026-11-21T08:0{minute}:00Z")
    refused = await say(relay, "/link BBBBBB", "2026-11-21T08:05:00Z")
    assert refused.startswith("Too many unknown link codes"), refused
    await say(relay, "/forget", "2026-11-21T08:06:00Z")
    assert (await say(relay, "/forget confirm", "2026-11-21T08:07:00Z")).startswith("Done.")
    again = await say(relay, "/link CCCCCC", "2026-11-21T08:08:00Z")
    assert again.startswith("Too many unknown link codes"), again


async def test_forget_in_a_group_shows_the_group_nothing_private(
    relay: RunningServer, tmp_path: Path
) -> None:
    """The group sees that /forget deletes everything, not how many private messages,
    remembered facts or which linked accounts the user has; it still works there."""
    db = tmp_path / "relay.sqlite3"
    await say(relay, f"my secret {MARK}", "2026-11-21T08:00:00Z")
    await say(relay, "clock it: walk", "2026-11-21T08:01:00Z")
    await say(relay, "hello all", "2026-11-21T08:02:00Z", thread="g2", group=True)
    preview = await say(relay, "/forget", "2026-11-21T08:03:00Z", thread="g2", group=True)
    done = await say(relay, "/forget confirm", "2026-11-21T08:04:00Z", thread="g2", group=True)
    for reply in (preview, done):
        assert ME not in reply and "clocked action" not in reply, reply
        # No counts: the only number is the confirmation window's.
        assert set(re.findall(r"\d+", reply)) <= {"10"}, reply
    assert "send /forget in a private chat" in preview
    assert "/forget confirm here within 10 minutes" in preview
    assert done.startswith("Done. I deleted everything I stored about you.")
    assert rows_mentioning(db, ME, MARK) == {}


async def test_forget_with_words_points_to_forgetting_one_remembered_thing(
    relay: RunningServer,
) -> None:
    """A user who wants one fact gone ("/forget that I live in Paris") is told how to do
    that, and nothing is deleted."""
    await say(relay, "Remember that I live in Paris.", "2026-11-21T08:00:00Z")
    answer = await say(relay, "/forget that I live in Paris", "2026-11-21T08:01:00Z")
    assert "/memory forget N" in answer and "/forget confirm" in answer
    assert "Lives in Paris" in await say(relay, "/memory", "2026-11-21T08:02:00Z")


async def test_news_waiting_for_a_forgotten_account_is_not_told_to_its_fresh_start(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    """An account taken out of a link has a notice waiting; once it is forgotten, whoever
    writes next as it starts from scratch and hears nothing of the accounts it was linked
    to."""
    other = "discord:7"
    await say(relay, "hi", "2026-11-21T08:00:00Z")
    await say(relay, "hi", "2026-11-21T08:01:00Z", other)
    offer = await say(relay, "/link", "2026-11-21T08:02:00Z", other)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    assert (await say(relay, f"/link {found[1]}", "2026-11-21T08:03:00Z")).startswith("Linked")
    await say(relay, f"/unlink {ME}", "2026-11-21T08:04:00Z", other)
    await say(relay, "/forget", "2026-11-21T08:05:00Z")
    await say(relay, "/forget confirm", "2026-11-21T08:06:00Z")
    await say(relay, "hello?", "2026-11-21T08:07:00Z")
    told = block(fake_upstream)
    assert "First message in this thread." in told
    assert other not in told and "unlinked" not in told, told
