"""derive: each analysis step on small synthetic chat templates, then the real fixtures.

The synthetic chat templates below are written for these tests; each one exercises one way of writing a
part of the assistant turn (a pre-opened reasoning block, tagged arguments, pythonic calls, ...).
"""

from __future__ import annotations

import difflib
import functools
import json

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import parse_response
from hf_response_templates.derive import derive
from hf_response_templates.derive.analyze import (
    find_anchors,
    find_content,
    find_reasoning,
    find_repeated_headers,
    find_tool_format,
    first_marker,
)
from hf_response_templates.derive.assemble import assemble
from hf_response_templates.derive.probe import Prober, thinking_flags

# --------------------------------------------------------------------------- synthetic chat templates


def chatml(assistant_body: str, *, generation_prompt: str = "<|im_start|>assistant\n", extra: str = "") -> str:
    """A ChatML chat template whose assistant turn is `assistant_body` (Jinja, sees `message`)."""
    return (
        extra
        + "{%- for message in messages %}"
        "{%- if message.role == 'assistant' %}<|im_start|>assistant\n" + assistant_body + "<|im_end|>\n"
        "{%- elif message.role == 'tool' %}<|im_start|>tool\n{{ message.content }}<|im_end|>\n"
        "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{%- endif %}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}" + generation_prompt + "{%- endif %}"
    )


REASONING = "{%- if message.reasoning_content %}<think>\n{{ message.reasoning_content }}\n</think>\n\n{%- endif %}"
CONTENT = "{{ message.content }}"

JSON_CALLS = (
    "{%- for tc in message.tool_calls or [] %}\n<tool_call>\n"
    '{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}\n</tool_call>'
    "{%- endfor %}"
)
TAGGED_CALLS = (
    "{%- for tc in message.tool_calls or [] %}<call><fn={{ tc.function.name }}>\n"
    "{%- for k, v in tc.function.arguments.items() %}<arg={{ k }}>{{ v | tojson if v is mapping else v }}</arg>\n{%- endfor %}</fn></call>"
    "{%- endfor %}"
)
CONTAINER_CALLS = (
    "{%- if message.tool_calls %}<calls>"
    "{%- for tc in message.tool_calls %}{% if not loop.first %},{% endif %}<c>{{ tc.function.name }}:"
    "{{ loop.index0 }}|{{ tc.function.arguments | tojson }}</c>{%- endfor %}</calls>{%- endif %}"
)
PYTHONIC_CALLS = (
    "{%- if message.tool_calls %}<py>["
    "{%- for tc in message.tool_calls %}{{ tc.function.name }}("
    "{%- for k, v in tc.function.arguments.items() %}{{ k }}={{ v | tojson }}{% if not loop.last %}, {% endif %}"
    "{%- endfor %}){% if not loop.last %}, {% endif %}{%- endfor %}]</py>{%- endif %}"
)
LIST_CALLS = (
    "{%- if message.tool_calls %}<actions>["
    "{%- for tc in message.tool_calls %}"
    '{"tool": "{{ tc.function.name }}", "params": {{ tc.function.arguments | tojson }}}'
    "{% if not loop.last %}, {% endif %}{%- endfor %}]</actions>{%- endif %}"
)

#: name-as-key call objects {NAME: ARGS}: all in one array (Apertus), or one per tag
NAME_KEY_LIST_CALLS = (
    "{%- if message.tool_calls %}<calls>["
    "{%- for tc in message.tool_calls %}"
    '{"{{ tc.function.name }}": {{ tc.function.arguments | tojson }}}'
    "{% if not loop.last %}, {% endif %}{%- endfor %}]</calls>{%- endif %}"
)
NAME_KEY_TAGGED_CALLS = (
    "{%- for tc in message.tool_calls or [] %}<call>"
    '{"{{ tc.function.name }}": {{ tc.function.arguments | tojson }}}</call>'
    "{%- endfor %}"
)


def probes_of(chat_template: str, **kwargs):
    return Prober(chat_template).standard_probes(**kwargs)


# --------------------------------------------------------------------------- each step


def test_first_marker_takes_the_leading_special_token() -> None:
    assert first_marker("<|im_end|>\n") == "<|im_end|>"
    assert first_marker(" [TOOL_CALLS]x") == "[TOOL_CALLS]"
    assert first_marker("END OF TURN") == "END OF TURN"


def test_reasoning_markers_and_key_are_found() -> None:
    probes = probes_of(chatml(REASONING + CONTENT))
    reasoning, found = find_reasoning(probes)
    assert reasoning is not None
    assert (reasoning.key, reasoning.open, reasoning.close, reasoning.pre_opened) == (
        "reasoning_content", "<think>", "</think>", False)
    assert all(not f.guessed for f in found)


def test_reasoning_read_from_another_key() -> None:
    body = "{%- if message.thinking %}[THINK]{{ message.thinking }}[/THINK]{%- endif %}" + CONTENT
    reasoning, _ = find_reasoning(probes_of(chatml(body)), chatml(body))
    assert reasoning is not None and (reasoning.key, reasoning.open, reasoning.close) == (
        "thinking", "[THINK]", "[/THINK]")


def test_prompt_that_pre_opens_reasoning() -> None:
    # the generation prompt opens the block; history writes "<think>\n" too, so the turn continues it
    body = "<think>\n{{ message.reasoning_content or '' }}</think>" + CONTENT
    ct = chatml(body, generation_prompt="<|im_start|>assistant\n<think>\n")
    probes = probes_of(ct)
    reasoning, found = find_reasoning(probes)
    assert reasoning is not None and reasoning.pre_opened and reasoning.open == "<think>"
    anchors, _ = find_anchors(probes, reasoning)
    assert anchors == ["<|im_start|>assistant\n"]  # the open is cut off: the parser reads it from the prompt
    result = derive(ct, use_library=False)
    assert result.ok, result.report()
    prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert parse_response("Plan.</think>Done.<|im_end|>", result.template, prefix=prompt) == {
        "role": "assistant", "reasoning_content": "Plan.", "content": "Done."}


