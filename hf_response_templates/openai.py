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
  {"arguments": "<fragment>"}}]}`` pieces.

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
  parser's dialect (``unquoted_keys``, ``string_delims``: Gemma 4) streams the same way (rewritten to
  standard JSON for jiter). Arguments written *before* the name in a JSON body wait for the name: the call
  is announced with its name, and arguments are typed by the named tool's schema.
* ``id``, ``type`` and ``name`` come once per call (the OpenAI SDK concatenates repeated strings). Ids are
  ``call_`` + 24 letters/digits, unique per call, and reproducible with ``id_seed``.

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
made elsewhere (`for_events` + `feed_events`, e.g. from a ``ResponseStreamer``). Events do not (yet) say
which named groups ``open_pattern`` captured (a ``"captures"`` key on ``region_open`` is used when present),
so with events a call whose name comes from ``open_pattern`` is announced when its region closes, arguments
included (still exact, just not incremental); ``unparsed`` records then have ``position`` None.

`partial_value()` gives the partial parsed value of the open ``json`` / ``xml-inline`` /
``python-call-list`` region (before ``transform``): JSON through `jiter`'s partial mode (incomplete
strings included), xml-inline as the parameters whose closing tag was seen, python-call-list as the calls
whose ``)`` was seen.

This module is ``hf_response_templates.openai``; it does not import (or shadow) the ``openai`` package.
"""

from __future__ import annotations

import json
import random
import re
import string
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hf_response_templates.content import get_content_parser
from hf_response_templates.parser import ResponseParser
from hf_response_templates.partial import MISSING as _MISSING
from hf_response_templates.partial import has_partial_parser, partial_parser
from hf_response_templates.template import ResponseTemplate, load_template
from hf_response_templates.tools import ToolSchemas, admits_string, cast_value, tool_schemas
from hf_response_templates.transform import _PLACEHOLDER  # "{content.args}": the same syntax as transforms

__all__ = ["DeltaStream", "SSE_DONE", "sse", "accumulate_deltas", "chat_completion"]

#: The line an OpenAI-style server sends after the last chunk.
SSE_DONE = "data: [DONE]\n\n"

_ID_CHARS = string.ascii_letters + string.digits
_REASONING_NAMES = ("reasoning_content", "reasoning", "thinking")
_FINISH_REASONS = (None, "stop", "length", "tool_calls", "content_filter")


def _dumps(value: Any) -> str:
    t = type(value)
    if t is str:
        return _encode_string(value)
    if t is int:
        return int.__repr__(value)
    return json.dumps(value, ensure_ascii=False)


_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # == _dumps for a str, faster
_SURROGATE = re.compile("[\ud800-\udfff]")
_COMPACT_AT = 4096  # pieces of sent text kept before they are joined (memory; amortized linear)
_LENGTH_PREFIX = "generation stopped at the token limit inside this tool call: "

#: Call ids that formats write in the open delimiter of a call (kept instead of generated ones):
#: Mistral ``[TOOL_CALLS]name[CALL_ID]id[ARGS]``, Kimi K2 ``<|tool_call_begin|>functions.name:0``.
_MODEL_ID_PATTERNS = (
    re.compile(r"\[CALL_ID\](?P<id>[^\[\]]+)\[ARGS\]"),
    re.compile(r"<\|tool_call_begin\|>\s*(?P<id>functions\.[^\s:<]+:\d+)"),
)


def _scrub(text: str) -> str:
    """Lone surrogates (from JSON escapes such as ``\\ud800``) -> U+FFFD: they cannot be encoded as UTF-8."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def _any_strict(tools: Iterable[Any] | None) -> bool:
    """Whether any request tool (OpenAI format) says ``"strict": true``."""
    for tool in tools or ():
        if isinstance(tool, Mapping):
            fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
            if fn.get("strict") is True or tool.get("strict") is True:
                return True
    return False


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


# --------------------------------------------------------------------------- template analysis


def _ref(node: Any) -> tuple | None:
    """A transform leaf as a source: ("ref", root, keys) | ("lit", value) | ("complex",) | None."""
    if node is None:
        return None
    if isinstance(node, str):
        m = _PLACEHOLDER.fullmatch(node)
        if m is None:
            return ("lit", node)
        root, *keys = m.group(1).split(".")
        return ("ref", root, tuple(keys))
    if isinstance(node, (int, float, bool)):
        return ("lit", node)
    return ("complex",)


class _Shape:
    """Where a tool-call field's transform takes each call's name, arguments and id from."""

    __slots__ = ("each", "dynamic", "fn_keys", "name", "args", "id", "streamable")

    def __init__(self, spec: Mapping[str, Any]):
        t = spec.get("transform")
        self.each = bool(spec.get("transform_each"))
        self.dynamic = False  # the call node may be {"function": {...}} or the function itself
        self.fn_keys: tuple = ()
        self.name = self.args = self.id = None
        self.streamable = True
        if t is None or isinstance(t, str):
            ref = ("ref", "content", ()) if t is None else _ref(t)
            if ref is None or ref[0] != "ref" or ref[1] != "content" or self.each:
                self.streamable = False
            else:
                self.dynamic, self.fn_keys = True, ref[2]
            return
        if not isinstance(t, dict):
            self.streamable = False
            return
        self.id = _ref(t.get("id"))
        fn = t["function"] if "function" in t else t
        if isinstance(fn, str):
            ref = _ref(fn)
            if ref is None or ref[0] != "ref":
                self.streamable = False
                return
            self.name = ("ref", ref[1], ref[2] + ("name",))
            self.args = ("ref", ref[1], ref[2] + ("arguments",))
        elif isinstance(fn, dict):
            self.name = _ref(fn.get("name"))
            self.args = _ref(fn.get("arguments"))
        else:
            self.streamable = False


