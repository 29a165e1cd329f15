"""The official `openai` and `anthropic` Python clients consume our streams from a loopback server.

A stdlib HTTP server on 127.0.0.1 (a random free port) replays a fixed generation text through
`DeltaStream` (Chat Completions, streamed or not, ``n`` choices, usage), `MessagesStream` (Anthropic
Messages) or `ResponsesStream` (OpenAI Responses), cut into the pieces the test chose. Each client's own
accumulator must rebuild the message `parse_response` gives for the same text: over every shipped template
with a tool call (and a few without), one-character, random and whole-text chunkings, normal outputs,
outputs cut inside a tool call and malformed ones (JSON lists broken after a complete call, a bad call before
a good one), strict and non-strict tools, coalesced deltas; tool-call ids are unique and the model's own
where it wrote them (streamed and not). Also: lone surrogates through the SDK's strict helper, and the order
of blocks when text and calls interleave. No model and no network beyond 127.0.0.1.
"""

from __future__ import annotations

import copy
import json
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from _chat_render import TOOLS  # noqa: E402
from test_openai_deltas import ALL_RAW  # noqa: E402

from hf_response_templates import parse_response  # noqa: E402
from hf_response_templates.anthropic import MessagesStream  # noqa: E402
from hf_response_templates.anthropic import sse_event as anthropic_sse  # noqa: E402
from hf_response_templates.delta_state import _MODEL_ID_PATTERNS  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402
from hf_response_templates.openai import SSE_DONE, DeltaStream, chat_completion, sse  # noqa: E402
from hf_response_templates.responses import ResponsesStream  # noqa: E402
from hf_response_templates.responses import sse_event as responses_sse  # noqa: E402

STRICT_TOOLS = copy.deepcopy(TOOLS)
for _tool in STRICT_TOOLS:
    _tool["function"]["strict"] = True


class Scenario:
    """What the server replays for the next request (``options``: more `DeltaStream` options, e.g. coalescing)."""

    def __init__(
        self, name: str, prefix: str, text: str, pieces: list[str], tools: Any, mode: str | None, **options: Any
    ):
        self.template = get_template(name)
        self.prefix, self.text, self.pieces, self.tools, self.mode = prefix, text, pieces, tools, mode
        self.options = options


class _Handler(BaseHTTPRequestHandler):
    scenario: Scenario

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        sc = self.server.scenario  # type: ignore[attr-defined]
        if self.path.endswith("/chat/completions") and not body.get("stream"):
            message = parse_response(sc.text, sc.template, prefix=sc.prefix, tools=sc.tools, strict=False)
            # the ids a stream over the same text sends (the model's own where the format writes them)
            ds = DeltaStream(sc.template, prefix=sc.prefix, tools=sc.tools, completion_id="chatcmpl-test", id_seed=0)
            for piece in sc.pieces:
                ds.feed(piece)
            ds.finish()
            response = chat_completion(message, model=body["model"], usage=(3, 5), tool_call_ids=ds.tool_call_ids)
            data = json.dumps(response).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for line in self._lines(body, sc):
            self.wfile.write(line.encode("utf-8"))
        self.wfile.flush()

    def _lines(self, body: dict, sc: Scenario) -> Iterator[str]:
        options = {"tool_call_streaming": sc.mode, **sc.options} if sc.mode else dict(sc.options)
        if self.path.endswith("/chat/completions"):
            n = body.get("n") or 1
            streams = [
                DeltaStream(
                    sc.template,
                    prefix=sc.prefix,
                    tools=sc.tools,
                    model=body["model"],
                    completion_id="chatcmpl-test",
                    choice_index=i,
                    id_seed=i,
                    **options,
                )
                for i in range(n)
            ]
            for piece in sc.pieces:  # choices interleaved, as a server batching n generations would send
                for ds in streams:
                    for chunk in ds.feed_chunks(piece):
                        yield sse(chunk)
            for ds in streams:
                for chunk in ds.finish_chunks():
                    yield sse(chunk)
            if (body.get("stream_options") or {}).get("include_usage"):
                yield sse(streams[0].usage_chunk(3, 5))
            yield SSE_DONE
        elif self.path.endswith("/messages"):
            ms = MessagesStream(
                sc.template, prefix=sc.prefix, tools=sc.tools, model=body["model"], id_seed=0, **options
            )
            for piece in sc.pieces:
                for event in ms.feed(piece):
                    yield anthropic_sse(event)
            for event in ms.finish(output_tokens=5):
                yield anthropic_sse(event)
        elif self.path.endswith("/responses"):
            rs = ResponsesStream(
                sc.template, prefix=sc.prefix, tools=sc.tools, model=body["model"], id_seed=0, **options
            )
            for piece in sc.pieces:
                for event in rs.feed(piece):
                    yield responses_sse(event)
            for event in rs.finish(usage=(3, 5)):
                yield responses_sse(event)


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _clients(httpd: ThreadingHTTPServer) -> tuple[Any, Any]:
    port = httpd.server_address[1]
    oa = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="test", max_retries=0, timeout=20)
    an = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="test", max_retries=0, timeout=20)
    return oa, an


