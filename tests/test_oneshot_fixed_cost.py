"""The one-shot plan's fixed cost per call (issue 19): what every `parse_response` pays whatever its response.

`OneShotPlan._fast_run` starts from one unpack of `plan._fast` (the anchor literal's end, a message skeleton
copied per call, the loop's starting values), stores a plain text field's first value before the other
stores, and tests its rare tail (required fields, joins, empty values) once; `parse_response` finds a reused
template dict by one look-up and one comparison with its snapshot. Here: the shape of `plan._fast`, opcode
counts that the earlier code exceeds, the messages being fresh dicts, in-place edits still seen, and the
same messages as the general loop and the state machine (bounded hypothesis).
"""

from __future__ import annotations

import copy
import gc
import sys

import pytest
from engine_helpers import oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES, _streamed, _without_ids, case

from hf_response_templates import load_template, parse_response
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.plan import _NONE_FIRED

#: The loop's starting values at the end of `plan._fast`: zw, fired, memo, pos, opened, start_at, kept,
#: empties, more.
_STARTS = (-1, _NONE_FIRED, None, 0, False, 0, None, None, None)


@pytest.mark.parametrize("name", list_templates())
def test_the_fast_tuple_carries_the_anchor_end_the_skeleton_and_the_starting_values(name):
    plan = oneshot_plan(TEMPLATES[name])
    if plan._fast is None:
        return
    lit, lit_end, skeleton = plan._fast[12:15]
    assert lit is plan._anchor_lit and lit_end == (0 if lit is None else len(lit))
    assert skeleton == dict(load_template(TEMPLATES[name])._defaults_simple)
    assert plan._fast[15:] == _STARTS and len(plan._fast) == 24


@pytest.mark.parametrize("name", list_templates())
def test_each_message_is_a_fresh_dict(name):
    tpl = get_template(name)
    first = parse_response("Hi", tpl, prefix="")
    second = parse_response("Hi", tpl, prefix="")
    assert first == second and first is not second
    first["role"] = "changed"
    first["extra"] = [1]
    assert parse_response("Hi", tpl, prefix="") == second
    assert oneshot_plan(tpl)._fast is None or oneshot_plan(tpl)._fast[14] == {"role": "assistant"}


def test_nested_defaults_are_copied_deeply():
    tpl = {"start_anchor": "<a>", "defaults": {"role": "assistant", "meta": {"k": [1]}}, "fields": {"content": {"close": "<e>"}}}
    plan = oneshot_plan(tpl)
    assert plan._fast is not None and plan._fast[14] is None  # not flat: `new_message` per call
    first = parse_response("Hi<e>", tpl, prefix="")
    first["meta"]["k"].append(2)
    assert parse_response("Hi<e>", tpl, prefix="") == {"role": "assistant", "meta": {"k": [1]}, "content": "Hi"}


def _opcodes(call) -> int:
    count = [0]

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            count[0] += 1
        return tracer

    # (the collector off: a collection inside the call would run other objects' finalizers, traced too; the
    # full suite met one)
    gc.collect()
    gc.disable()
    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
        gc.enable()
    return count[0]


#: Opcodes of one `parse_response` of a content-only answer, template dict reused (`benchmarks/ops_oneshot.py
#: --trivial`): 316 for Hermes 3 and 483 for Llama 3 before the fixed cost was cut (291 and 458 after).
_TRIVIAL = {
    "hermes3": ("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", "Hi<|im_end|>\n", 300),
    "llama3": ("<|start_header_id|>assistant<|end_header_id|>\n\n", "Hi<|eot_id|>", 470),
}


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="opcode counts are CPython 3.11's")
@pytest.mark.parametrize("name", sorted(_TRIVIAL))
def test_a_trivial_response_runs_fewer_opcodes(name):
    prefix, text, most = _TRIVIAL[name]
    tpl = get_template(name)
    assert parse_response(text, tpl, prefix=prefix) == {"role": "assistant", "content": "Hi"}
    assert _opcodes(lambda: parse_response(text, tpl, prefix=prefix)) <= most


