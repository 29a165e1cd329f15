"""The one-shot loop's Llama paths (issue 19): an idle watch whose open regex matches at offset 0 only, tried
there inline (`plan_shape._start`, kind 5: Llama 3's `^\\s*(?:<|python_tag|>\\s*)*(?=\\{...)`, the pythonic and
xLAM variants), and a JSON sequence read by one decode per value (`jsonscan.whole_sequence_end`: Llama 3's
`{...}; {...}` calls) instead of the `ValueEnd` scanner. The messages are the general loop's and the streaming
parser's; `whole_sequence_end` answers what a fresh scanner answers.
"""

from __future__ import annotations

import random

from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates.jsonscan import MORE, ValueEnd, whole_sequence_end

_START = ("llama3", "llama3.2-pythonic", "xlam-llama", "llama4-pythonic", "gemma3-pythonic", "xlam-qwen")


def test_the_start_regex_is_tried_in_the_loop():
    # (fails on the code before `_start`: these idle watches were `LeadScan`s / `LeadSearch`es called per scan)
    for name in _START:
        assert oneshot_plan(TEMPLATES[name])._fast[0] == 5, name


def test_llama3_reads_its_call_sequence_by_decodes():
    plan = oneshot_plan(TEMPLATES["llama3"])
    ((info, ck, _, cb),) = [act for act in plan._fast[3].values() if act is not None]
    assert ck == 5 and cb[1].func is whole_sequence_end and cb[1].args == (";",)


def _scanned(sep: str, s: str, pos: int, stop: int):
    vend = ValueEnd(sep)
    k = vend.scan(s, pos, stop, 0, True)
    return k, vend.decoded()


_SEQ = ['{"a": 1}', '["x", {"b": [2]}]', '"s;"', "{", "}", "[", '"', "\\", ";", ";;", " ", "\n", "1", "true",
        "x", "<e>", '{"a": "}"}', '{"n": 1}; ', "]", "::", ":"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_SEQ), max_size=10).map("".join), st.sampled_from([";", "::", ","]),
       st.integers(0, 3), st.integers(0, 4))
def test_whole_sequence_end_answers_as_the_scanner(s, sep, lead, cut):
    pos = min(lead, len(s))
    stop = max(pos, len(s) - cut)
    got = whole_sequence_end(sep, s, pos, stop)
    if got is None:
        return  # (the scanner decides)
    k, values = got
    want_k, want = _scanned(sep, s, pos, stop)
    assert k == want_k and want == (values,)


def test_whole_sequence_end_takes_the_usual_cases():
    s = '{"name": "f", "parameters": {}}; {"name": "g", "parameters": {"a": 1}}<e>'
    stop = s.index("<e>")
    assert whole_sequence_end(";", s, 0, stop) == (MORE, [{"name": "f", "parameters": {}},
                                                          {"name": "g", "parameters": {"a": 1}}])
    assert _scanned(";", s, 0, stop)[0] == MORE
    s = '{"a": 1} then text'
    assert whole_sequence_end(";", s, 0, len(s)) == (9, [{"a": 1}]) == (_scanned(";", s, 0, len(s))[0], [{"a": 1}])
    for s in ('{"a": 1}; 3', '{"a": 1}; x', '{"a": ', "3", "", "  "):
        assert whole_sequence_end(";", s, 0, len(s)) is None, s


_LLAMA3 = ["<|python_tag|>", '{"name": "f", "parameters": {"a": 1}}', '{"type": "function", "name": "g", "arguments": {}}',
           '{"name": "h"', "}", "{", ";", " ", "\n", "<|eot_id|>", "<|eom_id|>", "x", '"name":', "[", "]"]
_PYTHONIC = ["<|python_tag|>", "[f(a=1)]", "[g(x='y'), h()]", "[", "(", ")", "]", " ", "\n", "<|eot_id|>",
             "<|eom_id|>", "x", "f"]
_XLAM = ['[{"name": "f", "arguments": {"a": 1}}]', "[", "{", '"name":', "]", "}", " ", "<|eot_id|>", "<|eom_id|>", "x"]


