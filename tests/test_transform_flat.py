"""`transform._flat`: a dict transform compiled to closures chosen by its shape (no generated code) gives
exactly what the general `_dict_applier` tree gives: the same value, or the same error (type and message), on
any scope."""

from __future__ import annotations

import builtins
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates.transform import _dict_applier, _flat, compile_transform

_NAMES = ["name", "content", "id", "0", "arguments"]
_PATHS = ["{name}", "{content}", "{id}", "{0}", "{content.name}", "{content.arguments}",
          "{content.parameters|content.arguments}", "{content.a.b}", "{content.$key}", "{content.$value}",
          "{name|id}", "{content.name|name}", "{id|content.arguments|0}", "{content.a.b|content.a}",
          "{content.arguments|content.name|content.a}", "{arguments|content.name}", "{arguments}"]
_LEAVES = st.one_of(st.sampled_from(_PATHS), st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                    st.sampled_from(["function", "", "{not a placeholder"]))
_TREES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.dictionaries(st.sampled_from(["type", "function", "name", "arguments", "k", "'q\"", "\\"]), inner, max_size=4),
    st.lists(inner, max_size=3)), max_leaves=10)
_VALUES = st.recursive(st.one_of(st.none(), st.integers(0, 3), st.text(max_size=3)), lambda inner: st.one_of(
    st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["name", "arguments", "parameters", "a", "b"]), inner,
                                                 max_size=3)), max_leaves=6)


def _outcome(f, scope):
    try:
        return "ok", f(scope)
    except Exception as e:  # noqa: BLE001 - compared
        return type(e).__name__, str(e)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(st.sampled_from(["type", "function", "name", "arguments"]), _TREES, min_size=1, max_size=4),
       st.dictionaries(st.sampled_from(_NAMES), _VALUES, max_size=4))
def test_flat_equals_the_general_dict_applier(transform, scope):
    try:
        flat = compile_transform(transform, field="f")
    except Exception:  # noqa: BLE001 - a transform the template loader rejects (a mixed string)
        return
    general = flat.general
    assert flat is not general
    want = _outcome(general, scope)
    assert _outcome(flat, scope) == want
    assert _outcome(flat, dict(scope)) == want  # (and again: nothing kept between calls)


def test_the_tool_call_shape_is_one_display():
    f = compile_transform({"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}, field="t")
    assert f({"name": "get", "content": {"a": 1}}) == {"type": "function", "function": {"name": "get",
                                                                                       "arguments": {"a": 1}}}
    got = _outcome(f, {"content": 1})
    assert got == ("TransformError", "transform placeholder '{name}' is not defined; available names: ['content']")
    assert f is not f.general


def test_plain_paths_are_read_in_place():
    """`{content.name}` and `{content.parameters|content.arguments}` (Llama 4's tool call) are not calls: the
    function calls the general tree's only where they do not surely resolve (the errors are its)."""
    f = compile_transform({"name": "{content.name}", "arguments": "{content.parameters|content.arguments}"},
                          field="t")
    assert f({"content": {"name": "g", "arguments": {"a": 1}}}) == {"name": "g", "arguments": {"a": 1}}
    assert f({"content": {"name": "g", "parameters": {}, "arguments": 1}}) == {"name": "g", "arguments": {}}
    assert _outcome(f, {"content": {"name": "g"}})[0] == "TransformError"
    assert _outcome(f, {"content": "text"})[0] == "TransformError"


def test_a_general_dict_applier_keeps_its_items():
    items = (("a", 0, 1),)
    assert _dict_applier(items).items == items
    assert _flat(_dict_applier(items))({}) == {"a": 1}


@pytest.mark.parametrize("transform", [
    {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    {"type": "function", "function": "{content}"},
    {"id": "{id}", "type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.parameters|content.arguments}"}},
    {"a": "{name}", "b": "{id}", "c": "{content}", "d": ["{name}", {"e": "{name|id}"}]},
])
def test_nothing_is_generated_or_evaluated(monkeypatch, transform):
    """Fails on the code-generating `_flat` (it called `exec`). (`compile` is left alone: pytest needs it.)"""
    def forbidden(*args: Any, **kw: Any) -> Any:
        raise AssertionError("exec/eval called")

    for name in ("exec", "eval"):
        monkeypatch.setattr(builtins, name, forbidden)
    f = compile_transform(transform, field="t")
    scope = {"name": "n", "id": 1, "content": {"name": "g", "arguments": {"a": 1}}}
    assert f(scope) == f.general(scope)
    assert list(f(scope)) == list(transform)  # (the keys in the transform's order)


@pytest.mark.parametrize("transform", [
    {"a": "{name}"}, {"a": "{name}", "b": "{id}"}, {"a": "{name}", "b": "{id}", "c": "{0}"},
    {"k": 1, "a": "{name}"}, {"k": 1, "f": {"a": "{name}"}}, {"a": "{name}", "k": 1, "f": {"b": "{id}"}, "z": None},
    {"f": {"a": "{name}", "b": "{id}"}, "k": 1}, {"k": "function", "f": {"a": "{name}", "b": "{id|0}"}},
    {"k": 1, "f": {"a": "{content.name}", "b": "{content.a|content.b}"}}, {"a": "{0}", "b": "{content.b|id}"},
    {"a": "{content.a|content.b|content.c}", "b": "{name|content.a}"}, {},
])
def test_every_shape_hands_a_missing_name_to_the_general_tree(transform):
    f = compile_transform(transform, field="t")
    for scope in ({}, {"name": 1}, {"id": 2}, {"name": 1, "id": 2, "0": 3}, {"content": {"b": 1, "c": 2}, "0": 0},
                  {"content": [], "name": 1, "id": 2, "0": 3}, {"content": {"a": 1, "name": 2}, "name": 0, "id": 1}):
        assert _outcome(f, scope) == _outcome(f.general, scope)
