"""`parse_response`'s entry for a reused template dict (issue 19): `parser._last`, the last hit of `load_template`'s
identity cache, found by one identity test and one comparison (`==`) with the compiled template's snapshot.

The dict passed again gives what a fresh copy of it gives, whatever was edited in place in between, at any depth
(a string, a nested dict or list, a key added or deleted), edits that make it invalid raising the same error each
time; only plain dicts that `load_template` keeps by identity are kept (not a compiled template, a shipped name or
another mapping); an `==`-equal dict is not taken for the kept one (`True` is not `1` as a version); and the entry
stays right when `_by_id` has dropped the dict.
"""

from __future__ import annotations

import copy
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import TemplateError, load_template, parse_response
from hf_response_templates import parser as parser_mod
from hf_response_templates.library import get_template
from hf_response_templates.template import _by_id

#: Templates and a prompt each: a literal anchor (Hermes 3), a JSON-call regex open (Llama 3), reasoning (Qwen 3),
#: an anchor of two texts (Mistral Small 3.2).
_BASES = {
    "hermes3": "<|im_start|>assistant\n",
    "llama3": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "qwen3": "<|im_start|>assistant\n",
    "mistral-small-3.2": "[/INST]",
}
#: The texts the edits put in, and bodies around them, so that most edits change the message.
_NEW = ["<X>", "<Y>", "[/INST]", "</think>", "<|im_end|>", "", "assistant"]
_TEXTS = st.lists(
    st.sampled_from(
        [
            "Hi",
            "<X>",
            "<Y>",
            "<think>",
            "</think>",
            "<|im_end|>",
            "<|eot_id|>",
            "[TOOL_CALLS]",
            "there",
            '{"name": "f", "arguments": {}}',
            "<tool_call>",
            "</tool_call>",
            "[/INST]",
            "\n",
        ]
    ),
    max_size=8,
).map("".join)


def _paths(obj: object, path: tuple = ()) -> list[tuple]:
    """Every path to a container or a value inside `obj` (keys and indexes), the root excepted."""
    out = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        out.append((*path, k))
        out.extend(_paths(v, (*path, k)))
    return out


def _at(obj: object, path: tuple) -> object:
    for k in path:
        obj = obj[k]  # type: ignore[index]
    return obj


def _edit(tpl: dict, path: tuple, how: int, new: str) -> None:
    """Edit `tpl` in place at `path`: replace the value, delete it, or add to the container holding it / it holds."""
    parent = _at(tpl, path[:-1])
    key = path[-1]
    value = parent[key]
    if how == 0:
        parent[key] = new
    elif how == 1:
        del parent[key]
    elif how == 2 and isinstance(value, list):
        value.append(new)
    elif how == 2 and isinstance(value, dict):
        value["close" if "close" not in value else "open"] = new
    elif isinstance(parent, dict):
        parent[key] = [new, value] if isinstance(value, str) else new
    else:
        parent.insert(key, new)


def _outcome(call) -> object:
    try:
        return call()
    except Exception as e:  # (an invalid template, or a response the strict parse rejects)
        return (type(e), str(e))


def _reference(tpl: dict, text: str, prefix: str) -> object:
    """What a fresh copy of `tpl` gives, without touching `parser._last` (a compiled template is not kept there)."""
    try:
        compiled = load_template(copy.deepcopy(tpl))
    except Exception as e:
        return (type(e), str(e))
    return _outcome(lambda: parse_response(text, compiled, prefix=prefix))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(_BASES)), st.data(), _TEXTS, st.integers(1, 3))
def test_a_reused_dict_edited_in_place_gives_what_a_fresh_copy_gives(name, data, text, edits):
    prefix = _BASES[name]
    tpl = get_template(name)
    parse_response("Hi", tpl, prefix=prefix)
    assert parser_mod._last[0] is tpl and parser_mod._last[2] is load_template(tpl)
    for _ in range(edits):
        paths = _paths(tpl)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        _edit(tpl, path, data.draw(st.integers(0, 3)), data.draw(st.sampled_from(_NEW)))
        expected = _reference(tpl, text, prefix)
        got = _outcome(lambda: parse_response(text, tpl, prefix=prefix))
        assert got == expected, (path, tpl)
        # and again (the entry kept, or the same error raised again)
        assert _outcome(lambda: parse_response(text, tpl, prefix=prefix)) == expected


