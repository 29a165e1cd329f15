"""One-shot plans (`hf_response_templates.plan`): `parse_response`'s flat reading of a whole generation gives
exactly the streaming parser's message, and it is actually taken (issue 19).

The property tests reuse the generated texts of `test_oneshot_equals_streaming.py` (each template's own
delimiters, bodies its content parsers read, noise of delimiter characters) and compare the plan's own
result, when it gives one, with the streaming parser; `parse_response` (plan or fallback) must equal it in
every case, `unparsed` records, strict errors and `tools=` typing included. The raw model outputs of the
template tests pin down that the plan is taken, not deferred, for every output the engine reads cleanly.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES, _streamed, _strict, _without_ids, case

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.content import REGEX_TIMEOUT
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.plan import OneShotPlan, plan_for
from hf_response_templates.tools import tool_schemas

#: The shipped templates the state machine keeps for one-shot parsing, and why (none since `report_as`
#: fields, Cohere's citations, are read by the plan too).
NO_PLAN: dict[str, str] = {}

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "integer"},
                                         "days": {"type": "integer"}}}}},
]

#: Every raw-output test module (`CASES` rows: what models generate, with the message expected).
_RAW_MODULES = sorted(p.stem for p in Path(__file__).parent.glob("test_templates_raw_outputs*.py"))
RAW_ALL = [(name, prefix, output) for module in _RAW_MODULES
           for _, name, prefix, output, _ in importlib.import_module(module).CASES]
RAW = [r for r in RAW_ALL if r[0] not in NO_PLAN]


def _plan(name: str) -> OneShotPlan | None:
    return plan_for(load_template(TEMPLATES[name]))


@pytest.mark.parametrize("name", list_templates())
def test_every_shipped_template_has_a_plan_but_the_listed_ones(name):
    plan = _plan(name)
    if name in NO_PLAN:
        assert plan is None
    else:
        assert isinstance(plan, OneShotPlan)
        assert load_template(TEMPLATES[name]).oneshot_plan is plan  # built once, kept on the template


@settings(max_examples=600, deadline=None)
@given(case(), st.booleans())
def test_the_plan_gives_the_streaming_message_or_defers(c, with_tools):
    name, prefix, generation, chunks = c
    tpl = TEMPLATES[name]
    tools = TOOLS if with_tools else None
    streamed, errors = _streamed(tpl, prefix, chunks, tools=tools)
    plan = _plan(name)
    if plan is not None:
        got = plan.run(generation, prefix, tool_schemas(tools) if tools else None)
        if got is not None:  # the plan only answers for responses the state machine reads without a problem
            assert not errors and "unparsed" not in streamed
            assert _without_ids(got) == _without_ids(streamed)
    oneshot = parse_response(generation, tpl, prefix=prefix, tools=tools, strict=False)
    assert _without_ids(oneshot) == _without_ids(streamed)
    raised = _strict(generation, tpl, prefix, tools=tools)
    assert raised == ((type(errors[0]).__name__, errors[0].field, errors[0].position) if errors else None)


@pytest.mark.parametrize("name, prefix, output", RAW, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RAW)])
def test_the_plan_is_taken_for_every_raw_model_output_read_cleanly(name, prefix, output):
    tpl = get_template(name)
    parser = ResponseParser(tpl, prefix)
    parser.feed(output)
    streamed, _ = parser.finalize()
    got = _plan(name).run(output, prefix, None)
    if parser.errors:  # (text outside every region, a region that does not parse): the state machine's
        assert got is None
    else:
        assert got is not None, "the plan deferred on a clean output"
        assert _without_ids(got) == _without_ids(streamed)


def test_raw_outputs_cover_every_template_with_a_plan():
    # (so that the test above runs for each of them), and most of those outputs are read by the plan
    assert {n for n, _, _ in RAW} == set(list_templates()) - set(NO_PLAN)
    taken = sum(_plan(n).run(o, p, None) is not None for n, p, o in RAW)
    assert taken >= 0.9 * len(RAW), (taken, len(RAW))


def test_the_plan_defers_on_what_only_the_state_machine_reports():
    plan = _plan("hermes3")
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert plan.run("Hi" + call, "", None) is not None
    assert plan.run("Hi<tool_call>\n{not json\n</tool_call>", "", None) is None  # a region that does not parse
    message = parse_response("Hi<tool_call>\n{not json\n</tool_call>", "hermes3", prefix="", strict=False)
    assert message["unparsed"][0]["field"] == "tool_calls" and message["unparsed"][0]["position"] == 13
    # text outside every region (a template without an implicit field)
    tpl = {"start_anchor": "A:", "fields": {"content": {"open": "<c>", "close": "</c>"}}}
    plan = plan_for(load_template(tpl))
    assert plan.run("<c>x</c>  \n", "", None) == {"content": "x"}
    assert plan.run("<c>x</c> stray", "", None) is None
    assert parse_response("<c>x</c> stray", tpl, prefix="", strict=False)["unparsed"][0]["text"] == " stray"
    # text the prompt left before the generation is not the model's: not outside every region
    assert plan.run("<c>x</c>", "A: prompt text", None) == {"content": "x"}
    # a required field the model never wrote
    tpl = {"start_anchor": "A:", "fields": {"content": {"close": "<e>"}, "r": {"open": "<r>", "close": "</r>",
                                                                                   "optional": False}}}
    assert plan_for(load_template(tpl)).run("hi<e>", "", None) is None
    with pytest.raises(Exception, match="required"):
        parse_response("hi<e>", tpl, prefix="")
    # a second value a non-repeating field cannot merge
    tpl = {"start_anchor": "A:", "fields": {"j": {"open": "<j>", "close": "</j>", "content": "json"}}}
    assert plan_for(load_template(tpl)).run('<j>{"a": 1}</j><j>{"b": 2}</j>', "", None) is None
    assert parse_response('<j>{"a": 1}</j><j>{"b": 2}</j>', tpl, prefix="", strict=False)["j"] == {"a": 1}


def test_calls_the_plan_does_not_take_go_to_the_state_machine():
    tpl = load_template("qwen3")
    plan = plan_for(tpl)
    text = "<think>Hm</think>Hi!<|im_end|>"
    expected = {"role": "assistant", "reasoning_content": "Hm", "content": "Hi!"}
    assert plan.run(text, "", None) == expected
    token = REGEX_TIMEOUT.set(0.5)  # a caller's own regex timeout: only the state machine applies it
    try:
        assert plan.run(text, "", None) is None
        assert parse_response(text, tpl, prefix="") == expected
    finally:
        REGEX_TIMEOUT.reset(token)
    assert parse_response(text, tpl, prefix="", regex_timeout=0.5) == expected
    with pytest.raises(ValueError, match="prefix"):
        parse_response(text, tpl)
    with pytest.raises(TypeError, match="prefix"):
        parse_response(text, tpl, prefix=[1, 2])


@settings(max_examples=300, deadline=None)
@given(case(), st.sampled_from([0.5, 2.0]))
def test_a_callers_regex_timeout_sends_only_templates_that_run_a_regex_to_the_state_machine(c, timeout):
    """Under a regex timeout of the caller's context the plan answers None where the template runs a regex
    (`has_regex`: the state machine applies that timeout), and where it runs none (Hermes 3, SmolLM3, ...:
    nothing reads it) the two-state loop answers as it does without it: the state machine's message."""
    name, prefix, generation, chunks = c
    tpl = load_template(TEMPLATES[name])
    plan = plan_for(tpl)
    free = plan.run(generation, prefix, None)
    token = REGEX_TIMEOUT.set(timeout)
    try:
        got = plan.run(generation, prefix, None)
        if tpl.has_regex or plan._fast is None:
            assert got is None
        else:
            assert got == free
            if got is not None:
                assert _without_ids(got) == _without_ids(_streamed(TEMPLATES[name], prefix, chunks)[0])
        assert _without_ids(parse_response(generation, TEMPLATES[name], prefix=prefix, strict=False)) == _without_ids(
            _streamed(TEMPLATES[name], prefix, chunks)[0])
    finally:
        REGEX_TIMEOUT.reset(token)


