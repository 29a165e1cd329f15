"""The one-shot plan's reading of regions written one right after another (issue 19).

Kimi K2's `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>` calls follow each
other with nothing between, and so does all of a Kimi K3 message: `<|open|>think<|sep|>...<|close|>think<|sep|>`,
`<|open|>response<|sep|>...`, the tool section's wrapper, its `<|open|>call tool="NAME"<|sep|>...<|close|>call<|sep|>`
calls and `<|close|>message<|sep|><|end_of_msg|>`: each close is followed by the next open. `plan._fast_run` reads
each region in a loop turn or two (the idle watch's search finds the open, a regex open is matched, its close watch
finds the close), ~140 Python opcodes per region. Where the next open starts right at the close's end, those turns
give what one check gives:

* the idle watch (a `lead_scan.LeadSearch`, `plan_shape._alone`'s kind 9) searched from the close's end finds
  the earliest of its fixed texts; a text that starts right there, of which no other text of the watch is a
  beginning and which begins no other (checked here), is the one the search names, and its one try is the
  delimiter found (`only`: one delimiter starts there);
* a literal is that open; a regex is matched there, untimed and no longer than `MAX_DELIMITER_LENGTH`, and a
  match that is not empty is the open; nothing lies between the close and it (no implicit text);
* its close is one fixed text (close kind 0, found by `str.find`) or `plan_shape._sure`'s one text of known width
  (kind 7: Kimi K3's tool-section wrappers, closed by `(?=<)`), searched from the open's end;
* the implicit field's close (a literal: Kimi K2's `<|tool_calls_section_end|>` and `<|im_end|>`) ends the message,
  no implicit region being open between regions; so does the window's end right after a close (the loop's next
  turn, from there, reads nothing).

`section_run`'s `run` reads a region's close and then every region that follows the same way, one loop turn per
region (`str.find`, an `re` match of the texts at the close's end, a regex open's match); at the first position
where the next open is not there (or its regex does not match, or would be timed) it returns, and the plan's loop
goes on from there as it would have. An empty region of a plain one-value text field (no parse, store 0) is not
listed: the store drops its "" as no region at all (Kimi K3's `message_end` and tool-section wrappers). A zero-width
close (kind 7's `(?=<)`) is read only for a field whose open is not zero-width and whose close delimiter is not in
the idle watch: the loop's `zw` and `fired` (the delimiters that fired with zero width at `zw`) are not updated for
it, which changes nothing, as that delimiter is tried again only past the next open, past `zw`. (Inside a run every
search starts past the loop's `zw`, each region having been opened by a delimiter that is not empty, so no
zero-width match is skipped there.) A JSON field with no content options (Kimi K2's arguments) has its value
decoded in the window itself (as `jsonscan.whole_value_end`, the C scanner from the value's start): where the value
ends right before the close (whitespace aside) the region is stored decoded, as `plan_shape._fused` stores one
(`(dinfo, start, start, (value, captures))`, parsed by the field's `reshape.decoded`); anything else is the plain
region, which the field's own parse reads (and fails on) as before. In a template with an implicit field only
those JSON fields' opens read on (the XML-call templates with one, Qwen3.5, GLM, DeepSeek V3.2 / V4, Seed-OSS, write
a newline between calls: `call_chain.py` reads those across the whitespace); in one without (Kimi K3), every open
that can.

`plan_shape._fast_shape` gives such an open the close kind -1 (`section_opens`), with its `run` in the
close's place. `tests/test_section_scan.py` compares the regions and messages with the general loop and the
streaming parser.
"""

from __future__ import annotations

import re
from typing import Any

from .delimiters import open_at
from .jsonscan import _scan_once
from .lead_scan import LeadSearch

__all__ = ["section_opens", "section_run"]


