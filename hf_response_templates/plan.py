"""One-shot plans: `parse_response` without the streaming state machine, where a template allows it.

A `OneShotPlan` is compiled once per compiled template (`plan_for`, cached on the `ResponseTemplate`,
immutable) and reads one whole generation in a flat loop: the template's own watches find the next
delimiter (`Watch.scan_end`: `str.find` for literals, compiled-regex matches at the fixed texts a regex
starts with), and each region's body is a slice of the text between its delimiters, parsed by the field's
own content parser and transform (`FieldSpec.parse`) and typed by the same `tools.ToolSchemas`. So the
message is the one `ResponseParser` builds, without what only streaming needs: no parser object, no
routing of pieces into bodies, no events, no hold-back, no per-delimiter state machine step.

`OneShotPlan.run` is chosen when the plan is built: `_fast_run`, a two-state loop (idle: the idle watch finds
the next open, or the implicit field's close; explicit: the open field's close watch finds where its region
ends), with each watch's search kind (one literal, one compiled alternation of literals, a `LeadScan`,
`Watch.scan_end`) and each field's store (one value, repeats, join; in the defaults or not; a field with
`report_as`, whose markup matches are listed once it is stored) picked per template, for every template of that
shape (every shipped one); `_general` (`plan_general.py`: the loop of every case, value ends, late watches and
`report_as` in one loop) reads the others. Both give the same regions, messages and fallbacks
(`tests/test_oneshot_fast_loop.py`, `tests/test_oneshot_report_marks.py`).

It covers only the ordinary case. `OneShotPlan.run` returns None, and `parse_response` takes the state
machine instead (so the result is the same by construction), for

* templates it was not compiled for (`plan_for` returns None): a `"policy"` key;
* calls it does not take: `policy=`, `regex_timeout=`, `regex_budget=`, a prefix that is not a `str`,
  `tools=` that is not a list or tuple (an iterator can be read only once), a
  start anchor regex that would need its timeout on this prompt, a regex timeout set by the caller's
  context (`content.REGEX_TIMEOUT`) for a template that runs a regex (`ResponseTemplate.has_regex`: a delimiter,
  the start anchor or a content parser; the two-state loop (`_fast_run`) reads a template of none without it,
  as nothing would read it);
* anything unusual met while reading: a region that does not parse, a second value a non-repeating field
  cannot merge, text outside every region, a required field missing, a delimiter regex that times out, or
  regex work that took so long that the stream's regex budget would have come into play.

In those cases the state machine runs from the start (a malformed response costs one plan attempt more).
`tests/test_oneshot_plan.py` checks that the plan is taken for every template it is compiled for and that
its messages equal the streaming parser's.
"""

from __future__ import annotations

import sys
from functools import partial
from time import perf_counter
from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH as _MAX_WIDTH
from .delimiters import DelimiterTimeout
from .end_search import _AFTER, _AT
from .jsonscan import _WS as _JSON_WS
from .jsonscan import _scan_once
from .lead_scan import lead_scan
from .plan_general import (
    _EMPTY_TYPES,
    _NO_DISABLED,
    _NONE_FIRED,
    _REGEX_GUARD,
    _TIMEOUT,
    _TIMEOUT_VAR,
    _is_empty,
    _report_marks,
    general_run,
)
from .plan_shape import _fast_shape

__all__ = ["OneShotPlan", "plan_for"]

_timeout_now = _TIMEOUT_VAR.get
_json_ws = _JSON_WS.match