def test_an_untimed_template_is_read_by_the_plan_under_a_callers_regex_timeout():
    """Hermes 3 runs no regex: the plan reads it under a caller's regex timeout; a `remove_pattern` (a content
    regex) makes the same template one that does, which the state machine reads then."""
    text, expected = "<think>Hm</think>Hi!<|im_end|>", {"role": "assistant", "content": "<think>Hm</think>Hi!"}
    hermes = get_template("hermes3")
    marked = {**hermes, "fields": {**hermes["fields"], "content": {**hermes["fields"]["content"],
                                                                      "content_args": {"remove_pattern": "<x>"}}}}
    assert not load_template(hermes).has_regex and load_template(marked).has_regex
    token = REGEX_TIMEOUT.set(0.5)
    try:
        assert plan_for(load_template(hermes)).run(text, "", None) == expected
        assert plan_for(load_template(marked)).run(text, "", None) is None
        assert parse_response(text, marked, prefix="") == expected
    finally:
        REGEX_TIMEOUT.reset(token)


def test_a_template_with_a_policy_key_has_no_plan():
    tpl = {**get_template("qwen3"), "policy": {"text_after_tool_calls": "unparsed"}}
    assert plan_for(load_template(tpl)) is None


def test_join_and_repeated_text_fields_merge_as_the_state_machine_does():
    tpl = {"start_anchor": "A:", "defaults": {"role": "assistant", "notes": "pre"},
           "fields": {"notes": {"open": "<n>", "close": "</n>", "repeats": True, "join": "|"},
                      "t": {"open": "<t>", "close": "</t>"}, "content": {"close": "<e>"}}}
    text = "a<n>x</n> b <n>y</n><t>one</t><t> </t><t>two</t> c<e>after"
    plan = plan_for(load_template(tpl))
    parser = ResponseParser(tpl, "")
    parser.feed(text)
    streamed, _ = parser.finalize()
    got = plan.run(text, "", None)
    assert got == streamed == {"role": "assistant", "notes": "pre|x|y", "t": "one\ntwo", "content": "a\nb\nc"}


