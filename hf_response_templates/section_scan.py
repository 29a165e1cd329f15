"""The one-shot plan's reading of tool calls written one right after another (issue 19).

Kimi K2's `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>` calls and
Kimi K3's `<|open|>call tool="NAME"<|sep|>...<|close|>call<|sep|>` follow each other with nothing between: each
call's close is followed by the next call's open. `plan._fast_run` reads each such call in two loop turns (the
idle watch's search finds the open, its regex is matched, its close watch finds the close), ~150 Python opcodes
per call. Where the next open starts right at the close's end, those turns give what one check gives:

* the idle watch (a `lead_scan.LeadSearch`, `plan_shape._alone`'s kind 9) searched from the close's end finds
  the earliest of its fixed texts; the open's own text starts right there, and no other text of the watch
  begins it or starts with it (checked here), so the search names that text, whose one try is the open's
  regex (`only`: one delimiter starts there);
* that regex matched there, untimed and no longer than `MAX_DELIMITER_LENGTH`, is the open; nothing lies
  between the close and it (no implicit text), and neither is zero-width (no `zw` / `fired` to track);
* its close is the same fixed text, found by `str.find` from the open's end.

`section_run`'s `run` reads a call's close and then every call that follows the same way, one loop turn per call
(`str.startswith`, the regex match, `str.find`); at the first position where the next open is not there (or
its regex does not match, or would be timed) it returns, and the plan's loop goes on from there as it would
have. A JSON field with no content options (Kimi K2's arguments) has its value decoded in the window itself
(as `jsonscan.whole_value_end`, the C scanner from the value's start): where the value ends right before the
close (whitespace aside) the region is stored decoded, as `plan_shape._fused` stores one (`(dinfo, start,
start, (value, captures))`, parsed by the field's `reshape.decoded`); anything else is the plain region, which
the field's own parse reads (and fails on) as before. Calls of any other content (Kimi K3's XML arguments) are
plain regions, chained only in a template without an implicit field (Kimi K3, whose calls sit back to back in a
section wrapper): the XML-call templates with one (Qwen3.5, GLM, DeepSeek V3.2 / V4, Seed-OSS) write a newline
between calls, where the chain's check would be only cost.

`plan_shape._fast_shape` gives such an open the close kind -1 (`section_opens`), with its `run` in the
close's place. `tests/test_section_scan.py` compares the regions and messages with the general loop and the
streaming parser.
"""

from __future__ import annotations

from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH
from .jsonscan import _WS, _scan_once
from .lead_scan import LeadSearch

__all__ = ["section_opens", "section_run"]

_ws = _WS.match


def section_run(close: str, begins: tuple[str, ...], match: Any, span: int, slots: bool, info: tuple,
                dinfo: tuple | None) -> Any:
    """`run(window, pos, n, groups, regions)` of one open delimiter's calls (see the module docstring): read the
    region opened at `pos` (with the open's `groups`) to its close, then each call whose open starts right at
    the last close's end, appending their regions to `regions`; return the position after the last close read
    (the plan's loop goes on from there), or -1 when a region runs to the end of the window (no close: the loop
    stops). `close`: the close's fixed text; `begins`: the open's fixed texts, each of whose one idle try is
    the open's regex, `match` its untimed match, `span` the longest text that is untimed on; `slots`: whether
    the open has named groups; `info`: the field's info (`plan_shape._fast_shape`), `dinfo` the one of a
    decoded JSON value (None: not one). (A closure: its constants are read without a lookup per call.)"""
    width = len(close)

    def run(window: str, pos: int, n: int, groups: dict | None, regions: list) -> int:
        while True:
            cs = window.find(close, pos)
            if cs < 0:
                regions.append((info, pos, n, groups))
                return -1
            if dinfo is not None and window[pos] in '{["':  # (a value right at the open's end, the usual)
                try:
                    value, e = _scan_once(window, pos)
                except (StopIteration, ValueError, RecursionError):
                    e = -1
                if e == cs:  # (the value ends right at the close: else the plain region, which the parse reads)
                    regions.append((dinfo, pos, pos, (value, groups)))
                else:
                    regions.append((info, pos, cs, groups))
            else:
                regions.append((info, pos, cs, groups))
            pos = cs + width
            if not window.startswith(begins, pos) or n - pos > span:
                return pos
            m = match(window, pos)
            if m is None:
                return pos
            end = m.end()
            if not pos < end <= pos + MAX_DELIMITER_LENGTH:
                return pos
            if slots:
                groups = m.groupdict()
                if None in groups.values():  # (only the groups that took part)
                    groups = {k: v for k, v in groups.items() if v is not None}
            else:
                groups = None
            pos = end

    return run


def _decoded_info(tpl: Any, f: Any, info: tuple) -> tuple | None:
    """The info of a region whose value `section_run` decoded, for a JSON field without content options whose
    transform reads a decoded value (`reshape.decoded`, `template._compile_field`); None for any other field."""
    decoded = getattr(f.reshape, "decoded", None)
    raw = tpl._snapshot.get("fields", {}).get(f.name, {})
    if decoded is None or f.content != "json" or f.value_end is not None or raw.get("content_args") \
            or raw.get("transform_each"):
        return None
    return info[0], decoded, info[2], info[3]


def section_opens(tpl: Any, idle: tuple[int, Any, Any], opens: dict) -> None:
    """Give each open of `opens` that `section_run` can chain (see the module docstring) the close kind -1:
    `(info, -1, run, None)` in place of its `(info, 0, close text, close delimiter)`. `idle` is the idle
    watch's `_alone` answer: only a kind-9 `LeadSearch` (`(9, scan, only)`) is read. A field whose values are not
    decoded here (`_decoded_info` None) is chained only where the template has no implicit field (see the module
    docstring)."""
    kind, scan, only = idle
    if kind != 9 or scan.__class__ is not LeadSearch:  # (not `group_search.GroupSearch`, whose search differs)
        return
    texts = scan.texts
    begins: dict = {}  # for each open delimiter, its texts (each with the same try: the open's regex)
    for j, text in enumerate(texts):
        t = only[j]
        if t[0] is None or t[1] != -1 or any(o != text and (o.startswith(text) or text.startswith(o))
                                              for o in texts):
            continue
        begins.setdefault(t[0], []).append((text, t))
    for d, found in begins.items():
        act = opens.get(d)
        t = found[0][1]
        if act is None or act[1] != 0 or not act[2] or any(u[2:4] != t[2:4] for _, u in found):
            continue
        info = act[0]
        dinfo = _decoded_info(tpl, tpl.by_name[info[0]], info)
        if dinfo is None and tpl.implicit_field is not None:
            continue
        run = section_run(act[2], tuple(text for text, _ in found), t[2], t[3], bool(d.group_slots), info, dinfo)
        opens[d] = (info, -1, run, None)
