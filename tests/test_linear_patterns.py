"""The six shipped patterns that were quadratic per match attempt, rewritten linear (issue 19).

`regex_safety.backtracking_degree` found two loops competing for the same characters in each:
DeepSeek-R1's and GLM's `(?P<name>[^\\n<]+?)\\s*` (a space can end the name or start the `\\s*`), gpt-oss's
`(?P<name>[^\\s<]+)[^<]*` (both take a name character) and Llama 4's `\\s*;?\\s*` (without the `;`, both
take the spaces). Each was rewritten so that the two loops cannot share a character, keeping exactly the
matches:

* `[^\\n<]+?\\s*X` -> `[^\\n<](?:[^\\n<]*?[^\\s<])??\\s*X`: the lazy name ends at the first place the rest
  matches; a name of two or more characters ending in a space never is that place (one character less
  matches too: the `\\s*` takes the space), so the name is one character or ends in a non-space, tried in
  the same order (shortest first);
* `(?P<name>[^\\s<]+)[^<]*T` (T starts with `<`) -> `(?P<name>[^\\s<]+)(?:\\s[^<]*)?T`: the greedy name
  takes the whole run of name characters; `[^<]*` then always reaches the same `<`, so a shorter name
  never matches where the longest failed; after the longest name comes a space, a `<` or the end (the `[^<]*`
  both alternatives shared moved into each first: `(?:A|B)C` tries what `(?:AC|BC)` does, in the same order);
* `\\s*;?\\s*` -> `\\s*(?:;\\s*)?`: the same texts (spaces, an optional `;`, spaces), one way each.

Below: the old and the shipped patterns give the same spans, groups and partial matches on texts made of
the pieces the patterns care about (property tests), and the rewritten ones run in linear time where the old
ones were quadratic. (`test_regex_safety.test_every_shipped_pattern_is_linear`: no shipped pattern is quadratic.)
"""

from __future__ import annotations

import json
import time

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scaled

from hf_response_templates.delimiters import compile_regex
from hf_response_templates.library import templates_dir
from hf_response_templates.regex_safety import backtracking_degree, unsafe_reason


def _shipped(name: str, field: str, key: str) -> str:
    data = json.loads((templates_dir() / f"{name}.json").read_text(encoding="utf-8"))
    return data["fields"][field][key]


#: (template, field, key, the pattern as shipped before issue 19, pieces of text to build inputs from)
REWRITES = [
    ("deepseek-r1", "tool_calls", "open_pattern",
     r"(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>(?P<type>[^<]*?)<｜tool▁sep｜>(?P<name>[^\n<]+?)\s*```json",
     ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "get_weather", "f", " ", "  ",
      "\n", "\t", "```json", "```", "`", "json", "<", "x y"]),
    ("glm-4.6", "tool_calls", "open_pattern",
     r"<tool_call>(?P<name>[^\n<]+?)\s*(?=<arg_key>|</tool_call>)",
     ["<tool_call>", "get_weather", "f", " ", "  ", "\n", "\t", "<arg_key>", "</tool_call>", "<", "a b", "</"]),
    ("glm-4.7", "tool_calls", "open_pattern",
     r"<tool_call>(?P<name>[^\n<]+?)\s*(?=<arg_key>|</tool_call>)",
     ["<tool_call>", "get_weather", "f", " ", "  ", "\n", "\t", "<arg_key>", "</tool_call>", "<", "a b", "</"]),
    ("gpt-oss", "tool_calls", "open_pattern",
     r"(?:<\|start\|>assistant)?(?:\s*to=(?:functions\.)?(?P<name>[^\s<]+)\s*<\|channel\|>(?:commentary|analysis)|<\|channel\|>(?:commentary|analysis)\s+to=(?:functions\.)?(?P<name>[^\s<]+))[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>",
     ["<|start|>assistant", " to=", "to=", "functions.", "get_weather", "f", " ", "\n", "<|channel|>", "commentary",
      "analysis", " json", "<|constrain|>", "json", "<|message|>", "<", "x"]),
    ("llama4-json", "tool_calls", "open_pattern",
     r'^\s*(?:<\|python_start\|>\s*)?(?=\{\s*"name"\s*:)|(?<=\})\s*;?\s*(?=\{\s*"name"\s*:)',
     ["{", "}", ";", " ", "\n", '"name"', ":", "<|python_start|>", '{"name": "f"}', "x", ";;"]),
    ("llama4-json", "tool_calls", "close_pattern",
     r'(?<=\})(?=\s*;?\s*\{\s*"name"\s*:)|\s*<\|python_end\|>|\s*<\|eot\|>|\s*<\|eom\|>',
     ["{", "}", ";", " ", "\n", '"name"', ":", "<|python_end|>", "<|eot|>", "<|eom|>", "<|eo", "x", ";;"]),
]
IDS = [f"{name}.{key}" for name, _f, key, _old, _pieces in REWRITES]


