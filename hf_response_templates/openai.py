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

import jiter

from hf_response_templates.content import DEFAULT_REGEX_TIMEOUT, get_content_parser
from hf_response_templates.parser import ResponseParser
from hf_response_templates.template import ResponseTemplate, load_template
from hf_response_templates.tools import ToolSchemas, admits_string, cast_value, tool_schemas
from hf_response_templates.transform import _PLACEHOLDER  # "{content.args}": the same syntax as transforms

__all__ = ["DeltaStream", "SSE_DONE", "sse", "accumulate_deltas"]

#: The line an OpenAI-style server sends after the last chunk.
SSE_DONE = "data: [DONE]\n\n"

_MISSING = object()
_ID_CHARS = string.ascii_letters + string.digits
_REASONING_NAMES = ("reasoning_content", "reasoning", "thinking")
_FINISH_REASONS = (None, "stop", "length", "tool_calls", "content_filter")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


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


# --------------------------------------------------------------------------- partial values


class _JsonPartial:
    """A partial JSON value and which of its nodes are final.

    A node is final when the text has moved past it (it is not on the "right spine": some container on
    its path has a later member), or when it is a string whose closing quote was seen. Everything else
    (the last member of every open container, numbers that may get more digits) can still change.
    """

    __slots__ = ("value", "closed_strings")

    def __init__(self, value: Any, closed_strings: Any):
        self.value = value
        self.closed_strings = closed_strings  # the same parse with incomplete strings dropped

    def complete(self, path: tuple) -> bool:
        node = self.value
        for key in path:
            if isinstance(node, dict):
                if key not in node:
                    return False
                last = next(reversed(node)) == key
            elif isinstance(node, list) and isinstance(key, int):
                if key >= len(node):
                    return False
                last = key == len(node) - 1
            else:
                return False
            if not last:
                return True
            node = node[key]
        if isinstance(node, str):
            other = _get(self.closed_strings, path)
            return isinstance(other, str) and other == node
        return False


class _OpenRootPartial:
    """Members are final, the root (a dict of parameters or a list of calls) is still open."""

    __slots__ = ("value", "members_final")

    def __init__(self, value: Any, members_final: bool = True):
        self.value = value
        self.members_final = members_final

    def complete(self, path: tuple) -> bool:
        return bool(path) and self.members_final


_BARE_KEY = re.compile(r"[A-Za-z_$][\w$-]*")
_WS = re.compile(r"[ \t\n\r]*")


def _lax_to_json(body: str, unquoted_keys: bool, delims: tuple) -> str:
    """Rewrite a prefix of the `json` parser's dialect (bare keys, custom string delimiters) as a prefix of
    standard JSON, for jiter. Text that may still change meaning (a bare key not yet followed by ':', the
    start of a closing string delimiter) ends the output."""
    out: list[str] = []
    stack: list[str] = []
    expect_key = False
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        opened = next((pair for pair in delims if body.startswith(pair[0], i)), None)
        if opened is not None:
            start = i + len(opened[0])
            end = body.find(opened[1], start)
            if end < 0:
                text = body[start:]
                close = opened[1]
                for k in range(min(len(close) - 1, len(text)), 0, -1):
                    if text.endswith(close[:k]):
                        text = text[:-k]
                        break
                out.append(json.dumps(text, ensure_ascii=False)[:-1])
                break
            out.append(json.dumps(body[start:end], ensure_ascii=False))
            i = end + len(opened[1])
            expect_key = False
            continue
        if c == '"':
            j = i + 1
            while j < n and body[j] != '"':
                j += 2 if body[j] == "\\" else 1
            out.append(body[i : j + 1])
            i = j + 1
            expect_key = False
            continue
        if expect_key and unquoted_keys:
            m = _BARE_KEY.match(body, i)
            if m is not None:
                after = _WS.match(body, m.end()).end()
                if after >= n or m.end() >= n:
                    break  # the key may go on
                if body[after] == ":":
                    out.append(json.dumps(m.group()))
                    i = m.end()
                    expect_key = False
                    continue
        if c in "{[":
            stack.append(c)
        elif c in "}]" and stack:
            stack.pop()
        if c in "{,":
            expect_key = bool(stack) and stack[-1] == "{"
        elif not c.isspace():
            expect_key = False
        out.append(c)
        i += 1
    return "".join(out)


