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
  parameter once its closing tag is there (typed by the schema); for ``python-call-list``, each call once
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

* A region that failed to parse (the engine's ``region_malformed``) gives
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

Two ways to feed it: text (`feed`: the stream owns a `ResponseParser`; exact in every respect), or events
made elsewhere (`for_events` + `feed_events`, e.g. from a ``ResponseStreamer``). Events carry what is needed
(``region_open``'s ``captures``, ``position`` and ``at_end`` on closes), so both give the same deltas, with
two differences: model call ids need the producer's ``delimiter`` events (``ResponseParser(trace=True)``);
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
only), xml-inline as the parameters whose closing tag was seen, python-call-list as the calls whose ``)``
was seen. A content format registered by the user streams too once it has a partial parser
(`hf_response_templates.partial.register_partial_parser`).

This module is ``hf_response_templates.openai``; it does not import (or shadow) the ``openai`` package.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Mapping
from typing import Any

from hf_response_templates.delta_state import _ID_CHARS, _REASONING_NAMES, _call_id, _dumps, _scrub, _usage
from hf_response_templates.deltas import DeltaStream

__all__ = ["DeltaStream", "SSE_DONE", "sse", "accumulate_deltas", "chat_completion"]

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
) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` response from a parsed message (``parse_response``'s).

    ``content`` is None when empty; tool calls get ``id`` (the message's own, else ``call_`` + 24
    letters/digits, reproducible with ``id_seed``), ``type`` and JSON-string ``arguments``; an ``index``
    key is not kept. ``finish_reason`` defaults to "tool_calls" when there are calls, else "stop".
    ``usage``: (prompt_tokens, completion_tokens). Other message keys (e.g. ``unparsed``) are kept as
    extensions, as in the streamed deltas.
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
    for call in message.get("tool_calls") or []:
        fn = (
            call.get("function")
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping)
            else call
        )
        fn = fn if isinstance(fn, Mapping) else {}
        args = fn.get("arguments", {})
        call_id = call.get("id") if isinstance(call, Mapping) else None
        calls.append(
            {
                "id": call_id if isinstance(call_id, str) and call_id else _call_id(rng),
                "type": "function",
                "function": {
                    "name": fn.get("name") if isinstance(fn.get("name"), str) else "",
                    "arguments": _scrub(args if isinstance(args, str) else _dumps(args)),
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
