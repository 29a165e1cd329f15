"""OpenAI-style streaming: ``chat.completion.chunk`` deltas from a response template.

`DeltaStream` sits on a `ResponseParser` (or on the events of one, e.g. a `ResponseStreamer`) and turns its
events into the deltas that OpenAI-compatible servers send, tool-call arguments included, as the model
writes them::

    >>> stream = DeltaStream(get_template("qwen3"), prefix=prompt, tools=tools, model="qwen3")
    >>> for text in pieces_of_generated_text:
    ...     for chunk in stream.feed_chunks(text):
    ...         send(sse(chunk))
    >>> for chunk in stream.finish_chunks():        # or finish_chunks("length") at max_new_tokens
    ...     send(sse(chunk))
    >>> send(SSE_DONE)

Deltas, in order:

* ``{"role": "assistant"}`` first (the template's ``defaults["role"]``);
* ``{"content": "..."}`` and ``{"reasoning_content": "..."}`` pieces (other text fields under their own
  name, e.g. Command R7B's ``{"tool_plan": "..."}``; see ``field_keys``);
* ``{"tool_calls": [{"index": i, "id": "call_...", "type": "function", "function": {"name": ...,
  "arguments": ""}}]}`` once per call, as soon as its name is known (from an ``open_pattern`` capture, or
  as soon as the name string is complete in a JSON body), then ``{"tool_calls": [{"index": i, "function":
  {"arguments": "<fragment>"}}]}`` pieces. With ``tool_call_streaming="validated"`` (the default when a
  request tool has ``"strict": true``), a call is sent only once its region has parsed: id, name and the
  complete arguments in one delta, and a malformed call is never announced (its text is in ``unparsed``);
  for formats with every call in one JSON list (Granite, Command R7B) no call is sent before the whole list
  parsed. ``"incremental"`` (the default otherwise) streams them as described here.

Guarantees (what a client may rely on):

* Concatenating every ``content`` (``reasoning_content``, ...) delta gives exactly the message's value:
  leading whitespace of a region and trailing whitespace at its close are never sent (they are held back
  until non-whitespace follows), and an implicit field that reopens (text between tool calls) gets the
  same ``"\\n"`` separator as the parsed message; ``join`` fields get their separator.
* Concatenating every ``arguments`` fragment of a call and calling ``json.loads`` gives exactly the
  (tool-typed) ``arguments`` of that call in the parsed message. The fragments are a prefix of the
  canonical ``json.dumps(arguments, ensure_ascii=False)``; a fragment is sent only when it can no longer
  change, and never taken back: for JSON bodies, each member once it is complete (a string value streams
  character by character when the tool schema lets it stay a string; numbers, booleans, nested objects
  wait until they are complete), the closing ``}`` at the region's close; for ``xml-inline`` bodies, each
  parameter once its closing tag is there (typed by the schema), or, where a value may also end with the end
  of the body (Qwen3-Coder, Qwen3.5), a value that stays a string as it is written, character by character
  (a repeated key's later value, which replaces the first in the message, flags the call ``inconsistent``);
  for ``python-call-list``, each call once
  its ``)`` is there. So the arguments only become valid JSON when the call is complete. The ``json``
  parser's dialect (``unquoted_keys``, ``string_delims``: Gemma 4) streams the same way. Arguments written
  *before* the name in a JSON body wait for the name: the call is announced with its name, and arguments
  are typed by the named tool's schema.
* Lone surrogates (a JSON body's ``"\\ud800"`` escape decodes to one; UTF-8 cannot encode it, and the
  OpenAI SDK's strict helper raises ``UnicodeEncodeError`` on it) are sent as U+FFFD, in names and
  arguments; the parsed message (``stream.message``, ``parse_response``) keeps the decoded value.
* ``id``, ``type`` and ``name`` come once per call (the OpenAI SDK concatenates repeated strings). Ids are
  the model's own where the format writes one (Mistral ``[CALL_ID]...``, Kimi K2 ``functions.NAME:IDX``;
  ``model_ids=False`` opts out), else ``call_`` + 24 letters/digits (reproducible with ``id_seed``, or made
  by ``id_factory``); unique per stream (a repeated model id is replaced).
* Linear time: the stream keeps the state of each open region's partial parse (`hf_response_templates.
  partial`), so the cost of a piece does not depend on how long the region already is
  (``benchmarks/bench_deltas.py``).

Extensions (not in OpenAI's format; shaped so that the OpenAI SDK's own delta accumulation keeps them):

* A region that failed to parse (the engine's ``region_malformed``), and text outside every region
  (``text_unclaimed``, ``field`` None), give
  ``{"unparsed": [{"index": n, "field", "text", "error", "position"}]}``: the same records as
  ``message["unparsed"]`` of ``parse_response(..., strict=False)`` plus a running ``index``.
* A tool call that must not be executed as streamed gets, once, ``{"tool_calls": [{"index": i,
  "function": {"arguments": ""}, "error": {"type": T, "message": "...", "in_message": B}}]}``. ``B`` says
  whether ``parse_response`` (strict=False) keeps the call in the message. ``T`` is ``"malformed"`` (its body
  failed to parse; B false, its raw text is in ``unparsed``), ``"length"`` (generation hit the token limit
  inside this call, see `finish`; B true if what was written still parsed), ``"inconsistent"`` (the final
  value disagrees with fragments already sent, e.g. a JSON body that repeats a key: the message is right,
  the streamed arguments are not), or ``"invalid"`` (the message holds it, but without a string name, e.g.
  a body that is just ``2``). Never execute a call that carries an ``error``.

`finish(finish_reason)` ends the stream: ``"tool_calls"`` when calls were made, ``"stop"`` otherwise,
``"length"`` when the caller says generation hit ``max_new_tokens``. With ``"length"``, a tool call that was
still open is not dropped: it is announced (if its name was known) with the arguments that were complete,
flagged with an ``error`` of type ``"length"``, and, if its body could not be parsed, its raw text is in an
``unparsed`` record.

Two ways to feed it: text (`feed`: the stream owns a `ResponseParser`, or drives one the caller made, which
then traces its delimiters for the call ids; exact in every respect), or events made elsewhere (`for_events` +
`feed_events`, e.g. from a ``ResponseStreamer``). Events carry what is needed
(``region_open``'s ``captures``, ``position`` and ``at_end`` on closes), so both give the same deltas, with
two differences: model call ids need the producer's ``delimiter`` events (``ResponseParser(trace=True)``,
``ResponseStreamer(trace=True)``; without them every id is generated);
and a tool call the producer's final events close as malformed is flagged at `finish` (``"length"`` if
`finish` says so, else ``"malformed"``), since only `finish` knows whether the token limit cut it.

Serving helpers: `chunk` / `feed_chunks` / `finish_chunks` wrap deltas into ``chat.completion.chunk``
dicts (``choice_index`` sets the choice's ``index``: one stream per choice when ``n > 1``, with one shared
``completion_id``); `usage_chunk` is the ``stream_options.include_usage`` chunk (token counts passed in);
``coalesce_chars`` / ``coalesce_ms`` hold deltas back across feeds and release them merged once that many
characters are held or that much time has passed (`flush` releases them; deltas of one feed are always
merged); `chat_completion` builds the non-streaming ``chat.completion`` response from a parsed message.
The same stream drives `hf_response_templates.anthropic` (Messages API events) and
`hf_response_templates.responses` (Responses API events).

`partial_value()` gives the partial parsed value of the open ``json`` / ``xml-inline`` /
``python-call-list`` region (before ``transform``): JSON with incomplete strings included (complete numbers
only), xml-inline as the parameters whose closing tag was seen (and the open value, for the tag shapes that
stream it), python-call-list as the calls whose ``)``
was seen. A content format registered by the user streams too once it has a partial parser
(`hf_response_templates.partial.register_partial_parser`).

Serving a model: `chat_completion_chunks(model, tokenizer, messages, tools=..., max_new_tokens=...)` runs
``generate`` in a thread through a `ResponseStreamer` and yields the chunks, deciding the finish reason from
the output (``"length"`` only when the budget was used without ending on one of the model's EOS ids) before
the parser's closing events are turned into deltas; `chat_completion_sse` yields them as SSE lines.

This module is ``hf_response_templates.openai``; it does not import (or shadow) the ``openai`` package.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from hf_response_templates.delta_state import _ID_CHARS, _REASONING_NAMES, _call_id, _dumps, _scrub, _usage
from hf_response_templates.deltas import DeltaStream
from hf_response_templates.template import ResponseTemplate

__all__ = [
    "DeltaStream", "SSE_DONE", "accumulate_deltas", "chat_completion", "chat_completion_chunks", "chat_completion_sse",
    "sse",
]

#: The line an OpenAI-style server sends after the last chunk.
SSE_DONE = "data: [DONE]\n\n"


def sse(chunk: Mapping[str, Any]) -> str:
    """One Server-Sent-Events line for a chunk: ``"data: {...}\\n\\n"`` (end the stream with `SSE_DONE`)."""
    return "data: " + json.dumps(chunk, separators=(",", ":")) + "\n\n"


def accumulate_deltas(deltas: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Merge deltas the way the OpenAI Python SDK does (strings concatenated, list items by ``index``).

    Returns the accumulated delta, e.g. ``{"role": "assistant", "content": "...", "tool_calls": [{"index": 0,
    "id": ..., "type": "function", "function": {"name": ..., "arguments": "<json>"}}]}``. Useful to build a
    non-streaming response from the same code path.
    """
    acc: dict[str, Any] = {}
    for delta in deltas:
        _accumulate(acc, json.loads(json.dumps(delta)))
    return acc


