"""The constants of the one-shot plan's two-state loop (`plan.OneShotPlan._fast_run`), chosen once per template.

`_fast_shape` reads a compiled template into the tuple `_fast_run` unpacks per call: how the idle watch is
searched (`_scanner`'s kinds, `_alone`'s inlined idle scans, `tries_scan.TriesScan` for a text that starts several
delimiters), each open's field info (name, parse, store code, join) and its close watch's search (`_sure`'s inlined
closes of fixed texts, `tail_scan.tail_close`'s of a run then a fixed tail, `value_close`'s of JSON calls back to
back), the implicit field, and what the message starts from. Kept apart from `plan.py`, which runs the loop: this
module only decides its shape.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any

from .call_chain import chain_opens
from .delimiters import OPEN
from .fused_chain import fused_chain
from .group_search import group_search
from .here_scan import PLAIN, here_scan
from .jsonscan import ValueEnd, whole_sequence_end, whole_value_end
from .lead_scan import _EMPTY, LeadScan, LeadSearch, fixed_scan
from .section_scan import section_opens
from .tail_scan import tail_close
from .template import _strip_text
from .tries_scan import tries_scan
from .trigger_scan import TriggerScan
from .value_close import value_close

__all__: list[str] = []


def _reshape_decoded(reshape: Any, body: str, decoded: tuple[Any, dict | None]) -> Any:
    return reshape(*decoded)


def _unmarked_lead(f: Any) -> str | None:
    """For a `report_as` field whose value is its body stripped where no markup match can start in it (a `text`
    field, stripped, no transform: `parse.unmarked_strip`, Cohere's): the one fixed text every match of its markup
    starts with (`Markup.leads`), else None. `_fast_run` then stores a body without that text as a plain text
    field's (its strip, no marks to list: `Markup.marks` finds none) and parses only the others."""
    leads = f.markup.leads if f.markup is not None else None
    if not getattr(f.parse, "unmarked_strip", False) or leads is None or len(leads) != 1 or not leads[0]:
        return None
    return leads[0]


def _whole_of(plan: Any, f: Any) -> Any:
    """How `_fast_run` reads JSON field `f`'s values when they are all there, before any `ValueEnd`:
    `jsonscan.whole_value_end` for one value (`OneShotPlan._whole`), `whole_sequence_end` with the separator
    for a sequence (Llama 3's `;`), None for the scanner alone."""
    if f.name in plan._whole:
        return whole_value_end
    args = getattr(f.value_end, "args", ())
    if f.value_end.__class__ is partial and f.value_end.func is ValueEnd and args[:1] and args[0].__class__ is str \
            and args[0] and set(f.value_end.keywords) <= {"also"}:
        return partial(whole_sequence_end, args[0])
    return None


def _scanner(plan: Any, watch: Any) -> tuple[int, Any, Any]:
    """How `_fast_run` searches `watch`: `(0, literal, delimiter)` (`str.find`), `(1, search, lookup)` (one
    compiled alternation of literals), `(2, LeadScan, slot)` (`lead_scan.py`), `(4, scan_end, None)`
    (`Watch.scan_end`); `(3, None, None)` for no watch."""
    if watch is None:
        return 3, None, None
    one = plan._ones.get(watch)
    if one is None:
        return 4, watch.scan_end, None
    if one[0] is not None:
        return 0, one[0], one[1]
    if one[1] is None:
        return 2, one[2], one[3]
    return 1, one[1], one[2]


def _sure(scanner: tuple[int, Any, Any]) -> tuple[int, Any, Any]:
    """A close watch's `_scanner` answer, with a `LeadScan` whose every match is known where its text is found
    (no two texts at one position, no regex tried at offset 0, one delimiter per text: a literal or a regex
    whose width there `lead_scan._sure_width` knows, `(?=\\[TOOL_CALLS\\])|</s>` of Mistral, `(?=<)` of Kimi
    K3) read in `_fast_run` itself: `(7, text, (delimiter, width))` for one text (`str.find`: each search
    stops at the next find, so it reads each part of the text once), `(6, LeadScan, (slot, ((delimiter,
    width), ...)))` for several (its finds list, kept as `LeadScan.end` keeps it). A width of 0 is a
    zero-width match, not taken at `zw` by a delimiter that fired there (as `LeadScan.end`: the next find)."""
    kind, scan, slot = scanner
    if kind != 2 or scan.__class__ is not LeadScan or not scan.alone or scan.start:
        return scanner
    sure = []
    for t in scan.only:
        if t is None or not (t[1] > 0 or t[1] == _EMPTY):
            return scanner
        sure.append((t[0], t[1] if t[1] > 0 else 0))
    if len(sure) == 1:
        return 7, scan.texts[0], sure[0]
    return 6, scan, (slot, tuple(sure))


def _bare(info: tuple, kind: int, a: Any, b: Any) -> tuple:
    """An open's `(info, kind, a, b)` (`_fast_shape`'s `close`), with `_sure`'s kind-7 `(delimiter, width)` given a
    third item: whether the field is a plain one-value text field (no parse, store 0), whose empty region the store
    drops (its "" is as no region at all), so that `_fast_run` does not list one (Kimi K3's tool-section wrappers,
    closed by `(?=<)` right at their open's end)."""
    if kind == 7:
        b = (*b, info[1] is None and info[2] == 0)
    return info, kind, a, b


def _no_close(window: str, pos: int) -> None:
    """Close kind 3's search where a field has no close watch (`_searched`): it finds nothing, so the region runs to
    the end of the text."""
    return None


def _searched(scanner: tuple[int, Any, Any]) -> tuple[int, Any, Any]:
    """A close watch's answer (`_sure`, then `tail_scan.tail_close`), with a `LeadSearch` (no regex tried at offset 0)
    read in `_fast_run` itself, searched from the region's start each time (as the kind-9 idle scan: the search from
    `pos` finds what the finds list would hold, so none is kept): `(3, search, (scan, (delimiter, width), ...))`,
    the table indexed by the search's `lastindex`, a width for a text where the match is known (`_sure`'s: a
    literal, 0 for a zero-width one), `(delimiter, -1)` for a regex without captures matched there (by its `re`
    twin when untimed: the loop takes a match of some width, anything else is `LeadSearch.end`'s), `(None, -3)` where
    `LeadSearch.end` decides from that find (several delimiters at one text, a regex with captures). Qwen3.5's,
    GLM-4.7's and Seed-OSS's reasoning close `</think>|(?=<tool_call>)|...`, Qwen3-Coder's call close. No close
    watch: `(3, _no_close, None)`, a search that finds nothing."""
    kind, scan, slot = scanner
    if kind == 3:
        return 3, _no_close, None
    if kind != 2 or scan.__class__ is not LeadSearch or scan.start:
        return scanner
    table = tuple((t[0], t[1] if t[1] > 0 else 0) if t is not None and (t[1] > 0 or t[1] == _EMPTY) else
                  (t[0], -1) if t is not None and t[1] == -1 and not t[0].group_slots else (None, -3)
                  for t in scan.only)
    return 3, scan.search, (scan, *table)


def _alone(scanner: tuple[int, Any, Any]) -> tuple[int, Any, Any]:
    """An idle watch's `_scanner` answer, with a `LeadScan` whose texts begin no other and each start one
    delimiter (a literal, or a regex tried where its text is found: Mistral's `[TOOL_CALLS]` open and `</s>`)
    read in `_fast_run` itself: `(8, LeadScan, slot)`, or `(9, LeadSearch, slot)` for a `LeadSearch` whose
    finds each start one delimiter (Kimi K3's, Qwen3.5's, DeepSeek's). The loop takes the first find's
    literal, or its regex's match there when untimed and not zero-width, and asks `end` for everything else
    (from the same finds)."""
    kind, scan, slot = scanner
    if kind != 2 or not isinstance(scan, LeadScan) or scan.start or (None in scan.only and scan.__class__ is not LeadSearch):
        return scanner
    if any(t is not None and t[1] < 0 and t[1] != -1 for t in scan.only):  # (`_EMPTY`: zero width, `LeadScan.end`'s)
        return scanner
    if scan.__class__ is LeadSearch:
        return 9, scan, _only(scan)
    if scan.__class__ is LeadScan and scan.alone:  # (most texts sharing a first character: `group_search.py`)
        grouped = group_search(scan)
        return (8, scan, slot) if grouped is None else (9, grouped, _only(grouped))
    return scanner


#: The width in a kind-9 table (`_only`) of a text where several delimiters start: NaN, which is not > 0 (a
#: literal), not < 0 (a regex) and true (not a fused open's 0), so the loop takes it for none of them
_SEVERAL = float("nan")


def _only(scan: LeadSearch) -> tuple[tuple[Any, ...], ...]:
    """A kind-9 idle scan's table (`_alone`): its `only` tries, `(None, _SEVERAL)` for a text found where several
    delimiters start (Kimi K2's `<|tool_calls_section_begin|>` and the longer close it begins), which the loop
    takes for neither a literal, a regex nor a fused open (`_fused_tails`): `LeadSearch.end` reads those
    (`_best`)."""
    return tuple(t if t is not None else (None, _SEVERAL) for t in scan.only)


def _start(scanner: tuple[int, Any, Any], watch: Any, late: Any) -> tuple[int, Any, Any]:
    """An idle watch's `_scanner` answer, with a `LeadScan` whose one `start` regex (a match at offset 0 only,
    no captures: Llama 3's `^\\s*(?=\\{...)`) `_fast_run` tries there itself: `(5, (delimiter, match, untimed
    span, texts, LeadScan), slot)`. Where it does not match (and no text of the scan is at offset 0), the
    watch's answer from offset 0 is its late watch's (`late`: the same delimiters but that regex), which the
    loop then reads on. The same for a `TriggerScan` of one regex with an alternative anchored at offset 0, whose
    late watch has the same delimiters (Llama 4 JSON's `^\\s*(?:<|python_start|>\\s*)?(?=\\{...)|(?<=\\})...` open):
    its match at offset 0, where no literal of it is, is the first; where it has none, the late watch reads from
    offset 0 (its own try there included)."""
    kind, scan, slot = scanner
    early, kept = set(watch.delimiters), set(late.delimiters) if late is not None else None
    if kind == 2 and scan.__class__ is TriggerScan and scan.at0 and early == kept and not scan.one[0].group_slots:
        d, _, fast, span, _ = scan.one
        return 5, (d, fast, span, scan.lit_texts, scan), slot
    if kind != 2 or not isinstance(scan, LeadScan) or len(scan.start) != 1 or late is None:
        return scanner
    d, _, fast, span, _ = scan.start[0]
    if d.group_slots or kept - early or early - kept != {d}:
        return scanner
    return 5, (d, fast, span, scan.texts, scan), slot


def _fused(idle: tuple[int, Any, Any], opens: dict, implicit: Any, opens0: dict | None,
           by_name: Any) -> tuple[int, Any, Any]:
    """An `_alone` idle scan (kind 8) whose regex opens each start a field closed by two of its own fixed texts
    (`_sure`'s kind 6 close, as a JSON value read whole (kind 5) or a plain region: Mistral Small 3.2's and
    Ministral 3's `[TOOL_CALLS]NAME[ARGS]{...}` closed by `(?=\\[TOOL_CALLS\\])|</s>`): `(8, LeadScan, slot)` with
    those opens' tries marked (width 0, which `LeadScan.end` reads as a regex to match, as -1) and carrying
    `(kind, info, a, b, wa, da, wb, db, dinfo, chain)`: the close's two texts' indices in the idle finds, their
    widths and delimiters, the field's info for a value the loop decodes in a region to the close (plain JSON, as
    `_fused_tails`'s `dinfo`; None for kind 5, whose `info` is that already), and `fused_chain.py`'s reading of the
    calls that follow back to back (or None). `_fast_run` then reads the open, its close (from the idle finds,
    which hold the same texts: one list, so each text is searched about once) and the value in one loop turn, where
    the region is an ordinary one (see there); anything else takes the loop's usual path from the open. A kind-9
    idle scan's opens closed by a run then a fixed tail are fused likewise (`_fused_tails`, `by_name` the
    template's fields)."""
    kind, scan, slot = idle
    if kind == 9 and implicit is not None and not opens0:
        return 9, scan, _fused_tails(slot, opens, by_name)
    if kind != 8 or implicit is None or opens0:
        return idle
    only = list(scan.only)
    for j, t in enumerate(scan.only):
        act = opens.get(t[0])
        if t[1] != -1 or act is None:
            continue
        info, ck, ca, cb = act
        close = ca if ck == 5 else (ck, ca, cb)
        if close[0] != 6 or len(close[2][1]) != 2 or not set(close[1].texts) <= set(scan.texts):
            continue
        if ck == 5 and cb[1] is not whole_value_end:  # (one value: `whole_value_end`, which the loop inlines)
            continue
        (da, wa), (db, wb) = close[2][1]
        a, b = (scan.texts.index(text) for text in close[1].texts)
        f = by_name[info[0]]  # (a region to the close: its plain JSON value decoded in the loop, as `_fused_tails`)
        decoded = getattr(f.reshape, "decoded", None) if ck != 5 and f.plain_json else None
        dinfo = None if decoded is None else (info[0], decoded, info[2], info[3])
        tried = (t[0], 0, *t[2:5], (ck, cb[2] if ck == 5 else info, a, b, wa, da, wb, db, dinfo))
        only[j] = (*tried[:5], (*tried[5], fused_chain(scan.texts, j, tried)))
    if only == list(scan.only):
        return idle
    fused = copy.copy(scan)
    fused.only = tuple(only)
    return 8, fused, slot


def _fused_tails(table: tuple[tuple[Any, ...], ...], opens: dict, by_name: Any) -> tuple[tuple[Any, ...], ...]:
    """A kind-9 idle scan's table (`_only`) with each regex open whose field is closed by a run then a fixed
    tail (`tail_scan.py`'s close kind 10: FunctionGemma's, InternLM2's and DeepSeek-R1's tool calls) marked as
    `_fused`'s kind-8 opens are (width 0), carrying `(info, tail, chars, search, untimed span, bounded,
    dinfo, ones)`: the close's constants, and `dinfo` the field's info for a value the loop decodes (its parse the
    field's `reshape.decoded`, as `_fast_shape`'s) where its content is plain JSON (`FieldSpec.plain_json`),
    else None. `_fast_run` then reads the open, its close and (plain JSON) the value in one loop turn; anything
    else (no tail, no match, a timed search, a body that is not one JSON value) takes the loop's usual path
    from the open."""
    out = list(table)
    for j, t in enumerate(table):
        act = opens.get(t[0]) if t[0] is not None else None
        if t[1] != -1 or act is None or act[1] != 10:
            continue
        info, _, tail, (chars, search, span, _, _, _, bounded, ones) = act
        f = by_name[info[0]]
        decoded = getattr(f.reshape, "decoded", None) if f.plain_json else None
        dinfo = None if decoded is None else (info[0], decoded, info[2], info[3])
        out[j] = (t[0], 0, *t[2:5], (info, tail, chars, search, span, bounded, dinfo, ones))
    return tuple(out)


def _fast_shape(plan: Any, tpl: Any) -> tuple | None:
    """`OneShotPlan._fast_run`'s constants, or None if the template needs the general loop: a JSON field read
    to its value's end, `report_as` on a field of the defaults or a JSON one, no idle watch, a close watch with
    an open in it, or a required field among the defaults."""
    idle_watch = tpl.idle_watch
    keep = tpl.default_keys
    if idle_watch is None or any(f.report is not None and (f.name in keep or f.value_end is not None)
                                 for f in tpl.fields):
        return None
    if keep & set(tpl.required):
        return None
    lates = plan._lates or {}

    def info(f: Any) -> tuple[str, Any, int, Any]:
        # the store code: 0 one value, 1 repeats, 2 join; 5, 3, 4: the same, of a field in the defaults; 6, a
        # field with `report_as` (Cohere's citations; none of the defaults), stored as the general loop stores it
        # and then its marks listed: `(field, join, lead)` in the separator's place (`_unmarked_lead`)
        if f.report is not None:
            lead = _unmarked_lead(f)
            return f.name, None if lead is not None or f.parse is _strip_text else f.parse, 6, (f, f.join, lead)
        if f.join is not None:
            store = 2 if f.name not in keep else 4
        elif f.repeats:
            store = 1 if f.name not in keep else 3
        else:
            store = 0 if f.name not in keep else 5
        return f.name, None if f.parse is _strip_text else f.parse, store, f.join

    # for each open: `(field info, *close watch scanner)`, the close watch's late one (a close is found
    # past offset 0 but after a zero-width open at 0: those few in `opens0`, with the early one)
    def close(f: Any, w: Any) -> tuple:
        if f.value_end is None:
            # (plain JSON calls back to back, each read with its close and the next open: `value_close.py`)
            name, _, store, sep = info(f)
            fused = value_close(plan, tpl, f, w, (name, getattr(f.reshape, "decoded", None) or partial(
                _reshape_decoded, f.reshape), store, sep))
            if fused is not None:
                return info(f), -2, None, fused
            return _bare(info(f), *_searched(tail_close(w, _sure(_scanner(plan, w)))))
        # (`dinfo`: the field's info for a region whose value the scan decoded, stored as `(dinfo, start, start,
        # (value, captures))`: its parse is the field's `reshape` of that value, made once here, not per region)
        name, _, store, sep = info(f)
        dinfo = (name, getattr(f.reshape, "decoded", None) or partial(_reshape_decoded, f.reshape), store, sep)
        return info(f), 5, _sure(_scanner(plan, w)), (f, _whole_of(plan, f), dinfo)

    opens: dict = {}
    opens0: dict = {}
    for d in idle_watch.delimiters:
        if d.kind != OPEN:
            continue
        f = tpl.by_name[d.field]
        w = tpl.close_watches[f.index]
        if w is not None and any(c.kind == OPEN for c in w.delimiters):
            return None
        opens[d] = close(f, lates.get(w, w))
        if w in lates:
            opens0[d] = close(f, w)

    def idle_of(watch: Any) -> tuple:
        # the idle watch's delimiters by what the search gives: `(delimiter, width, opens entry or None)`
        kind, a, b = _scanner(plan, watch)
        if kind == 0:
            return 0, a, (b, len(a), opens.get(b))
        if kind == 1:
            return 1, a, {text: (d, len(text), opens.get(d)) for text, d in b.items()}
        if kind == 4:  # (`Watch.scan_end`: tried at the position first where the watch allows, `here_scan.py`;
            # `_fast_run` reads the `HereScan` itself, and calls the watch's `scan_end` for the rest)
            return 4, here_scan(watch) or PLAIN, watch.scan_end
        if kind == 2:  # (a `LeadScan` with a text that starts several delimiters: `tries_scan.py`)
            return 2, tries_scan(a), b
        return kind, a, b

    late_idle = _alone(idle_of(lates[idle_watch])) if idle_watch in lates else None
    idle = _start(_alone(idle_of(idle_watch)), idle_watch, lates.get(idle_watch)) if late_idle is not None else (
        _alone(idle_of(idle_watch)))
    if idle[0] == 5 and idle[1][4].__class__ is TriggerScan and late_idle[1].__class__ is TriggerScan:
        # (`_start`'s `TriggerScan`: the late scan reads from offset 0 only where nothing matched there, so it
        # need not try every delimiter there again; where the fixed texts of the anchored regex's other
        # alternatives find it (`lead_scan.fixed_scan(late=True)`: Hunyuan's), a `LeadScan` of those, read inline)
        fixed = fixed_scan(lates[idle_watch], True)
        if fixed is not None:
            late_idle = _alone((2, fixed, late_idle[2]))
        else:
            late_scan = copy.copy(late_idle[1])
            late_scan.at0 = False
            late_idle = (late_idle[0], late_scan, late_idle[2])
    implicit = tpl.implicit_field
    if late_idle is None:
        idle = _fused(idle, opens, implicit, opens0, tpl.by_name)
        if not opens0:
            section_opens(tpl, idle, opens)
            chain_opens(tpl, idle, opens)
    acts = {d: opens.get(d) for d in idle_watch.delimiters}  # (the implicit field's close: None)
    return (*idle, acts, None if implicit is None else info(implicit), tpl.hold_whitespace, tpl.has_regex,
            tpl._defaults_simple, keep, tuple(tpl.required), late_idle, opens0 or None)
