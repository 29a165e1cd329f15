"""Parse policies (`hf_response_templates.policy`): the four cases where real parsers of one model disagree.

Each knob is tested on real-output records (``tests/fixtures/real_outputs/``) of families where peers read the
output differently, with the peer's reading reproduced by the non-default value; streaming equals one-shot with
a policy set (hypothesis, random chunkings); and nothing the model wrote is lost: what a policy takes out of the
message is in ``message["unparsed"]``.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from _real_outputs import load_corpus, normalise_expected, normalise_message
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import (
    ParsePolicy,
    ResponseParseError,
    ResponseParser,
    TemplateError,
    load_template,
    parse_response,
)
from hf_response_templates.library import POLICY_SOURCES, get_template, list_templates, template_info
from hf_response_templates.policy import (
    AFTER_CALLS,
    DEFAULT_POLICY,
    reasoning_rules,
    resolve_policy,
    template_for,
)

RECORDS = {r.id: r for r in load_corpus()}


def _squeeze(text: str | None) -> str:
    return "".join((text or "").split())


def parse(record, policy=None, tools="record", strict=False):
    tools = record.tools if tools == "record" else tools
    return parse_response(record.output, get_template(record.family), prefix=record.effective_prefix, tools=tools,
                          strict=strict, policy=policy)


def streamed(record, chunks, policy=None, tools="record"):
    tools = record.tools if tools == "record" else tools
    parser = ResponseParser(get_template(record.family), record.effective_prefix, tools=tools, policy=policy)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.finalize()[0]


def unparsed(message, field):
    return [u for u in message.get("unparsed") or [] if u["field"] == field]


# ------------------------------------------------------------------------------------------ the type


def test_policy_values_are_validated_naming_the_key():
    with pytest.raises(ValueError, match=r"policy key 'unknown_tools' must be one of \['keep', 'unparsed'\], got 'drop'"):
        ParsePolicy(unknown_tools="drop")
    with pytest.raises(ValueError, match="tool_calls_in_reasoning"):
        ParsePolicy(tool_calls_in_reasoning="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown policy key\(s\) \['unkown_tools'\]"):
        parse_response("Hi<|im_end|>", "qwen3", prefix="", policy={"unkown_tools": "keep"})
    with pytest.raises(ValueError, match="text_after_tool_calls"):
        parse_response("Hi<|im_end|>", "qwen3", prefix="", policy={"text_after_tool_calls": None})
    with pytest.raises(TypeError, match="ParsePolicy or a dict"):
        parse_response("Hi<|im_end|>", "qwen3", prefix="", policy="unparsed")  # type: ignore[arg-type]


def test_template_policy_key_is_validated_naming_the_key():
    template = get_template("qwen3")
    with pytest.raises(TemplateError, match=r"key 'policy\.unknown_tools'.*got 'drop'"):
        load_template({**template, "policy": {"unknown_tools": "drop"}})
    with pytest.raises(TemplateError, match=r"key 'policy\.color'"):
        load_template({**template, "policy": {"color": "red"}})
    with pytest.raises(TemplateError, match="key 'policy'"):
        load_template({**template, "policy": ["unparsed"]})


def test_the_default_policy_runs_no_policy_code():
    parser = ResponseParser(get_template("qwen3"), "")
    assert parser._policy is None and parser.template is load_template(get_template("qwen3"))
    # the neutral values given explicitly are the default too
    assert ResponseParser(get_template("qwen3"), "", policy=ParsePolicy())._policy is None
    assert resolve_policy({}, load_template(get_template("qwen3"))) is None
    assert DEFAULT_POLICY.is_default and not ParsePolicy(unknown_tools="unparsed").is_default


def test_template_defaults_are_overridden_key_by_key():
    glm = load_template({**get_template("glm-4.7"), "policy": {"unknown_tools": "unparsed"}})
    assert glm.policy == ParsePolicy(unknown_tools="unparsed")
    both = resolve_policy({"text_after_tool_calls": "unparsed"}, glm)
    assert both == ParsePolicy(unknown_tools="unparsed", text_after_tool_calls="unparsed")
    assert resolve_policy({"unknown_tools": "keep"}, glm) is None  # back to neutral
    assert resolve_policy(ParsePolicy(), glm) is None  # a ParsePolicy is taken whole


# ------------------------------------------------------------------------------------------ tool_calls_in_reasoning


REASONING_RECORDS = [
    # vLLM's Qwen3 reasoning parser hands the call to the tool parser (our default); parsers that end reasoning
    # only at </think> leave it in the reasoning
    "qwen3.5/test_reasoning[tool_call_no_think_end]",
    "qwen3.5/test_reasoning[tool_call_with_think_no_end]",
    # Ollama before ollama/ollama#18307 left this call in the thinking; vLLM's Gemma 4 parser extracts it
    "gemma4/ollama-18307 tool call opened before the thinking channel closed",
]


@pytest.mark.parametrize("record_id", REASONING_RECORDS)
def test_tool_calls_in_reasoning_extract_is_the_default_and_reasoning_keeps_the_call_as_text(record_id):
    record = RECORDS[record_id]
    default = parse(record)
    assert normalise_message(record.family, default) == normalise_expected(record)  # the peer we follow
    kept = parse(record, {"tool_calls_in_reasoning": "reasoning"})
    assert "tool_calls" not in kept and "unparsed" not in kept
    name = record.expected["tool_calls"][0]["name"]
    # the whole generation after the reasoning's opener is reasoning now: the call's text included
    assert name in kept["reasoning_content"]
    assert _squeeze(default["reasoning_content"]) in _squeeze(kept["reasoning_content"])
    assert len(_squeeze(kept["reasoning_content"])) > len(_squeeze(default["reasoning_content"])) + len(name)


def test_tool_calls_in_reasoning_reasoning_still_ends_at_the_real_close():
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    out = "Plan: <tool_call>\n<function=f>\n</function>\n</tool_call> is the form.</think>Done.<|im_end|>"
    message = parse_response(out, "qwen3.5", prefix=prefix, policy={"tool_calls_in_reasoning": "reasoning"})
    assert message["content"] == "Done."
    assert message["reasoning_content"].startswith("Plan: <tool_call>") and "tool_calls" not in message
    # after </think> a call is a call, whatever the policy
    out = "Plan.</think><tool_call>\n<function=f>\n</function>\n</tool_call><|im_end|>"
    message = parse_response(out, "qwen3.5", prefix=prefix, policy={"tool_calls_in_reasoning": "reasoning"})
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["f"]


def test_reasoning_rules_are_found_in_every_template_that_has_one():
    rules = {name: reasoning_rules(get_template(name)) for name in list_templates()}
    with_rules = {name for name, found in rules.items() if found}
    assert {"qwen3", "qwen3.5", "qwen3-thinking-2507", "glm-4.6", "glm-4.7", "minimax-m2", "gemma4",
            "deepseek-r1", "deepseek-v3.1", "deepseek-v3.2", "deepseek-v4", "kimi-k2-thinking", "seed-oss"} == with_rules
    assert all(set(found) == {"reasoning_content"} for found in rules.values() if found)
    # the rule is only what ends reasoning at a call: qwen3.5's `(?=<think>)` (a doubled opener) stays
    assert rules["qwen3.5"] == {"reasoning_content": ["(?=<tool_call>)"]}


@pytest.mark.parametrize("name", sorted(n for n in list_templates() if reasoning_rules(get_template(n))))
def test_the_reasoning_variant_of_each_template_compiles_once_and_keeps_its_source(name):
    tpl = load_template(get_template(name))
    variant = template_for(tpl, ParsePolicy(tool_calls_in_reasoning="reasoning"))
    assert variant is not tpl and template_for(tpl, ParsePolicy(tool_calls_in_reasoning="reasoning")) is variant
    assert variant.policy.tool_calls_in_reasoning == "reasoning"
    # the variant's source is the template's plus the policy key; going back gives the template's behaviour
    source = variant.source
    assert source.pop("policy")["tool_calls_in_reasoning"] == "reasoning"
    assert {k: v for k, v in source.items()} == {k: v for k, v in tpl.source.items() if k != "policy"}
    back = template_for(variant, ParsePolicy(tool_calls_in_reasoning="extract"))
    assert back.policy is None or back.policy.tool_calls_in_reasoning == "extract"
    assert [f.close.source for f in back.fields if f.close] == [f.close.source for f in tpl.fields if f.close]


def test_a_template_may_default_to_reasoning_and_be_overridden():
    template = {**get_template("qwen3.5"), "policy": {"tool_calls_in_reasoning": "reasoning"}}
    record = RECORDS[REASONING_RECORDS[0]]
    kept = parse_response(record.output, template, prefix=record.effective_prefix)
    assert "tool_calls" not in kept
    extracted = parse_response(record.output, template, prefix=record.effective_prefix,
                               policy={"tool_calls_in_reasoning": "extract"})
    assert normalise_message("qwen3.5", extracted) == normalise_expected(record)


# ------------------------------------------------------------------------------------------ unknown_tools


def _without(tools, name):
    return [t for t in tools if t.get("function", t)["name"] != name]


GLM_RECORDS = [
    "glm-4.6/TestGlm47ExtractToolCalls/test_content_before_tool_call",
    "glm-4.6/test_extract_tool_calls_coerces_schema_types",
]


@pytest.mark.parametrize("record_id", GLM_RECORDS)
def test_glm_rejects_calls_to_functions_not_in_tools_with_unknown_tools_unparsed_as_vllm_does(record_id):
    record = RECORDS[record_id]
    name = record.expected["tool_calls"][0]["name"]
    assert normalise_message(record.family, parse(record)) == normalise_expected(record)  # all tools known
    vllm = {"unknown_tools": "unparsed"}
    message = parse(record, vllm, tools=_without(record.tools, name), strict=True)  # a policy decision: never raises
    assert "tool_calls" not in message
    [entry] = unparsed(message, "tool_calls")
    assert f"calls function {name!r}, not in tools" in entry["error"]
    # the call itself, name and (untyped: no schema) arguments
    assert json.loads(entry["text"]) == parse(record, tools=None)["tool_calls"][0]
    assert entry["position"] is not None and name in record.output[: entry["position"]]
    assert _squeeze(message.get("content")) == _squeeze(record.expected.get("content"))
    # the default (and the peers that keep such calls, vLLM's hermes parser, ...): unknown_tools="keep"
    kept = parse(record, tools=_without(record.tools, name))
    assert [c["function"]["name"] for c in kept["tool_calls"]] == [name] and "unparsed" not in kept


HERMES_RECORD = "qwen3-coder/test_extract_tool_calls[parallel_tools]"


def test_qwen3_coder_keeps_calls_to_unknown_functions_by_default_and_unparsed_reports_them():
    record = RECORDS[HERMES_RECORD]
    tools = _without(record.tools, "get_current_weather")
    kept = parse(record, tools=tools)
    assert [c["function"]["name"] for c in kept["tool_calls"]] == ["get_current_weather"] * 2
    rejected = parse(record, {"unknown_tools": "unparsed"}, tools=tools)
    assert "tool_calls" not in rejected
    assert [u["field"] for u in rejected["unparsed"]] == ["tool_calls", "tool_calls"]
    assert all("'get_current_weather'" in u["error"] for u in rejected["unparsed"])
    # without tools there is nothing to check against: every call is kept (as vLLM does)
    assert parse(record, {"unknown_tools": "unparsed"}, tools=None)["tool_calls"]


def test_unknown_calls_in_a_list_region_are_split_from_the_known_ones():
    out = ('<|START_THINKING|>Two.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "a", '
           '"parameters": {"x": 1}}, {"tool_call_id": "1", "tool_name": "b", "parameters": {}}]<|END_ACTION|>'
           "<|END_OF_TURN_TOKEN|>")
    message = parse_response(out, "cohere-command-r7b", prefix="", tools=[{"name": "a", "parameters": {}}],
                             policy={"unknown_tools": "unparsed"})
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["a"]
    [entry] = message["unparsed"]
    assert entry["field"] == "tool_calls" and json.loads(entry["text"])["function"]["name"] == "b"
    assert "'b'" in entry["error"]


# ------------------------------------------------------------------------------------------ text_after_tool_calls


AFTER_RECORDS = [
    # vLLM's DeepSeek-V3.1 parser keeps only the text before the calls (a deliberate difference in
    # test_real_outputs.KNOWN: our default keeps it as content)
    "deepseek-v3.1/test_extract_tool_calls_with_multiple_tools",
    "deepseek-r1/TestDeepSeekV3ToolParser/test_preserves_text_after_tool_call",
    "gemma4/TestStreaming/test_streaming_does_not_duplicate_plain_text_after_tool_call",
    "gpt-oss/TestParseDelta/test_cross_channel_with_tool",
]


@pytest.mark.parametrize("record_id", AFTER_RECORDS)
def test_text_after_tool_calls_unparsed_moves_it_out_of_content_without_losing_it(record_id):
    record = RECORDS[record_id]
    default, moved = parse(record), parse(record, {"text_after_tool_calls": "unparsed"}, strict=True)
    after = unparsed(moved, "content")
    assert after and all(u["error"] == AFTER_CALLS for u in after)
    assert moved["tool_calls"] == default["tool_calls"]
    # content before the calls stays; content and what was moved out together are the default content
    assert _squeeze(moved.get("content")) + "".join(_squeeze(u["text"]) for u in after) == _squeeze(default["content"])


def test_text_after_tool_calls_unparsed_gives_vllm_deepseek_v31_content():
    record = RECORDS[AFTER_RECORDS[0]]
    moved = parse(record, {"text_after_tool_calls": "unparsed"})
    assert normalise_message(record.family, moved) == normalise_expected(record)  # the peer's message
    assert [_squeeze(u["text"]) for u in moved["unparsed"]] == ["somesuffixtext"]


def test_content_between_two_calls_is_not_after_the_last_call():
    out = ('First.<tool_call>{"name": "a", "arguments": {}}</tool_call>Between.<tool_call>{"name": "b", '
           '"arguments": {}}</tool_call>After.<|im_end|>')
    policy = {"text_after_tool_calls": "unparsed"}
    message = parse_response(out, "qwen3", prefix="", policy=policy)
    assert message["content"] == "First.\nBetween."
    assert [(u["field"], u["text"]) for u in message["unparsed"]] == [("content", "After.")]
    parser = ResponseParser("qwen3", "", policy=policy)
    events = [e for ch in out for e in parser.feed(ch)]
    final, end = parser.finalize()
    assert final == message
    closes = [e["value"] for e in events + end if e["type"] == "region_close" and e["field"] == "content"]
    assert closes == ["First.", "Between."]  # "Between." is closed when the second call shows it is not after
    [report] = [e for e in events + end if e["type"] == "region_malformed"]
    assert report["policy"] is True and report["text"] == "After."


# ------------------------------------------------------------------------------------------ malformed_tool_calls


MALFORMED_RECORDS = [
    # vLLM's hermes parser (Qwen3, Hermes 3): invalid JSON in <tool_call>, the raw text is content
    "qwen3/test_hermes_parser_non_streaming_tool_call_invalid_json",
    "hermes3/test_hermes_parser_non_streaming_tool_call_invalid_json",
    # vLLM's llama3_json parser: invalid JSON, or neither `parameters` nor `arguments`
    "llama3/test_extract_tool_calls_invalid_json",
    "llama3/test_extract_tool_calls_missing_parameters_and_arguments_key",
]
AS_CONTENT = {"malformed_tool_calls": "content"}


@pytest.mark.parametrize("record_id", MALFORMED_RECORDS)
def test_malformed_tool_calls_content_gives_the_peers_raw_text_as_content_and_strict_does_not_raise(record_id):
    record = RECORDS[record_id]
    default = parse(record)
    [failed] = unparsed(default, "tool_calls")
    with pytest.raises(ResponseParseError):
        parse(record, strict=True)  # the default: a failed call
    message = parse(record, AS_CONTENT, strict=True)  # does not raise
    assert normalise_message(record.family, message) == normalise_expected(record)  # the peer's message
    assert "unparsed" not in message and "tool_calls" not in message
    # the raw text as the model wrote it: the region's body with its delimiters
    assert message["content"] == record.output.strip()
    assert failed["text"] in message["content"]


def test_a_malformed_call_is_content_at_its_place_with_its_delimiters():
    bad = '<tool_call>{"name": "a", "arguments": {oops}}</tool_call>'
    out = f'Before.{bad}After.<tool_call>{{"name": "b", "arguments": {{}}}}</tool_call><|im_end|>'
    message = parse_response(out, "qwen3", prefix="", policy=AS_CONTENT, strict=True)
    assert message == {"role": "assistant", "content": f"Before.\n{bad}\nAfter.",
                       "tool_calls": [{"type": "function", "function": {"name": "b", "arguments": {}}}]}
    parser = ResponseParser("qwen3", "", policy=AS_CONTENT)
    events = [e for ch in out for e in parser.feed(ch)]
    final, end = parser.finalize()
    assert final == message
    closes = [(e["value"], e.get("policy")) for e in events + end if e["type"] == "region_close" and e["field"] == "content"]
    assert closes == [("Before.", None), (bad, True), ("After.", None)]
    assert not [e for e in events + end if e["type"] == "region_malformed"]
    # the default keeps the body in unparsed, and strict parsing raises naming the field and position
    default = parse_response(out, "qwen3", prefix="", strict=False)
    assert default["content"] == "Before.\nAfter." and unparsed(default, "tool_calls")[0]["position"] == len("Before.<tool_call>")
    with pytest.raises(ResponseParseError, match="tool_calls"):
        parse_response(out, "qwen3", prefix="", strict=True)


def test_a_malformed_call_after_the_last_call_is_not_moved_by_text_after_tool_calls():
    good, bad = '<tool_call>{"name": "a", "arguments": {}}</tool_call>', "<tool_call>{broken</tool_call>"
    policy = {**AS_CONTENT, "text_after_tool_calls": "unparsed"}
    out = f"Hi.{good}{bad}Bye.<|im_end|>"
    message = parse_response(out, "qwen3", prefix="", policy=policy, strict=True)
    assert message["content"] == f"Hi.\n{bad}" and len(message["tool_calls"]) == 1  # a failed call, not text after one
    assert [(u["field"], u["text"], u["error"]) for u in message["unparsed"]] == [("content", "Bye.", AFTER_CALLS)]
    parser = ResponseParser("qwen3", "", policy=policy)
    for ch in out:
        parser.feed(ch)
    assert parser.finalize()[0] == message


def test_a_malformed_call_cut_off_at_the_end_keeps_its_opener():
    out = 'I will check.<tool_call>{"name": "get_weather", "arguments": {"city": "Par'
    message = parse_response(out, "qwen3", prefix="", policy=AS_CONTENT)
    assert message["content"] == 'I will check.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Par'
    # a Gemma 4 call cut off mid-arguments: the opener holds the name (a pattern delimiter), kept as written
    gemma = '<|tool_call>call:get_weather{location:<|"|>London'
    assert parse_response(gemma, "gemma4", prefix="", policy=AS_CONTENT) == {"role": "assistant", "content": gemma}
    assert unparsed(parse_response(gemma, "gemma4", prefix="", strict=False), "tool_calls")[0]["position"] == 28


# ------------------------------------------------------------------------------------------ streaming, pickling


POLICIES = st.fixed_dictionaries({}, optional={
    "tool_calls_in_reasoning": st.sampled_from(["extract", "reasoning"]),
    "unknown_tools": st.sampled_from(["keep", "unparsed"]),
    "text_after_tool_calls": st.sampled_from(["content", "unparsed"]),
    "malformed_tool_calls": st.sampled_from(["unparsed", "content"]),
})
POLICY_RECORDS = sorted({*REASONING_RECORDS, *GLM_RECORDS, HERMES_RECORD, *AFTER_RECORDS, *MALFORMED_RECORDS})


@given(data=st.data())
def test_streaming_equals_one_shot_with_a_policy_for_random_chunkings(data):
    record = RECORDS[data.draw(st.sampled_from(POLICY_RECORDS), label="record")]
    policy = data.draw(POLICIES, label="policy")
    tools = record.tools
    if tools and data.draw(st.booleans(), label="drop a tool"):
        tools = _without(tools, record.expected["tool_calls"][0]["name"])
    text = record.output
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12), label="cuts")))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert streamed(record, chunks, policy, tools) == parse(record, policy, tools)


@given(record_id=st.sampled_from(sorted(RECORDS)), policy=POLICIES)
def test_a_policy_never_loses_text(record_id, policy):
    """Whatever a policy moves out of content or tool calls is in `unparsed`; reasoning only grows; a malformed
    call made content is there with its delimiters."""
    record = RECORDS[record_id]
    default, other = parse(record), parse(record, policy)
    if policy.get("tool_calls_in_reasoning") == "reasoning":
        assert _squeeze(default.get("reasoning_content")) in _squeeze(other.get("reasoning_content"))
        return
    moved = [u for u in other.get("unparsed") or [] if u not in (default.get("unparsed") or [])]
    content = _squeeze(other.get("content")) + "".join(_squeeze(u["text"]) for u in moved if u["field"] == "content")
    failed = [u for u in default.get("unparsed") or [] if u["field"] == "tool_calls" and "(policy " not in u["error"]]
    if policy.get("malformed_tool_calls") == "content" and failed:
        for u in failed:  # the failed body is content now (or held after the last call), with its delimiters
            assert _squeeze(u["text"]) in content
            assert u not in (other.get("unparsed") or [])
        return
    assert content == _squeeze(default.get("content"))
    calls = len(other.get("tool_calls") or []) + sum(u["field"] == "tool_calls" for u in moved)
    assert calls >= len(default.get("tool_calls") or [])


def test_a_parser_with_a_policy_pickles_mid_stream():
    out = 'Hi.<tool_call>{"name": "a", "arguments": {}}</tool_call>After.<|im_end|>'
    parser = ResponseParser("qwen3", "", policy={"text_after_tool_calls": "unparsed"})
    parser.feed(out[:50])
    copied = pickle.loads(pickle.dumps(parser))
    clone = copy.deepcopy(parser)
    for p in (parser, copied, clone):
        p.feed(out[50:])
    assert parser.finalize()[0] == copied.finalize()[0] == clone.finalize()[0]


# ------------------------------------------------------------------------------------------ tokenizer, library


def test_tokenizer_methods_pass_the_policy_through():
    from _tokenizers import byte_level_tokenizer

    tok = byte_level_tokenizer()
    out = 'Hi.<tool_call>{"name": "a", "arguments": {}}</tool_call>After.<|im_end|>'
    policy = {"text_after_tool_calls": "unparsed"}
    message = tok.parse_response(out, "qwen3", prefix="", policy=policy)
    assert message == parse_response(out, "qwen3", prefix="", policy=policy)
    assert [u["text"] for u in message["unparsed"]] == ["After."]
    assert tok.parse_response([out, out], "qwen3", prefix="", policy=policy) == [message, message]
    parser = tok.get_response_parser("qwen3", prefix="", policy=ParsePolicy(**policy))
    parser.feed(out)
    assert parser.finalize()[0] == message


def test_every_family_documents_its_policy_defaults_with_a_source():
    assert set(POLICY_SOURCES) <= set(list_templates())
    for name in list_templates():
        info = template_info(name)["policy"]
        assert set(info["defaults"]) == set(info["sources"]) == set(DEFAULT_POLICY.as_dict())
        own = get_template(name).get("policy") or {}
        for key, value in own.items():
            assert info["defaults"][key] == value
            # a default other than the neutral one names where it comes from
            if value != getattr(DEFAULT_POLICY, key):
                assert info["sources"][key].startswith(value + ":") and "vLLM" in info["sources"][key], (name, key)


def test_response_streamer_takes_a_policy_and_checks_it_at_once():
    from _tiny_model import scripted_generate, tiny_model
    from _tokenizers import byte_level_tokenizer

    from hf_response_templates.tokenizer import ResponseStreamer

    tok = byte_level_tokenizer()
    tok.response_template = get_template("qwen3")
    with pytest.raises(ValueError, match="unknown_tools"):
        ResponseStreamer(tok, policy={"unknown_tools": "drop"})
    prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    out = 'Hi.<tool_call>{"name": "a", "arguments": {}}</tool_call>After.<|im_end|>'
    streamer = ResponseStreamer(tok, policy={"text_after_tool_calls": "unparsed"})
    scripted_generate(tiny_model(tok), tok, [prompt], [out], streamer=streamer)
    events = list(streamer)
    assert streamer.message == parse_response(out, "qwen3", prefix=prompt, policy={"text_after_tool_calls": "unparsed"})
    assert [e["text"] for e in events if e.get("policy")] == ["After."]


def test_a_reasoning_close_made_only_of_the_rule_runs_to_the_end_under_reasoning():
    template = {"start_anchor": "<|im_start|>assistant\n", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": "(?=<tool_call>)"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True},
        "content": {}}}
    out = '<think>Plan.<tool_call>{"name": "f"}</tool_call>'
    assert parse_response(out, template, prefix="")["tool_calls"] == [{"name": "f"}]
    kept = parse_response(out, template, prefix="", policy={"tool_calls_in_reasoning": "reasoning"})
    assert kept == {"reasoning_content": 'Plan.<tool_call>{"name": "f"}</tool_call>'}


def test_openai_deltas_send_a_malformed_call_made_content_as_content():
    from hf_response_templates.deltas import DeltaStream
    from hf_response_templates.openai import accumulate_deltas

    bad = '<tool_call>{"name": "a", "arguments": {oops}}</tool_call>'
    out = f'Before.{bad}After.<tool_call>{{"name": "b", "arguments": {{}}}}</tool_call><|im_end|>'
    stream = DeltaStream(ResponseParser("qwen3", "", policy=AS_CONTENT), id_seed=1)
    deltas = [d for ch in out for d in stream.feed(ch)] + stream.finish()
    got = accumulate_deltas(deltas)
    message = parse_response(out, "qwen3", prefix="", policy=AS_CONTENT)
    assert got["content"] == message["content"] == f"Before.\n{bad}\nAfter."
    # the call streamed before its region failed is flagged as not in the message; the next one is a call
    first, second = got["tool_calls"]
    assert first["error"]["type"] == "malformed" and first["error"]["in_message"] is False
    assert "malformed_tool_calls='content'" in first["error"]["message"]
    assert second["function"] == {"name": "b", "arguments": "{}"} and "error" not in second
    assert "unparsed" not in got and not stream.warnings