def test_prompt_that_pre_closes_reasoning_keeps_the_close_in_the_anchor() -> None:
    # thinking off: the prompt writes a lone close, and history always does too
    ct = chatml("</think>" + CONTENT, generation_prompt="<|im_start|>assistant\n</think>")
    probes = probes_of(ct)
    reasoning, _ = find_reasoning(probes)
    assert reasoning is None
    anchors, _ = find_anchors(probes, reasoning)
    assert anchors == ["<|im_start|>assistant\n</think>"]
    result = derive(ct, use_library=False)
    assert result.ok, result.report()


def test_content_framing_and_end_of_turn() -> None:
    body = "<answer>" + CONTENT + "</answer>"
    content, _ = find_content(probes_of(chatml(body)), None)
    # the answer's own close, then the end of turn that follows it
    assert content is not None and content.open == "<answer>" and content.closes == ["</answer>", "<|im_end|>"]
    implicit, _ = find_content(probes_of(chatml(CONTENT)), None)
    assert implicit is not None and implicit.open == "" and implicit.closes == ["<|im_end|>"]


def test_anchor_without_a_generation_prompt_is_the_text_after_the_user_turn() -> None:
    # Mistral style: no add_generation_prompt; the header is written after every user message
    ct = (
        "{%- for m in messages %}{%- if m.role == 'user' %}[INST]{{ m.content }}[/INST]"
        "{%- elif m.role == 'assistant' %}{{ m.content }}</s>{%- endif %}{%- endfor %}"
    )
    anchors, _ = find_anchors(probes_of(ct), None)
    assert anchors == ["[/INST]"]


def test_thinking_flags_are_read_from_the_template() -> None:
    ct = chatml(CONTENT, generation_prompt="{% if enable_thinking is false %}x{% endif %}")
    assert thinking_flags(ct) == ["enable_thinking"]
    assert thinking_flags(chatml(CONTENT)) == []


@pytest.mark.parametrize(
    ("calls", "kind", "call_open", "call_close", "container"),
    [
        (JSON_CALLS, "json-object", "<tool_call>", "</tool_call>", ("", "")),
        (TAGGED_CALLS, "name-tagged", "<call><fn=", "</fn></call>", ("", "")),
        (CONTAINER_CALLS, "name-json", "<c>", "</c>", ("<calls>", "</calls>")),
        (PYTHONIC_CALLS, "pythonic", "", "", ("<py>", "</py>")),
        (LIST_CALLS, "json-list", "", "", ("<actions>", "</actions>")),
    ],
)
def test_tool_call_format(calls: str, kind: str, call_open: str, call_close: str, container: tuple) -> None:
    probes = probes_of(chatml(CONTENT + calls))
    content, _ = find_content(probes, None)
    fmt, found, problems = find_tool_format(probes, content, None)
    assert not problems and fmt is not None
    assert fmt.kind == kind
    assert (fmt.call_open, fmt.call_close) == (call_open, call_close)
    assert (fmt.container_open, fmt.container_close) == container
    if kind == "name-json":
        assert fmt.separator == ","  # between </c> and <c>
        assert fmt.between == r":\d+\|"  # the call index differs between calls: a wildcard
    if kind == "json-list":
        assert (fmt.name_path, fmt.args_path) == ("tool", "params")
    if kind == "json-object":
        assert (fmt.name_path, fmt.args_path) == ("name", "arguments")


@pytest.mark.parametrize("calls", [JSON_CALLS, TAGGED_CALLS, CONTAINER_CALLS, PYTHONIC_CALLS, LIST_CALLS])
def test_each_tool_format_derives_a_proven_template(calls: str) -> None:
    result = derive(chatml(REASONING + CONTENT + calls), use_library=False)
    assert result.ok, result.report()
    assert result.derived_fields == ["reasoning_content", "tool_calls", "content"]
    assert {c.status for c in result.proof} == {"pass"}
    assert result.confidence == "high"


@pytest.mark.parametrize(("calls", "kind", "name_path"), [
    (NAME_KEY_LIST_CALLS, "json-list", "$key"),
    (NAME_KEY_TAGGED_CALLS, "json-object", "$key"),
])
def test_a_call_object_whose_only_key_is_the_name(calls: str, kind: str, name_path: str) -> None:
    probes = probes_of(chatml(CONTENT + calls))
    content, _ = find_content(probes, None)
    fmt, found, problems = find_tool_format(probes, content, None)
    assert not problems and fmt is not None
    assert (fmt.kind, fmt.name_path, fmt.args_path) == (kind, name_path, "$value")
    assert any(f.what == "format" and "{NAME: ARGUMENTS}" in f.value for f in found)
    result = derive(chatml(CONTENT + calls), use_library=False)
    assert result.ok, result.report()
    assert any(c.name == "parallel_tool_calls" and c.status == "pass" for c in result.proof)
    output = ('<calls>[{"f": {"x": 1}}, {"g": {}}]</calls><|im_end|>' if kind == "json-list"
              else '<call>{"f": {"x": 1}}</call><call>{"g": {}}</call><|im_end|>')
    got = parse_response(output, result.template, prefix="")
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in got["tool_calls"]] == [
        ("f", {"x": 1}), ("g", {})]