def test_an_edit_in_place_is_seen_on_the_next_call():
    tpl = copy.deepcopy(get_template("hermes3"))
    assert parse_response("Hi<|im_end|>", tpl, prefix="") == {"role": "assistant", "content": "Hi"}
    tpl["fields"]["content"]["close"] = "<|eot|>"  # nested, in place
    assert parse_response("Hi<|eot|>x", tpl, prefix="") == {"role": "assistant", "content": "Hi"}
    tpl["defaults"]["role"] = "model"
    assert parse_response("Hi<|eot|>", tpl, prefix="") == {"role": "model", "content": "Hi"}
    del tpl["defaults"]
    assert parse_response("Hi<|eot|>", tpl, prefix="") == {"content": "Hi"}


@settings(max_examples=300, deadline=None)
@given(case(), st.booleans())
def test_parse_response_equals_the_general_loop_and_the_state_machine(c, copied):
    name, prefix, generation, chunks = c
    # the dict reused (the identity look-up) or a copy of it (the look-up by content)
    tpl = copy.deepcopy(TEMPLATES[name]) if copied else TEMPLATES[name]
    plan = oneshot_plan(TEMPLATES[name])
    general = plan._general(generation, prefix, None)
    streamed, errors = _streamed(TEMPLATES[name], prefix, chunks)
    try:
        got = parse_response(generation, tpl, prefix=prefix)
    except Exception as e:  # (`strict`: the state machine's error, the general loop's None)
        assert general is None and errors and type(e) is type(errors[0])
        return
    assert _without_ids(got) == _without_ids(streamed)
    if general is not None:
        assert _without_ids(got) == _without_ids(general)


class _NoSearch(str):
    """A prompt whose `rfind` fails: the cut's search must not run (the prompt ends with the anchor)."""

    def rfind(self, *args):  # type: ignore[override]
        raise AssertionError("searched")


def _plans_with_ends() -> list[str]:
    return [n for n in list_templates() if oneshot_plan(TEMPLATES[n]).run == oneshot_plan(TEMPLATES[n])._fast_run
            and (oneshot_plan(TEMPLATES[n])._anchor_lit is not None or oneshot_plan(TEMPLATES[n])._anchor_ends)]


def test_the_anchor_ends_are_the_prefix_free_anchor_texts():
    assert oneshot_plan(TEMPLATES["deepseek-r1"])._anchor_ends == ("<｜Assistant｜>", "<｜tool▁outputs▁end｜>")
    assert oneshot_plan(TEMPLATES["mistral-small-3.2"])._anchor_ends == ("[/INST]", "[/TOOL_RESULTS]")
    # `<｜Assistant｜>` is a prefix of `<｜Assistant｜></think>`: where a prompt ends with either, the regex's match of
    # that text alone decides, and `<｜Assistant｜>(?:</think>)?` matches each whole (a lazy `??` would not match the
    # longer one whole: `tests/test_oneshot_anchor_heads.py`)
    assert oneshot_plan(TEMPLATES["deepseek-v3.1"])._anchor_ends == (
        "<｜Assistant｜>", "<｜Assistant｜></think>", "<｜tool▁output▁end｜>")
    assert oneshot_plan(TEMPLATES["hermes3"])._anchor_ends is None  # (one literal: `_anchor_lit`)
    assert len(_plans_with_ends()) > 30


@pytest.mark.parametrize("name", _plans_with_ends())
def test_a_prompt_ending_with_the_anchor_is_not_searched_and_reads_the_same(name):
    plan = oneshot_plan(TEMPLATES[name])
    ends = (plan._anchor_lit,) if plan._anchor_lit is not None else plan._anchor_ends
    text = "Hi there<tool_call>[/INST]</think>"
    for end in ends:
        for head in ("", "user: Hi\n", end, f"{end}x{ends[-1]}", f"{ends[0]}{end}"):
            prefix = head + end
            expected = plan._general(text, prefix, None)
            assert plan._fast_run(text, _NoSearch(prefix), None) == expected, (name, prefix)  # (not searched)
            # the prompt not ending with the anchor (searched), and one without it
            for other in (prefix + "\n", prefix + "<think>\n", prefix[:-1], "", "x"):
                assert plan._fast_run(text, other, None) == plan._general(text, other, None), (name, other)
                assert parse_response(text, TEMPLATES[name], prefix=other, strict=False) == _streamed(
                    TEMPLATES[name], other, [text])[0]


