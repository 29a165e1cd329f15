"""The one-shot plan's reading of Mistral's fused calls written back to back (issue 19).

Mistral Small 3.2 and Ministral 3 write their tool calls one after another, `[TOOL_CALLS]NAME[ARGS]{...}` then
the next `[TOOL_CALLS]...` right where the arguments end, then `</s>`. `plan_shape._fused` reads each such call in
one turn of `plan._fast_run`'s loop (the idle finds, the open's regex at the first find, its close from the same
finds, the value decoded), but every call after the first pays the turn's dispatch again (the idle kind tests,
the finds' minimum and index, the try's tests: ~80 Python opcodes). Where the next open's text starts right
where the last call ended, that turn gives what the fused block gives, from a known find:

* the idle finds' minimum is that position (every find is at or past it, or stale and searched again from it;
  no other text of the scan can start there: `LeadScan.alone`), its text the open's (`j`), whose one try is the
  open's regex, read fused (`plan_shape._fused`): matched there, untimed and not over-long (neither zero-width);
* its close is the earlier of the close's two texts, from the same finds (searched again from the open's end
  where stale), and its value is decoded in the window where it starts with `{`, `[` or `"`: kind 5 (a JSON
  value read whole before the close, Mistral Small 3.2's) takes the value as the region's when it ends at or
  before the close, kind 6 (a region to the close, Ministral 3's) when only whitespace follows it up to the
  close (else the plain region, which the field's parse reads as before);
* nothing lies between the last call's end and the open (no implicit text), and the implicit region is closed
  already (the first call of the chain closed it).

`fused_chain`'s `chain(window, pos, n, finds, regions)` reads such calls one after another and returns where the
loop goes on. It leaves a call it cannot read whole (no match, a timed or over-long one, no close for a kind-6
region, a kind-5 value that is not there) untouched, finds included, so the loop's next turn reads it from the
same state as it would have. A kind-6 close is consumed: the chain goes on only after a zero-width one (the
next `[TOOL_CALLS]`, which the loop marks fired at its position: the caller does that once for the chain's
last, see `plan._fast_run`); after a close of some width it returns that close's end as `~end`.
`tests/test_fused_chain.py` compares the plan with the general loop and the streaming parser.
"""

from __future__ import annotations

from typing import Any

from .delimiters import open_at, open_slots
from .jsonscan import _WS, _scan_once

__all__ = ["fused_chain"]

_ws = _WS.match


def fused_chain(texts: tuple[str, ...], j: int, t: tuple) -> Any:
    """The `chain` of fused open `t` (`plan_shape._fused`'s try for text `texts[j]`, with `(kind, info, a, b, wa,
    da, wb, db, dinfo)` last), or None where calls cannot follow each other that way: the open's text is not one
    of the close's texts (kind 5), or not its one zero-width text (kind 6). See the module docstring."""
    d, _, match, span, _, (fk, info, a, b, wa, _, wb, _, dinfo) = t
    if j not in (a, b):
        return None
    if fk != 5 and not ((j == a and not wa and wb) or (j == b and not wb and wa)):
        return None
    ta, tb = texts[a], texts[b]
    slots = open_slots(d)

    def chain(window: str, pos: int, n: int, finds: list, regions: list) -> int:
        """Read the calls from `pos` (where `finds[j]` is) one after another. Kind 5: while each value ends where
        the next open's text is; returns the position after the last value read (`pos` if none). Kind 6: while
        each is closed; returns the last zero-width close's position (`pos` if none), or `~end` after a close of
        some width."""
        while n - pos <= span:
            got = open_at(match, window, pos, slots)
            if got is None:
                return pos
            end, groups = got
            # the close: the earlier of its two texts, from the idle finds (stale ones searched again from `end`)
            fa = finds[a]
            if fa < end:
                fa = window.find(ta, end)
                if fa < 0:
                    fa = n
            fb = finds[b]
            if fb < end:
                fb = window.find(tb, end)
                if fb < 0:
                    fb = n
            if fa <= fb:
                cs, w = fa, wa
            else:
                cs, w = fb, wb
            if fk == 5:  # the value, read whole before the close, is the region's
                i = end if end < cs and window[end] == "{" else _ws(window, end, cs).end()
                if i >= cs or window[i] not in '{["':
                    return pos
                try:
                    value, e = _scan_once(window, i)
                except (StopIteration, ValueError, RecursionError):
                    return pos
                if e > cs:
                    return pos
                finds[a] = fa
                finds[b] = fb
                regions.append((info, end, end, (value, groups)))
                if finds[j] != e:
                    return e
                pos = e
                continue
            if cs == n:  # (no close: the loop's, which ends there)
                return pos
            finds[a] = fa
            finds[b] = fb
            if (
                dinfo is not None
                and (i := end if end < cs and window[end] == "{" else _ws(window, end, cs).end()) < cs
                and window[i] in '{["'
            ):
                try:
                    value, e = _scan_once(window, i)
                except (StopIteration, ValueError, RecursionError):
                    e = n + 1
                if e == cs or e < cs and _ws(window, e, cs).end() == cs:
                    regions.append((dinfo, end, end, (value, groups)))
                else:
                    regions.append((info, end, cs, groups))
            else:
                regions.append((info, end, cs, groups))
            if w:
                return ~(cs + w)
            pos = cs
        return pos

    return chain