#: FunctionGemma style: NAME{k:<e>V<e>,k2:<e>V2<e>}, every value printed with {{ v }} (objects as Python's str())
ESCAPED_CALLS = (
    "{%- for tc in message.tool_calls or [] %}<fc>call:{{ tc.function.name }}{{ '{' }}"
    "{%- for k, v in tc.function.arguments.items() %}{{ k }}:<e>{{ v }}<e>{% if not loop.last %},{% endif %}"
    "{%- endfor %}}</fc>{%- endfor %}"
)
#: Apriel style: the arguments printed as they are given (a dict comes out as Python's str(), JSON text as JSON)
PRINTED_ARGUMENTS_CALLS = (
    "{%- for tc in message.tool_calls or [] %}<tool_call>"
    '{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments }}}</tool_call>'
    "{%- endfor %}"
)


def test_tagged_arguments_with_a_separator_and_python_repr_values() -> None:
    probes = probes_of(chatml(CONTENT + ESCAPED_CALLS))
    content, _ = find_content(probes, None)
    fmt, _, problems = find_tool_format(probes, content, None)
    assert not problems and fmt is not None and fmt.kind == "name-tagged"
    # the second call (one string argument) reads as a lax JSON object, but is read as tags like the first
    assert (fmt.call_open, fmt.between, fmt.call_close) == ("<fc>call:", r"\{", "}</fc>")
    assert fmt.tag_pattern.startswith(r"(?:,\s*)?")  # the "," between arguments is not part of the key
    result = derive(chatml(CONTENT + ESCAPED_CALLS), use_library=False)
    assert result.ok, result.report()
    nested = [c for c in result.proof if c.name == "tool_call_nested_arguments"]
    assert [c.status for c in nested] == ["pass"]  # {'lang': 'fr', 'safe': True} comes back a dict with tools=
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "o": {"type": "object"}}}}}]
    out = "<fc>call:f{n:<e>7<e>,o:<e>{'a': [1, None]}<e>}</fc><|im_end|>"
    assert parse_response(out, result.template, prefix="", tools=tools)["tool_calls"][0]["function"][
        "arguments"] == {"n": 7, "o": {"a": [1, None]}}


def test_arguments_printed_as_a_python_repr_are_given_as_json_text() -> None:
    ct = chatml(CONTENT + PRINTED_ARGUMENTS_CALLS)
    prober = Prober(ct)
    [probe] = [p for p in prober.standard_probes() if p.name == "tool_call"]
    assert prober.arguments_as_text and '"arguments": {"zqka": "zqva text"' in probe.generation
    result = derive(ct, use_library=False)
    assert result.ok, result.report()
    assert result.template["fields"]["tool_calls"]["content"] == "json"


def test_a_python_repr_render_is_kept_when_no_retry_renders_json() -> None:
    # arguments as JSON text break this template (it iterates them): the repr render is all there is
    calls = ("{%- for tc in message.tool_calls or [] %}<tool_call>{{ tc.function.name }} {{ tc.function.arguments }}"
             "{{ tc.function.arguments.items() | list | length }}</tool_call>{%- endfor %}")
    [probe] = [p for p in probes_of(chatml(CONTENT + calls)) if p.name == "tool_call"]
    assert probe.ok and "{'zqka': 'zqva text', 'zqkb': 48213}" in probe.generation


#: XTML style (Kimi K3): every element opened <|open|>NAME ...<|sep|> and closed <|close|>NAME<|sep|>; with
#: thinking off the prompt opens the answer itself
XTML = (
    "{%- for m in messages %}<|open|>message role=\"{{ m.role }}\"<|sep|>"
    "{%- if m.role == 'assistant' %}"
    "{%- if m.reasoning_content %}<|open|>think<|sep|>{{ m.reasoning_content }}<|close|>think<|sep|>{%- endif %}"
    "<|open|>response<|sep|>{{ m.content }}<|close|>response<|sep|>"
    "{%- if m.tool_calls %}<|open|>tools<|sep|>{%- for tc in m.tool_calls %}"
    "<|open|>call tool=\"{{ tc.function.name }}\"<|sep|>{{ tc.function.arguments | tojson }}<|close|>call<|sep|>"
    "{%- endfor %}<|close|>tools<|sep|>{%- endif %}"
    "{%- else %}{{ m.content }}{%- endif %}<|close|>message<|sep|>{%- endfor %}"
    "{%- if add_generation_prompt %}<|open|>message role=\"assistant\"<|sep|>"
    "{%- if thinking is defined and not thinking %}<|open|>response<|sep|>{%- endif %}{%- endif %}"
)


def test_markers_written_marker_name_marker_are_one_delimiter() -> None:
    from hf_response_templates.derive.analyze import find_named_markers

    named, found = find_named_markers(probes_of(XTML))
    assert named is not None
    assert {"<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>response<|sep|>", "<|close|>response<|sep|>",
            "<|open|>tools<|sep|>", "<|close|>tools<|sep|>", "<|close|>call<|sep|>",
            "<|close|>message<|sep|>"} == set(named.tokens)  # opens with attributes stay text
    assert all(f.field == "markers" for f in found)
    # a role header has one leading marker per name: not a named marker (gpt-oss)
    assert find_named_markers(probes_of(HARMONY_LIKE)) == (None, [])
    assert find_named_markers(probes_of(chatml(REASONING + CONTENT + JSON_CALLS)))[0] is None
    # placeholders go back into literals and regexes
    token = named.tokens["<|close|>think<|sep|>"]
    assert named.show({"a": [token, regex.escape(token) + r"\s*"]}) == {
        "a": ["<|close|>think<|sep|>", regex.escape("<|close|>think<|sep|>") + r"\s*"]}


