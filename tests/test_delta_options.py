"""DeltaStream's serving options (issue 18): validated tool-call streaming, lone surrogates, the token limit
in events mode, coalescing, usage, choices, model call ids, and the non-streaming response builder."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _chat_render import TOOLS

from hf_response_templates import ResponseParser, parse_response
from hf_response_templates.library import get_template
from hf_response_templates.openai import DeltaStream, accumulate_deltas, chat_completion

CHATML = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
GRANITE = "<|start_of_role|>assistant<|end_of_role|>"
STRICT_TOOLS = copy.deepcopy(TOOLS)
for _tool in STRICT_TOOLS:
    _tool["function"]["strict"] = True


def _stream(template: Any, prefix: str, text: str, step: int = 1, **options: Any) -> tuple[DeltaStream, list]:
    ds = DeltaStream(template, prefix=prefix, tools=options.pop("tools", TOOLS), id_seed=0, **options)
    per_feed = []  # (the field still open after the feed, the deltas of the feed)
    for i in range(0, len(text), step):
        deltas = ds.feed(text[i : i + step])
        per_feed.append((ds.current_field, deltas))
    per_feed.append((None, ds.finish(options.get("finish"))))
    assert ds.warnings == []
    return ds, per_feed


def _flat(per_feed: list) -> list[dict]:
    return [d for _, deltas in per_feed for d in deltas]


# --------------------------------------------------------------------------- tool_call_streaming

HERMES_BAD_THEN_GOOD = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}} oops\n</tool_call>\n'
    '<tool_call>\n{"name": "search", "arguments": {"query": "ok"}}\n</tool_call><|im_end|>'
)


def test_validated_mode_sends_a_call_only_once_its_region_parsed() -> None:
    template = get_template("qwen3")
    ds, per_feed = _stream(template, CHATML, HERMES_BAD_THEN_GOOD, tool_call_streaming="validated")
    deltas = _flat(per_feed)
    acc = accumulate_deltas(deltas)
    [call] = acc["tool_calls"]  # the malformed one was never announced
    assert call["function"]["name"] == "search" and "error" not in call
    assert json.loads(call["function"]["arguments"]) == {"query": "ok"}
    calls = [d for d in deltas if "tool_calls" in d]
    assert len(calls) == 1, "name and arguments in one delta"
    assert calls[0]["tool_calls"][0]["function"]["arguments"] == '{"query": "ok"}'
    assert acc["unparsed"][0]["field"] == "tool_calls"
    assert not any("tool_calls" in d for field, ds_ in per_feed if field == "tool_calls" for d in ds_), (
        "nothing of a call is sent while its region is open"
    )
    # incremental (the default without strict tools) announces the bad call and flags it
    ds, per_feed = _stream(template, CHATML, HERMES_BAD_THEN_GOOD)
    assert ds.tool_call_streaming == "incremental"
    bad = accumulate_deltas(_flat(per_feed))["tool_calls"][0]
    assert bad["error"]["type"] == "malformed"


def test_strict_tools_make_validated_the_default() -> None:
    ds = DeltaStream(get_template("qwen3"), prefix=CHATML, tools=STRICT_TOOLS)
    assert ds.tool_call_streaming == "validated"
    ds = DeltaStream(get_template("qwen3"), prefix=CHATML, tools=(t for t in STRICT_TOOLS))  # read twice
    assert ds.tool_call_streaming == "validated"
    deltas = ds.feed('<tool_call>\n{"name": "get_weather", "arguments": {"days": "2"}}\n</tool_call>') + ds.finish()
    assert json.loads(accumulate_deltas(deltas)["tool_calls"][0]["function"]["arguments"]) == {"days": 2}
    ds = DeltaStream(
        get_template("qwen3"), prefix=CHATML, tools=STRICT_TOOLS, tool_call_streaming="incremental"
    )
    assert ds.tool_call_streaming == "incremental"
    with pytest.raises(ValueError, match="tool_call_streaming"):
        DeltaStream(get_template("qwen3"), prefix=CHATML, tool_call_streaming="eager")


GRANITE_LIST_BROKEN_LATE = (
    '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
    '{"name": "search", "arguments": {"query": "x"}} oops]<|end_of_text|>'
)


def test_list_formats_never_finish_call_i_before_the_list_parses_in_validated_mode() -> None:
    template = get_template("granite-3.3")
    expected = parse_response(GRANITE_LIST_BROKEN_LATE, template, prefix=GRANITE, tools=TOOLS, strict=False)
    assert "tool_calls" not in expected and expected["unparsed"]
    # incremental: call 0 is complete (and a client may have run it) before the list turns out broken
    ds, per_feed = _stream(template, GRANITE, GRANITE_LIST_BROKEN_LATE)
    early = [d for field, deltas in per_feed if field == "tool_calls" for d in deltas if "tool_calls" in d]
    assert early, "incremental mode streams the first call while the list is open"
    acc = accumulate_deltas(_flat(per_feed))
    assert all(c["error"]["type"] == "malformed" for c in acc["tool_calls"])
    # validated: nothing of any call until the list parsed, and here it never does
    for step in (1, 5, len(GRANITE_LIST_BROKEN_LATE)):
        ds, per_feed = _stream(
            template, GRANITE, GRANITE_LIST_BROKEN_LATE, step, tool_call_streaming="validated"
        )
        acc = accumulate_deltas(_flat(per_feed))
        assert "tool_calls" not in acc and acc["unparsed"][0]["field"] == "tool_calls"
    # the same through events (what serve feeds from its ResponseStreamer), one piece at a time
    for text, calls in ((GRANITE_LIST_BROKEN_LATE, 0), (GRANITE_LIST_BROKEN_LATE.replace(" oops", ""), 2)):
        parser = ResponseParser(template, GRANITE, tools=TOOLS, trace=True)
        ds = DeltaStream.for_events(template, tools=STRICT_TOOLS)
        assert ds.tool_call_streaming == "validated"
        deltas = ds.feed_events(parser.initial_events)
        for ch in text:
            if parser.current_field == "tool_calls":
                assert not [d for d in deltas if "tool_calls" in d]  # nothing while the list is open
            deltas += ds.feed_events(parser.feed(ch))
        deltas += ds.finish(events=parser.finalize()[1])
        acc = accumulate_deltas(deltas)
        assert len(acc.get("tool_calls", [])) == calls and all("error" not in c for c in acc.get("tool_calls", []))
        assert len(ds.tool_call_ids) == calls
    good = GRANITE_LIST_BROKEN_LATE.replace(" oops", "")
    ds, per_feed = _stream(template, GRANITE, good, tool_call_streaming="validated")
    assert not [d for field, deltas in per_feed if field == "tool_calls" for d in deltas]
    acc = accumulate_deltas(_flat(per_feed))
    assert [json.loads(c["function"]["arguments"]) for c in acc["tool_calls"]] == [
        {"city": "Paris"},
        {"query": "x"},
    ]


# --------------------------------------------------------------------------- small items


def test_lone_surrogates_are_sent_as_replacement_characters() -> None:
    text = '<tool_call>\n{"name": "search", "arguments": {"query": "a\\ud800b", "tags": ["\\udfff"]}}\n</tool_call>'
    for step in (1, 3, len(text)):
        ds, per_feed = _stream(get_template("qwen3"), CHATML, text, step)
        [call] = accumulate_deltas(_flat(per_feed))["tool_calls"]
        args = call["function"]["arguments"]
        args.encode("utf-8")  # what the OpenAI SDK's strict helper does; a lone surrogate raises here
        assert json.loads(args) == {"query": "a\ufffdb", "tags": ["\ufffd"]}
        assert "error" not in call
        assert (
            ds.message["tool_calls"][0]["function"]["arguments"]["query"] == "a\ud800b"
        )  # the message keeps it


def test_events_mode_a_call_cut_by_the_token_limit_is_typed_length() -> None:
    template = get_template("qwen3")
    for cut in ('{"name": "search", "arguments": {"query": "q"', '{"name": "search", "argu'):
        parser = ResponseParser(template, CHATML, tools=TOOLS)
        events = parser.feed("<tool_call>\n" + cut)
        _, final = parser.finalize()
        assert final[-1]["type"] == "region_malformed" and final[-1].get("at_end")
        ds = DeltaStream.for_events(template, tools=TOOLS)
        deltas = ds.feed_events(parser.initial_events + events) + ds.feed_events(final) + ds.finish("length")
        [call] = accumulate_deltas(deltas)["tool_calls"]
        assert call["error"]["type"] == "length" and not call["error"]["in_message"]
        assert accumulate_deltas(deltas)["unparsed"][0]["position"] == len("<tool_call>")
        # without the token limit, the same end is malformed
        ds = DeltaStream.for_events(template, tools=TOOLS)
        deltas = ds.feed_events(parser.initial_events + events) + ds.feed_events(final) + ds.finish()
        assert accumulate_deltas(deltas)["tool_calls"][0]["error"]["type"] == "malformed"


def test_unparsed_records_of_one_feed_are_coalesced() -> None:
    text = "<tool_call></tool_call>" * 5000 + "Done.<|im_end|>"
    expected = parse_response(text, get_template("qwen3"), prefix=CHATML, strict=False)
    assert len(expected["unparsed"]) == 5000
    ds = DeltaStream(get_template("qwen3"), prefix=CHATML)
    deltas = ds.feed(text) + ds.finish()
    with_records = [d for d in deltas if "unparsed" in d]
    assert len(with_records) == 1
    records = with_records[0]["unparsed"]
    assert [r["index"] for r in records] == list(range(5000))
    assert [{k: v for k, v in r.items() if k != "index"} for r in records] == expected["unparsed"]


# --------------------------------------------------------------------------- ids


def test_model_call_ids_are_kept_where_the_format_carries_them() -> None:
    kimi = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>'
        '{"query": "q"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>'
    )
    prefix = "<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>"
    mistral = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}</s>'
    for name, pre, text, ids in (
        ("kimi-k2", prefix, kimi, ["functions.get_weather:0", "functions.search:1"]),
        ("mistral-small-3.2", "[INST]Hi[/INST]", mistral, ["a1B2c3D4e"]),
    ):
        for step in (1, len(text)):
            _, per_feed = _stream(get_template(name), pre, text, step)
            assert [c["id"] for c in accumulate_deltas(_flat(per_feed))["tool_calls"]] == ids
        _, per_feed = _stream(get_template(name), pre, text, model_ids=False)
        assert all(c["id"].startswith("call_") for c in accumulate_deltas(_flat(per_feed))["tool_calls"])


def test_a_callers_parser_keeps_model_call_ids_too() -> None:
    # A `ResponseParser` made without trace=True, passed to DeltaStream: the stream switches it to tracing
    # delimiters (the ids are in their text), so its ids are those of a stream owning its parser
    kimi = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>'
    )
    mistral = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}</s>'
    for name, pre, text, ids in (
        ("kimi-k2", KIMI_PREFIX, kimi, ["functions.get_weather:0"]),
        ("mistral-small-3.2", "[INST]Hi[/INST]", mistral, ["a1B2c3D4e"]),
    ):
        for step in (1, 3, len(text)):
            parser = ResponseParser(get_template(name), pre)
            ds = DeltaStream(parser, id_seed=0)
            deltas = [d for i in range(0, len(text), step) for d in ds.feed(text[i : i + step])] + ds.finish()
            own = DeltaStream(get_template(name), prefix=pre, id_seed=0)
            own_deltas = [d for i in range(0, len(text), step) for d in own.feed(text[i : i + step])] + own.finish()
            assert [c["id"] for c in accumulate_deltas(deltas)["tool_calls"]] == ids
            assert deltas == own_deltas
        # model_ids=False: generated ids, and the caller's parser is left as it was made
        parser = ResponseParser(get_template(name), pre)
        ds = DeltaStream(parser, id_seed=0, model_ids=False)
        deltas = ds.feed(text) + ds.finish()
        assert all(c["id"].startswith("call_") for c in accumulate_deltas(deltas)["tool_calls"])
        assert not parser._trace


def test_a_repeated_model_id_is_replaced_to_keep_ids_unique() -> None:
    text = (
        '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}'
        '[TOOL_CALLS]search[CALL_ID]a1B2c3D4e[ARGS]{"query": "q"}</s>'
    )
    _, per_feed = _stream(get_template("mistral-small-3.2"), "[INST]Hi[/INST]", text)
    ids = [c["id"] for c in accumulate_deltas(_flat(per_feed))["tool_calls"]]
    assert ids[0] == "a1B2c3D4e" and ids[1].startswith("call_")


KIMI_PREFIX = "<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>"


def _kimi(*ids: str) -> str:
    calls = "".join(
        f'<|tool_call_begin|>{i}<|tool_call_argument_begin|>{{"city": "C{n}"}}<|tool_call_end|>'
        for n, i in enumerate(ids)
    )
    return f"<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|><|im_end|>"


def _events_ids(name: str, prefix: str, text: str, step: int, trace: bool, mode: str) -> tuple[list, list]:
    """Tool-call ids of a `for_events` stream fed by a parser (``trace`` as a ResponseStreamer's), and its
    `tool_call_ids` (the calls of the message, for `chat_completion`)."""
    parser = ResponseParser(get_template(name), prefix, tools=TOOLS, trace=trace)
    ds = DeltaStream.for_events(get_template(name), tools=TOOLS, id_seed=0, tool_call_streaming=mode)
    deltas = ds.feed_events(parser.initial_events)
    for i in range(0, len(text), step):
        deltas += ds.feed_events(parser.feed(text[i : i + step]))
    deltas += ds.finish(events=parser.finalize()[1])
    assert ds.warnings == []
    return [c["id"] for c in accumulate_deltas(deltas)["tool_calls"]], ds.tool_call_ids


@pytest.mark.parametrize("mode", ["incremental", "validated"])
def test_model_call_ids_in_events_mode_need_a_tracing_producer(mode: str) -> None:
    mistral = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}</s>'
    repeated = (
        '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}'
        '[TOOL_CALLS]search[CALL_ID]a1B2c3D4e[ARGS]{"query": "q"}</s>'
    )
    for name, prefix, text, want in (
        ("kimi-k2", KIMI_PREFIX, _kimi("functions.get_weather:0", "functions.get_weather:1"),
         ["functions.get_weather:0", "functions.get_weather:1"]),
        ("kimi-k2", KIMI_PREFIX, _kimi("functions.get_weather:0", "functions.get_weather:0"),
         ["functions.get_weather:0", None]),
        ("mistral-small-3.2", "[INST]Hi[/INST]", mistral, ["a1B2c3D4e"]),
        ("mistral-small-3.2", "[INST]Hi[/INST]", repeated, ["a1B2c3D4e", None]),
    ):
        for step in (1, 7, len(text)):
            ids, message_ids = _events_ids(name, prefix, text, step, True, mode)
            assert [i if w is not None else None for i, w in zip(ids, want, strict=True)] == want
            assert all(i.startswith("call_") for i, w in zip(ids, want, strict=True) if w is None)
            assert message_ids == ids
        untraced, _ = _events_ids(name, prefix, text, 1, False, mode)
        assert all(i.startswith("call_") for i in untraced)


def test_tool_call_ids_leave_out_the_calls_the_message_does_not_hold() -> None:
    # a malformed first call is streamed (incremental) and flagged; the message holds the second only
    text = (
        '[TOOL_CALLS]get_weather[CALL_ID]bad000001[ARGS]{"city": oops}'
        '[TOOL_CALLS]search[CALL_ID]good00002[ARGS]{"query": "q"}</s>'
    )
    message = parse_response(text, get_template("mistral-small-3.2"), prefix="[INST]Hi[/INST]", strict=False)
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["search"]
    ids, message_ids = _events_ids("mistral-small-3.2", "[INST]Hi[/INST]", text, 1, True, "incremental")
    assert ids == ["bad000001", "good00002"] and message_ids == ["good00002"]
    response = chat_completion(message, tool_call_ids=message_ids)
    assert [c["id"] for c in response["choices"][0]["message"]["tool_calls"]] == ["good00002"]


def test_chat_completion_takes_tool_call_ids_and_keeps_ids_unique() -> None:
    text = _kimi("functions.get_weather:0", "functions.get_weather:0")
    message = parse_response(text, get_template("kimi-k2-thinking"), prefix=KIMI_PREFIX)
    assert [c["id"] for c in message["tool_calls"]] == ["functions.get_weather:0"] * 2  # the model repeated it
    ids = [c["id"] for c in chat_completion(message, id_seed=0)["choices"][0]["message"]["tool_calls"]]
    assert ids[0] == "functions.get_weather:0" and ids[1].startswith("call_")
    given = chat_completion(message, tool_call_ids=["a", "b"])["choices"][0]["message"]["tool_calls"]
    assert [c["id"] for c in given] == ["a", "b"]
    short = chat_completion(message, tool_call_ids=["functions.get_weather:0"])["choices"][0]["message"]
    assert short["tool_calls"][0]["id"] == "functions.get_weather:0" and short["tool_calls"][1]["id"].startswith("call_")


# --------------------------------------------------------------------------- coalescing, usage, choices


def test_coalescing_by_characters_and_by_time() -> None:
    template = get_template("qwen3")
    text = "<think>\nreasoning here\n</think>\n\n" + "word " * 200 + "<|im_end|>"
    expected = parse_response(text, template, prefix=CHATML, strict=False)
    now = [0.0]
    ds = DeltaStream(template, prefix=CHATML, coalesce_chars=100, clock=lambda: now[0])
    released = []
    for ch in text:
        released.append(ds.feed(ch))
    released.append(ds.finish())
    deltas = [d for batch in released for d in batch]
    acc = accumulate_deltas(deltas)
    assert acc["content"] == expected["content"] and acc["reasoning_content"] == expected["reasoning_content"]
    sizes = [
        sum(len(v) for d in batch for v in d.values() if isinstance(v, str)) for batch in released if batch
    ]
    assert len(sizes) < 20 and all(s >= 100 for s in sizes[:-1]), sizes
    # time: held until 50 ms passed since the first held delta
    ds = DeltaStream(template, prefix=CHATML, coalesce_ms=50, clock=lambda: now[0])
    assert ds.feed("Hel") == [] and ds.feed("lo") == []
    now[0] += 0.06
    assert ds.feed("") == [{"role": "assistant"}, {"content": "Hello"}]
    assert ds.flush() == []


def test_usage_chunk_and_choice_index() -> None:
    ds = DeltaStream(
        get_template("qwen3"), prefix=CHATML, completion_id="chatcmpl-1", choice_index=1, model="m"
    )
    role, chunk = ds.feed_chunks("Hi")
    assert role["choices"][0]["delta"] == {"role": "assistant"}
    assert chunk["choices"][0]["index"] == 1 and chunk["id"] == "chatcmpl-1"
    usage = ds.usage_chunk(12, 3)
    assert usage["choices"] == [] and usage["usage"] == {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "total_tokens": 15,
    }
    assert usage["object"] == "chat.completion.chunk" and usage["model"] == "m"


# --------------------------------------------------------------------------- non-streaming


def test_chat_completion_from_a_parsed_message() -> None:
    template = get_template("qwen3")
    text = (
        "<think>\nLook it up.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call><|im_end|>'
    )
    message = parse_response(text, template, prefix=CHATML, tools=TOOLS)
    resp = chat_completion(message, model="m", usage=(10, 5), id_seed=1, created=7)
    assert resp["object"] == "chat.completion" and resp["created"] == 7 and resp["model"] == "m"
    [choice] = resp["choices"]
    msg = choice["message"]
    assert choice["finish_reason"] == "tool_calls" and msg["content"] is None
    assert msg["reasoning_content"] == "Look it up."
    [call] = msg["tool_calls"]
    assert (
        set(call) == {"id", "type", "function"} and call["id"].startswith("call_") and len(call["id"]) == 29
    )
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "days": 3}
    assert resp["usage"]["total_tokens"] == 15
    assert (
        chat_completion(message, id_seed=1, created=7)["choices"]
        == chat_completion(message, id_seed=1, created=7)["choices"]
    )
    plain = chat_completion({"role": "assistant", "content": "Hello"})
    assert plain["choices"][0]["message"] == {"role": "assistant", "content": "Hello"}
    assert plain["choices"][0]["finish_reason"] == "stop"
    # the message's own ids are kept
    with_id = {
        "role": "assistant",
        "tool_calls": [{"id": "abc", "type": "function", "function": {"name": "f", "arguments": {}}}],
    }
    assert chat_completion(with_id)["choices"][0]["message"]["tool_calls"][0]["id"] == "abc"


def test_arguments_become_valid_json_only_when_the_region_closes() -> None:
    text = '<tool_call>\n{"name": "search", "arguments": {"query": "q"}} oops\n</tool_call><|im_end|>'
    ds = DeltaStream(get_template("qwen3"), prefix=CHATML, tools=TOOLS)
    deltas: list = []
    for ch in text:
        deltas += ds.feed(ch)
        if ds.current_field == "tool_calls" and deltas:
            acc = accumulate_deltas(deltas)
            args = acc.get("tool_calls", [{}])[0].get("function", {}).get("arguments", "")
            with pytest.raises(json.JSONDecodeError):
                json.loads(args)  # a prefix, never complete JSON while the region is open
    deltas += ds.finish()
    [call] = accumulate_deltas(deltas)["tool_calls"]
    assert call["error"]["type"] == "malformed" and call["function"]["arguments"] == '{"query": "q"'


# --------------------------------------------------------------------------- validated mode, any chunking

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_openai_deltas import ALL_RAW, SETTINGS, chunkings  # noqa: E402


def _cut_variants(text: str) -> list[str]:
    """The text, and the text cut in its middle (a generation that stopped there)."""
    return [text, text[: len(text) // 2]]


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_validated_mode_streams_exactly_parse_responses_calls_for_any_chunking(data: st.DataObject) -> None:
    name, prefix, full = data.draw(st.sampled_from(ALL_RAW))
    text = data.draw(st.sampled_from(_cut_variants(full)))
    template = get_template(name)
    pieces = data.draw(chunkings(text))
    expected = parse_response(text, template, prefix=prefix, tools=STRICT_TOOLS, strict=False)
    ds = DeltaStream(template, prefix=prefix, tools=STRICT_TOOLS, id_seed=0)
    assert ds.tool_call_streaming == "validated"
    deltas = []
    for piece in pieces:
        deltas += ds.feed(piece)
    deltas += ds.finish()
    assert ds.warnings == [] and ds.message == expected
    acc = accumulate_deltas(deltas)
    calls = expected.get("tool_calls") or []
    got = acc.get("tool_calls", [])
    assert not any("error" in c for c in got), "validated mode never announces a call it takes back"
    assert len(got) == len(calls)
    for g, want in zip(got, calls, strict=True):
        fn = want["function"] if isinstance(want.get("function"), dict) else want
        assert g["function"]["name"] == fn["name"]
        assert json.loads(g["function"]["arguments"] or "{}") == fn.get("arguments", {})
    for d in deltas:  # a call comes whole: id, name and all of its arguments in one delta
        for entry in d.get("tool_calls", []):
            assert "id" in entry
    assert acc.get("content") == expected.get("content")


def test_anthropic_and_responses_tool_definitions_type_the_arguments() -> None:
    from hf_response_templates.anthropic import MessagesStream
    from hf_response_templates.responses import ResponsesStream

    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call><|im_end|>'
    ms = MessagesStream(
        get_template("qwen3"), prefix=CHATML, tools=[{"name": "get_weather", "input_schema": schema}]
    )
    events = ms.feed(text) + ms.finish()
    [start] = [e for e in events if e["type"] == "content_block_start"]
    assert start["content_block"]["type"] == "tool_use" and start["content_block"]["id"].startswith("toolu_")
    args = "".join(e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta")
    assert json.loads(args) == {"city": "Paris", "days": 3}
    assert events[-2]["delta"]["stop_reason"] == "tool_use" and events[-1] == {"type": "message_stop"}
    rs = ResponsesStream(
        get_template("qwen3"),
        prefix=CHATML,
        tools=[{"type": "function", "name": "get_weather", "parameters": schema}],
    )
    events = rs.feed(text) + rs.finish()
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    [done] = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert json.loads(done["arguments"]) == {"city": "Paris", "days": 3}
    assert (
        events[-1]["type"] == "response.completed"
        and events[-1]["response"]["output"][0]["type"] == "function_call"
    )
