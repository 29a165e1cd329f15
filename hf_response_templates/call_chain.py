"""The one-shot plan's reading of XML-like tool calls written one after another with whitespace between (issue 19).

Qwen3.5's `<tool_call>\\n<function=NAME>...</tool_call>`, GLM-4.7's `<tool_call>NAME<arg_key>...</tool_call>`,
MiniMax M2's `<invoke name="NAME">...</invoke>`, Qwen3-Coder's, DeepSeek V3.2 / V4's and Seed-OSS's calls follow
each other with a newline (or nothing) between: each call's close is followed by whitespace and the next call's open. `plan.
_fast_run` reads each such call in two loop turns (the idle watch's search finds the open, its regex is matched,
the gap before it is tested for text, its close watch finds the close), ~200 Python opcodes per call. Where the
next open follows the close after whitespace only, those turns give what one check gives:

* the idle watch (a `lead_scan.LeadSearch`, or a `group_search.GroupSearch`: the same earliest text from `pos`;
  `plan_shape._alone`'s kind 9) searched from the close's end finds the earliest of its fixed texts; no text of
  the watch begins with a whitespace character that is skipped here (`[ \\t\\n\\r]`), so none starts in the
  whitespace, and the open's own text starts right after it; no other text of the watch begins it or starts
  with it (checked here), so the search names that text, whose one try is the open's regex;
* that regex matched there, untimed and no longer than `MAX_DELIMITER_LENGTH`, is the open (not zero-width: no
  `zw` / `fired` to track);
* the whitespace before it opens no implicit region: the template holds whitespace (`hold_whitespace`, the
  loop's `hold_ws`: whitespace alone does not open the implicit field), or has no implicit field (then
  whitespace outside every region is allowed), and no implicit region is open while a call's is;
* its close is the same fixed text, found by `str.find` from the open's end (or, Qwen3-Coder's `</function>\\s*
  </tool_call>|...`, found by the same `LeadSearch` search the loop's close kind 3 makes: `chain_search_run`).

`chain_run`'s `run` reads a call's close and then every call that follows the same way, one loop turn per call
(`str.find` of the close, the whitespace's `re` match, `str.startswith`, the regex match); at the first close
where the next open is not there (or its regex does not match, or would be timed) it returns the close's end,
and the plan's loop goes on from there as it would have. Every region is the plain one (its field's parse reads
it). `section_scan.section_run` is the same for calls with nothing between them (Kimi's, and JSON values decoded
in the window); the opens it takes are left to it.

`chain_opens` gives such an open the close kind -1 (`section_scan`'s: a `run` in the close's place), from
`plan_shape._fast_shape`. `tests/test_call_chain.py` compares the regions and messages with the general loop and
the streaming parser.
"""

from __future__ import annotations

from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH, open_at, open_slots
from .jsonscan import _WS
from .lead_scan import LeadSearch
from .plan_general import _NONE_FIRED, _TIMEOUT

__all__ = ["chain_opens", "chain_run", "chain_search_run"]

#: The whitespace skipped between a close and the next open (JSON's: a subset of `str.isspace`'s; a gap of any
#: other whitespace ends the chain, and the loop reads it as before)
_SKIPPED = " \t\n\r"


def chain_run(close: str, begins: tuple[str, ...], match: Any, span: int, slots: int, info: tuple) -> Any:
    """`run(window, pos, n, groups, regions)` of one open delimiter's calls (see the module docstring): read the
    region opened at `pos` (with the open's `groups`) to its close, then each call whose open follows the last
    close after whitespace, appending their regions to `regions`; return the position right after the last
    close read (the plan's loop goes on from there), or -1 when a region runs to the end of the window (no close:
    the loop stops). `close`: the close's fixed text; `begins`: the open's fixed texts, each of whose one idle
    try is the open's regex, `match` its untimed match, `span` the longest text that is untimed on; `slots`:
    `delimiters.open_slots` of the open; `info`: the field's info (`plan_shape._fast_shape`). (A closure: its
    constants are read without a lookup per call.)"""
    width = len(close)
    ws = _WS.match

    def run(window: str, pos: int, n: int, groups: dict | None, regions: list) -> int:
        while True:
            cs = window.find(close, pos)
            if cs < 0:
                regions.append((info, pos, n, groups))
                return -1
            regions.append((info, pos, cs, groups))
            pos = cs + width
            at = ws(window, pos).end()
            if not window.startswith(begins, at) or n - at > span:
                return pos
            got = open_at(match, window, at, slots)
            if got is None:
                return pos
            pos, groups = got

    return run


