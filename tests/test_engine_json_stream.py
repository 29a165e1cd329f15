"""`json` options for bodies that end where the JSON ends (issue 15): `trailing`, `separator`, `empty`; and
transform placeholders with fallbacks (`"{content.parameters|content.arguments}"`)."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, TemplateError, jsonscan, load_template, parse_response
from hf_response_templates.library import get_template


def tpl(close: str | None = "</s>", **args) -> dict:
    """`<tc>` opens a `json` field with `args`; the implicit `content` field takes the rest."""
    field = {"open": "<tc>", "content": "json", "content_args": args}
    if close is not None:
        field["close"] = close
    return {"start_anchor": "A:", "fields": {"tc": field, "content": {"close": "</s>"}}}


def streamed(template, raw: str, chunks: list[str] | None = None, **kwargs) -> dict:
    parser = ResponseParser(template, "", **kwargs)
    for chunk in chunks if chunks is not None else list(raw):
        parser.feed(chunk)
    return parser.finalize()[0]


def both(template, raw: str) -> dict:
    """The one-shot message, asserted equal to the message streamed one character at a time."""
    message = parse_response(raw, template, prefix="", strict=False)
    assert streamed(template, raw) == message
    return message


# ---------------------------------------------------------------- trailing: stream


@pytest.mark.parametrize(
    "raw, value, content",
    [
        ('<tc>{"a": "}"} then prose</s>', {"a": "}"}, "then prose"),
        ('<tc>{"a": "\\"}{"}Next', {"a": '"}{'}, "Next"),
        ('<tc> [1, {"b": [2, {"c": "]"}]}]\nAfter.', [1, {"b": [2, {"c": "]"}]}], "After."),
        ('<tc>"a string" and more', "a string", "and more"),
        ("<tc>-12.5e3 units</s>", -12500.0, "units"),
        ("<tc>true!", True, "!"),
        ('<tc>{"x": 1}', {"x": 1}, None),
        ('<tc>{"x": 1}</s>after the end', {"x": 1}, None),
    ],
)
def test_trailing_stream_ends_the_region_where_the_value_ends(raw, value, content):
    message = both(tpl(trailing="stream"), raw)
    assert message["tc"] == value
    assert message.get("content") == content
    assert "unparsed" not in message


def test_a_value_that_is_not_done_is_not_cut_early_and_is_kept():
    # a `}` inside a string, an unclosed object: the region runs to its close delimiter, and the body is kept
    raw = '<tc>{"a": "x}", "b": {"c": 1}</s>'
    message = both(tpl(trailing="stream"), raw)
    assert "tc" not in message and "content" not in message
    assert message["unparsed"][0]["field"] == "tc"
    assert message["unparsed"][0]["text"] == '{"a": "x}", "b": {"c": 1}'


@pytest.mark.parametrize("raw", ["<tc>not json at all</s>", '<tc>{"a": 1]} x</s>', "<tc>, 1</s>", "<tc>12ab x</s>",
                                 "<tc>true" + "e" * 2000 + " x</s>"])
def test_a_body_that_is_not_json_runs_to_the_close_delimiter(raw):
    message = both(tpl(trailing="stream"), raw)
    assert message["unparsed"][0]["text"] == raw[len("<tc>"):-len("</s>")]
    assert "content" not in message


def test_a_field_without_close_delimiter_ends_at_its_value_too():
    assert both(tpl(close=None, trailing="stream"), '<tc>{"a": 1} rest') == {"tc": {"a": 1}, "content": "rest"}


def test_trailing_error_is_the_default():
    message = both(tpl(trailing="error"), '<tc>{"a": 1} rest</s>')
    assert "extra data" in message["unparsed"][0]["error"].lower()
    assert both(tpl(), '<tc>{"a": 1} rest</s>') == message


def test_the_region_reopens_after_its_value():
    template = tpl(trailing="stream")
    template["fields"]["tc"]["repeats"] = True
    message = both(template, '<tc>{"a": 1}, then <tc>[2] and done</s>')
    assert message == {"tc": [{"a": 1}, [2]], "content": ", then\nand done"}


def test_events_close_the_region_where_the_value_ends():
    parser = ResponseParser(tpl(trailing="stream"), "")
    events = parser.feed('<tc>{"a"') + parser.feed(': 1}Hi')
    closes = [e for e in events if e["type"] == "region_close"]
    assert closes == [{"type": "region_close", "field": "tc", "value": {"a": 1}}]
    chunks = "".join(e["text"] for e in events if e["type"] == "region_chunk" and e["field"] == "tc")
    assert chunks == '{"a": 1}'
    assert parser.current_field == "content"


def test_a_parser_pickled_inside_a_streamed_value_resumes():
    parser = ResponseParser(tpl(trailing="stream", separator=";"), "")
    parser.feed('<tc>{"a": "x}"} ;')
    resumed = pickle.loads(pickle.dumps(parser))
    for p in (parser, resumed):
        p.feed(' [2] tail')
    assert parser.finalize()[0] == resumed.finalize()[0] == {"tc": [{"a": "x}"}, [2]], "content": "tail"}


def test_a_streamed_body_is_read_once(monkeypatch):
    """No rescans: the characters the scanner reads add up to the body's length, for 1-character chunks."""
    read = []
    scan = jsonscan.ValueEnd.scan

    def counting(self, s, pos, stop, w0, closed):
        read.append(max(0, stop - max(pos, self.seen - w0)))
        return scan(self, s, pos, stop, w0, closed)

    monkeypatch.setattr(jsonscan.ValueEnd, "scan", counting)
    body = '{"k": "' + "x}" * 50_000 + '", "n": [' + "[1], " * 2_000 + "0]} ;  [3]"
    message = streamed(tpl(trailing="stream", separator=";"), "<tc>" + body + " tail", None)
    assert message["content"] == "tail" and len(message["tc"]) == 2
    assert sum(read) <= len(body) + len(" tail") + 1