def test_an_xtml_chat_template_derives_a_proven_template() -> None:
    from hf_response_templates.derive.analyze import find_named_markers

    probes = probes_of(XTML) + probes_of(XTML, flag="thinking", value=False)
    named, _ = find_named_markers(probes)
    probes = [named.hide_probe(p) for p in probes]
    reasoning, _ = find_reasoning(probes, XTML)
    content, found = find_content(probes, reasoning)
    # thinking off: the prompt writes <|open|>response<|sep|>, so the answer has the open the others write
    assert content is not None and named.show(content.open) == "<|open|>response<|sep|>"
    assert any(f.what == "the prompt pre-opens the answer in some turns" for f in found)
    anchors, _ = find_anchors(probes, reasoning, content)
    assert anchors == ['<|open|>message role="assistant"<|sep|>']  # cut before the answer's open
    result = derive(XTML, use_library=False)
    assert result.ok, result.report()
    assert result.template["fields"]["reasoning_content"] == {
        "open": "<|open|>think<|sep|>", "close": "<|close|>think<|sep|>", "content": "text"}
    assert {c.setting.get("thinking") for c in result.proof if c.status == "pass"} == {None, False}
    prompt = '<|open|>message role="assistant"<|sep|>'
    out = ('<|open|>think<|sep|>Hm.<|close|>think<|sep|><|open|>response<|sep|>Hi<|close|>response<|sep|>'
           '<|open|>tools<|sep|><|open|>call tool="f"<|sep|>{"x": 1}<|close|>call<|sep|><|close|>tools<|sep|>'
           '<|close|>message<|sep|>')
    assert parse_response(out, result.template, prefix=prompt) == {
        "role": "assistant", "reasoning_content": "Hm.", "content": "Hi",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}


def test_value_types_from_the_text_or_from_the_schema() -> None:
    exact = derive(chatml(CONTENT + JSON_CALLS), use_library=False)
    [typing] = [e for e in exact.evidence if e.what == "argument types"]
    assert typing.value.startswith("read from the text")
    tagged = derive(chatml(CONTENT + TAGGED_CALLS), use_library=False)
    [typing] = [e for e in tagged.evidence if e.what == "argument types"]
    assert typing.value.startswith("from the tools= schema")
    # and the schema does type them: '48213' comes back as an int only with tools=
    gen = "<call><fn=f>\n<arg=n>7</arg>\n</fn></call><|im_end|>"
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}}}}]
    args = parse_response(gen, tagged.template, prefix="", tools=tools)["tool_calls"][0]["function"]["arguments"]
    assert args == {"n": 7}
    assert parse_response(gen, tagged.template, prefix="")["tool_calls"][0]["function"]["arguments"] == {"n": "7"}


def test_assemble_puts_the_container_close_in_the_content_close() -> None:
    probes = probes_of(chatml(CONTENT + CONTAINER_CALLS))
    content, _ = find_content(probes, None)
    fmt, _, _ = find_tool_format(probes, content, None)
    template = assemble(["<|im_start|>assistant\n"], content, None, fmt)
    assert template["fields"]["content"]["close"] == ["<|im_end|>", "</calls>"]
    assert template["fields"]["tool_calls"]["open_pattern"].startswith(r"(?:<calls>\s*)?<c>")


# --------------------------------------------------------------------------- robustness


def test_a_template_that_raises_on_some_probes_still_derives() -> None:
    raising = (
        "{%- if messages[0].role == 'system' %}{{ raise_exception('no system messages') }}{%- endif %}"
        "{%- if enable_thinking is defined and enable_thinking %}{{ raise_exception('no thinking') }}{%- endif %}"
        "{%- for m in messages %}{%- if m.tool_calls and m.tool_calls | length > 1 %}"
        "{{ raise_exception('one call only') }}{%- endif %}{%- endfor %}"
    )
    ct = chatml(REASONING + CONTENT + JSON_CALLS, extra=raising)
    result = derive(ct, use_library=False)
    errors = {p.name for p in result.probes if not p.ok}
    assert {"content_after_system", "tool_calls_two"} <= errors
    assert result.ok, result.report()
    assert "tool_calls" in result.derived_fields
    assert any(e.what.startswith("one call per message") for e in result.evidence)
    # enable_thinking=True raised on every probe, and False renders like the default: neither is proven apart
    assert all(not p.ok for p in result.probes if p.kwargs.get("enable_thinking"))
    assert {c.setting.get("enable_thinking") for c in result.proof} == {None}


def test_nothing_renders_gives_a_clear_failure() -> None:
    result = derive("{{ raise_exception('never') }}", use_library=False)
    assert not result.ok and result.template is None
    assert "no probe conversation could be rendered" in result.problems[0]
    assert "never" in result.problems[0]


def test_a_format_that_cannot_be_read_is_reported_not_returned_as_proven() -> None:
    # only the argument values are rendered: neither JSON nor tags, the keys are lost
    calls = ("{%- for tc in message.tool_calls or [] %}<tool>{{ tc.function.name }} "
             "{{ tc.function.arguments.values() | list | join(' ') }}</tool>{%- endfor %}")
    result = derive(chatml(CONTENT + calls), use_library=False)
    assert "tool_calls" not in result.derived_fields
    assert any(u.startswith("tool calls:") and "does not contain the tool-call arguments" in u
               for u in result.undetermined)
    assert result.confidence == "medium"  # proven for content only, and it says so
    assert "not determined: tool calls" in result.report()


