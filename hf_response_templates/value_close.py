"""The one-shot plan's reading of JSON calls written back to back, each closed right where the next opens (issue 19).

Llama 4 JSON writes its tool calls one after another, `{"name": ...}{"name": ...}` (or `; ` between them), then
`<|eot|>`. Each call's close `(?<=\\})(?=\\s*(?:;\\s*)?\\{\\s*"name"\\s*:)|\\s*<\\|python_end\\|>|...` is read by a
`trigger_scan.TriggerScan`, the next call's open `(?<=\\})\\s*(?:;\\s*)?(?=\\{...)` by another (the idle watch's),
each through a method call, its state list and the loop's dispatch, and the region's body is decoded again by
the field's parser afterwards: ~300 Python opcodes per call, the most of any shipped template.

`plan._fast_run` reads such a field itself (close kind -2, `value_close`), one call after another in one turn:

* the close: the trigger's first find, and its first candidate tried with the close's regex (`TriggerScan.end`'s
  first step: every match starts at a candidate, candidates come in increasing order). A zero-width match of the
  close at the position, which fired there (`zw`, `fired`: the close of the call before, at `}{`), is skipped
  without a try: the watch has that regex alone, so nothing else can start there. Anything else (no candidate in
  the find, no match at it, one longer than `MAX_DELIMITER_LENGTH`, a timed match) is `TriggerScan.end`'s, from
  the same position;
* the value: one C-level decode at the body's start (`jsonscan._scan_once`). When the value ends where the close
  starts, the body is that value's text, which the field's content parser (plain JSON: `json_values._loads`, the
  same C scanner) reads as the same value: the region is stored decoded, as `plan_shape`'s `dinfo` regions are
  (the field's `reshape` of it), not decoded a second time;
* the next open: the idle watch's first match from the close's end (the watch used past offset 0) is a match
  right there when there is one. So when none of its literals is there and its one regex, the open of this same
  field, matches there (untimed, not over-long, not a zero-width match that fired there), that open starts the
  next call, read in the same turn. At the end of the text no match there means nothing more (the loop ends as
  its idle state would). Anything else goes back to the loop's idle state at the close's end.

Only for a field whose content is plain JSON (no `content_args`, no value end), whose close watch is a
`TriggerScan` of that one regex (no literal, no capture, nothing anchored at offset 0), and whose idle watch past
offset 0 is a `TriggerScan` whose one regex is an open of the field without captures. `tests/test_value_close.py`
compares the plan with the general loop and the streaming parser.
"""

from __future__ import annotations

from typing import Any

from .content import get_content_parser, parse_json
from .delimiters import OPEN
from .regex_leads import _sre_constants
from .regex_safety import tolerant_parse
from .trigger_scan import TriggerScan

__all__ = ["value_close"]


def _plain_json(tpl: Any, f: Any) -> bool:
    """Whether field `f`'s content parser is `parse_json` without arguments (its body is `_loads(body)`)."""
    try:
        parser = get_content_parser(f.content, field=f.name)
        raw = tpl._snapshot["fields"][f.name]
        return (
            parser.parse is parse_json
            and f.value_end is None
            and not parser.compile_args(raw.get("content_args"), f.name)
        )
    except Exception:  # (a snapshot this does not read: not taken)
        return False


def _heads(trigger: Any) -> tuple[str, ...] | None:
    """The characters every match of `trigger` (a compiled stdlib pattern: `TriggerScan.trigger`'s) starts with,
    in the order of its alternatives; None where some alternative does not start with a literal character or a
    class of only those (a case-insensitive pattern, a range, a category, anything else: not read).

    No match can start before the first of them at or past a position, so the search from there finds what the
    search from the position finds: `str.find` (memchr) passes the text between, where the `re` search tries a
    match at each of its characters (~50 instructions each; a call's whole JSON body for Llama 4's close)."""
    C = _sre_constants
    if trigger.flags & C.SRE_FLAG_IGNORECASE:
        return None
    parsed = tolerant_parse(trigger.pattern)
    if parsed is None or not len(parsed):
        return None
    op, av = parsed[0]
    alternatives = av[1] if op is C.BRANCH and len(parsed) == 1 else [parsed]
    heads: list[str] = []
    for alternative in alternatives:
        if not len(alternative):
            return None
        op, av = alternative[0]
        if op is C.LITERAL:
            chars = [chr(av)]
        elif op is C.IN and av and all(o is C.LITERAL for o, _ in av):
            chars = [chr(c) for _, c in av]
        else:
            return None
        heads.extend(c for c in chars if c not in heads)
    return tuple(heads)


def value_close(plan: Any, tpl: Any, f: Any, w: Any, dinfo: tuple) -> tuple | None:
    """Close kind -2's constants for field `f` closed by watch `w` (see the module docstring): `(trigger search,
    kinds by group number, close delimiter, its untimed match, untimed span, TriggerScan, its slot, dinfo, the idle
    watch's literals, its open, the open's untimed match, untimed span, and the `fired` sets the loop moves to:
    `{close}` and `{close, open}`, made here once, and the trigger's first characters (`_heads`) or None)`; None
    where the kind does not apply."""
    one = plan._ones.get(w)
    if one is None or len(one) != 4 or one[2].__class__ is not TriggerScan or not _plain_json(tpl, f):
        return None
    scan, slot = one[2], one[3]
    kinds, lits, caps = scan.hot
    if lits or caps or scan.at0 or len(w.delimiters) != 1:
        return None
    idle = tpl.idle_watch
    idle = (plan._lates or {}).get(idle, idle)  # (the idle watch past offset 0: the next open is past it)
    one = plan._ones.get(idle)
    if one is None or len(one) != 4 or one[2].__class__ is not TriggerScan:
        return None
    ids = one[2]
    od = ids.one[0]
    if od.kind != OPEN or od.field != f.name or od.group_slots:
        return None
    cd, _, fast, span, _ = scan.one
    return (scan.trigger, kinds, cd, fast, span, scan, slot, dinfo, ids.lit_texts, od, ids.one[2], ids.one[3],
            frozenset({cd}), frozenset({cd, od}), _heads(scan.trigger.__self__))
