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
