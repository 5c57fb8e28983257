"""The SQLite schema, as versioned migrations applied in order when the store opens.

``MIGRATIONS`` is append-only: once a version has shipped, its SQL never changes; a schema
change is a new ``(version, sql)`` pair at the end. The applied version is kept in
``PRAGMA user_version``, which lives in the database header and is therefore part of the
same transaction as the migration that sets it — a migration is applied whole or not at all.

Instants are stored as ISO-8601 UTC text in one fixed format (see ``to_db``), so that
string order equals time order and ``MAX()``/comparisons work on them directly in SQL.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import UTC, datetime

import aiosqlite

from middleware.errors import StoreError
from middleware.store.sqlite_errors import explained

log = logging.getLogger(__name__)

# What ``middleware.commands.match_command`` takes for a command, in SQL (which has no
# regular expressions): '/', a name of letters and '_', optionally '@' and a bot name of
# letters, digits and '_', then the end or whitespace (Python's, every ``str.isspace``).
_NAME_CHARS = "'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_'"
_BOT_CHARS = "'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'"
_SPACE = (
    "char(9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, "
    "8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288)"
)


def _ends_or_spaces(rest: str) -> str:
    """SQL: ``rest`` is empty, all whitespace, or starts with whitespace."""
    return f"(ltrim({rest}, {_SPACE}) = '' OR instr({_SPACE}, substr({rest}, 1, 1)) > 0)"


_AFTER_NAME = f"ltrim(substr(text, 2), {_NAME_CHARS})"
_AFTER_BOT = f"ltrim(substr({_AFTER_NAME}, 2), {_BOT_CHARS})"
IS_COMMAND_TEXT = f"""(
    substr(text, 1, 1) = '/' AND length({_AFTER_NAME}) < length(text) - 1 AND (
        {_ends_or_spaces(_AFTER_NAME)}
        OR (substr({_AFTER_NAME}, 1, 1) = '@'
            AND length({_AFTER_BOT}) < length({_AFTER_NAME}) - 1
            AND {_ends_or_spaces(_AFTER_BOT)})))"""


def answers_command(reply: str) -> str:
    """SQL, true when the reply ``reply`` (a table alias, or ``NEW``) answers a command:
    a reply answers the user message stored just before it in its thread."""
    return f"""COALESCE((
        SELECT u.command FROM messages AS u
        WHERE u.thread_key = {reply}.thread_key AND u.role = 'user' AND u.id < {reply}.id
        ORDER BY u.id DESC LIMIT 1), 0) = 1"""


def in_conversation(message: str) -> str:
    """SQL, true when ``message`` is in the conversation the model sees: neither a command
    the relay answered itself nor the reply to one."""
    return (
        f"({message}.command = 0 AND ({message}.role = 'user' OR NOT {answers_command(message)}))"
    )


# Every instant column holds text produced by ``to_db``: e.g. 2024-03-01T09:30:00.000000+00:00.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE persons (
            person_id TEXT PRIMARY KEY,
            last_interaction_any_channel_at TEXT,
            last_channel TEXT
        );

        CREATE TABLE users (
            user_key TEXT PRIMARY KEY,
            channel TEXT NOT NULL,
            platform_user_id TEXT NOT NULL,
            display_name TEXT,
            person_id TEXT REFERENCES persons (person_id) ON DELETE SET NULL,
            default_tz TEXT,
            locale TEXT,
            created_at TEXT NOT NULL,
            last_interaction_any_channel_at TEXT,
            last_channel TEXT
        );
        CREATE INDEX users_person ON users (person_id) WHERE person_id IS NOT NULL;

        CREATE TABLE threads (
            thread_key TEXT PRIMARY KEY,
            channel TEXT NOT NULL,
            chat_type TEXT NOT NULL CHECK (chat_type IN ('dm', 'group')),
            kind TEXT NOT NULL DEFAULT 'conversation',
            session_tz TEXT,
            created_at TEXT NOT NULL,
            last_interaction_at TEXT,
            last_user_message_at TEXT,
            last_agent_message_at TEXT
        );

        -- The composite key is the only lookup path, so the table is its own index.
        CREATE TABLE thread_participants (
            thread_key TEXT NOT NULL REFERENCES threads (thread_key) ON DELETE CASCADE,
            user_key TEXT NOT NULL REFERENCES users (user_key) ON DELETE CASCADE,
            last_user_message_at TEXT NOT NULL,
            PRIMARY KEY (thread_key, user_key)
        ) WITHOUT ROWID;
        -- Lets deleting a user (a privacy request) find their rows without a full scan.
        CREATE INDEX thread_participants_user ON thread_participants (user_key);

        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            thread_key TEXT NOT NULL REFERENCES threads (thread_key) ON DELETE CASCADE,
            user_key TEXT REFERENCES users (user_key) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            complete INTEGER NOT NULL DEFAULT 1 CHECK (complete IN (0, 1))
        );
        CREATE INDEX messages_thread ON messages (thread_key, id);
        CREATE INDEX messages_user ON messages (user_key) WHERE user_key IS NOT NULL;
        """,
    ),
    (
        2,
        """
        -- A linked person's timezone and locale apply on every channel they use.
        ALTER TABLE persons ADD COLUMN default_tz TEXT;
        ALTER TABLE persons ADD COLUMN locale TEXT;

        -- What the relay appended to each user message of a thread, replayed verbatim on
        -- later requests so the forwarded conversation only grows at the end (the
        -- upstream's prompt cache stays valid). A message is known by the hash of its
        -- original content and its ordinal among equal messages in the thread.
        CREATE TABLE injections (
            thread_key TEXT NOT NULL REFERENCES threads (thread_key) ON DELETE CASCADE,
            fingerprint TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (thread_key, fingerprint, ordinal)
        ) WITHOUT ROWID;
        """,
    ),
    (
        3,
        """
        -- Per-user clock data exchanged in the spec 000 §10.2 clock-state file, kept as JSON
        -- text (NULL = none): policy overrides, duration calibration, and the latest
        -- actions (verbatim until actions get tables of their own).
        ALTER TABLE users ADD COLUMN policy_overrides TEXT;
        ALTER TABLE users ADD COLUMN calibration TEXT;
        ALTER TABLE users ADD COLUMN latest_actions TEXT;

        -- A member can be known before they speak (an imported group's participants), so
        -- last_user_message_at becomes nullable. SQLite cannot drop NOT NULL in place:
        -- rebuild the table (nothing references it, so dropping it cascades nowhere).
        CREATE TABLE thread_participants_v3 (
            thread_key TEXT NOT NULL REFERENCES threads (thread_key) ON DELETE CASCADE,
            user_key TEXT NOT NULL REFERENCES users (user_key) ON DELETE CASCADE,
            last_user_message_at TEXT,
            PRIMARY KEY (thread_key, user_key)
        ) WITHOUT ROWID;
        INSERT INTO thread_participants_v3 (thread_key, user_key, last_user_message_at)
            SELECT thread_key, user_key, last_user_message_at FROM thread_participants;
        DROP TABLE thread_participants;
        ALTER TABLE thread_participants_v3 RENAME TO thread_participants;
        CREATE INDEX thread_participants_user ON thread_participants (user_key);
        """,
    ),
    (
        4,
        """
        -- A linked person's policy overrides, calibration and latest actions apply on every
        -- channel they use (spec 000 §7.0), like their timezone.
        ALTER TABLE persons ADD COLUMN policy_overrides TEXT;
        ALTER TABLE persons ADD COLUMN calibration TEXT;
        ALTER TABLE persons ADD COLUMN latest_actions TEXT;
        -- Until now a linked user kept them on their own row: the person takes them over.
        UPDATE persons SET
            policy_overrides = (SELECT u.policy_overrides FROM users AS u
                WHERE u.person_id = persons.person_id AND u.policy_overrides IS NOT NULL
                ORDER BY u.user_key LIMIT 1),
            calibration = (SELECT u.calibration FROM users AS u
                WHERE u.person_id = persons.person_id AND u.calibration IS NOT NULL
                ORDER BY u.user_key LIMIT 1),
            latest_actions = (SELECT u.latest_actions FROM users AS u
                WHERE u.person_id = persons.person_id AND u.latest_actions IS NOT NULL
                ORDER BY u.user_key LIMIT 1);

        -- Who set the thread's kind: an explicit "clock: kind" is never overwritten by an
        -- inference (spec 000 §5.2: persist an inference only when confident).
        ALTER TABLE threads ADD COLUMN kind_source TEXT NOT NULL DEFAULT 'default'
            CHECK (kind_source IN ('default', 'inferred', 'explicit'));
        UPDATE threads SET kind_source = 'explicit' WHERE kind <> 'conversation';

        -- An impactful tool call held until the user confirms it (spec 000 §8.2): at most
        -- one per thread, the assistant message kept whole so "yes" releases the same call.
        CREATE TABLE held_tool_calls (
            thread_key TEXT PRIMARY KEY REFERENCES threads (thread_key) ON DELETE CASCADE,
            user_key TEXT NOT NULL,
            message TEXT NOT NULL,
            names TEXT NOT NULL,
            model TEXT NOT NULL,
            held_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    (
        5,
        """
        -- One-time codes a user makes on one account and sends from another to link the
        -- two (spec 000 §7.0: linking is explicit and user-approved). At most one live
        -- code per user; a code dies when redeemed, when it expires, or with its user.
        CREATE TABLE link_codes (
            code TEXT PRIMARY KEY,
            user_key TEXT NOT NULL REFERENCES users (user_key) ON DELETE CASCADE,
            expires_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX link_codes_user ON link_codes (user_key);
        """,
    ),
    (
        6,
        """
        -- Continuity (spec 001). A work context is what a thread works on: its own
        -- default one ('wc:' || thread_key, made on first use) unless the thread was moved
        -- into a named one. ``constellation`` is the derived view (§4), rebuildable from
        -- the log at any time; ``constellation_stale`` says the log changed since.
        CREATE TABLE work_contexts (
            work_context_id TEXT PRIMARY KEY,
            owner_key TEXT NOT NULL,
            name TEXT NOT NULL,
            name_folded TEXT NOT NULL,
            named INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            last_active_at TEXT NOT NULL,
            constellation TEXT,
            constellation_built_at TEXT,
            constellation_stale INTEGER NOT NULL DEFAULT 1
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX work_contexts_named ON work_contexts (owner_key, name_folded)
            WHERE named = 1;
        CREATE INDEX work_contexts_stale ON work_contexts (constellation_stale)
            WHERE constellation_stale = 1;

        -- NULL: the thread's own default context.
        ALTER TABLE threads ADD COLUMN work_context_id TEXT;
        -- The threads moved into a named context (listing a context's threads).
        CREATE INDEX threads_work_context ON threads (work_context_id)
            WHERE work_context_id IS NOT NULL;
        -- Channel threads: the first transcript message still forwarded after the relay
        -- compacted the history (NULL: from the start).
        ALTER TABLE threads ADD COLUMN history_start_id INTEGER;

        -- A run of a thread's turns without an idle gap. Its last turn and counts are
        -- read from ``messages`` (ids from first_message_id on), so a turn writes nothing
        -- here; a row is written when a session starts and when it is captured.
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            thread_key TEXT NOT NULL REFERENCES threads (thread_key) ON DELETE CASCADE,
            work_context_id TEXT NOT NULL,
            user_key TEXT NOT NULL,
            started_at TEXT NOT NULL,
            first_message_id INTEGER NOT NULL,
            tool_used INTEGER NOT NULL DEFAULT 0,
            captured_message_id INTEGER,
            last_capture_at TEXT,
            summary TEXT,
            summary_mode TEXT,
            cards_fingerprint TEXT
        ) WITHOUT ROWID;
        CREATE INDEX sessions_thread ON sessions (thread_key, first_message_id);
        CREATE INDEX sessions_context ON sessions (work_context_id, started_at);

        -- The continuity log (spec 001 §3.2), append-only but for lifecycle fields.
        CREATE TABLE continuity_entries (
            entry_id TEXT PRIMARY KEY,
            work_context_id TEXT NOT NULL,
            entry_type TEXT NOT NULL CHECK (entry_type IN (
                'session_summary_ref', 'open_question', 'key_decision',
                'cross_conversation_update', 'work_phase_change')),
            source_session_id TEXT NOT NULL,
            source_agent_id TEXT,
            captured_at TEXT NOT NULL,
            capture_mode TEXT NOT NULL
                CHECK (capture_mode IN ('deterministic', 'llm_enriched')),
            content TEXT NOT NULL,
            delivered INTEGER NOT NULL DEFAULT 0,
            delivered_at TEXT,
            promoted_to_graph INTEGER NOT NULL DEFAULT 0,
            promoted_node_id TEXT,
            decay_at TEXT NOT NULL,
            linked_entity_ids TEXT NOT NULL DEFAULT '[]',
            schema_version INTEGER NOT NULL DEFAULT 2
        ) WITHOUT ROWID;
        CREATE INDEX continuity_entries_context
            ON continuity_entries (work_context_id, captured_at);
        CREATE INDEX continuity_entries_decay ON continuity_entries (decay_at);

        -- A person's recent-activity rollup (tier 2), one segment per work context so
        -- the renderer can leave out the context tier 1 is about (spec 001 §6.2).
        CREATE TABLE rollup_segments (
            user_key TEXT NOT NULL,
            work_context_id TEXT NOT NULL,
            text TEXT NOT NULL,
            last_activity_at TEXT NOT NULL,
            generated_at TEXT NOT NULL,
            PRIMARY KEY (user_key, work_context_id)
        ) WITHOUT ROWID;

        -- Living memory (tier 3): stable facts and standing preferences.
        CREATE TABLE memory_facts (
            fact_id INTEGER PRIMARY KEY,
            user_key TEXT NOT NULL,
            kind TEXT NOT NULL
                CHECK (kind IN ('name', 'fact', 'preference', 'directive', 'correction')),
            text TEXT NOT NULL,
            text_folded TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('user', 'promoted', 'admin')),
            created_at TEXT NOT NULL,
            source_entry_id TEXT
        );
        CREATE INDEX memory_facts_user ON memory_facts (user_key);

        -- Background jobs' progress marks (e.g. the local date the nightly job last ran
        -- for a user), so a job is idempotent and survives restarts.
        CREATE TABLE job_marks (
            job TEXT NOT NULL,
            scope TEXT NOT NULL,
            mark TEXT NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (job, scope)
        ) WITHOUT ROWID;
        """,
    ),
    (
        7,
        """
        -- A thread's most recent injections, read when the relay first sees the thread
        -- since it started (only those are kept in memory), without reading its others.
        CREATE INDEX injections_recent ON injections (thread_key, at);
        """,
    ),
    (
        8,
        """
        -- The relay now fetches a thread's blocks by key when it first needs them, so the
        -- index of version 7 is no longer read. It cost every turn's commit a page of its
        -- own (each thread appends to its own leaf): a quarter of the WAL a turn wrote.
        DROP INDEX IF EXISTS injections_recent;
        """,
    ),
    (
        9,
        """
        -- Storing a message moves its thread's times (and, for a user's message, the
        -- sender's time in the thread) inside the INSERT itself: every turn stores two
        -- messages, and these were three more statements of their own, each a round trip
        -- from Python. Timestamps only move forward (MAX on the fixed-format text).
        CREATE TRIGGER messages_user_moves_thread
        AFTER INSERT ON messages WHEN NEW.role = 'user' AND NEW.user_key IS NOT NULL
        BEGIN
            UPDATE threads SET
                created_at = MIN(created_at, NEW.at),
                last_interaction_at = MAX(COALESCE(last_interaction_at, ''), NEW.at),
                last_user_message_at = MAX(COALESCE(last_user_message_at, ''), NEW.at)
            WHERE thread_key = NEW.thread_key;
            INSERT INTO thread_participants (thread_key, user_key, last_user_message_at)
            VALUES (NEW.thread_key, NEW.user_key, NEW.at)
            ON CONFLICT (thread_key, user_key) DO UPDATE SET last_user_message_at =
                MAX(COALESCE(thread_participants.last_user_message_at, ''), NEW.at);
        END;
        CREATE TRIGGER messages_reply_moves_thread
        AFTER INSERT ON messages WHEN NEW.role = 'assistant'
        BEGIN
            UPDATE threads SET
                last_agent_message_at = MAX(COALESCE(last_agent_message_at, ''), NEW.at),
                last_interaction_at = MAX(COALESCE(last_interaction_at, ''), NEW.at)
            WHERE thread_key = NEW.thread_key;
        END;
        """,
    ),
    (
        10,
        """
        -- A turn's injected block (hundreds of bytes) was a row of a WITHOUT ROWID table
        -- keyed by the message's fingerprint, a hash: each one landed on a random leaf of
        -- the table itself, splitting full pages, and every commit rewrote a page per turn.
        -- Rows now append in rowid order; only the small key lands at random, in the
        -- UNIQUE index (which the lookups by key and ON CONFLICT use as before).
        CREATE TABLE injections_v10 (
            thread_key TEXT NOT NULL REFERENCES threads (thread_key) ON DELETE CASCADE,
            fingerprint TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            UNIQUE (thread_key, fingerprint, ordinal)
        );
        INSERT INTO injections_v10 (thread_key, fingerprint, ordinal, text, at)
            SELECT thread_key, fingerprint, ordinal, text, at FROM injections;
        DROP TABLE injections;
        ALTER TABLE injections_v10 RENAME TO injections;
        """,
    ),
    (
        11,
        """
        -- Where the user last said they are ("I'm in Lisbon this week"), as JSON text
        -- (zone, place, kind, said_at; NULL = never said): spec 000 §4.2's inferred
        -- location, remembered for later messages. The person's when linked, like the
        -- rest of the clock data.
        ALTER TABLE users ADD COLUMN located TEXT;
        ALTER TABLE persons ADD COLUMN located TEXT;
        """,
    ),
    (
        12,
        """
        -- Unknown link codes an account sent, so that guessing codes is refused across
        -- restarts and every relay process on this file: how many since the first of the
        -- current window began. Read only by /link <code>; deleted by /forget like all
        -- else about the user. A row outlives its window only until the next code is tried.
        CREATE TABLE link_code_misses (
            user_key TEXT PRIMARY KEY,
            window_start TEXT NOT NULL,
            misses INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    (
        13,
        """
        -- A user message said again ("ok" twice) is known by its ordinal among equal
        -- messages, which a client's compaction shifts when it drops an earlier copy. Such
        -- copies also keep the fingerprint of the message just before them (NULL for all
        -- others, and for rows saved before), so the kept copy finds its own block. The
        -- partial index holds only those rare rows: a turn's write costs nothing more.
        ALTER TABLE injections ADD COLUMN context TEXT;
        CREATE INDEX injections_repeated ON injections (thread_key) WHERE context IS NOT NULL;
        """,
    ),
    (
        14,
        """
        -- How sure living memory is of each fact (spec 003 §8): its confidence as of the
        -- last time the user said it, and when that was (what it is now is computed from
        -- both, so nothing is subtracted night by night). Facts kept before start where
        -- their source puts them: a correction (or an operator's fact) at 1.0, one the
        -- nightly job inferred at 0.6, one the user stated at 0.95, last said when kept.
        ALTER TABLE memory_facts ADD COLUMN confidence REAL NOT NULL DEFAULT 0.95
            CHECK (confidence BETWEEN 0 AND 1);
        ALTER TABLE memory_facts ADD COLUMN last_mentioned_at TEXT;
        UPDATE memory_facts SET
            confidence = CASE
                WHEN kind = 'correction' OR source = 'admin' THEN 1.0
                WHEN source = 'promoted' THEN 0.6
                ELSE 0.95 END,
            last_mentioned_at = created_at;
        """,
    ),
    (
        15,
        """
        -- 1 on a user message the relay answered itself ("/recap", "/time"): no turn of
        -- the conversation, so a session's turn counts and its dirty check (spec 001
        -- §5.2) leave it out without reading its text. Rows stored before are marked as
        -- the capture used to tell them apart: by their text ("/word …").
        ALTER TABLE messages ADD COLUMN command INTEGER NOT NULL DEFAULT 0
            CHECK (command IN (0, 1));
        UPDATE messages SET command = 1
        WHERE role = 'user' AND text GLOB '/[A-Za-z_]*';
        """,
    ),
    (
        16,
        """
        -- Where its request placed a user message: the fingerprint of its content and its
        -- index in ``messages``. After a restart, a resend of the pair's newest message is
        -- known by it even when the relay stopped before that message's block was saved.
        -- NULL for rows stored before, and for turns that cannot be a resend.
        ALTER TABLE messages ADD COLUMN place_fingerprint TEXT;
        ALTER TABLE messages ADD COLUMN place_index INTEGER;
        """,
    ),
    (
        17,
        f"""
        -- Migration 15's backfill also marked messages that only start like a command,
        -- such as a path ("/etc/hosts is gone"), which then dropped out of their sessions.
        -- Unmarked: the rows starting with '/' that the command matcher does not take (the
        -- relay marks no such message itself; its other answers, "clock: …", start
        -- otherwise).
        UPDATE messages SET command = 0
        WHERE command = 1 AND substr(text, 1, 1) = '/' AND NOT {IS_COMMAND_TEXT};
        """,
    ),
    (
        18,
        f"""
        -- When the thread's conversation, the one the model sees, last moved: its newest
        -- message that is neither a command the relay answered itself ("/time") nor the
        -- reply to one. "Last message here" and the gap are measured from it, so a user
        -- back after hours who first sends /time still gets the gap. A user message moves
        -- it when stored; marking it a command (which comes after) moves it back.
        ALTER TABLE threads ADD COLUMN last_conversation_at TEXT;
        UPDATE threads SET last_conversation_at = COALESCE(
            (SELECT MAX(m.at) FROM messages AS m
             WHERE m.thread_key = threads.thread_key AND {in_conversation("m")}),
            -- A thread imported from a clock-state file has times but no messages.
            CASE WHEN NOT EXISTS (SELECT 1 FROM messages AS m
                                  WHERE m.thread_key = threads.thread_key)
                 THEN last_interaction_at END);

        DROP TRIGGER messages_user_moves_thread;
        CREATE TRIGGER messages_user_moves_thread
        AFTER INSERT ON messages WHEN NEW.role = 'user' AND NEW.user_key IS NOT NULL
        BEGIN
            UPDATE threads SET
                created_at = MIN(created_at, NEW.at),
                last_interaction_at = MAX(COALESCE(last_interaction_at, ''), NEW.at),
                last_user_message_at = MAX(COALESCE(last_user_message_at, ''), NEW.at),
                last_conversation_at = MAX(COALESCE(last_conversation_at, ''), NEW.at)
            WHERE thread_key = NEW.thread_key;
            INSERT INTO thread_participants (thread_key, user_key, last_user_message_at)
            VALUES (NEW.thread_key, NEW.user_key, NEW.at)
            ON CONFLICT (thread_key, user_key) DO UPDATE SET last_user_message_at =
                MAX(COALESCE(thread_participants.last_user_message_at, ''), NEW.at);
        END;

        DROP TRIGGER messages_reply_moves_thread;
        CREATE TRIGGER messages_reply_moves_thread
        AFTER INSERT ON messages WHEN NEW.role = 'assistant'
        BEGIN
            UPDATE threads SET
                last_agent_message_at = MAX(COALESCE(last_agent_message_at, ''), NEW.at),
                last_interaction_at = MAX(COALESCE(last_interaction_at, ''), NEW.at),
                last_conversation_at = CASE WHEN {answers_command("NEW")}
                    THEN last_conversation_at
                    ELSE MAX(COALESCE(last_conversation_at, ''), NEW.at) END
            WHERE thread_key = NEW.thread_key;
        END;

        -- The newest message left in the conversation, by row id: a command is marked
        -- just after it is stored, so what stood before it is among the last rows.
        CREATE TRIGGER messages_command_leaves_conversation
        AFTER UPDATE OF command ON messages
        WHEN NEW.command = 1 AND OLD.command = 0 AND NEW.role = 'user'
        BEGIN
            UPDATE threads SET last_conversation_at = (
                SELECT m.at FROM messages AS m
                WHERE m.thread_key = NEW.thread_key AND {in_conversation("m")}
                ORDER BY m.id DESC LIMIT 1)
            WHERE thread_key = NEW.thread_key;
        END;
        """,
    ),
    (
        19,
        f"""
        -- A group member's own return (check-ins' elapsed time for the speaker) is their
        -- newest message of the conversation, as the thread's is: "/time" after three
        -- days away is no return. last_user_message_at stays every message's (spec 000
        -- §4.1). A time a clock-state file gave (imported_conversation_at) is of the
        -- conversation and has no message row: marking a command falls back to it.
        ALTER TABLE thread_participants ADD COLUMN last_conversation_at TEXT;
        ALTER TABLE thread_participants ADD COLUMN imported_conversation_at TEXT;
        ALTER TABLE threads ADD COLUMN imported_conversation_at TEXT;
        UPDATE thread_participants SET last_conversation_at = COALESCE(
            (SELECT MAX(m.at) FROM messages AS m
             WHERE m.thread_key = thread_participants.thread_key
                AND m.user_key = thread_participants.user_key
                AND m.role = 'user' AND m.command = 0),
            CASE WHEN NOT EXISTS (SELECT 1 FROM messages AS m
                                  WHERE m.thread_key = thread_participants.thread_key
                                     AND m.user_key = thread_participants.user_key)
                 THEN last_user_message_at END);
        UPDATE thread_participants SET imported_conversation_at = last_user_message_at
        WHERE NOT EXISTS (SELECT 1 FROM messages AS m
                          WHERE m.thread_key = thread_participants.thread_key
                             AND m.user_key = thread_participants.user_key);
        UPDATE threads SET imported_conversation_at = last_conversation_at
        WHERE NOT EXISTS (SELECT 1 FROM messages AS m
                          WHERE m.thread_key = threads.thread_key);

        DROP TRIGGER messages_user_moves_thread;
        CREATE TRIGGER messages_user_moves_thread
        AFTER INSERT ON messages WHEN NEW.role = 'user' AND NEW.user_key IS NOT NULL
        BEGIN
            UPDATE threads SET
                created_at = MIN(created_at, NEW.at),
                last_interaction_at = MAX(COALESCE(last_interaction_at, ''), NEW.at),
                last_user_message_at = MAX(COALESCE(last_user_message_at, ''), NEW.at),
                last_conversation_at = MAX(COALESCE(last_conversation_at, ''), NEW.at)
            WHERE thread_key = NEW.thread_key;
            INSERT INTO thread_participants
                (thread_key, user_key, last_user_message_at, last_conversation_at)
            VALUES (NEW.thread_key, NEW.user_key, NEW.at, NEW.at)
            ON CONFLICT (thread_key, user_key) DO UPDATE SET
                last_user_message_at =
                    MAX(COALESCE(thread_participants.last_user_message_at, ''), NEW.at),
                last_conversation_at =
                    MAX(COALESCE(thread_participants.last_conversation_at, ''), NEW.at);
        END;

        -- The newest message left in the conversation, by row id (a command is marked
        -- just after it is stored, so what stood before it is among the last rows), or
        -- the time a clock-state file gave, whichever is later; the same for the
        -- member who sent the command.
        DROP TRIGGER messages_command_leaves_conversation;
        CREATE TRIGGER messages_command_leaves_conversation
        AFTER UPDATE OF command ON messages
        WHEN NEW.command = 1 AND OLD.command = 0 AND NEW.role = 'user'
        BEGIN
            UPDATE threads SET last_conversation_at = NULLIF(MAX(
                COALESCE((SELECT m.at FROM messages AS m
                          WHERE m.thread_key = NEW.thread_key AND {in_conversation("m")}
                          ORDER BY m.id DESC LIMIT 1), ''),
                COALESCE(imported_conversation_at, '')), '')
            WHERE thread_key = NEW.thread_key;
            UPDATE thread_participants SET last_conversation_at = NULLIF(MAX(
                COALESCE((SELECT m.at FROM messages AS m
                          WHERE m.thread_key = NEW.thread_key AND m.user_key = NEW.user_key
                             AND m.role = 'user' AND m.command = 0
                          ORDER BY m.id DESC LIMIT 1), ''),
                COALESCE(imported_conversation_at, '')), '')
            WHERE thread_key = NEW.thread_key AND user_key = NEW.user_key;
        END;
        """,
    ),
    (
        20,
        """
        -- Each user message keeps the name it was said under, as the model is shown it:
        -- the sender's display name then, followed by their user key when another member
        -- of the thread already went by that name (``sqlite_turns.SPEAKER_LABEL``). Forwarded
        -- forever as stored, so a rename or a namesake joining never rewrites what the
        -- model saw before. Existing messages keep the name they were forwarded under
        -- until now (the sender's current one), so no thread's history changes.
        ALTER TABLE messages ADD COLUMN speaker TEXT;
        UPDATE messages SET speaker =
            (SELECT u.display_name FROM users AS u WHERE u.user_key = messages.user_key)
        WHERE role = 'user' AND user_key IS NOT NULL;

        -- A command the relay answers itself is known when it is stored (messages.command
        -- set by the insert): it never moves the conversation's times, so no read sees
        -- it as the conversation's newest message, even for a moment.
        DROP TRIGGER messages_user_moves_thread;
        CREATE TRIGGER messages_user_moves_thread
        AFTER INSERT ON messages WHEN NEW.role = 'user' AND NEW.user_key IS NOT NULL
        BEGIN
            UPDATE threads SET
                created_at = MIN(created_at, NEW.at),
                last_interaction_at = MAX(COALESCE(last_interaction_at, ''), NEW.at),
                last_user_message_at = MAX(COALESCE(last_user_message_at, ''), NEW.at),
                last_conversation_at = CASE WHEN NEW.command = 1 THEN last_conversation_at
                    ELSE MAX(COALESCE(last_conversation_at, ''), NEW.at) END
            WHERE thread_key = NEW.thread_key;
            INSERT INTO thread_participants
                (thread_key, user_key, last_user_message_at, last_conversation_at)
            VALUES (NEW.thread_key, NEW.user_key, NEW.at,
                    CASE WHEN NEW.command = 1 THEN NULL ELSE NEW.at END)
            ON CONFLICT (thread_key, user_key) DO UPDATE SET
                last_user_message_at =
                    MAX(COALESCE(thread_participants.last_user_message_at, ''), NEW.at),
                last_conversation_at = CASE WHEN NEW.command = 1
                    THEN thread_participants.last_conversation_at
                    ELSE MAX(COALESCE(thread_participants.last_conversation_at, ''), NEW.at)
                    END;
        END;
        """,
    ),
    (
        21,
        """
        -- When a member was last seen leaving the group (Telegram's left_chat_member,
        -- Discord's member removal): until they write there again (a later
        -- last_user_message_at), the block's local-times list and /time leave them out.
        -- NULL: never seen leaving.
        ALTER TABLE thread_participants ADD COLUMN left_at TEXT;
        """,
    ),
    (
        22,
        """
        -- Schema 1 kept a zone on each user only, and its relay linked no accounts: a
        -- person made by hand then got no zone from migration 2, and from then on the
        -- clock read the person's, so a linked user's own zone went unread. Give such a
        -- person the zone of their most recently seen user that has one. Only when the
        -- store is upgraded from schema 1 now (temp.upgrade_start, see
        -- ``apply_migrations``): on a store already past 2, a linked person without a zone
        -- may have cleared it (/tz), which a user's older zone must not undo.
        UPDATE persons SET default_tz = (
            SELECT u.default_tz FROM users AS u
            WHERE u.person_id = persons.person_id AND u.default_tz IS NOT NULL
            ORDER BY u.last_interaction_any_channel_at DESC, u.user_key LIMIT 1)
        WHERE default_tz IS NULL
            AND (SELECT from_version FROM temp.upgrade_start) < 2;
        """,
    ),
    (
        23,
        """
        -- 0 for a reply of which nothing reached the user (the chat platform refused it,
        -- or could not be reached, every time it was sent): kept, but no later turn's
        -- history forwards it, so the model does not believe the user read it.
        ALTER TABLE messages ADD COLUMN delivered INTEGER NOT NULL DEFAULT 1
            CHECK (delivered IN (0, 1));
        """,
    ),
    (
        24,
        """
        -- The locale the user's app reports on their messages on this account (Telegram's
        -- language_code, a Discord interaction's locale, an HTTP Accept-Language), as a
        -- babel identifier. Dates are written in the locale the user chose (locale, the
        -- person's when linked), else in this one. NULL: no app said.
        ALTER TABLE users ADD COLUMN app_locale TEXT;
        """,
    ),
    (
        25,
        """
        -- 1 on a fact the user asked the relay to keep ("remember that …", "don't forget
        -- that …", "keep in mind …", /memory add): committed (spec 002 tier 3), never
        -- forgotten by the compactor or to make room under max_facts, only when they ask
        -- (/memory forget, "please forget that …", /forget) or correct it. Facts kept
        -- before stay 0: the store did not tell what was asked for from what was said.
        ALTER TABLE memory_facts ADD COLUMN committed INTEGER NOT NULL DEFAULT 0
            CHECK (committed IN (0, 1));
        """,
    ),
    (
        26,
        """
        -- The name the member went by in this thread when they last wrote there (a
        -- Discord server nickname is per server; users.display_name is the account's
        -- newest, from whatever chat it came): what the group names them by. Written only
        -- when it changes. NULL (every member before this): the account's name stands.
        ALTER TABLE thread_participants ADD COLUMN display_name TEXT;
        """,
    ),
)

LATEST_VERSION = MIGRATIONS[-1][0]


def move_contact_forward(at: str, channel: str, table: str = "") -> str:
    """The SET clauses moving ``last_interaction_any_channel_at``/``last_channel`` to
    ``at``/``channel`` (SQL expressions) only when ``at`` is later — timestamps never move
    back. A NULL ``at`` compares as not-true, so the stored values stay. ``table``
    qualifies the columns inside an UPSERT (``users.``)."""
    stored = f"{table}last_interaction_any_channel_at"
    return f"""last_interaction_any_channel_at = CASE
        WHEN {at} > COALESCE({stored}, '') THEN {at} ELSE {stored} END,
    last_channel = CASE
        WHEN {at} >= COALESCE({stored}, '') THEN {channel} ELSE {table}last_channel END"""


def to_db(instant: datetime) -> str:
    """The stored text of an aware instant: UTC, microsecond precision, fixed width.

    Raises ``ValueError`` for a naive ``datetime``: the store cannot guess its zone.
    """
    if instant.tzinfo is not UTC:  # the relay's own instants are UTC: no conversion
        if instant.tzinfo is None or instant.utcoffset() is None:
            raise ValueError(f"the store needs aware datetimes, got naive {instant!r}")
        instant = instant.astimezone(UTC)
    return instant.isoformat(timespec="microseconds")


def from_db(value: str | None) -> datetime | None:
    """The aware UTC instant stored by ``to_db``, or ``None`` for SQL NULL."""
    if value is None:
        return None
    return datetime.fromisoformat(value).astimezone(UTC)


async def schema_version(conn: aiosqlite.Connection) -> int:
    """The migration version the database is at (0 for a new, empty file)."""
    rows = list(await conn.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])


