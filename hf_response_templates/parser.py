"""`ResponseParser`: the streaming state machine; `parse_response`: the one-shot entry point.

Theory of operation
-------------------
The parser is sans-IO: text goes in through `feed()`, events come out as plain dicts. It never
imports Transformers and never blocks.

State is small: the region being written (`_current`: a field or `None`), whether it is an explicit
region (opened by a delimiter) or the implicit one, whether its `region_open` was emitted yet, its
body (a list of chunks, joined every 512 chunks and at close, so it holds about a byte per character),
and the text not yet routed (`_buf`: only what may still be the start of a delimiter). Everything that
changes state lives in `_run` (routing text and committing delimiters, decided by
`delimiters.Watch.scan`, or `Watch.scan_end` at the end of the stream) and `_on_delimiter`; region
values are computed in `_close_region` and stored in `_store`. `feed()` inlines the commonest case
(an open region takes a whole chunk). Three states, by what is watched:

* idle (no explicit region open): every explicit field's open, plus the implicit field's close.
  Text goes to the implicit field, which opens lazily on its first non-whitespace character
  (whitespace before it is held in the body and streamed with that character; whitespace alone
  between two regions, e.g. the newline between two tool calls, opens nothing). With no implicit field, text
  here is outside every region: it is not part of any field, but what the model wrote there (anything
  but whitespace) is kept in `message["unparsed"]` and reported by a `text_unclaimed` event.
* inside explicit field F: only F's close (nothing, if F has none: it runs to the end of stream).
* ended: the implicit field's close was seen, so the message is over; later text (a newline, pad
  tokens, a hallucinated next turn) is not part of the message.

Model output can never make `feed()` raise: a region whose content fails to parse is reported by a
`region_malformed` event and kept in `message["unparsed"]` (so is text outside every region, with field
None); a regex that times out is reported by an `error` event and disabled, and so is every regex once the
stream's regex budget is spent. `parse_response(strict=True)` turns those into exceptions (except text
outside every region).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from io import StringIO
from time import perf_counter
from typing import Any

from . import content as _content
from . import parser_start as _start
from . import policy as _policy
from .delimiters import HELD_BY, LOOKBEHIND_CONTEXT, OPEN, DelimiterTimeout, Watch
from .errors import RegexTimeoutError, ResponseParseError
from .held import still_held
from .jsonscan import FLIP as _FLIP
from .plan import plan_for
from .region_change import held_chunk, held_scan, steady_for, steady_markup
from .steady_found import found_in_steady
from .template import FieldSpec, ResponseTemplate, load_template
from .template import _by_id as _loaded_by_id
from .tools import tool_schemas

_loaded_get = _loaded_by_id.get  # (`template._by_id` is never rebound: one name to load per call)

__all__ = ["ResponseParser", "parse_response"]

#: Where the state machine puts its events: a list, or None when nobody reads them (one-shot
#: `parse_response`, which then builds no event dicts: ~2 µs per response, benchmarks/RESULTS.md).
Events = list[dict[str, Any]] | None

_NONE_FIRED: frozenset = frozenset()

#: The total regex time of one stream (one `parse_response`), in multiples of the per-search `regex_timeout`,
#: unless `regex_budget` says otherwise. Once it is spent, every regex of the template is disabled. (`regex`'s
#: own timeout overshoots, up to ~3x measured: one catastrophic search fits in the default budget.)
BUDGET_TIMEOUTS = 4.0

#: A region body is compacted (`ResponseParser._compact_body`) every this many chunks.
_COMPACT_EVERY = 512

#: The `error` of text outside every region (`message["unparsed"]`, `text_unclaimed` events).
UNCLAIMED = "outside every region"

_PREFIX_REQUIRED = (
    "`prefix` is required: pass the prompt that came before generation (the text or token ids given to "
    "the model). Chat templates often pre-write part of the assistant message (an opening <think>, a "
    "prefill), and without the prompt the parser would silently misread it. If the generation already "
    'holds the whole message, pass prefix="" to opt out explicitly.'
)


def _new_acc(_: Any = None) -> Any:
    """A fresh `ResponseParser._acc` (see `_settle`)."""
    return StringIO().write


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


class ResponseParser:
    """Incrementally parse one generated sequence into events and, at the end, a message.

    Args:
        template: a response template dict or a compiled `ResponseTemplate`.
        prefix: the prompt before the generation (required; `""` opts out). It is cut after the
            last start anchor and run through the parser; resulting events are in `initial_events`.
        tools: tool schemas (or Python functions) whose JSON schemas type tool-call arguments.
        trace: also emit `delimiter` and `text_dropped` events, so that every character of the
            stream is accounted for (useful to debug a template).
        regex_timeout: seconds one regex search may take (default `content.DEFAULT_REGEX_TIMEOUT`).
        regex_budget: seconds all the template's regexes may take together in this stream (delimiters,
            `start_anchor_pattern`, content `tag_pattern`s; default `BUDGET_TIMEOUTS` x `regex_timeout`).
            When it is spent, every regex delimiter and content regex is disabled for the rest of the stream
            (an `error` event; `errors` lists it), so hostile templates or output cannot hold a server.
        policy: a `ParsePolicy` (or a dict of some of its keys) over the template's ``"policy"`` defaults:
            tool calls inside reasoning, calls to functions not in `tools`, text after the last call, tool
            calls that do not parse (see `policy.py`). Its decisions are made when a region closes, so text
            already streamed as `region_chunk` events is not retracted: a rejected call or held-back content
            is reported by a `region_malformed` event with ``"policy": True`` (the message has it in
            ``unparsed``), a malformed call made content by a `region_close` event of the content field
            with ``"policy": True``.

    Example:
        >>> parser = ResponseParser(template, prefix="<|im_start|>assistant\\n")
        >>> events = parser.initial_events + parser.feed("<think>Hi") + parser.feed("</think>Hello")
        >>> message, final_events = parser.finalize()
    """

    __slots__ = (
        "_tpl",
        "_tools",
        "_trace",
        "_timeout",
        "_call_timeout",
        "_left",
        "_budget",
        "_timed",
        "_t0",
        "_dead",
        "_spent",
        "_message",
        "_assigned",
        "_more",
        "_current",
        "_explicit",
        "_opened",
        "_body",
        "_compact_at",
        "_captures",
        "_vend",
        "_watch",
        "_ended",
        "_buf",
        "_fheld",
        "_ctx",
        "_ctx_on",
        "_ctx_at",
        "_rescan",
        "_early",
        "_consumed",
        "_gen_start",
        "_zw_at",
        "_zw_fired",
        "_disabled",
        "_resume",
        "_malformed",
        "_errors",
        "_region_start",
        "_pending_ws",
        "_ws_at",
        "_hold_ws",
        "_finalized",
        "_fast",
        "_held_fast",
        "_acc",
        "_at_eos",
        "_unclaimed",
        "_unclaimed_at",
        "_lenient",
        "_mk",
        "_policy",
        "_held",
        "_called",
        "_delims",
        "initial_events",
    )

    def __init__(
        self,
        template: Mapping[str, Any] | ResponseTemplate,
        prefix: str | None = None,
        *,
        tools: Iterable[Any] | None = None,
        trace: bool = False,
        regex_timeout: float | None = None,
        regex_budget: float | None = None,
        policy: _policy.ParsePolicy | Mapping[str, str] | None = None,
    ):
        if not trace and regex_timeout is None and regex_budget is None and policy is None and prefix.__class__ is str:
            _start.build(self, template, prefix, tools)  # (from the state cached per template and cut prefix)
            return
        cut = self._setup(template, prefix, tools, trace, regex_timeout, regex_budget, policy)
        if cut:
            self._run(cut, self.initial_events, False)

    def _setup(
        self,
        template: Mapping[str, Any] | ResponseTemplate,
        prefix: str | None,
        tools: Iterable[Any] | None,
        trace: bool,
        regex_timeout: float | None,
        regex_budget: float | None,
        policy: _policy.ParsePolicy | Mapping[str, str] | None,
        cut: str | None = None,
    ) -> str:
        """Everything `__init__` does but running the cut prefix, which it returns (one-shot parsing runs it
        with the generation, at the end of the stream: one scan of both instead of two). `cut`: the cut
        prefix, if the caller has cut it already (untimed)."""
        tpl = load_template(template)
        pol = None
        if policy is not None or tpl.policy is not None:  # the default policy runs no policy code at all
            pol = _policy.resolve_policy(policy, tpl)
            tpl = _policy.template_for(tpl, pol)
        if prefix is None:
            raise ValueError(_PREFIX_REQUIRED)
        if not isinstance(prefix, str):
            raise TypeError(
                f"prefix must be a str here, got {type(prefix).__name__}; token ids are decoded by "
                "tokenizer.parse_response / tokenizer.get_response_parser"
            )
        self._tpl = tpl
        self._tools = tool_schemas(tools) if tools else None
        self._trace = trace
        self._timeout = regex_timeout if regex_timeout is not None else _content.DEFAULT_REGEX_TIMEOUT
        # Regex time left in this stream's budget (measured per `_run` and per regex content parse), and the
        # timeout the next search gets: `regex_timeout`, or less when the budget is nearly spent.
        self._budget = regex_budget if regex_budget is not None else BUDGET_TIMEOUTS * self._timeout
        self._left = self._budget
        self._call_timeout = min(self._timeout, self._left)
        self._timed = tpl.has_regex  # (`_t0`: when the current `_run` started, set only when timed)
        self._dead: set[str] | None = None  # fields whose content regex timed out (disabled)
        self._spent = False  # the regex budget is spent: every regex is disabled
        self._message: dict[str, Any] = tpl.new_message()
        self._assigned: set[str] = set()
        self._more: dict[str, list[str]] | None = None  # text to add to string fields (see `_append_text`)
        self._current: FieldSpec | None = tpl.implicit_field
        self._explicit = False
        self._opened = False
        self._body: list[str] = []  # the open region's text, joined at close (see `_compact_body`)
        self._compact_at = _COMPACT_EVERY
        self._captures: dict[str, str] | None = None
        # The open region's `jsonscan.ValueEnd` (a `json` field with `"trailing": "stream"`), or None.
        self._vend: Any = None
        self._watch: Watch | None = tpl.idle_watch
        self._ended = False
        self._buf = ""
        self._fheld = False  # `_buf` was held by `feed()` itself (see `Watch.feed_trigger`)
        self._ctx = ""
        self._ctx_on = tpl.needs_context
        # Where `_ctx` ends (a stream offset): text `feed()`'s fast path routed since is the end of `_body`, and
        # joins `_ctx` only when a scan needs it (`_sync_ctx`), so lookbehind templates keep that fast path.
        self._ctx_at = 0
        # The next chunk must be scanned even with nothing held: the text so far ends with a character a
        # lookbehind-guarded delimiter can follow (`Watch.behind`), so a match may start right at the chunk.
        self._rescan = False
        # Until the stream has moved past offset 0, delimiters that only match there are watched (see
        # `ResponseTemplate.late_idle_watch`); then the parser switches to the late watches, once.
        self._early = tpl.has_early
        self._consumed = 0  # stream offset of the start of `_buf` (stream = cut prefix + generation)
        self._zw_at = -1  # stream offset where the delimiters in `_zw_fired` matched with zero width
        self._zw_fired: frozenset = _NONE_FIRED
        self._disabled: set[Any] = set()
        # What the last scan learnt about the held text, for the next scan of it (`Watch.scan`'s `resume`):
        # `(watch, stream offset of the held text, of that scan's window, of its end, its memo)`, or None.
        self._resume: tuple | None = None
        self._malformed: list[ResponseParseError] = []
        self._errors: list[ResponseParseError] = []
        self._region_start = 0
        # Whether `_body` holds whitespace seen before the implicit field opened (see the module docstring):
        # it opens the field with the next non-whitespace text, or is dropped if a delimiter comes first.
        self._pending_ws = False
        self._ws_at = 0
        self._hold_ws = tpl.hold_whitespace
        self._finalized = False
        self._fast: tuple | None = None  # `feed()`'s steady-state path, when it applies (see `_fast_state`)
        self._held_fast: tuple | None = None  # `_fast` before `feed()` held a lone character (see `feed`)
        # The `write` of the `StringIO` where `feed()`'s steady-state paths put the open region's text (see
        # `_settle`): created with the first `_fast` tuple, None before.
        self._acc: Any = None
        self._at_eos = False  # `_run` saw the end of the stream (one-shot parsing)
        # Text outside every region (templates without an implicit field), since the last delimiter, and the
        # stream offset where it starts: reported as one `text_unclaimed` event and `unparsed` record.
        self._unclaimed: list[str] | None = None
        self._unclaimed_at = 0
        self._lenient: list[ResponseParseError] | None = None  # errors `parse_response(strict=True)` does not raise
        self._mk: Any = None  # the open region's `content.MarkupStream` (a `text` field with `remove_pattern`)
        self._policy = pol  # a non-default `policy.ParsePolicy`, or None
        self._held: list[tuple[Any, int | None]] | None = None  # content after the last call (policy)
        self._called = False  # a tool call was stored (policy)
        self._delims = ["", ""]  # the open region's open and close delimiter text (policy, malformed_tool_calls)
        self.initial_events: list[dict[str, Any]] = []
        anchor = tpl.start_anchor
        if cut is not None:
            pass
        elif anchor.literals is None and len(prefix) > anchor.untimed_search:
            # a timed `start_anchor_pattern` search counts against the budget (an untimed one is bounded)
            t0 = perf_counter()
            try:
                cut = tpl.cut_prefix(prefix, self._call_timeout)
            finally:
                self._left -= perf_counter() - t0
        else:
            cut = tpl.cut_prefix(prefix)
        self._gen_start = len(cut)  # stream offsets below this are in the prefix
        return cut

    def __reduce__(self) -> tuple:
        # pickle / copy.deepcopy / multiprocessing: the template's source and the state (see _pickling.py)
        from ._pickling import reduce_parser

        self._settle()  # (text held in `_acc` is the region's: pickled in `_body`)
        return reduce_parser(self)

    # ------------------------------------------------------------------ public API

    @property
    def template(self) -> ResponseTemplate:
        return self._tpl

    @property
    def captures(self) -> dict[str, str]:
        """Named groups captured by the delimiters of the open explicit region (e.g. a tool name)."""
        return dict(self._captures) if (self._explicit and self._captures) else {}

    @property
    def current_field(self) -> str | None:
        """The field being written now (None between regions or after the message ended)."""
        return self._current.name if (self._current is not None and self._opened) else None

    @property
    def tools(self) -> Any:
        """The `tools.ToolSchemas` used to type tool-call arguments, or None."""
        return self._tools

    @property
    def errors(self) -> list[ResponseParseError]:
        """Problems met so far: malformed regions, regex timeouts, text outside every region, and (after
        `finalize`) missing required fields."""
        return list(self._errors)

    @property
    def strict_errors(self) -> list[ResponseParseError]:
        """The `errors` that make `parse_response(strict=True)` raise: all but text outside every region
        (kept in `message["unparsed"]`, it is not a region that failed to parse)."""
        lenient = self._lenient
        return [e for e in self._errors if not any(e is x for x in lenient)] if lenient else list(self._errors)

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Add generated text; return the events it completes. Never raises for model output."""
        fast = self._fast
        if fast is not None and text and fast[0] not in text and fast[1] not in text:
            # The steady state of a long region (most chunks of a long stream): a region is open, nothing is
            # held, and `text` has none of the one or two characters every delimiter watched (and the open
            # region's markup) starts with, so all of it goes to the region, as in the path below, with what
            # that path reads from the parser and its watch kept in one tuple (`_fast_state`). (`_fast_route`,
            # inlined: the call would cost about a tenth of this path.)
            # The text goes to `_acc`, one C call, not yet to `_body`, `_consumed` nor the markup stream's `sent`:
            # `_settle` moves it there before anything else reads them.
            self._acc(text)
            event = fast[8].copy()  # (a copy of the event with the field and "dirty" set: ~1/3 cheaper than a
            event["text"] = text  # dict display, which inserts the four keys one by one)
            return [event]
        if fast is not None:
            hold = fast[5]
            if hold is not None and text and text.find(hold) == len(text) - 1:
                # The text's only prefilter character is its last, a sure beginning of a delimiter (`<` of
                # `<|im_end|>`, `Watch.lone_hold`): held, as `Watch.feed_trigger` and `_held_end` would hold it,
                # without them; the rest goes to the region as above. The next chunk may join it the same way.
                self._buf = hold
                self._fheld = True
                self._fast = None
                self._held_fast = fast
                return self._fast_route(fast, text[:-1]) if len(text) > 1 else []
            trigger = fast[7]
            if trigger is not None and text:
                found = trigger(text)
                if found is None:
                    # None of the fixed texts the delimiters start with, nor a beginning of one at the end (`a < b`,
                    # Phi-4's `f` of `first` before `functools`): routed as below, without the rest of this method.
                    return self._fast_route(fast, text)
                if fast[9] is not None:
                    return found_in_steady(self, fast, text, found)  # (`steady_found.py`)
        elif self._held_fast is not None and text:
            fast = self._held_fast
            self._held_fast = None
            after = fast[6]
            if (text[0] not in after and fast[0] not in text) if after is not None else fast[7](self._buf + text) is None:
                # After a lone held character: `text` does not continue it into a delimiter (nor the region's
                # markup) and has no prefilter character of its own, so the two go to the region together (what
                # `Watch.feed_trigger` of them would say), and the steady state is back as it was. (Without
                # `hold_next`, after `found_in_steady` held it: the trigger says it of the two joined.)
                text = self._buf + text
                self._buf = ""
                self._fast = fast
                self._acc(text)  # (`_fast_route`, inlined)
                event = fast[8].copy()
                event["text"] = text
                return [event]
        if self._finalized:
            raise RuntimeError("this ResponseParser was already finalized; create a new one for a new stream")
        events: list[dict[str, Any]] = []
        if not text:
            return events
        if fast is not None:  # (text in `_acc` only ever follows a `_fast` or `_held_fast` tuple)
            self._settle()
        watch = self._watch
        stale = self._rescan  # (`_past_guard` clears it: then `_fast` is looked at again below)
        if self._opened and watch is not None and (not stale or self._past_guard(text, watch)):
            # The fast path of `_run` and `_route`, inlined for the most common chunk of all: a region is
            # open and no delimiter can start in `text` (none of the characters they start with is in it,
            # or none of the fixed texts they start with nor a beginning of one at its end:
            # `Watch.lead_trigger`), so all of it goes to the region. Measured: ~0.55 -> ~0.45 µs per 1-7
            # char chunk (benchmarks/RESULTS.md). Held text (`<` that may begin `<|im_end|>`) joins the chunk
            # when the fixed texts say neither starts a delimiter.
            buf = self._buf
            if buf:
                if watch.whole is not None and held_chunk(self, text, events):
                    return events  # (held text that `text` grows or completes, known to the watch)
                # (`feed_trigger` only for text held here: one a scan held may follow a lookbehind's guard)
                trigger = watch.feed_trigger if self._fheld else watch.lead_trigger
                if trigger is None:
                    self._scan(text, events, False)
                    return events
                text = buf + text  # (joined once: a scan reads it from here too)
                self._buf = ""
                stale = True
                found = trigger(text)
                clear = True
                if found is not None:
                    rest = self._held_end(found, text, watch)
                    if rest is None:
                        clear = False
                    elif not rest:
                        return events
                    else:
                        text = rest
            else:
                first = watch.first_char
                if first is not None:
                    clear = first not in text
                else:
                    clear = watch.first_search is not None and watch.first_search(text) is None
                if not clear:
                    trigger = watch.feed_trigger
                    if trigger is not None:
                        found = trigger(text)
                        if found is None:
                            clear = True
                        else:
                            rest = self._held_end(found, text, watch)
                            if rest is not None:
                                if not rest:
                                    return events
                                text = rest
                                clear = True
                            elif watch.guard_only is not None:
                                clear = self._guards_only(found, text, watch)
                    elif self._vend is not None:
                        # A region that ends where its JSON value ends: its watch has no prefilter (`held_search`
                        # instead), so that no text gets past the scanner. Most chunks hold no bracket, backslash
                        # nor close delimiter's first character (`ValueEnd.calm`): they only move it into or out
                        # of a string, one quote at a time. Else, if no delimiter starts in `text`, the scanner
                        # reads it here; if it says the value goes on, all of it is routed (else `_scan` asks
                        # it again: same answer).
                        vend = self._vend
                        calm = vend.calm
                        if calm is not None and calm(text) is None:
                            if text.count('"') & 1:
                                vend.state ^= _FLIP
                            clear = True
                        else:
                            held = watch.held_search
                            clear = held is not None and held(text) is None and vend.scan(
                                text, 0, len(text), self._consumed, False) == -1
            if not clear:  # `_run`'s fast path would check the same: scan
                self._scan(text, events, False)
                return events
            body = self._body
            body.append(text)
            if len(body) >= self._compact_at:
                self._compact_body()
            cur = self._current
            self._consumed += len(text)
            if cur.markup is not None:
                markup = cur.markup
                mk = self._mk
                # `_markup_chunk`'s commonest case, inlined: nothing held, and no markup can start in `text`
                if (mk is None or mk.held or mk.off or self._dead or markup.first_char is None
                        or markup.first_char in text):
                    self._markup_chunk(cur, text, events)
                    self._fast = self._fast_state()
                    return events
                mk.sent += len(text)
                events.append({"type": "region_chunk", "field": cur.name, "text": text, "dirty": False})
            else:
                events.append({"type": "region_chunk", "field": cur.name, "text": text, "dirty": not cur.streamable})
            if stale:
                self._fast = self._fast_state()
            return events
        if self._buf and watch is not None and watch.whole is not None and held_chunk(self, text, events):
            return events  # (held text that `text` grows or completes, known to the watch: `region_change.py`)
        self._run(text, events, False)
        return events

    def feed_region(self, text: str) -> bool:
        """`feed` for a consumer that handles the most common chunk itself (`DeltaStream`): if all of `text`
        goes to the open region as it is (``feed(text)`` would return one ``region_chunk`` of it, with
        ``dirty`` as the region's format says), add it and return True, without building that event; else
        return False and do nothing (call `feed`). Only `feed`'s first checks, kept out of `feed` so that they
        cost `feed` nothing."""
        fast = self._fast
        if fast is not None and text and fast[4] is None and fast[0] not in text and fast[1] not in text:
            self._acc(text)  # (`feed()`'s steady state, without markup: as below, from one tuple)
            return True
        watch = self._watch
        if self._opened and watch is not None and not self._buf and not self._rescan and text:
            if fast is not None:
                self._settle()
            first = watch.first_char
            if first is not None:
                clear = first not in text
            else:
                clear = watch.first_search is not None and watch.first_search(text) is None
            if not clear:  # a delimiter may start in it, unless its fixed leading texts say not (as in `feed`)
                trigger = watch.lead_trigger
                if trigger is None or trigger(text) is not None:
                    return False
            if self._current.markup is None:  # type: ignore[union-attr]  # (open: a current field)
                body = self._body
                body.append(text)
                if len(body) >= self._compact_at:
                    self._compact_body()
                self._consumed += len(text)
                return True
        return False

    def region_char(self) -> str | None:
        """For a consumer that may hand `feed_region` many pieces at once (`DeltaStream`): a character such that,
        from now on, `feed_region` takes every text without it (no delimiter starts with another character),
        so the joined pieces are taken as each would be; None if the parser does not stand where that holds
        (no region open, text held, a delimiter that may start with any of several characters). It holds
        until text with that character is fed, or anything through `feed` or `finalize`."""
        watch = self._watch
        if self._opened and watch is not None and not self._buf and not self._rescan:
            if self._current.markup is None:  # type: ignore[union-attr]  # (open: a current field)
                return watch.first_char
        return None

    def region_test(self) -> Callable[[str], Any] | None:
        """With `region_char`: a test such that `feed_region` also takes text holding that character when the
        test returns None for it (no delimiter, nor a beginning of one at its end, starts in it: its
        ``lead_trigger``), so that such text joined with other taken text is taken as each would be; None if
        there is no such test. It holds as long as `region_char` does."""
        watch = self._watch
        return watch.lead_trigger if watch is not None else None

    def region_holds(self) -> frozenset[str] | None:
        """With `region_test`: the texts that `feed` holds for sure (`Watch.feed_holds`, beginnings of a delimiter)
        when the test finds one of them ending the text and nothing before it: it then gives the text before it as
        one ``region_chunk`` (none if empty), and reads the held text joined with the next one; None if not so."""
        watch = self._watch
        if watch is None or watch.lead_trigger is None or watch.feed_trigger is not watch.lead_trigger:
            return None
        return watch.feed_holds

    def _fast_route(self, fast: tuple, text: str) -> list[dict[str, Any]]:
        """`feed()`'s steady-state routing of `text` (not empty) with `fast` (`_fast_state`), as a call."""
        self._acc(text)
        event = fast[8].copy()
        event["text"] = text
        return [event]

    def _settle(self) -> None:
        """Move the text `feed()`'s steady-state paths routed since the last call (`_acc`) to the open region:
        the end of `_body`, `_consumed` and the markup stream's `sent` count (all that `_fast_route` did per
        chunk before: one `StringIO.write` per chunk instead, ~170 fewer machine instructions). Called before
        anything reads them: `feed()` past its steady-state paths, `feed_region` past its first, `finalize`,
        pickling. Text is in `_acc` only while `_fast` or `_held_fast` is set (the tuples of the paths that
        write it), and the fast paths only run while the region they route to is open, so it is the tail of
        that region's text; the paths that change the region, or the state, run after this."""
        acc = self._acc
        if acc is None:
            return
        sio = acc.__self__
        text = sio.getvalue()
        if not text:
            return
        # Emptied by its own `__init__`, back to the state a new one starts in (writes kept in one string, a byte
        # per ASCII character): cheaper than a new `StringIO`, and `truncate` would keep 4 bytes per character.
        sio.__init__()
        body = self._body
        body.append(text)
        if len(body) >= self._compact_at:
            self._compact_body()
        n = len(text)
        self._consumed += n
        mk = self._mk  # (the `_fast` tuple's markup stream, when it has one; else None)
        if mk is not None:
            mk.sent += n

    def _fast_state(self) -> tuple | None:
        """What `feed()`'s steady-state path needs, if it applies now, else None: a region is open, nothing
        is held nor to be rescanned, the watch's prefilter is one or two characters (`Watch.fast_chars`), and
        the region has no markup or its stream is idle (`_markup_chunk`'s own fast case). Then `(first
        character, second (or the first again), field name, dirty, markup stream or None, the watch's
        `lone_hold` where the markup (if any) allows it or None, the characters that may follow it (the
        watch's `hold_next` and the markup's `next_chars`), the watch's `feed_trigger` without markup or
        None, the `region_chunk` event with its "text" to set, to copy)`. Recomputed where any of that may change: the end of a scan, a region opening, `feed()` past
        held text, a rescan or a markup chunk, the switch to the late watches; dropped where text is held and
        at the end."""
        watch = self._watch
        if watch is None or not self._opened or self._buf or self._rescan or self._vend is not None:
            return None
        chars = watch.fast_chars
        if chars is None:
            return None
        narrow = watch.narrow
        if narrow is not None and self._ctx_on:  # (away from a lookbehind's guard: `guard_steady.py`)
            if self._ctx_at != self._consumed:
                self._sync_ctx()
            ctx = self._ctx
            if narrow.live(ctx, len(ctx) - narrow.span if len(ctx) > narrow.span else 0) is None:
                watch = narrow
        if self._acc is None:
            self._acc = _new_acc()
        cur = self._current
        markup = cur.markup  # type: ignore[union-attr]  # (open: a current field)
        if markup is None:
            return steady_for(watch, cur)  # (built once per watch and field)
        mk = self._mk
        if mk is None or mk.held or mk.off or self._dead or markup.first_char is None:
            return None
        return steady_markup(watch, cur, mk)  # (the rest built once per watch and field)

    def _held_end(self, found: Any, text: str, watch: Watch) -> str | None:
        """`feed()`'s fast path, where `Watch.feed_trigger` found something in `text`: if it is only a beginning
        of a fixed text, at the end (` <` of `<|im_end|>`), it is a partial match for sure (`Watch.feed_holds`)
        and nothing can start before it: hold it and return the text before it, to route (maybe ""). Else
        None: scan."""
        i = found.start()
        if found.end() != len(text) or text[i:] not in watch.feed_holds:
            return None
        self._buf = text[i:]
        self._fheld = True
        self._fast = None
        return text[:i]

    def _guards_only(self, found: Any, text: str, watch: Watch) -> bool:
        """`feed()`'s fast path, where `Watch.feed_trigger` found a lookbehind guard's character in `text` (Llama
        4's `}`, `Watch.guard_only`): whether no delimiter can start in `text`, so that all of it is routed
        without a scan. True when each thing the trigger finds is such a character and either `Watch.after_guard`
        says no guarded match can begin right after it, or it ends the text (then a match may begin at the next
        chunk, which is looked at as after a scan: `_rescan` is set)."""
        only = watch.guard_only
        after = watch.after_guard
        trigger = watch.feed_trigger
        n = len(text)
        while True:
            if found.group() not in only:  # type: ignore[operator]
                return False
            j = found.end()
            if j == n:
                self._rescan = True
                self._fast = None
                return True
            if after(text, j) is not None:  # type: ignore[misc]
                return False
            found = trigger(text, j)  # type: ignore[misc]
            if found is None:
                return True

    def _past_guard(self, text: str, watch: Watch) -> bool:
        """The text so far ends with a lookbehind guard's character (`_rescan`): whether no guarded delimiter can
        begin right at `text` (`Watch.after_guard`: Llama 4's open needs `\\s*` then `;` or `{` after its `}`),
        so that `feed()`'s fast path may judge `text` as any other chunk (then `_rescan` is cleared)."""
        after = watch.after_guard
        if self._buf or after is None or after(text) is not None:
            return False
        self._rescan = False
        return True

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """End of generation: flush held text, close what is open, return `(message, events)`.

        `message` has the `defaults` keys plus every field that captured something. If a region
        failed to parse, its raw text is kept in `message["unparsed"]` as
        `[{"field", "text", "error", "position"}]` (see also `errors`).
        """
        if self._finalized:
            raise RuntimeError("this ResponseParser was already finalized")
        self._settle()
        events: list[dict[str, Any]] = []
        return self._finish(events), events

    def _finish(self, events: Events) -> dict[str, Any]:
        # Held text is a delimiter or it is not, now; and a delimiter that matches the empty string
        # (`$`, `\Z`, `(?:^|<think>)`) may fire right at the end of the stream.
        if not self._at_eos and (self._buf or (self._watch is not None and self._watch.zero_width)):
            self._run("", events, True)
        if self._unclaimed:
            self._flush_unclaimed(events)
        if self._pending_ws:
            self._drop_whitespace(events)
        if self._opened:
            decoded = self._vend.decoded() if self._vend is not None else None
            self._vend = None
            self._close_region(events, at_end=True, decoded=decoded)
            self._opened = False
        if self._held:
            self._flush_held(events)
        for name in self._tpl.required:
            if name not in self._assigned:
                self._errors.append(
                    ResponseParseError("is required ('optional': false) but the model never wrote it", field=name)
                )
        # The message is the parser's own dict (no copy): drop the fields that captured nothing. Only the
        # assigned ones can be such; `defaults` keys stay whatever their value.
        message = self._message
        if self._more:
            for name, parts in self._more.items():
                message[name] = "".join([message[name], *parts])
        keep = self._tpl.default_keys
        for name in self._assigned:
            if name not in keep:
                value = message[name]  # (`_is_empty`, inlined)
                if value is None or (isinstance(value, (str, list, dict)) and not value):
                    del message[name]
        if self._malformed:
            message["unparsed"] = [e.as_dict() for e in self._malformed]
        self._finalized = True
        self._fast = self._held_fast = None
        return message

    # ------------------------------------------------------------------ the state machine

    def _run(self, text: str, events: Events, eos: bool) -> None:
        watch = self._watch
        if text and watch is not None and not (eos or self._buf or self._rescan):
            # Fast path for most token-sized chunks: nothing is held and no delimiter can start in
            # `text` (it has none of the characters they start with, or none of their fixed leading texts),
            # so all of it is routed. Measured: 0.9 -> 0.55 µs per 1-7 char chunk (benchmarks/RESULTS.md).
            first = watch.first_char
            if first is not None:
                clear = first not in text
            else:
                clear = watch.first_search is not None and watch.first_search(text) is None
            if not clear and watch.lead_trigger is not None:
                clear = watch.lead_trigger(text) is None
            if clear:
                if self._ctx_on and self._ctx_at != self._consumed:
                    self._sync_ctx()
                self._route(text, events, self._consumed)
                self._consumed += len(text)
                if self._ctx_on:  # a lookbehind may read routed text: keep its last characters, as a scan does
                    ctx = self._ctx + text
                    self._ctx = ctx[-LOOKBEHIND_CONTEXT:] if len(ctx) > LOOKBEHIND_CONTEXT else ctx
                    self._ctx_at = self._consumed
                    if self._early:
                        self._go_late()
                if self._fast is None and self._opened:
                    self._fast = self._fast_state()
                return
            if text in watch.sure_holds and not self._disabled:  # (a header's first chunk: `Watch.scan` holds it)
                self._hold_sure(text, watch, watch.sure_holds[text])
                return
        self._scan(text, events, eos)

    def _hold_sure(self, text: str, watch: Watch, d: Any) -> None:
        """`_scan` of `text` with nothing held, where `Watch.scan` holds all of it at once (a proper beginning of a
        fixed text some delimiter starts with, `Watch.sure_holds`, that `d` begins): the state that scan leaves,
        without its window, memo and loop; `d` is the delimiter `held.still_held` asks when the text grows."""
        if self._ctx_on and self._ctx_at != self._consumed:
            self._sync_ctx()
        w0 = self._consumed - len(self._ctx)
        self._buf = text
        self._fheld = False
        self._resume = (watch, self._consumed, w0, self._consumed + len(text), {HELD_BY: d}, self._zw_at >= w0)
        self._rescan = watch.behind is not None and text[-1] in watch.behind
        self._fast = None
        if self._early and self._consumed > 0:
            self._go_late()

    def _scan(self, text: str, events: Events, eos: bool) -> None:
        """`_run` past its fast path: scan the window (context, held text, `text`) for delimiters."""
        if self._ctx_on and self._ctx_at != self._consumed:
            self._sync_ctx()
        timed = self._timed
        if timed:
            self._t0 = t0 = perf_counter()
        ctx = self._ctx
        resume = self._resume
        if (resume is not None and not eos and resume[1] == self._consumed and resume[0] is self._watch
                and not self._disabled):
            if resume[0].whole is not None:  # (what the watch knows of held texts: `region_change.py`)
                if self._vend is None and held_scan(self, resume, text, events, timed):
                    return
            elif still_held(resume[0], resume[4], ctx, self._buf + text):
                # Held text that grows (a tool-call header token by token) and is still held from its start: the
                # scan would answer its start again (`held.still_held`). What the end of this method does then,
                # with nothing routed; `_resume` stays valid (its results were found on a prefix of this text).
                held = self._buf = self._buf + text
                self._fheld = False
                behind = resume[0].behind
                self._rescan = behind is not None and held[-1:] in behind
                self._fast = None
                if timed:
                    self._left -= perf_counter() - t0
                    if self._left < self._timeout:
                        self._spend(0.0, events)
                return
        window = ctx + self._buf + text if ctx else self._buf + text
        pos = len(ctx)
        w0 = self._consumed - pos  # stream offset of window[0]
        zw = self._zw_at - w0 if self._zw_at >= w0 else -1
        fired = self._zw_fired if zw >= 0 else _NONE_FIRED
        memo: dict = {}  # regex results reusable across the scans of this window (see Watch.scan)
        held_only = False
        if resume is not None:  # the held text is scanned again with `text` after it: only its live delimiters
            self._resume = None
            if resume[0] is self._watch and resume[1] == self._consumed and not eos:
                # (with a zero-width state, on either scan, only for `Watch._held_at`: a partial match is none)
                held_only = zw >= 0 or resume[5]
                resume = (resume[4], resume[2] - w0, resume[3] - w0)
            else:
                resume = None
        while True:
            watch = self._watch
            if watch is None:
                result: Any = len(window)
            else:
                try:
                    if eos:
                        result = watch.scan_end(window, pos, zw, fired, self._disabled, self._call_timeout, memo)
                    else:
                        result = watch.scan(
                            window, pos, False, zw, fired, self._disabled, self._call_timeout, memo, resume, held_only)
                        resume = None
                except DelimiterTimeout as t:
                    self._on_timeout(t, w0 + pos, events)
                    continue
            vend = self._vend
            if vend is not None:  # a region that ends where its JSON value ends (see `_value_end`)
                if result.__class__ is int:
                    got = vend.scan(window, pos, result, w0, eos and result == len(window))
                else:
                    got = vend.scan(window, pos, result[0], w0, True)
                if got != -1:  # jsonscan.MORE: all of it is the value's
                    if got == -2:  # jsonscan.HOLD: what follows may be a separator
                        got = vend.hold
                        if got > pos:
                            self._route(window[pos:got], events, w0 + pos)
                            pos = got
                        break
                    if got > pos:
                        self._route(window[pos:got], events, w0 + pos)
                        pos = got
                    self._value_end(events)
                    continue
            if result.__class__ is int:
                if result > pos:
                    self._route(window[pos:result], events, w0 + pos)
                    pos = result
                break
            start, end, delim, groups = result
            if start > pos:
                self._route(window[pos:start], events, w0 + pos)
            if start == end:  # zero width: `delim` may not match with zero width here again
                if eos and end == len(window) and delim.kind == OPEN:
                    # An open matching at the very end of the stream (`(?:^|<think>)` on an empty
                    # generation, `$`) would open an empty region: nothing opens there (as native).
                    pos = start
                    break
                fired = (fired if start == zw else _NONE_FIRED) | {delim}
                zw = start
                memo.clear()  # results were found for the previous zero-width state
                self._on_delimiter(delim, groups, window, start, end, events, w0)
                pos = end
                if not eos and self._vend is None and self._watch is not None and not self._disabled:
                    rest = window[pos:]
                    if rest in self._watch.sure_holds:
                        # the rest begins a fixed text a delimiter starts with (Kimi K3's `<|open|>` after the
                        # zero-width close of its tool section): held, as `Watch.scan` holds it (`still_held` next)
                        memo[HELD_BY] = self._watch.sure_holds[rest]
                        break
                continue
            self._on_delimiter(delim, groups, window, start, end, events, w0)
            pos = end
            if pos == len(window) and not eos and self._vend is None:
                break  # (nothing left: a scan of no text holds and commits nothing while the stream goes on)
        self._buf = window[pos:]
        self._fheld = False
        self._consumed = w0 + pos
        if pos < len(window) and memo and self._vend is None and not eos:
            self._resume = (self._watch, w0 + pos, w0, w0 + len(window), memo, zw >= 0)
        if self._ctx_on:
            self._ctx = window[max(0, pos - LOOKBEHIND_CONTEXT) : pos]
            self._ctx_at = self._consumed
        if self._early and self._consumed > 0:
            self._go_late()
        watch = self._watch
        self._rescan = watch is not None and watch.behind is not None and window[-1:] in watch.behind
        if zw >= 0:
            self._zw_at = w0 + zw
            self._zw_fired = fired
        if eos:
            self._at_eos = True
        if timed:  # the budget's bookkeeping, inlined: two clock reads per scanned chunk
            self._left -= perf_counter() - t0
            if self._left < self._timeout:
                self._spend(0.0, events)
        self._fast = self._fast_state() if not eos else None  # (at the end of the stream no chunk follows)

    def _sync_ctx(self) -> None:
        """Bring `_ctx` up to the stream's position: `feed()`'s fast path added the text since `_ctx_at` to the
        end of the open region's `_body` without keeping context (see `_ctx_at`); take its last characters."""
        end = self._consumed
        need = min(end - self._ctx_at, LOOKBEHIND_CONTEXT)
        # the last `need` pieces hold at least `need` characters (no piece is empty), and the body at least
        # the `end - _ctx_at` characters routed since: one C-level join, whatever the chunk sizes
        tail = "".join(self._body[-need:])[-need:]
        ctx = self._ctx + tail if need < LOOKBEHIND_CONTEXT else tail
        self._ctx = ctx[-LOOKBEHIND_CONTEXT:] if len(ctx) > LOOKBEHIND_CONTEXT else ctx
        self._ctx_at = end

    def _go_late(self) -> None:
        """The stream has moved past offset 0: delimiters anchored there (`^`, `\\A`) can no longer match, so
        watch without them (a prefilter, and no kept context if nothing else looks behind)."""
        self._early = False
        if self._watch is not None:
            self._watch = self._watch.late
            self._fast = None  # (`_fast_state` again where the stream goes on: `_scan`, `_run`)
        self._ctx_on = self._tpl.late_needs_context
        if not self._ctx_on:
            self._ctx = ""

    def _route(self, text: str, events: Events, at: int) -> None:
        cur = self._current
        if cur is None:
            if not self._ended:  # outside every region: kept (see `_flush_unclaimed`)
                if not self._unclaimed:
                    self._unclaimed = []
                    self._unclaimed_at = at
                self._unclaimed.append(text)
            if self._trace and events is not None:
                reason = "after_end" if self._ended else "outside_regions"
                events.append({"type": "text_dropped", "text": text, "reason": reason})
            return
        if not self._opened:
            if self._hold_ws and not self._explicit:
                if text.isspace():  # held in `_body` (see `_pending_ws`), compacted like a region body
                    if not self._pending_ws:
                        self._pending_ws = True
                        self._ws_at = at
                    self._body.append(text)
                    if len(self._body) >= self._compact_at:
                        self._compact_body()
                    return
                if self._pending_ws:
                    text, at = "".join(self._body) + text, self._ws_at
                    self._body = []
                    self._compact_at = _COMPACT_EVERY
                    self._pending_ws = False
            self._opened = True
            self._region_start = at
            self._fast = None  # (the caller's `_scan` or `_run` looks at it again)
            if events is not None:
                events.append({"type": "region_open", "field": cur.name})
        body = self._body
        body.append(text)
        if len(body) >= self._compact_at:
            self._compact_body()
        if events is not None:
            if cur.markup is not None:
                self._markup_chunk(cur, text, events)
                return
            events.append({"type": "region_chunk", "field": cur.name, "text": text, "dirty": not cur.streamable})

    def _markup_chunk(self, cur: FieldSpec, text: str, events: list[dict[str, Any]]) -> None:
        """A chunk of a `text` field with `remove_pattern`: stream the clean text that is certain now."""
        mk = self._mk
        if mk is None:
            mk = self._mk = cur.markup.stream()
        if self._dead and cur.name in self._dead:
            mk.off = True  # its regex timed out or the budget is spent: the region will be malformed
        markup = cur.markup
        if mk.held or mk.off or not markup.plain(text):
            t0 = perf_counter()
            clean = mk.feed(markup, text)
            self._spend(perf_counter() - t0, events)
        else:  # no regex runs for this chunk: nothing to time (two clock reads and `_spend` per chunk)
            mk.sent += len(text)
            clean = text
        if clean:
            events.append({"type": "region_chunk", "field": cur.name, "text": clean, "dirty": False})

    def _flush_unclaimed(self, events: Events) -> None:
        """The text routed outside every region since the last delimiter: if the model wrote something
        there other than whitespace, it goes to `message["unparsed"]` (field None) and one
        `text_unclaimed` event, so that a template gap is visible instead of silently losing text. Text of
        the prompt (the cut prefix) is not the model's and is left out."""
        text = "".join(self._unclaimed)
        self._unclaimed = None
        at = self._unclaimed_at
        if at < self._gen_start:
            text, at = text[self._gen_start - at :], self._gen_start
        if not text or text.isspace():
            return
        error = ResponseParseError(UNCLAIMED, field=None, text=text, position=at - self._gen_start)
        self._keep_lenient(error)
        if events is not None:
            events.append({"type": "text_unclaimed", "field": None, "text": text, "error": UNCLAIMED,
                           "position": error.position})

    def _keep_lenient(self, error: ResponseParseError) -> None:
        """Keep `error`'s text in `message["unparsed"]` and in `errors`, but not in `strict_errors`."""
        self._malformed.append(error)
        self._errors.append(error)
        if self._lenient is None:
            self._lenient = []
        self._lenient.append(error)

    def _compact_body(self) -> None:
        """Join the chunks routed since the last compaction into one string, so that a long region
        streamed in token-sized chunks holds about one byte per (ASCII) character instead of ~57 per
        chunk (benchmarks/RESULTS.md, "Memory"). Each character is copied once more: still linear."""
        body = self._body
        joined = self._compact_at - _COMPACT_EVERY  # body[:joined] are already joined blocks
        body[joined:] = ["".join(body[joined:])]
        self._compact_at = joined + 1 + _COMPACT_EVERY

    def _drop_whitespace(self, events: Events) -> None:
        if self._trace and events is not None:
            events.append({"type": "text_dropped", "text": "".join(self._body), "reason": "whitespace"})
        self._body = []
        self._compact_at = _COMPACT_EVERY
        self._pending_ws = False

    def _on_delimiter(
        self, d: Any, groups: dict | None, window: str, start: int, end: int, events: Events, w0: int
    ) -> None:
        """Delimiter `d` is `window[start:end]` (`w0`: the stream offset of `window[0]`)."""
        if self._pending_ws:
            self._drop_whitespace(events)
        if self._unclaimed:
            self._flush_unclaimed(events)
        # From here the body is empty unless a region is open (and `_close_region` empties it).
        if self._trace and events is not None:
            kind = "open" if d.kind == OPEN else "close"
            events.append({"type": "delimiter", "field": d.field, "kind": kind, "text": window[start:end]})
        tpl = self._tpl
        if d.kind == OPEN:
            if self._opened:
                self._close_region(events)  # the implicit region ends where an explicit one opens
            field = tpl.by_name[d.field]
            self._current = field
            self._explicit = True
            self._opened = True
            self._captures = groups
            self._region_start = w0 + end
            if self._policy is not None:
                self._delims = [window[start:end], ""]
            self._watch = (tpl.close_watches if self._early else tpl.late_close_watches)[field.index]
            if field.value_end is not None:
                watch = self._watch
                self._vend = field.value_end(also=watch.held_chars if watch is not None else "")
            if events is not None:
                if groups:
                    events.append({"type": "region_open", "field": field.name, "captures": dict(groups)})
                else:
                    events.append({"type": "region_open", "field": field.name})
            return
        if groups:
            self._captures = {**self._captures, **groups} if self._captures else groups
        if self._policy is not None:
            self._delims[1] = window[start:end]
        if self._vend is not None:
            decoded = self._vend.decoded()
            self._vend = None
            self._close_region(events, decoded=decoded)
        elif self._opened:
            self._close_region(events)
        self._opened = False
        self._captures = None
        if self._explicit:
            self._explicit = False
            self._current = tpl.implicit_field
            self._watch = tpl.idle_watch if self._early else tpl.late_idle_watch
        else:  # the implicit field's close: the message is over
            self._current = None
            self._watch = None
            self._ended = True

    def _value_end(self, events: Events) -> None:
        """The open region's JSON value ended (`"trailing": "stream"`): the region closes here, as at a close
        delimiter of no width, and the text after it goes back to the stream (the idle state)."""
        decoded = self._vend.decoded()
        self._vend = None
        self._close_region(events, decoded=decoded)
        self._opened = False
        self._captures = None
        self._explicit = False
        tpl = self._tpl
        self._current = tpl.implicit_field
        self._watch = tpl.idle_watch if self._early else tpl.late_idle_watch

    def _close_region(self, events: Events, at_end: bool = False, decoded: tuple[Any] | None = None) -> None:
        """Parse the open region's body and store its value. `decoded`: `(value,)` when the body was already
        read (by the `value_end` scanner), so only the transform remains."""
        field = self._current
        assert field is not None
        body = "".join(self._body)
        self._body = []
        self._compact_at = _COMPACT_EVERY
        mk = self._mk
        if mk is not None:
            self._mk = None
        # a `tag_pattern` or `remove_pattern` counts against the regex budget (the only content regexes)
        regex_content = field.content == "xml-inline" or field.markup is not None
        token = None
        if regex_content:
            if self._dead and field.name in self._dead:
                error = ResponseParseError(
                    "its content regex (tag_pattern, remove_pattern) is disabled for the rest of this stream: it timed "
                    "out, or the stream's regex budget is spent", field=field.name, text=body, position=self._position())
                self._malformed_region(field, body, error, events, at_end)
                return
            # They read the regex timeout from a ContextVar; set it only when it differs (setting and resetting
            # costs ~0.5 µs per region, benchmarks/RESULTS.md). No other content parser reads it.
            if _content.REGEX_TIMEOUT.get(_content.DEFAULT_REGEX_TIMEOUT) != self._call_timeout:
                token = _content.REGEX_TIMEOUT.set(self._call_timeout)
            t0 = perf_counter()
        try:
            if decoded is None:
                value = field.parse(body, self._captures)
            else:
                value = field.reshape(decoded[0], self._captures)  # type: ignore[misc]
            if self._tools:
                value = self._tools.type_tool_calls(value, field.tool_typing)
            if field.join is not None and not isinstance(value, str):
                raise ValueError(f"'join' needs every match to parse to a string, got {type(value).__name__}")
        except RegexTimeoutError as e:
            e.field, e.text, e.position = field.name, body, self._position()
            if self._dead is None:
                self._dead = set()
            self._dead.add(field.name)  # never run it again in this stream
            self._malformed_region(field, body, e, events, at_end)
            return
        except Exception as e:  # any content-parser failure is a malformed region, never a crash
            error = ResponseParseError(f"{type(e).__name__}: {e}" if not isinstance(e, ValueError) else str(e),
                                       field=field.name, text=body, position=self._position())
            if self._policy is None or not self._malformed_as_content(field, body, events):
                self._malformed_region(field, body, error, events, at_end)
            return
        finally:
            if regex_content:
                if token is not None:
                    _content.REGEX_TIMEOUT.reset(token)
                self._spend(perf_counter() - t0, events)
        if mk is not None and events is not None:
            rest = mk.rest(field.markup.sub(body))
            if rest:
                events.append({"type": "region_chunk", "field": field.name, "text": rest, "dirty": False})
        if self._policy is not None:
            value = self._apply_policy(field, value, events)
            if value is _policy.HANDLED:
                return
        if self._store(field, value):
            if field.report is not None:
                self._report_marks(field, body, value)
            if events is None:
                pass
            elif at_end:
                events.append({"type": "region_close", "field": field.name, "value": value, "at_end": True})
            else:
                events.append({"type": "region_close", "field": field.name, "value": value})
        else:
            error = ResponseParseError(
                "does not repeat ('repeats' is false) and already has a value; this second match was not "
                "merged into the message (set 'repeats': true to collect every match)",
                field=field.name,
                text=body,
                position=self._position(),
            )
            self._malformed_region(field, body, error, events, at_end)

    def _report_marks(self, field: FieldSpec, body: str, value: Any) -> None:
        """`report_as`: list the markup matches of a region just stored, with `start`/`end` into the field's
        text in the message (after `strip`, and after the text of its earlier regions)."""
        marks = field.markup.marks(body)
        if not marks:
            return
        base = 0
        if isinstance(value, str):
            clean = field.markup.sub(body)
            lead = len(clean) - len(clean.lstrip()) if clean != value else 0  # what `strip` took off
            name = field.name
            total = len(self._message[name]) if isinstance(self._message.get(name), str) else len(value)
            if self._more and name in self._more:
                total += sum(map(len, self._more[name]))
            base = total - len(value) - lead
        out = self._message.setdefault(field.report, [])  # type: ignore[arg-type]  # (set: the caller checked)
        for mark in marks:
            mark["start"] += base
            mark["end"] += base
            out.append({"field": field.name, **mark})

    def _apply_policy(self, field: FieldSpec, value: Any, events: Events) -> Any:
        """The policy's say on a region's value (see policy.py): the value to store, or `policy.HANDLED`."""
        pol = self._policy
        assert pol is not None  # called only with a policy
        if field.name == _policy.TOOL_FIELD:
            if pol.unknown_tools == "unparsed" and self._tools:
                kept, rejected = _policy.check_calls(value, self._tools.by_name)
                if rejected:
                    self._policy_unparsed(field.name, _policy.call_text(rejected), _policy.unknown_error(rejected),
                                          self._position(), events)
                    if kept is None:
                        return _policy.HANDLED
                    value = kept
            self._called = True
            if self._held:  # content before this call is not after the last call: it is content after all
                held, self._held = self._held, None
                content = self._tpl.by_name[_policy.CONTENT_FIELD]
                for text, _ in held:
                    self._store(content, text)
                    if events is not None:
                        events.append({"type": "region_close", "field": content.name, "value": text})
        elif (field.name == _policy.CONTENT_FIELD and self._called and pol.text_after_tool_calls == "unparsed"
              and value):
            if self._held is None:
                self._held = []
            self._held.append((value, self._position()))
            return _policy.HANDLED
        return value

    def _malformed_as_content(self, field: FieldSpec, body: str, events: Events) -> bool:
        """``malformed_tool_calls='content'``: a tool-call region that did not parse is content, its raw text
        with its delimiters, at its place. False if the policy (or the template: no content field) says no."""
        content = self._tpl.by_name.get(_policy.CONTENT_FIELD)
        if (field.name != _policy.TOOL_FIELD or content is None or self._policy is None
                or self._policy.malformed_tool_calls != "content"):
            return False
        opened, closed = self._delims
        text = opened + body + closed
        self._store(content, text)  # (not held by text_after_tool_calls: it is no text after a call but a call)
        if events is not None:
            events.append({"type": "region_close", "field": content.name, "value": text, "policy": True})
        return True

    def _flush_held(self, events: Events) -> None:
        """Content written after the last tool call, under ``text_after_tool_calls='unparsed'``."""
        held, self._held = self._held or [], None
        for value, position in held:
            text = value if isinstance(value, str) else str(value)
            self._policy_unparsed(_policy.CONTENT_FIELD, text, _policy.AFTER_CALLS, position, events)

    def _policy_unparsed(self, field: str, text: str, error: str, position: int | None, events: Events) -> None:
        """Keep `text` in `message["unparsed"]` by a policy decision (not raised by strict parsing)."""
        self._keep_lenient(ResponseParseError(error, field=field, text=text, position=position))
        if events is not None:
            events.append({"type": "region_malformed", "field": field, "text": text, "error": error,
                           "position": position, "policy": True})

    def _position(self) -> int | None:
        """Where the region being closed starts, in generated characters (None if in the prefix)."""
        position = self._region_start - self._gen_start
        return position if position >= 0 else None

    def _malformed_region(
        self, field: FieldSpec, body: str, error: ResponseParseError, events: Events, at_end: bool
    ) -> None:
        self._malformed.append(error)
        self._errors.append(error)
        if events is None:
            return
        event = {"type": "region_malformed", "field": field.name, "text": body, "error": error.error,
                 "position": error.position}
        if at_end:
            event["at_end"] = True
        events.append(event)

    def _store(self, field: FieldSpec, value: Any) -> bool:
        """Put a region's value into the message; False if it cannot be merged (a non-repeating
        field that already holds a different kind of value)."""
        name = field.name
        msg = self._message
        first = name not in self._assigned
        self._assigned.add(name)
        if field.join is not None:
            if not first:
                self._append_text(name, field.join, value)
            elif name in self._tpl.default_keys and isinstance(msg[name], str):
                msg[name] = msg[name] + field.join + value  # a string default is joined onto, as native does
            else:
                msg[name] = value
        elif field.repeats:
            if not first:
                msg[name].append(value)
            elif name in self._tpl.default_keys and isinstance(msg[name], list):
                msg[name].append(value)  # a list default is appended to, as native does
            else:
                msg[name] = [value]
        elif first or _is_empty(msg[name]):
            msg[name] = value
        elif value == "":
            pass  # a second match with nothing but whitespace in it: there is nothing to keep
        elif isinstance(value, str) and isinstance(msg[name], str):
            self._append_text(name, "\n", value)
        else:
            return False
        return True

    def _append_text(self, name: str, separator: str, value: str) -> None:
        """`message[name] += separator + value`, done once in `_finish`: adding to a string again and
        again is quadratic (a field the model reopens many times)."""
        if self._more is None:
            self._more = {}
        self._more.setdefault(name, []).extend((separator, value))

    def _spend(self, seconds: float, events: Events) -> None:
        """Take `seconds` of regex time from the stream's budget; disable every regex once it is spent."""
        self._left -= seconds
        if self._left < self._timeout:
            self._call_timeout = max(self._left, 0.0)
            if self._left <= 0.0 and not self._spent:
                self._exhaust(events)

    def _exhaust(self, events: Events) -> None:
        """The regex budget is spent: no template regex runs again in this stream."""
        tpl = self._tpl
        for watch in (tpl.idle_watch, *tpl.close_watches):
            if watch is not None:
                self._disabled.update(watch.regexes)
        self._dead = {f.name for f in tpl.fields}
        self._spent = True
        error = ResponseParseError(
            f"the template's regexes ran longer than the regex budget of this stream ({self._budget:g} s in "
            "total); every regex delimiter and content regex is disabled for the rest of the stream",
            field=None,
        )
        self._errors.append(error)
        if events is not None:
            events.append({"type": "error", "field": None, "key": "regex_budget", "error": str(error)})

    def _on_timeout(self, t: DelimiterTimeout, at: int, events: Events) -> None:
        d = t.delimiter
        self._disabled.add(d)
        position = at - self._gen_start
        error = RegexTimeoutError(
            field=d.field or None,
            key=d.key,
            pattern=d.source,
            timeout=self._timeout,
            text=t.text,
            position=position if position >= 0 else None,
        )
        self._errors.append(error)
        if events is not None:
            events.append({"type": "error", "field": d.field, "key": d.key, "error": str(error)})
        if self._timed:  # the time this `_run` spent so far counts now: later searches get what is left
            left = self._left - (perf_counter() - self._t0)
            if left < self._timeout:
                self._call_timeout = max(left, 0.0)
                if left <= 0.0 and not self._spent:
                    self._exhaust(events)