@pytest.mark.parametrize("name", sorted(_BASES))
def test_each_kind_of_edit_in_place_is_seen(name):
    prefix = _BASES[name]
    tpl = get_template(name)
    text = "Hi<X>there"
    assert parse_response(text, tpl, prefix=prefix)["content"] == "Hi<X>there"
    assert parser_mod._last[0] is tpl
    content = tpl["fields"]["content"]
    close = content["close"]
    content["close"] = "<X>"  # a nested string
    assert parse_response(text, tpl, prefix=prefix)["content"] == "Hi"
    content["close"] = close if isinstance(close, list) else [close]
    assert parse_response(text, tpl, prefix=prefix)["content"] == "Hi<X>there"
    content["close"].append("<X>")  # a nested list
    assert parse_response(text, tpl, prefix=prefix)["content"] == "Hi"
    content["close"].pop()
    assert parse_response(text, tpl, prefix=prefix)["content"] == "Hi<X>there"
    tpl.setdefault("defaults", {})["role"] = "model"  # a nested dict's value
    assert parse_response(text, tpl, prefix=prefix)["role"] == "model"
    del tpl["defaults"]  # a key deleted
    assert "role" not in parse_response(text, tpl, prefix=prefix)
    tpl["fields"]["content"]["nope"] = 1  # a key added, which makes it invalid: raised on every call
    for _ in range(2):
        with pytest.raises(TemplateError, match="nope"):
            parse_response(text, tpl, prefix=prefix)
    del tpl["fields"]["content"]["nope"]
    assert parse_response(text, tpl, prefix=prefix) == {"content": "Hi<X>there"}


def test_only_dicts_that_load_template_keeps_are_kept():
    tpl = get_template("hermes3")
    parse_response("Hi<|im_end|>", tpl, prefix="")
    kept = parser_mod._last
    assert kept[0] is tpl
    expected = {"role": "assistant", "content": "Hi"}
    # a compiled template, a shipped name, another mapping: read, not kept
    for other in (load_template(tpl), "hermes3", MappingProxyType(copy.deepcopy(tpl))):
        assert parse_response("Hi<|im_end|>", other, prefix="") == expected
        assert parser_mod._last is kept
    # an invalid dict: raised, not kept
    with pytest.raises(TemplateError):
        parse_response("Hi", {"start_anchor": "<a>", "fields": {}, "nope": 1}, prefix="")
    assert parser_mod._last is kept


def test_an_equal_dict_is_not_taken_for_the_kept_one():
    """`==` alone would take `True` for `1`: the entry is for the very dict (identity), whose snapshot it equals."""
    tpl = {"version": 1, "start_anchor": "<a>", "fields": {"content": {"close": "<e>"}}}
    assert parse_response("Hi<e>", tpl, prefix="") == {"content": "Hi"}
    assert parser_mod._last[0] is tpl
    other = {"version": True, "start_anchor": "<a>", "fields": {"content": {"close": "<e>"}}}
    assert other == tpl
    with pytest.raises(TemplateError, match="version"):
        parse_response("Hi<e>", other, prefix="")


def test_the_entry_stays_right_once_the_identity_cache_has_dropped_its_dict():
    tpl = get_template("hermes3")
    assert parse_response("Hi<|im_end|><X>", tpl, prefix="")["content"] == "Hi"
    assert parser_mod._last[0] is tpl
    for i in range(300):  # (more than `template._CACHE_SIZE` dicts: `tpl`'s `_by_id` entry is dropped)
        load_template({"start_anchor": "<a>", "fields": {"content": {"close": f"<e{i}>"}}})
    assert id(tpl) not in _by_id and parser_mod._last[0] is tpl
    assert parse_response("Hi<|im_end|><X>", tpl, prefix="")["content"] == "Hi"
    tpl["fields"]["content"]["close"] = "<X>"
    assert parse_response("Hi<|im_end|><X>", tpl, prefix="")["content"] == "Hi<|im_end|>"
    assert parser_mod._last[0] is tpl and _by_id[id(tpl)][0] is tpl


def test_alternating_dicts_each_edited_in_place():
    a, b = get_template("hermes3"), get_template("qwen3")
    for close in ("<|im_end|>", "<X>", "<Y>"):
        a["fields"]["content"]["close"] = close  # edited while the entry holds `b`
        for tpl in (a, b, a):
            got = parse_response("Hi<X>there<Y>x<|im_end|>", tpl, prefix="")
            assert got == _reference(tpl, "Hi<X>there<Y>x<|im_end|>", "")
