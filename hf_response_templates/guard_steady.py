"""`feed()`'s steady state away from a lookbehind's guard: a guarded lead is no prefilter text there (issue 19).

A delimiter alternative that starts with a positive lookbehind can only match right after a match of that lookbehind:
Gemma 4's tool-call open ``(?<=<channel\\|>\\s{0,2})call:(?P<name>...)`` only within two spaces after ``<channel|>``.
Its lead ``call:`` still made ``c`` one of the watch's prefilter characters, so in the steady state (a region open,
nothing held: `ResponseParser._fast_state`) every chunk with a ``c`` ("case", "check") went to the trigger search,
and one ending with ``c`` (a beginning of ``call:``) to a scan (~20 µs with its `regex` partial match, measured).

`guarded_steady` builds, for such a watch, the steady state's own prefilter (`GuardedSteady`: the attributes of
`Watch` that `region_change.steady_for` / `steady_markup` read): the watch's fixed texts with each guarded
alternative's leads replaced by the fixed texts its lookbehind's matches begin with (``<channel|>``). The parser uses
it where the text so far is not `live`: no such fixed text ends within the lookbehind's longest match of the end,
nor does a proper beginning of one end the text. Then no guarded alternative can match (nor partially) before a
chunk brings one of those fixed texts, or a beginning of one at its end, which that prefilter finds (the chunk goes
the usual way); so every chunk it routes is one the watch's own scan would route whole. Elsewhere (right after
``<channel|>``) the watch's own steady state applies, as before. `tests/test_guard_steady.py` compares the parser
with the view and without it.
"""

from __future__ import annotations

from typing import Any

from .behind_guard import _group_end, top_alternatives
from .regex_leads import _SPACE_CHARS, _hold_prefixes, _literal_leads, _partial_leads, _widths

#: The longest lookbehind match a guard may have (`delimiters.LOOKBEHIND_CONTEXT`, the context a scan keeps).
_MAX_SPAN = 256


class GuardedSteady:
    """A watch's prefilter for `feed()`'s steady state where the text so far is past every lookbehind guard's reach
    (see the module docstring): `fast_chars`, `feed_trigger`, `feed_holds`, `lone_hold`, `hold_next` and `steady` as
    on `Watch` (what `region_change.steady_for` / `steady_markup` read), and `live(text, pos)`, a search that finds
    something in `text` from `pos` (the last `span` characters) where a guard's fixed text, or a beginning of one
    ending the text, may still lead to a guarded match: then this view does not apply."""

    __slots__ = (
        "fast_chars",
        "feed_trigger",
        "feed_holds",
        "lone_hold",
        "hold_next",
        "steady",
        "live",
        "span",
    )

    def __init__(self, watch: Any, texts: set[str], guards: set[str], span: int) -> None:
        from .delimiters import _lead_trigger  # (local: delimiters imports this module)

        firsts = sorted({t[0] for t in texts})
        self.fast_chars = "".join(firsts)
        self.feed_trigger = _lead_trigger(tuple(texts))
        self.feed_holds = _hold_prefixes(watch.delimiters, texts)
        self.lone_hold: str | None = None
        self.hold_next: str | None = None
        if len(firsts) == 1 and firsts[0] in self.feed_holds and all(len(t) > 1 for t in texts):
            self.lone_hold = firsts[0]  # (as `Watch.lone_hold`, from these texts)
            self.hold_next = "".join(sorted({t[1] for t in texts}))
        self.steady: dict = {}
        self.live = _lead_trigger(tuple(guards))
        self.span = span


def guard_leads(source: str) -> tuple[set[str], set[str], int] | None:
    """For regex `source` with a top-level alternative that starts with a positive lookbehind: `(leads, guards,
    span)`, the fixed texts the matches of its other alternatives begin with (`_partial_leads`), those the matches of
    its lookbehinds begin with, and the longest match of those lookbehinds; None if there is no such alternative or
    any of it is unknown (then the watch keeps its own prefilter)."""
    alts = top_alternatives(source)
    if alts is None or not any(a.startswith("(?<=") for a in alts):
        return None
    leads: set[str] = set()
    guards: set[str] = set()
    span = 0
    for alt in alts:
        if alt.startswith("(?<="):
            end = _group_end(alt, 0)
            if end is None:
                return None
            body = alt[4 : end - 1]
            texts = _literal_leads(body)
            widths = _widths(body)
            if texts is None or widths is None or widths[1] > _MAX_SPAN:
                return None
            guards.update(texts)
            span = max(span, widths[1])
        else:
            found = _partial_leads(alt) if alt else None
            if found is None:
                return None
            leads.update(found)
    return leads, guards, span


def guarded_steady(watch: Any) -> GuardedSteady | None:
    """`Watch.narrow` of `watch` (built, but for this, with `prefilter=True`): its `GuardedSteady`, or None where no
    delimiter has a guarded alternative whose leads it can leave out, or the view would not be a one- or
    two-character prefilter. Only for a watch whose steady state is read from its lead texts (`lead_trigger`, no
    lookbehind character to rescan after: `behind`) and whose guarded regexes `regex`'s false partial matches are
    known for (`Delimiter.behind_false`): there, the scan routes all text where no match can start."""
    if (
        watch.lead_trigger is None
        or watch.feed_trigger is not watch.lead_trigger
        or watch.behind is not None
        or watch.fast_chars is None
    ):
        return None
    texts: set[str] = set(watch.lit_lookup)
    guards: set[str] = set()
    span = 0
    for d in watch.regexes:
        if d.anchored or d.partial_leads is None:
            return None
        split = guard_leads(d.source) if d.behind_false is not None else None
        if split is None:
            texts.update(d.partial_leads)
            continue
        texts |= split[0] | split[1]
        guards |= split[1]
        span = max(span, split[2])
    if not guards or not texts or "" in texts:
        return None
    firsts = {t[0] for t in texts}
    if len(firsts) > 2 or firsts & _SPACE_CHARS or set(watch.fast_chars) <= firsts:
        return None  # (no smaller prefilter than the watch's own)
    return GuardedSteady(watch, texts, guards, span)
