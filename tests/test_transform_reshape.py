"""`transform.compile_reshape`: the usual transform as one generated function gives exactly what the tree of
closures gives (`compile_transform` applied to the scope the field builds), the same value or the same
error, on every input (issue 19: a field's transform step per tool call, without a scope dict or a call per
node)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.transform import compile_reshape, compile_transform


def _general(transform: Any, each: bool):
    """The field's transform step as the closures' tree reads it (`template._compile_field`'s reshape)."""
    apply = compile_transform(transform, field="f")

    def reshape(value: Any, captures: dict | None) -> Any:
        if each:
            if not isinstance(value, list):
                raise ValueError("not a list")
            out = []
            for item in value:
                if not isinstance(item, dict):
                    raise ValueError("not a dict")
                out.append(apply({**captures, **item} if captures else item))
            return out
        return apply({**captures, "content": value} if captures else {"content": value})

    return reshape


def _outcome(fn, value, captures):
    try:
        return "ok", fn(value, captures)
    except Exception as e:  # the same error, type and message
        return type(e).__name__, str(e)


TRANSFORMS = [
    {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    {"type": "function", "function": "{content}"},
    {"id": "{id}", "type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    {"a": ["{name}", 1, None, True, 2.5, "x", {"b": "{content}"}], "c": []},
    {"name": "{0}", "arguments": "{arguments}"},
    "{content}",
    ["{name}", "{content}"],
    {},
]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["name", "arguments", "content", "id", "0", "x"]), inner, max_size=4)),
    max_leaves=8)
CAPTURES = st.one_of(st.none(), st.dictionaries(st.sampled_from(["name", "id", "x", "arguments"]),
                                                 st.one_of(st.none(), st.text(max_size=3)), max_size=3))


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_usual_transforms_are_compiled(transform):
    assert compile_reshape(transform, False, _general(transform, False)) is not None
    assert compile_reshape(transform, True, _general(transform, True)) is not None


@pytest.mark.parametrize("transform", [
    {"name": "{content.name}"}, {"name": "{$key}", "arguments": "{$value}"}, {"a": "{parameters|arguments}"},
    {"a": ["{content.$value}"]},
])
def test_paths_steps_and_fallbacks_stay_with_the_closures(transform):
    assert compile_reshape(transform, True, _general(transform, True)) is None


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(TRANSFORMS), st.booleans(), VALUES, CAPTURES)
def test_the_generated_reshape_equals_the_closures(transform, each, value, captures):
    general = _general(transform, each)
    fast = compile_reshape(transform, each, general)
    assert _outcome(fast, value, captures) == _outcome(general, value, captures)


def test_results_share_nothing_mutable_between_calls():
    transform = {"a": {"b": "{content}"}, "c": [1]}
    fast = compile_reshape(transform, False, _general(transform, False))
    one, two = fast("x", None), fast("x", None)
    assert one == two and one["a"] is not two["a"] and one["c"] is not two["c"]


def test_template_source_text_is_never_code():
    # keys and constants that look like Python are data, bound to generated names
    transform = {"__import__('os')": "} + 1 #", "{": "{content}"}
    fast = compile_reshape(transform, False, _general(transform, False))
    assert fast(5, None) == {"__import__('os')": "} + 1 #", "{": 5}


@pytest.mark.parametrize("name", list_templates())
def test_shipped_transforms_use_the_generated_form_but_the_listed_ones(name):
    tpl = load_template(get_template(name))
    for field in tpl.fields:
        raw = get_template(name)["fields"][field.name]
        if "transform" not in raw:
            continue
        generated = field.reshape.__code__.co_filename == "<transform>"
        assert generated == (name not in {"apertus", "llama3", "llama4-json"}), (name, field.name)
