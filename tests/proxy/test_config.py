"""Config loading: the example file, unknown keys, bad values, env references."""

from __future__ import annotations

import re
import tomllib
from datetime import time, timedelta
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from middleware.errors import ConfigError
from proxy.cli import main
from proxy.config import ApiKey, Config, load_config, parse_config

EXAMPLE = Path(__file__).parents[2] / "config.example.toml"


def test_example_file_loads_and_equals_the_defaults() -> None:
    assert load_config(EXAMPLE) == Config()


def _keys_missing_from(model: type[BaseModel], table: dict[str, Any], path: str) -> list[str]:
    missing = []
    for name, field in model.model_fields.items():
        if name not in table:
            missing.append(f"{path}{name}")
        elif isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            missing += _keys_missing_from(field.annotation, table[name], f"{path}{name}.")
    return missing


def test_example_file_shows_every_key_the_config_has() -> None:
    """The example documents every key with its default: a key added to the models
    must be added to it too."""
    example = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert _keys_missing_from(Config, example, "") == []


def test_example_file_names_every_activity_cues_may_extend() -> None:
    from middleware.actions.templates import TEMPLATES

    text = EXAMPLE.read_text(encoding="utf-8")
    listed = text.split("Keys are the known activities:", 1)[1].split(".", 1)[0]
    names = {name.strip().lstrip("#").strip() for name in listed.replace("\n", " ").split(",")}
    assert names == set(TEMPLATES)


def test_unknown_key_names_line_and_known_keys() -> None:
    text = '[server]\nhost = "127.0.0.1"\nprot = 9000\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="relay.toml")
    message = str(caught.value)
    assert "relay.toml:line 3: unknown key 'prot' in server" in message
    assert "port" in message  # the known keys are listed


def test_unknown_table_is_an_error() -> None:
    with pytest.raises(ConfigError, match="line 1: unknown key 'servr'"):
        parse_config("[servr]\nport = 1\n")


def test_bad_values_are_all_reported_with_lines() -> None:
    text = '[server]\nport = 70000\n\n[upstream]\nmode = "magic"\nbase_url = "ftp://x"\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="c.toml")
    message = str(caught.value)
    assert "3 problem(s)" in message
    assert "c.toml:line 2: server.port" in message
    assert "c.toml:line 5: upstream.mode" in message and "'inspect' or 'forward'" in message
    assert "c.toml:line 6: upstream.base_url" in message and "http://" in message


def test_array_of_tables_errors_point_at_the_entry() -> None:
    text = '[auth]\n[[auth.keys]]\nname = "a"\nkey = "short"\n'
    with pytest.raises(ConfigError, match=r"line 4: auth\.keys\[entry 1\]\.key"):
        parse_config(text)


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="c.toml", env={"KEY": "sk-0123456789abcdef"})
    return [line.removeprefix("  - ") for line in str(caught.value).splitlines()[1:]]


def test_errors_in_a_later_entry_point_at_that_entry() -> None:
    text = """[[auth.keys]]
name = "first"
key = "0123456789abcdef"

[[auth.keys]]
name = "second"
key = "short"

[[upstream.fallbacks]]
base_url = "http://127.0.0.1:9001"

[[upstream.fallbacks]]
base_url = "http://127.0.0.1:9002"

[[upstream.fallbacks]]
model = "small"
"""
    assert problems(text) == [
        "c.toml:line 15: upstream.fallbacks[entry 3].base_url: Field required",
        "c.toml:line 7: auth.keys[entry 2].key: String should have at least 16 characters",
    ]
    # A single entry missing its key is reported at its header, not "line ?".
    assert problems("[upstream]\n\n[[upstream.fallbacks]]\nmodel = 'small'\n") == [
        "c.toml:line 3: upstream.fallbacks[entry 1].base_url: Field required"
    ]