#: `parse_response`'s last hit of `load_template`'s identity cache (`template._by_id`), as `(dict, snapshot, compiled)`:
#: the entry `(dict, compiled)` and `compiled._snapshot`, the private deep copy the dict must still equal (`==`), so an
#: edit made in place at any depth is seen, as by `_by_id`. The same dict passed again is one identity test and that
#: comparison, without `_by_id`'s `id()` look-up. Replaced as a whole (one tuple: a thread reads one consistent entry);
#: it keeps its dict alive, as `_by_id` does, so `is` finds this very dict.
_last: tuple[Any, Any, Any] = (object(), None, None)


def _loaded(template: Mapping[str, Any] | ResponseTemplate) -> ResponseTemplate:
    """`load_template(template)` for `parse_response`; a dict its identity cache keeps becomes `_last`."""
    global _last
    # `load_template`'s first look-up, inlined: the dict it compiled, while it equals its snapshot. (An entry keeps
    # its dict alive, so no other object has that id: an entry found is this very dict, a plain `dict`.)
    seen = _loaded_get(id(template))
    if seen is None or not template == seen[1]._snapshot:
        tpl = load_template(template)
        seen = _loaded_get(id(template))
        if seen is None or seen[1] is not tpl:  # (not kept there: a compiled template, a name, other mappings)
            return tpl
    _last = (template, seen[1]._snapshot, seen[1])
    return seen[1]


