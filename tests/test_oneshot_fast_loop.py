"""The one-shot plan's two-state loop (`OneShotPlan._fast_run`, issue 19): for the templates of the common
shape (an idle watch, close watches without opens, no value ends, no `report_as`) `parse_response` reads
with it, and it gives exactly what the
general loop (`OneShotPlan._general`) and the streaming parser give: the same message, or None (the state
machine) for the same responses.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES, _streamed, _without_ids, case

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.library import list_templates
from hf_response_templates.tools import tool_schemas

#: The shipped templates the general loop reads (the others take the two-state loop): none since `report_as` fields
#: (Cohere's citations) take it too (tests/test_oneshot_report_marks.py).
GENERAL: set[str] = set()

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "integer"},
                                         "days": {"type": "integer"}}}}},
]


_plan = oneshot_plan


@pytest.mark.parametrize("name", list_templates())
def test_the_two_state_loop_is_chosen_for_the_templates_of_its_shape(name):
    plan = _plan(TEMPLATES[name])
    assert (plan._fast is None) == (name in GENERAL)
    assert plan.run == (plan._general if name in GENERAL else plan._fast_run)


@settings(max_examples=800, deadline=None)
@given(case(), st.booleans())
def test_the_two_state_loop_equals_the_general_loop(c, with_tools):
    name, prefix, generation, chunks = c
    plan = _plan(TEMPLATES[name])
    if plan._fast is None:
        return
    schemas = tool_schemas(TOOLS) if with_tools else None
    got = plan._fast_run(generation, prefix, schemas)
    general = plan._general(generation, prefix, schemas)
    assert (got is None) == (general is None)
    if got is not None:
        assert _without_ids(got) == _without_ids(general)
        streamed, errors = _streamed(TEMPLATES[name], prefix, chunks, tools=TOOLS if with_tools else None)
        assert not errors and _without_ids(got) == _without_ids(streamed)


#: Every store and scan the two-state loop has: a `join` field and a repeating field with defaults, an open
#: and a close with named groups, zero-width opens and closes (a lookahead), an explicit field without a close
#: delimiter, a regex close watch (`LeadScan`), literal closes, a JSON field with a transform.
_SHAPES = {"start_anchor": "<s>", "defaults": {"role": "assistant", "notes": "pre", "calls": [], "x": ""}, "fields": {
    "notes": {"open": "<n>", "close": "</n>", "repeats": True, "join": "|"},
    "joined": {"open": "<j>", "close": "</j>", "repeats": True, "join": ", "},
    "calls": {"open_pattern": r"<c name=(?P<name>\w+)>", "close_pattern": r"</c(?P<tail>\d*)>|(?=<n>)",
              "repeats": True, "content": "json", "transform": {"name": "{name}", "args": "{content}"}},
    "list": {"open": "<l>", "close": "</l>", "repeats": True},
    "r": {"open": "<r>", "close_pattern": r"</r>|(?=<c )"},
    "x": {"open_pattern": r"(?=\{)", "close": "}"},
    "o": {"open": "<o>"},
    "content": {"close": "<e>"},
}}
#: The same with a required field (a response without it goes to the state machine).
_REQUIRED = {**_SHAPES, "fields": {**_SHAPES["fields"], "list": {**_SHAPES["fields"]["list"], "optional": False}}}
_PIECES = ["<n>", "</n>", "<j>", "</j>", "<c name=f>", "<c name=g>", "</c>", "</c7>", "<l>", "</l>", "<r>",
           "</r>", "<o>", "<e>", "{", "}", '{"a": 1}', "[1, 2]", "{bad", " ", "\n", "text", "<", "c", "<c "]


def test_the_synthetic_templates_take_the_two_state_loop():
    assert _plan(_SHAPES)._fast is not None and _plan(_REQUIRED)._fast is not None


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join), st.sampled_from(["", "<s>", "<s> <n>"]),
       st.sampled_from([_SHAPES, _REQUIRED]))
def test_every_store_and_scan_of_the_two_state_loop(text, prefix, tpl):
    assert_fast_loop_agrees(tpl, text, prefix)


@pytest.mark.parametrize("text, expected", [
    ('a<n>x</n>b<c name=f>{"a":1}</c3><c name=g>[1]<n>y</n><r>t<c name=h>{}</c> {k}<o>rest',
     {"role": "assistant", "notes": "pre|x|y", "content": "a\nb", "r": "t", "x": "{k", "o": "rest",
      "calls": [{"name": "f", "args": {"a": 1}}, {"name": "g", "args": [1]}, {"name": "h", "args": {}}]}),
    ("<j>a</j><j>b</j><l>1</l><l>2</l> <r>x</r>{a}{b}<e>zz",
     {"role": "assistant", "notes": "pre", "calls": [], "joined": "a, b", "list": ["1", "2"], "r": "x",
      "x": "{a\n{b"}),
    ("{", {"role": "assistant", "notes": "pre", "calls": [], "x": "{"}),
    ("<c name=f>[1]</c><c name=g>{}</c7> <j></j>", {"role": "assistant", "notes": "pre", "x": "",
                                                    "calls": [{"name": "f", "args": [1]}, {"name": "g", "args": {}}]}),
    ("<o> <o>x", {"role": "assistant", "notes": "pre", "calls": [], "x": "", "o": "<o>x"}),
])
def test_the_two_state_loop_reads_each_shape(text, expected):
    assert _plan(_SHAPES)._fast_run(text, "", None) == expected
    assert parse_response(text, _SHAPES, prefix="") == expected


def test_parse_response_sees_a_template_dict_edited_in_place():
    # (`parse_response` looks the dict up in `load_template`'s identity cache itself)
    import copy

    spec = copy.deepcopy(TEMPLATES["hermes3"])
    assert parse_response("Hi<|im_end|>", spec, prefix="") == {"role": "assistant", "content": "Hi"}
    spec["defaults"]["role"] = "model"
    assert parse_response("Hi<|im_end|>", spec, prefix="") == {"role": "model", "content": "Hi"}
    spec["fields"]["content"]["close"] = "<end>"
    assert parse_response("Hi<end>x", spec, prefix="") == {"role": "model", "content": "Hi"}
    with pytest.raises(Exception, match="close"):
        spec["fields"]["content"]["close"] = ""
        parse_response("Hi", spec, prefix="")


#: Late watches (a delimiter that matches at offset 0 only), zero-width opens and closes at offset 0, a
#: watch only `Watch.scan_end` reads (a regex without a fixed lead), named groups; and the same without an
#: implicit field (text outside every region goes to the state machine).
_LATE = {"start_anchor": "<s>", "fields": {
    "call": {"open_pattern": r"^\s*(?=\{)|<call>", "close_pattern": r"(?<=\})\s*(?=\Z|<e>)|</call>",
             "content": "json", "repeats": True},
    "head": {"open_pattern": r"\A(?=#)", "close_pattern": r"\A#!|\n"},
    "t": {"open_pattern": r"\s*\[(?P<k>\w+)\]", "close_pattern": r"\s*\[/\w*\]", "repeats": True,
          "transform": {"k": "{k}", "v": "{content}"}},
    "v": {"open": "<v>", "close_pattern": r"</v>|\s*\[/\]", "content": "json", "repeats": True,
          "content_args": {"trailing": "stream"}},
    "u": {"open": "<u>", "close": "</u>", "content": "json", "content_args": {"trailing": "stream"}},
    "w": {"open": "<w>", "content": "json", "repeats": True, "content_args": {"trailing": "stream", "separator": ";"}},
    "content": {"close": "<e>"},
}}
_OUTSIDE = {**_LATE, "fields": {k: v for k, v in _LATE["fields"].items() if k != "content"}}
_LATE_PIECES = ['{"k": 1}', "<v>", "</v>", "<u>", "</u>", "<w>", ";", "[1]", '"s"', "#!", "<call>", "</call>", "#", "\n", " ", "<e>", "[a]", "[/a]", "[/]", "x", "{", "}", "]"]


def test_late_watches_value_ends_scan_end_watches_and_no_implicit_field_take_the_two_state_loop():
    for tpl in (_LATE, _OUTSIDE):
        fast = _plan(tpl)._fast
        assert fast is not None
        # a late idle watch, a close watch with a late one, a watch `Watch.scan_end` reads
        assert fast[10] is not None and fast[11] is not None and fast[0] == 4
    assert _plan(_OUTSIDE)._fast[4] is None  # no implicit field


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_LATE_PIECES), max_size=12).map("".join), st.sampled_from(["", "<s>", "<s>x"]),
       st.sampled_from([_LATE, _OUTSIDE]))
def test_late_watches_and_text_outside_every_region_in_the_two_state_loop(text, prefix, tpl):
    assert_fast_loop_agrees(tpl, text, prefix)


@pytest.mark.parametrize("tpl, text, expected", [
    (_LATE, ' {"k": 1}<e>', {"call": [{"k": 1}]}),
    (_LATE, ' {"k": 1} [a] x [/a]<e>', None),  # (the call's close is a lookahead for the end or `<e>`)
    (_LATE, "hi [a] x [/a] <call>{}</call><e>", {"content": "hi", "t": [{"k": "a", "v": "x"}], "call": [{}]}),
    # (a value-end region ends where its value does: the close delimiter after it is the implicit field's text)
    (_LATE, '<v>{"k": 1} x</v><v> [1, 2]</v> <w>1; "s" ;[1] y',
     {"v": [{"k": 1}, [1, 2]], "content": "x</v>\n</v>\ny", "w": [[1, "s", [1]]]}),
    (_LATE, '<v>{"k": 1} [/]<v>[1, 2]', {"v": [{"k": 1}, [1, 2]], "content": "[/]"}),
    (_LATE, '#h\n{"k": 2}', {"head": "#h", "content": '{"k": 2}'}),
    (_LATE, '#!h\n#!', {"content": 'h\n#!'}),  # (the early close watch at offset 0, the late one past it)
    (_OUTSIDE, ' [a]1[/] <call>{}</call> ', {"call": [{}], "t": [{"k": "a", "v": "1"}]}),
    (_OUTSIDE, ' [a]1[/] stray', None),
])
def test_the_two_state_loop_reads_late_and_outside_shapes(tpl, text, expected):
    assert _plan(tpl)._fast_run(text, "", None) == expected


@pytest.mark.parametrize("defaults", [{}, {"t": "pre"}])
@pytest.mark.parametrize("text", ["<t> </t>", "<t></t><t>two</t>", "<t>one</t><t> </t>", "<t> </t><t> </t>x",
                                  "<t>one</t><t></t><t>two</t>"])
def test_empty_values_of_a_one_value_text_field(defaults, text):
    # (the two-state loop skips them where they do not show: not in the defaults)
    tpl = {"start_anchor": "<s>", "defaults": defaults,
           "fields": {"t": {"open": "<t>", "close": "</t>"}, "content": {"close": "<e>"}}}
    parser = ResponseParser(tpl, "")
    parser.feed(text)
    streamed, _ = parser.finalize()
    assert _plan(tpl)._fast_run(text, "", None) == streamed


_ANCHOR_TEXTS = ["deepseek-r1", "deepseek-v3.1", "deepseek-v4", "gemma4", "glm-4.7", "hunyuan-a13b", "ministral-3"]


@pytest.mark.parametrize("name", _ANCHOR_TEXTS)
def test_start_anchors_of_fixed_texts_are_cut_in_the_two_state_loop(name):
    tpl = load_template(TEMPLATES[name])
    texts = tpl.anchor_texts
    assert texts is not None and _plan(TEMPLATES[name])._anchor_lit is None
    prefixes = ["", "no anchor here", *(f"u: a {t} b " for t in texts), "".join(texts) + " tail",
                "".join(reversed(texts)) + "x", *(t + t[:3] for t in texts)]
    for prefix in prefixes:
        for text in ["Hi there", " more ", ""]:
            got = _plan(TEMPLATES[name])._fast_run(text, prefix, None)
            assert got == _plan(TEMPLATES[name])._general(text, prefix, None)
            assert got == _streamed(TEMPLATES[name], prefix, [text])[0]


_IDLE_TEMPLATES = ["llama3", "llama3.2-pythonic", "phi-4-mini", "llama4-json", "qwen3"]
_LEADS = st.text(alphabet=" \n\t\u3000\x85ab{<", max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_IDLE_TEMPLATES), _LEADS, st.sampled_from(["", "x", " x ", "\n\nHi there", "{", "<"]),
       st.sampled_from(["", "<|eot_id|>", "<|eot|>", "<|end|>", "<|im_end|>", "functools[]"]))
def test_text_before_a_delimiter_that_starts_with_whitespace_or_not(name, lead, body, end):
    # (the idle state's test of whether the text before a delimiter is whitespace alone: its first character first,
    # then the whole text only where that one is whitespace; fails where only the first character is looked at)
    assert_fast_loop_agrees(TEMPLATES[name], lead + body + end, "")
