"""`hf-response-templates serve`: the ASGI server on uvicorn, a tiny local model, the official clients.

A 1-layer Llama and a byte-level BPE tokenizer (built here, nothing downloaded) are saved with
`save_pretrained` together with Qwen3's chat template and the shipped ``qwen3`` response template, loaded back
the way the command loads a folder, and served on 127.0.0.1 (a free port, uvicorn in a thread, bounded waits,
always shut down). A logits processor (the app factory's test hook) forces the model to write a known answer
with reasoning, text and a tool call; the official `openai` client (Chat Completions streamed and not, ``n``
and usage, Responses streamed and not) and `anthropic` client (Messages streamed and not) must each rebuild
the message `parse_response` gives for that text. The saved weights themselves write a tool call (a bigram
model), which the ``serve`` command, run as a user runs it, must answer with. A second tiny model with Mistral
Small 3.2's chat template writes ``[CALL_ID]`` ids, which every client must get. Also: 400s that name the
field, ``/v1/models``, the token limit inside a tool call, and a client that disconnects mid-stream does not
hang the worker.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
uvicorn = pytest.importorskip("uvicorn")
torch = pytest.importorskip("torch")

from _chat_render import chat_template  # noqa: E402
from _tiny_model import ScriptedLogitsProcessor  # noqa: E402
from _tokenizers import byte_level_tokenizer  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

import hf_response_templates  # noqa: E402
from hf_response_templates import parse_response  # noqa: E402
from hf_response_templates.cli import main  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402
from hf_response_templates.serve import create_app, load_model, load_tokenizer  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
ANTHROPIC_TOOLS = [
    {"name": t["function"]["name"], "description": t["function"]["description"],
     "input_schema": t["function"]["parameters"]}
    for t in TOOLS
]
RESPONSES_TOOLS = [{"type": "function", **t["function"]} for t in TOOLS]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
ANSWER = (
    "<think>\nThe user wants the weather. I should call get_weather.\n</think>\n\n"
    "Let me check the weather for you.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call><|im_end|>'
)


class Script:
    """What the served model writes next: the test hook given to `create_app(logits_processor=...)`."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.text = ANSWER
        self.steps = 0  # decoding steps run, over all generations
        self.delay = 0.0  # seconds per step (a slow model)
        self.fail_at: int | None = None  # the decoding step at which the model raises

    def __call__(self, input_ids: Any) -> Any:
        ids = self.tokenizer.encode(self.text, add_special_tokens=False)
        processor = ScriptedLogitsProcessor([ids], input_ids.shape[1], self.tokenizer.eos_token_id)

        def counted(ids_so_far: Any, scores: Any) -> Any:
            self.steps += 1
            if self.fail_at is not None and ids_so_far.shape[1] - input_ids.shape[1] >= self.fail_at:
                raise RuntimeError("the model broke")
            if self.delay:
                time.sleep(self.delay)
            return processor(ids_so_far, scores)

        return counted


class Served:
    def __init__(self, base_url: str, script: Script, tokenizer: Any, template: str = "qwen3") -> None:
        self.base_url, self.script, self.tokenizer, self.template = base_url, script, tokenizer, template
        self.port = int(base_url.rsplit(":", 1)[1])

    def expected(self, tools: Any = TOOLS) -> dict:
        prompt = self.tokenizer.apply_chat_template(MESSAGES, tools=tools, add_generation_prompt=True, tokenize=False)
        return parse_response(self.script.text, get_template(self.template), prefix=prompt, tools=tools, strict=False)

    def openai(self) -> Any:
        return openai.OpenAI(base_url=self.base_url + "/v1", api_key="unused", max_retries=0, timeout=30)

    def anthropic(self) -> Any:
        return anthropic.Anthropic(base_url=self.base_url, api_key="unused", max_retries=0, timeout=30)


def _tiny_llama(tok: Any, tied: bool = True) -> Any:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=1024, tie_word_embeddings=tied,
        pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=None,
    )
    return LlamaForCausalLM(config)


#: What the saved model writes, as one added token, when the command serves it (no logits processor there)
COMMAND_CALL = '{"name": "get_weather", "arguments": {"city": "Rome"}}'


def _write_by_bigrams(model: Any, chain: list[int]) -> None:
    """Make greedy decoding follow ``chain``: the layer adds nothing to the residual stream (its output
    projections are zero), so the logits depend on the current token only, and token ``chain[k]`` is
    embedded as the k-th unit vector, which the output head maps to ``chain[k + 1]``."""
    assert len(set(chain[:-1])) == len(chain) - 1 <= model.config.hidden_size, chain
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.model.embed_tokens.weight.zero_()
        model.lm_head.weight.zero_()
        for k, (token, following) in enumerate(zip(chain[:-1], chain[1:], strict=True)):
            model.model.embed_tokens.weight[token, k] = 1.0
            model.lm_head.weight[following, k] = 1.0