def _json_partial(body: str, dialect: tuple | None = None) -> _JsonPartial | None:
    if dialect is not None:
        body = _lax_to_json(body, *dialect)
    if not body.strip():
        return None
    try:
        data = body.encode("utf-8")
        kw = dict(cache_mode="keys", catch_duplicate_keys=True)
        value = jiter.from_json(data, partial_mode="trailing-strings", **kw)
        closed = jiter.from_json(data, partial_mode="on", **kw)
    except (ValueError, UnicodeEncodeError):
        return None
    return _JsonPartial(value, closed)


_REGEX_META = set("\\.^$*+?{}[]|()")


def _last_literal(source: str) -> str | None:
    """The character every match of `source` ends with, when the regex visibly ends with a literal."""
    if len(source) < 2 or "|" in source or source[-1] in _REGEX_META or source[-2] in _REGEX_META:
        return None
    return source[-1]


# --------------------------------------------------------------------------- per-stream state


class _Call:
    __slots__ = ("index", "id", "name", "sent", "stuck", "error", "done")

    def __init__(self, index: int, call_id: str, name: str):
        self.index = index
        self.id = call_id
        self.name = name
        self.sent = ""  # arguments text sent so far
        self.stuck = False  # the stable text stopped extending what was sent: wait for the close
        self.error: dict | None = None
        self.done = False


class _TextState:
    __slots__ = ("regions", "nonempty")

    def __init__(self) -> None:
        self.regions = 0
        self.nonempty = False


