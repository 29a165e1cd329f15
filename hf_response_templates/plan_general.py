"""The one-shot plan's general loop (`OneShotPlan._general`), and what it shares with the two-state loop.

`general_run` reads every case a `OneShotPlan` takes: any watch (`Watch.scan_end` where no faster search was
compiled), JSON fields read to their value's end, late watches, and `report_as` fields (`_report_marks`, which
the two-state loop calls too). The plan runs it for the templates `plan_shape._fast_shape` gives no two-state
loop (none of the shipped ones), and the tests hold the two-state loop (`plan.OneShotPlan._fast_run`) to its
answers. Same messages and fallbacks as the state machine (see `plan.py`'s docstring).
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from . import content as _content
from .delimiters import OPEN, DelimiterTimeout
from .jsonscan import whole_value_end
from .template import _strip_text

__all__ = ["general_run"]

_NONE_FIRED: frozenset = frozenset()
_NO_DISABLED: frozenset = frozenset()

#: Regex time one plan may spend before it defers to the state machine: the stream's default budget is
#: `parser.BUDGET_TIMEOUTS` (4) timeouts, and the parser lowers a search's timeout once less than one
#: timeout is left, so below 3 timeouts of work in all, nothing the budget does can show.
_REGEX_GUARD = 3.0 * _content.DEFAULT_REGEX_TIMEOUT
_TIMEOUT = _content.DEFAULT_REGEX_TIMEOUT
_TIMEOUT_VAR = _content.REGEX_TIMEOUT
_EMPTY_TYPES = (str, list, dict)
_WHOLE: Any = object()  # the open region's `vend` before its first scan, for `OneShotPlan._whole` fields


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def general_run(self: Any, text: str, prefix: str, schemas: Any) -> dict[str, Any] | None:
    """`OneShotPlan.run` by the general loop (any watch, value ends, late watches, `report_as`): the plan's
    `_general` method (`self`: the `OneShotPlan`)."""
    tpl = self._tpl
    lit = self._anchor_lit
    if lit is not None:  # (`ResponseTemplate.cut_prefix`, inlined)
        i = prefix.rfind(lit)
        cut = prefix if i < 0 else prefix[i + len(lit):]
    else:
        anchor = self._anchor
        if anchor.literals is None and len(prefix) > anchor.untimed_search:
            return None  # a timed anchor search: its time counts against the budget
        texts = self._anchor_texts
        if texts is not None:  # (`ResponseTemplate.cut_prefix` of an alternation of fixed texts, inlined)
            i = -1
            for t in texts:
                j = prefix.rfind(t)
                if j > i:
                    i = j
            cut = prefix if i < 0 else prefix[anchor.fast.match(prefix, i).end():]
        else:
            cut = tpl.cut_prefix(prefix)
    if _TIMEOUT_VAR.get(_TIMEOUT) != _TIMEOUT:
        return None
    idle, closes, implicit, hold_ws, by_name, ones, defaults, timed, lates, whole_fields = self._loop
    t0 = perf_counter() if timed else 0.0
    gen_start = len(cut)
    window = cut + text if cut else text
    n = len(window)
    timeout = _TIMEOUT

    watch = idle
    cur = implicit  # the field being written (None: outside every region, or after the message ended)
    explicit = False
    opened = False
    start_at = 0  # where the open region's body starts in `window`
    captures: dict | None = None
    zw = -1
    fired = _NONE_FIRED
    memo: dict = {}
    found = [*self._slots]  # each `LeadScan`'s finds in `window` (`LeadScan.fresh`), by its slot
    pos = 0
    vend: Any = None  # the open region's `jsonscan.ValueEnd` (a JSON field with `"trailing": "stream"`)
    # (field, body start, body end, captures, `(value,)` if the `ValueEnd` decoded it already)
    regions: list[tuple[Any, int, int, dict | None, Any]] = []
    while True:
        if watch is not None:
            if pos and lates is not None:  # past offset 0: what an anchored delimiter cannot match
                watch = lates.get(watch, watch)
            one = ones.get(watch)
            if one is None:
                try:
                    result = watch.scan_end(window, pos, zw, fired, _NO_DISABLED, timeout, memo)
                except DelimiterTimeout:
                    return None
            elif one[0] is not None:  # (`Watch.scan_end` of one literal, inlined)
                i = window.find(one[0], pos)
                result = (i, i + len(one[0]), one[1], None) if i >= 0 else n
            elif one[1] is None:  # (`Watch.scan_end` of fixed texts: `LeadScan.end`)
                scan = one[2]
                finds = found[one[3]]
                if finds is None:  # (not in `memo`: a zero-width match leaves the finds valid)
                    finds = found[one[3]] = scan.fresh(window, pos)
                try:
                    result = scan.end(window, pos, zw, fired, timeout, finds)
                except DelimiterTimeout:
                    return None
            else:  # (`Watch.scan_end` of literals one search finds, inlined)
                m = one[1](window, pos)
                result = (m.start(), m.end(), one[2][m.group()], None) if m is not None else n
        elif cur is not None:  # nothing is watched (a field without a close delimiter): the rest is its text
            result = n
        else:  # the message is over: the rest is not part of it
            break
        if result.__class__ is int:
            start = end = result
            d = None
        else:
            start, end, d, groups = result
        if vend is not None:
            if vend is _WHOLE:  # (the first scan of a one-value region: see `_whole`)
                whole = whole_value_end(window, pos, start)
                if whole is not None:
                    regions.append((cur, start_at, whole[0], captures, (whole[1],)))
                    vend = None
                    opened = explicit = False
                    captures = None
                    cur = implicit
                    watch = idle
                    pos = whole[0]
                    continue
                vend = cur.value_end()
            got = vend.scan(window, pos, start, 0, True)
            if got != -1:  # the value ends before the delimiter (`jsonscan.MORE`: it does not)
                if got == -2:  # `jsonscan.HOLD`: not at the end of a stream
                    return None
                regions.append((cur, start_at, got, captures, vend.decoded()))
                vend = None
                opened = explicit = False
                captures = None
                cur = implicit
                watch = idle
                pos = got
                continue
        if start > pos and not explicit:
            # text in the idle state: the implicit field's (opened by text that is not whitespace, when
            # whitespace is held), or outside every region (kept in `unparsed` if not whitespace)
            if cur is not None:
                if not opened and not (hold_ws and window[pos:start].isspace()):
                    opened = True
                    start_at = pos
            else:
                gap = window[max(pos, gen_start):start]
                if gap and not gap.isspace():
                    return None
        if d is None:
            pos = start
            break
        if start == end:  # zero width: `d` may not match with zero width here again
            if end == n and d.kind == OPEN:
                pos = start  # nothing opens at the very end of the stream
                break
            fired = (fired if start == zw else _NONE_FIRED) | {d}
            zw = start
            memo.clear()
        if d.kind == OPEN:
            if opened:  # the implicit region ends where an explicit one opens
                regions.append((cur, start_at, start, None, None))
            cur = by_name[d.field]
            explicit = opened = True
            captures = groups
            start_at = end
            watch = closes[cur.index]
            if cur.value_end is not None:
                vend = _WHOLE if cur.name in whole_fields else cur.value_end()
        else:
            if groups:
                captures = {**captures, **groups} if captures else groups
            if vend is not None:
                regions.append((cur, start_at, start, captures, vend.decoded()))
                vend = None
            elif opened:
                regions.append((cur, start_at, start, captures, None))
            opened = False
            captures = None
            if explicit:
                explicit = False
                cur = implicit
                watch = idle
            else:  # the implicit field's close: the message is over
                cur = None
                watch = None
        pos = end
    if opened:
        regions.append((cur, start_at, n, captures, vend.decoded() if vend is not None else None))

    message = dict(defaults) if defaults is not None else tpl.new_message()
    typing = schemas.type_tool_calls if schemas else None  # (`ToolSchemas.__bool__` once, not per region)
    assigned: set[str] = set()
    more: dict[str, list[str]] | None = None
    for field, a, b, caps, decoded in regions:
        try:
            if decoded is None:
                parse = field.parse
                if parse is _strip_text:  # (a str: nothing for `tools=` to type)
                    value = window[a:b].strip()
                else:
                    value = parse(window[a:b], caps)
                    if typing is not None:
                        value = typing(value, field.tool_typing)
            else:
                value = field.reshape(decoded[0], caps)
                if typing is not None:
                    value = typing(value, field.tool_typing)
        except Exception:  # a region that does not parse: the state machine reports it
            return None
        name = field.name
        first = name not in assigned
        assigned.add(name)
        join = field.join
        if join is not None:
            if value.__class__ is not str and not isinstance(value, str):
                return None
            if not first:
                if more is None:
                    more = {}
                more.setdefault(name, []).extend((join, value))
            elif name in self._keep and isinstance(message[name], str):
                message[name] = message[name] + join + value
            else:
                message[name] = value
        elif field.repeats:
            if not first:
                message[name].append(value)
            elif name in self._keep and isinstance(message[name], list):
                message[name].append(value)
            else:
                message[name] = [value]
        elif first or _is_empty(message[name]):
            message[name] = value
        elif value == "":
            pass
        elif isinstance(value, str) and isinstance(message[name], str):
            if more is None:
                more = {}
            more.setdefault(name, []).extend(("\n", value))
        else:
            return None  # a second value the field cannot merge: reported by the state machine
        if field.report is not None and not _report_marks(field, window[a:b], value, message, more):
            return None
    for name in self._required:
        if name not in assigned:
            return None
    if timed and perf_counter() - t0 >= _REGEX_GUARD:
        return None
    if more:
        for name, parts in more.items():
            message[name] = "".join([message[name], *parts])
    keep = self._keep
    for name in assigned:
        if name not in keep:
            value = message[name]
            if not value and (value is None or isinstance(value, _EMPTY_TYPES)):  # (`_is_empty`)
                del message[name]
    return message


def _report_marks(field: Any, body: str, value: Any, message: dict[str, Any],
                  more: dict[str, list[str]] | None) -> bool:
    """`report_as`: list the markup matches of a region just stored into `message` (`ResponseParser.
    _report_marks`, on the plan's message and its `more` pieces, the parser's `_more`); False if the markup's
    regex fails (a timeout: the state machine raises it)."""
    markup = field.markup
    try:
        marks = markup.marks(body)
        clean = markup.sub(body) if marks and isinstance(value, str) else None
    except Exception:
        return False
    if not marks:
        return True
    base = 0
    if clean is not None:
        lead = len(clean) - len(clean.lstrip()) if clean != value else 0  # what `strip` took off
        name = field.name
        total = len(message[name]) if isinstance(message.get(name), str) else len(value)
        if more and name in more:
            total += sum(map(len, more[name]))
        base = total - len(value) - lead
    out = message.setdefault(field.report, [])
    for mark in marks:
        mark["start"] += base
        mark["end"] += base
        out.append({"field": field.name, **mark})
    return True