def test_known_family_shortcut_and_turning_it_off() -> None:
    from tests._chat_render import chat_template

    ct = chat_template("Qwen-Qwen3-0.6B.jinja")
    shipped = derive(ct)
    assert shipped.source == "library:qwen3" and shipped.ok
    derived = derive(ct, use_library=False)
    assert derived.source == "derived" and derived.ok


def test_result_serialises_to_json() -> None:
    result = derive(chatml(REASONING + CONTENT + JSON_CALLS), use_library=False)
    data = json.loads(json.dumps(result.as_dict()))
    assert data["ok"] is True and data["template"] == result.template
    assert data["proof_summary"]["fail"] == 0
    assert "PROVEN" in result.report()


# --------------------------------------------------------------------------- the real fixtures


def _table_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "derive_table.py"
    spec = importlib.util.spec_from_file_location("derive_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = _table_script()
FIXTURE_NAMES = [p.name for p in TABLE.fixtures()]


@functools.cache
def derived(name: str):
    """(detected family, DeriveResult) of one fixture, derived with the shipped-template shortcut off."""
    return TABLE.derive_fixture(TABLE.FIXTURES / name)


#: Fixtures of shipped families that derive no proven template yet, with why (56 of 59 do; issue 17 asks for
#: 90%). A fixture that starts to pass must leave this list, a new failure fails the test.
NOT_YET_DERIVED = {
    "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja": "history never closes the <think> the prompt opens",
    "vllm-meta-llama-Llama-4-pythonic.jinja": "string arguments quoted without escaping",
    "swiss-ai-Apertus-8B-Instruct-2509.jinja": "the chat template never continues its own prompt",
}


def test_shipped_family_fixtures_derive_a_proven_template() -> None:
    from tests._chat_render import ALL_FAMILIES

    names = sorted({f.fixture for f in ALL_FAMILIES})
    failed = {n for n in names if not derived(n)[1].ok}
    assert len(names) >= 16
    assert failed == set(NOT_YET_DERIVED), {n: derived(n)[1].problems for n in failed ^ set(NOT_YET_DERIVED)}
    assert (len(names) - len(failed)) / len(names) >= 0.90


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_a_fixture_is_proven_or_says_what_failed(name: str) -> None:
    """Never a silent wrong template: `ok` agrees with an independent re-run of verify, and a result that
    is not ok names its failing case or what could not be found."""
    from hf_response_templates.derive import _proof_conversations
    from hf_response_templates.verify import sample_tools, verify_round_trip

    _, result = derived(name)
    assert result.source == "derived"
    if not result.ok:
        assert result.problems and all(p.strip() for p in result.problems)
        return
    chat_template = (TABLE.FIXTURES / name).read_text(encoding="utf-8")
    specials = TABLE.SPECIAL_TOKENS.get(name, TABLE.DEFAULT_SPECIAL_TOKENS)
    prober = Prober(chat_template, specials)
    prober.standard_probes()  # learns the retries (arguments as text, content None) the proof uses
    passed = {c.name for c in result.proof if c.status == "pass" and not c.setting}
    again = verify_round_trip(chat_template, result.template,
                              _proof_conversations(result.template, prober, None),
                              tools=sample_tools(), special_tokens=specials)
    assert passed <= {r.name for r in again if r.passed}


def test_families_the_library_does_not_ship_are_derived() -> None:
    family, result = derived("google-gemma-3-it.jinja")
    assert family is None
    assert result.ok, result.report()
    assert result.derived_fields == ["content"]
    assert result.template["start_anchor"] == "<start_of_turn>model\n"
    assert result.template["fields"]["content"]["close"] == "<end_of_turn>"


#: fine-tunes with a lightly edited chat template: markers renamed, so no shipped family matches
EDITED = [
    ("Qwen-Qwen3-0.6B.jinja", {"<tool_call>": "<function_call>", "</tool_call>": "</function_call>",
                               "<think>": "<reasoning>", "</think>": "</reasoning>"},
     {"bos_token": "<s>", "eos_token": "</s>"}, ["reasoning_content", "tool_calls", "content"]),
    ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
     {"<|START_RESPONSE|>": "<|START_ANSWER|>", "<|END_RESPONSE|>": "<|END_ANSWER|>"},
     {"bos_token": "<BOS_TOKEN>"}, ["tool_plan", "tool_calls", "content", "unmarked_text"]),
]


@pytest.mark.parametrize(("fixture", "renames", "specials", "expected"), EDITED)
def test_an_edited_chat_template_of_no_shipped_family_is_derived(fixture, renames, specials, expected) -> None:
    from hf_response_templates.library import detect_template
    from tests._chat_render import chat_template

    ct = chat_template(fixture)
    for old, new in renames.items():
        assert old in ct
        ct = ct.replace(old, new)
    assert detect_template(ct) is None
    result = derive(ct, special_tokens=specials, use_library=False)
    assert result.ok, result.report()
    assert result.derived_fields == expected
    text = json.dumps(result.template)  # the renamed markers are the derived delimiters (literal or in a regex)
    assert all(json.dumps(new)[1:-1] in text or json.dumps(regex.escape(new))[1:-1] in text
               for new in renames.values())


@pytest.mark.parametrize(
    ("name", "says"),
    [
        # string arguments written between double quotes without escaping ("say "hi"...")
        ("vllm-meta-llama-Llama-4-pythonic.jinja", "proof case tool_call_nested_arguments fails: parse failed"),
        # the prompt opens <think> but history writes the answer with no </think>: read as reasoning
        ("nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja", "proof case content fails: message['content'] missing"),
        # no shipped family; it raises on OpenAI-style tools, and no answer continues its prompt
        ("swiss-ai-Apertus-8B-Instruct-2509.jinja", "no proof case could be checked"),
    ],
)
def test_what_cannot_be_derived_is_said_clearly(name: str, says: str) -> None:
    _, result = derived(name)
    assert not result.ok and result.confidence == "low"
    assert any(says in p for p in result.problems), result.problems


