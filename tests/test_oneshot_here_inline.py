"""The one-shot loop's idle scan of kind 4 (gpt-oss's): `OneShotPlan._fast_run` reads the idle watch's
`here_scan.HereScan` itself (every regex tried at the position, the longest match taken, the lowest rank among
equals, when it is not zero-width nor too long), and calls `Watch.scan_end` for everything else: no match at the
position, a zero-width or too long one, the end of the text where a zero-width delimiter may match, and every
position of an idle watch that has no `HereScan` (`here_scan.PLAIN`: one with literals beside its regexes). The
messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response
from hf_response_templates.here_scan import PLAIN, HereScan

#: Idle regexes of no fixed lead (`\s*`): `a` and `b` match equally long at `<x>y` (the lower rank, `a`, wins),
#: `c` may match longer than `MAX_DELIMITER_LENGTH` (no delimiter there), `z` with zero width before `<z>`, and the
#: implicit field's close is a regex too. `_PLAIN`: the same with a literal open beside them (no `HereScan`).
_HERE = {
    "start_anchor": "<s>",
    "fields": {
        "b": {"open_pattern": r"\s*<x>(?:y)?", "close": "</x>", "repeats": True},
        "a": {"open_pattern": r"\s*<x>y?z?", "close": "</x>", "repeats": True},
        "c": {"open_pattern": r"\s*<w>[^<]*<v>", "close": "</x>", "repeats": True},
        "z": {"open_pattern": r"\s*(?=<z>)", "close": "</z>", "repeats": True},
        "content": {"close_pattern": r"\s*<end>"},
    },
}
_PLAIN = {
    "start_anchor": "<s>",
    "fields": {**_HERE["fields"], "d": {"open": "<d>", "close": "</d>", "repeats": True}},
}
_PIECES = [
    "<x>",
    "y",
    "z",
    "</x>",
    "<w>",
    "<v>",
    "q" * 300,
    "<z>",
    "</z>",
    "<d>",
    "</d>",
    "<end>",
    " ",
    "\n",
    "t",
]


def test_the_idle_scans_are_the_inlined_ones():
    here = oneshot_plan(_HERE)
    assert (
        here._fast[0] == 4
        and isinstance(here._fast[1], HereScan)
        and here._fast[1].watch is here._tpl.idle_watch
    )
    assert here._fast[2] == here._tpl.idle_watch.scan_end
    plain = oneshot_plan(_PLAIN)
    assert (
        plain._fast[0] == 4 and plain._fast[1] is PLAIN and plain._fast[2] == plain._tpl.idle_watch.scan_end
    )
    gpt = oneshot_plan(TEMPLATES["gpt-oss"])
    assert gpt._fast[0] == 4 and isinstance(gpt._fast[1], HereScan)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<x>y1</x> <x>yz2</x>", {"a": ["1", "2"]}),  # (equally long: the lower rank, `a`'s; longer: `a`)
        ("<z>1</z>t<end>", {"z": ["<z>1"], "content": "t"}),  # (zero width at the position: `Watch.scan_end`)
        (
            "<w>" + "q" * 600 + "<v>1<x>2</x>",
            {"content": "<w>" + "q" * 600 + "<v>1", "a": ["2"]},
        ),  # (too long)
        ("t <x>1</x>", {"content": "t", "a": ["1"]}),  # (no match at the position: `Watch.scan_end`)
    ],
)
def test_each_way_of_the_inlined_scan(text, expected):
    plan = oneshot_plan(_HERE)
    assert plan._fast_run(text, "<s>", None) == plan._general(text, "<s>", None) == expected
    assert parse_response(text, _HERE, prefix="<s>") == expected


@settings(max_examples=1500, deadline=None)
@given(
    st.sampled_from([_HERE, _PLAIN]),
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
    st.sampled_from(["", "<s>", "<s> "]),
)
def test_the_inlined_scan_equals_the_general_loop_and_the_state_machine(tpl, text, prefix):
    assert_fast_loop_agrees(tpl, text, prefix)


_HARMONY = [
    "<|start|>assistant",
    "<|channel|>",
    "final",
    "analysis",
    "commentary",
    "<|message|>",
    "<|constrain|>",
    "json",
    " to=",
    "functions.f",
    " ",
    "\n",
    "<|end|>",
    "<|call|>",
    "<|return|>",
    "<|channel|>final<|message|>",
    "<|channel|>analysis<|message|>",
    " to=functions.f<|channel|>commentary",
    "<|channel|>commentary to=functions.f ",
    '{"a": 1}',
    "Hi",
    "<",
    "x" * 300,
]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_HARMONY), max_size=14).map("".join))
def test_gpt_oss_equals_the_general_loop_and_the_state_machine(text):
    assert_fast_loop_agrees(TEMPLATES["gpt-oss"], text, "<|start|>user<|message|>Hi<|end|><|start|>assistant")
