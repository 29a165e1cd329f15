"""Held text that completes: the scan's first answer when the chunk ends a held header (issue 19).

A tool-call or channel header held chunk after chunk (`held.still_held`: gpt-oss's ``<|channel|>analysis
<|message|>``, Kimi K3's ``<|open|>call tool="get_weather"<|sep|>``) is committed by the chunk after its last
token: its match ended at the end of the window, where more text could still extend it, and now text follows it.
The parser then scanned the window again: `Watch._held_at`, then every regex delimiter from its last candidate, a
literal search, the scan's bookkeeping (400-600 Python opcodes and 4-8 `regex` calls per header).

What the scan answers there depends only on the delimiters that can match or partially match at the held start
`pos`: a match or partial match starting at `pos` is the earliest anything can start (nothing before `pos` was held,
and the last scan routed everything before it), so the scan commits the longest complete match starting at `pos`
(then the highest priority) unless some delimiter is still pending there (a partial match, or a complete one that
ends at the window's end, which more text may extend or move: `delimiters._settle`). `commit_at` asks each
delimiter at `pos` only: a literal with `str.startswith`, a regex with one `match` (none where its fixed leading
texts say it cannot start there, `_fits_leads`), and gives the scan's answer, or None whenever anything is
pending or unusual (a zero-width match, a regex not proven bounded on this text): then the full scan runs, as
before. `tests/test_held_commit.py` compares the two.
"""

from __future__ import annotations

from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH, Watch, _settle
from .held_memo import MISSING, remember


def commit_at(
    watch: Watch, window: str, pos: int, remembered: bool = True
) -> tuple[int, int, Any, dict | None] | Any:
    """`watch.scan(window, pos, ...)`'s answer where `window[pos:]` is text the last scan held from `pos`, and
    more, that `held.still_held` could not say is still held: `(pos, end, delimiter, captures)` if the scan
    commits a delimiter at `pos`; the delimiter pending there if it holds everything from `pos` (a regex, or a
    literal that the window's end begins); None if this cannot tell (the scan decides). For a window with no
    disabled delimiter and no delimiter that may match with no width (`Watch.zero_width`: the caller checks both).
    `remembered=False`: compute it even where the watch remembers its answers (`held_memo`)."""
    n = len(window)
    if n - pos > MAX_DELIMITER_LENGTH:
        return None
    if watch.held_memo is not None and remembered:  # (no regex of the watch reads before `pos`: the text decides)
        key = window[pos:] if pos else window
        got = watch.held_memo.get(key, MISSING)
        if got is MISSING:
            got = commit_at(watch, key, 0, False)
            remember(watch.held_memo, key, got)
        if got.__class__ is tuple:  # (0, end, delimiter, captures) on `key`: moved to `pos`, captures copied
            groups = got[3]
            return pos, pos + got[1], got[2], dict(groups) if groups else groups
        return got
    best: tuple | None = None  # (end, rank, delimiter, match or None)
    if watch.lit_find is not None:
        suffix = watch.lit_suffix
        if suffix is not None and n - pos <= watch.lit_floor:
            s = suffix(window, pos)
            if s is not None and s.start() == pos:
                rest = window[pos:]  # a beginning of a literal ends the window: held from `pos`, by it
                return next(d for lit, d in watch.lit_lookup.items() if lit.startswith(rest))
        m = watch.lit_find(window, pos)
        if m is not None and m.start() == pos:  # (the longest literal there: `lit_find` tries them longest first)
            d = watch.lit_lookup[m.group()]
            best = (m.end(), d.rank, d, None)
    for d in watch.regexes:
        leads = d.partial_leads
        if leads is not None and not window.startswith(leads, pos):
            joined = _JOINED.get(leads)
            if joined is None:
                joined = _JOINED[leads] = "\x00" + "\x00".join(leads)
            if "\x00" + window[pos:] not in joined:
                continue  # no match nor partial match of `d` starts here (`_fits_leads`, in two C-level tests)
        if n - pos > d.untimed_match:
            return None  # (not proven bounded on this text: the scan times it)
        m = d.pattern.match(window, pos, None, None, True, None)
        if m is None:
            continue
        end = m.end()
        if m.partial or end == n:
            return d  # pending (`delimiters._settle`): held from `pos`, whatever the others say
        if end == pos or end - pos > MAX_DELIMITER_LENGTH:
            return None  # a zero-width or overlong match: the scan's rules
        if best is None or end > best[0] or (end == best[0] and d.rank < best[1]):
            best = (end, d.rank, d, m)
    if best is None:
        return None
    end, _, d, m = best
    if m is None:
        return pos, end, d, None
    start, end, groups, pending = _settle(d, window, m, n - MAX_DELIMITER_LENGTH, None)
    return d if pending else (pos, end, d, groups)


#: Each delimiter's `partial_leads`, each after a NUL: the text from `pos` is a beginning of one of them where
#: NUL and that text are found in it (a text holding a NUL may be found across two: only a regex call more).
_JOINED: dict[tuple[str, ...], str] = {}