class _TickingClock:
    """A ``datetime`` stand-in whose clock moves one second every ``every`` reads (a render a tick late)."""

    def __init__(self, every: int) -> None:
        import datetime as dt

        self.every, self.reads, self.start = every, 0, dt.datetime(2026, 12, 1, 13, 59, 58)

    def now(self, tz=None):
        import datetime as dt

        self.reads += 1
        return self.start + dt.timedelta(seconds=self.reads // self.every)


@pytest.mark.parametrize("every", [7, 40])
def test_a_clock_tick_between_renders_changes_nothing(monkeypatch, every: int) -> None:
    # Hunyuan prints the time to the second; a tick between the renders of two thinking settings once made a
    # setting look different and doubled the proof (7 cases became 14 on a slower machine)
    import transformers.utils.chat_template_utils as ctu

    path = TABLE.FIXTURES / "vllm-tencent-Hunyuan-A13B-Instruct.jinja"
    _, steady = derived(path.name)
    clock = _TickingClock(every)
    monkeypatch.setattr(ctu, "datetime", clock)
    _, ticking = TABLE.derive_fixture(path)
    assert clock.reads > 2 * every  # the clock was read, and ticked
    assert ticking.ok and ticking.summary() == steady.summary()
    assert ticking.template == steady.template


def test_without_clock_blanks_times_only_for_clock_templates() -> None:
    clock = Prober("{{ strftime_now('%H:%M:%S') }}")
    assert clock.without_clock("at 13:59:58 on 2026-12-01") == "at hh:mm:ss on 2026-12-01"
    assert Prober("{{ strftime_now('%Y') }}").without_clock("at 13:59:58") == "at 13:59:58"


def test_docs_table_is_up_to_date() -> None:
    rows = [(n, *derived(n)) for n in FIXTURE_NAMES]
    current = TABLE.DOC.read_text(encoding="utf-8")
    updated = TABLE.render_doc(current, rows)
    diff = "\n".join(difflib.unified_diff(current.splitlines(), updated.splitlines(), lineterm="", n=0))
    assert updated == current, "run python scripts/derive_table.py:\n" + diff


# --------------------------------------------------------------------------- hooks: CLI, attach, upgrade


def _folder(tmp_path, chat_template: str, config: dict | None = None):
    folder = tmp_path / "tok"
    folder.mkdir(parents=True)
    (folder / "chat_template.jinja").write_text(chat_template, encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config or {"eos_token": "<|im_end|>"}), encoding="utf-8")
    return folder