@pytest.mark.parametrize("text", [
    '{"a": 1} and then text',
    '{"a": 1}; {"b": 2}  tail',
    '{"a": 1}</j> after the close',
    '  {"a": [1, {"b": "}"}]}',
    '{"a": 1',
    'not json at all',
    '',
    '"a string" then text',
    '{"a": "x</j>y"} z',  # the close delimiter inside the value: the whole value runs past it
    ' [1, 2]</j>',
    '3 then text',
    '{"a": 1}{"b": 2}',
])
@pytest.mark.parametrize("separator", [{"separator": ";"}, {}])
def test_a_json_region_that_ends_where_its_value_ends(text, separator):
    # `"trailing": "stream"`, with a close delimiter and without one (the region would run to the end); one
    # value (the plan's `whole_value_end` first) or a sequence
    for close in ({"close": "</j>"}, {}):
        tpl = {"start_anchor": "A:", "fields": {
            "j": {"open": "<j>", **close, "content": "json", "content_args": {**separator, "trailing": "stream"},
                  "repeats": True},
            "content": {"content": "text"}}}
        whole = "x <j>" + text
        parser = ResponseParser(tpl, "")
        parser.feed(whole)
        streamed, _ = parser.finalize()
        got = plan_for(load_template(tpl)).run(whole, "", None)
        if parser.errors:
            assert got is None
        else:
            assert got == streamed
        assert parse_response(whole, tpl, prefix="", strict=False) == streamed


@pytest.mark.parametrize("fields", [
    {"content": {"content": "text"}},  # nothing to watch at all
    {"content": {"content": "text", "content_args": {"remove_pattern": r"<\|channel>(?:thought)?"}}},
    {"r": {"open": "<r>"}, "content": {"close": "<e>"}},  # an explicit region without a close delimiter
])
@pytest.mark.parametrize("text", ["a <|chan b", "a <|channel>thought b", " x<r> y <e>z", "<e> w"])
def test_fields_without_a_close_delimiter_run_to_the_end(fields, text):
    tpl = {"start_anchor": "<s>", "fields": fields}
    parser = ResponseParser(tpl, "")
    parser.feed(text)
    streamed, _ = parser.finalize()
    assert plan_for(load_template(tpl)).run(text, "", None) == streamed
    assert parse_response(text, tpl, prefix="") == streamed