def section_run(first: tuple, links: tuple, head: Any) -> Any:
    """`run(window, pos, n, groups, regions)` of one open delimiter (see the module docstring): read the region
    opened at `pos` (with the open's `groups`) to its close, then each region whose open starts right at the last
    close's end, appending them to `regions`; return the position after the last close read (the plan's loop goes
    on from there), or -1 when nothing more is read (a region runs to the end of the window, the last close ends
    it, or the implicit field's close is right there: the loop stops). `first`: the open's link, `(info, close,
    width, bare, dinfo)`: the field's info (`plan_shape._fast_shape`), its close's fixed text and width (0: a
    zero-width close at that text), whether an empty region of it is left out (a plain one-value text field, whose
    "" the store drops), and the info of a decoded JSON value (None: not one); `head`: the `re` match of the texts
    that can be read where a close ends, each marked by an empty group (its `lastindex` the index in `links`);
    `links`: for each, `(match, span, slots, *link)`: the open's untimed regex match (None: a literal, the text
    itself), the longest text that is untimed on, whether it has named groups, and its field's link (info None:
    the implicit field's close). (A closure: its constants are read without a lookup per call.)"""

    def run(window: str, pos: int, n: int, groups: dict | None, regions: list) -> int:
        info, close, width, bare, dinfo = first
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
            elif cs > pos or not bare:  # (an empty region of a plain one-value text field: as none)
                regions.append((info, pos, cs, groups))
            pos = cs + width
            if pos == n:  # (the loop's next turn, from the end, would read nothing)
                return -1
            m = head(window, pos)
            if m is None:
                return pos
            match, span, slots, info, close, width, bare, dinfo = links[m.lastindex]
            if info is None:  # the implicit field's close, none open: the message is over
                return -1
            if match is None:  # a literal open
                groups = None
                pos = m.end()
                continue
            if n - pos > span:
                return pos
            got = open_at(match, window, pos, slots)
            if got is None:
                return pos
            pos, groups = got

    run.first = first  # (for tests and inspection: the open's own link)
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


def _link(tpl: Any, act: tuple, idle: frozenset) -> tuple | None:
    """An open's link for `section_run` from its `opens` entry `(info, kind, a, b)`: `(info, close, width, bare,
    dinfo)` for a close of one fixed text (kind 0) or `_sure`'s one text of known width (kind 7; a zero-width one
    only where its delimiter is not in the idle watch, `idle`: see the module docstring); None for any other."""
    info, kind, a, b = act
    if kind == 0 and a.__class__ is str and a:
        width, bare = len(a), info[1] is None and info[2] == 0
    elif kind == 7 and a and (b[1] or b[0] not in idle):
        width, bare = b[1], b[2]
    else:
        return None
    return info, a, width, bare, _decoded_info(tpl, tpl.by_name[info[0]], info)


def section_opens(tpl: Any, idle: tuple[int, Any, Any], opens: dict) -> None:
    """Give each open of `opens` that `section_run` can read on from (see the module docstring) the close kind -1:
    `(info, -1, run, None)` in place of its `(info, kind, close, ...)`. `idle` is the idle watch's `_alone` answer:
    only a kind-9 `LeadSearch` (`(9, scan, only)`) is read. In a template with an implicit field, only the opens of
    a field whose values are decoded here (`_decoded_info`) read on (see the module docstring); an open reads on
    only where one of its own texts can be read at a close's end."""
    kind, scan, only = idle
    if kind != 9 or scan.__class__ is not LeadSearch:  # (not `group_search.GroupSearch`, whose search differs)
        return
    texts = scan.texts
    delimiters = frozenset(tpl.idle_watch.delimiters)
    links: dict = {d: _link(tpl, act, delimiters) for d, act in opens.items()}
    heads, table, starts = [], [None], set()  # (the texts read at a close's end, their links, the opens among them)
    for j, text in enumerate(texts):
        t = only[j]
        if t[0] is None or any(o != text and (o.startswith(text) or text.startswith(o)) for o in texts):
            continue
        if t[1] > 0 and t[0] not in opens:  # (the implicit field's close)
            link = (None, 0, False, None, None, 0, False, None)
        elif t[0] in opens and links[t[0]] is not None and (t[1] > 0 or t[1] == -1):
            link = (None, 0, False) if t[1] > 0 else (t[2], t[3], bool(t[0].group_slots))
            link = (*link, *links[t[0]])
            if links[t[0]][2] or t[0].literals is not None:  # (a zero-width close: only after a literal open)
                starts.add(t[0])
        else:
            continue
        heads.append(text)
        table.append(link)
    if not starts:
        return
    head = re.compile("|".join(re.escape(text) + "()" for text in heads)).match
    table = tuple(table)
    for d in starts:
        first = links[d]
        if first[4] is None and tpl.implicit_field is not None:
            continue
        opens[d] = (opens[d][0], -1, section_run(first, table, head), None)