def _get(value: Any, path: tuple) -> Any:
    for key in path:
        if isinstance(value, dict):
            if key not in value:
                return _MISSING
            value = value[key]
        elif isinstance(value, list) and isinstance(key, int):
            if key >= len(value):
                return _MISSING
            value = value[key]
        else:
            return _MISSING
    return value


# --------------------------------------------------------------------------- per-stream state


class _Call:
    __slots__ = (
        "index", "id", "name", "parts", "stuck", "error", "done", "final", "opened", "members",
        "str_key", "str_chunks", "str_idx",
    )  # fmt: skip

    def __init__(self, index: int, call_id: str, name: str):
        self.index = index
        self.id = call_id
        self.name = name
        self.parts: list[str] = []  # arguments text sent so far, in pieces
        self.stuck = False  # the stable text stopped extending what was sent: wait for the close
        self.error: dict | None = None
        self.done = False
        self.final = False  # the complete arguments were sent (from the partial parse)
        self.opened = False  # "{" sent
        self.members = 0  # members of the arguments object sent whole
        self.str_key: Any = None  # the member whose string value is streaming
        self.str_chunks: list[str] = []  # the partial parser's decoded pieces of that string
        self.str_idx = 0  # how many of them were sent

    @property
    def sent(self) -> str:
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


class _TextState:
    __slots__ = ("regions", "nonempty")

    def __init__(self) -> None:
        self.regions = 0
        self.nonempty = False


class _Region:
    __slots__ = (
        "name", "kind", "content", "partial", "captures", "calls", "dirty", "started", "held", "sent",
        "length_cut", "key", "strip", "version", "streaming", "first_active", "model_id", "fast",
    )  # fmt: skip

    def __init__(self, name: str, kind: str, content: str, captures: dict | None, partial: Any = None):
        self.name = name
        self.kind = kind  # "text" | "tool" | "value"
        self.content = content
        self.partial = partial  # the content format's partial parser (see partial.py), or None
        self.captures = captures  # None: not known yet
        self.calls: list[_Call] = []
        self.dirty = False
        self.started = False
        self.held = ""
        self.sent: list[str] = []  # text sent, in pieces
        self.length_cut = False
        self.key: str | None = None  # text regions: the delta key
        self.strip = True
        self.version = -1  # the partial parser's version at the last update
        self.streaming: _Call | None = None  # the call whose string member is streaming
        self.first_active = 0  # calls before this one have sent their complete arguments
        self.model_id: str | None = None  # a call id the model wrote in the open delimiter
        self.fast: tuple | None = None  # (call, arguments node, its open frame) while that object is open


# --------------------------------------------------------------------------- the adapter


