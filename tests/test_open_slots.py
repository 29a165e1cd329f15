"""`delimiters.open_slots` (issue 19): the one-shot chains (`call_chain`, `fused_chain`) take a chained open's
`groupdict()` as it is, with no test for groups that did not take part, where `regex_leads.always_groups` proves
from the pattern that each named group takes part in every match (every shipped chained open: Mistral's, Qwen3.5's,
GLM's, ...); an open with a group that may not take part keeps the test. The chains' messages stay the general
loop's and the streaming parser's (`test_fused_chain.py`'s synthetic opens `[J]NAME@N|` and `[T]TAG:X:` have an
optional group; `test_call_chain.py`'s and the cases below).
"""

from __future__ import annotations

import pytest
import regex
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import PIECES, TEMPLATES

from hf_response_templates.delimiters import open_at, open_slots
from hf_response_templates.parser import _loaded
from hf_response_templates.regex_leads import always_groups


@pytest.mark.parametrize(
    "source, names",
    [
        (r"\[TOOL_CALLS\](?P<name>[^\[\]]+?)\[ARGS\]", {"name"}),
        (r"<tool_call>\s*<function=(?P<name>[^>\s]+)>", {"name"}),
        (
            r"((?P<x>b)c)(?P<z>d{0,2})",
            {"x", "z"},
        ),  # (inside a group that takes part; a group of an empty match)
        (r"(?:(?P<x>b))c", {"x"}),
        (r"a(?P<x>b)?(?P<y>c)", {"y"}),  # optional
        (r"a|(?P<x>b)", set()),  # an alternative
        (r"(?:a|(?P<x>b))c", set()),
        (r"(?=(?P<x>b))b", set()),  # a lookaround
        (r"(?P<x>b)+", set()),  # repeated (conservative: it takes part, but a repeat is not read)
        (r"(?P<x>b){0,1}c", set()),
        (r"(?P<x>a)(?P<y>b)(?P=x)", {"x", "y"}),
        (r"(?P<x>\p{L})", set()),  # `regex`-only syntax: unknown
    ],
)
def test_the_groups_that_always_take_part(source, names):
    assert always_groups(regex.compile(source)) == names


def _chained_opens(name: str) -> list:
    """The open delimiters of template `name` that a one-shot chain reads (`call_chain`'s close kind -1, or a
    `fused_chain` try), with their `open_slots`."""
    tpl = _loaded(TEMPLATES[name])
    fast = oneshot_plan(tpl)._fast
    if fast is None:
        return []
    out = [d for d, act in fast[3].items() if act is not None and act[1] == -1 and d.group_slots]
    if fast[0] == 8:
        out += [t[0] for t in fast[1].only if t[1] == 0 and t[5][-1] is not None]
    return out


_CHAINED = {name: _chained_opens(name) for name in sorted(TEMPLATES)}


def test_every_chained_open_of_the_library_takes_its_groups_as_they_are():
    # (fails on a proof that declines them all: each shipped chained open has only groups written at its top level)
    chained = {name: [open_slots(d) for d in ds] for name, ds in _CHAINED.items() if ds}
    assert {"mistral-small-3.2", "ministral-3", "qwen3.5", "glm-4.7", "deepseek-v4"} <= set(chained)
    assert all(slots == [2] * len(slots) for slots in chained.values()), chained


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_an_open_whose_groups_always_take_part_matches_with_every_group(data):
    # the proof against the regex: at every position of a text of the template's pieces, a match of the open has
    # every named group, so `open_at` gives the same with the test as without it
    name = data.draw(st.sampled_from(sorted(n for n, ds in _CHAINED.items() if ds)))
    d = data.draw(st.sampled_from(_CHAINED[name]))
    pieces = PIECES[name] + [
        d.source.replace("\\", "")[:12],
        "name",
        "f",
        "x y",
        "[",
        "]",
        "{",
        "<",
        ">",
        " ",
        "\n",
    ]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=10)))
    slots = open_slots(d)
    for at in range(len(text) + 1):
        m = d.fast.match(text, at)
        if m is not None and slots == 2:
            assert None not in m.groupdict().values()
        assert open_at(d.fast.match, text, at, slots) == open_at(d.fast.match, text, at, 1)


#: A chained open with a group that may not take part (`[CALL_ID]ID` optional): `open_slots` 1, and its calls without
#: an id give the general loop's message (a `groupdict()` taken as it is would hold `"id": None`).
_OPTIONAL = {
    "start_anchor": "[/INST]",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\[TOOL_CALLS\](?P<name>[^\[\]]+?)(?:\[CALL_ID\](?P<id>[a-z0-9]+))?\[ARGS\]",
            "close_pattern": r"(?=\[TOOL_CALLS\])|</s>",
            "repeats": True,
            "content": "json",
            "transform": {
                "id": "{id}",
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "</s>", "content": "text"},
    },
}


def test_an_open_with_an_optional_group_keeps_the_test():
    (d,) = [t[0] for t in oneshot_plan(_loaded(_OPTIONAL))._fast[1].only if t[1] == 0]
    assert always_groups(d.pattern) == {"name"} and open_slots(d) == 1


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g[ARGS]{}</s>',
        '[TOOL_CALLS]f[CALL_ID]a1[ARGS]{"a": 1}[TOOL_CALLS]g[ARGS]{}[TOOL_CALLS]h[CALL_ID]b2[ARGS][]</s>',
        'Hi[TOOL_CALLS]f[ARGS]{}[TOOL_CALLS]g[CALL_ID]c[ARGS]{"b": [1]}</s>',
    ],
)
def test_calls_without_the_optional_group_equal_the_general_loop(text):
    for prefix in ("", "[INST]x[/INST]"):
        assert_fast_loop_agrees(_OPTIONAL, text, prefix)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "[TOOL_CALLS]f[ARGS]",
                "[TOOL_CALLS]g[CALL_ID]a1[ARGS]",
                "[TOOL_CALLS]",
                "[CALL_ID]",
                "[ARGS]",
                "{}",
                '{"a": 1}',
                "[1]",
                "{",
                "</s>",
                "x",
                " ",
            ]
        ),
        max_size=10,
    ).map("".join)
)
def test_the_optional_group_chain_equals_the_general_loop_and_the_state_machine(text):
    assert_fast_loop_agrees(_OPTIONAL, text, "[INST]x[/INST]")
