"""Key lines in TOML documents: what config errors point at."""

from __future__ import annotations

import tomllib
from typing import Any

from proxy.toml_source import TomlSource, key_lines

TRICKY = '''# [not.a.table] = 1
title = """
[fake]
fake = 1 ""\"""
"quoted.key" = 'x # not a comment'
dotted.inner = [ # a comment
    1, [2, "]"],
    { a = 1, b.c = "}" },
]

[[fruits]]
name = 'apple'

[fruits.physical]
colour = "red"

[[fruits.varieties]]
name = "red delicious"

[[fruits]]
name = """banana"""

[[fruits.varieties]]
name = "plantain"
'''


def leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, (*path, str(i)))]
    return [path]


def test_every_value_tomllib_reads_has_a_line() -> None:
    lines = key_lines(TRICKY)
    assert [leaf for leaf in leaves(tomllib.loads(TRICKY)) if leaf not in lines] == []
    assert ("fake",) not in lines and ("not",) not in lines


def test_lines_of_keys_tables_and_elements() -> None:
    lines = key_lines(TRICKY)
    assert lines[("title",)] == 2
    assert lines[("quoted.key",)] == 5
    assert lines[("dotted", "inner", "0")] == 7
    assert lines[("dotted", "inner", "2", "b", "c")] == 8
    assert lines[("fruits", "0")] == 11
    assert lines[("fruits", "0", "physical", "colour")] == 15
    assert lines[("fruits", "0", "varieties", "0", "name")] == 18
    assert lines[("fruits", "1", "name")] == 21
    assert lines[("fruits", "1", "varieties", "0", "name")] == 24


def test_a_missing_key_is_placed_at_its_table_and_elements_are_named() -> None:
    text = '[[rules]]\nid = "night"\n\n[[rules]]\nwhen = 1\n'
    source = TomlSource(text, tomllib.loads(text))
    assert source.line(("rules", "1", "then")) == 4
    assert source.key_line(("rules", "1", "then")) is None
    assert source.line(("elsewhere",)) is None
    assert source.name(("rules", "0", "when", "literal['a','b']")) == "rules[id 'night'].when"
    assert source.name(("rules", "1", "when")) == "rules[entry 2].when"