def _result(m: regex.Match | None) -> tuple | None:
    return None if m is None else (m.span(), m.groupdict(), m.partial)


@pytest.mark.parametrize("name, field, key, old, pieces", REWRITES, ids=IDS)
def test_the_rewrite_is_linear_and_the_old_pattern_was_not(name, field, key, old, pieces):
    new = _shipped(name, field, key)
    assert new != old
    assert backtracking_degree(old) == 2
    assert backtracking_degree(new) == 1, unsafe_reason(new)


@pytest.mark.parametrize("name, field, key, old, pieces", REWRITES, ids=IDS)
@settings(max_examples=scaled(50))  # four calls of two patterns at every position: ~40 ms an example
@given(data=st.data())
def test_the_rewrite_matches_what_the_old_pattern_did(name, field, key, old, pieces, data):
    before, after = compile_regex(old), compile_regex(_shipped(name, field, key))
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=24)))
    for pos in range(len(text) + 1):
        for partial in (False, True):
            for call in ("search", "match"):
                got = getattr(after, call)(text, pos, partial=partial)
                assert _result(got) == _result(getattr(before, call)(text, pos, partial=partial)), (call, partial)


#: For each rewrite, a text (and a position) where the old pattern's match attempt is quadratic and fails.
HOSTILE = {
    "deepseek-r1.open_pattern": lambda n: ("<｜tool▁call▁begin｜>function<｜tool▁sep｜>f" + " " * n + "x", 0),
    "glm-4.6.open_pattern": lambda n: ("<tool_call>f" + " " * n + "x<x>", 0),
    "glm-4.7.open_pattern": lambda n: ("<tool_call>f" + " " * n + "x<x>", 0),
    "gpt-oss.open_pattern": lambda n: ("<|channel|>commentary to=" + "f" * n + "<|x|><|message|>", 0),
    "llama4-json.open_pattern": lambda n: ("}" + " " * n + "x", 1),
    "llama4-json.close_pattern": lambda n: ("}" + " " * n + "x", 1),
}


def _cost(pattern: regex.Pattern, text: str, pos: int, repeats: int) -> float:
    """CPU seconds per character of one failing match attempt (best of 5: other processes do not count)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(repeats):
            assert pattern.match(text, pos) is None
        best = min(best, time.process_time() - start)
    return best / repeats / len(text)


@pytest.mark.parametrize("name, field, key, old, pieces", REWRITES, ids=IDS)
def test_the_rewrite_scales_linearly_where_the_old_pattern_was_quadratic(name, field, key, old, pieces):
    make = HOSTILE[f"{name}.{key}"]
    new, before = compile_regex(_shipped(name, field, key)), compile_regex(old)
    # cost per character at 20k at most 4x that at 2k: a quadratic attempt gives 10x
    costs = [_cost(new, *make(n), repeats=20) for n in (2_000, 20_000)]
    assert costs[1] <= 4 * costs[0], costs
    # the input does hit the old pattern's quadratic case (shorter texts: it is slow)
    old_costs = [_cost(before, *make(n), repeats=1) for n in (300, 3_000)]
    assert old_costs[1] > 4 * old_costs[0], old_costs