# ---------------------------------------------------------------- separator


@pytest.mark.parametrize(
    "raw, value, content",
    [
        ('<tc>{"a": 1}; {"b": 2};{"c": 3}</s>', [{"a": 1}, {"b": 2}, {"c": 3}], None),
        ('<tc>{"a": 1} ;\n {"b": 2} rest</s>', [{"a": 1}, {"b": 2}], "rest"),
        ('<tc>{"a": 1};</s>', [{"a": 1}], None),
        ('<tc>{"a": 1}; and prose</s>', [{"a": 1}], "and prose"),
        ("<tc>1;2;3", [1, 2, 3], None),
    ],
)
def test_separator_reads_a_sequence_into_a_list(raw, value, content):
    message = both(tpl(trailing="stream", separator=";"), raw)
    assert message["tc"] == value and message.get("content") == content


def test_separator_without_trailing_stream_reads_the_whole_body():
    assert both(tpl(separator=";"), '<tc> {"a": 1} ; [2] ; </s>')["tc"] == [{"a": 1}, [2]]
    message = both(tpl(separator=";"), '<tc>{"a": 1} {"b": 2}</s>')
    assert "expected ';'" in message["unparsed"][0]["error"]


@pytest.mark.parametrize(
    "raw, value, content",
    [
        ("<tc>[1] || [2] |x</s>", [[1], [2]], "|x"),  # a partial separator goes back to the stream
        ("<tc>[1] |</s>", [[1]], "|"),  # cut by the close delimiter
        ("<tc>[1] |", [[1]], "|"),  # cut by the end of the stream
        ("<tc>[1]||[2]||", [[1], [2]], None),
    ],
)
def test_a_multi_character_separator_is_held_until_it_is_complete(raw, value, content):
    message = both(tpl(trailing="stream", separator="||"), raw)
    assert message["tc"] == value and message.get("content") == content


def test_separator_with_unquoted_keys():
    message = both(tpl(trailing="stream", separator=";", unquoted_keys=True), "<tc>{a: 1}; {b: [2]} ok</s>")
    assert message == {"tc": [{"a": 1}, {"b": [2]}], "content": "ok"}


# ---------------------------------------------------------------- empty


