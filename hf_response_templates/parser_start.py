"""The state a `ResponseParser` starts from, cached per template and cut prefix (issue 19: building a parser).

In the default configuration (no `trace`, `policy`, `regex_timeout` nor `regex_budget`), what a new parser holds
once its cut prefix has run depends on nothing but the template and that cut: a chat template prefills the same
few texts (``<think>\\n``, or nothing) after its start anchor for every response. The first parser of a template
and cut runs it through the state machine (`ResponseParser._setup`, then `_run`), and `record` keeps the state
it reached; the next ones get it from `start`: one tuple assigned to the slots in one statement, plus the few
mutable values each parser needs its own of (the message, the region's body, the error lists, the events).

That replaces, per parser, about 50 separate attribute stores, the reads of the template's constants and the
calls `_setup` makes, and the prefix run's scan (~5 µs): 2-10 µs warm, and several times that right after a
full garbage collection, where every object and code path touched for the first time costs a cache miss
(`benchmarks/bench_all.py` collects before each stream it times).

Not cached (such parsers run the slow way, always): a run that stored a value, kept text in ``unparsed``,
met an error or holds a stateful reader (`jsonscan.ValueEnd`, `content.MarkupStream`); a template with a
``policy``; a cut longer than `CUT_CACHED` characters; more than `STATES` cuts per template.
"""

from __future__ import annotations

from io import StringIO
from typing import Any

from .template import ResponseTemplate, load_template
from .tools import tool_schemas

__all__ = ["CUT_CACHED", "FRESH", "SLOTS", "STATES", "build", "record", "start"]

#: At most this many cut prefixes cached per template, each at most this long (a template without a start
#: anchor cuts nothing: the whole prompt is its "cut", not worth keeping).
STATES = 32
CUT_CACHED = 256

#: The slots `start` assigns from the cached tuple, in the order of its assignment statement (and of the
#: tuple `record` builds). `tests/test_parser_start.py` checks that with `FRESH` they are every slot.
SLOTS: tuple[str, ...] = (
    "_tpl", "_trace", "_timeout", "_call_timeout", "_left", "_budget", "_timed", "_dead", "_spent", "_more",
    "_current", "_explicit", "_opened", "_compact_at", "_vend", "_watch", "_ended", "_buf", "_fheld", "_ctx",
    "_ctx_on", "_ctx_at", "_rescan", "_early", "_consumed", "_gen_start", "_zw_at", "_zw_fired", "_resume",
    "_region_start", "_pending_ws", "_ws_at", "_hold_ws", "_finalized", "_fast", "_held_fast", "_at_eos",
    "_unclaimed", "_unclaimed_at", "_lenient", "_mk", "_policy", "_held", "_called",
)  # fmt: skip

#: The slots each parser gets its own value of (`_t0` is only set by a timed scan, as in `_setup`; `_acc`, the
#: accumulator of `feed()`'s steady state, is made with the first `_fast` tuple, so here too when one is cached).
FRESH = frozenset({"_tools", "_message", "_assigned", "_body", "_captures", "_disabled", "_malformed", "_errors",
                   "_delims", "initial_events", "_t0", "_acc"})

#: Values the cached tuple may hold: immutable ones, and objects that parsers share anyway: the template's own
#: (template, fields, watches) and `_resume`, `_fast`, `_held_fast` (tuples; `_resume`'s memo is only read).
_IMMUTABLE = frozenset({str, int, bool, float, tuple, frozenset, type(None)})
_SHARED = frozenset({"_tpl", "_current", "_watch"})


def _events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "captures": dict(e["captures"])} if "captures" in e else dict(e) for e in events]