def test_errors_in_an_inline_array_point_at_the_element_and_name_the_rule() -> None:
    text = """[clock.checkins]
rules = [
    { id = "one", when = { elapsed_gte = "P1D" }, then = { offer_recap = true } },
    { when = { elapsed_gte = "P2D" }, then = { offer_recap = true } },
    { id = "three", when = { elapsed_gt = "P2D" }, then = { offer_recap = true } },
]
"""
    assert problems(text) == [
        "c.toml:line 4: clock.checkins.rules[entry 2].id: Field required",
        "c.toml:line 5: unknown key 'elapsed_gt' in clock.checkins.rules[id 'three'].when "
        "(known keys: chat_type, elapsed_any_channel_gte, elapsed_gte, elapsed_lt, "
        "has_open_action, mentions_time, mode, thread_kind); remove it or fix the name",
    ]


def test_a_check_across_keys_points_at_the_key_it_names() -> None:
    text = "[cards]\nenabled = true\n\nmax_tokens = 60\nliving_memory_max_tokens = 100\n"
    [problem] = problems(text)
    assert problem.startswith("c.toml:line 5: cards: living_memory_max_tokens must not exceed")
    # Only max_tokens is in the file: that is the line to change.
    [problem] = problems("[cards]\nenabled = true\nmax_tokens = 60\n")
    assert problem.startswith("c.toml:line 3: cards: living_memory_max_tokens must not exceed")


def test_env_references_fill_secrets() -> None:
    text = '[upstream]\napi_key = "${UPSTREAM_KEY}"\n'
    config = parse_config(text, env={"UPSTREAM_KEY": "sk-from-env"})
    assert config.upstream.api_key == "sk-from-env"


def test_missing_env_reference_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"line 2: upstream\.api_key refers to \$\{NOPE\}"):
        parse_config('[upstream]\napi_key = "${NOPE}"\n', env={})


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("${OPENAI_API_KEY", "'${OPENAI_API_KEY'"),
        ("${ADMIN-TOKEN-FOR-PROD}", "'${ADMIN-TOKEN-FOR-PROD}'"),
        ("sk-${KEY}-${}", "'${}'"),
    ],
)
def test_a_malformed_env_reference_is_an_error(value: str, fragment: str) -> None:
    assert problems(f'[auth]\nadmin_token = "{value}"\n') == [
        f"c.toml:line 2: auth.admin_token has a malformed reference {fragment}; write ${{NAME}}, "
        "NAME being letters, digits and _ (not starting with a digit), closed by }; for a "
        "literal ${ write $${"
    ]


def test_a_doubled_dollar_writes_a_literal_dollar_brace() -> None:
    config = parse_config(
        '[upstream]\napi_key = "$${KEY}-${KEY}-a$$b"\n', env={"KEY": "sk-secret-value-1"}
    )
    assert config.upstream.api_key == "${KEY}-sk-secret-value-1-a$$b"


def test_an_unset_variable_is_one_problem_not_two() -> None:
    text = '[[auth.keys]]\nname = "ci"\nkey = "${MISSINGKEY}"\n'
    assert problems(text) == [
        "c.toml:line 3: auth.keys[entry 1].key refers to ${MISSINGKEY}, which is not set; "
        "export MISSINGKEY or put the value in the file"
    ]


def test_a_variable_value_may_hold_a_dollar_brace() -> None:
    config = parse_config('[upstream]\napi_key = "${KEY}"\n', env={"KEY": "sk-${not-a-ref"})
    assert config.upstream.api_key == "sk-${not-a-ref"


def test_invalid_toml_says_where() -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse_config("[server\nport = 1\n")


def test_check_config_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[upstream]\nmode = "forward"\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert main(["check-config", "--config", str(good)]) == 0
    assert "OK" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text("[store]\npth = 'x'\n")
    assert main(["check-config", "--config", str(bad)]) == 2
    assert "unknown key 'pth' in store" in capsys.readouterr().err