def test_empty_reads_an_empty_body_as_a_fresh_value():
    template = tpl(trailing="stream", empty={})
    template["fields"]["tc"]["repeats"] = True  # (a field whose value is empty is left out of the message)
    first = both(template, "<tc>  </s>")
    assert first == {"tc": [{}]}
    first["tc"][0]["mutated"] = True
    assert both(template, "<tc></s>") == {"tc": [{}]}
    assert both(tpl(empty=[]), "<tc>[1]</s>") == {"tc": [1]}
    assert "unparsed" in both(tpl(), "<tc> </s>")


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "args, key, words",
    [
        ({"trailing": "reopen"}, "content_args.trailing", '"error"'),
        ({"trailing": True}, "content_args.trailing", '"stream"'),
        ({"separator": ""}, "content_args.separator", "non-empty"),
        ({"separator": " ;"}, "content_args.separator", "whitespace"),
        ({"separator": "{"}, "content_args.separator", "JSON value"),
        ({"separator": ";" * 17}, "content_args.separator", "16"),
        ({"trailing": "stream", "string_delims": [["<", ">"]]}, "content_args.trailing", "string_delims"),
    ],
)
def test_bad_options_are_template_errors_naming_field_and_key(args, key, words):
    with pytest.raises(TemplateError) as info:
        load_template(tpl(**args))
    assert info.value.field == "tc" and info.value.key == key and words in str(info.value)


def test_trailing_stream_is_for_a_fields_own_content_only():
    template = {"start_anchor": "A:", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "xml-inline",
                "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</\w+>",
                                 "value_parser": {"name": "json", "args": {"trailing": "stream"}}}}}}
    with pytest.raises(TemplateError) as info:
        load_template(template)
    assert info.value.key == "content_args.value_parser.args.trailing"


# ---------------------------------------------------------------- placeholders with fallbacks


CALL = {"start_anchor": "A:", "fields": {"call": {"open": "<c>", "close": "</c>", "content": "json",
        "transform": {"name": "{content.name}", "arguments": "{content.parameters|content.arguments}"}}}}


@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_a_placeholder_takes_the_first_alternative_that_resolves(key):
    raw = f'<c>{{"name": "f", "{key}": {{"a": 1}}}}</c>'
    assert parse_response(raw, CALL, prefix="") == {"call": {"name": "f", "arguments": {"a": 1}}}


def test_the_first_alternative_wins_when_both_resolve():
    raw = '<c>{"name": "f", "arguments": {"b": 2}, "parameters": {"a": 1}}</c>'
    assert parse_response(raw, CALL, prefix="")["call"]["arguments"] == {"a": 1}


def test_no_alternative_resolving_is_a_malformed_region_that_says_why():
    message = parse_response('<c>{"name": "f"}</c>', CALL, prefix="", strict=False)
    error = message["unparsed"][0]["error"]
    assert "no alternative resolves" in error and "'parameters'" in error and "'arguments'" in error


@pytest.mark.parametrize(
    "placeholder, words",
    [("{content.a|content.a}", "repeats an alternative"), ("{content.a|content.$nope}", "unknown step"),
     ("{content.a|other}", "neither 'content' nor a named group")],
)
def test_bad_fallbacks_are_rejected_when_the_template_loads(placeholder, words):
    template = {"start_anchor": "A:", "fields": {"c": {"open": "<c>", "close": "</c>", "content": "json",
                                                       "transform": {"v": placeholder}}}}
    with pytest.raises(TemplateError) as info:
        load_template(template)
    assert words in str(info.value) and info.value.key == "transform"


def test_fallbacks_with_transform_each():
    template = tpl(trailing="stream", separator=";")
    template["fields"]["tc"].update(transform_each=True, transform={"n": "{name}", "a": "{parameters|arguments}"})
    message = both(template, '<tc>{"name": "x", "arguments": {}}; {"name": "y", "parameters": {"q": 1}}')
    assert message["tc"] == [{"n": "x", "a": {}}, {"n": "y", "a": {"q": 1}}]


# ---------------------------------------------------------------- the shipped templates: prose stays content

LLAMA = "<|start_header_id|>assistant<|end_header_id|>\n\n"
GRANITE = "<|start_of_role|>assistant<|end_of_role|>"