class DeltaStream:
    """Turn one generation into OpenAI ``chat.completion.chunk`` deltas (see the module docs).

    Args:
        parser_or_template: a response template (dict or `ResponseTemplate`; then ``prefix`` is required and
            the stream owns a `ResponseParser`), or an existing `ResponseParser` (its tools are used).
        prefix: the prompt, as for `ResponseParser` (``""`` opts out).
        tools: tool schemas or Python functions: typing of arguments, as in ``parse_response(tools=...)``.
        id_seed: seed for tool-call ids (and the completion id): same seed, same ids.
        id_factory: ``f(index) -> str`` making tool-call ids instead (e.g. Mistral's 9-character ids).
        tool_call_fields: template fields holding tool calls.
        reasoning_field: the template field streamed as ``reasoning_content``; ``"auto"`` picks the first
            of ``reasoning_content``, ``reasoning``, ``thinking`` that the template has; None: none.
        content_field: the template field streamed as ``content``.
        field_keys: ``{template field: delta key or None}`` overrides (None drops the field). Other text
            fields stream under their own name; other structured fields are sent once, at their close.
        model, completion_id, created: what `chunk` puts into each ``chat.completion.chunk``.

    Use `DeltaStream.for_events` to consume events produced elsewhere (a `ResponseStreamer`).
    """

    def __init__(
        self,
        parser_or_template: Mapping[str, Any] | ResponseTemplate | ResponseParser,
        *,
        prefix: str | None = None,
        tools: Iterable[Any] | None = None,
        id_seed: int | str | None = None,
        id_factory: Callable[[int], str] | None = None,
        tool_call_fields: Iterable[str] = ("tool_calls",),
        reasoning_field: str | None = "auto",
        content_field: str = "content",
        field_keys: Mapping[str, str | None] | None = None,
        model: str = "",
        completion_id: str | None = None,
        created: int | None = None,
        tool_call_streaming: str | None = None,
        model_ids: bool = True,
        choice_index: int = 0,
        coalesce_chars: int | None = None,
        coalesce_ms: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        _events_only: bool = False,
    ):
        if isinstance(parser_or_template, ResponseParser):
            if prefix is not None:
                raise ValueError("prefix= is for templates: this ResponseParser already has its prefix")
            if tools is not None:
                raise ValueError("pass tools= to the ResponseParser itself (its tools type the arguments)")
            parser: ResponseParser | None = parser_or_template
            tpl = parser.template
            schemas = parser.tools
        else:
            tpl = load_template(parser_or_template)
            schemas = tool_schemas(tools) if tools else None
            # without a prefix, the engine raises its own message explaining why the prompt is needed
            parser = None if _events_only else ResponseParser(tpl, prefix, tools=tools, trace=model_ids)
        self._parser = parser
        self._tpl = tpl
        self._tools: ToolSchemas | None = schemas if schemas else None
        self._rng = random.Random(id_seed) if id_seed is not None else random.SystemRandom()
        self._id_factory = id_factory
        self.model = model
        self.completion_id = completion_id or "chatcmpl-" + "".join(
            self._rng.choice(_ID_CHARS) for _ in range(24)
        )
        self.created = int(time.time()) if created is None else created
        #: the ``index`` of this stream's choice in the chunks (one DeltaStream per choice when ``n > 1``)
        self.choice_index = choice_index
        self._coalesce = coalesce_chars is not None or coalesce_ms is not None
        self._co_chars = coalesce_chars if coalesce_chars is not None else float("inf")
        self._co_secs = coalesce_ms / 1000 if coalesce_ms is not None else float("inf")
        self._clock = clock
        self._held: list[dict] = []  # coalescing: deltas not released yet
        self._held_chars = 0
        self._held_since = 0.0
        self._role = tpl.defaults.get("role", "assistant")
        if not isinstance(self._role, str):
            self._role = "assistant"

        sources = tpl.source["fields"]
        tool_fields = set(tool_call_fields)
        names = tpl.field_names
        if reasoning_field == "auto":
            reasoning_field = next(
                (n for n in _REASONING_NAMES if n in names and n not in tool_fields and n != content_field),
                None,
            )
        self._kind: dict[str, str] = {}
        self._key: dict[str, str | None] = {}
        self._strip: dict[str, bool] = {}
        self._shape: dict[str, _Shape] = {}
        self._partial_args: dict[str, Any] = {}  # fields whose content format has a partial parser
        self._text: dict[str, _TextState] = {}
        for f in tpl.fields:
            spec = sources[f.name]
            cargs = spec.get("content_args") or {}
            if f.name in tool_fields:
                kind, key = "tool", "tool_calls"
                self._shape[f.name] = _Shape(spec)
            else:
                # text streams piece by piece; other content (int, json, a list of texts) at its close
                kind = "text" if f.content == "text" and (not f.repeats or f.join is not None) else "value"
                key = {content_field: "content", reasoning_field: "reasoning_content"}.get(f.name, f.name)
            if field_keys and f.name in field_keys:
                key = field_keys[f.name]
            self._kind[f.name], self._key[f.name] = kind, key
            self._strip[f.name] = bool(cargs.get("strip", True))
            self._text[f.name] = _TextState()
            if has_partial_parser(f.content):
                self._partial_args[f.name] = get_content_parser(f.content).compile_args(cargs, f.name)
        if tool_call_streaming is None:
            tool_call_streaming = "validated" if _any_strict(tools) else "incremental"
        if tool_call_streaming not in ("incremental", "validated"):
            raise ValueError(
                f"tool_call_streaming must be 'incremental' or 'validated', got {tool_call_streaming!r}"
            )
        #: "incremental" (a call is announced and its arguments stream as the model writes them) or
        #: "validated" (a call is sent, name and arguments together, once its region has parsed)
        self.tool_call_streaming = tool_call_streaming
        self._validated = tool_call_streaming == "validated"
        self._model_ids = model_ids
        self._delimiter_id: str | None = None
        self._ids: set[str] = set()
        self._deferred: tuple | None = None  # events mode: a tool region malformed at the end of the stream
        self._open: _Region | None = None
        self._tail_tool: _Region | None = None  # the last tool region, if no region event followed its close
        self._next_index = 0
        self._calls: list[_Call] = []
        self._unparsed = 0
        self._used_errors: set[int] = set()
        self._started = False
        self._finished = False
        self._pending: list[dict] = []
        #: the finish reason, once `finish` was called
        self.finish_reason: str | None = None
        #: the parsed message (text mode, after `finish`)
        self.message: dict | None = None
        #: internal problems met while streaming (a bug in this adapter if ever non-empty); never raised
        self.warnings: list[str] = []
        if parser is not None:
            self._handle(parser.initial_events, self._pending)

    @classmethod
    def for_events(
        cls,
        template: Mapping[str, Any] | ResponseTemplate,
        *,
        tools: Iterable[Any] | None = None,
        **options: Any,
    ) -> DeltaStream:
        """A stream fed with parser events made elsewhere (`feed_events`), e.g. by a `ResponseStreamer`.

        Pass the same ``tools`` as the producer's parser. The producer already applied the prompt, so there
        is no ``prefix`` here. Tool names captured by an ``open_pattern`` come with the ``region_open``
        event's ``captures``; `finish` ("length") flags the last tool call if the stream ended right after it.
        """
        if "prefix" in options:
            raise TypeError(
                "for_events() takes no prefix: the parser that produced the events already consumed the prompt"
            )
        return cls(template, tools=tools, _events_only=True, **options)

    # ------------------------------------------------------------------ public API

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Add generated text; return the deltas it completes (possibly none). Never raises for model output.

        Deltas of one call are merged (consecutive text of one key, argument fragments of one call); with
        ``coalesce_chars`` / ``coalesce_ms``, deltas are also held across calls until that many characters
        are held or that much time has passed since the first one was held (see `flush`).
        """
        if self._coalesce:
            return self._hold(self._feed(text))
        return self._feed(text)

    def _feed(self, text: str) -> list[dict[str, Any]]:
        parser = self._parser
        if parser is None:
            raise RuntimeError("this DeltaStream consumes events (for_events): use feed_events()")
        if self._finished:
            self._check_open()
        if not text:
            return self._begin()
        events = parser.feed(text)
        r = self._open
        if self._started and len(events) == 1 and r is not None:
            # The common case, kept short: one chunk of the open region (see `_handle` for the general one)
            ev = events[0]
            if ev["type"] == "region_chunk" and ev["field"] == r.name:
                out: list[dict] = []
                kind = r.kind
                if kind == "text":
                    key = r.key
                    if r.started and r.strip and key is not None:  # `_on_chunk`, inlined
                        text = ev["text"]
                        if r.held:
                            text = r.held + text
                            r.held = ""
                        core = text.rstrip()
                        if len(core) != len(text):
                            r.held = text[len(core) :]
                            if not core:
                                return out
                        sent = r.sent
                        sent.append(core)
                        if len(sent) >= _COMPACT_AT:
                            sent[:] = ["".join(sent)]
                        return [{key: core}]
                    self._on_chunk(ev, out)
                    return out
                if kind == "tool" and r.captures is None:
                    return self._slow(events)
                try:
                    p = r.partial
                    if p is not None:
                        p.feed(ev["text"])
                        if p.version == r.version:
                            call = r.streaming
                            if call is not None:  # `_stream_string`, inlined
                                chunks = call.str_chunks
                                i = call.str_idx
                                if len(chunks) > i:
                                    new = chunks[i] if len(chunks) == i + 1 else "".join(chunks[i:])
                                    call.str_idx = len(chunks)
                                    self._send(call, _encode_string(new)[1:-1], out)
                            return out
                    if kind == "tool":
                        self._update_tool(r, out)
                except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                    self.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                return out if len(out) < 2 else _merge(out)
        return self._slow(events)

    def _slow(self, events: list) -> list[dict[str, Any]]:
        out = self._begin()
        self._handle(events, out)
        return _merge(out)

    def feed_events(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add parser events (``parser.initial_events``, ``feed()`` results, final events); return deltas."""
        self._check_open()
        out = self._begin()
        self._handle(list(events), out)
        return self._hold(_merge(out)) if self._coalesce else _merge(out)

    def flush(self) -> list[dict[str, Any]]:
        """The deltas held back by coalescing (none without ``coalesce_chars`` / ``coalesce_ms``)."""
        out = _merge(self._held)
        self._held = []
        self._held_chars = 0
        return out

    def _hold(self, deltas: list[dict]) -> list[dict[str, Any]]:
        if not deltas:
            if self._held and self._clock() - self._held_since >= self._co_secs:
                return self.flush()
            return []
        if not self._held:
            self._held_since = self._clock()
        self._held.extend(deltas)
        self._held_chars += sum(_delta_chars(d) for d in deltas)
        if self._held_chars >= self._co_chars or self._clock() - self._held_since >= self._co_secs:
            return self.flush()
        return []

    def finish(self, finish_reason: str | None = None) -> list[dict[str, Any]]:
        """End the stream; return the last deltas and set `finish_reason`.

        ``finish_reason``: None (or "stop") lets the stream decide between "tool_calls" and "stop"; pass
        "length" when generation stopped at the token limit: a tool call still open then is reported with
        ``error.type == "length"`` (see the module docs).
        """
        if finish_reason not in _FINISH_REASONS:
            raise ValueError(f"finish_reason must be one of {_FINISH_REASONS}, got {finish_reason!r}")
        self._check_open()
        out = self._begin()
        length = finish_reason == "length"
        r = self._open
        if self._parser is not None:
            if length and r is not None and r.kind == "tool":
                r.length_cut = True
            message, events = self._parser.finalize()
            self._handle(events, out)
            self.message = message
        self._settle_deferred(out, "length" if length else "malformed")
        if self._parser is not None:
            pass
        elif r is not None:  # events mode, and the producer's final events never came
            if r.kind == "tool":
                kind = "length" if length else "malformed"
                for call in r.calls:
                    self._flag(call, kind, "the stream ended inside this tool call", out, in_message=False)
            self._open = None  # (a text region's held trailing whitespace is dropped, as at a close)
        elif length and self._tail_tool is not None:
            for call in self._tail_tool.calls:
                self._flag(
                    call,
                    "length",
                    "generation stopped at the token limit right after this tool call (it may be incomplete)",
                    out,
                    in_message=call.done,
                )
        self._finished = True
        if finish_reason in (None, "stop"):
            finish_reason = "tool_calls" if any(c.done for c in self._calls) else "stop"
        self.finish_reason = finish_reason
        if self._held:
            out, self._held, self._held_chars = self._held + out, [], 0
        return _merge(out)

    def partial_value(self) -> Any:
        """The partial parsed content of the open json / xml-inline / python-call-list region, or None."""
        r = self._open
        if r is None or r.kind == "text":
            return None
        if r.partial is None:
            return None
        try:
            return r.partial.snapshot()
        except Exception:  # noqa: BLE001 - a partial view must never break the stream
            return None

    @property
    def current_field(self) -> str | None:
        """The template field being streamed now (None between regions)."""
        return None if self._open is None else self._open.name

    @property
    def errors(self) -> list:
        """The parser's errors (text mode), as `ResponseParser.errors`."""
        return self._parser.errors if self._parser is not None else []

    # chunk helpers ------------------------------------------------------

    def chunk(self, delta: Mapping[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        """Wrap one delta into a ``chat.completion.chunk`` dict."""
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": self.choice_index,
                    "delta": dict(delta),
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
        }

    def usage_chunk(self, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
        """The last chunk a server sends when the request asked ``stream_options: {"include_usage": true}``:
        no choices, the token counts (which the caller knows: this stream sees text, not tokens)."""
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": _usage(prompt_tokens, completion_tokens),
        }

    def feed_chunks(self, text: str) -> list[dict[str, Any]]:
        """`feed`, with each delta wrapped by `chunk`."""
        return [self.chunk(d) for d in self.feed(text)]

    def feed_events_chunks(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """`feed_events`, with each delta wrapped by `chunk`."""
        return [self.chunk(d) for d in self.feed_events(events)]

    def finish_chunks(self, finish_reason: str | None = None) -> list[dict[str, Any]]:
        """`finish`, as chunks: the last deltas, then an empty delta carrying ``finish_reason``."""
        deltas = self.finish(finish_reason)
        return [self.chunk(d) for d in deltas] + [self.chunk({}, self.finish_reason)]

    # ------------------------------------------------------------------ event handling

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("this DeltaStream has finished; create one per generation")

    def _begin(self) -> list[dict]:
        if self._started:
            return []
        self._started = True
        out = [{"role": self._role}] + self._pending
        self._pending = []
        return out

    def _handle(self, events: list, out: list[dict]) -> None:
        for ev in events:
            kind = ev.get("type")
            try:
                if kind == "region_chunk":
                    self._on_chunk(ev, out)
                elif kind == "region_open":
                    self._on_open(ev, out)
                elif kind == "region_close":
                    self._on_close(ev, out, malformed=False)
                elif kind == "region_malformed":
                    self._on_close(ev, out, malformed=True)
                elif kind == "delimiter":
                    self._on_delimiter(ev)
            except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                self.warnings.append(f"{type(e).__name__}: {e} (event {kind})")
        r = self._open
        if r is not None and r.kind == "tool":
            if r.captures is None and self._parser is not None and self._parser.current_field == r.name:
                r.captures = self._parser.captures
                r.dirty = True
            if r.dirty:
                r.dirty = False
                try:
                    self._update_tool(r, out)
                except Exception as e:  # noqa: BLE001
                    self.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")

    def _on_delimiter(self, ev: Mapping) -> None:
        if ev.get("kind") != "open" or self._kind.get(ev.get("field")) != "tool" or not self._model_ids:
            return
        text = ev.get("text") or ""
        for pattern in _MODEL_ID_PATTERNS:
            m = pattern.search(text)
            if m is not None:
                self._delimiter_id = m.group("id")
                return

    def _on_open(self, ev: Mapping, out: list[dict]) -> None:
        name = ev["field"]
        kind = self._kind.get(name, "value")
        captures = ev.get("captures")
        content = self._tpl.by_name[name].content
        pargs = self._partial_args.get(name)
        self._open = r = _Region(
            name,
            kind,
            content,
            dict(captures) if isinstance(captures, dict) else None,
            None if pargs is None or kind == "text" else partial_parser(content, pargs),
        )
        self._tail_tool = None
        self._settle_deferred(out, "malformed")
        if kind == "tool":
            r.dirty = True
            r.model_id, self._delimiter_id = self._delimiter_id, None
        elif kind == "text":
            st = self._text[name]
            join = self._tpl.by_name[name].join
            key = r.key = self._key[name]
            r.strip = self._strip[name]
            if join is not None and st.regions > 0 and join and key:
                out.append({key: join})
            st.regions += 1

    def _on_chunk(self, ev: Mapping, out: list[dict]) -> None:
        r = self._open
        if r is None or r.name != ev.get("field"):
            self.warnings.append(f"region_chunk for {ev.get('field')!r} outside its region")
            return
        text = ev.get("text")
        if not text:
            return
        if r.kind != "text":
            if r.partial is not None:
                r.partial.feed(text)
            r.dirty = True
            return
        key = r.key
        if key is None:
            return
        if not r.started:
            if r.strip:
                text = text.lstrip()
                if not text:
                    return
            r.started = True
            st = self._text[r.name]
            if self._tpl.by_name[r.name].join is None and st.nonempty:
                out.append({key: "\n"})
            st.nonempty = True
        if not r.strip:
            r.sent.append(text)
            if len(r.sent) >= _COMPACT_AT:
                r.sent[:] = ["".join(r.sent)]
            out.append({key: text})
            return
        if r.held:
            text = r.held + text
        core = text.rstrip()
        if len(core) != len(text):
            r.held = text[len(core) :]
            if not core:
                return
        elif r.held:
            r.held = ""
        sent = r.sent
        sent.append(core)
        if len(sent) >= _COMPACT_AT:
            sent[:] = ["".join(sent)]
        out.append({key: core})

    def _on_close(self, ev: Mapping, out: list[dict], malformed: bool) -> None:
        r = self._open
        name = ev.get("field")
        self._open = None
        if r is None or r.name != name:
            self.warnings.append(f"close of {name!r} without its open")
            r = _Region(name, self._kind.get(name, "value"), "", None)
        self._tail_tool = r if r.kind == "tool" else None
        if malformed:
            item = self._unparsed_item(ev)
            self._add_unparsed(item, out)
            if r.kind == "tool" and r.calls:
                msg = item.get("error") or "the tool call could not be parsed"
                if r.length_cut:
                    self._flag_all(r, "length", _LENGTH_PREFIX + msg, out)
                elif self._parser is None and ev.get("at_end"):
                    # events mode: the producer closed the region at the end of the stream; whether the
                    # token limit cut it is only known when `finish` is called
                    self._deferred = (r, msg)
                else:
                    self._flag_all(r, "malformed", msg, out)
            return
        value = ev.get("value")
        if r.kind == "tool":
            self._close_tool(r, value, out)
        elif r.kind == "text":
            key = r.key
            if key is None or not isinstance(value, str):
                return
            sent = "".join(r.sent)
            if value != sent:  # cannot happen while this adapter mirrors the engine; never hide it
                if r.started and value.startswith(sent):
                    out.append({key: value[len(sent) :]})
                self.warnings.append(f"text of {r.name!r} streamed as {sent!r} but parsed as {value!r}")
        else:
            key = self._key[r.name]
            if key is not None:
                f = self._tpl.by_name[r.name]
                out.append({key: [value] if (f.repeats and f.join is None) else value})

    def _flag_all(self, r: _Region, kind: str, msg: str, out: list[dict]) -> None:
        for call in r.calls:
            self._flag(call, kind, msg, out, in_message=False)

    def _settle_deferred(self, out: list[dict], kind: str) -> None:
        if self._deferred is not None:
            r, msg = self._deferred
            self._deferred = None
            self._flag_all(r, kind, (_LENGTH_PREFIX if kind == "length" else "") + msg, out)

    def _add_unparsed(self, item: dict, out: list[dict]) -> None:
        """An ``unparsed`` record; consecutive ones (of one feed) go into one delta."""
        record = {"index": self._unparsed, **item}
        self._unparsed += 1
        if out:
            last = out[-1]
            if len(last) == 1 and isinstance(last.get("unparsed"), list):
                last["unparsed"].append(record)
                return
        out.append({"unparsed": [record]})

    def _unparsed_item(self, ev: Mapping) -> dict:
        item = {
            "field": ev.get("field"),
            "text": ev.get("text"),
            "error": ev.get("error"),
            "position": ev.get("position"),
        }
        if self._parser is not None and "position" not in ev:
            for e in reversed(self._parser.errors):
                if id(e) in self._used_errors:
                    continue
                if e.field == item["field"] and e.text == item["text"] and e.error == item["error"]:
                    self._used_errors.add(id(e))
                    return e.as_dict()
        return item

    # ------------------------------------------------------------------ tool calls

    def _new_id(self, index: int) -> str:
        if self._id_factory is not None:
            return self._id_factory(index)
        return _call_id(self._rng)

    def _announce(self, r: _Region, name: str, call_id: str | None, out: list[dict]) -> _Call:
        index = self._next_index
        self._next_index += 1
        if call_id is None and not r.calls and r.model_id:
            call_id = r.model_id
        if call_id is None or call_id in self._ids:  # ids stay unique even if the model repeats one
            call_id = self._new_id(index)
        self._ids.add(call_id)
        call = _Call(index, call_id, name)
        r.calls.append(call)
        self._calls.append(call)
        out.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": _scrub(name), "arguments": ""},
                    }
                ]
            }
        )
        return call

    def _send(self, call: _Call, piece: str, out: list[dict]) -> None:
        if not piece.isascii() and _SURROGATE.search(piece):
            piece = _SURROGATE.sub("\ufffd", piece)
        parts = call.parts
        parts.append(piece)
        if len(parts) >= _COMPACT_AT:
            parts[:] = ["".join(parts)]
        out.append({"tool_calls": [{"index": call.index, "function": {"arguments": piece}}]})

    def _advance(self, call: _Call, stable: str, out: list[dict]) -> None:
        """Send what `stable` (the complete arguments text, scrubbed) adds to what was sent."""
        if call.stuck:
            return
        sent = call.sent
        if stable.startswith(sent):
            if len(stable) > len(sent):
                self._send(call, stable[len(sent) :], out)
        elif not sent.startswith(stable):
            call.stuck = True

    def _flag(self, call: _Call, kind: str, message: str, out: list[dict], *, in_message: bool) -> None:
        if call.error is not None:
            return
        call.error = {"type": kind, "message": message, "in_message": in_message}
        # "function" keeps the OpenAI SDK's stream helpers happy (they expect it on every tool-call delta)
        out.append(
            {"tool_calls": [{"index": call.index, "function": {"arguments": ""}, "error": dict(call.error)}]}
        )

    def _sources(self, shape: _Shape, base: tuple, value: Any, captures: dict) -> tuple:
        if shape.dynamic:
            fn = base + shape.fn_keys
            node = _get(value, fn)
            if isinstance(node, dict) and isinstance(node.get("function"), dict):
                fn = fn + ("function",)
            return ("path", fn + ("name",)), ("path", fn + ("arguments",)), None

        def src(ref: tuple | None) -> tuple | None:
            if ref is None or ref[0] != "ref":
                return ref
            _, root, keys = ref
            if shape.each:
                elem = _get(value, base)
                if isinstance(elem, dict) and root in elem:
                    return ("path", base + (root,) + keys)
            elif root == "content":
                return ("path", base + keys)
            if root in captures:
                return ("cap", captures[root], keys)
            return None

        return src(shape.name), src(shape.args), src(shape.id)

    @staticmethod
    def _resolve(src: tuple | None, partial: Any) -> tuple[str, Any, tuple | None]:
        if src is None:
            return "missing", None, None
        kind = src[0]
        if kind == "lit":
            return "complete", src[1], None
        if kind == "complex":
            return "unknown", None, None
        if kind == "cap":
            v = _get(src[1], src[2])
            return ("missing", None, None) if v is _MISSING else ("complete", v, None)
        path = src[1]
        if partial is None:
            return "missing", None, path
        v = _get(partial.value, path)
        if v is _MISSING:
            return "missing", None, path
        return ("complete" if partial.complete(path) else "partial"), v, path

    def _update_tool(self, r: _Region, out: list[dict]) -> None:
        """Announce the calls whose name is known and send the arguments that became stable."""
        if self._validated:
            return
        p = r.partial
        if p is not None:
            if p.version == r.version:  # no member started or ended: only an open string can have grown
                if r.streaming is not None:
                    self._stream_string(r.streaming, out)
                return
            r.version = p.version
            if p.broken:
                return
        fast = r.fast
        if fast is not None:  # one call's arguments object is open: only its members can move
            call, node, frame = fast
            if p.stack and p.stack[-1] is frame or p.frame(node) is frame:
                self._members(r, call, node, frame, p, out)
                return
            r.fast = None
        shape = self._shape[r.name]
        if not shape.streamable:
            return
        value = _MISSING if p is None else p.value
        captures = r.captures or {}
        listy = shape.each or (shape.dynamic and isinstance(value, list))
        if listy:
            if not isinstance(value, list):
                return
            start = r.first_active
            bases = [(j,) for j in range(start, len(value))]
        else:
            start, bases = 0, [()]
        for j, base in enumerate(bases, start):
            name_src, args_src, id_src = self._sources(shape, base, value, captures)
            if j < len(r.calls):
                call = r.calls[j]
            else:
                status, name, _ = self._resolve(name_src, p)
                if status != "complete" or not isinstance(name, str) or not name:
                    break
                status, call_id, _ = self._resolve(id_src, p)
                call = self._announce(
                    r,
                    name,
                    call_id if status == "complete" and isinstance(call_id, str) and call_id else None,
                    out,
                )
            if not call.final and not call.stuck:
                self._update_args(r, call, args_src, p, out)
            if listy and (call.final or call.stuck) and j == r.first_active:
                r.first_active += 1

    def _update_args(self, r: _Region, call: _Call, src: tuple | None, p: Any, out: list[dict]) -> None:
        status, value, path = self._resolve(src, p)
        if status == "complete":
            if r.streaming is call:
                self._stream_string(call, out)  # the rest of a string member (its pieces are kept)
                r.streaming = None
            self._advance(call, _scrub(_dumps(self._typed_args(call.name, value))), out)
            call.final = True
            return
        if status != "partial" or not isinstance(value, dict):
            return  # nothing yet, or an open list / scalar as the arguments: wait for it to complete
        frame = p.frame(value)
        if frame is None:
            return
        if not call.opened:
            call.opened = True
            self._send(call, "{", out)
        r.fast = (call, value, frame)
        self._members(r, call, value, frame, p, out)

    def _members(self, r: _Region, call: _Call, value: dict, frame: Any, p: Any, out: list[dict]) -> None:
        """Send the members of an open arguments object that became complete, and its open string."""
        name = call.name
        keys = frame.keys
        n = call.members
        while n < len(keys):
            key = keys[n]
            if key == frame.open_key:
                break
            member = value[key]
            typed = self._type_member(name, key, member)
            if call.str_key is not None and call.str_key == key:
                self._stream_string(call, out)
                call.str_key = None
                r.streaming = None
                if typed is member or (isinstance(typed, str) and typed == member):
                    self._send(call, '"', out)
                else:
                    call.stuck = True  # typing changed a streamed string: the close decides
                    return
            else:
                self._send(call, (", " if n else "") + _dumps(key) + ": " + _dumps(typed), out)
            n += 1
        call.members = n
        if n < len(keys) and call.str_key is None:
            key = keys[n]
            chunks = p.open_string(frame)
            if chunks is not None and self._string_stays(name, key):
                self._send(call, (", " if n else "") + _dumps(key) + ': "', out)
                call.str_key, call.str_chunks, call.str_idx = key, chunks, 0
                r.streaming = call
        if r.streaming is call:
            self._stream_string(call, out)

    def _stream_string(self, call: _Call, out: list[dict]) -> None:
        chunks = call.str_chunks
        i = call.str_idx
        if len(chunks) > i:
            new = chunks[i] if len(chunks) == i + 1 else "".join(chunks[i:])
            call.str_idx = len(chunks)
            self._send(call, _encode_string(new)[1:-1], out)

    def _params(self, name: str) -> Mapping | None:
        if not self._tools:
            return None
        params = self._tools.by_name.get(name)
        if not params:
            return None
        props = params.get("properties")
        return props if isinstance(props, dict) else None

    def _type_member(self, name: str, key: str, value: Any) -> Any:
        props = self._params(name)
        if props is not None and key in props:
            return cast_value(value, props[key])
        return value

    def _typed_args(self, name: str, value: Any) -> Any:
        if isinstance(value, dict) and self._params(name) is not None:
            return {k: self._type_member(name, k, v) for k, v in value.items()}
        return value

    def _string_stays(self, name: str, key: str) -> bool:
        """Whether a string value for this parameter stays a string after tool-argument typing."""
        props = self._params(name)
        if props is None or key not in props or not isinstance(props[key], Mapping):
            return True
        return admits_string(props[key])

    def _close_tool(self, r: _Region, value: Any, out: list[dict]) -> None:
        items = value if isinstance(value, list) else [value]
        for j, item in enumerate(items):
            fn = (
                item.get("function")
                if isinstance(item, dict) and isinstance(item.get("function"), dict)
                else item
            )
            name = fn.get("name") if isinstance(fn, dict) else None
            has_args = isinstance(fn, dict) and "arguments" in fn
            args = _scrub(_dumps(fn["arguments"])) if has_args else ""
            if j < len(r.calls):
                call = r.calls[j]
                if call.stuck or call.name != name or not args.startswith(call.sent):
                    self._flag(
                        call,
                        "inconsistent",
                        "the parsed tool call differs from what was streamed "
                        f"(name {name!r}, arguments {args})",
                        out,
                        in_message=True,
                    )
                else:
                    self._advance(call, args, out)
            else:
                call_id = item.get("id") if isinstance(item, dict) else None
                shown = name if isinstance(name, str) else ""
                call = self._announce(
                    r, shown, call_id if isinstance(call_id, str) and call_id else None, out
                )
                self._advance(call, args, out)
                if not isinstance(name, str) or not name:
                    self._flag(
                        call,
                        "invalid",
                        f"the parsed tool call has no function name: {_dumps(item)}",
                        out,
                        in_message=True,
                    )
            call.done = True
        for call in r.calls[len(items) :]:
            self._flag(
                call,
                "inconsistent",
                "this streamed tool call is not in the parsed message",
                out,
                in_message=False,
            )
        if r.length_cut:
            for call in r.calls:
                self._flag(
                    call,
                    "length",
                    "generation stopped at the token limit inside this tool call; "
                    "its arguments hold what was complete",
                    out,
                    in_message=True,
                )


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _delta_chars(delta: Mapping) -> int:
    n = 0
    for value in delta.values():
        if isinstance(value, str):
            n += len(value)
        elif isinstance(value, list):
            for item in value:
                fn = item.get("function") if isinstance(item, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    n += len(fn["arguments"])
    return n


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
        fn = call.get("function") if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping) else call
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


def _call_id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choice(_ID_CHARS) for _ in range(24))


def _merge(deltas: list[dict]) -> list[dict]:
    """Join consecutive text pieces of one key and consecutive argument pieces of one call."""
    out: list[dict] = []
    for d in deltas:
        if out:
            last = out[-1]
            if len(d) == 1 and len(last) == 1:
                ((key, value),) = d.items()
                ((lkey, lvalue),) = last.items()
                if key == lkey and isinstance(value, str) and isinstance(lvalue, str):
                    last[key] = lvalue + value
                    continue
                if key == lkey == "tool_calls" and len(value) == 1 and len(lvalue) == 1:
                    entry, lentry = value[0], lvalue[-1]
                    fn = entry.get("function")
                    if (
                        lentry.get("index") == entry.get("index")
                        and set(entry) == {"index", "function"}
                        and isinstance(fn, dict)
                        and set(fn) == {"arguments"}
                        and "error" not in lentry
                        and isinstance(lentry.get("function"), dict)
                    ):
                        lfn = lentry["function"]
                        lfn["arguments"] = lfn.get("arguments", "") + fn["arguments"]
                        continue
        out.append(d)
    return out