def parse_response(
    text: str,
    template: Mapping[str, Any] | ResponseTemplate,
    *,
    prefix: str | None = None,
    tools: Iterable[Any] | None = None,
    strict: bool = True,
    regex_timeout: float | None = None,
    regex_budget: float | None = None,
    policy: _policy.ParsePolicy | Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Parse one complete generation into a message dict.

    Args:
        text: the generated text (special tokens kept).
        template: a response template dict, a compiled `ResponseTemplate`, or a shipped template's name
            (`"qwen3"`, see `list_templates()`).
        prefix: the prompt before the generation (required; `""` opts out).
        tools: tool schemas (or Python functions) used to type tool-call arguments.
        strict: raise `ResponseParseError` if a region fails to parse (bad JSON in a tool call, an
            unresolved transform path) or a required field is missing. With `strict=False` the message
            is returned anyway and failed regions keep their raw text in `message["unparsed"]`.
        regex_timeout: seconds one regex search may take.
        regex_budget: seconds all regex searches of this parse may take together (see `ResponseParser`).
        policy: how to read the cases where parsers of the same model disagree (tool calls inside
            reasoning, calls to functions not in `tools`, text after the last call, tool calls that do not
            parse): a `ParsePolicy` or a dict of some of its keys, over the template's own ``"policy"``
            defaults (see `policy.py`). Under ``malformed_tool_calls="content"`` a tool call that does not
            parse is content (its raw text), and `strict` does not raise for it.

    Example:
        >>> parse_response("<think>Hm</think>Hi!<|im_end|>", template, prefix="")
        {'role': 'assistant', 'reasoning_content': 'Hm', 'content': 'Hi!'}
    """
    if text.__class__ is not str and not isinstance(text, str):
        raise TypeError(
            f"parse_response takes one generated text (a str), got {type(text).__name__}: for token ids, tensors "
            "or a batch, use tokenizer.parse_response(response, prefix=...), which decodes them (and returns a "
            "list for a batch); or parse each text with [parse_response(t, template, prefix=p) for t in texts]"
        )
    # the dict of the last call (`_last`, one unpack) while it equals its snapshot; any other template through `_loaded`
    kept, snapshot, tpl = _last
    if template is not kept or not template == snapshot:
        tpl = _loaded(template)
    if (policy is None and regex_timeout is None and regex_budget is None and prefix.__class__ is str
            and (tools is None or tools.__class__ is list or tools.__class__ is tuple)  # (read once: no iterator)
            and (plan := tpl.oneshot_plan or plan_for(tpl))):  # (False: no plan for this template)
        # the flat one-shot reading (plan.py); None: this response needs the state machine
        message = plan.run(text, prefix, tool_schemas(tools) if tools else None)
        if message is not None:
            return message
    parser = ResponseParser.__new__(ResponseParser)
    cut = parser._setup(tpl, prefix, tools, False, regex_timeout, regex_budget, policy)
    if cut:
        text = cut + text  # (the stream: `feed` of the cut prefix then of the text, chunking invariance)
    if text:
        # The whole generation is here, so it is also the end of the stream: no delimiter can be
        # partial, and regex delimiters need no partial matching (which can cost ~0.2 µs per
        # character for patterns such as gpt-oss's `\s*to=functions...`).
        parser._run(text, None, True)
    message = parser._finish(None)
    if strict and parser._errors:
        errors = parser.strict_errors
        if errors:
            raise errors[0]
    return message