# --------------------------------------------------------------------------- what each client must rebuild


def _expected(sc: Scenario) -> dict:
    message = parse_response(sc.text, sc.template, prefix=sc.prefix, tools=sc.tools, strict=False)
    calls = []
    for call in message.get("tool_calls") or []:
        fn = call["function"] if isinstance(call.get("function"), dict) else call
        calls.append((fn.get("name"), fn.get("arguments", {})))
    reasoning = next(
        (message[k] for k in ("reasoning_content", "reasoning", "thinking") if k in message), None
    )
    return {"content": message.get("content") or None, "reasoning": reasoning or None, "calls": calls}


def _good_calls(calls: list[tuple[str, str, Any]]) -> list[tuple[str, Any]]:
    return [
        (name, json.loads(args) if args else {})
        for name, args, error in calls
        if not error or error.get("in_message")
    ]


def _check_ids(sc: Scenario, ids: list[str]) -> None:
    """Unique; each ``call_`` + 24 characters or an id the model wrote: in an open delimiter (Mistral
    ``[CALL_ID]...``, Kimi K2 ``functions.NAME:IDX``: in the order it wrote them, and used where it wrote
    them) or read by the template (Kimi K2 Thinking's ``{id}`` capture)."""
    assert len(set(ids)) == len(ids), ids
    written = [m.group("id") for p in _MODEL_ID_PATTERNS for m in p.finditer(sc.text)]
    unique = [i for n, i in enumerate(written) if i not in written[:n]]
    kept = [i for i in ids if not (i.startswith("call_") and len(i) == 29)]
    assert all(i in sc.text for i in kept), (ids, written)
    order = [unique.index(i) for i in kept if i in unique]
    assert order == sorted(order), (ids, written)
    if written and ids:
        assert order, (ids, written)


def check_openai_chat(oa: Any, sc: Scenario, want: dict) -> None:
    kwargs = dict(model="m", messages=[{"role": "user", "content": "hi"}])
    if sc.tools:
        kwargs["tools"] = sc.tools
    with oa.chat.completions.stream(**kwargs) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    msg = final.choices[0].message
    extra = msg.model_extra or {}
    assert (msg.content or None) == want["content"]
    assert (extra.get("reasoning_content") or None) == want["reasoning"]
    calls = [
        (c.function.name, c.function.arguments, (c.model_extra or {}).get("error"))
        for c in msg.tool_calls or []
    ]
    assert _good_calls(calls) == want["calls"]
    _check_ids(sc, [c.id for c in msg.tool_calls or []])
    strict_names = {t["function"]["name"] for t in sc.tools or [] if t["function"].get("strict")}
    for c in msg.tool_calls or []:
        if c.function.name in strict_names:  # the SDK parses the calls of the request's strict tools only
            assert c.function.parsed_arguments == json.loads(c.function.arguments)


def check_openai_choices_usage_and_plain(oa: Any, sc: Scenario, want: dict) -> None:
    kwargs = dict(model="m", messages=[{"role": "user", "content": "hi"}])
    if sc.tools:
        kwargs["tools"] = sc.tools
    # n = 2 choices and the usage chunk, through the raw stream
    raw = oa.chat.completions.create(**kwargs, stream=True, n=2, stream_options={"include_usage": True})
    acc: dict[int, dict] = {}
    usage = None
    for chunk in raw:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            d = acc.setdefault(choice.index, {"content": "", "reasoning": "", "finish": None, "ids": {}})
            d["content"] += choice.delta.content or ""
            d["reasoning"] += (choice.delta.model_extra or {}).get("reasoning_content") or ""
            d["finish"] = choice.finish_reason or d["finish"]
            for tc in choice.delta.tool_calls or []:
                if tc.id:
                    d["ids"][tc.index] = tc.id
    assert sorted(acc) == [0, 1] and usage is not None and usage.total_tokens == 8
    for d in acc.values():
        assert (d["content"] or None) == want["content"] and (d["reasoning"] or None) == want["reasoning"]
        assert d["finish"] in ("stop", "tool_calls")
    # not streamed: the response builder
    plain = oa.chat.completions.create(**kwargs)
    pm = plain.choices[0].message
    assert (pm.content or None) == want["content"]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in pm.tool_calls or []] == want["calls"]
    # the ids of the calls in the message are the stream's (same seed), the model's own included
    streamed = acc[0]["ids"]
    kept = [streamed[i] for i in sorted(streamed)]
    assert [c.id for c in pm.tool_calls or []] == [i for i in kept if i in {c.id for c in pm.tool_calls or []}]
    _check_ids(sc, [c.id for c in pm.tool_calls or []])