class _Region:
    __slots__ = (
        "name",
        "kind",
        "content",
        "body",
        "captures",
        "calls",
        "dirty",
        "started",
        "held",
        "sent",
        "xml_end",
        "xml_value",
        "xml_scanned",
        "xml_pending",
        "pcl_scan",
        "pcl_calls",
        "length_cut",
    )

    def __init__(self, name: str, kind: str, content: str, captures: dict | None):
        self.name = name
        self.kind = kind  # "text" | "tool" | "value"
        self.content = content
        self.body = ""
        self.captures = captures  # None: not known yet
        self.calls: list[_Call] = []
        self.dirty = False
        self.started = False
        self.held = ""
        self.sent = ""
        self.xml_end = 0
        self.xml_value: Any = None
        self.xml_scanned = 0
        self.xml_pending = False
        self.pcl_scan = 0
        self.pcl_calls: list = []
        self.length_cut = False


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
            parser = None if _events_only else ResponseParser(tpl, prefix, tools=tools)
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
        self._xml_args: dict[str, Any] = {}
        self._dialect: dict[str, tuple] = {}  # json fields with bare keys / custom string delimiters
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
            if f.content == "json" and (cargs.get("unquoted_keys") or cargs.get("string_delims")):
                delims = tuple(tuple(p) for p in cargs.get("string_delims") or ())
                self._dialect[f.name] = (bool(cargs.get("unquoted_keys")), delims)
            elif f.content == "xml-inline":
                self._xml_args[f.name] = get_content_parser("xml-inline").compile_args(cargs, f.name)
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
        """Add generated text; return the deltas it completes (possibly none). Never raises for model output."""
        if self._parser is None:
            raise RuntimeError("this DeltaStream consumes events (for_events): use feed_events()")
        self._check_open()
        out = self._begin()
        if text:
            self._handle(self._parser.feed(text), out)
        return _merge(out)

    def feed_events(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add parser events (``parser.initial_events``, ``feed()`` results, final events); return deltas."""
        self._check_open()
        out = self._begin()
        self._handle(list(events), out)
        return _merge(out)

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
        return _merge(out)

    def partial_value(self) -> Any:
        """The partial parsed content of the open json / xml-inline / python-call-list region, or None."""
        r = self._open
        if r is None or r.kind == "text":
            return None
        try:
            p = self._partial(r)
        except Exception:  # noqa: BLE001 - a partial view must never break the stream
            return None
        return None if p is None else p.value

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
            "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish_reason}],
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
                if kind == "region_open":
                    self._on_open(ev, out)
                elif kind == "region_chunk":
                    self._on_chunk(ev, out)
                elif kind == "region_close":
                    self._on_close(ev, out, malformed=False)
                elif kind == "region_malformed":
                    self._on_close(ev, out, malformed=True)
                elif kind == "text_unclaimed":  # text outside every region: an `unparsed` record, field None
                    out.append({"unparsed": [{"index": self._unparsed, **self._unparsed_item(ev)}]})
                    self._unparsed += 1
                else:
                    continue
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

    def _on_open(self, ev: Mapping, out: list[dict]) -> None:
        name = ev["field"]
        kind = self._kind.get(name, "value")
        captures = ev.get("captures")
        self._open = r = _Region(
            name,
            kind,
            self._tpl.by_name[name].content,
            dict(captures) if isinstance(captures, dict) else None,
        )
        self._tail_tool = None
        if kind == "tool":
            r.dirty = True
        elif kind == "text":
            st = self._text[name]
            join = self._tpl.by_name[name].join
            key = self._key[name]
            if join is not None and st.regions > 0 and join and key:
                out.append({key: join})
            st.regions += 1

    def _on_chunk(self, ev: Mapping, out: list[dict]) -> None:
        r = self._open
        text = ev.get("text") or ""
        if r is None or r.name != ev.get("field"):
            self.warnings.append(f"region_chunk for {ev.get('field')!r} outside its region")
            return
        if r.kind != "text":
            r.body += text
            r.dirty = True
            return
        key = self._key[r.name]
        if key is None or not text:
            return
        st = self._text[r.name]
        join = self._tpl.by_name[r.name].join
        if not self._strip[r.name]:
            if not r.started:
                r.started = True
                if join is None and st.nonempty:
                    out.append({key: "\n"})
                st.nonempty = True
            r.sent += text
            out.append({key: text})
            return
        if not r.started:
            text = text.lstrip()
            if not text:
                return
            r.started = True
            if join is None and st.nonempty:
                out.append({key: "\n"})
            st.nonempty = True
        body = r.held + text
        core = body.rstrip()
        r.held = body[len(core) :]
        if core:
            r.sent += core
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
            out.append({"unparsed": [{"index": self._unparsed, **item}]})
            self._unparsed += 1
            if r.kind == "tool":
                kind = "length" if r.length_cut else "malformed"
                msg = item.get("error") or "the tool call could not be parsed"
                if r.length_cut:
                    msg = "generation stopped at the token limit inside this tool call: " + msg
                for call in r.calls:
                    self._flag(call, kind, msg, out, in_message=False)
            return
        value = ev.get("value")
        if r.kind == "tool":
            self._close_tool(r, value, out)
        elif r.kind == "text":
            key = self._key[r.name]
            if key is None or not isinstance(value, str):
                return
            if value != r.sent:  # cannot happen while this adapter mirrors the engine; never hide it
                if r.started and value.startswith(r.sent):
                    out.append({key: value[len(r.sent) :]})
                self.warnings.append(f"text of {r.name!r} streamed as {r.sent!r} but parsed as {value!r}")
        else:
            key = self._key[r.name]
            if key is not None:
                f = self._tpl.by_name[r.name]
                out.append({key: [value] if (f.repeats and f.join is None) else value})

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
        return "call_" + "".join(self._rng.choice(_ID_CHARS) for _ in range(24))

    def _announce(self, r: _Region, name: str, call_id: str | None, out: list[dict]) -> _Call:
        index = self._next_index
        self._next_index += 1
        call = _Call(index, call_id or self._new_id(index), name)
        r.calls.append(call)
        self._calls.append(call)
        out.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ]
            }
        )
        return call

    def _advance(self, call: _Call, stable: str | None, out: list[dict]) -> None:
        if stable is None or call.stuck:
            return
        if stable.startswith(call.sent):
            piece = stable[len(call.sent) :]
            if piece:
                call.sent = stable
                out.append({"tool_calls": [{"index": call.index, "function": {"arguments": piece}}]})
        elif not call.sent.startswith(stable):
            call.stuck = True

    def _flag(self, call: _Call, kind: str, message: str, out: list[dict], *, in_message: bool) -> None:
        if call.error is not None:
            return
        call.error = {"type": kind, "message": message, "in_message": in_message}
        # "function" keeps the OpenAI SDK's stream helpers happy (they expect it on every tool-call delta)
        out.append(
            {"tool_calls": [{"index": call.index, "function": {"arguments": ""}, "error": dict(call.error)}]}
        )

    def _partial(self, r: _Region) -> Any:
        content = r.content
        if content == "json":
            return _json_partial(r.body, self._dialect.get(r.name))
        if content == "xml-inline":
            return self._xml_partial(r)
        if content == "python-call-list":
            return self._pcl_partial(r)
        return None

    def _xml_partial(self, r: _Region) -> _OpenRootPartial:
        args = self._xml_args[r.name]
        pattern = args["tag_pattern"]
        body = r.body
        pos = r.xml_end
        moved = False
        members_final = not args.get("merge_duplicates", False)
        # Searching again is only worth it when a match may have completed: when the pattern ends with a
        # literal character (the '>' of "</parameter>"), a new match needs one in the new text.
        trigger = _last_literal(pattern.pattern)
        if (
            r.xml_value is not None
            and not r.xml_pending
            and trigger is not None
            and trigger not in body[r.xml_scanned :]
        ):
            r.xml_scanned = len(body)
            return _OpenRootPartial(r.xml_value, members_final)
        r.xml_scanned = len(body)
        r.xml_pending = False
        while True:
            m = pattern.search(body, pos, timeout=DEFAULT_REGEX_TIMEOUT)
            if m is None or m.end() == m.start():
                break
            if m.end() >= len(body):
                r.xml_pending = True  # at the edge: the next character decides
                break
            # more text must not change this match: probe two continuations (an unrelated character,
            # and the match's own text, which carries its closing tag: a greedy pattern would grow)
            stable = True
            for tail in ("\x00", body[m.start() : m.end()]):
                p = pattern.search(body + tail, pos, timeout=DEFAULT_REGEX_TIMEOUT)
                if p is None or p.span() != m.span() or p.groupdict() != m.groupdict():
                    stable = False
                    break
            if not stable:
                r.xml_pending = True
                break
            pos = m.end()
            moved = True
        if moved or r.xml_value is None:
            r.xml_end = pos
            r.xml_value = get_content_parser("xml-inline").parse(body[:pos], args) if pos else {}
        return _OpenRootPartial(r.xml_value, members_final)

    def _pcl_partial(self, r: _Region) -> _OpenRootPartial:
        body = r.body
        parse = get_content_parser("python-call-list").parse
        i = body.find(")", r.pcl_scan)
        while i >= 0:
            cand = body[: i + 1]
            text = cand + "]" if cand.lstrip().startswith("[") else cand
            try:
                r.pcl_calls = parse(text, {})
            except ValueError:
                pass
            r.pcl_scan = i + 1
            i = body.find(")", i + 1)
        return _OpenRootPartial(r.pcl_calls)

    def _elements(self, shape: _Shape, value: Any) -> list[tuple]:
        if shape.each or (shape.dynamic and isinstance(value, list)):
            return [(j,) for j in range(len(value))] if isinstance(value, list) else []
        return [()]

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
        v = _get(partial.value, path)
        if v is _MISSING:
            return "missing", None, path
        return ("complete" if partial.complete(path) else "partial"), v, path

    def _update_tool(self, r: _Region, out: list[dict]) -> None:
        shape = self._shape[r.name]
        if not shape.streamable:
            return
        partial = self._partial(r)
        captures = r.captures or {}
        if partial is None:  # nothing parseable yet: a name from the open delimiter can still be announced
            partial = _OpenRootPartial(_MISSING)
        for j, base in enumerate(self._elements(shape, partial.value)):
            name_src, args_src, id_src = self._sources(shape, base, partial.value, captures)
            if j < len(r.calls):
                call = r.calls[j]
            else:
                status, name, _ = self._resolve(name_src, partial)
                if status != "complete" or not isinstance(name, str) or not name:
                    break
                status, call_id, _ = self._resolve(id_src, partial)
                call = self._announce(
                    r,
                    name,
                    call_id if status == "complete" and isinstance(call_id, str) and call_id else None,
                    out,
                )
            status, value, path = self._resolve(args_src, partial)
            self._advance(call, self._stable_args(call.name, status, value, path, partial), out)

    def _stable_args(
        self, name: str, status: str, value: Any, path: tuple | None, partial: Any
    ) -> str | None:
        if status == "missing":
            return ""
        if status == "unknown":
            return None
        if status == "complete":
            return _dumps(self._typed_args(name, value))
        if not isinstance(value, dict):
            return ""  # an open list or scalar as the arguments: wait for it to complete
        parts = []
        for key, member in value.items():
            if partial.complete(path + (key,)):
                parts.append(_dumps(key) + ": " + _dumps(self._type_member(name, key, member)))
                continue
            if isinstance(member, str) and self._string_stays(name, key):
                parts.append(_dumps(key) + ": " + _dumps(member)[:-1])
            break  # only the last member can be incomplete
        return "{" + ", ".join(parts)

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
            args = _dumps(fn["arguments"]) if has_args else ""
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
