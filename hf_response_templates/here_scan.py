"""The one-shot plan's scan of an idle watch whose next delimiter is usually right where the last region ended.

gpt-oss's idle watch is three regexes (`(?:<\\|start\\|>assistant)?<\\|channel\\|>...<\\|message\\|>`, the
tool-call open of which may also start at any space before `to=`): no fixed text starts every match, so neither
`lead_scan.LeadScan` nor `trigger_scan.TriggerScan` (one regex only) reads it, and the plan asked `Watch.scan_end`,
whose generality (prefilters, literals, leads, a memo, `_match_here` and `_groups` per regex) was ~140 Python
opcodes per scan, ~480 of ~1,090 per gpt-oss response. Yet in a harmony response every message header follows
the last message's end (`<|end|><|start|>assistant<|channel|>...`) or opens the text, so the answer is nearly
always a match right at the position asked.

`HereScan.scan_end` (`Watch.scan_end`'s signature) tries every regex at the position first: a match there is the
earliest there can be, so the longest of them (the lowest rank among equals) is `scan_end`'s answer, when it is
not zero-width, not longer than `MAX_DELIMITER_LENGTH` and untimed there (`Delimiter.untimed_match`). Anything
else (no match there, a zero-width or too long one, a timed position) goes to `Watch.scan_end` itself. For the
plan's scans only (nothing disabled). `tests/test_here_scan.py` compares it with `Watch.scan_end`.
"""

from __future__ import annotations

from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH, _groups

__all__ = ["PLAIN", "HereScan", "here_scan"]


class HereScan:
    """`Watch.scan_end` of one eligible idle watch (see the module docstring and `here_scan`). Immutable."""

    __slots__ = ("watch", "tries", "span", "zero_width", "fallback")

    def __init__(self, watch: Any) -> None:
        self.watch = watch
        #: `(delimiter, fast match)` per regex, lowest rank first (a stable sort: `scan_end`'s order among
        #: equals), so that the first of equally long matches is the one `scan_end` takes.
        self.tries = tuple((d, d.fast.match) for d in sorted(watch.regexes, key=lambda d: d.rank))
        #: The longest rest of the text at which every regex's match is untimed (`Delimiter.untimed_match`).
        self.span = min(d.untimed_match for d in watch.regexes)
        self.zero_width = watch.zero_width
        self.fallback = watch.scan_end

    def scan_end(self, window: str, pos: int, zw: int, fired: frozenset, disabled: frozenset, timeout: float | None,
                 memo: dict | None = None) -> tuple[int, int, Any, dict | None] | int:
        """`Watch.scan_end(window, pos, zw, fired, disabled, timeout, memo)` with `disabled` empty (the plan's)."""
        n = len(window)
        if pos < n:
            if n - pos <= self.span:
                best = None
                for d, match in self.tries:
                    m = match(window, pos)
                    if m is not None and (best is None or m.end() > best.end()):
                        best = m
                        bd = d
                if best is not None:
                    end = best.end()
                    # (zero width: it may be skipped at `zw`; too long: no delimiter, and a shorter match of
                    # another regex may be the answer; both rare, and `scan_end`'s)
                    if pos < end <= pos + MAX_DELIMITER_LENGTH:
                        return pos, end, bd, _groups(bd, best) if bd.group_slots else None
        elif not self.zero_width:
            return n
        return self.fallback(window, pos, zw, fired, disabled, timeout, memo)


class _Plain:
    """A `HereScan` that tries nothing (`PLAIN`): `plan.OneShotPlan._fast_run`, which reads an idle watch's
    `HereScan` itself, then asks `Watch.scan_end` at every position."""

    __slots__ = ()
    tries: tuple = ()
    span = -1


#: The `HereScan` of an idle watch that has none (`here_scan` answers None): every scan is `Watch.scan_end`'s.
PLAIN: Any = _Plain()


def here_scan(watch: Any) -> HereScan | None:
    """The `HereScan` of idle watch `watch`, or None when it has literals (the plan's other scans read those) or
    no regex, or a regex that is not `reusable` (`\\G`, a reverse search: not a plain match at a position)."""
    if watch is None or not watch.regexes or watch.lit_finders or watch.lit_lookup:
        return None
    if any(d not in watch.reusable for d in watch.regexes):
        return None
    return HereScan(watch)