def _save_tiny_model(folder: Any) -> None:
    tok = byte_level_tokenizer()
    tok.add_tokens([COMMAND_CALL])
    tok.chat_template = chat_template("Qwen-Qwen3-0.6B.jinja")
    tok.response_template = get_template("qwen3")
    tok.save_pretrained(folder)
    model = _tiny_llama(tok, tied=False)
    prompt = tok.apply_chat_template(MESSAGES, tools=TOOLS, add_generation_prompt=True, tokenize=True, return_dict=True)
    answer = tok.encode(f"<tool_call>{COMMAND_CALL}</tool_call>", add_special_tokens=False)
    assert len(answer) == 3
    _write_by_bigrams(model, [prompt["input_ids"][-1], *answer, tok.eos_token_id])
    model.save_pretrained(folder)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tiny-model")
    _save_tiny_model(path)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def command(folder: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """``hf-response-templates serve FOLDER --port P`` in a subprocess, started before the other tests so that
    its start-up (imports, loading) overlaps them; stopped at the end of the module."""
    port = _free_port()
    root = str(Path(hf_response_templates.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-m", "hf_response_templates", "serve", str(folder), "--port", str(port),
            "--max-new-tokens", "8", "--log-level", "warning"]
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        yield process, port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextlib.contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` on uvicorn on 127.0.0.1 (a free port) in a thread; yields its base URL; always shut down."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: threads only add overhead (8x on a loaded 2-core machine)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        torch.set_num_threads(threads)
        assert not thread.is_alive(), "the server did not shut down"


@pytest.fixture(scope="module")
def served(folder: Path, command: Any) -> Iterator[Served]:
    tokenizer = load_tokenizer(folder)  # what `serve` does: the saved response_template comes back
    assert tokenizer.response_template == get_template("qwen3")
    model = load_model(folder, dtype="float32")
    script = Script(tokenizer)
    app = create_app(model, tokenizer, model_name="tiny", max_new_tokens=1000, logits_processor=script)
    with _serving(app) as base_url:
        yield Served(base_url, script, tokenizer)


@pytest.fixture(autouse=True)
def _default_answer(served: Served) -> Iterator[None]:
    served.script.text, served.script.delay, served.script.fail_at = ANSWER, 0.0, None
    yield
    served.script.text, served.script.delay, served.script.fail_at = ANSWER, 0.0, None


def _calls(message: dict) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]


# ---------------------------------------------------------------------------- OpenAI Chat Completions


def test_chat_completions_streamed_rebuild_the_parsed_message(served: Served) -> None:
    want = served.expected()
    assert want["tool_calls"] and want["reasoning_content"] and want["content"]  # the case covers all three
    with served.openai().chat.completions.stream(model="tiny", messages=MESSAGES, tools=TOOLS) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    choice = final.choices[0]
    msg = choice.message
    assert msg.content == want["content"]
    assert (msg.model_extra or {}).get("reasoning_content") == want["reasoning_content"]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == _calls(want)
    assert all(c.id.startswith("call_") for c in msg.tool_calls)
    assert choice.finish_reason == "tool_calls"


def test_chat_completions_strict_tools_are_validated(served: Served) -> None:
    strict = [{"type": "function", "function": {**TOOLS[0]["function"], "strict": True}}]
    with served.openai().chat.completions.stream(model="tiny", messages=MESSAGES, tools=strict) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    assert call.function.parsed_arguments == {"city": "Paris", "days": 3}  # the SDK parsed the strict call
    # validated: the whole call arrives at once, so the SDK reports its arguments done right after they start
    assert kinds.count("tool_calls.function.arguments.delta") == 1


def test_chat_completions_plain_choices_and_usage(served: Served) -> None:
    want = served.expected()
    client = served.openai()
    plain = client.chat.completions.create(model="tiny", messages=MESSAGES, tools=TOOLS)
    msg = plain.choices[0].message
    assert msg.content == want["content"]
    assert (msg.model_extra or {}).get("reasoning_content") == want["reasoning_content"]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == _calls(want)
    assert plain.choices[0].finish_reason == "tool_calls" and plain.model == "tiny"
    n_answer = len(served.tokenizer.encode(ANSWER, add_special_tokens=False))
    assert plain.usage.completion_tokens == n_answer and plain.usage.prompt_tokens > 50

    raw = client.chat.completions.create(
        model="tiny", messages=MESSAGES, tools=TOOLS, stream=True, n=2, stream_options={"include_usage": True}
    )
    acc: dict[int, dict] = {}
    usage = None
    for chunk in raw:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            d = acc.setdefault(choice.index, {"content": "", "finish": None, "calls": 0})
            d["content"] += choice.delta.content or ""
            d["calls"] += len([c for c in choice.delta.tool_calls or [] if c.id])
            d["finish"] = choice.finish_reason or d["finish"]
    assert sorted(acc) == [0, 1]
    assert all(d == {"content": want["content"], "finish": "tool_calls", "calls": 1} for d in acc.values())
    assert usage is not None and usage.completion_tokens == 2 * n_answer
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_the_token_limit_inside_a_tool_call_is_length(served: Served) -> None:
    client = served.openai()
    inside = len(served.tokenizer.encode(ANSWER[: ANSWER.index('"Paris"') + 3], add_special_tokens=False))
    chunks = list(client.chat.completions.create(model="tiny", messages=MESSAGES, tools=TOOLS, stream=True,
                                                 max_tokens=inside))
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["length"]
    errors = [
        (tc.model_extra or {}).get("error", {}).get("type")
        for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []
    ]
    assert "length" in errors and "malformed" not in errors


# ---------------------------------------------------------------------------- OpenAI Responses


def test_responses_streamed_and_plain_rebuild_the_parsed_message(served: Served) -> None:
    want = served.expected(RESPONSES_TOOLS)
    client = served.openai()
    with client.responses.stream(model="tiny", input="What is the weather in Paris?", tools=RESPONSES_TOOLS) as s:
        for _ in s:
            pass
        final = s.get_final_response()
    plain = client.responses.create(model="tiny", input="What is the weather in Paris?", tools=RESPONSES_TOOLS)
    for response in (final, plain):
        kinds = [item.type for item in response.output]
        assert kinds == ["reasoning", "message", "function_call"]
        reasoning, message, call = response.output
        assert "".join(p.text for p in reasoning.content) == want["reasoning_content"]
        assert "".join(p.text for p in message.content) == want["content"]
        assert [(call.name, json.loads(call.arguments))] == _calls(want)
        assert response.status == "completed" and response.usage.output_tokens > 0


# ---------------------------------------------------------------------------- Anthropic Messages


def test_anthropic_messages_streamed_and_plain_rebuild_the_parsed_message(served: Served) -> None:
    want = served.expected(ANTHROPIC_TOOLS)
    client = served.anthropic()
    kwargs = dict(model="tiny", max_tokens=200, messages=MESSAGES, tools=ANTHROPIC_TOOLS)
    with client.messages.stream(**kwargs) as stream:
        for _ in stream:
            pass
        streamed = stream.get_final_message()
    plain = client.messages.create(**kwargs)
    for msg in (streamed, plain):
        assert [b.type for b in msg.content] == ["thinking", "text", "tool_use"]
        assert msg.content[0].thinking == want["reasoning_content"]
        assert msg.content[1].text == want["content"]
        assert [(msg.content[2].name, msg.content[2].input)] == _calls(want)
        assert msg.stop_reason == "tool_use" and msg.usage.input_tokens > 50


# ---------------------------------------------------------------------------- tool-call ids the model writes

MISTRAL_SPECIALS = [
    "[TOOL_CALLS]", "[CALL_ID]", "[ARGS]", "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]",
]
MISTRAL_ANSWER = 'Let me check.[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{"city": "Paris", "days": 3}</s>'
#: the model writes one id twice: the second call gets a generated one (ids are unique per response)
MISTRAL_REPEATED = (
    '[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{"city": "Paris"}'
    '[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{"city": "Rome"}</s>'
)


@pytest.fixture(scope="module")
def mistral() -> Iterator[Served]:
    """A tiny model with Mistral Small 3.2's chat template and tokens, which writes ``[CALL_ID]`` ids."""
    tok = byte_level_tokenizer(eos_token="</s>")
    tok.add_tokens(MISTRAL_SPECIALS, special_tokens=True)
    tok.chat_template = chat_template("Mistral-Small-3.2-24B-Instruct-2506.jinja")
    tok.response_template = get_template("mistral-small-3.2")
    script = Script(tok)
    app = create_app(_tiny_llama(tok).eval(), tok, model_name="tiny", max_new_tokens=200, logits_processor=script)
    with _serving(app) as base_url:
        yield Served(base_url, script, tok, "mistral-small-3.2")


def _mistral_ids(mistral: Served, text: str) -> dict[str, list[str]]:
    """The tool-call ids each official client gets from the served Mistral model for ``text``, per API."""
    mistral.script.text = text
    want = mistral.expected()
    oa, an = mistral.openai(), mistral.anthropic()
    ids: dict[str, list[str]] = {}
    with oa.chat.completions.stream(model="tiny", messages=MESSAGES, tools=TOOLS) as stream:
        for _ in stream:
            pass
        msg = stream.get_final_completion().choices[0].message
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == _calls(want)
    ids["chat streamed"] = [c.id for c in msg.tool_calls]
    msg = oa.chat.completions.create(model="tiny", messages=MESSAGES, tools=TOOLS).choices[0].message
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == _calls(want)
    ids["chat plain"] = [c.id for c in msg.tool_calls]
    for kind in ("streamed", "plain"):
        if kind == "streamed":
            with oa.responses.stream(model="tiny", input=MESSAGES[0]["content"], tools=RESPONSES_TOOLS) as s:
                for _ in s:
                    pass
                response = s.get_final_response()
        else:
            response = oa.responses.create(model="tiny", input=MESSAGES[0]["content"], tools=RESPONSES_TOOLS)
        calls = [item for item in response.output if item.type == "function_call"]
        assert [(c.name, json.loads(c.arguments)) for c in calls] == _calls(want)
        ids["responses " + kind] = [c.call_id for c in calls]
        kwargs = dict(model="tiny", max_tokens=200, messages=MESSAGES, tools=ANTHROPIC_TOOLS)
        if kind == "streamed":
            with an.messages.stream(**kwargs) as stream:
                for _ in stream:
                    pass
                message = stream.get_final_message()
        else:
            message = an.messages.create(**kwargs)
        blocks = [b for b in message.content if b.type == "tool_use"]
        assert [(b.name, b.input) for b in blocks] == _calls(want)
        ids["messages " + kind] = [b.id for b in blocks]
    return ids


def test_the_models_own_tool_call_ids_reach_every_client(mistral: Served) -> None:
    # Mistral writes [CALL_ID]abc123XYZ: Chat Completions (streamed and not), Responses' call_id and
    # Anthropic's tool_use.id all carry it
    ids = _mistral_ids(mistral, MISTRAL_ANSWER)
    assert mistral.expected()["content"] == "Let me check."
    assert ids == {key: ["abc123XYZ"] for key in ids} and len(ids) == 6


def test_a_tool_call_id_the_model_repeats_is_replaced(mistral: Served) -> None:
    for api, got in _mistral_ids(mistral, MISTRAL_REPEATED).items():
        assert got[0] == "abc123XYZ" and got[1] != "abc123XYZ" and len(got) == 2, api
        assert got[1].startswith("toolu_" if api.startswith("messages") else "call_"), api


def test_formats_without_ids_get_generated_ones(served: Served) -> None:
    oa, an = served.openai(), served.anthropic()
    plain = oa.chat.completions.create(model="tiny", messages=MESSAGES, tools=TOOLS).choices[0].message
    response = oa.responses.create(model="tiny", input=MESSAGES[0]["content"], tools=RESPONSES_TOOLS)
    message = an.messages.create(model="tiny", max_tokens=200, messages=MESSAGES, tools=ANTHROPIC_TOOLS)
    ids = [c.id for c in plain.tool_calls] + [i.call_id for i in response.output if i.type == "function_call"]
    assert len(ids) == 2 and all(i.startswith("call_") and len(i) == 29 for i in ids)
    uses = [b.id for b in message.content if b.type == "tool_use"]
    assert len(uses) == 1 and uses[0].startswith("toolu_")


def test_a_conversation_with_tool_results_is_rendered(served: Served) -> None:
    # the assistant's earlier call and its result go through the chat template (arguments as a dict)
    served.script.text = "It is sunny in Paris.<|im_end|>"
    client = served.anthropic()
    msg = client.messages.create(
        model="tiny", max_tokens=50, tools=ANTHROPIC_TOOLS,
        messages=[
            *MESSAGES,
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]},
        ],
    )
    assert [(b.type, b.text) for b in msg.content] == [("text", "It is sunny in Paris.")]
    assert msg.stop_reason == "end_turn"


# ---------------------------------------------------------------------------- errors, models, disconnects


def _post(served: Served, path: str, body: bytes) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_bad_requests_get_a_400_naming_the_field(served: Served) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        served.openai().chat.completions.create(model="tiny", messages=[{"role": "robot", "content": "hi"}])
    assert info.value.status_code == 400
    assert info.value.body["param"] == "messages[0].role" and "robot" in info.value.body["message"]
    with pytest.raises(openai.BadRequestError) as info:
        served.openai().chat.completions.create(model="tiny", messages=MESSAGES, tools=TOOLS, tool_choice={
            "type": "function", "function": {"name": "nope"}})
    assert info.value.body["param"] == "tool_choice" and "nope" in info.value.body["message"]
    with pytest.raises(anthropic.BadRequestError) as info2:
        served.anthropic().messages.create(model="tiny", max_tokens=0, messages=MESSAGES)
    assert "max_tokens" in str(info2.value)
    status, body = _post(served, "/v1/chat/completions", b"{not json")
    assert status == 400 and "not valid JSON" in body["error"]["message"]
    status, body = _post(served, "/v1/responses", json.dumps({"model": "tiny", "input": [
        {"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]}).encode())
    assert status == 400 and body["error"]["param"] == "input[0].content[0].type"
    status, body = _post(served, "/v1/messages", json.dumps({"max_tokens": 5, "messages": [
        {"role": "user", "content": 3}]}).encode())
    assert status == 400 and body["type"] == "error" and "messages[0].content" in body["error"]["message"]


def test_models_route(served: Served) -> None:
    models = served.openai().models.list()
    assert [m.id for m in models.data] == ["tiny"]


def test_a_client_disconnecting_mid_stream_does_not_hang_the_worker(served: Served) -> None:
    served.script.text = "word " * 200 + "<|im_end|>"  # a long answer (800 tokens) from a slow model: 8 s
    served.script.delay = 0.01
    before = served.script.steps
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    body = json.dumps({"model": "tiny", "messages": MESSAGES, "stream": True, "max_tokens": 800})
    conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 200
    assert response.read(6) == b"data: "  # the stream started
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    # the next request is answered (the lock was released), and the first generation stopped early
    served.script.text = "Done.<|im_end|>"
    start = time.monotonic()
    plain = served.openai().chat.completions.create(model="tiny", messages=MESSAGES)
    assert plain.choices[0].message.content == "Done."
    assert time.monotonic() - start < 6  # not after the 8 s the first answer would have taken
    assert served.script.steps - before < 400  # far fewer than the 800 it was allowed


def test_concurrent_requests_each_get_their_own_answer(served: Served) -> None:
    want = served.expected()
    results: list[Any] = []

    def one() -> None:
        try:
            with served.openai().chat.completions.stream(model="tiny", messages=MESSAGES, tools=TOOLS) as stream:
                for _ in stream:
                    pass
                results.append(stream.get_final_completion().choices[0].message)
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            results.append(e)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(results) == 3
    for msg in results:
        assert not isinstance(msg, Exception), msg
        assert msg.content == want["content"]
        assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == _calls(want)


def test_a_generation_failing_mid_stream_ends_the_stream_with_an_error(served: Served) -> None:
    served.script.fail_at = 5
    with pytest.raises(openai.APIError, match="the model broke"):
        for _ in served.openai().chat.completions.create(model="tiny", messages=MESSAGES, stream=True):
            pass
    with pytest.raises(openai.InternalServerError, match="the model broke"):  # not streamed: a 500
        served.openai().chat.completions.create(model="tiny", messages=MESSAGES)
    with pytest.raises(anthropic.APIError, match="the model broke"):
        with served.anthropic().messages.stream(model="tiny", max_tokens=50, messages=MESSAGES) as stream:
            for _ in stream:
                pass
    served.script.fail_at = None  # and the server goes on
    plain = served.openai().chat.completions.create(model="tiny", messages=MESSAGES, tools=TOOLS)
    assert plain.choices[0].message.content == served.expected()["content"]


def test_the_command_serves_the_folder(command: tuple[subprocess.Popen, int], folder: Path) -> None:
    # the README's one command, as a user runs it: the saved model writes a tool call (`_write_by_bigrams`)
    process, port = command
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                break
        except OSError:
            pass
        finally:
            conn.close()
        assert time.monotonic() < deadline, "the command did not start serving"
        time.sleep(0.2)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=30)
    assert [m.id for m in client.models.list().data] == [folder.name]
    chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    with client.chat.completions.stream(model="m", messages=MESSAGES, tools=TOOLS) as stream:
        for _ in stream:
            pass
        [call] = stream.get_final_completion().choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Rome"})
    assert call.id.startswith("call_")


def test_the_command_refuses_a_missing_folder(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    assert main(["serve", str(tmp_path / "missing")]) == 2
    assert "no such model folder" in capsys.readouterr().err


def test_the_command_names_the_missing_extra(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if `pip install hf-response-templates` only
    assert main(["serve", str(tmp_path)]) == 2
    assert 'needs uvicorn, which is not installed: pip install "hf-response-templates[serve]"' in capsys.readouterr().err