def test_cli_derive_prints_json_and_writes_only_a_proven_template(tmp_path, capsys) -> None:
    from hf_response_templates.cli import main

    folder = _folder(tmp_path, chatml(REASONING + CONTENT + TAGGED_CALLS))
    out = tmp_path / "template.json"
    assert main(["derive", str(folder), "--json", "--output", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["source"] == "derived" and data["fields"] == ["reasoning_content", "tool_calls", "content"]
    assert json.loads(out.read_text(encoding="utf-8")) == data["template"]

    bad = _folder(tmp_path / "b", chatml(CONTENT + "{{ message.content }}", generation_prompt="<|im_start|>assistant\n"))
    bad_out = tmp_path / "bad.json"
    assert main(["derive", str(bad), "--output", str(bad_out)]) == 1
    captured = capsys.readouterr()
    assert "NOT PROVEN" in captured.out and "not written" in captured.err
    assert not bad_out.exists()


def test_cli_derive_uses_the_shipped_family_unless_told_not_to(tmp_path, capsys) -> None:
    from hf_response_templates.cli import main
    from tests._chat_render import chat_template

    folder = _folder(tmp_path, chat_template("Qwen-Qwen3-0.6B.jinja"))
    assert main(["derive", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "library:qwen3"
    assert main(["derive", str(folder), "--json", "--no-library"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "derived"


def test_upgrade_template_derive_writes_a_proven_template_and_refuses_otherwise(tmp_path, capsys) -> None:
    from hf_response_templates.cli import main

    folder = _folder(tmp_path, chatml(CONTENT + CONTAINER_CALLS))
    assert main(["upgrade", str(folder), "--template", "derive"]) == 0
    written = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))["response_template"]
    assert "tool_calls" in written["fields"]

    bad = _folder(tmp_path / "b", chatml(CONTENT + "{{ message.content }}"))
    before = (bad / "tokenizer_config.json").read_text(encoding="utf-8")
    assert main(["upgrade", str(bad), "--template", "derive"]) == 1
    assert "not proven" in capsys.readouterr().err
    assert (bad / "tokenizer_config.json").read_text(encoding="utf-8") == before


def test_attach_with_derive() -> None:
    from types import SimpleNamespace

    from hf_response_templates.library import NoTemplateDetectedError, attach

    tok = SimpleNamespace(chat_template=chatml(REASONING + CONTENT + TAGGED_CALLS), special_tokens_map={})
    with pytest.raises(NoTemplateDetectedError):
        attach(tok)  # plain detection: no shipped family has this chat template
    assert attach(tok, derive=True) == "derived"
    assert tok.response_template["fields"]["tool_calls"]["content"] == "xml-inline"
    bad = SimpleNamespace(chat_template=chatml(CONTENT + "{{ message.content }}"), special_tokens_map={})
    with pytest.raises(NoTemplateDetectedError, match="not proven"):
        attach(bad, derive=True)
    assert not hasattr(bad, "response_template")


# --------------------------------------------------------------------------- streaming


PROVEN_FIXTURES = ["Qwen3-Coder.jinja", "Mistral-Small-3.2-24B-Instruct-2506.jinja", "moonshotai-Kimi-K2.jinja",
                   "vllm-Salesforce-Qwen-xLAM-fc-r.jinja", "LiquidAI-LFM2.5-8B-A1B.jinja",
                   # a repeated role header, an end-of-turn implicit field, an answer marker, calls back to back
                   "openai-gpt-oss-120b.jinja", "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
                   "vllm-tencent-Hunyuan-A13B-Instruct.jinja", "vllm-meta-llama-Llama-4-json.jinja",
                   "MiniMaxAI-MiniMax-M2.jinja",
                   # MARKER NAME MARKER delimiters; tagged arguments with a separator; {NAME: ARGS} in an array
                   "moonshotai-Kimi-K3.jinja", "vllm-google-functiongemma-270m-it.jinja", "vllm-swiss-ai-Apertus.jinja"]


def _stream(template: dict, prefix: str, chunks: list[str], tools) -> dict:
    from hf_response_templates import ResponseParser

    parser = ResponseParser(template, prefix, tools=tools)
    for chunk in chunks:
        parser.feed(chunk)
    message, _ = parser.finalize()
    return message


@pytest.mark.parametrize("name", PROVEN_FIXTURES)
@settings(max_examples=15, deadline=None, database=None)
@given(data=st.data())
def test_derived_templates_stream_like_one_shot(name: str, data) -> None:
    """A derived template parses the proof's generations the same for any chunking."""
    from hf_response_templates.verify import sample_tools
    from tests.strategies import chunkings

    _, result = derived(name)
    assert result.ok
    passing = [c.name for c in result.proof if c.status == "pass"]
    probe = data.draw(st.sampled_from([p for p in result.probes if p.ok and p.generation]))
    one_shot = parse_response(probe.generation, result.template, prefix=probe.prefix, tools=sample_tools(),
                              strict=False)
    chunks = data.draw(chunkings(probe.generation))
    assert _stream(result.template, probe.prefix, chunks, sample_tools()) == one_shot
    assert passing


def test_templates_that_print_the_time_are_known_to_tick() -> None:
    """Hunyuan prints the time to the second: its renders are retried when the clock ticks between them."""
    assert Prober(chatml(CONTENT, extra="{{ strftime_now('%Y-%m-%d %H:%M:%S') }}")).clock_dependent
    assert not Prober(chatml(CONTENT, extra="{{ strftime_now('%Y-%m-%d') }}")).clock_dependent
    result = derive(chatml(CONTENT, extra="{{ strftime_now('%H:%M:%S') }}\n"), use_library=False)
    assert result.ok, result.report()


def test_a_flag_the_template_defaults_itself_is_still_a_flag() -> None:
    ct = chatml(CONTENT, extra="{%- if enable_thinking is not defined %}{% set enable_thinking = true %}{% endif %}")
    assert thinking_flags(ct) == ["enable_thinking"]


def test_an_empty_block_the_prompt_writes_names_the_reasoning_markers() -> None:
    # history never shows reasoning, but thinking off pre-closes an empty block (SmolLM3 style)
    gp = "<|im_start|>assistant\n{% if not enable_thinking %}<think>\n\n</think>\n{% endif %}"
    ct = chatml(CONTENT, generation_prompt=gp)
    reasoning, found = find_reasoning(probes_of(ct, flag="enable_thinking", value=False))
    assert reasoning is not None and (reasoning.open, reasoning.close) == ("<think>", "</think>")
    assert all(f.guessed for f in found)


def test_history_shows_where_a_turn_ends() -> None:
    # no end-of-turn token after the answer: the next turn's header (and the tool turn's) ends the message
    ct = (
        "{%- for m in messages %}{%- if m.role == 'assistant' %}<|assistant|>{{ m.content }}" + TAGGED_CALLS
        .replace("message.", "m.") + "{%- elif m.role == 'tool' %}<|observation|>{{ m.content }}"
        "{%- else %}<|{{ m.role }}|>{{ m.content }}{%- endif %}{%- endfor %}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    result = derive(ct, use_library=False)
    assert result.ok, result.report()
    assert result.template["fields"]["content"]["close"] == ["<|user|>", "<|observation|>"]


HARMONY_LIKE = (
    "{%- for m in messages %}{%- if m.role == 'assistant' %}{%- if m.reasoning_content %}"
    "<|start|>assistant<|channel|>analysis<|message|>{{ m.reasoning_content }}<|end|>{%- endif %}"
    "<|start|>assistant<|channel|>final<|message|>{{ m.content }}<|end|>"
    "{%- else %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|start|>assistant{% endif %}"
)


def test_a_role_header_repeated_between_regions_goes_with_the_next_open() -> None:
    # each channel is its own message: "<|start|>assistant" is written again before the answer
    probes = probes_of(HARMONY_LIKE)
    anchors, _ = find_anchors(probes, None)
    headers, found = find_repeated_headers(probes, anchors)
    assert headers == ["<|start|>assistant"] and found[0].probes
    assert find_repeated_headers(probes_of(chatml(REASONING + CONTENT)), ["<|im_start|>assistant\n"])[0] == []
    result = derive(HARMONY_LIKE, use_library=False)
    assert result.ok, result.report()
    output = "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|end|>"
    assert parse_response(output, result.template, prefix="<|start|>assistant") == {
        "role": "assistant", "reasoning_content": "Hm.", "content": "Hi!"}


def test_an_answer_with_its_own_open_ends_the_message_at_the_end_of_turn() -> None:
    # <ans>...</ans><|im_end|>: without an implicit field the end of turn would be text outside every region
    ct = chatml("<ans>" + CONTENT + "</ans>")
    content, _ = find_content(probes_of(ct), None)
    assert content is not None and (content.open, content.closes) == ("<ans>", ["</ans>", "<|im_end|>"])
    result = derive(ct, use_library=False)
    assert result.ok, result.report()
    assert result.template["fields"]["unmarked_text"] == {"close": "<|im_end|>", "content": "text"}
    got = parse_response("<ans>Hi</ans><|im_end|>\n<|im_start|>user\n", result.template, prefix="")
    assert got == {"role": "assistant", "content": "Hi"}


def test_the_answer_framing_is_read_from_history_when_no_answer_continues_its_prompt() -> None:
    # the prompt opens <think> that history does not write before a plain answer (MiniMax-M2 style)
    body = REASONING.replace("{%-", "{%") + CONTENT
    ct = chatml(body, generation_prompt="<|im_start|>assistant\n<think>\n")
    probes = probes_of(ct)
    assert not any(p.ok for p in probes if p.name == "content")
    reasoning, _ = find_reasoning(probes, ct)
    content, found = find_content(probes, reasoning)
    assert content is not None and (content.open, content.closes) == ("", ["<|im_end|>"])
    assert all(name.endswith("(history)") for f in found for name in f.probes)
    result = derive(ct, use_library=False)
    assert result.ok, result.report()
    assert parse_response("Hm.\n</think>\n\nHi<|im_end|>", result.template, prefix=result.probes[0].prefix) == {
        "role": "assistant", "reasoning_content": "Hm.", "content": "Hi"}


def test_bare_json_calls_written_back_to_back_are_split_at_the_brace() -> None:
    # Llama 4 style: {"name": ...}{"name": ...} with nothing between the calls
    body = ("{%- if message.tool_calls %}{%- for tc in message.tool_calls %}"
            '{"name": "{{ tc.function.name }}", "parameters": {{ tc.function.arguments | tojson }}}'
            "{%- endfor %}{%- else %}{{ message.content }}{%- endif %}")
    result = derive(chatml(body), use_library=False)
    assert result.ok, result.report()
    assert any(c.name == "parallel_tool_calls" and c.status == "pass" for c in result.proof)
    got = parse_response('{"name": "a", "parameters": {"x": 1}}{"name": "b", "parameters": {}}<|im_end|>',
                         result.template, prefix="")
    assert [c["function"]["name"] for c in got["tool_calls"]] == ["a", "b"]


def test_a_marker_some_turns_write_before_the_answer_is_taken_by_an_empty_region() -> None:
    # "A: " only when tools are given (Hunyuan's 助手： after a tool result): it is not part of the answer
    ct = chatml("{%- if tools %}A: {% endif %}" + CONTENT)
    content, found = find_content(probes_of(ct), None)
    assert content is not None and content.open == "" and content.optional_opens == ["A:"]
    assert any(f.what == "written before the answer in some turns only" for f in found)
    result = derive(ct, use_library=False)
    assert result.ok, result.report()
    for output in ("A: Hi<|im_end|>", "Hi<|im_end|>"):
        assert parse_response(output, result.template, prefix="") == {"role": "assistant", "content": "Hi"}


def test_derived_templates_read_real_model_outputs() -> None:
    """The hand-written raw outputs of tests/test_templates_raw_outputs.py, parsed with the templates
    derived from their families' chat templates (not the shipped ones). What a chat template never shows
    (gpt-oss's own tool-call header, Llama's <|python_tag|>, Mistral calls without [CALL_ID], reasoning
    SmolLM3 and Granite drop from history) cannot be derived; everything else must parse the same."""
    from hf_response_templates.library import TEMPLATE_INFO
    from tests._chat_render import TOOLS
    from tests.test_templates_raw_outputs import CASES, ON_TEMPLATE_CASES

    underivable = {"smollm3-tool-call", "gpt-oss-model-tool-call", "gpt-oss-preamble-then-call", "mistral-tools",
                   "llama3-python-tag-eom", "llama3-tool-call-with-type-key", "granite-think-response",
                   "granite-think-response-newlines", "granite-tool-calls"}
    wrong = []
    cases = CASES[:ON_TEMPLATE_CASES]  # the variants after them are written in no chat template
    for case_id, name, prefix, output, expected in cases:
        _, result = derived(TEMPLATE_INFO[name]["chat_template"])
        got = parse_response(output, result.template, prefix=prefix, tools=TOOLS, strict=False)
        if got != expected and case_id not in underivable:
            wrong.append((case_id, got, expected))
    assert not wrong, wrong
    assert len(cases) - len(underivable) >= 36


def test_attach_derive_on_a_real_tokenizer(tmp_path) -> None:
    """A Transformers tokenizer with an unknown chat template: attach derives, the template saves and parses."""
    from transformers import AutoTokenizer

    import hf_response_templates
    from tests._tokenizers import byte_level_tokenizer

    tok = byte_level_tokenizer()
    tok.chat_template = chatml(REASONING + CONTENT + TAGGED_CALLS)
    assert hf_response_templates.attach(tok, derive=True) == "derived"
    tok.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(tmp_path)
    assert again.response_template == tok.response_template
    out = "<think>\nPlan.\n</think>\n\nHi<call><fn=f>\n<arg=n>7</arg>\n</fn></call><|im_end|>"
    assert again.parse_response(out, prefix="<|im_start|>assistant\n") == {
        "role": "assistant", "reasoning_content": "Plan.", "content": "Hi",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"n": "7"}}}]}