def test_the_fast_entry_takes_only_what_the_plan_reads():
    """`parse_response`'s entry (one look-up and one comparison for a reused dict): every other call goes the long way,
    with the same results and errors."""
    tpl = copy.deepcopy(get_template("hermes3"))
    text, expected = "Hi<|im_end|>", {"role": "assistant", "content": "Hi"}
    assert parse_response(text, tpl, prefix="") == expected
    assert parse_response(text, load_template(tpl), prefix="") == expected  # a compiled template
    assert parse_response(type("S", (str,), {})(text), tpl, prefix="") == expected  # a `str` subclass
    assert parse_response(text, tpl, prefix="", tools=iter([])) == expected  # an iterator (the state machine)
    assert parse_response(text, tpl, prefix="", tools=[]) == expected
    with pytest.raises(TypeError, match="one generated text"):
        parse_response(b"Hi", tpl, prefix="")
    with pytest.raises(ValueError, match="prefix"):
        parse_response(text, tpl)
    # a nested dict replaced by an equal copy (still a hit), then that copy edited in place (seen)
    tpl["fields"] = copy.deepcopy(tpl["fields"])
    assert parse_response(text, tpl, prefix="") == expected
    tpl["fields"]["content"]["close"] = "<|eot|>"
    assert parse_response("Hi<|eot|>x", tpl, prefix="") == expected
    tpl["fields"]["content"]["close"] = ["<|eot|>", "<e>"]
    assert parse_response("Hi<e>x", tpl, prefix="") == expected
    tpl["fields"]["content"]["close"].append("<f>")  # a nested list edited in place
    assert parse_response("Hi<f>x", tpl, prefix="") == expected
    # a template without a plan (a `"policy"` key), passed again: the state machine each time
    tpl = {**get_template("qwen3"), "policy": {"text_after_tool_calls": "unparsed"}}
    for _ in range(2):
        assert parse_response("Hi<|im_end|>", tpl, prefix="") == expected
    assert load_template(tpl).oneshot_plan is False


@pytest.mark.parametrize("fields, text", [
    # a join (`more`), an empty first value (`empties`), a required field present: each sets `tail`
    ({"c": {"close": "<e>"}, "j": {"open": "<j>", "close": "</j>", "repeats": True, "join": "+"}},
     "a<j></j><j>x</j><j>y</j><e>"),
    ({"c": {"close": "<e>"}, "j": {"open": "<j>", "close": "</j>", "content": "json"}}, "a<j>\"\"</j><e>"),
    ({"c": {"close": "<e>"}, "j": {"open": "<j>", "close": "</j>", "content": "json", "optional": False}},
     "a<j>{}</j><e>"),
    ({"c": {"close": "<e>"}, "j": {"open": "<j>", "close": "</j>", "content": "json", "optional": False}}, "a<e>"),
    ({"c": {"close": "<e>"}, "j": {"open": "<j>", "close": "</j>"}}, "a<j>x</j><j>y</j><e>"),
])
def test_the_epilogue_tail_agrees_with_the_general_loop(fields, text):
    from engine_helpers import assert_fast_loop_agrees

    tpl = {"start_anchor": "A:", "defaults": {"role": "assistant"}, "fields": fields}
    assert oneshot_plan(tpl)._fast is not None
    for prefix in ("", "A:", "x A:", "A: "):
        assert_fast_loop_agrees(tpl, text, prefix)


#: The same, counted as `_opcodes` does (with its lambda): 299 and 375 before the entry, the anchor cut and the
#: epilogue were cut again, 264 and 341 after (a few more allowed).
_TRIVIAL_NOW = {"hermes3": 270, "llama3": 347}


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="opcode counts are CPython 3.11's")
@pytest.mark.parametrize("name", sorted(_TRIVIAL_NOW))
def test_a_trivial_response_runs_fewer_opcodes_still(name):
    prefix, text, _ = _TRIVIAL[name]
    tpl = get_template(name)
    assert parse_response(text, tpl, prefix=prefix) == {"role": "assistant", "content": "Hi"}
    assert _opcodes(lambda: parse_response(text, tpl, prefix=prefix)) <= _TRIVIAL_NOW[name]


