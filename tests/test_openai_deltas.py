"""OpenAI-style streaming deltas (`hf_response_templates.openai.DeltaStream`).

The central property: for every shipped template with tool calls, stream a realistic generation in a
random chunking, reassemble the deltas the way the OpenAI Python SDK does (strings concatenated, list
entries merged by ``index``: see `openai_accumulate`, a copy of the SDK's ``accumulate_delta``), and get
exactly the message ``parse_response`` returns (with ``tools=`` typing): content, reasoning, every
tool call's name and ``json.loads(arguments)``. Names and ids come once per call; for JSON bodies the
arguments start streaming before the region closes; nothing sent is ever taken back.

Realistic generations come from two sources: what each model's real chat template renders for a
hypothesis-built assistant message (the round-trip machinery of tests/_chat_render.py), and raw outputs
written the way the models emit them (below, plus tests/test_templates_raw_outputs.py's cases).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from typing import Any

import pytest
from _chat_render import EXAMPLES, FAMILIES, TOOLS, chat_template, conversations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, parse_response
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.openai import SSE_DONE, DeltaStream, accumulate_deltas, sse
from hf_response_templates.verify import split_assistant_turn

SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    database=None,
)
N_RENDERED = max(6, EXAMPLES // 2)  # rendered conversations per template
N_RAW = max(10, EXAMPLES)  # random chunkings per raw output set


def _tool_templates() -> list[str]:
    return sorted(n for n in list_templates() if "tool_calls" in get_template(n)["fields"])


TOOL_TEMPLATES = _tool_templates()


# --------------------------------------------------------------------------- the OpenAI SDK's accumulation


def openai_accumulate(acc: dict, delta: dict) -> dict:
    """A copy of ``openai.lib.streaming._deltas.accumulate_delta`` (openai-python 1.x), which the SDK's
    ``ChatCompletionStreamState`` uses to build the final message from chunks."""
    for key, delta_value in delta.items():
        if key not in acc:
            acc[key] = delta_value
            continue
        acc_value = acc[key]
        if acc_value is None:
            acc[key] = delta_value
            continue
        if key == "index" or key == "type":
            acc[key] = delta_value
            continue
        if isinstance(acc_value, str) and isinstance(delta_value, str):
            acc_value += delta_value
        elif isinstance(acc_value, (int, float)) and isinstance(delta_value, (int, float)):
            acc_value += delta_value
        elif isinstance(acc_value, dict) and isinstance(delta_value, dict):
            acc_value = openai_accumulate(acc_value, delta_value)
        elif isinstance(acc_value, list) and isinstance(delta_value, list):
            if all(isinstance(x, (str, int, float)) for x in acc_value):
                acc_value.extend(delta_value)
                continue
            for delta_entry in delta_value:
                if not isinstance(delta_entry, dict):
                    raise TypeError(f"Unexpected list delta entry is not a dictionary: {delta_entry}")
                index = delta_entry["index"]  # the SDK raises without it
                assert isinstance(index, int)
                try:
                    acc_entry = acc_value[index]
                except IndexError:
                    acc_value.insert(index, delta_entry)
                else:
                    assert isinstance(acc_entry, dict)
                    acc_value[index] = openai_accumulate(acc_entry, delta_entry)
        acc[key] = acc_value
    return acc


def reassemble(deltas: list[dict]) -> dict:
    acc: dict = {}
    for d in deltas:
        # through JSON, as a client receives it
        openai_accumulate(acc, json.loads(json.dumps(d)))
    return acc


# --------------------------------------------------------------------------- checks


def _reasoning_field(template: dict) -> str | None:
    return next((n for n in ("reasoning_content", "reasoning", "thinking") if n in template["fields"]), None)


def _text_keys(template: dict) -> dict[str, str]:
    """template text field -> delta key, as DeltaStream maps them by default."""
    reasoning = _reasoning_field(template)
    out = {}
    for name, spec in template["fields"].items():
        if name == "tool_calls" or spec.get("content", "text") != "text":
            continue
        if spec.get("repeats") and "join" not in spec:
            continue
        out[name] = "content" if name == "content" else "reasoning_content" if name == reasoning else name
    return out


def _flat_calls(message: dict) -> list[dict]:
    calls = []
    for item in message.get("tool_calls") or []:
        calls.extend(item if isinstance(item, list) else [item])
    return calls


def _fn(call: Any) -> dict:
    if not isinstance(call, dict):
        return {}
    return call["function"] if isinstance(call.get("function"), dict) else call


#: ids the model writes itself, kept by DeltaStream: Kimi K2 "functions.NAME:IDX", Mistral's 9 characters
MODEL_ID = re.compile(r"functions\.[^\s:<]+:\d+|[A-Za-z0-9]{9}")


def check_deltas(
    deltas: list[dict],
    expected: dict,
    template: dict,
    *,
    events_mode: bool = False,
    inconsistent_ok: bool = False,
) -> dict:
    """Assert that `deltas` reassemble into `expected` (a parse_response(strict=False) message)."""
    assert deltas[0] == {"role": expected.get("role", "assistant")}
    assert all(d for d in deltas), "no empty delta"
    ids_seen: dict[int, int] = {}
    names_seen: dict[int, int] = {}
    for d in deltas:
        assert "role" not in d or d is deltas[0]
        for key, value in d.items():
            if isinstance(value, str):
                assert value, f"empty {key} delta"
        for entry in d.get("tool_calls", []):
            i = entry["index"]
            if "id" in entry:
                ids_seen[i] = ids_seen.get(i, 0) + 1
                assert entry["type"] == "function"
            if "name" in entry.get("function", {}):
                names_seen[i] = names_seen.get(i, 0) + 1
                assert "id" in entry, "the name comes with the id"
    acc = reassemble(deltas)

    for field, key in _text_keys(template).items():
        assert acc.get(key) == expected.get(field), f"{field} -> {key}"

    good = [c for c in acc.get("tool_calls", []) if c.get("error", {"in_message": True})["in_message"]]
    want = _flat_calls(expected)
    assert len(good) == len(want), (acc.get("tool_calls"), want)
    for got, call in zip(good, want, strict=True):
        fn = _fn(call)
        assert got["type"] == (call.get("type", "function") if isinstance(call, dict) else "function")
        if inconsistent_ok and (got.get("error") or {}).get("type") == "inconsistent":
            continue
        if not isinstance(fn.get("name"), str) or not fn["name"]:  # garbage the engine let through
            assert got["function"]["name"] == "" and got["error"]["type"] == "invalid"
            continue
        assert got["function"]["name"] == fn["name"]
        if "arguments" in fn:
            assert json.loads(got["function"]["arguments"]) == fn["arguments"]
        else:
            assert got["function"]["arguments"] == ""
        assert "error" not in got or got["error"]["type"] == "length", got
    for c in acc.get("tool_calls", []):
        assert ids_seen.get(c["index"]) == 1, "one id per call"
        assert names_seen.get(c["index"]) == 1, "one name per call"
        kept = want[c["index"]].get("id") if c["index"] < len(want) and isinstance(want[c["index"]], dict) else None
        if isinstance(kept, str) and kept:  # an id the template reads from the output (Kimi's functions.NAME:IDX)
            assert c["id"] == kept
        else:
            assert (c["id"].startswith("call_") and len(c["id"]) == 29) or MODEL_ID.fullmatch(c["id"]), c["id"]
    assert len({c["id"] for c in acc.get("tool_calls", [])}) == len(acc.get("tool_calls", []))
    assert [c["index"] for c in acc.get("tool_calls", [])] == list(range(len(acc.get("tool_calls", []))))

    unparsed = [{k: v for k, v in u.items() if k != "index"} for u in acc.get("unparsed", [])]
    want_unparsed = expected.get("unparsed", [])
    # (events carry the position too: events mode gives the same records)
    assert unparsed == want_unparsed
    return acc


def stream_text(
    template: Any,
    prefix: str,
    pieces: list[str],
    *,
    tools: Any = TOOLS,
    finish: str | None = None,
    **options: Any,
) -> tuple[DeltaStream, list[dict]]:
    ds = DeltaStream(template, prefix=prefix, tools=tools, id_seed=0, **options)
    deltas: list[dict] = []
    for piece in pieces:
        deltas += ds.feed(piece)
    deltas += ds.finish(finish)
    assert ds.warnings == []
    return ds, deltas


def check_text(template: dict, prefix: str, text: str, pieces: list[str], *, tools: Any = TOOLS) -> dict:
    assert "".join(pieces) == text
    expected = parse_response(text, template, prefix=prefix, tools=tools, strict=False)
    ds, deltas = stream_text(template, prefix, pieces, tools=tools)
    assert ds.message == expected
    acc = check_deltas(deltas, expected, template)
    assert ds.finish_reason == ("tool_calls" if _flat_calls(expected) else "stop")
    return acc


@st.composite
def chunkings(draw: st.DrawFn, text: str) -> list[str]:
    """`text` cut at random places (sometimes one character at a time)."""
    if draw(st.integers(0, 7)) == 0:
        return list(text)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=max(1, len(text) // 3)))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


# --------------------------------------------------------------------------- realistic outputs

CHATML = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
TRICKY = 'caf\\u00e9 \\"quoted\\" back\\\\slash \\n new line 🌧️ {braces} [1, 2]'

#: (template, prefix, raw generation) written the way each model emits them
RAW: list[tuple[str, str, str]] = [
    (
        "smollm3",
        CHATML,
        "<think>\nI should call get_weather.\n</think>\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "ratio": 0.5}}\n</tool_call><|im_end|>',
    ),
    ("smollm3", CHATML + "<think>\n\n</think>\n", "Hello  there!\n\n<|im_end|>\n"),
    (
        "qwen3",
        CHATML,
        "<think>\nTwo lookups.\n</think>\n\nLet me check.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "'
        + TRICKY
        + '", "days": "3", "metric": true}}\n'
        "</tool_call>\n<tool_call>\n"
        '{"name": "search", "arguments": {"query": "Paris events", "options": {"lang": "fr", "n": [1, {"x": null}]}, '
        '"tags": ["a", "b"]}}\n</tool_call><|im_end|>\n',
    ),
    (
        "qwen3",
        CHATML,
        "<think>\nOk.\n</think>\n\nFirst part.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {}}\n</tool_call>\nSecond part  \n<|im_end|>',
    ),
    (
        "hermes3",
        CHATML,
        '<tool_call>\n{"arguments": {"city": "Paris", "days": 2}, "name": "get_weather"}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call><|im_end|>',
    ),
    (
        "qwen3-coder",
        CHATML,
        "I'll look that up.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n"
        "</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>\n"
        '<tool_call>\n<function=search>\n<parameter=query>\nbest {json} "tips"\n</parameter>\n<parameter=options>\n'
        '{"lang": "en"}\n</parameter>\n<parameter=tags>\n["a", "b"]\n</parameter>\n</function>\n</tool_call><|im_end|>',
    ),
    (
        "glm-4.6",
        "<|user|>\nWeather?<|assistant|>",
        "<think>I need the weather.</think>\nCalling now."
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n"
        "<arg_value>3</arg_value>\n</tool_call><tool_call>search\n<arg_key>query</arg_key>\n<arg_value>q</arg_value>\n"
        "</tool_call><|observation|>",
    ),
    (
        "gpt-oss",
        "<|start|>user<|message|>Weather?<|end|><|start|>assistant",
        "<|channel|>analysis<|message|>Need the weather tool.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris","days":3,"metric":false}<|call|>',
    ),
    (
        "gpt-oss",
        "<|start|>user<|message|>Hi<|end|><|start|>assistant",
        "<|channel|>analysis<|message|>Greeting.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>",
    ),
    (
        "cohere-command-r7b",
        "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Weather?<|END_OF_TURN_TOKEN|>"
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        "<|START_THINKING|>I will look up the weather and search.<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris", "days": 3}},\n'
        '    {"tool_call_id": "1", "tool_name": "search", "parameters": {"query": "events", "tags": ["x"]}}\n'
        "]<|END_ACTION|><|END_OF_TURN_TOKEN|>",
    ),
    (
        "kimi-k2",
        "<|im_user|>user<|im_middle|>Weather?<|im_end|><|im_assistant|>assistant<|im_middle|>",
        "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris", "days": 3}<|tool_call_end|><|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>'
        '{"query": "' + TRICKY + '"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
    ),
    (
        "deepseek-v3.1",
        "<｜User｜>Weather?<｜Assistant｜></think>",
        "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris", "days": 3}<｜tool▁call▁end｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{"query": "q", '
        '"options": {"a": [1, 2.5e3]}}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
    ),
    (
        "llama3",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": "3"}}<|eot_id|>',
    ),
    (
        "llama3",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        '<|python_tag|>{"type": "function", "name": "search", "parameters": {"query": "'
        + TRICKY
        + '"}}<|eom_id|>',
    ),
    (
        "gemma4",
        "<|turn>model\n",
        "<|channel>thought\nNeed two lookups.<channel|><|tool_call>call:get_weather"
        '{city:<|"|>Paris<|"|>,days:3}<tool_call|><|tool_call>call:search{options:{lang:<|"|>fr<|"|>,safe:true},'
        'query:<|"|>Louvre "hours" \\ {x}<|"|>,tags:[<|"|>a<|"|>,<|"|>b<|"|>]}<tool_call|><|tool_response>',
    ),
    (
        "granite-3.3",
        "<|start_of_role|>assistant<|end_of_role|>",
        '<|tool_call|>[{"arguments": {"city": "Paris", "days": "2"}, "name": "get_weather"}, '
        '{"name": "search", "arguments": {"query": "Louvre hours"}}]<|end_of_text|>',
    ),
    (
        "deepseek-r1",
        "<｜User｜>Weather?<｜Assistant｜><think>\n",
        "The user wants weather.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n'
        '```json\n{"query": "q"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
    ),
    (
        "mistral-small-3.2",
        "[INST]Weather?[/INST]",
        'Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}[TOOL_CALLS]search[ARGS]{"query": "q"}</s>',
    ),
]
RAW = [case for case in RAW if case[0] in list_templates()]


def _raw_cases_from_template_tests() -> list[tuple[str, str, str]]:
    """The hand-written raw outputs of tests/test_templates_raw_outputs*.py (every such module there)."""
    from pathlib import Path

    known = set(list_templates())
    out: list[tuple[str, str, str]] = []
    for path in sorted(Path(__file__).parent.glob("test_templates_raw_outputs*.py")):
        cases = importlib.import_module(path.stem).CASES
        out += [(c[1], c[2], c[3]) for c in cases if c[1] in known]
    return out


ALL_RAW = RAW + _raw_cases_from_template_tests()


def test_raw_cases_cover_every_tool_template():
    # every shipped template with tool calls is streamed here with at least one tool call
    with_calls = {
        name
        for name, prefix, text in ALL_RAW
        if _flat_calls(parse_response(text, get_template(name), prefix=prefix, strict=False))
    }
    assert with_calls >= set(TOOL_TEMPLATES)


@pytest.mark.parametrize("case", range(len(ALL_RAW)))
def test_raw_output_char_by_char_and_whole(case: int) -> None:
    name, prefix, text = ALL_RAW[case]
    template = get_template(name)
    check_text(template, prefix, text, list(text))
    check_text(template, prefix, text, [text])
    check_text(template, prefix, text, list(text), tools=None)


@settings(max_examples=N_RAW, **SETTINGS)
@given(data=st.data())
def test_raw_outputs_random_chunkings(data: st.DataObject) -> None:
    name, prefix, text = data.draw(st.sampled_from(ALL_RAW))
    pieces = data.draw(chunkings(text))
    tools = data.draw(st.sampled_from([TOOLS, None]))
    check_text(get_template(name), prefix, text, pieces, tools=tools)


RENDERED = sorted(n for n in FAMILIES if FAMILIES[n].tool_calls and n in TOOL_TEMPLATES)


@pytest.mark.parametrize("name", RENDERED)
def test_rendered_conversations_random_chunkings(name: str) -> None:
    family = FAMILIES[name]
    template = get_template(name)
    source = chat_template(family.fixture)

    @settings(max_examples=N_RENDERED, **SETTINGS)
    @given(conv=conversations(family, template), data=st.data())
    def run(conv: tuple[list[dict], dict], data: st.DataObject) -> None:
        messages, kwargs = conv
        prefix, generation = split_assistant_turn(
            source, messages, tools=TOOLS, special_tokens=family.special_tokens, **kwargs
        )
        check_text(template, prefix, generation, data.draw(chunkings(generation)))

    run()


_TOKEN = re.compile(r"<[^<>]{0,40}>|\[[A-Z_/]+\]|```\w*|[{}\[\],:\"=()]|\s+|[^<>\[\]{}\",:=()\s`]+")


def _fuzz_material() -> dict[str, tuple[str, list[str]]]:
    out: dict[str, tuple[str, list[str]]] = {}
    for name, prefix, text in RAW:
        tokens = out.setdefault(name, (prefix, []))[1]
        tokens.extend(t for t in _TOKEN.findall(text) if t not in tokens)
    return out


FUZZ = _fuzz_material()


@settings(max_examples=N_RAW * 3, **SETTINGS)
@given(data=st.data())
def test_fuzz_never_raises_and_reassembles_the_streamed_message(data: st.DataObject) -> None:
    """Shuffled pieces of real outputs (delimiters, JSON punctuation, words): whatever the model writes,
    the adapter never raises and its deltas still reassemble into the parser's message; a call whose
    streamed arguments turned out wrong is flagged "inconsistent" (cause: a repeated key)."""
    name = data.draw(st.sampled_from(sorted(FUZZ)))
    prefix, tokens = FUZZ[name]
    text = "".join(data.draw(st.lists(st.sampled_from(tokens), max_size=60)))
    template = get_template(name)
    ds, deltas = stream_text(
        template, prefix, data.draw(chunkings(text)), finish=data.draw(st.sampled_from([None, "length"]))
    )
    check_deltas(deltas, ds.message, template, inconsistent_ok=True)


# --------------------------------------------------------------------------- streaming before the close


def _incomplete_snapshots(text: str, template: dict, prefix: str) -> dict[int, str]:
    """Feed one character at a time; per call, the longest arguments text seen while not yet valid JSON."""
    ds = DeltaStream(template, prefix=prefix, tools=TOOLS, id_seed=0)
    deltas: list[dict] = []
    seen: dict[int, str] = {}
    for ch in text:
        deltas += ds.feed(ch)
        acc = reassemble(deltas)
        for call in acc.get("tool_calls", []):
            args = call["function"]["arguments"]
            try:
                json.loads(args)
            except ValueError:
                seen[call["index"]] = args
    ds.finish()
    return seen


@pytest.mark.parametrize(
    "case",
    [
        i
        for i, c in enumerate(RAW)
        if "tool_call" in c[2] or "TOOL_CALLS" in c[2] or "ACTION" in c[2] or "to=functions" in c[2]
    ],
)
def test_arguments_stream_before_the_region_closes(case: int) -> None:
    name, prefix, text = RAW[case]
    template = get_template(name)
    if any((f.get("content_args") or {}).get("allow_non_json") for f in template["fields"].values()):
        # gpt-oss: a body that may turn out not to be JSON (a built-in tool's code) is sent at its close
        seen = _incomplete_snapshots(text, template, prefix)
        assert not any(seen.values()), seen
        return
    message = parse_response(text, template, prefix=prefix, tools=TOOLS)
    seen = _incomplete_snapshots(text, template, prefix)
    for i, call in enumerate(_flat_calls(message)):
        args = _fn(call)["arguments"]
        if not args:
            continue
        if re.search(r'\{"arguments": \{[^{}]*\}, "name": "' + _fn(call)["name"] + '"', text):
            continue  # arguments written before the name wait for it (the call is announced with its name)
        first_key = next(iter(args))
        # the first member was sent while the arguments were still incomplete (the region still open)
        assert json.dumps(first_key, ensure_ascii=False) in seen.get(i, ""), (i, seen)


def test_string_values_stream_character_by_character_only_when_they_stay_strings() -> None:
    template = get_template("qwen3")
    text = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "12"}}\n</tool_call>'
        "<|im_end|>"
    )
    frags = []
    ds = DeltaStream(template, prefix=CHATML, tools=TOOLS, id_seed=0)
    for ch in text:
        for d in ds.feed(ch):
            frags += [e["function"]["arguments"] for e in d.get("tool_calls", []) if "function" in e]
    frags += [
        e["function"]["arguments"] for d in ds.finish() for e in d.get("tool_calls", []) if "function" in e
    ]
    assert "Par" in "".join(frags[:6])  # the city streams before it is complete
    assert any(f.startswith('"city": "') for f in frags)
    assert not any('"1' in f for f in frags)  # "12" is an integer parameter: never sent as a string
    assert json.loads("".join(frags)) == {"city": "Paris", "days": 12}
    # without tools the value stays a string, so it streams as one
    _, deltas = stream_text(template, CHATML, list(text), tools=None)
    assert json.loads(reassemble(deltas)["tool_calls"][0]["function"]["arguments"]) == {
        "city": "Paris",
        "days": "12",
    }


def test_text_whitespace_is_held_back_and_reopened_content_joins_with_newline() -> None:
    template = get_template("qwen3")
    text = '  Hello   \n\n<tool_call>\n{"name": "search", "arguments": {"query": "q"}}\n</tool_call>\n  World \n<|im_end|>'
    ds, deltas = stream_text(template, CHATML + "<think>\n\n</think>\n\n", list(text))
    contents = [d["content"] for d in deltas if "content" in d]
    assert "".join(contents) == "Hello\nWorld" == ds.message["content"]
    assert not contents[0].startswith(" ")


def test_join_fields_stream_their_separator() -> None:
    template = get_template("gpt-oss")
    text = (
        "<|channel|>analysis<|message|>One.<|end|><|start|>assistant<|channel|>analysis<|message|>Two.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
    )
    ds, deltas = stream_text(template, "<|start|>assistant", list(text))
    acc = reassemble(deltas)
    assert acc["reasoning_content"] == ds.message["thinking"] == "One.\nTwo."
    assert acc["content"] == "Done."


# --------------------------------------------------------------------------- malformed regions


def test_malformed_json_tool_call_is_reported_never_raised() -> None:
    template = get_template("qwen3")
    text = (
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}} oops\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "ok"}}\n</tool_call><|im_end|>'
    )
    expected = parse_response(text, template, prefix=CHATML, tools=TOOLS, strict=False)
    ds, deltas = stream_text(template, CHATML, list(text))
    acc = check_deltas(deltas, expected, template)
    bad, good = acc["tool_calls"]
    assert bad["function"]["name"] == "get_weather"  # announced while it looked fine...
    assert bad["error"]["type"] == "malformed"  # ...then flagged: do not execute it
    assert "invalid JSON" in bad["error"]["message"]
    assert "error" not in good and json.loads(good["function"]["arguments"]) == {"query": "ok"}
    assert acc["unparsed"] == [{"index": 0, **expected["unparsed"][0]}]
    assert expected["unparsed"][0]["field"] == "tool_calls"
    assert ds.finish_reason == "tool_calls"  # one call was made


def test_malformed_call_with_captured_name() -> None:
    template = get_template("kimi-k2")
    prefix = "<|im_assistant|>assistant<|im_middle|>"
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Par<|tool_call_end|><|tool_calls_section_end|><|im_end|>'
    )
    expected = parse_response(text, template, prefix=prefix, tools=TOOLS, strict=False)
    for pieces in (list(text), [text]):
        ds, deltas = stream_text(template, prefix, pieces)
        acc = check_deltas(deltas, expected, template)
        # announced (then flagged) when the name was seen before the close; otherwise only `unparsed`
        for call in acc.get("tool_calls", []):
            assert call["function"]["name"] == "get_weather" and call["error"]["type"] == "malformed"
        assert len(acc.get("tool_calls", [])) == (len(pieces) > 1)
        assert acc["unparsed"][0]["field"] == "tool_calls"
        assert ds.finish_reason == "stop"


def test_malformed_non_tool_region_surfaces_as_unparsed() -> None:
    template = {
        "defaults": {"role": "assistant"},
        "start_anchor": "A:",
        "fields": {
            "data": {"open": "<data>", "close": "</data>", "content": "json"},
            "content": {"close": "<eos>"},
        },
    }
    text = '<data>{"a": 1,}</data>Hi<eos>'
    expected = parse_response(text, template, prefix="", strict=False)
    ds, deltas = stream_text(template, "", list(text), tools=None)
    acc = reassemble(deltas)
    assert acc["content"] == "Hi" and "data" not in acc
    assert [{k: v for k, v in u.items() if k != "index"} for u in acc["unparsed"]] == expected["unparsed"]
    ok = '<data>{"a": [1, 2]}</data><eos>'
    _, deltas = stream_text(template, "", list(ok), tools=None)
    assert reassemble(deltas)["data"] == {"a": [1, 2]}


# --------------------------------------------------------------------------- finish_reason


def test_finish_reason_stop_and_tool_calls() -> None:
    template = get_template("qwen3")
    ds, _ = stream_text(template, CHATML, ["Just text.<|im_end|>"])
    assert ds.finish_reason == "stop"
    ds, _ = stream_text(template, CHATML, ['<tool_call>{"name": "search", "arguments": {}}</tool_call>'])
    assert ds.finish_reason == "tool_calls"
    ds, _ = stream_text(template, CHATML, ["Just text, cut"], finish="length")
    assert ds.finish_reason == "length"
    ds, deltas = stream_text(template, CHATML, ["Just text.<|im_end|>"], finish="stop")
    assert ds.finish_reason == "stop"


def test_length_with_an_unfinished_json_call_is_reported() -> None:
    template = get_template("qwen3")
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3'
    ds, deltas = stream_text(template, CHATML, list(text), finish="length")
    assert ds.finish_reason == "length"
    acc = reassemble(deltas)
    [call] = acc["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert (
        call["function"]["arguments"] == '{"city": "Paris"'
    )  # what was complete; "days": 3 might have gone on
    assert call["error"]["type"] == "length"
    assert acc["unparsed"][0]["field"] == "tool_calls"  # and its raw text, since it cannot be parsed
    assert acc["unparsed"][0]["text"].endswith('"days": 3')


def test_length_with_an_unfinished_xml_call_keeps_the_complete_parameters() -> None:
    template = get_template("glm-4.6")
    prefix = "<|assistant|>"
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>1"
    )
    expected = parse_response(text, template, prefix=prefix, tools=TOOLS, strict=False)
    ds, deltas = stream_text(template, prefix, list(text), finish="length")
    acc = check_deltas(deltas, expected, template)
    [call] = acc["tool_calls"]
    assert (
        json.loads(call["function"]["arguments"])
        == {"city": "Paris"}
        == _fn(expected["tool_calls"][0])["arguments"]
    )
    assert call["error"]["type"] == "length"
    assert ds.finish_reason == "length"


def test_length_after_a_complete_call_flags_nothing() -> None:
    template = get_template("qwen3")
    text = '<tool_call>\n{"name": "search", "arguments": {"query": "q"}}\n</tool_call>'
    ds, deltas = stream_text(template, CHATML, [text], finish="length")
    assert ds.finish_reason == "length"
    assert "error" not in reassemble(deltas)["tool_calls"][0]


def test_finish_chunks_and_sse() -> None:
    template = get_template("qwen3")
    ds = DeltaStream(template, prefix=CHATML, tools=TOOLS, id_seed=3, model="qwen3", created=123)
    chunks = ds.feed_chunks("Hi") + ds.finish_chunks()
    for c in chunks:
        assert c["object"] == "chat.completion.chunk" and c["model"] == "qwen3" and c["created"] == 123
        assert c["id"] == ds.completion_id and c["id"].startswith("chatcmpl-")
        [choice] = c["choices"]
        assert choice["index"] == 0
    assert [c["choices"][0]["delta"] for c in chunks] == [{"role": "assistant"}, {"content": "Hi"}, {}]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, "stop"]
    line = sse(chunks[1])
    assert line.startswith("data: ") and line.endswith("\n\n") and json.loads(line[6:]) == chunks[1]
    assert SSE_DONE == "data: [DONE]\n\n"
    with pytest.raises(RuntimeError):
        ds.feed("more")


def test_finish_reason_is_validated() -> None:
    ds = DeltaStream(get_template("qwen3"), prefix="")
    with pytest.raises(ValueError):
        ds.finish("eos")


# --------------------------------------------------------------------------- ids


def _ids(seed: Any, factory: Any = None) -> list[str]:
    name, prefix, text = next(c for c in RAW if c[0] == "cohere-command-r7b")
    ds = DeltaStream(get_template(name), prefix=prefix, tools=TOOLS, id_seed=seed, id_factory=factory)
    deltas = ds.feed(text) + ds.finish()
    return [c["id"] for c in reassemble(deltas)["tool_calls"]]


def test_ids_unique_and_reproducible_with_a_seed() -> None:
    a, b = _ids(42), _ids(42)
    assert a == b and len(set(a)) == len(a) == 2
    assert _ids(43) != a
    assert _ids(None) != _ids(None)
    assert _ids(None, lambda i: f"abc{i:06d}") == ["abc000000", "abc000001"]


def test_prefix_is_required_for_templates() -> None:
    with pytest.raises(ValueError, match="prefix"):
        DeltaStream(get_template("qwen3"))


# --------------------------------------------------------------------------- partial values


def test_partial_value_of_json_region() -> None:
    ds = DeltaStream(get_template("qwen3"), prefix=CHATML)
    ds.feed('<tool_call>\n{"name": "search", "arguments": {"query": "Par')
    assert ds.current_field == "tool_calls"
    assert ds.partial_value() == {"name": "search", "arguments": {"query": "Par"}}
    ds.feed('is"}}\n</tool_call>')
    assert ds.partial_value() is None


def test_partial_value_of_xml_region() -> None:
    ds = DeltaStream(get_template("qwen3-coder"), prefix=CHATML)
    ds.feed("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3")
    assert ds.partial_value() == {"city": "Paris", "days": "3"}  # the open value too, as for JSON's open strings
    ds.feed("1\n")  # (a newline that may come before the value's end is held back)
    assert ds.partial_value() == {"city": "Paris", "days": "31"}


PCL_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open": "<calls>",
            "close": "</calls>",
            "content": "python-call-list",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"close": "<eos>"},
    },
}


def test_python_call_list_streams_call_by_call() -> None:
    text = '<calls>[get_weather(city="Pa)ris", days=3), search(query=\'q\', tags=["a", "b"])]</calls><eos>'
    ds = DeltaStream(PCL_TEMPLATE, prefix="", tools=TOOLS, id_seed=0)
    deltas: list[dict] = []
    announced_before_close = 0
    for ch in text:
        deltas += ds.feed(ch)
        if ds.current_field == "tool_calls":
            announced_before_close = len(reassemble(deltas).get("tool_calls", []))
            if announced_before_close == 1:
                assert ds.partial_value() == [
                    {"name": "get_weather", "arguments": {"city": "Pa)ris", "days": 3}}
                ]
    deltas += ds.finish()
    assert announced_before_close == 2
    expected = parse_response(text, PCL_TEMPLATE, prefix="", tools=TOOLS, strict=False)
    check_deltas(deltas, expected, PCL_TEMPLATE)


@settings(max_examples=N_RAW, **SETTINGS)
@given(data=st.data())
def test_python_call_list_random_chunkings(data: st.DataObject) -> None:
    text = (
        'Sure.<calls>[get_weather(city="Paris", days=3, metric=True), search(query="a \\"b\\" (c)", '
        "options={'k': [1, 2.5, None]})]</calls>Done<eos>"
    )
    check_text(PCL_TEMPLATE, "", text, data.draw(chunkings(text)))


# --------------------------------------------------------------------------- events mode (ResponseStreamer)


@settings(max_examples=N_RAW, **SETTINGS)
@given(data=st.data())
def test_events_mode_matches_the_message(data: st.DataObject) -> None:
    """Fed with events made elsewhere (as a ResponseStreamer yields them), the deltas still reassemble
    into the message; names captured by open_pattern then come at the region's close."""
    name, prefix, text = data.draw(st.sampled_from(ALL_RAW))
    template = get_template(name)
    parser = ResponseParser(template, prefix, tools=TOOLS)
    batches = [parser.initial_events] + [parser.feed(p) for p in data.draw(chunkings(text))]
    message, final = parser.finalize()
    batches.append(final)
    ds = DeltaStream.for_events(template, tools=TOOLS, id_seed=0)
    deltas: list[dict] = []
    for batch in batches:
        deltas += ds.feed_events(batch)
    deltas += ds.finish()
    assert ds.warnings == []
    expected = parse_response(text, template, prefix=prefix, tools=TOOLS, strict=False)
    assert message == expected
    check_deltas(deltas, expected, template, events_mode=True)
    assert ds.finish_reason == ("tool_calls" if _flat_calls(expected) else "stop")