def chain_search_run(
    search: Any,
    table: tuple,
    scan: LeadSearch,
    begins: tuple[str, ...],
    match: Any,
    span: int,
    slots: int,
    info: tuple,
) -> Any:
    """`chain_run`'s `run` for a close found by a `LeadSearch` searched from the region's start (`plan_shape.
    _searched`'s close kind 3: Qwen3-Coder's `</function>\\s*</tool_call>|</tool_call>|</function>(?=...)`), read
    as the loop reads that close: `search` finds the close's first text, `table` (indexed by its `lastindex`)
    says what starts there: a literal (its width), a regex without captures matched there when untimed (-1), or
    anything else, which `scan.end` decides from that find (and may raise `DelimiterTimeout`, which the loop
    turns into its None, as its own close's). No close of the watch can match with zero width (`chain_opens`),
    and every position read here is past the loop's `zw` (the open's end is past its start, which is not before
    `zw`), so `scan.end` is given no zero-width state: it gives what it gives the loop."""
    ws = _WS.match

    def run(window: str, pos: int, n: int, groups: dict | None, regions: list) -> int:
        while True:
            m = search(window, pos)
            if m is None:
                regions.append((info, pos, n, groups))
                return -1
            cs = m.start()
            d, w = table[m.lastindex]
            if w > 0:  # a literal
                ce = cs + w
            elif not (
                w == -1
                and n - cs <= d.untimed_match
                and (m2 := d.fast.match(window, cs)) is not None
                and cs < (ce := m2.end()) <= cs + MAX_DELIMITER_LENGTH
            ):  # (else the regex matched there)
                r = scan.end(window, pos, -1, _NONE_FIRED, _TIMEOUT, [cs, m.lastindex - 1])
                if r.__class__ is int:
                    regions.append((info, pos, n, groups))
                    return -1
                cs, ce, _, g2 = r
                if g2:
                    groups = {**groups, **g2} if groups else g2
            regions.append((info, pos, cs, groups))
            pos = ce
            at = ws(window, pos).end()
            if not window.startswith(begins, at) or n - at > span:
                return pos
            got = open_at(match, window, at, slots)
            if got is None:
                return pos
            pos, groups = got

    run.searched = (search, table)  # type: ignore[attr-defined]  # (the kind-3 close it reads, for inspection)
    return run


def chain_opens(tpl: Any, idle: tuple[int, Any, Any], opens: dict) -> None:
    """Give each open of `opens` that `chain_run` or `chain_search_run` can chain (see the module docstring) the close
    kind -1: `(info, -1, run, None)` in place of its `(info, 0, close text, close delimiter)`, or of its `(info, 3,
    search, (scan, *table))` where its close watch has no delimiter that can match with zero width. `idle` is the
    idle watch's `_alone` answer: only a kind-9 `LeadSearch` (or `GroupSearch`) (`(9, scan, only)`) is read. Opens
    that `section_scan.section_opens` chained already (close kind -1) are left as they are."""
    kind, scan, only = idle
    if kind != 9 or not isinstance(scan, LeadSearch):
        return
    if tpl.implicit_field is not None and not tpl.hold_whitespace:
        return
    texts = scan.texts
    if any(text[:1] in _SKIPPED for text in texts):  # (a text that could start in the skipped whitespace)
        return
    begins: dict = {}  # for each open delimiter, its texts (each with the same try: the open's regex)
    for j, text in enumerate(texts):
        t = only[j]
        if (
            t[0] is None
            or t[1] != -1
            or any(o != text and (o.startswith(text) or text.startswith(o)) for o in texts)
        ):
            continue
        begins.setdefault(t[0], []).append((text, t))
    for d, found in begins.items():
        act = opens.get(d)
        t = found[0][1]
        if act is None or any(u[2:4] != t[2:4] for _, u in found):
            continue
        heads = tuple(text for text, _ in found)
        if act[1] == 0 and act[2]:
            run = chain_run(act[2], heads, t[2], t[3], open_slots(d), act[0])
        elif (
            act[1] == 3
            and act[3] is not None
            and not tpl.close_watches[tpl.by_name[d.field].index].zero_width
        ):
            close_scan = act[3][0]
            run = chain_search_run(act[2], act[3], close_scan, heads, t[2], t[3], open_slots(d), act[0])
        else:
            continue
        opens[d] = (act[0], -1, run, None)