def test_a_regex_anchor_of_no_fixed_texts_is_cut_by_the_template_unless_timed():
    plan = oneshot_plan(TEMPLATES["granite-3.3"])
    assert plan.run == plan._fast_run and plan._anchor_lit is None and plan._anchor_texts is None
    anchor = "<|start_of_role|>assistant<|end_of_role|>"
    text = "Hi<|end_of_text|>"
    for prefix in ("", anchor, "x" + anchor + "y", anchor + "<think>", "x" * 4000 + anchor, "x" * 5000 + anchor):
        got = plan._fast_run(text, prefix, None)
        assert got == plan._general(text, prefix, None)
        assert (got is None) == (len(prefix) > 4096)  # (a timed search: the state machine's, budget counted)
        assert parse_response(text, TEMPLATES["granite-3.3"], prefix=prefix) == _streamed(
            TEMPLATES["granite-3.3"], prefix, [text])[0]


#: The same, since a template that runs no regex reads no caller's regex timeout (Hermes 3: 264 -> 257) and the start
#: regex of Llama 3's idle watch is tried before the loop (341 -> 315); a few more allowed.
_TRIVIAL_ROUND_7 = {"hermes3": 260, "llama3": 320}


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="opcode counts are CPython 3.11's")
@pytest.mark.parametrize("name", sorted(_TRIVIAL_ROUND_7))
def test_a_trivial_response_runs_fewer_opcodes_in_round_7(name):
    prefix, text, _ = _TRIVIAL[name]
    tpl = get_template(name)
    assert parse_response(text, tpl, prefix=prefix) == {"role": "assistant", "content": "Hi"}
    assert _opcodes(lambda: parse_response(text, tpl, prefix=prefix)) <= _TRIVIAL_ROUND_7[name]


#: The templates whose idle watch starts with a regex that matches at offset 0 only (`plan_shape._start`, kind 5)
_START = [n for n in list_templates() if oneshot_plan(TEMPLATES[n])._fast is not None
          and oneshot_plan(TEMPLATES[n])._fast[0] == 5]
_CALLS = ('{"name": "f", "parameters": {"a": 1}}', "[f(a=1)]", '[{"name": "f", "arguments": {}}]', "{", "[",
          "Here are my reasoning steps: Hm[BEGIN FINAL RESPONSE]Hi", "Here are my reasoning steps:",
          "助手：Hi", "<answer>Hi</answer>")  # (Hunyuan's start regex `^\s*助手：|<answer>`)


@pytest.mark.parametrize("name", _START)
def test_the_start_regex_tried_before_the_loop_reads_as_the_general_loop(name):
    """Before the loop `_fast_run` tries the start regex at offset 0 (no match: the late idle watch; one of the scan's
    texts there: the scan, as kind 2; a match: the loop's first turn takes it): the general loop's regions and the
    stream's message, on texts with and without a match there, one led by whitespace longer than a delimiter may
    be (no match), and one led by the scan's own texts."""
    from engine_helpers import assert_fast_loop_agrees

    from hf_response_templates.delimiters import MAX_DELIMITER_LENGTH

    plan = oneshot_plan(TEMPLATES[name])
    _, fast, _, texts, _ = plan._fast[1]
    end = texts[-1]
    taken = 0
    for head in ("", " ", "\n  ", " " * (MAX_DELIMITER_LENGTH + 2), *texts):
        for body in (*_CALLS, "Hi", ""):
            for tail in ("", end, end + "x", " " + _CALLS[0], "; " + _CALLS[0] + end):
                text = head + body + tail
                for prefix in ("", "<p>"):
                    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)
                    taken += fast(text, 0) is not None and plan._fast_run(text, prefix, None) is not None
    assert len(_START) >= 6 and taken  # (some read by the plan from a match at offset 0)
