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

A regex whose shortest match is longer than every other delimiter's longest match at its text (`lead`) wins
wherever it matches there (the longest wins): it is tried first, and where it matches the others are not tried.
GigaChat 3's tool-call open is at least 25 characters, the answer's close at `<|message_sep|>` at most 15.
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

    __slots__ = ("lead", "rest")

    def end(self, window: str, pos: int, zw: int, fired: frozenset, timeout: float | None,
            nxt: list[int]) -> tuple[int, int, Any, dict | None] | int:
        """`LeadScan.end`: the first delimiter in `window[pos:]` as `(start, end, delimiter, captures)`, or
        `len(window)`; `nxt` the finds list (`fresh`), kept between calls on one `window`."""
        n = len(window)
        while True:
            # the first find `i` and its text's index `j` (the first of equal finds): `min(nxt)` and `nxt.index(i)`,
            # compared here for three texts (GigaChat 3's: the two C calls cost ~1,100 machine instructions)
            if self.width == 3:
                i, b, c = nxt
                j = 0
                if b < i:
                    i = b
                    j = 1
                if c < i:
                    i = c
                    j = 2
            else:
                i = min(nxt)
                j = nxt.index(i)
            if i >= pos:
                break
            k = window.find(self.texts[j], pos)  # a stale find: searched again from `pos`
            nxt[j] = k if k >= 0 else n
        if i == n:
            return n
        t = self.lead[j]
        if t is not None:  # a regex that wins where it matches (`lead`): tried first
            if n - i > t[3]:  # (a timed match: `LeadScan.end`)
                return LeadScan.end(self, window, pos, zw, fired, timeout, nxt)
            m = t[2](window, i)
            if m is not None:
                e = m.end()
                if e - i > MAX_DELIMITER_LENGTH:  # (too long: `LeadScan.end`; never zero width)
                    return LeadScan.end(self, window, pos, zw, fired, timeout, nxt)
                groups = None
                if t[0].group_slots:
                    groups = m.groupdict()
                    if None in groups.values():  # (only the groups that took part: `delimiters._groups`)
                        groups = {k: v for k, v in groups.items() if v is not None}
                return i, e, t[0], groups
        best = None
        for t in self.rest[j]:
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
        if best is None:  # nothing matches at this find: `LeadScan.end` reads on
            return LeadScan.end(self, window, pos, zw, fired, timeout, nxt)
        return best


def tries_scan(scan: Any) -> Any:
    """`scan` as a `TriesScan` where it is a `LeadScan` (not a `LeadSearch`) whose texts begin no other, with no
    regex tried at offset 0 only, and a text that starts several delimiters; else `scan` itself."""
    if scan.__class__ is not LeadScan or not scan.alone or scan.start or all(len(t) < 2 for t in scan.tries):
        return scan
    out = TriesScan(scan.texts, scan.tries, scan.start)
    #: For each text, the regex try that wins wherever it matches there (its shortest match longer than every
    #: other try's longest), else None; `rest`: the text's other tries (all of them without a lead)
    out.lead = tuple(_lead(tries) for tries in scan.tries)
    out.rest = tuple(tuple(t for t in tries if t is not lead) for tries, lead in zip(scan.tries, out.lead, strict=True))
    return out


def _lead(tries: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...] | None:
    """The try of `tries` (one text's, several) whose every match is longer than any other's can be, if a
    regex's."""
    if len(tries) < 2:
        return None
    for t in tries:
        if t[1] != -1:
            continue
        parsed = strict_parse(t[0].source)
        if parsed is None:
            continue
        widest = [_widest(o) for o in tries if o is not t]
        if None not in widest and parsed.getwidth()[0] > max(widest):
            return t
    return None


def _widest(t: tuple[Any, ...]) -> int | None:
    """The widest match try `t` can have (a literal's width, 0 for a known zero-width match, the regex's longest
    match by the standard library's parser), or None where that is not known or is past `MAX_DELIMITER_LENGTH`
    (no bound, a regex that parser does not read as `regex` does)."""
    if t[1] >= 0:
        return t[1]
    if t[1] != -1:  # (`lead_scan._EMPTY`: a known zero-width match)
        return 0
    parsed = strict_parse(t[0].source)
    widest = None if parsed is None else parsed.getwidth()[1]
    return widest if widest is not None and widest <= MAX_DELIMITER_LENGTH else None
