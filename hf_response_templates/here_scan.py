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

from functools import partial
from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH, _groups
from .regex_leads import stdlib_equivalent
from .regex_safety import _NAMED_GROUP

__all__ = ["PLAIN", "HereScan", "here_scan"]


class HereScan:
    """`Watch.scan_end` of one eligible idle watch (see the module docstring and `here_scan`). Immutable."""

    __slots__ = ("watch", "tries", "span", "zero_width", "fallback")

    def __init__(self, watch: Any) -> None:
        self.watch = watch
        #: `(delimiter, match, captures)` per regex, lowest rank first (a stable sort: `scan_end`'s order among
        #: equals), so that the first of equally long matches is the one `scan_end` takes: `match` its `fast`
        #: match, or its `re` twin with renamed groups (`_twin`), and `captures` None for a regex without named
        #: groups, else what reads them from a match (`delimiters._groups` of it, or `_twin_groups`).
        self.tries = tuple(_try(d) for d in sorted(watch.regexes, key=lambda d: d.rank))
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
                for d, match, caps in self.tries:
                    m = match(window, pos)
                    if m is not None and (best is None or m.end() > best.end()):
                        best = m
                        bd = d
                        bc = caps
                if best is not None:
                    end = best.end()
                    # (zero width: it may be skipped at `zw`; too long: no delimiter, and a shorter match of
                    # another regex may be the answer; both rare, and `scan_end`'s)
                    if pos < end <= pos + MAX_DELIMITER_LENGTH:
                        return pos, end, bd, None if bc is None else bc(best)
        elif not self.zero_width:
            return n
        return self.fallback(window, pos, zw, fired, disabled, timeout, memo)


def _try(d: Any) -> tuple[Any, Any, Any]:
    """`HereScan.tries`' entry of regex delimiter `d`."""
    twin = _twin(d)
    if twin is not None:
        return d, twin[0], partial(_twin_groups, d, twin[1])
    return d, d.fast.match, partial(_groups, d) if d.group_slots else None


def _twin(d: Any) -> tuple[Any, tuple[tuple[str, tuple[int, ...]], ...]] | None:
    """For a regex delimiter that `re` does not read only because a group name is used twice (gpt-oss's tool-call
    open: `name` in both alternatives; its `fast` is then the `regex` pattern, ~4x dearer a try), its `re` twin
    (`regex_leads.stdlib_equivalent`) with every group renamed `_1`, `_2`, ... (names change no match), and for
    each of `d`'s names (`group_slots` order) the twin's group indices (in `groups()`) it became. None otherwise,
    or where a renamed text was no group (in a class, escaped) or a named back reference needs the names."""
    if d.fast is not d.pattern or not d.group_slots or "(?P=" in d.source:
        return None
    names: list[str] = []

    def rename(m: Any) -> str:
        names.append(m.group(1))
        return f"(?P<_{len(names)}>"

    source = _NAMED_GROUP.sub(rename, d.source)
    if len(set(names)) == len(names):  # (no name used twice: `re` declines it for another reason)
        return None
    fast = stdlib_equivalent(source)
    if fast is None or set(fast.groupindex) != {f"_{k}" for k in range(1, len(names) + 1)}:
        return None
    slots: dict[str, list[int]] = {}
    for k, name in enumerate(names, 1):
        slots.setdefault(name, []).append(fast.groupindex[f"_{k}"] - 1)
    if set(slots) != {name for name, _ in d.group_slots}:
        return None
    return fast.match, tuple((name, tuple(slots[name])) for name, _ in d.group_slots)


def _twin_groups(d: Any, slots: tuple[tuple[str, tuple[int, ...]], ...], m: Any) -> dict:
    """`delimiters._groups(d, ...)` of the `regex` match that twin match `m` stands for (`_twin`): each name's one
    group that took part. Where two groups of one name took part, `regex` keeps the last capture of the group
    they share: that match is asked (never in gpt-oss's pattern, whose two are in different alternatives)."""
    g = m.groups()
    out = {}
    for name, indices in slots:
        for i in indices:
            v = g[i]
            if v is not None:
                if name in out:
                    return _groups(d, d.fast.match(m.string, m.pos))
                out[name] = v
    return out


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