def shipped(family: str, prefix: str, raw: str) -> dict:
    message = parse_response(raw, family, prefix=prefix, strict=False)
    parser = ResponseParser(get_template(family), prefix)
    for chunk in raw:
        parser.feed(chunk)
    assert parser.finalize()[0] == message
    return message


def calls(message: dict) -> list[tuple]:
    return [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]


def test_llama3_prose_that_quotes_json_after_a_call_stays_content():
    raw = '{"name": "f", "parameters": {}} I sent {"name": "g", "parameters": {}} as JSON.<|eot_id|>'
    message = shipped("llama3", LLAMA, raw)
    assert calls(message) == [("f", {})]
    assert message["content"] == 'I sent {"name": "g", "parameters": {}} as JSON.'


def test_llama3_prose_before_json_is_never_a_call():
    raw = 'Use the format {"name": "f", "parameters": {}}; {"name": "g", "parameters": {}}<|eot_id|>'
    assert shipped("llama3", LLAMA, raw) == {"role": "assistant", "content": raw[: -len("<|eot_id|>")]}


def test_llama3_parallel_calls_with_python_tag_and_both_argument_keys():
    raw = '<|python_tag|>{"name": "a", "parameters": {"x": 1}} ; {"name": "b", "arguments": {"y": "; }"}}<|eom_id|>'
    assert calls(shipped("llama3", LLAMA, raw)) == [("a", {"x": 1}), ("b", {"y": "; }"})]


def test_granite_text_after_the_call_array_stays_content():
    raw = ('Checking.<|tool_call|>[{"name": "f", "arguments": {"q": "] <|tool_call|>"}}]\nThe array '
           '[{"name": "g"}] is what I sent.<|end_of_text|>')
    message = shipped("granite-3.3", GRANITE, raw)
    assert calls(message) == [("f", {"q": "] <|tool_call|>"})]
    assert message["content"] == 'Checking.\nThe array [{"name": "g"}] is what I sent.'


@pytest.mark.parametrize(
    "raw, expected_calls, content",
    [
        ("[TOOL_CALLS]ping", [("ping", {})], None),
        ("[TOOL_CALLS]ping</s>", [("ping", {})], None),
        ('[TOOL_CALLS]a[ARGS]{"x": "}"}[TOOL_CALLS]b[ARGS]{} Done.</s>', [("a", {"x": "}"}), ("b", {})], "Done."),
        ("The marker [TOOL_CALLS] starts a call.</s>", [], "The marker [TOOL_CALLS] starts a call."),
    ],
)
def test_mistral_calls_without_arguments_and_prose_after_them(raw, expected_calls, content):
    message = shipped("mistral-small-3.2", "[INST]hi[/INST]", raw)
    assert calls(message) == expected_calls and message.get("content") == content
    assert "unparsed" not in message


# ---------------------------------------------------------------- chunking invariance

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text("ab}{][\"\\ ;|</s>", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("k}\"", max_size=3), inner, max_size=3),
    max_leaves=8,
)
_TAIL = st.text(" \n;|}]{[\"ab<tc></s>", max_size=12)


@given(data=st.data(), separator=st.sampled_from([None, ";", "||"]))
def test_streaming_equals_one_shot_for_any_chunking(data, separator):
    values = data.draw(st.lists(_JSON, min_size=1, max_size=3), label="values")
    gaps = data.draw(st.lists(st.sampled_from(["", " ", "\n ", "x"]), min_size=len(values), max_size=len(values)))
    sep = separator or ";"
    body = "".join(json.dumps(v) + (gap + sep + gap if i < len(values) - 1 else "") for i, (v, gap) in
                   enumerate(zip(values, gaps, strict=True)))
    raw = "<tc>" + body + data.draw(_TAIL, label="tail")
    args = {"trailing": "stream"} if separator is None else {"trailing": "stream", "separator": separator}
    template = tpl(**args)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(raw)), max_size=10), label="cuts")))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    one_shot = parse_response(raw, template, prefix="", strict=False)
    assert streamed(template, raw, chunks) == one_shot
    if "tc" in one_shot and "unparsed" not in one_shot and "<tc>" not in raw[4:]:  # the body's first value
        assert (one_shot["tc"] if separator is None else one_shot["tc"][0]) == values[0]