def check_anthropic(an: Any, sc: Scenario, want: dict) -> None:
    kwargs = dict(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    with an.messages.stream(**kwargs) as stream:
        for _ in stream:
            pass
        msg = stream.get_final_message()
    kinds = [b.type for b in msg.content]
    text = "".join(b.text for b in msg.content if b.type == "text")
    thinking = "".join(b.thinking for b in msg.content if b.type == "thinking")
    assert (text or None) == want["content"], kinds
    assert (thinking or None) == want["reasoning"]
    got = [(b.name, b.input) for b in msg.content if b.type == "tool_use"]
    if sc.mode != "incremental":
        assert got == want["calls"]
    assert msg.stop_reason == ("tool_use" if want["calls"] else "end_turn")


def check_responses(oa: Any, sc: Scenario, want: dict) -> None:
    kwargs = dict(model="m", input="hi")
    snapshots: dict[int, str] = {}
    with oa.responses.stream(**kwargs) as stream:
        for event in stream:
            if event.type in ("response.output_text.delta", "response.function_call_arguments.delta"):
                snapshots[event.output_index] = event.snapshot  # the client's own accumulation
        final = stream.get_final_response()
    text, reasoning, calls = "", "", []
    for i, item in enumerate(final.output):
        if item.type == "message":
            item_text = "".join(part.text for part in item.content)
            assert snapshots.get(i, "") == item_text
            text += item_text
        elif item.type == "reasoning":
            reasoning += "".join(part.text for part in item.content or [])
        elif item.type == "function_call":
            assert snapshots.get(i, "") == item.arguments
            calls.append((item.call_id, item.name, item.arguments))
    assert (text or None) == want["content"]
    assert (reasoning or None) == want["reasoning"]
    # calls flagged in the extension (incremental mode: announced, then found broken) are not in the message
    errors = {e["id"]: e for e in (final.model_extra or {}).get("tool_call_errors") or []}
    assert _good_calls([(name, args, errors.get(cid)) for cid, name, args in calls]) == want["calls"]


# --------------------------------------------------------------------------- scenarios


def _chunkings(text: str, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    rand, i = [], 0
    while i < len(text):
        k = rng.randint(1, 9)
        rand.append(text[i : i + k])
        i += k
    return {"chars": list(text), "random": rand, "whole": [text]}


def _cut_inside_a_call(name: str, prefix: str, text: str) -> str | None:
    """The text cut in the middle of its first tool call (a generation that stopped there)."""
    message = parse_response(text, get_template(name), prefix=prefix, strict=False)
    if not message.get("tool_calls"):
        return None
    for marker in ('"arguments"', '"parameters"', "<parameter=", "{", "("):
        k = text.find(marker)
        if k > 0:
            return text[: k + len(marker) + 3]
    return None


CASES: list[tuple[str, str, str, str]] = []
for _n, (_name, _prefix, _text) in enumerate(ALL_RAW):
    CASES.append((f"{_n}-{_name}", _name, _prefix, _text))
    _cut = _cut_inside_a_call(_name, _prefix, _text)
    if _cut is not None:
        CASES.append((f"{_n}-{_name}-cut", _name, _prefix, _cut))
HERMES_BAD = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}} oops\n</tool_call>\n'
    '<tool_call>\n{"name": "search", "arguments": {"query": "ok"}}\n</tool_call><|im_end|>'
)
CASES.append(
    ("hermes-malformed", "qwen3", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", HERMES_BAD)
)
# Formats with every call in one JSON list (Granite, Command R7B): the list turns out broken after its first
# call is complete, so the strict `stream()` helper must never see that call (validated), nor JSONDecodeError
for _name in ("granite-3.3", "cohere-command-r7b"):
    _prefix, _text = next((p, t) for n, p, t in ALL_RAW if n == _name and "]" in t)
    _end = _text.rindex("]")
    CASES.append((f"{_name}-list-broken-late", _name, _prefix, _text[:_end] + " oops" + _text[_end:]))
# Formats that write call ids: a malformed first call, then a good one whose id must be kept
CASES.append((
    "mistral-malformed-then-good", "mistral-small-3.2", "[INST]Hi[/INST]",
    '[TOOL_CALLS]get_weather[CALL_ID]bad000001[ARGS]{"city": oops}'
    '[TOOL_CALLS]search[CALL_ID]good00002[ARGS]{"query": "q"}</s>',
))
CASES.append((
    "kimi-malformed-then-good", "kimi-k2", "<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>",
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": oops}<|tool_call_end|><|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>'
    '{"query": "q"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
))


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_official_clients_rebuild_the_parsed_message(server: ThreadingHTTPServer, case: str) -> None:
    _, name, prefix, text = next(c for c in CASES if c[0] == case)
    oa, an = _clients(server)
    for chunking, pieces in _chunkings(text, len(text)).items():
        # strict tools: every API (validated tool calls by default); non-strict: incremental Chat Completions
        every = (check_openai_chat, check_anthropic, check_responses)
        runs: list[tuple[Any, str | None, tuple, dict]] = [(STRICT_TOOLS, None, every, {})]
        runs.append((TOOLS, None, (check_openai_chat,), {}))
        if chunking == "random":
            runs.append((TOOLS, "incremental", (check_anthropic, check_responses), {}))
            runs.append((STRICT_TOOLS, None, (check_openai_choices_usage_and_plain,), {}))
        if chunking == "chars":  # coalescing: one-character pieces released in deltas of >= 16 characters
            runs.append((TOOLS, "incremental", (check_openai_chat, check_anthropic), {"coalesce_chars": 16}))
        for tools, mode, checks, options in runs:
            sc = Scenario(name, prefix, text, pieces, tools, mode, **options)
            server.scenario = sc  # type: ignore[attr-defined]
            want = _expected(sc)
            for check in checks:
                try:
                    check(an if check is check_anthropic else oa, sc, want)
                except AssertionError as e:
                    where = f"{case} {chunking} strict={tools is STRICT_TOOLS} mode={mode} {options} {check.__name__}"
                    raise AssertionError(f"{where}: {e}") from e


def test_lone_surrogates_reach_the_strict_helper_as_replacement_characters(server: ThreadingHTTPServer) -> None:
    # a JSON body's "\ud800" decodes to a lone surrogate; sent as is, the SDK's strict helper raises
    # UnicodeEncodeError inside the user's loop: the stream sends U+FFFD instead, in either mode
    text = (
        '<tool_call>\n{"name": "search", "arguments": {"query": "a\\ud800b", "tags": ["\\udfff"]}}\n'
        "</tool_call><|im_end|>"
    )
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    oa, an = _clients(server)
    for mode in (None, "incremental"):
        for pieces in (list(text), [text]):
            server.scenario = Scenario("qwen3", prefix, text, pieces, STRICT_TOOLS, mode)  # type: ignore[attr-defined]
            kwargs = dict(model="m", messages=[{"role": "user", "content": "hi"}], tools=STRICT_TOOLS)
            with oa.chat.completions.stream(**kwargs) as stream:
                for _ in stream:
                    pass
                [call] = stream.get_final_completion().choices[0].message.tool_calls
            assert call.function.parsed_arguments == {"query": "a\ufffdb", "tags": ["\ufffd"]}
            with an.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
                for _ in s:
                    pass
                [block] = [b for b in s.get_final_message().content if b.type == "tool_use"]
            assert block.input == {"query": "a\ufffdb", "tags": ["\ufffd"]}


def test_blocks_keep_the_order_in_which_the_model_interleaves_text_and_calls(server: ThreadingHTTPServer) -> None:
    # reasoning, text, a call, more text, another call: Anthropic content blocks and Responses output items
    # come in that order (not grouped by kind), under any chunking and either tool-call mode
    text = (
        "<think>\nTwo lookups.\n</think>\n\nFirst the weather.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        "Then the search.\n"
        '<tool_call>\n{"name": "search", "arguments": {"query": "Louvre"}}\n</tool_call><|im_end|>'
    )
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    oa, an = _clients(server)
    for mode in (None, "incremental"):
        for pieces in _chunkings(text, 3).values():
            server.scenario = Scenario("qwen3", prefix, text, pieces, TOOLS, mode)  # type: ignore[attr-defined]
            want = _expected(server.scenario)  # type: ignore[attr-defined]
            with an.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
                for _ in s:
                    pass
                msg = s.get_final_message()
            assert [b.type for b in msg.content] == ["thinking", "text", "tool_use", "text", "tool_use"]
            assert [b.text.strip() for b in msg.content if b.type == "text"] == ["First the weather.", "Then the search."]
            assert [(b.name, b.input) for b in msg.content if b.type == "tool_use"] == want["calls"]
            with oa.responses.stream(model="m", input="hi") as rs:
                for _ in rs:
                    pass
                response = rs.get_final_response()
            kinds = [item.type for item in response.output]
            assert kinds == ["reasoning", "message", "function_call", "message", "function_call"]
            assert [(i.name, json.loads(i.arguments)) for i in response.output if i.type == "function_call"] == want[
                "calls"
            ]