def test_a_missing_file_says_who_named_it_and_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "relay.toml"
    assert main(["check-config", "--config", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"configuration error: cannot read config file {missing} (named by --config): "
        "No such file or directory; check the path, or copy config.example.toml there and "
        "edit it\n"
    )
    monkeypatch.setenv("CHRONORELAY_CONFIG", str(tmp_path))
    assert main(["check-config"]) == 2
    assert f"{tmp_path} (named by $CHRONORELAY_CONFIG): " in capsys.readouterr().err


def test_check_config_shows_the_address_serve_binds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_to_all = tmp_path / "open.toml"
    open_to_all.write_text('[server]\nhost = "0.0.0.0"\n')
    assert main(["check-config", "--config", str(open_to_all)]) == 0
    assert "listen:   127.0.0.1:8790 (loopback only: no [auth] keys)\n" in capsys.readouterr().out
    with_key = tmp_path / "key.toml"
    with_key.write_text(
        '[server]\nhost = "0.0.0.0"\n\n[[auth.keys]]\nname = "ci"\nkey = "0123456789abcdef"\n'
    )
    assert main(["check-config", "--config", str(with_key)]) == 0
    assert "listen:   0.0.0.0:8790\n" in capsys.readouterr().out


def test_policy_block_reads_iso_durations_and_rules() -> None:
    text = """
[clock]
mode = "normal"

[[clock.checkins.rules]]
id = "ops_6h"
when = { thread_kind = ["operations", "project"], elapsed_gte = "PT6H" }
then = { ask_for_updates = true }
"""
    config = parse_config(text)
    [rule] = config.clock.checkins.rules
    assert rule.when.elapsed_gte is not None and rule.when.elapsed_gte.total_seconds() == 6 * 3600
    assert rule.when.thread_kind == ["operations", "project"]
    assert config.clock.mode == "normal"
    # The spec's defaults where the file says nothing.
    assert config.clock.store.latest_actions.max_items == 25
    assert config.clock.inference.require_confirmation_for_impactful_actions is True


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            '{ id = "a", when = { elapsed_gte = "2 days" }, then = { offer_recap = true } }',
            "ISO 8601 duration such as 'P1D'",
        ),
        (
            '{ id = "a", when = { elapsed_gte = 3600 }, then = { offer_recap = true } }',
            "ISO 8601 duration",
        ),
        (
            '{ id = "a", when = { thread_kind = "hobby" }, then = { offer_recap = true } }',
            "'project', 'conversation', 'scheduling' or 'operations'",
        ),
        ('{ id = "a", when = { elapsed_gte = "P1D" }, then = { } }', "at least one of"),
        (
            '{ id = "a", when = { elapsed_gt = "P1D" }, then = { offer_recap = true } }',
            "unknown key 'elapsed_gt'",
        ),
    ],
)
def test_bad_rules_say_what_to_write(rule: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f"[clock.checkins]\nrules = [\n    {rule},\n]\n", source="c.toml")
    assert expected in str(caught.value)
    assert "clock.checkins.rules" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"hobby"', "rules[id 'a'].when.thread_kind: Input should be 'project'"),
        ('["project", "hobby"]', "rules[id 'a'].when.thread_kind[entry 2]: Input should be"),
    ],
)
def test_a_value_that_may_be_one_or_a_list_gets_one_problem_about_what_was_written(
    value: str, expected: str
) -> None:
    rule = f'{{ id = "a", when = {{ thread_kind = {value} }}, then = {{ offer_recap = true }} }}'
    with pytest.raises(ConfigError) as caught:
        parse_config(f"[clock.checkins]\nrules = [\n    {rule},\n]\n", source="c.toml")
    message = str(caught.value)
    assert message.startswith("1 problem(s) in the configuration")
    assert expected in message and "valid list" not in message


def test_timestamps_cannot_be_turned_off() -> None:
    with pytest.raises(ConfigError, match="last_message_timestamps"):
        parse_config("[clock.store]\nlast_message_timestamps = false\n")


