"""The one-shot plan's idle scan of fixed texts where one text starts several delimiters (issue 19).

GigaChat 3's idle watch finds `<|message_sep|>`, `function call<|role_sep|>` and `</s>`; at `<|message_sep|>`
two regexes start, the tool call's open `(?:<\\|message_sep\\|>\\s*)?function call<\\|role_sep\\|>\\n?` and the
answer's close `<\\|message_sep\\|>(?!\\s*function call<\\|role_sep\\|>)|</s>`. `lead_scan.LeadScan.end` reads such a
text through `_best`, which calls `_match` per regex: three frames and their checks per scan, ~180 of
GigaChat 3's ~780 Python opcodes a response.

`TriesScan` is that `LeadScan` (same texts, tries and finds list) with `end` reading the first find in one
frame: each delimiter of the text found there is a literal (its width) or a regex matched there untimed; the
longest, then the highest-priority (lowest rank) match wins, as in `_best`. Anything rarer (no match there, a
zero-width or too long match, a timed match, a zero-width try) goes to `LeadScan.end`, which reads it from the
same finds. It is used for an idle watch whose texts begin no other (`alone`: the text found is the only one
there), without regexes tried at offset 0 only, where a text starts several delimiters (`tries_scan`).

Each try is read with the widest match the tries after it can have (`ranked`): once the best match is longer,
none of them can win (the longest wins), so they are not tried. GigaChat 3's tool-call open, tried first, is
at least 40 characters where it matches at `<|message_sep|>`, the answer's close there at most 15.
`tests/test_tries_scan.py` compares it with `LeadScan.end` and the state machine.
"""

from __future__ import annotations

from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH
from .lead_scan import LeadScan
from .regex_safety import strict_parse

__all__ = ["TriesScan", "tries_scan"]


class TriesScan(LeadScan):
    """A `LeadScan` whose `end` reads several delimiters at the first find in its own frame (see the module
    docstring). Immutable; built by `tries_scan`."""

    __slots__ = ("ranked",)

    def end(self, window: str, pos: int, zw: int, fired: frozenset, timeout: float | None,
            nxt: list[int]) -> tuple[int, int, Any, dict | None] | int:
        """`LeadScan.end`: the first delimiter in `window[pos:]` as `(start, end, delimiter, captures)`, or
        `len(window)`; `nxt` the finds list (`fresh`), kept between calls on one `window`."""
        n = len(window)
        i = min(nxt)
        while i < pos:  # a stale find: searched again from `pos`
            j = nxt.index(i)
            k = window.find(self.texts[j], pos)
            nxt[j] = k if k >= 0 else n
            i = min(nxt)
        if i == n:
            return n
        best = None
        for t, later in self.ranked[nxt.index(i)]:
            w = t[1]
            if w > 0:  # a literal (or a regex whose match there is known)
                e = i + w
                groups = None
            elif w != -1 or n - i > t[3]:  # zero width known, or a timed match: `LeadScan.end`
                return LeadScan.end(self, window, pos, zw, fired, timeout, nxt)
            else:
                m = t[2](window, i)
                if m is None:
                    continue
                e = m.end()
                if e == i or e - i > MAX_DELIMITER_LENGTH:  # (zero width, too long: `LeadScan.end`)
                    return LeadScan.end(self, window, pos, zw, fired, timeout, nxt)
                groups = None
                if t[0].group_slots:
                    groups = m.groupdict()
                    if None in groups.values():  # (only the groups that took part: `delimiters._groups`)
                        groups = {k: v for k, v in groups.items() if v is not None}
            if best is None or e > best[1] or (e == best[1] and t[0].rank < best[2].rank):
                best = (i, e, t[0], groups)
                if e - i > later:  # (no later try can match as long: see `ranked`)
                    break
        if best is None:  # nothing matches at this find: `LeadScan.end` reads on
            return LeadScan.end(self, window, pos, zw, fired, timeout, nxt)
        return best


def tries_scan(scan: Any) -> Any:
    """`scan` as a `TriesScan` where it is a `LeadScan` (not a `LeadSearch`) whose texts begin no other, with no
    regex tried at offset 0 only, and a text that starts several delimiters; else `scan` itself."""
    if scan.__class__ is not LeadScan or not scan.alone or scan.start or all(len(t) < 2 for t in scan.tries):
        return scan
    out = TriesScan(scan.texts, scan.tries, scan.start)
    #: For each text, its tries as `(try, later)`: `later` the widest match of the tries after it (-1 for none)
    out.ranked = tuple(tuple((t, max(map(_widest, tries[k + 1:]), default=-1)) for k, t in enumerate(tries))
                       for tries in scan.tries)
    return out


def _widest(t: tuple[Any, ...]) -> int:
    """The widest match try `t` can have (a literal's width, 0 for a known zero-width match, the regex's longest
    match by the standard library's parser), or `MAX_DELIMITER_LENGTH` where that is not known (no bound, a
    regex that parser does not read as `regex` does)."""
    if t[1] >= 0:
        return t[1]
    if t[1] != -1:  # (`lead_scan._EMPTY`: a known zero-width match)
        return 0
    parsed = strict_parse(t[0].source)
    return MAX_DELIMITER_LENGTH if parsed is None else min(parsed.getwidth()[1], MAX_DELIMITER_LENGTH)
