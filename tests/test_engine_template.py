"""SPEC "Template" and "Field keys": validation, compilation and caching of response templates."""

from __future__ import annotations

import copy

import pytest
from engine_helpers import GPT_OSS, QWEN_XML, SMOLLM3, template

from hf_response_templates import ResponseTemplate, TemplateError, load_template


def _err(spec, *, field=None, key=None, match=None):
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    err = info.value
    assert isinstance(err, ValueError)
    if field is not None:
        assert err.field == field, str(err)
        assert repr(field) in str(err)
    if key is not None:
        assert err.key == key, str(err)
    if match is not None:
        assert match in str(err), str(err)
    return err


def test_seed_templates_load_and_expose_their_shape():
    tpl = load_template(SMOLLM3)
    assert isinstance(tpl, ResponseTemplate)
    assert tpl.field_names == ("reasoning_content", "tool_calls", "content")
    assert tpl.implicit_field.name == "content"
    assert tpl.source == SMOLLM3
    assert load_template(QWEN_XML).implicit_field.name == "content"
    assert load_template(GPT_OSS).implicit_field is None


def test_compiled_template_is_cached_by_content_and_immutable():
    a = load_template(copy.deepcopy(SMOLLM3))
    b = load_template(copy.deepcopy(SMOLLM3))
    assert a is b
    assert load_template(a) is a
    with pytest.raises(AttributeError):
        a.fields = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.by_name["x"] = None  # type: ignore[index]
    # source and defaults are fresh copies: mutating them cannot change the template
    a.source["fields"].clear()
    a.defaults["role"] = "user"
    assert a.source == SMOLLM3 and a.defaults == {"role": "assistant"}


def test_mutating_the_input_dict_after_loading_does_not_change_the_compiled_template():
    spec = copy.deepcopy(SMOLLM3)
    tpl = load_template(spec)
    spec["fields"]["content"]["close"] = "<END>"
    assert tpl.source == SMOLLM3
    assert load_template(spec) is not tpl


def test_version_1_is_accepted_and_others_rejected():
    load_template({**SMOLLM3, "version": 1})
    _err({**SMOLLM3, "version": 2}, key="version", match="version")
    _err({**SMOLLM3, "version": True}, key="version")


def test_unknown_top_level_key():
    _err({**SMOLLM3, "start": "x"}, key="start", match="unknown top-level key")


def test_unknown_field_key_names_field_and_key():
    _err(template(SMOLLM3, content={"close": "<|im_end|>", "strip": True}), field="content", key="strip")


def test_both_open_and_open_pattern():
    _err(template(SMOLLM3, reasoning_content={"open": "<think>", "open_pattern": "<think>"}),
         field="reasoning_content", key="open_pattern", match="both")


def test_both_close_and_close_pattern():
    _err(template(SMOLLM3, reasoning_content={"open": "<think>", "close": "a", "close_pattern": "b"}),
         field="reasoning_content", key="close_pattern")


@pytest.mark.parametrize("anchors", [{}, {"start_anchor": "a", "start_anchor_pattern": "a"}])
def test_exactly_one_start_anchor(anchors):
    spec = {k: v for k, v in SMOLLM3.items() if k != "start_anchor"}
    spec.update(anchors)
    err = _err(spec)
    assert err.key in ("start_anchor", "start_anchor_pattern")


def test_two_implicit_fields():
    _err(template(SMOLLM3, reasoning_content={"close": "</think>"}), key="open", match="at most one field")


@pytest.mark.parametrize("key", ["open_pattern", "close_pattern", "start_anchor_pattern"])
def test_bad_regex_names_the_key(key):
    if key == "start_anchor_pattern":
        spec = {k: v for k, v in SMOLLM3.items() if k != "start_anchor"}
        spec[key] = "(unclosed"
        _err(spec, key=key, match="not a valid regex")
    else:
        spec = template(SMOLLM3, reasoning_content={"open": "<think>", "close": "</think>", key: "(unclosed"})
        spec["fields"]["reasoning_content"].pop(key.split("_")[0])
        _err(spec, field="reasoning_content", key=key, match="not a valid regex")


def test_join_without_repeats():
    _err(template(SMOLLM3, reasoning_content={"open": "<think>", "close": "</think>", "join": "\n"}),
         field="reasoning_content", key="join", match="repeats")


def test_join_must_be_a_string():
    _err(template(SMOLLM3, reasoning_content={"open": "<think>", "repeats": True, "join": 1}),
         field="reasoning_content", key="join")


def test_mixed_text_placeholder_is_rejected():
    spec = template(SMOLLM3, tool_calls={"open": "<tool_call>", "close": "</tool_call>", "content": "json",
                                         "transform": {"name": "call {content}"}})
    _err(spec, field="tool_calls", key="transform", match="mixes a {placeholder}")


def test_named_groups_without_transform():
    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"].pop("transform")
    _err(spec, field="tool_calls", key="transform", match="['name']")