class OneShotPlan:
    """The one-shot reading of one compiled template (see the module docstring). Immutable; build with
    `plan_for`."""

    __slots__ = ("_tpl", "_anchor", "_anchor_lit", "_anchor_texts", "_idle", "_closes", "_implicit", "_hold_ws", "_keep",
                 "_required", "_timed", "_by_name", "_ones", "_slots", "_defaults", "_lates", "_whole", "_loop",
                 "_fast", "run",
                 "_anchor_free", "_untimed", "_anchor_ends", "_anchor_heads", "_anchor_longer", "_imp_text")

    def __init__(self, tpl: Any) -> None:
        self._tpl = tpl
        self._anchor = tpl.start_anchor
        lits = tpl.start_anchor.literals
        self._anchor_lit = lits[0] if lits is not None and len(lits) == 1 else None
        #: The fixed texts that are every match of the start anchor (`ResponseTemplate.anchor_texts`), when
        #: `cut_prefix` reads it by `str.rfind` (not one literal), else None
        self._anchor_texts = tpl.anchor_texts if self._anchor_lit is None else None
        #: Whether the text found is the anchor's match (`ResponseTemplate.anchor_prefix_free`), and the longest
        #: prompt whose anchor search is not timed (`_cut` defers past it)
        self._anchor_free = tpl.anchor_prefix_free
        self._untimed = tpl.start_anchor.untimed_search if lits is None else sys.maxsize
        #: Those of `_anchor_texts` after which a prompt that ends with one has nothing after the anchor's last
        #: match (no cut): no text can start inside another (`ResponseTemplate.anchor_texts`), so the one that ends
        #: the prompt starts the last match, and the match there is the anchor's match of that text alone (the
        #: anchor is literals, alternations and optional parts only: nothing before or after a match counts),
        #: which is all of it for every text where no text begins another (`_anchor_free`), and for
        #: `<｜Assistant｜>(?:</think>)?`'s two (DeepSeek V3.1 / V4, GLM-4.7). None for no anchor texts.
        texts = self._anchor_texts or ()
        self._anchor_ends = None if self._anchor_texts is None else tuple(
            t for t in texts if (m := tpl.start_anchor.fast.match(t)) and m.end() == len(t))
        #: The anchor texts that begin with no other, whose last find starts the anchor's last match (every text
        #: found begins with one of them there): one `str` where there is one, else a tuple; and the others
        #: (`_anchor_longer`): where none of them is at that find, the match there is the text found.
        heads = tuple(t for t in texts if not any(o != t and t.startswith(o) for o in texts))
        self._anchor_heads = heads[0] if len(heads) == 1 else heads
        self._anchor_longer = tuple(t for t in texts if t not in heads)
        # In one-shot parsing the whole text is one end-of-stream scan, and the parser keeps the watches it
        # starts with (the early ones) for all of it; the plan moves to the late ones past offset 0 (`_lates`),
        # which find the same delimiters there, as the streaming parser's do.
        self._idle = tpl.idle_watch
        self._closes = tpl.close_watches
        self._implicit = tpl.implicit_field
        self._hold_ws = tpl.hold_whitespace
        self._keep = tpl.default_keys
        self._required = tpl.required
        self._timed = tpl.has_regex
        self._by_name = tpl.by_name
        self._defaults = tpl._defaults_simple  # (`ResponseTemplate.new_message`, inlined where it is flat)
        #: Each watch that differs once the text has moved past offset 0 (a delimiter anchored at `^` / `\A`
        #: can match only there): its late watch (`Watch.late`), which has a prefilter and no anchored-only
        #: delimiter; None if no watch differs. (A late watch that watches nothing is not used: the early one
        #: stays, so that "nothing watched" keeps meaning the message is over.)
        lates = {w: w.late for w in (tpl.idle_watch, *tpl.close_watches)
                 if w is not None and w.late is not None and w.late is not w}
        self._lates = lates or None
        #: The watches of literals only that one C-level search reads (most fields' `close`, and an idle
        #: watch of literals sharing their first character, `<tool_call>` / `<|im_end|>`): searched in the
        #: loop itself, `(text, delimiter)` for one literal (`str.find`), `(None, search, lookup)` for the
        #: compiled alternation (`Watch._literal_end` with one finder, whose memo only saves re-finding).
        #: And the watches whose every delimiter starts with a fixed text: `(None, None, LeadScan)`
        #: (`lead_scan.py`: `Watch.scan_end` as a few `str.find` and a regex match where one finds).
        ones: dict = {}
        slots = 0  # (each `LeadScan`'s finds are at its index in a list made per call: `run`'s `found`)
        for w in (tpl.idle_watch, *tpl.close_watches, *lates.values()):
            if w is None:
                continue
            if not w.only_literals or len(w.lit_finders) > 1:  # (literals with different first characters too)
                scan = lead_scan(w)
                if scan is not None:
                    ones[w] = (None, None, scan, slots)
                    slots += 1
            elif w.lit_one is not None:
                ones[w] = (w.lit_one, w.lit_one_delimiter)
            elif len(w.lit_finders) == 1 and w.lit_finders[0].__class__ is not str:
                ones[w] = (None, w.lit_finders[0], w.lit_lookup)
        self._ones = ones
        self._slots = (None,) * slots
        #: The JSON fields with `"trailing": "stream"` that read one value (no separator): their first scan is
        #: `jsonscan.whole_value_end` when the value is all there, the `ValueEnd` scanner only if not.
        self._whole = frozenset(f.name for f in tpl.fields if f.value_end is not None
                                and getattr(f.value_end, "args", (0,))[:1] == (None,))
        #: What `run` reads on every call, in one tuple (one attribute load instead of one per name).
        self._loop = (self._idle, self._closes, self._implicit, self._hold_ws, self._by_name, ones,
                      self._defaults, self._timed, self._lates, self._whole)
        #: The two-state loop's constants (`_fast_run`), or None where the template's shape needs the general one.
        shape = _fast_shape(self, tpl)
        if shape is not None:  # (and what `_fast_run` starts from: the anchor literal's end, the message skeleton,
            # then `zw, fired, memo, pos, opened, start_at, kept, empties, more`: see `_fast_run`)
            lit = self._anchor_lit
            skeleton = None if self._defaults is None else dict(self._defaults)
            # (`_fast_run` does not read the defaults and default keys of `_fast_shape` (7 and 8): their places carry
            # `fresh`, which makes the message (the skeleton's `copy` where the defaults are flat), and the starting
            # `tail`, the one test of the epilogue's rare work: whether there are required fields)
            shape = (*shape[:7], tpl.new_message if skeleton is None else skeleton.copy, bool(shape[9]), *shape[9:],
                     lit, 0 if lit is None else len(lit), skeleton, -1, _NONE_FIRED, None, 0, False, 0, None, None, None)
        self._fast = shape
        #: The implicit field's name where it is a plain text field of one value not in the defaults (`_fast_run`'s
        #: store 0 with no parse) that holds whitespace (`_hold_ws`: whitespace alone does not open its region, so
        #: the region's stripped text is never empty), else None: a response of that region alone stores it directly
        self._imp_text = None if shape is None or shape[4] is None or shape[4][1:3] != (None, 0) or not self._hold_ws \
            else shape[4][0]
        #: `parse_response`'s entry: the two-state loop where the template has its shape, else the general one.
        self.run = self._fast_run if self._fast is not None else self._general

    def _cut(self, prefix: str) -> str | None:
        """The part of `prefix` after the start anchor's last match (`ResponseTemplate.cut_prefix`); None if
        that search would be timed."""
        lit = self._anchor_lit
        if lit is not None:
            i = prefix.rfind(lit)
            return prefix if i < 0 else prefix[i + len(lit):]
        anchor = self._anchor
        if anchor.literals is None and len(prefix) > anchor.untimed_search:
            return None
        texts = self._anchor_texts
        if texts is not None:
            i = -1
            for t in texts:
                j = prefix.rfind(t)
                if j > i:
                    i = j
            return prefix if i < 0 else prefix[anchor.fast.match(prefix, i).end():]
        return self._tpl.cut_prefix(prefix)

    #: `run` by the general loop (`plan_general.py`)
    _general = general_run

    def _fast_run(self, text: str, prefix: str, schemas: Any) -> dict[str, Any] | None:
        """`run` by the two-state loop (`plan_shape._fast_shape`): in the idle state the idle watch finds the next open
        (the text before it is the implicit field's) or the implicit field's close (the message is over);
        an open starts its field's region, whose close watch finds where it ends. Same regions, messages and
        fallbacks as `_general`, with each watch's search and each field's store chosen at compile time."""
        # (the loop's starting values come in the same tuple: one unpack sets every local it starts with)
        (ik, ia, ib, opens, imp, hold_ws, timed, fresh, tail, required, late_idle, opens0, lit, lit_end, skeleton,
         zw, fired, memo, pos, opened, start_at, kept, empties, more) = self._fast
        if lit is not None:  # (`_cut`, inlined for the usual literal anchor)
            if prefix.endswith(lit):  # (the usual prompt, which ends with the anchor: no cut, the text is the window)
                cut = ""
                window = text
            else:
                i = prefix.rfind(lit)
                cut = prefix if i < 0 else prefix[i + lit_end:]
                window = cut + text if cut else text
        elif self._anchor_texts is not None and len(prefix) <= self._untimed:  # (`_cut` of fixed texts, inlined)
            if prefix.endswith(self._anchor_ends):  # (see `_anchor_ends`)
                cut = ""
                window = text
            else:
                heads = self._anchor_heads  # (see `_anchor_heads`)
                if heads.__class__ is str:
                    i = prefix.rfind(heads)
                    found = heads
                else:
                    i = -1
                    for t in heads:
                        j = prefix.rfind(t)
                        if j > i:
                            i = j
                            found = t
                if i < 0:
                    cut = prefix
                elif self._anchor_longer and prefix.startswith(self._anchor_longer, i):  # (then the anchor says which)
                    cut = prefix[self._anchor.fast.match(prefix, i).end():]
                else:  # (the text found there is the match)
                    cut = prefix[i + len(found):]
                window = cut + text if cut else text
        else:  # (`_cut` past its first tests: a regex anchor of no fixed texts, or a prompt past `_untimed`)
            if len(prefix) > self._untimed:
                return None  # a timed anchor search: its time counts against the budget
            cut = self._tpl.cut_prefix(prefix)
            window = cut + text if cut else text
        if timed:  # (`t0` is read only when `timed`; a caller's regex timeout, only where a regex runs: see the docstring)
            if _timeout_now(_TIMEOUT) != _TIMEOUT:
                return None
            t0 = perf_counter()
        n = len(window)
        found = [*self._slots]
        # `memo`: `Watch.scan_end`'s memo (made at its first call); `opened`: whether the implicit field's region
        # is open (from `start_at`)
        # (field info (`_fast_shape`), body start, body end, captures)
        regions: list[tuple[Any, int, int, dict | None]] = []
        while True:
            if late_idle is not None:
                if pos:  # past offset 0: the late idle watch (see `_lates`)
                    ik, ia, ib = late_idle
                    late_idle = None
                elif ik == 5:  # (`plan_shape._start`: a `LeadScan` with one regex that matches at offset 0 only, Llama
                    # 3's `^\s*(?=\{...)`) tried there, before the scans: if it does not match, the late idle watch (the
                    # same delimiters but that one) reads from offset 0 on; where one of the scan's texts is there or the
                    # window is past the regex's untimed span, the scan's as kind 2; where it matches, kind 5 below
                    # takes `m` and `d`
                    d, fast, span, texts, scan = ia
                    if n > span or window.startswith(texts):
                        ik, ia = 2, scan
                    else:
                        m = fast(window, 0)
                        if m is None or m.end() > _MAX_WIDTH:  # no match at offset 0: none anywhere
                            ik, ia, ib = late_idle
                            late_idle = None
            # idle: the idle watch's next delimiter (`Watch.scan_end`, by the kind `plan_shape._scanner` chose), and what
            # it starts (`act`: its field's `opens` entry; None for the implicit field's close)
            if ik == 1:
                m = ia(window, pos)
                if m is None:
                    d = None
                else:
                    start = m.start()
                    d, end, act = ib[m.group()]
                    end += start
                    groups = None
            elif ik > 7:  # fixed texts with one try each (`plan_shape._alone`): `LeadScan.end`'s first find, inlined
                if ik == 8:  # (a `LeadScan`'s finds: one per text)
                    finds = found[ib]
                    if finds is None:
                        finds = found[ib] = ia.fresh(window, pos)
                    start = min(finds)
                    while start < pos:  # a stale find: searched again from `pos`
                        if pos == n:  # (at the end, after a close there: nothing to find, this list is done)
                            start = n
                            break
                        j = finds.index(start)
                        k = window.find(ia.texts[j], pos)
                        finds[j] = k if k >= 0 else n
                        start = min(finds)
                    if start < n:
                        j = finds.index(start)
                        t = ia.only[j]
                else:  # (a `LeadSearch`'s search from `pos`, each time: every find the loop takes is passed before the
                    # next scan (an open moves `pos` past its start; the close, or a zero-width open's, does not go back)
                    # and the search from `pos` finds the same while it is not, so its finds list would not be read)
                    m = ia.search(window, pos)
                    if m is None:
                        start = n
                    else:
                        start = m.start()
                        j = m.lastindex - 1
                        t = ib[j]  # (its `only`, a text with several tries `(None, NaN)`: `LeadSearch.end` decides)
                d = None
                if start < n:
                    if t[1] > 0:  # a literal
                        d = t[0]
                        end = start + t[1]
                        groups = None
                    elif t[1] < 0 and n - start <= t[3]:  # a regex (untimed here), matched at the find
                        m = t[2](window, start)
                        if m is not None and start < m.end() <= start + _MAX_WIDTH:
                            d = t[0]
                            end = m.end()
                            groups = m.groupdict() if d.group_slots else None
                            if groups and None in groups.values():  # (only the groups that took part)
                                groups = {k: v for k, v in groups.items() if v is not None}
                    if d is None:
                        if not t[1] and n - start <= t[3]:  # an open read with its close (`_fused`, `_fused_tails`)
                            m = t[2](window, start)
                            if m is not None and start < (end := m.end()) <= start + _MAX_WIDTH:
                                d = t[0]
                                groups = m.groupdict() if d.group_slots else None
                                if groups and None in groups.values():
                                    groups = {k: v for k, v in groups.items() if v is not None}
                                if ik == 9:  # closed by a run then a fixed tail (`plan_shape._fused_tails`): the loop's
                                    # close kind 10 (see there) from the body's start; a plain JSON body decoded here
                                    info, ftail, chars, search, span, bounded, dinfo, ones = t[5]
                                    k = window.find(ftail, end)
                                    if k >= 0:
                                        ce = k + len(ftail)
                                        cs = ce - _MAX_WIDTH
                                        if cs < end:
                                            cs = end
                                        cs += len(window[cs:k].rstrip(chars))
                                        if bounded:
                                            if cs + 1 == k and window[cs] in ones:  # (a match there: `tail_scan._ones`)
                                                m = True
                                            else:
                                                m = search(window, cs, ce) if ce - cs <= span else None
                                                if m is not None:
                                                    cs = m.start()
                                        else:
                                            m = search(window, cs) if n - cs <= span else None
                                            if m is not None:
                                                cs, ce = m.span()
                                                if ce - cs > _MAX_WIDTH:
                                                    m = None
                                        if m is not None:
                                            if opened:  # (the implicit region ends where the open is)
                                                regions.append((imp, start_at, start, None))
                                                opened = False
                                            elif start > pos and not (hold_ws and window[pos:start].isspace()):
                                                regions.append((imp, pos, start, None))
                                            pos = ce
                                            if dinfo is not None:  # (`json_values._loads` of the body, in the window)
                                                i = _json_ws(window, end, cs).end()
                                                if i < cs and window[i] in '{["':
                                                    try:
                                                        value, e = _scan_once(window, i)
                                                    except (StopIteration, ValueError, RecursionError):
                                                        e = n + 1
                                                    if e == cs or e < cs and _json_ws(window, e, cs).end() == cs:
                                                        regions.append((dinfo, end, end, (value, groups)))
                                                        continue
                                            regions.append((info, end, cs, groups))
                                            continue
                                else:  # (kind 8)
                                    # the close's two texts from the idle finds (stale ones searched again from the
                                    # body's start; no zero-width skip: the close starts past `zw`)
                                    fk, info, a, b, wa, da, wb, db, dinfo, chain = t[5]
                                    cs = finds[a]
                                    if cs < end:
                                        cs = window.find(ia.texts[a], end)
                                        finds[a] = cs = cs if cs >= 0 else n
                                    ce = finds[b]
                                    if ce < end:
                                        ce = window.find(ia.texts[b], end)
                                        finds[b] = ce = ce if ce >= 0 else n
                                    if cs > ce:
                                        cs = ce
                                        da, wa = db, wb
                                    if fk == 5:  # a JSON value read whole before the close: the region is its value
                                        # (`jsonscan.whole_value_end`, inlined: where it answers None, the usual path)
                                        i = end if end < cs and window[end] == "{" else _json_ws(window, end, cs).end()
                                        if i < cs and window[i] in '{["':
                                            try:
                                                value, e = _scan_once(window, i)
                                            except (StopIteration, ValueError, RecursionError):
                                                e = n + 1
                                            if e <= cs:
                                                if opened:  # (the implicit region ends where the open is)
                                                    regions.append((imp, start_at, start, None))
                                                    opened = False
                                                elif start > pos and not (hold_ws and window[pos:start].isspace()):
                                                    regions.append((imp, pos, start, None))
                                                regions.append((info, end, end, (value, groups)))
                                                pos = e
                                                if chain is not None and finds[j] == e:  # the next call right there
                                                    pos = chain(window, e, n, finds, regions)  # (`fused_chain.py`)
                                                continue
                                    else:  # a region to the close (or to the end)
                                        if opened:
                                            regions.append((imp, start_at, start, None))
                                            opened = False
                                        elif start > pos and not (hold_ws and window[pos:start].isspace()):
                                            regions.append((imp, pos, start, None))
                                        if dinfo is not None and (i := end if end < cs and window[end] == "{" else
                                                                  _json_ws(window, end, cs).end()) < cs and \
                                                window[i] in '{["':  # (plain JSON: its value decoded here, as kind 5)
                                            try:
                                                value, e = _scan_once(window, i)
                                            except (StopIteration, ValueError, RecursionError):
                                                e = n + 1
                                            if e == cs or e < cs and _json_ws(window, e, cs).end() == cs:
                                                regions.append((dinfo, end, end, (value, groups)))
                                            else:
                                                regions.append((info, end, cs, groups))
                                        else:
                                            regions.append((info, end, cs, groups))
                                        if cs == n:
                                            break
                                        if not wa:  # (zero width: as the loop's close below)
                                            fired = (fired if cs == zw else _NONE_FIRED) | {da}
                                            zw = cs
                                            if memo is not None:
                                                memo.clear()
                                            if chain is not None:  # the next call at this close (`fused_chain.py`)
                                                e = chain(window, cs, n, finds, regions)
                                                if e < 0:  # (after a close of some width)
                                                    pos = ~e
                                                    continue
                                                if e != cs:  # (its last close, zero-width at `e`, fired there)
                                                    fired = _NONE_FIRED | {da}
                                                    zw = cs = e
                                                    if memo is not None:
                                                        memo.clear()
                                        pos = cs + wa
                                        continue
                        if d is None:  # no match, zero width or timed there: `LeadScan.end` decides from this find
                            try:
                                r = ia.end(window, pos, zw, fired, _TIMEOUT, finds if ik == 8 else [start, j])
                            except DelimiterTimeout:
                                return None
                            if r.__class__ is not int:
                                start, end, d, groups = r
                    if d is not None:
                        act = opens[d]
            elif ik == 2:
                finds = found[ib]
                if finds is None:
                    finds = found[ib] = ia.fresh(window, pos)
                try:
                    r = ia.end(window, pos, zw, fired, _TIMEOUT, finds)
                except DelimiterTimeout:
                    return None
                if r.__class__ is int:
                    d = None
                else:
                    start, end, d, groups = r
                    act = opens[d]
            elif ik == 4:  # (gpt-oss's, every turn; before kind 0: only late watches, one turn)
                # `here_scan.HereScan.scan_end`, inlined: every regex tried at `pos` (where the message's headers
                # are), the longest match (the first of equals: lowest rank) taken when it is not zero-width, not
                # too long and untimed there; else `Watch.scan_end` (`ib`), which decides (`here_scan.PLAIN`: always).
                # (None past the end: a zero-width match there would end the loop as none does, opening nothing
                # (see `start == end` below) and closing no implicit region, none being open between turns)
                d = None
                if pos < n:
                    if n - pos <= ia.span:
                        e = pos  # (a zero-width match is never taken here)
                        for t in ia.tries:  # (`(delimiter, match, captures)`: see `HereScan.tries`)
                            m = t[1](window, pos)
                            if m is not None and m.end() > e:
                                e = m.end()
                                best = m
                                bt = t
                        if pos < e <= pos + _MAX_WIDTH:
                            d = bt[0]
                            start = pos
                            end = e
                            groups = None if bt[2] is None else bt[2](best)
                            act = opens[d]
                    if d is None:
                        if memo is None:
                            memo = {}
                        try:
                            r = ib(window, pos, zw, fired, _NO_DISABLED, _TIMEOUT, memo)
                        except DelimiterTimeout:
                            return None
                        if r.__class__ is not int:
                            start, end, d, groups = r
                            act = opens[d]
            elif ik == 0:
                start = window.find(ia, pos)
                if start < 0:
                    d = None
                else:
                    d, end, act = ib
                    end += start
                    groups = None
            else:  # a `LeadScan` with one regex that matches at offset 0 only (`plan_shape._start`), matched there at the
                # top of this turn (`d`, `m`); a turn at offset 0 after a zero-width open there is the scan's as kind 2
                # from here on
                if pos or zw >= 0:
                    ik, ia = 2, ia[4]
                    continue
                start = 0
                end = m.end()
                groups = None
                act = opens[d]
            if d is None:  # no more delimiters: the rest is the implicit field's text
                if not opened and pos < n and not (hold_ws and window[pos:].isspace()):
                    if imp is None:  # text outside every region (not the prompt's): the state machine's
                        gap = window[max(pos, len(cut)):]
                        if gap and not gap.isspace():
                            return None
                    else:
                        opened = True
                        start_at = pos
                break
            # (the text's first character decides most: a text there is not whitespace, with no copy of the text)
            if not opened and start > pos and not (hold_ws and window[pos].isspace() and window[pos:start].isspace()):
                if imp is None:
                    gap = window[max(pos, len(cut)):start]
                    if gap and not gap.isspace():
                        return None
                else:
                    opened = True  # (text that is not whitespace opens the implicit region, when it is held)
                    start_at = pos
            if start == end:  # zero width: `d` may not match with zero width here again
                if end == n and act is not None:
                    break  # nothing opens at the very end of the stream
                fired = (fired if start == zw else _NONE_FIRED) | {d}
                zw = start
                if memo is not None:
                    memo.clear()
            if act is None:  # the implicit field's close: the message is over
                if opened:
                    if regions or groups is not None:
                        regions.append((imp, start_at, start, groups))
                        opened = False
                    else:  # (the region alone: read after the loop, to `n`)
                        n = start
                break
            if opened:  # the implicit region ends where an explicit one opens
                regions.append((imp, start_at, start, None))
                opened = False
            if not end and opens0 is not None:  # (a zero-width open at offset 0: the early close watch)
                act = opens0.get(d, act)
            info, ck, ca, cb = act
            pos = end
            # explicit: the field's close watch finds where its region ends
            if ck == 0:
                cs = window.find(ca, pos)
                if cs < 0:
                    regions.append((info, pos, n, groups))
                    break
                ce = cs + len(ca)
                d = cb
                g2 = None
            elif ck == 1:
                m = ca(window, pos)
                if m is None:
                    regions.append((info, pos, n, groups))
                    break
                cs, ce = m.span()
                d = cb[m.group()]
                g2 = None
            elif ck == 2:
                finds = found[cb]
                if finds is None:
                    finds = found[cb] = ca.fresh(window, pos)
                try:
                    r = ca.end(window, pos, zw, fired, _TIMEOUT, finds)
                except DelimiterTimeout:
                    return None
                if r.__class__ is int:
                    regions.append((info, pos, n, groups))
                    break
                cs, ce, d, g2 = r
            elif ck == 4:
                if memo is None:
                    memo = {}
                try:
                    r = ca(window, pos, zw, fired, _NO_DISABLED, _TIMEOUT, memo)
                except DelimiterTimeout:
                    return None
                if r.__class__ is int:
                    regions.append((info, pos, n, groups))
                    break
                cs, ce, d, g2 = r
            elif ck == 3:  # a `LeadSearch` searched from `pos` (`plan_shape._searched`; no close watch: finds nothing)
                m = ca(window, pos)
                if m is None:
                    regions.append((info, pos, n, groups))
                    break
                cs = m.start()
                d, w = cb[m.lastindex]
                g2 = None
                if w > 0:  # a literal
                    ce = cs + w
                elif not w and (cs != zw or d not in fired):  # a zero-width match (not skipped at `zw`)
                    ce = cs
                elif w == -1 and n - cs <= d.untimed_match and (m2 := d.fast.match(window, cs)) is not None \
                        and cs < (ce := m2.end()) <= cs + _MAX_WIDTH:  # a regex (untimed here) matched at the find
                    pass
                else:  # no match or a zero-width one there, several delimiters at the text, a timed regex, a
                    # zero-width match skipped at `zw`: `LeadSearch.end` decides from this find
                    try:
                        r = cb[0].end(window, pos, zw, fired, _TIMEOUT, [cs, m.lastindex - 1])
                    except DelimiterTimeout:
                        return None
                    if r.__class__ is int:
                        regions.append((info, pos, n, groups))
                        break
                    cs, ce, d, g2 = r
            elif ck < 3:
                if ck == -1:  # a call closed by a fixed text, and the calls right after it (`section_scan.py`)
                    try:
                        pos = ca(window, pos, n, groups, regions)
                    except DelimiterTimeout:  # (`call_chain.chain_search_run`'s close search, timed as kind 3's)
                        return None
                    if pos < 0:  # (a region to the end)
                        break
                    continue
                # (-2) plain JSON calls back to back (`value_close.py`): each call's close (the trigger's first
                # candidate), its value (decoded once) and the next call's open right at the close's end, in this turn
                trig, kinds, cd, fast, span, scan, slot, dinfo, ilits, od, ifast, ispan, by_cd, by_both, heads = cb
                while True:
                    # the close: a zero-width one at `pos` that fired there is skipped (the watch's one delimiter)
                    done = pos if pos == zw and cd in fired else pos - 1
                    if heads is None:
                        f = trig(window, done)  # (`re` reads -1 as 0)
                    else:  # the trigger searched from the first of its first characters (`value_close._heads`)
                        q = n
                        for c in heads:
                            k = window.find(c, done if done > 0 else 0, q)
                            if k >= 0:
                                q = k
                        f = trig(window, q) if q < n else None
                    if f is None:  # (no candidate: no close; `TriggerScan.end` tries nothing at offset 0 here)
                        cs = ce = n
                    else:
                        lo = t = f.start()
                        kind = kinds[f.lastindex]
                        if kind is _AFTER:
                            lo = t = t + 1
                        elif kind is not _AT:  # (a run of these characters may come before the text)
                            while lo > pos and window[lo - 1] in kind:
                                lo -= 1
                        if lo <= done:
                            lo = done + 1
                        if lo <= t and n - lo <= span and (m := fast(window, lo)) is not None and (
                                ce := m.end()) - lo <= _MAX_WIDTH:  # (the first candidate, untimed)
                            cs = lo
                        else:  # anything else: the scan's, from `pos` (close kind 2's)
                            finds = found[slot]
                            if finds is None:
                                finds = found[slot] = scan.fresh(window, pos)
                            try:
                                r = scan.end(window, pos, zw, fired, _TIMEOUT, finds)
                            except DelimiterTimeout:
                                return None
                            if r.__class__ is int:
                                cs = ce = n
                            else:
                                cs, ce = r[0], r[1]
                    try:  # the value, decoded once: the region's value when the close is right after it
                        value, e = _scan_once(window, pos)
                    except (StopIteration, ValueError, RecursionError):
                        e = -1
                    regions.append((dinfo, pos, pos, (value, groups)) if e == cs else (info, pos, cs, groups))
                    if ce == n:  # (no close, or one to the end: nothing more, as the idle state would find)
                        break
                    if cs == ce:  # (`fired`: `{cd}` where `zw` moves, made once: `value_close`'s `by_cd`)
                        fired = by_cd if cs != zw else fired | by_cd
                        zw = cs
                        if memo is not None:
                            memo.clear()
                    pos = ce
                    # the next open: the idle watch's match at `pos`, when one is there, is its first
                    if window.startswith(ilits, pos) or n - pos > ispan:
                        break
                    m = ifast(window, pos)
                    if m is None or (e := m.end()) - pos > _MAX_WIDTH or (e == pos == zw and od in fired) or (
                            opens[od] is not act):
                        break  # (none there, too long, zero width and skipped, another field's: the idle state's)
                    if e == pos:  # (after a zero-width close here, `{cd, od}`: `by_both`)
                        fired = by_both if fired is by_cd and pos == zw else (fired if pos == zw else _NONE_FIRED) | {od}
                        zw = pos
                        if memo is not None:
                            memo.clear()
                    groups = None
                    pos = e
                if ce == n:
                    break
                continue
            elif ck > 5:  # (`plan_shape._sure`)
                if ck == 7:  # one fixed text of known width (`_sure`): `str.find`, a zero-width one skipped at `zw`
                    cs = window.find(ca, pos)
                    d, w, bare = cb
                    if not w and cs == zw and d in fired:
                        cs = window.find(ca, cs + 1)
                    if cs < 0:
                        regions.append((info, pos, n, groups))
                        break
                    ce = cs + w
                    if cs == pos and bare:  # an empty region of a plain one-value text field (`plan_shape._bare`):
                        # the store drops its "" (as no region at all), so it is not listed
                        if not w:
                            fired = (fired if cs == zw else _NONE_FIRED) | {d}
                            zw = cs
                            if memo is not None:
                                memo.clear()
                        pos = ce
                        continue
                    g2 = None
                elif ck == 10:  # a run of a few characters then a fixed tail (`tail_scan.py`): the tail found,
                    # the run stripped back, the regex searched from there; else the watch's scanner
                    k = window.find(ca, pos)
                    if k < 0:  # (every match holds the tail)
                        regions.append((info, pos, n, groups))
                        break
                    chars, search, span, d, scan, slot, bounded, ones = cb
                    ce = k + len(ca)
                    cs = ce - _MAX_WIDTH  # (a match that starts before is too long)
                    if cs < pos:
                        cs = pos
                    cs += len(window[cs:k].rstrip(chars))  # (the run: no match starts before it)
                    # (the search gives the first position that matches)
                    if bounded:  # every match from the run ends at `ce`: the search sees no further
                        if cs + 1 == k and window[cs] in ones:  # (a run of one character that matches: `tail_scan._ones`)
                            m = True
                        else:
                            m = search(window, cs, ce) if ce - cs <= span else None
                            if m is not None:
                                cs = m.start()
                    else:  # it reads on: a match too long goes to the scanner
                        m = search(window, cs) if n - cs <= span else None
                        if m is not None:
                            cs, ce = m.span()
                            if ce - cs > _MAX_WIDTH:
                                m = None
                    if m is not None:
                        g2 = None
                    else:  # no match, a longer one, or timed: the watch's scanner, from `pos`
                        finds = found[slot]
                        if finds is None:
                            finds = found[slot] = scan.fresh(window, pos)
                        try:
                            r = scan.end(window, pos, zw, fired, _TIMEOUT, finds)
                        except DelimiterTimeout:
                            return None
                        if r.__class__ is int:
                            regions.append((info, pos, n, groups))
                            break
                        cs, ce, d, g2 = r
                else:  # fixed texts of known widths (`_sure`): `LeadScan.end`, inlined
                    nxt = found[cb[0]]
                    if nxt is None:
                        nxt = found[cb[0]] = ca.fresh(window, pos)
                    cs = min(nxt)
                    while cs < pos:  # a stale find: searched again from `pos`
                        j = nxt.index(cs)
                        k = window.find(ca.texts[j], pos)
                        nxt[j] = k if k >= 0 else n
                        cs = min(nxt)
                    if cs == n:
                        regions.append((info, pos, n, groups))
                        break
                    d, w = cb[1][nxt.index(cs)]
                    g2 = None
                    if w or cs != zw or d not in fired:
                        ce = cs + w
                    else:  # a zero-width match skipped at `zw`: `LeadScan.end` finds the next (no regex: no timeout)
                        r = ca.end(window, pos, zw, fired, _TIMEOUT, nxt)
                        if r.__class__ is int:
                            regions.append((info, pos, n, groups))
                            break
                        cs, ce, d, g2 = r
            else:  # a JSON field whose region ends where its value ends (`_general`'s `vend`): its close first
                sk, sa, sb = ca
                if sk == 0:
                    cs = window.find(sa, pos)
                    if cs < 0:
                        d = None
                    else:
                        ce = cs + len(sa)
                        d = sb
                        g2 = None
                elif sk == 1:
                    m = sa(window, pos)
                    if m is None:
                        d = None
                    else:
                        cs, ce = m.span()
                        d = sb[m.group()]
                        g2 = None
                elif sk == 3:
                    d = None
                elif sk > 5:
                    if sk == 7:  # (as the close's `ck == 7` above)
                        cs = window.find(sa, pos)
                        d, w = sb
                        if not w and cs == zw and d in fired:
                            cs = window.find(sa, cs + 1)
                        if cs < 0:
                            d = None
                        else:
                            ce = cs + w
                            g2 = None
                    else:  # (as the close's `ck == 6` above)
                        nxt = found[sb[0]]
                        if nxt is None:
                            nxt = found[sb[0]] = sa.fresh(window, pos)
                        cs = min(nxt)
                        while cs < pos:
                            j = nxt.index(cs)
                            k = window.find(sa.texts[j], pos)
                            nxt[j] = k if k >= 0 else n
                            cs = min(nxt)
                        if cs == n:
                            d = None
                        else:
                            d, w = sb[1][nxt.index(cs)]
                            g2 = None
                            if w or cs != zw or d not in fired:
                                ce = cs + w
                            else:
                                r = sa.end(window, pos, zw, fired, _TIMEOUT, nxt)
                                if r.__class__ is int:
                                    d = None
                                else:
                                    cs, ce, d, g2 = r
                else:
                    if sk == 2:
                        finds = found[sb]
                        if finds is None:
                            finds = found[sb] = sa.fresh(window, pos)
                    elif memo is None:
                        memo = {}
                    try:
                        r = sa.end(window, pos, zw, fired, _TIMEOUT, finds) if sk == 2 else sa(
                            window, pos, zw, fired, _NO_DISABLED, _TIMEOUT, memo)
                    except DelimiterTimeout:
                        return None
                    if r.__class__ is int:
                        d = None
                    else:
                        cs, ce, d, g2 = r
                if d is None:
                    cs = n
                field, whole, dinfo = cb
                # `whole`: `jsonscan.whole_value_end` (one value) or `whole_sequence_end` (values and separators)
                # when it is all there: `(end or MORE, value)`, or None for the `ValueEnd` scanner
                if whole is not None and (got := whole(window, pos, cs)) is not None:
                    if got[0] != -1:  # (the decoded value in the captures' place: see `_fast_shape`'s `dinfo`)
                        regions.append((dinfo, pos, pos, (got[1], groups)))
                        pos = got[0]
                        continue
                    if d is None or not g2:  # a sequence that runs to the close: its decoded values in the captures'
                        # place too (the close adds none), its parse `dinfo`'s (`_fast_shape`), the region as the body
                        info = dinfo
                        groups = (got[1], groups)
                    else:
                        info = _decoded(info, field, got[1])
                else:
                    vend = field.value_end()
                    got = vend.scan(window, pos, cs, 0, True)
                    decoded = vend.decoded()
                    if got != -1:  # the value ends before the delimiter (`jsonscan.MORE`: it does not)
                        if got == -2:  # `jsonscan.HOLD`: not at the end of a stream
                            return None
                        regions.append((dinfo, pos, pos, (decoded[0], groups)) if decoded is not None else (
                            info, pos, got, groups))
                        pos = got
                        continue
                    if decoded is not None:
                        info = _decoded(info, field, decoded[0])
                if d is None:
                    regions.append((info, pos, n, groups))
                    break
            if cs == ce:
                fired = (fired if cs == zw else _NONE_FIRED) | {d}
                zw = cs
                if memo is not None:
                    memo.clear()
            if g2:
                groups = {**groups, **g2} if groups else g2
            regions.append((info, pos, cs, groups))
            pos = ce
        message = fresh()  # (`skeleton.copy` or `ResponseTemplate.new_message`: see `__init__`)
        if opened:
            if regions or (one := self._imp_text) is None:
                regions.append((imp, start_at, n, None))
            else:  # the implicit region alone, of a plain one-value text field: the loop below's store, inlined (not
                # empty: whitespace alone does not open the region, see `_imp_text`); with no other region, nothing is
                # joined or emptied, so only the end's tests are left: the regex guard and required fields
                message[one] = window[start_at:n].strip()
                if timed and perf_counter() - t0 >= _REGEX_GUARD:
                    return None
                if tail:
                    for name in required:
                        if name not in message:
                            return None
                return message
        typing = schemas.type_tool_calls if schemas else None  # (`ToolSchemas.__bool__` once, not per region)
        # A field not in the defaults (store 0-2) is new in `message` until its first value; those of the
        # defaults (3-5) are tracked in `kept` (a set, made at the first). Only a field whose first value is
        # empty can end empty (a value that is not stays so: a second one is dropped if "", merged, or sends
        # the response to the state machine), so only those (`empties`, a list) are looked at once merged;
        # `more`: the parts joined to a value at the end. (All three start as None, from `self._fast`.)
        for (name, parse, store, sep), a, b, caps in regions:
            if parse is None:  # (a plain text field: `_strip_text`)
                value = window[a:b].strip()
                if not store:  # one value (the usual text field: its first value stored here)
                    if not value:
                        # a one-value text field's "": replaced by any later value when first, dropped when later,
                        # deleted at the end when alone; so the same as no region at all
                        continue
                    if name not in message:
                        message[name] = value
                        continue
            else:
                try:
                    value = parse(window[a:b], caps)
                    if typing is not None:
                        value = typing(value, self._by_name[name].tool_typing)
                except Exception:  # a region that does not parse: the state machine reports it
                    return None
            if store == 1:  # repeats
                if name in message:
                    message[name].append(value)
                else:
                    message[name] = [value]
                continue
            if store == 0:  # one value
                if name not in message:
                    message[name] = value
                    if not value:
                        if empties is None:
                            empties = []
                            tail = True
                        empties.append(name)
                    continue
            elif store == 2:  # join
                if value.__class__ is not str and not isinstance(value, str):
                    return None
                if name not in message:
                    message[name] = value
                    if not value:
                        if empties is None:
                            empties = []
                            tail = True
                        empties.append(name)
                else:
                    if more is None:
                        more = {}
                        tail = True
                    more.setdefault(name, []).extend((sep, value))
                continue
            else:  # a field of the defaults (`ResponseParser`'s first value of one: merged with the default)
                if store == 6:  # a field with `report_as` (`_fast_shape`): `_general`'s store, then its marks
                    # (`lead`: the fixed text every markup match starts with, where the field's parse is None in
                    # `info` (`plan_shape._unmarked_lead`): a body without it is its strip (`value`), with no marks;
                    # one with it is parsed here, its marks listed below (`lead` None))
                    field, join, lead = sep
                    if lead is not None and window.find(lead, a, b) >= 0:
                        try:
                            value = field.parse(window[a:b], caps)
                        except Exception:  # (as any region's parse above: the state machine reports it)
                            return None
                        lead = None
                    if name not in message:
                        if join is not None and value.__class__ is not str and not isinstance(value, str):
                            return None
                        message[name] = [value] if field.repeats and join is None else value
                        if join is not None or not field.repeats:
                            if not value:
                                if empties is None:
                                    empties = []
                                    tail = True
                                empties.append(name)
                    elif join is not None:
                        if value.__class__ is not str and not isinstance(value, str):
                            return None
                        if more is None:
                            more = {}
                            tail = True
                        more.setdefault(name, []).extend((join, value))
                    elif field.repeats:
                        message[name].append(value)
                    elif _is_empty(message[name]):
                        message[name] = value
                    elif value == "":
                        pass
                    elif isinstance(value, str) and isinstance(message[name], str):
                        if more is None:
                            more = {}
                            tail = True
                        more.setdefault(name, []).extend(("\n", value))
                    else:
                        return None
                    if lead is None and not _report_marks(field, window[a:b], value, message, more):
                        return None
                    continue
                if kept is None:
                    kept = set()
                if store == 4 and value.__class__ is not str and not isinstance(value, str):
                    return None
                if name not in kept:
                    kept.add(name)
                    if store == 3:
                        if isinstance(message[name], list):
                            message[name].append(value)
                        else:
                            message[name] = [value]
                    elif store == 4:
                        message[name] = message[name] + sep + value if isinstance(message[name], str) else value
                    else:
                        message[name] = value
                    continue
                if store == 3:
                    message[name].append(value)
                    continue
                if store == 4:
                    if more is None:
                        more = {}
                        tail = True
                    more.setdefault(name, []).extend((sep, value))
                    continue
            # a second value of a one-value field
            if _is_empty(message[name]):
                message[name] = value
            elif value == "":
                pass
            elif isinstance(value, str) and isinstance(message[name], str):
                if more is None:
                    more = {}
                    tail = True
                more.setdefault(name, []).extend(("\n", value))
            else:
                return None  # a second value the field cannot merge: reported by the state machine
        if timed and perf_counter() - t0 >= _REGEX_GUARD:
            return None
        if tail:  # (rare: required fields, joined parts or empty values; one test for all three)
            for name in required:  # (none of the defaults: `_fast_shape`)
                if name not in message:
                    return None
            if more:
                for name, parts in more.items():
                    message[name] = "".join([message[name], *parts])
            if empties is not None:
                for name in empties:
                    value = message[name]
                    if not value and (value is None or isinstance(value, _EMPTY_TYPES)):  # (`_is_empty`)
                        del message[name]
        return message


def _reshaped(reshape: Any, value: Any, body: str, captures: dict | None) -> Any:
    return reshape(value, captures)


def _decoded(info: tuple, field: Any, value: Any) -> tuple:
    """`info` of a region whose JSON value the scan decoded already: its parse is the field's `reshape`."""
    return info[0], partial(_reshaped, field.reshape, value), info[2], info[3]


def plan_for(tpl: Any) -> OneShotPlan | None:
    """The one-shot plan of compiled template `tpl` (built on first use and kept on it), or None if the
    template has a feature only the state machine reads (see the module docstring)."""
    plan = tpl.oneshot_plan
    if plan is None:
        supported = tpl.policy is None
        plan = OneShotPlan(tpl) if supported else False
        object.__setattr__(tpl, "oneshot_plan", plan)  # (a cache: the template is otherwise immutable)
    return plan or None