def test_inference_cannot_be_allowed_beyond_tone() -> None:
    with pytest.raises(ConfigError, match="allow_for_tone_only"):
        parse_config("[clock.inference]\nallow_for_tone_only = false\n")


def test_a_file_that_is_not_utf8_says_where_and_what_to_do(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'[server]\nhost = "\xff"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(latin1)
    assert str(caught.value) == (
        f"{latin1}: not UTF-8 (line 2, byte 18 is 0xff); save the file as UTF-8"
    )
    with_bom = tmp_path / "bom.toml"
    with_bom.write_bytes(b'\xef\xbb\xbf[server]\nhost = "\xff"\n')
    with pytest.raises(ConfigError, match=r"not UTF-8 \(line 2, byte 21 is 0xff\)"):
        load_config(with_bom)


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[server]\nport = 1234\n")
    assert load_config(path).server.port == 1234


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[server]\nport = true\n",
            "line 2: server.port: Input should be a valid integer; write a whole number",
        ),
        (
            '[server]\nshutdown_timeout = "30"\n',
            "line 2: server.shutdown_timeout: Input should be a valid number; write a number",
        ),
        (
            '[clock]\nenabled = "no"\n',
            "line 2: clock.enabled: Input should be a valid boolean; write true or false",
        ),
        ("[server]\napi_commands = 1\n", "server.api_commands: Input should be a valid boolean"),
        ("[cards]\nenabled = 0\n", "cards.enabled: Input should be a valid boolean"),
        ("[server]\nhost = 127\n", "server.host: Input should be a valid string; put the text"),
    ],
)
def test_values_of_the_wrong_type_are_not_converted(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert expected in str(caught.value)


def test_numbers_fill_floats_and_times_may_be_text() -> None:
    config = parse_config('[server]\nshutdown_timeout = 30\n\n[continuity]\nnightly_at = "04:30"\n')
    assert config.server.shutdown_timeout == 30.0
    assert config.continuity.nightly_at == time(4, 30)
    assert parse_config("[continuity]\nnightly_at = 04:30:00\n").continuity.nightly_at == time(
        4, 30
    )


@pytest.mark.parametrize(
    "text",
    [
        '[upstream]\nbase_url = "http://"\n',
        '[upstream]\nbase_url = "https:/api.example/v1"\n',
        '[upstream]\nbase_url = "http://relay:port/v1"\n',
        '[[upstream.fallbacks]]\nbase_url = "x"\n',
        '[[upstream.fallbacks]]\nbase_url = "ftp://files.example"\n',
    ],
)
def test_upstream_urls_need_a_scheme_and_a_host(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert "line 2: upstream." in str(caught.value)
    assert "must be an http:// or https:// URL with a host, e.g. https://api.openai.com/v1" in (
        str(caught.value)
    )


def test_upstream_urls_lose_a_trailing_slash() -> None:
    config = parse_config(
        '[upstream]\nbase_url = "http://127.0.0.1:9/v1/"\n\n'
        '[[upstream.fallbacks]]\nbase_url = "https://[::1]:9/v1/"\n'
    )
    assert config.upstream.base_url == "http://127.0.0.1:9/v1"
    assert config.upstream.fallbacks[0].base_url == "https://[::1]:9/v1"


def test_a_misspelt_cue_activity_points_at_its_key() -> None:
    text = '[clock.inference.cues]\ngym = ["jelly arms"]\ngymm = ["x"]\n'
    [problem] = problems(text)
    assert problem.startswith(
        "c.toml:line 3: clock.inference.cues.gymm: unknown activity 'gymm'; cues are added to "
        "one of: appointment, brb, call, commute,"
    )


def test_a_single_bracket_table_where_a_list_is_meant_says_to_double_them() -> None:
    text = '[clock.checkins.rules]\nid = "a"\nthen = { offer_recap = true }\n'
    assert problems(text) == [
        "c.toml:line 1: clock.checkins.rules: Input should be a valid list; write "
        "[[clock.checkins.rules]], one such table per entry"
    ]
    # A list of plain values is not a list of tables: no such advice.
    [problem] = problems("[clock.inference]\nimpactful_tool_patterns = { send = 1 }\n")
    assert problem.endswith("impactful_tool_patterns: Input should be a valid list")


@pytest.mark.parametrize("table", ["[upstream]", "[[upstream.fallbacks]]"])
def test_an_upstream_gets_a_password_in_its_url_or_an_api_key_not_both(table: str) -> None:
    # aiohttp refuses to send both, so every request would fail as an internal error.
    with pytest.raises(ConfigError) as caught:
        parse_config(f'{table}\nbase_url = "https://me:pw@llm.example/v1"\napi_key = "sk-1"\n')
    assert "line 3: upstream." in str(caught.value)
    assert "api_key: base_url has a user and password and api_key is set too" in str(caught.value)
    assert parse_config(f'{table}\nbase_url = "https://me:pw@llm.example/v1"\n')


def _one_key(users: str) -> str:
    return f'[[auth.keys]]\nname = "shop"\nkey = "shop-key-0123456789"\nusers = {users}\n'


def test_a_keys_users_default_to_any_and_may_be_ids() -> None:
    unscoped = '[[auth.keys]]\nname = "shop"\nkey = "shop-key-0123456789"\n'
    assert parse_config(unscoped).auth.keys[0].users == ["*"]
    assert parse_config(_one_key('["alice", "bo%20smith"]')).auth.keys[0].users == [
        "alice",
        "bo%20smith",
    ]
    assert parse_config(_one_key("[]")).auth.keys[0].users == []


@pytest.mark.parametrize(
    ("users", "expected"),
    [
        ('"alice"', 'users: must be a list in brackets: users = ["alice"], or ["*"] for any'),
        (
            '["api:alice"]',
            "the key 'shop' lists 'api:alice', a user key, but users lists user ids: write 'alice'",
        ),
        ('["bo smith"]', "the key 'shop' lists 'bo smith', which is not a user id"),
    ],
)
def test_a_keys_users_in_another_form_are_refused_naming_the_key(users: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(_one_key(users), source="c.toml")
    assert "c.toml:line 4: auth.keys[entry 1].users" in str(caught.value)
    assert expected in str(caught.value)


def _scoped_key(threads: str) -> str:
    return _one_key('["alice"]') + f"threads = {threads}\n"


def test_a_keys_threads_default_to_any_only_while_its_users_are_any() -> None:
    unscoped = '[[auth.keys]]\nname = "shop"\nkey = "shop-key-0123456789"\n'
    assert parse_config(unscoped).auth.keys[0].threads == ["*"]
    # Listing users leaves other users' threads closed: only its users' own are open.
    assert parse_config(_one_key('["alice"]')).auth.keys[0].threads == []
    assert parse_config(_scoped_key('["team-room"]')).auth.keys[0].threads == ["team-room"]
    assert parse_config(_scoped_key('["*"]')).auth.keys[0].threads == ["*"]
    assert parse_config(_one_key('["*"]') + 'threads = ["*"]\n').auth.keys[0].threads == ["*"]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            _scoped_key('"team-room"'),
            'threads: must be a list in brackets: threads = ["team-room"], or ["*"] for any',
        ),
        (
            _scoped_key('["agent:main:api:victim"]'),
            "the key 'shop' lists 'agent:main:api:victim', a thread key, but threads lists "
            "thread ids as X-Chronorelay-Thread names them: write 'victim'",
        ),
        (
            _scoped_key('["team room"]'),
            "the key 'shop' lists 'team room', which is not a thread id",
        ),
        (
            _one_key('["*"]') + 'threads = ["team-room"]\n',
            "the key 'shop' may speak for any user (users = [\"*\"]), and a user's own thread "
            "has their id, so its threads cannot limit which threads it reaches: list its "
            "users too, or leave threads out",
        ),
    ],
)
def test_a_keys_threads_in_another_form_are_refused_naming_the_key(
    config: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(config, source="c.toml")
    assert "c.toml:line 5: auth.keys[entry 1].threads" in str(caught.value)
    assert expected in str(caught.value)


def test_example_file_shows_every_key_an_api_key_has() -> None:
    """The commented [[auth.keys]] entry shows every key an entry takes."""
    text = EXAMPLE.read_text(encoding="utf-8")
    lines = text.split("# [[auth.keys]]\n", 1)[1].splitlines()
    entry = "\n".join(line.removeprefix("# ") for line in takewhile(_commented_key, lines))
    assert set(tomllib.loads(entry)) == set(ApiKey.model_fields)


def _commented_key(line: str) -> bool:
    return re.match(r"^# [a-z_]+ = ", line) is not None


# Spec 000 §0's policy block, transcribed key by key: "If policy is missing, agents MUST
# default to the above block." The relay's own keys (ttl, normal_rules, the tool guard…)
# are left out; every key the spec names is here with the spec's value.
SPEC_000_POLICY_BLOCK: dict[str, Any] = {
    "enabled": True,
    "mode": "light",
    "cross_channel_tracking": True,
    "store": {
        "last_message_timestamps": True,
        "latest_actions": {
            "enabled": True,
            "max_items": 25,
            "auto_clock_temporal_actions": True,
            "require_explicit_clock_it_for_non_temporal": True,
            "store_quotes": False,
        },
    },
    "checkins": {
        "enabled": True,
        "rules": [
            {
                "id": "project_gap_1d",
                "when": {"thread_kind": "project", "elapsed_gte": "P1D"},
                "then": {"ask_for_updates": True},
            },
            {
                "id": "action_gap_2h",
                "when": {"has_open_action": True, "elapsed_gte": "PT2H"},
                "then": {"allow_hedged_reference": True},
            },
            {
                "id": "long_gap_30d",
                "when": {"elapsed_gte": "P30D"},
                "then": {"offer_recap": True},
            },
        ],
    },
    "inference": {
        "enabled": True,
        "allow_for_tone_only": True,
        "require_confirmation_for_impactful_actions": True,
    },
    "ambiguity_threshold_hours": 4,
}


def _spec_keys_of(actual: Any, spec: Any) -> Any:
    """``actual`` narrowed to the keys ``spec`` names; a rule's ``when`` whole, and its
    ``then`` as the directives it turns on, so a condition or directive added to a
    default rule shows."""
    if isinstance(spec, dict) and "then" in spec:
        then = {name: True for name, value in actual["then"].items() if value}
        return {"id": actual["id"], "when": actual["when"], "then": then}
    if isinstance(spec, dict):
        return {key: _spec_keys_of(actual.get(key), value) for key, value in spec.items()}
    if isinstance(spec, list):
        return [_spec_keys_of(item, want) for item, want in zip(actual, spec, strict=True)]
    return actual


@pytest.mark.parametrize("text", ["", "[clock]\n", "[clock.store.latest_actions]\n"])
def test_a_config_without_policy_gets_spec_000s_policy_block(text: str) -> None:
    clock = parse_config(text).clock.model_dump(mode="json", exclude_none=True)
    assert _spec_keys_of(clock, SPEC_000_POLICY_BLOCK) == SPEC_000_POLICY_BLOCK


def test_action_lifetimes_default_to_spec_000s_ttl_guidance() -> None:
    """§6.4: planned/in_progress 24h; project actions 7-30 days (we keep 7, and never
    beyond 30: ``max_ttl``)."""
    actions = parse_config("").clock.store.latest_actions
    assert actions.ttl == timedelta(hours=24)
    assert actions.project_ttl == timedelta(days=7)
    assert actions.max_ttl == timedelta(days=30)