def test_events_mode_length_flags_a_call_that_ended_the_stream() -> None:
    template = get_template("qwen3")
    parser = ResponseParser(template, CHATML, tools=TOOLS)
    events = parser.feed('<tool_call>\n{"name": "search", "arguments": {"query": "q"')
    _, final = parser.finalize()
    ds = DeltaStream.for_events(template, tools=TOOLS)
    deltas = ds.feed_events(parser.initial_events + events) + ds.feed_events(final) + ds.finish("length")
    [call] = reassemble(deltas)["tool_calls"]
    assert call["error"]["type"] == "length"
    assert ds.finish_reason == "length"


def test_an_existing_parser_can_be_wrapped() -> None:
    template = get_template("qwen3")
    parser = ResponseParser(template, CHATML, tools=TOOLS)
    ds = DeltaStream(parser, id_seed=0)
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"days": "4"}}\n</tool_call>'
    deltas = ds.feed(text) + ds.finish()
    assert json.loads(reassemble(deltas)["tool_calls"][0]["function"]["arguments"]) == {"days": 4}
    with pytest.raises(ValueError):
        DeltaStream(ResponseParser(template, ""), tools=TOOLS)


# --------------------------------------------------------------------------- packaging


def test_module_does_not_shadow_the_openai_package() -> None:
    import hf_response_templates.openai as ours

    assert ours.__name__ == "hf_response_templates.openai"
    spec = importlib.util.find_spec("openai")
    assert spec is None or "hf_response_templates" not in (spec.origin or "")
    # importing our module first must leave `import openai` to the real package (or fail cleanly)
    code = (
        "import hf_response_templates.openai, sys\n"
        "try:\n    import openai\nexcept ModuleNotFoundError:\n    print('absent')\n"
        "else:\n    print('ours' if 'hf_response_templates' in openai.__file__ else 'real')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out in ("absent", "real")


def test_accumulate_deltas_helper_matches_the_sdk_rules() -> None:
    name, prefix, text = RAW[2]
    _, deltas = stream_text(get_template(name), prefix, list(text))
    assert accumulate_deltas(copy.deepcopy(deltas)) == reassemble(deltas)


# --------------------------------------------------------------------------- the README server loop


def test_server_loop_with_generate_and_response_streamer() -> None:
    """The README example: `generate` in a thread with a `ResponseStreamer`, its events turned into SSE
    lines (a tiny scripted Llama writes a realistic Qwen3 tool-call answer)."""
    pytest.importorskip("torch")
    import threading

    from _tiny_model import scripted_generate, tiny_model
    from _tokenizers import byte_level_tokenizer

    from hf_response_templates.tokenizer import ResponseStreamer

    tok = byte_level_tokenizer()
    template = get_template("qwen3")
    prompt = CHATML
    response = (
        "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": "2"}}\n</tool_call><|im_end|>'
    )
    streamer = ResponseStreamer(tok, tools=TOOLS, response_template=template, strict=False, timeout=60)
    thread = threading.Thread(
        target=scripted_generate,
        args=(tiny_model(tok), tok, [prompt], [response]),
        kwargs={"streamer": streamer},
    )
    thread.start()
    stream = DeltaStream.for_events(template, tools=TOOLS, model="tiny")
    lines = []
    for event in streamer:
        lines += [sse(chunk) for chunk in stream.feed_events_chunks([event])]
    thread.join()
    lines += [sse(chunk) for chunk in stream.finish_chunks()]
    lines.append(SSE_DONE)

    chunks = [json.loads(line[len("data: ") :]) for line in lines[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[-1] == {} and chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    expected = parse_response(response, template, prefix=prompt, tools=TOOLS)
    assert streamer.message == expected
    check_deltas(deltas[:-1], expected, template, events_mode=True)
    assert stream.warnings == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.text(
        st.characters(exclude_categories=("Cs",)) | st.sampled_from(['"', "\\", "\n", "\t", "é", "\u2028", "\x7f"]),
        max_size=40,
    ),
    ascii_only=st.booleans(),
    data=st.data(),
)
def test_string_argument_streams_whole_pieces_and_escapes_under_any_chunking(value, ascii_only, data) -> None:
    """While a string argument streams, a piece needing no JSON escaping is sent as it is (without re-entering
    the partial parser); quotes, backslashes, escapes cut between pieces, control and other non-printable
    characters take the general path. Any chunking: the fragments are the parsed arguments' JSON."""
    template = get_template("hermes3")
    body = json.dumps({"name": "write", "arguments": {"text": value, "n": 1}}, ensure_ascii=ascii_only)
    text = f"<tool_call>\n{body}\n</tool_call><|im_end|>"
    acc = check_text(template, CHATML, text, data.draw(chunkings(text)), tools=None)
    assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps({"text": value, "n": 1}, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner, max_size=70) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=80,
    )
)
def test_argument_fragments_are_encoded_as_json_dumps_writes_them(value) -> None:
    """The encoder of argument fragments (fast paths for strings, integers, short lists of them) is json.dumps."""
    from hf_response_templates.delta_state import _dumps

    assert _dumps(value) == json.dumps(value, ensure_ascii=False)
