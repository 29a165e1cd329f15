"""`transform`: a dict node whose every value is a `{name}` lookup (`{"name": "{name}", "arguments":
"{content}"}`) is read with one `itemgetter` from a plain dict scope (issue 19); it gives exactly what the
checked loop gives, key order and the error for a missing name included, and any other scope takes the loop."""

from __future__ import annotations

from collections import OrderedDict, UserDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import transform as _transform
from hf_response_templates.transform import TransformError, compile_transform

NAMES = ["name", "content", "id", "x"]


def _checked(items: dict[str, str]):
    """The loop the fast path short-cuts (`_dict_applier` of the same items, without it)."""
    def apply(scope):
        out = {}
        for key, root in items.items():
            if root not in scope:
                raise _transform._undefined(root, scope)
            out[key] = scope[root]
        return out
    return apply


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["b", "a", "name", "arguments", "z"]), st.sampled_from(NAMES), min_size=1,
                       max_size=4),
       st.dictionaries(st.sampled_from(NAMES), st.one_of(st.integers(), st.text(max_size=3), st.none()), max_size=4))
def test_root_lookups_equal_the_checked_loop(items, scope):
    transform = {key: "{" + root + "}" for key, root in items.items()}
    apply = compile_transform(transform, field="f")
    try:
        want = _checked(items)(scope)
    except TransformError as e:
        with pytest.raises(TransformError) as got:
            apply(scope)
        assert str(got.value) == str(e)
    else:
        got = apply(scope)
        assert got == want and list(got) == list(want)


def test_a_tool_call_transform_takes_the_fast_path_and_other_scopes_the_loop():
    apply = compile_transform({"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
                              field="tool_calls")
    assert apply({"name": "f", "content": {"a": 1}}) == {"type": "function",
                                                           "function": {"name": "f", "arguments": {"a": 1}}}
    inner = compile_transform({"name": "{name}", "arguments": "{content}"}, field="f")
    assert inner.__name__ == "apply_roots"  # (fails before this change: one loop for every dict node)
    for scope in (UserDict({"name": "f", "content": 1}), OrderedDict(name="f", content=1)):
        assert inner(scope) == {"name": "f", "arguments": 1}
    with pytest.raises(TransformError, match="'{content}' is not defined; available names: \\['name'\\]"):
        inner({"name": "f"})