def _accumulate(acc: dict, delta: Mapping) -> dict:
    for key, value in delta.items():
        if key not in acc or acc[key] is None:
            acc[key] = value
            continue
        cur = acc[key]
        if key in ("index", "type"):
            acc[key] = value
        elif isinstance(cur, str) and isinstance(value, str):
            acc[key] = cur + value
        elif isinstance(cur, dict) and isinstance(value, dict):
            _accumulate(cur, value)
        elif isinstance(cur, list) and isinstance(value, list):
            for item in value:
                if not isinstance(item, dict) or not isinstance(item.get("index"), int):
                    cur.append(item)
                    continue
                pos = next(
                    (i for i, c in enumerate(cur) if isinstance(c, dict) and c.get("index") == item["index"]),
                    None,
                )
                if pos is None:
                    cur.append(item)
                else:
                    _accumulate(cur[pos], item)
        else:
            acc[key] = value
    return acc


def chat_completion(
    message: Mapping[str, Any],
    *,
    model: str = "",
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
    completion_id: str | None = None,
    created: int | None = None,
    id_seed: int | str | None = None,
    reasoning_key: str = "reasoning_content",
    tool_call_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` response from a parsed message (``parse_response``'s).

    ``content`` is None when empty; tool calls get ``id`` (``tool_call_ids[i]`` for the i-th call when given,
    e.g. `DeltaStream.tool_call_ids` of a stream over the same generation, which holds the ids the model wrote
    where the format writes them (Mistral, Kimi K2); else the message's own; else ``call_`` + 24
    letters/digits, reproducible with ``id_seed``; an id already used is replaced, so ids are unique),
    ``type`` and ``arguments`` as the JSON text of the parsed value (a string value, e.g. a body kept as text
    by ``allow_non_json``, becomes a JSON string, as in the streamed deltas); an ``index`` key is not kept.
    ``finish_reason`` defaults to "tool_calls" when there are calls, else "stop". ``usage``: (prompt_tokens,
    completion_tokens). Other message keys (e.g. ``unparsed``) are kept as extensions, as in the streamed
    deltas.
    """
    rng = random.Random(id_seed) if id_seed is not None else random.SystemRandom()
    out: dict[str, Any] = {"role": message.get("role", "assistant")}
    content = message.get("content")
    out["content"] = content if content not in ("", None) else None
    for key, value in message.items():
        if key in ("role", "content", "tool_calls"):
            continue
        out[reasoning_key if key in _REASONING_NAMES else key] = value
    calls = []
    used: set[str] = set()
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = (
            call.get("function")
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping)
            else call
        )
        fn = fn if isinstance(fn, Mapping) else {}
        args = fn.get("arguments", {})
        call_id = call.get("id") if isinstance(call, Mapping) else None
        if tool_call_ids is not None and i < len(tool_call_ids):
            call_id = tool_call_ids[i]
        if not isinstance(call_id, str) or not call_id or call_id in used:
            call_id = _call_id(rng)
        used.add(call_id)
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": fn.get("name") if isinstance(fn.get("name"), str) else "",
                    "arguments": _scrub(_dumps(args)),
                },
            }
        )
    if calls:
        out["tool_calls"] = calls
    response: dict[str, Any] = {
        "id": completion_id or "chatcmpl-" + "".join(rng.choice(_ID_CHARS) for _ in range(24)),
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": out,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
            }
        ],
    }
    if usage is not None:
        response["usage"] = _usage(*usage)
    return response


# ---------------------------------------------------------------------- serving a model


def _eos_ids(model: Any, tokenizer: Any, generate_kwargs: Mapping[str, Any]) -> set[int]:
    """Every id generation stops on: `eos_token_id` given to `generate`, else the generation config's
    (often a list: gpt-oss stops on `<|return|>` and `<|call|>`), else the tokenizer's."""
    value = generate_kwargs.get("eos_token_id")
    config = generate_kwargs.get("generation_config") or getattr(model, "generation_config", None)
    if value is None and config is not None:
        value = getattr(config, "eos_token_id", None)
    if value is None:
        value = getattr(tokenizer, "eos_token_id", None)
    if value is None:
        return set()
    if hasattr(value, "tolist"):
        value = value.tolist()
    return {int(v) for v in value} if isinstance(value, (list, tuple, set)) else {int(value)}


def _finish_reason(
    output: Any, prompt_length: int, limit: int | None, eos: set[int], model: Any, generate_kwargs: Mapping[str, Any]
) -> str | None:
    """``"length"`` if generation used its whole token budget without ending on an EOS id, else None
    (the stream then says ``"tool_calls"`` or ``"stop"``)."""
    sequence = output.sequences if hasattr(output, "sequences") else output
    row = sequence[0]
    new_tokens = int(row.shape[-1]) - prompt_length
    if limit is None:
        config = generate_kwargs.get("generation_config") or getattr(model, "generation_config", None)
        limit = getattr(config, "max_new_tokens", None)
        max_length = generate_kwargs.get("max_length", getattr(config, "max_length", None))
        if limit is None and max_length is not None:
            limit = int(max_length) - prompt_length
    last = int(row[-1]) if new_tokens > 0 else None
    return "length" if limit is not None and new_tokens >= limit and last not in eos else None


def chat_inputs(
    model: Any,
    tokenizer: Any,
    messages: list[dict[str, Any]],
    *,
    tools: list[Any] | None = None,
    chat_template_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """The ``generate`` inputs for a conversation: ``tokenizer.apply_chat_template(messages, tools=tools,
    add_generation_prompt=True)`` as tensors on the model's device (``token_type_ids`` dropped unless the
    model's ``forward`` takes them)."""
    inputs = tokenizer.apply_chat_template(
        messages, tools=tools, add_generation_prompt=True, return_dict=True, return_tensors="pt",
        **dict(chat_template_kwargs or {}),
    )
    if "token_type_ids" in inputs:  # 4.x tokenizers return them; most causal LMs reject them in generate
        import inspect

        forward = getattr(model, "forward", None)
        if forward is None or "token_type_ids" not in inspect.signature(forward).parameters:
            inputs.pop("token_type_ids")
    device = getattr(model, "device", None)
    if device is not None and hasattr(inputs, "to"):
        inputs = inputs.to(device)
    return inputs


def chat_completion_chunks(
    model: Any,
    tokenizer: Any,
    messages: list[dict[str, Any]],
    *,
    tools: list[Any] | None = None,
    max_new_tokens: int | None = 512,
    model_name: str = "",
    response_template: Mapping[str, Any] | ResponseTemplate | str | None = None,
    chat_template_kwargs: Mapping[str, Any] | None = None,
    id_seed: int | str | None = None,
    timeout: float | None = None,
    **generate_kwargs: Any,
) -> Iterator[dict[str, Any]]:
    """Generate an answer to ``messages`` and yield it as OpenAI ``chat.completion.chunk`` dicts, as the model
    writes it (``generate`` runs in a thread).

    The prompt is ``tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True)``; the
    tokenizer's ``response_template`` (or ``response_template=``, or the shipped template its chat template is
    exactly) parses the output. The last chunk carries ``finish_reason``: ``"tool_calls"`` if the model called
    tools, ``"stop"``, or ``"length"`` when generation used all of ``max_new_tokens`` without ending on one of
    the model's EOS ids (all of them: gpt-oss stops on ``<|call|>`` too); a tool call cut off there carries
    ``"error": {"type": "length", ...}``. Model output never raises; a failing ``generate`` raises its
    exception here.

    Args:
        model: a causal LM (``generate``); batch size 1.
        tokenizer: its tokenizer or processor.
        messages: the conversation, as ``apply_chat_template`` takes it.
        tools: the request's tools (rendered into the prompt and used to type arguments).
        max_new_tokens: the token budget (None: the model's generation config).
        model_name: the ``model`` of each chunk.
        response_template: a template (dict, compiled, or shipped name) instead of the tokenizer's.
        chat_template_kwargs: more variables for the chat template (e.g. ``{"enable_thinking": False}``).
        id_seed: makes the completion and tool-call ids reproducible.
        timeout: seconds to wait for each next token (default no limit).
        **generate_kwargs: passed to ``model.generate`` (``do_sample``, ``temperature``, ...).

    Example:
        >>> for chunk in chat_completion_chunks(model, tokenizer, [{"role": "user", "content": "Hi"}]):
        ...     print(chunk["choices"][0]["delta"])
    """
    import threading

    from .tokenizer import ResponseStreamer, _resolve_template, _underlying_tokenizer

    template = _resolve_template(_underlying_tokenizer(tokenizer), response_template)
    inputs = chat_inputs(model, tokenizer, messages, tools=tools, chat_template_kwargs=chat_template_kwargs)
    # trace=True: the delimiter events carry the call ids a model writes (Mistral [CALL_ID], Kimi K2)
    streamer = ResponseStreamer(
        tokenizer, tools=tools, response_template=template, strict=False, timeout=timeout, trace=True
    )
    if max_new_tokens is not None:
        generate_kwargs["max_new_tokens"] = max_new_tokens
    result: dict[str, Any] = {}

    def run() -> None:
        result["output"] = model.generate(**inputs, streamer=streamer, **generate_kwargs)

    thread = threading.Thread(target=run, name="hf-response-templates-generate", daemon=True)
    thread.start()
    stream = DeltaStream.for_events(template, tools=tools, model=model_name, id_seed=id_seed)
    final: list[dict[str, Any]] = []  # the parser's closing events: fed once the finish reason is known
    for event in streamer:
        if final or event.get("at_end"):
            final.append(event)
            continue
        yield from stream.feed_events_chunks([event])
    thread.join()
    prompt_length = int(inputs["input_ids"].shape[-1])
    eos = _eos_ids(model, _underlying_tokenizer(tokenizer), generate_kwargs)
    reason = _finish_reason(result["output"], prompt_length, max_new_tokens, eos, model, generate_kwargs)
    yield from stream.finish_chunks(reason, events=final)


def chat_completion_sse(model: Any, tokenizer: Any, messages: list[dict[str, Any]], **options: Any) -> Iterator[str]:
    """`chat_completion_chunks` as server-sent events: ``data: {...}\n\n`` lines, then ``data: [DONE]``.

    Example (FastAPI):
        >>> @app.post("/v1/chat/completions")
        ... def completions(request: dict):
        ...     lines = chat_completion_sse(model, tokenizer, request["messages"], tools=request.get("tools"))
        ...     return StreamingResponse(lines, media_type="text/event-stream")
    """
    for chunk in chat_completion_chunks(model, tokenizer, messages, **options):
        yield sse(chunk)
    yield SSE_DONE