def test_placeholder_that_is_neither_content_nor_a_group():
    spec = template(SMOLLM3, tool_calls={"open": "<tool_call>", "close": "</tool_call>", "content": "json",
                                         "transform": {"function": "{cotnent}"}})
    _err(spec, field="tool_calls", key="transform", match="{cotnent}")


def test_unknown_content_parser_lists_available_ones():
    _err(template(SMOLLM3, content={"close": "<|im_end|>", "content": "yaml"}), field="content", key="content",
         match="xml-inline")


@pytest.mark.parametrize(
    "field_spec, key",
    [
        ({"open": 5}, "open"),
        ({"open": []}, "open"),
        ({"open": ["<a>", 3]}, "open"),
        ({"open": ""}, "open"),
        ({"open": "<a>", "repeats": "yes"}, "repeats"),
        ({"open": "<a>", "optional": 0}, "optional"),
        ({"open": "<a>", "transform_each": 1, "transform": {}}, "transform_each"),
        ({"open": "<a>", "content": ["json"]}, "content"),
        ({"open": "<a>", "content_args": []}, "content_args"),
        ({"open": "<a>", "content": "json", "content_args": {"unquoted": True}}, "content_args"),
        ({"open": "<a>", "content": "json", "content_args": {"unquoted_keys": "yes"}}, "content_args.unquoted_keys"),
        ({"open": "<a>", "content": "json", "content_args": {"string_delims": [["<<"]]}}, "content_args.string_delims"),
        ({"open": "<a>", "content": "xml-inline"}, "content_args.tag_pattern"),
        ({"open": "<a>", "content": "xml-inline", "content_args": {"tag_pattern": "<(?P<key>\\w+)>"}},
         "content_args.tag_pattern"),
        ({"open": "<a>", "content": "kv-lines", "content_args": {"value_parser": {"name": "nope"}}},
         "content_args.value_parser.name"),
        ({"open": "<a>", "content": "kv-lines", "content_args": {"kv_sep": ""}}, "content_args.kv_sep"),
        ({"open": "<a>", "content": "text", "content_args": {"strip": "no"}}, "content_args.strip"),
        ({"open": "<a>", "transform_each": True}, "transform_each"),
        ({"open": "<a>", "transform": {"x": {1, 2}}}, None),
    ],
)
def test_wrong_types_name_field_and_key(field_spec, key):
    spec = template(SMOLLM3, extra=field_spec)
    err = _err(spec, field=None if key is None else "extra")
    if key is not None:
        assert err.key == key, str(err)


def test_field_spec_must_be_a_dict_and_fields_non_empty():
    _err(template(SMOLLM3, content="text"), field="content")
    _err({**SMOLLM3, "fields": {}}, key="fields")
    _err({**SMOLLM3, "defaults": []}, key="defaults")
    _err([SMOLLM3])


def test_delimiter_matching_the_empty_string_is_rejected():
    _err(template(SMOLLM3, reasoning_content={"open_pattern": "x*", "close": "</think>"}),
         field="reasoning_content", key="open_pattern", match="empty string")
    _err(template(SMOLLM3, reasoning_content={"open": "<think>", "close_pattern": "\\s*"}),
         field="reasoning_content", key="close_pattern", match="omit 'close'")
    # anchored zero-width delimiters are accepted (issue 12)
    load_template(template(SMOLLM3, reasoning_content={"open": "<think>", "close_pattern": "$"}))
    load_template(template(SMOLLM3, reasoning_content={"open_pattern": "(?:^|<think>\\s*)", "close": "</think>"}))


def test_lookahead_delimiters_are_allowed():
    load_template(template(SMOLLM3, reasoning_content={"open": "<think>", "close_pattern": "(?=<tool_call>)"}))


def test_group_named_content_is_reserved():
    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"]["open_pattern"] = r"<tool_call><function=(?P<content>\w+)>"
    _err(spec, field="tool_calls", key="open_pattern", match="reserved")


def test_non_json_values_are_rejected():
    _err({**SMOLLM3, "defaults": {"role": object()}}, match="JSON-compatible")


def test_the_same_dict_passed_again_is_recognised_and_edits_made_in_place_are_seen():
    spec = copy.deepcopy(SMOLLM3)
    tpl = load_template(spec)
    assert load_template(spec) is tpl  # the identity cache
    spec["fields"]["content"]["close"] = ""  # an edit made in place that makes it invalid
    _err(spec, field="content", key="close")
    spec["fields"]["content"]["close"] = "<|im_end|>"
    assert load_template(spec) is tpl  # equal content again: the compiled template is reused
    spec["defaults"]["role"] = "model"
    assert load_template(spec).defaults == {"role": "model"}


def test_mappings_other_than_dict_are_loaded_by_content():
    from types import MappingProxyType

    tpl = load_template(copy.deepcopy(SMOLLM3))
    assert load_template(MappingProxyType(copy.deepcopy(SMOLLM3))) is tpl