@settings(max_examples=500, deadline=None)
@given(st.sampled_from([("llama3", _LLAMA3), ("llama3.2-pythonic", _PYTHONIC), ("xlam-llama", _XLAM)]),
       st.data(), st.sampled_from(["", "<|start_header_id|>assistant<|end_header_id|>\n\n", " "]))
def test_the_llama_family_equals_the_general_loop_and_the_state_machine(family, data, prefix):
    name, pieces = family
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=12)))
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


def test_the_start_regex_cases():
    rng = random.Random(19)
    tpl = TEMPLATES["llama3"]
    call = '{"name": "f", "parameters": {"a": 1}}'
    for text in ("", "<|eot_id|>", "<|eot_id|>" + call, call, "  " + call, "<|python_tag|>" + call,
                 call + "; " + call + "<|eot_id|>", call + ";", call + "; x<|eot_id|>", "x" * 5000 + call,
                 " " * 3000 + call + "<|eot_id|>", "Hi<|eot_id|>", "Hi"):
        for prefix in ("", "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|start_header_id|>assistant"
                       "<|end_header_id|>\n\n ", "x"):
            assert_fast_loop_agrees(tpl, text, prefix)
    for _ in range(200):
        text = "".join(rng.choice(_LLAMA3) for _ in range(rng.randint(0, 8)))
        assert_fast_loop_agrees(tpl, text, "")


#: A JSON sequence closed by a delimiter with captures (`<eN>`, the transform reads `{k}`) or without (`<f>`): the
#: close kind 5 region of a sequence that runs to the close is stored decoded only where the close adds no captures
_CAPTURED = {"start_anchor": "<s>", "fields": {
    "calls": {"open_pattern": r"^\s*(?=[\[{])", "close_pattern": r"<e(?P<k>\d)>|<f>", "content": "json",
              "content_args": {"separator": ";", "trailing": "stream"}, "transform": {"v": "{content}", "k": "{k}"}},
    "content": {"close": "<e1>"}}}
#: The same with an open of captures too (`<cN>`, read as `{o}`): the stored captures are the open's and the close's
_OPEN_CAPTURED = {**_CAPTURED, "fields": {**_CAPTURED["fields"], "calls": {
    **_CAPTURED["fields"]["calls"], "open_pattern": r"<c(?P<o>\d)>", "transform": {"v": "{content}", "o": "{o}"}}}}
_CAPTURED_PIECES = ['{"a": 1}', "[2]", '"s"', ";", " ", "<e1>", "<e3>", "<f>", "x", "{", "]", "1", "<c2>", "<c5>"]


def test_a_sequence_to_a_close_with_captures_keeps_them():
    # (fails where the sequence's decoded values are stored with the captures before the close's)
    plan = oneshot_plan(_CAPTURED)
    ((_, ck, (sk, _, _), cb),) = [act for act in plan._fast[3].values() if act is not None]
    assert ck == 5 and sk == 2 and cb[1].func is whole_sequence_end
    for text, calls in (('{"a": 1}; [2]<e3>', {"v": [{"a": 1}, [2]], "k": "3"}), ('[2]<e1>x', {"v": [[2]], "k": "1"})):
        assert plan._fast_run(text, "", None)["calls"] == calls
        assert_fast_loop_agrees(_CAPTURED, text, "")
    plan = oneshot_plan(_OPEN_CAPTURED)
    for text in ('<c2>{"a": 1}; [2]<f>', "<c5>[2]<e1>x"):
        assert plan._fast_run(text, "", None)["calls"] == {"v": [{"a": 1}, [2]] if "a" in text else [[2]], "o": text[2]}
        assert_fast_loop_agrees(_OPEN_CAPTURED, text, "")


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_CAPTURED_PIECES), max_size=8).map("".join), st.sampled_from(["", "<s>", "<s> "]),
       st.sampled_from([_CAPTURED, _OPEN_CAPTURED]))
def test_a_sequence_to_a_close_with_or_without_captures_agrees(text, prefix, tpl):
    assert_fast_loop_agrees(tpl, text, prefix)