def build(p: Any, template: Any, prefix: str, tools: Any) -> None:
    """`ResponseParser.__init__` in the default configuration (`prefix` a str): `start` from the cached state of
    the template and cut prefix, or build it the slow way (`_setup`, `_run` of the cut) and `record` its state."""
    tpl = template if template.__class__ is ResponseTemplate else load_template(template)
    if tpl.policy is not None:  # (`_setup` resolves it into another template: never cached)
        cut = p._setup(tpl, prefix, tools, False, None, None, None)
        if cut:
            p._run(cut, p.initial_events, False)
        return
    anchor = tpl.start_anchor
    left = None
    if anchor.literals is not None or len(prefix) <= anchor.untimed_search:
        cut = tpl.cut_prefix(prefix)
    else:  # a timed `start_anchor_pattern` search: `_setup` counts it against the stream's regex budget
        cut = p._setup(tpl, prefix, tools, False, None, None, None)
        left = p._left
    states = tpl.__dict__.get("_prefix_states")
    state = states.get(cut) if states is not None else None
    if state is not None:
        start(p, state, tool_schemas(tools) if tools else None)
        if left is not None:
            p._left = left
            p._call_timeout = min(p._timeout, left)
        return
    if left is None:
        p._setup(tpl, prefix, tools, False, None, None, None, cut)
    if cut:
        p._run(cut, p.initial_events, False)
    record(p, cut)


def start(p: Any, state: tuple, tools: Any) -> None:
    """Set up parser `p` from `state` (what `record` kept), with tool schemas `tools` (already built, or None)."""
    values, body, captures, events = state
    (p._tpl, p._trace, p._timeout, p._call_timeout, p._left, p._budget, p._timed, p._dead, p._spent, p._more,
     p._current, p._explicit, p._opened, p._compact_at, p._vend, p._watch, p._ended, p._buf, p._fheld, p._ctx,
     p._ctx_on, p._ctx_at, p._rescan, p._early, p._consumed, p._gen_start, p._zw_at, p._zw_fired, p._resume,
     p._region_start, p._pending_ws, p._ws_at, p._hold_ws, p._finalized, p._fast, p._held_fast, p._at_eos,
     p._unclaimed, p._unclaimed_at, p._lenient, p._mk, p._policy, p._held, p._called) = values  # (`SLOTS`)
    p._tools = tools
    p._message = values[0].new_message()
    p._assigned = set()
    p._body = list(body) if body else []
    p._captures = dict(captures) if captures is not None else None
    p._disabled = set()
    p._malformed = []
    p._errors = []
    p._delims = ["", ""]
    p.initial_events = _events(events) if events else []
    p._acc = None if p._fast is None and p._held_fast is None else StringIO().write


def record(p: Any, cut: str) -> None:
    """Keep the state parser `p` (just built in the default configuration: `_setup`, then `_run` of `cut`)
    starts from, on its template, for `start`, if it is one to share (see the module docstring)."""
    tpl = p._tpl
    if (len(cut) > CUT_CACHED or p._policy is not None or p._assigned or p._errors or p._malformed
            or p._more is not None or p._vend is not None or p._mk is not None or p._dead is not None or p._disabled
            or p._held is not None or p._spent or p._unclaimed or p._lenient is not None or p._delims != ["", ""]
            or p._message != tpl.new_message()):
        return
    states = tpl.__dict__.get("_prefix_states")
    if states is not None and (len(states) >= STATES or cut in states):
        return
    values = []
    for name in SLOTS:
        value = getattr(p, name)
        if value.__class__ not in _IMMUTABLE and name not in _SHARED:
            return
        values.append(value)
    # the regex time the run spent is its own: a parser from the cache starts with the whole budget (as `_setup`)
    values[SLOTS.index("_left")] = p._budget
    values[SLOTS.index("_call_timeout")] = min(p._timeout, p._budget)
    captures = p._captures
    if captures is not None and captures.__class__ is not dict:
        return
    state = (tuple(values), tuple(p._body), dict(captures) if captures is not None else None, _events(p.initial_events))
    if states is None:
        object.__setattr__(tpl, "_prefix_states", {cut: state})  # (a cache on the immutable template)
    else:
        states[cut] = state