def test_tools_given_as_an_iterator_are_read_once():
    # (a response the state machine must read: the call that does not parse is kept in `unparsed`)
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"n": "2"}}\n</tool_call><tool_call>{bad</tool_call>'
    typed = parse_response(text, "hermes3", prefix="", tools=TOOLS, strict=False)
    assert typed["tool_calls"][0]["function"]["arguments"] == {"n": 2} and typed["unparsed"]
    assert parse_response(text, "hermes3", prefix="", tools=iter(TOOLS), strict=False) == typed


_JSON_BITS = st.sampled_from(['{', '}', '[', ']', '"', '"a"', ',', ':', '1', ' ', '\\', 'x', '</j>', 'true', '\n'])


@given(st.lists(_JSON_BITS, max_size=12).map("".join), st.integers(0, 3), st.integers(0, 40))
def test_whole_value_end_is_the_scanner_s_first_answer(text, pos, cut):
    # what `ValueEnd` says about text seen all at once, where `whole_value_end` answers (else it reads nothing)
    from hf_response_templates.jsonscan import ValueEnd, whole_value_end

    pos, stop = min(pos, len(text)), max(min(pos, len(text)), len(text) - cut)
    got = whole_value_end(text, pos, stop)
    if got is not None:
        vend = ValueEnd(None, 512)
        assert vend.scan(text, pos, stop, 0, True) == got[0]
        assert vend.decoded() == (got[1],)

@given(st.lists(_JSON_BITS, max_size=12).map("".join), st.integers(0, 3), st.integers(0, 40))
def test_whole_value_end_reads_what_raw_decode_reads(text, pos, cut):
    # `whole_value_end` calls the decoder's `scan_once` (no `raw_decode` frame): the answer `raw_decode` gave
    import json

    from hf_response_templates.jsonscan import _WS, whole_value_end

    pos, stop = min(pos, len(text)), max(min(pos, len(text)), len(text) - cut)
    want = None
    i = _WS.match(text, pos, stop).end()
    if i < stop and text[i] in '{["':
        try:
            value, e = json.JSONDecoder().raw_decode(text, i)
            if e <= stop:
                want = (e, value)
        except (ValueError, RecursionError):
            pass
    assert whole_value_end(text, pos, stop) == want
    assert whole_value_end('  {"a": [1, {"b": "c"}]} x', 0, 26) == (24, {"a": [1, {"b": "c"}]})
    assert whole_value_end('{"a": ', 0, 6) is None and whole_value_end("[x]", 0, 3) is None


def _both(tpl: dict, prefix: str, text: str) -> tuple[dict | None, dict, dict]:
    """The plan's message, the streaming parser's (the text fed whole) and the streaming parser's fed one
    character at a time (which moves to the late watches after the first character)."""
    parser = ResponseParser(tpl, prefix)
    parser.feed(text)
    whole, _ = parser.finalize()
    parser = ResponseParser(tpl, prefix)
    for ch in text:
        parser.feed(ch)
    chars, _ = parser.finalize()
    return plan_for(load_template(tpl)).run(text, prefix, None), whole, chars


#: Literals that one search finds (`<a>`, `<ab>`, `<|end|>` share their first character) in the idle watch.
_SHARED_FIRST = {"start_anchor": "<s>", "fields": {
    "a": {"open": "<a>", "close": "</a>"},
    "b": {"open": "<ab>", "close": "</ab>", "repeats": True},
    "content": {"close": "<|end|>"},
}}


@pytest.mark.parametrize("text", [
    "x <ab>1</ab> y <a>2</a><|end|>tail", "<a>q</a><ab>r</ab><ab>s</ab>", "a<b <a <ab c<|end|>", "",
    "<|end|><a>after</a>", "<ab><a>in</a></ab> z",
])
@pytest.mark.parametrize("prefix", ["", "<s>", "<s>cut <ab>p</ab> "])
def test_an_idle_watch_of_literals_sharing_a_first_character_is_searched_in_the_loop(text, prefix):
    plan = plan_for(load_template(_SHARED_FIRST))
    idle = load_template(_SHARED_FIRST).idle_watch
    assert plan._ones[idle][0] is None  # the compiled alternation, searched by `run` itself
    got, whole, chars = _both(_SHARED_FIRST, prefix, text)
    assert whole == chars
    assert got is not None and got == whole
    assert parse_response(text, _SHARED_FIRST, prefix=prefix) == whole


#: A delimiter with an alternative anchored at offset 0 (`^\s*(?=\{)`) and one that is not (`<call>`), and
#: a close that matches at offset 0 only: past offset 0 the plan reads with the late watches.
_ANCHORED = {"start_anchor": "<s>", "fields": {
    "call": {"open_pattern": r"^\s*(?=\{)|<call>", "close_pattern": r"(?<=\})\s*(?=\Z|<e>)|</call>",
             "content": "json", "repeats": True},
    "head": {"open_pattern": r"\A(?=#)", "close": "\n"},
    "content": {"close": "<e>"},
}}


@pytest.mark.parametrize("text", [
    '{"k": 1}', '  {"k": 1}  <e>', 'see {"k": 1}<e>', '<call>{"k": 2}</call> and {"k": 3}<e>',
    '# title\nbody {"k": 1} <call>{"j": 0}</call>', 'x # not a head\n', '{"k": 1}<e>{"k": 5}',
])
@pytest.mark.parametrize("prefix", ["", "<s>", "<s>\n", "<s>{"])
def test_delimiters_anchored_at_offset_0_are_read_there_only(text, prefix):
    plan = plan_for(load_template(_ANCHORED))
    assert plan._lates  # the idle watch differs past offset 0
    got, whole, chars = _both(_ANCHORED, prefix, text)
    assert whole == chars
    if got is not None:
        assert got == whole
    assert parse_response(text, _ANCHORED, prefix=prefix, strict=False) == whole


_COHERE_PIECES = [
    "<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>",
    "<|END_TEXT|>", "<|START_ACTION|>", "<|END_ACTION|>", "<|END_OF_TURN_TOKEN|>",
    '[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]',
    "<co>Paris</co: 0:[1]>", "<co>the sky</co: 1:[0, 2], 2:[1]>", "<co></co: 0:[0]>", "<co>x", "</co: 0:[1]>",
    "Hello ", "world.", " ", "\n", "  \n ",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_COHERE_PIECES), max_size=14), st.booleans())
