"""`DeltaStream`: parser events -> OpenAI ``chat.completion.chunk`` deltas (documented in
`hf_response_templates.openai`, the public module)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from hf_response_templates.delta_hot import _LAG_AT, hot_feed, hot_text
from hf_response_templates.delta_json_hot import json_hot_feed
from hf_response_templates.delta_plan import stream_plan
from hf_response_templates.delta_state import (
    _COMPACT_AT,
    _FINISH_REASONS,
    _LENGTH_PREFIX,
    _MODEL_ID_PATTERNS,
    _SURROGATE,
    _any_strict,
    _Call,
    _compact,
    _delta_chars,
    _encode_string,
    _join_pieces,
    _merge,
    _Region,
    _Shape,
    _TextState,
    _unsink,
    _usage,
)
from hf_response_templates.delta_tools import ToolCallDeltas
from hf_response_templates.parser import ResponseParser
from hf_response_templates.partial import JsonPartial, partial_parser
from hf_response_templates.template import ResponseTemplate, load_template
from hf_response_templates.tools import ToolSchemas, tool_schemas

__all__ = ["DeltaStream"]

_INF = float("inf")
#: The error of streamed tool calls whose region became content (policy ``malformed_tool_calls='content'``).
_AS_TEXT = "the tool call does not parse; its raw text is content (policy malformed_tool_calls='content')"


class DeltaStream(ToolCallDeltas):
    """Turn one generation into OpenAI ``chat.completion.chunk`` deltas (see the module docs).

    Args:
        parser_or_template: a response template (dict or `ResponseTemplate`; then ``prefix`` is required and
            the stream owns a `ResponseParser`), or an existing `ResponseParser` (its tools are used; with
            ``model_ids``, it traces delimiters from then on, as ``trace=True`` does: the call ids a model writes
            are in them).
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
        tool_call_streaming: ``"incremental"`` or ``"validated"`` (see `hf_response_templates.openai`);
            None: "validated" if any of ``tools`` says ``"strict": true``, else "incremental".
        model_ids: keep the call ids the model writes (Mistral, Kimi K2) instead of generating them.
        choice_index: the ``index`` of this stream's choice in its chunks (``n > 1``: one stream each).
        coalesce_chars, coalesce_ms: hold deltas back across feeds until that many characters are held
            or that many milliseconds passed since the first one was held (see `flush`).
        clock: the time source for ``coalesce_ms`` (seconds; default `time.monotonic`).

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
        if tools is not None and not isinstance(tools, (list, tuple)):
            tools = list(tools)  # read twice: for the schemas and for "strict"
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
        self._pfeed: Callable[[str], list] = parser.feed if parser is not None else self._no_feed
        self._ptake: Callable[[str], bool] = parser.feed_region if parser is not None else self._no_feed
        # Text the parser takes later, in one piece (see `_take`): only with a parser of its own (the caller's
        # may be looked at between pieces)
        self._lag: list[str] = []
        self._lag_char: str | None = None
        self._lag_test: Callable[[str], Any] | None = None  # (`ResponseParser.region_test`, with `_lag_char`)
        # (`ResponseParser.region_holds`, with `_lag_char`; None: not asked yet, `delta_tail.cut_tail` asks)
        self._lag_holds: frozenset[str] | None = None
        self._tail = ""  # the sure beginning of a delimiter that ended the last piece, kept (`delta_tail.py`)
        if parser is not None and parser is not parser_or_template:
            self._region_take, self._region_char = parser.feed_region, parser.region_char
            self._region_test, self._region_holds = parser.region_test, parser.region_holds
            self._ptake = self._take
        self._tpl = tpl
        self._tools: ToolSchemas | None = schemas if schemas else None
        self._id_seed = id_seed
        self._made_rng = None  # (the seed's draws (`delta_ids.Draws`), looked up when the first id is drawn: `_draw`)
        self._completion_id = completion_id or None
        self._draw_completion_id = self._completion_id is None  # (the generator's first draw, even if replaced)
        self._drawn = 1 if self._draw_completion_id else 0  # the draw the next tool-call id is
        self._id_factory = id_factory
        self.model = model
        self.created = int(time.time()) if created is None else created
        #: the ``index`` of this stream's choice in the chunks (one DeltaStream per choice when ``n > 1``)
        self.choice_index = choice_index
        self._coalesce = coalesce_chars is not None or coalesce_ms is not None
        self._co_chars = coalesce_chars if coalesce_chars is not None else _INF
        self._co_secs = coalesce_ms / 1000 if coalesce_ms is not None else _INF
        self._clock = clock
        self._held: list[dict] = []  # coalescing: deltas not released yet
        self._held_chars = 0
        self._held_since = 0.0
        if not self._coalesce:
            self.feed = self._feed  # type: ignore[method-assign]  # one call less per piece
        self._role = tpl.defaults.get("role", "assistant")
        if not isinstance(self._role, str):
            self._role = "assistant"

        # (per field: kind, delta key, strip, tool-call shape; built once per template and options)
        plan, pargs = stream_plan(tpl, tool_call_fields, reasoning_field, content_field, field_keys)
        self._kind: dict[str, str] = plan.kind.copy()
        self._key: dict[str, str | None] = plan.key.copy()
        self._strip: dict[str, bool] = plan.strip.copy()
        self._shape: dict[str, _Shape] = plan.shape.copy()
        self._id_fields = plan.id_fields
        if parser is parser_or_template and model_ids and self._id_fields and not parser._trace:
            # The ids a model writes are in the text of its open delimiters, which only `delimiter` events carry: a
            # caller's parser traces delimiters from here on, as the stream's own does (`trace=model_ids`)
            parser._trace = True
        # fields whose content format has a partial parser: their compiled content args
        self._partial_args: dict[str, Any] = pargs
        self._text: dict[str, _TextState] = {name: _TextState() for name in plan.names}
        if tool_call_streaming is None:
            tool_call_streaming = "validated" if tools and _any_strict(tools) else "incremental"
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
        if parser is not None and parser.initial_events:
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

    @property
    def completion_id(self) -> str:
        """The ``id`` of this stream's chunks: ``completion_id`` if given, else ``"chatcmpl-"`` and 24 random
        characters (the first draw of the ``id_seed`` generator)."""
        if self._completion_id is None and self._draw_completion_id:
            self._completion_id = "chatcmpl-" + self._draw(0)
        return self._completion_id  # type: ignore[return-value]

    @completion_id.setter
    def completion_id(self, value: str) -> None:
        self._completion_id = value

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
        if self._tail:  # (`delta_tail.joined_feed` takes it first; here for any other way in)
            text, self._tail = self._tail + text, ""
        r = self._open
        if r is not None and self._started:
            # The hot paths, kept flat. `_ptake` is the parser's `feed_region`: True if all of the text went to
            # the open region (no event built), else False (always for "") and `_pfeed` (its `feed`: both raise
            # in events mode and once finished) returns the events.
            key = r.hot_key
            if key is not None:  # a text region streaming
                if r.hot is not None:  # (the next pieces go to `delta_hot.hot_text`)
                    self.feed = r.hot  # type: ignore[method-assign]
                if not self._ptake(text):
                    return self._route(self._pfeed(text))
                return self._text_piece(r, key, text)
            call = r.sink
            if call is not None or r.follow is not None:  # a tool region: a string argument, or followed
                if r.hot is not None:  # (the next pieces go to `delta_hot.hot_feed`)
                    self.feed = r.hot  # type: ignore[method-assign]
                if not self._ptake(text):
                    if call is not None:
                        return self._route(self._pfeed(text))
                    # (followed: the text it routes, if one chunk of this region, takes the path below, which
                    # holds or sinks it, as `_route` would not)
                    events = self._pfeed(text)
                    if len(events) != 1 or self._open is not r or r.follow is None:
                        return self._route(events)
                    ev = events[0]
                    if ev["type"] != "region_chunk" or ev["field"] != r.name:
                        return self._route(events)
                    text = ev["text"]
                elif call is not None:
                    if '"' not in text and "\\" not in text and r.stop not in text and text.isprintable():
                        # The partial parser sits in that string (`_Region.sink`): text that needs no JSON
                        # escaping (printable: no control character, no lone surrogate) is both the next
                        # piece of that string and its fragment (in `call.parts` later: `_Call.run`).
                        chunks = call.str_chunks
                        chunks.append(text)
                        if len(chunks) >= _COMPACT_AT:
                            _compact(call)
                        return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
                    return self._partial_chunk(r, text) if r.follow is None else self._follow_chunk(r, text)
                call = r.follow
                p = r.partial
                wait = p.wait
                if wait is not None:
                    if wait.isdisjoint(text):  # `JsonPartial.hold`, inlined
                        q = p.quotes
                        if not q:
                            p.pending.append(text)
                            return []
                        c = text.count('"')
                        if c < q:
                            p.quotes = q - c
                            p.pending.append(text)
                            return []
                else:  # (in a string value)
                    chunks = p.sink  # the json dialect's custom-delimited string (`JsonDialectPartial.sink`)
                    if (
                        chunks is not None
                        and p.sink_stop not in text
                        and '"' not in text
                        and "\\" not in text
                        and text.isprintable()
                    ):
                        chunks.append(text)
                        if len(chunks) >= _COMPACT_AT:
                            chunks[:] = ["".join(chunks)]
                        parts = call.parts
                        parts.append(text)
                        if len(parts) >= _COMPACT_AT:
                            parts[:] = ["".join(parts)]
                        return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
                try:  # `_follow_chunk`, inlined for what a member's end writes
                    res = p.feed(text)
                    if type(res) is str and p.following is not None:
                        if p.wait is None:  # (in a string value the stream is not sinking)
                            chunks = p.string_sink()
                            if chunks is not None:  # its pieces so far are in `res`: a sink
                                r.sink = call
                                call.str_chunks = chunks
                                call.run = len(chunks)
                        if not res:
                            return []
                        parts = call.parts
                        if (res.isascii() or res.isprintable()) and len(parts) < _COMPACT_AT:  # (no lone surrogate)
                            parts.append(res)
                            return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
                        out: list[dict] = []
                        self._send(call, res, out)  # (surrogates, compaction)
                        return out
                except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                    self.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                    return []
                return self._follow_result(r, call, text, res)
            if r.kind == "tool" and r.captures is not None:  # any other chunk of a tool region: its partial parser
                if not self._ptake(text):
                    return self._route(self._pfeed(text))
                return self._partial_chunk(r, text)
        parser = self._parser
        if parser is None:
            raise RuntimeError("this DeltaStream consumes events (for_events): use feed_events()")
        if self._finished:
            self._check_open()
        if not text:
            return self._begin()
        if self._lag:
            self._unlag()
        self._lag_char = None
        events = parser.feed(text)
        if r is not None and len(events) == 1:  # (`r` is still the open region: only the events change it)
            ev = events[0]
            if ev["type"] == "region_chunk" and self._started:
                kind = r.kind
                if kind == "text":
                    return self._text_chunk(r, ev)
                if kind == "tool" and r.captures is not None:
                    if r.follow is not None:
                        text = ev["text"]
                        if r.partial.hold(text):
                            return []  # (it cannot complete a member of the arguments: see `JsonPartial.hold`)
                        return self._follow_chunk(r, text)
                    return self._partial_chunk(r, ev["text"])
        return self._route(events)

    def _take(self, text: str) -> bool:
        """`_ptake` (`ResponseParser.feed_region`) of a stream with its own parser: while the parser says text
        without some character cannot end the open region (`ResponseParser.region_char`), text without it is
        kept (`_lag`) and handed on, joined, with the next text that holds it (or every `_LAG_AT` pieces, or
        before anything else reaches the parser): one parser call for many pieces. Text with that character is
        kept too when the parser's `region_test` says no delimiter starts in it."""
        c = self._lag_char
        if c:
            if c not in text or (t := self._lag_test) is not None and t(text) is None:
                if not text:
                    return False
                lag = self._lag
                lag.append(text)
                if len(lag) >= _LAG_AT:
                    self._unlag()
                return True
            if t is not None:  # (`c` in `text`) a delimiter may start in it: `feed_region` would not take it, joined or not
                self._unlag()
                self._lag_char = None
                return False
        lag = self._lag
        if lag:
            lag.append(text)
            joined = "".join(lag)
            lag.clear()
            if self._region_take(joined):
                return True
            if not self._region_take(joined[: len(joined) - len(text)]):  # (taken, by `region_char`)
                raise AssertionError("region text lagged behind the parser was not taken")
        elif self._region_take(text):
            if c is None:
                self._lag_char = self._region_char() or ""  # ("": not until the parser is fed again)
                self._lag_test = self._region_test()
                self._lag_holds = None
            return True
        self._lag_char = None  # (the caller feeds it: the parser may stand elsewhere then)
        return False

    def _unlag(self) -> None:
        """Hand the parser the text kept by `_take`."""
        lag = self._lag
        if lag:
            joined = "".join(lag)
            lag.clear()
            if not self._region_take(joined):
                raise AssertionError("region text lagged behind the parser was not taken")

    def _route(self, events: list) -> list[dict[str, Any]]:
        r = self._open
        if self._started and len(events) == 1 and r is not None:
            # The common case, kept short: one chunk of the open region (see `_handle` for the general one)
            ev = events[0]
            if ev["type"] == "region_chunk" and ev["field"] == r.name:
                kind = r.kind
                if kind == "text":
                    return self._text_chunk(r, ev)
                if kind == "tool" and r.captures is None:
                    return self._slow(events)
                if r.follow is not None:
                    return self._follow_chunk(r, ev["text"])
                return self._partial_chunk(r, ev["text"])
        return self._slow(events)

    def _text_chunk(self, r: _Region, ev: Mapping[str, Any]) -> list[dict[str, Any]]:
        """A chunk of the open text region."""
        key = r.hot_key
        text = ev["text"]
        if key is not None and text:
            return self._text_piece(r, key, text)
        out: list[dict] = []
        self._on_chunk(ev, out)
        return out

    def _text_piece(self, r: _Region, key: str, text: str) -> list[dict[str, Any]]:
        """A piece of a text region whose text started, trailing whitespace stripped (`_Region.hot_key`): sent
        but its trailing whitespace, which waits for more text (dropped at the close)."""
        held = r.held
        if held:
            text = held + text
            r.held = ""
        core = text.rstrip()
        if core is not text:  # (`rstrip` returns the string itself when there is nothing to strip)
            r.held = text[len(core) :]
            if not core:
                return []
        sent = r.sent
        sent.append(core)
        if len(sent) >= _COMPACT_AT:
            _join_pieces(sent)
        return [{key: core}]

    def _partial_chunk(self, r: _Region, text: str) -> list[dict[str, Any]]:
        """A chunk of the open tool / value region whose content format has a partial parser (or none)."""
        out: list[dict] = []
        try:
            p = r.partial
            if p is not None:
                if r.sink is not None:
                    _unsink(r.sink)
                    r.sink.str_idx = len(r.sink.str_chunks)  # (the pieces appended while it sat there were sent)
                    r.sink = None
                if p.feed(text) is True:
                    # the text went whole into the open string value and needs no JSON escaping: if that
                    # string is an argument streaming, the text is the fragment
                    call = r.streaming
                    if call is not None and len(call.str_chunks) == call.str_idx + 1:
                        if text.isascii() or _SURROGATE.search(text) is None:
                            r.sink = call  # (its `str_idx` is brought up to date when it is cleared)
                            call.run = len(call.str_chunks)
                            parts = call.parts
                            parts.append(text)
                            if len(parts) >= _COMPACT_AT:
                                _join_pieces(parts)
                            return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
                if p.version == r.version:
                    call = r.streaming
                    if call is not None:  # `_stream_string`, inlined
                        chunks = call.str_chunks
                        i = call.str_idx
                        if len(chunks) > i:
                            new = chunks[i] if len(chunks) == i + 1 else "".join(chunks[i:])
                            call.str_idx = len(chunks)
                            piece = _encode_string(new)[1:-1]
                            parts = call.parts
                            if not piece.isascii() or len(parts) >= _COMPACT_AT:
                                self._send(call, piece, out)  # (surrogates, compaction)
                            else:
                                parts.append(piece)
                                return [
                                    {
                                        "tool_calls": [
                                            {"index": call.index, "function": {"arguments": piece}}
                                        ]
                                    }
                                ]
                    return out
                fast = r.fast
                if fast is not None:
                    stack, depth = p.stack, fast[4]
                    if len(stack) > depth and stack[depth] is fast[2] and fast[2].version == fast[3]:
                        r.version = p.version  # a change deeper than the open arguments object: nothing to send
                        return out
            if r.kind == "tool":
                self._update_tool(r, out)
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            self.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
        return out if len(out) < 2 else _merge(out)

    def _follow_chunk(self, r: _Region, text: str) -> list[dict[str, Any]]:
        """A chunk of the open tool region while its partial parser writes the arguments out (`JsonPartial.follow`):
        what its `feed` returns is the fragment."""
        out: list[dict] = []
        try:
            p = r.partial
            call = r.follow
            if r.sink is not None:
                _unsink(r.sink)
                r.sink = None  # (while following, the parser knows what was appended to its open string)
            res = p.feed(text)
            if res is not True and p.following is not None:
                if not res:
                    return out
                parts = call.parts
                if not res.isascii() or len(parts) >= _COMPACT_AT:
                    self._send(call, res, out)  # (surrogates, compaction)
                    return out
                parts.append(res)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            self.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
            return out
        return self._follow_result(r, call, text, res)

    def _follow_result(self, r: _Region, call: Any, text: str, res: Any) -> list[dict[str, Any]]:
        """`_follow_chunk` after the partial parser's `feed` returned `res`: the text went whole into the open
        string (True), or following stopped (the members it wrote, then the general path)."""
        out: list[dict] = []
        try:
            if res is True:  # (the text went whole into its open string, needing no escaping)
                p = r.partial
                if text.isascii() or _SURROGATE.search(text) is None:
                    r.sink = call
                    call.str_chunks = chunks = p.string_sink()
                    call.run = len(chunks)
                    parts = call.parts
                    parts.append(text)
                    if len(parts) >= _COMPACT_AT:
                        _join_pieces(parts)
                    return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            self._followed(r, text, res, out)
            if r.follow is None:  # it stopped: from the members it wrote on, as usual
                self._update_tool(r, out)
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            self.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
        return out if len(out) < 2 else _merge(out)

    def _slow(self, events: list) -> list[dict[str, Any]]:
        out = self._begin()
        self._handle(events, out)
        return _merge(out)

    def feed_events(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add parser events (``parser.initial_events``, ``feed()`` results, final events); return deltas."""
        self._check_open()
        out = self._route(events if isinstance(events, list) else list(events))
        return self._hold(out) if self._coalesce else out

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

    def finish(
        self, finish_reason: str | None = None, *, events: Iterable[Mapping[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """End the stream; return the last deltas and set `finish_reason`.

        ``finish_reason``: None (or "stop") lets the stream decide between "tool_calls" and "stop"; pass
        "length" when generation stopped at the token limit: a tool call still open then is reported with
        ``error.type == "length"`` (see the module docs).

        ``events`` (events mode only): the producer's last events (those of its ``finalize()``), if they
        were held back until the finish reason was known; they are handled first.
        """
        if finish_reason not in _FINISH_REASONS:
            raise ValueError(f"finish_reason must be one of {_FINISH_REASONS}, got {finish_reason!r}")
        if self._finished:
            self._check_open()
        out = self._begin() if not self._started else []
        length = finish_reason == "length"
        events = events if type(events) is tuple else list(events)  # (the default: ())
        if events:
            if self._parser is not None:
                raise ValueError("events= is for a stream fed with events (for_events); this one owns its parser")
            self._handle(events, out)
        r = self._open
        if self._parser is not None:
            if length and r is not None and r.kind == "tool":
                r.length_cut = True
            if self._tail:  # (`delta_tail.py`: as the parser would have held it)
                out.extend(self._feed(""))
            if self._lag:
                self._unlag()
            message, events = self._parser.finalize()
            self._handle(events, out)
            self.message = message
        if self._deferred is not None:
            self._settle_deferred(out, "length" if length else "malformed")
        if self._parser is not None:
            pass  # the parser's final events closed everything
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
        self._pfeed = self._ptake = self._no_feed
        if not self._coalesce:
            self.feed = self._feed  # type: ignore[method-assign]  # (a region's `hot_feed` never outlives the stream)
        if finish_reason is None or finish_reason == "stop":
            finish_reason = "stop"
            for c in self._calls:
                if c.done:
                    finish_reason = "tool_calls"
                    break
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
    def tool_call_ids(self) -> list[str]:
        """The ids of the tool calls that the parsed message holds, in its order (all of them once `finish`
        was called): the model's own where the format writes them, else the generated ones.

        Give them to `hf_response_templates.openai.chat_completion` (``tool_call_ids=``) to build a non-streamed
        response with the ids this stream sent (a stream fed the events of the same generation), e.g. in a
        server that answers ``stream: false`` from the events of a `ResponseStreamer`. Calls flagged with an
        error whose ``in_message`` is false are not in the message, so not here.
        """
        return [c.id for c in self._calls if c.done and (c.error is None or c.error["in_message"])]

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

    def finish_chunks(
        self, finish_reason: str | None = None, *, events: Iterable[Mapping[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """`finish`, as chunks: the last deltas, then an empty delta carrying ``finish_reason``."""
        deltas = self.finish(finish_reason, events=events)
        return [self.chunk(d) for d in deltas] + [self.chunk({}, self.finish_reason)]

    # ------------------------------------------------------------------ event handling

    def _no_feed(self, text: str) -> NoReturn:
        if self._parser is not None:
            self._check_open()
        raise RuntimeError("this DeltaStream consumes events (for_events): use feed_events()")

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

    def _handle(self, events: Iterable[Any], out: list[dict]) -> None:
        for ev in events:
            kind = ev.get("type")
            try:
                if kind == "region_chunk":
                    self._on_chunk(ev, out)
                elif kind == "delimiter":  # (the open of a field whose delimiter may hold a call id: `_id_fields`)
                    if ev.get("field") in self._id_fields and ev.get("kind") == "open" and self._model_ids:
                        self._on_delimiter(ev)
                elif kind == "region_open":
                    self._on_open(ev, out)
                elif kind == "region_close":
                    self._on_close(ev, out, malformed=False)
                elif kind == "region_malformed":
                    self._on_close(ev, out, malformed=True)
                elif kind == "text_unclaimed":  # text outside every region: an `unparsed` record, field None
                    self._add_unparsed(self._unparsed_item(ev), out)
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
        if self._open is not None and self._open.hot is not None:
            self.feed = self._feed  # type: ignore[method-assign]  # (see `_on_close`)
            self._open.hot = None
        self._open = r = _Region(
            name,
            kind,
            content,
            dict(captures) if isinstance(captures, dict) else {},  # (an open event without captures has none)
            None if pargs is None or kind == "text" else partial_parser(content, pargs),
        )
        if r.partial is not None:
            stop = getattr(r.partial, "sink_stop", None)
            if stop:
                r.stop = stop
            if kind == "tool" and self._ptake == self._take and not self._coalesce:
                # (`hot_feed`'s choice, made here: its import of `delta_json_hot` cost a call per region)
                r.hot = json_hot_feed(self, r) if type(r.partial) is JsonPartial else hot_feed(self, r)
        self._tail_tool = None
        if self._deferred is not None:
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
                if r.sink is not None:
                    _unsink(r.sink)
                    r.sink.str_idx = len(r.sink.str_chunks)
                    r.sink = None
                res = r.partial.feed(text)
                if r.follow is not None:
                    self._followed(r, text, res, out)
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
            if r.strip:
                r.hot_key = key
                if self._ptake == self._take and not self._coalesce:
                    r.hot = hot_text(self, r, key)
            st = self._text[r.name]
            if self._tpl.by_name[r.name].join is None and st.nonempty:
                out.append({key: "\n"})
            st.nonempty = True
        if not r.strip:
            r.sent.append(text)
            if len(r.sent) >= _COMPACT_AT:
                _join_pieces(r.sent)
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
            _join_pieces(sent)
        out.append({key: core})

    def _on_close(self, ev: Mapping, out: list[dict], malformed: bool) -> None:
        r = self._open
        name = ev.get("field")
        if (not malformed and ev.get("policy") and r is not None and r.kind == "tool" and r.name != name
                and self._kind.get(name) == "text"):
            self._call_as_text(r, ev, out)
            return
        if r is not None and r.hot is not None:  # its feed (`delta_hot.hot_feed`) hands over for good
            self.feed = self._feed  # type: ignore[method-assign]
            r.hot = None  # (that feed holds the region: no cycle keeps a closed region, its text, its parser)
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

    def _call_as_text(self, r: _Region, ev: Mapping, out: list[dict]) -> None:
        """``malformed_tool_calls='content'``: the open tool region did not parse and its raw text is a text
        field's (content): the calls streamed from it are flagged (not in the message), the text is sent."""
        if r.hot is not None:
            self.feed = self._feed  # type: ignore[method-assign]  # (see `_on_close`)
            r.hot = None
        self._open = None
        self._tail_tool = r
        if r.calls:
            self._flag_all(r, "malformed", _AS_TEXT, out)
        name, value = ev["field"], ev.get("value")
        key = self._key.get(name)
        if key is None or not isinstance(value, str) or not value:
            return
        st, join = self._text[name], self._tpl.by_name[name].join
        if join is None and st.nonempty:
            out.append({key: "\n"})
        elif join and st.regions > 0:
            out.append({key: join})
        st.regions += 1
        st.nonempty = True
        out.append({key: value})

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