async def check_store_file(conn: aiosqlite.Connection, path: str) -> int:
    """The schema version of the file ``conn`` opened, once it is known to be a store this
    relay may write: new and empty, or at a version it knows. Reads only, so a file it
    refuses is left as it was. Raises ``StoreError`` saying what the file is and what to do.
    """
    current = await schema_version(conn)
    if current > LATEST_VERSION:
        raise StoreError(
            f"the SQLite store at {path} has schema version {current}, newer than this "
            f"relay understands ({LATEST_VERSION}); upgrade chronorelay or use another file"
        )
    if current == 0:
        # The first migration creates the relay's tables together with the version: a
        # file without the version but with tables is some other program's database.
        rows = await conn.execute_fetchall(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 4"
        )
        names = [str(row[0]) for row in rows]
        if names:
            shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
            raise StoreError(
                f"the SQLite file at {path} is not a Chronorelay store (it holds {shown}); "
                "the relay will not write into another program's database: set [store] "
                "path to the relay's store, or to a new file"
            )
    return current


async def apply_migrations(conn: aiosqlite.Connection, path: str) -> int:
    """Bring the database up to ``LATEST_VERSION``; return the version it is at.

    ``conn`` must be in autocommit mode (``isolation_level=None``) so that each migration's
    own ``BEGIN IMMEDIATE ... COMMIT`` is the transaction. Another process may be migrating
    the same file at the same time: if our attempt fails because it got there first, we
    accept its work. Raises ``StoreError`` if a migration fails or the file was written by
    a newer relay.
    """
    current = await check_store_file(conn, path)
    # The version the file started at, for a migration that repairs what an earlier one
    # did only on the way up from it (22). A temp table: not in the file.
    await conn.executescript(
        "DROP TABLE IF EXISTS temp.upgrade_start; "
        "CREATE TEMP TABLE upgrade_start (from_version INTEGER NOT NULL); "
        f"INSERT INTO temp.upgrade_start VALUES ({current:d});"
    )
    try:
        return await _migrate(conn, path, current)
    finally:
        await conn.execute_fetchall("DROP TABLE IF EXISTS temp.upgrade_start")


async def _migrate(conn: aiosqlite.Connection, path: str, current: int) -> int:
    for version, sql in MIGRATIONS:
        if version <= current:
            continue
        try:
            # One script, one transaction: user_version is in the file header, so it
            # commits (or rolls back) together with the schema change.
            await conn.executescript(
                f"BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {version:d};\nCOMMIT;"
            )
        except sqlite3.Error as exc:
            await conn.rollback()
            current = await schema_version(conn)
            if current >= version:
                log.info("schema migration %d was applied concurrently by another opener", version)
                continue
            raise StoreError(
                f"could not migrate the SQLite store at {path} to schema version "
                f"{version}: " + explained(exc, "check that the file is writable and not corrupt")
            ) from exc
        log.info("applied schema migration %d to %s", version, path)
        current = version
    return current