def test_report_as_marks_from_the_plan_equal_the_streaming_parsers(parts, with_tools):
    # Cohere's citations (`report_as`): the marks' offsets into the message's text, over several regions of
    # a field (joined with "\n"), stripped text and the implicit field, are the state machine's
    tpl = TEMPLATES["cohere-command-r7b"]
    text = "".join(parts)
    tools = TOOLS if with_tools else None
    streamed, errors = _streamed(tpl, "", [text], tools=tools)
    got = _plan("cohere-command-r7b").run(text, "", tool_schemas(tools) if tools else None)
    if got is not None:
        assert not errors and "unparsed" not in streamed
        assert _without_ids(got) == _without_ids(streamed)
    assert _without_ids(parse_response(text, tpl, prefix="", tools=tools, strict=False)) == _without_ids(streamed)


def test_the_plan_reads_citations():
    text = ("<|START_THINKING|>Look up <co>Paris</co: 0:[1]>.<|END_THINKING|><|START_RESPONSE|> It is "
            "<co>sunny</co: 1:[0]> in <co>Paris</co: 0:[1]>.<|END_RESPONSE|><|START_TEXT|>Bye <co>now</co: 2:[3]>"
            "<|END_TEXT|><|END_OF_TURN_TOKEN|>")
    got = _plan("cohere-command-r7b").run(text, "", None)
    assert got is not None
    assert got["content"] == "It is sunny in Paris.\nBye now"
    assert [(c["field"], c["start"], c["end"], c["text"]) for c in got["citations"]] == [
        ("tool_plan", 8, 13, "Paris"), ("content", 6, 11, "sunny"), ("content", 15, 20, "Paris"),
        ("content", 26, 29, "now")]
    streamed, _ = _streamed(TEMPLATES["cohere-command-r7b"], "", [text])
    assert got == streamed
