"""The one-shot two-state loop's `LeadSearch` closes (`plan_shape._searched`, close kind 3, issue 19): a close watch
whose fixed texts share their first character (Qwen3.5's, GLM-4.7's and Seed-OSS's reasoning close
`</think>|(?=<tool_call>)|(?=<think>)`, Qwen3-Coder's call close `</function>\\s*</tool_call>|</tool_call>|...`) is one
`re` search from the region's start in `OneShotPlan._fast_run`, its find read from a table (a literal, a zero-width
match, a regex matched there), `LeadSearch.end` deciding the rest from that find (no match there, a zero-width match
skipped at `zw`, several delimiters or captures at one text); a field without a close watch searches with
`_no_close`, which finds nothing. The messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response
from hf_response_templates.plan_shape import _no_close


def _closes(plan):
    # each open's close: `(kind, search, table)` (`_fast_shape`'s `opens`; of calls read one after another by
    # `call_chain.chain_search_run`, the kind-3 close that run reads)
    return {d.field: (3, *act[2].searched) if act[1] == -1 and hasattr(act[2], "searched") else act[1:]
            for d, act in plan._fast[3].items() if act is not None}


@pytest.mark.parametrize(
    "name, field",
    [
        ("qwen3.5", "reasoning_content"),
        ("glm-4.7", "reasoning_content"),
        ("seed-oss", "reasoning_content"),
        ("qwen3-coder", "tool_calls"),
    ],
)
def test_the_templates_leadsearch_closes_are_read_in_the_loop(name, field):
    # (fails on the code before `_searched`: these closes were kind 2, `LeadSearch.end` with a finds list)
    kind, search, table = _closes(oneshot_plan(TEMPLATES[name]))[field]
    assert kind == 3 and search == table[0].search and len(table) == table[0].width + 1


#: `r`: a literal and two zero-width lookaheads (Qwen3.5's reasoning close); `t`: regexes matched at their texts
#: (Qwen3-Coder's), one of them zero-width where `</t>` is followed by `!`; `g`: captures (`LeadSearch.end`'s); `z`: a
#: zero-width open and close, the close skipped where it fired (`y`: the same of a regex close); `n`: no close.
_SEARCHED = {
    "start_anchor": "<s>",
    "fields": {
        "r": {"open": "<r>", "close_pattern": r"</r>|(?=<t>)|(?=<r>)", "repeats": True, "join": ""},
        "t": {
            "open": "<t>",
            "close_pattern": r"</t>\s*</x>|</x>|</t>(?=\s*(?:<[rtgn]|\Z))|(?=</t>!)",
            "repeats": True,
        },
        "g": {
            "open": "<g>",
            "close_pattern": r"</g(?P<k>\d)>|</h>",
            "repeats": True,
            "transform": {"k": "{k}", "v": "{content}"},
        },
        "z": {"open_pattern": r"(?=#)", "close_pattern": r"(?=#a)|#b", "repeats": True},
        "y": {"open_pattern": r"(?=%)", "close_pattern": r"%%|(?=%q)(?:%qq)?", "repeats": True},
        "n": {"open": "<n>"},
        "content": {"close": "<e>"},
    },
}
_PIECES = [
    "<r>",
    "</r>",
    "<t>",
    "</t>",
    "</t>!",
    "</x>",
    " ",
    "<g>",
    "</g1>",
    "</g>",
    "</h>",
    "<n>",
    "#",
    "#a",
    "#b",
    "%",
    "%q",
    "%%",
    "%qq",
    "<e>",
    "<",
    "x",
    "\n",
]


def test_the_synthetic_template_has_every_table_entry():
    closes = _closes(oneshot_plan(_SEARCHED))
    assert {k: v[0] for k, v in closes.items()} == {"r": 3, "t": 3, "g": 3, "z": 3, "y": 3, "n": 3}
    widths = {k: sorted(w for _, w in v[2][1:]) for k, v in closes.items() if k != "n"}
    assert widths == {"r": [0, 0, 4], "t": [-1, -1], "g": [-3, -3], "z": [0, 2], "y": [-1, 2]}
    assert closes["n"] == (3, _no_close, None)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<r>a</r>b<r>c<t>d</t></x>e<e>", {"r": "ac", "t": ["d"], "content": "b\ne"}),
        (
            "<r>a<r>b<t>c</t> <g>d</t>!</g2>f<e>",
            {"r": "ab", "t": ["c"], "g": [{"k": "2", "v": "d</t>!"}], "content": "f"},
        ),
        # (`</t>!`: the regex matches there with zero width, which `LeadSearch.end` takes)
        ("<t>a</t>!b</x><t>c</t>x</t><n>d<e>", {"t": ["a", "c</t>x"], "content": "</t>!b</x>", "n": "d<e>"}),
        ("<g>a</g1><g>b</g</g3>", {"g": [{"k": "1", "v": "a"}, {"k": "3", "v": "b</g"}]}),
        # (the close of `z` fires with zero width at the first `#a`, where `z` then opens again: skipped there, the
        # region runs to `#b`; at the second, `z` opens, closes at once, and cannot open again: the content's)
        ("#x#a#b#ay", {"z": ["#x", "#a", ""], "content": "#ay"}),
        # (the same of `y`, whose regex close matches with zero width at `%q`)
        ("%x%q%%", {"y": ["%x", "%q"]}),
    ],
)
def test_searched_closes_read_each_shape(text, expected):
    assert oneshot_plan(_SEARCHED)._fast_run(text, "", None) == expected
    assert parse_response(text, _SEARCHED, prefix="") == expected


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
    st.sampled_from(["", "<s>", "<s><r>", "<s>#"]),
)
def test_searched_closes_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_SEARCHED, text, prefix)


_QWEN = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "<function=g h>",
    "</function>",
    "<parameter=a>",
    "1",
    "</parameter>",
    "<|im_end|>",
    "\n",
    " ",
    "x",
    "<",
]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(["qwen3.5", "qwen3-coder", "glm-4.7"]),
    st.lists(st.sampled_from(_QWEN), max_size=14).map("".join),
)
def test_qwen_and_glm_closes_equal_the_general_loop_and_the_state_machine(name, text):
    prefix = "<|assistant|>" if name.startswith("glm") else "<|im_start|>assistant\n"
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix + "<think>\n")
