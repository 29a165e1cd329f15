"""The one-shot plan's scan of a watch whose every delimiter starts with a fixed text (issue 19).

`Watch.scan_end` answers, at the end of the stream, where the next delimiter of a watch is: the earliest
complete match from a position, then the longest, then the one of highest priority (lowest rank). It serves
every kind of watch (prefilters, literals searched per first character, regexes tried at their leading texts,
candidate triggers for regexes without one, a memo of finds ahead), and that generality is most of what the
one-shot plan spends on a short response: ~550 Python opcodes per Mistral response out of ~1,900.

A watch whose delimiters are literals, or regexes every match of which starts with one of a few fixed texts
(`Watch.leads`: `[TOOL_CALLS]` for Mistral's `\\[TOOL_CALLS\\](?P<name>...)...` and its `(?=\\[TOOL_CALLS\\])`
close), has a much smaller answer, which `LeadScan` computes: the fixed texts (every literal, every regex's
leads) are found with `str.find`, each one's next find kept in a list for the whole text (searched for again
only once passed, so each text is searched about once per fixed text: linear); at the earliest find, every
delimiter with a fixed text found there is tried (a literal matches; a regex is matched there, as `Watch.
scan_end` does: `re` twin when untimed, the `regex` pattern with its timeout otherwise, no match longer than
`MAX_DELIMITER_LENGTH`, no zero-width match at `zw` of a delimiter that fired there); the longest, then the
highest-priority one wins; if none matches there, the next find. No delimiter can match anywhere else: every
match starts with one of those texts. A regex that can match at offset 0 only (Llama 3's `^\\s*(?=\\{...)` open,
for which `end_search.end_plan` reads nothing past it) is tried there alone, with the texts found there. `tests/test_lead_scan.py` compares it with `Watch.scan_end`.
"""

from __future__ import annotations

import re as _stdre
from typing import Any

import regex

from .delimiters import MAX_DELIMITER_LENGTH, DelimiterTimeout
from .end_search import end_plan
from .regex_safety import _C, strict_parse

__all__ = ["LeadScan", "LeadSearch", "fixed_scan", "lead_scan"]


class LeadScan:
    """`Watch.scan_end` of one eligible watch (see the module docstring and `lead_scan`). Immutable; the
    per-text finds live in a list the caller keeps for one text (`fresh`)."""

    __slots__ = ("texts", "tries", "width", "alone", "only", "start")

    def __init__(self, texts: tuple[str, ...], tries: tuple[tuple[tuple[Any, ...], ...], ...],
                 start: tuple[tuple[Any, ...], ...] = ()) -> None:
        #: The fixed texts, and for each the delimiters to try where it is found: `(delimiter, width)` for a
        #: literal (its length) or a regex whose match there is known (`_sure_width`; `_EMPTY` for zero
        #: width), `(delimiter, -1, fast, untimed_match, pattern)` for a regex matched there.
        self.texts = texts
        self.tries = tries
        self.width = len(texts)
        #: Whether no text is a beginning of another: then two texts are never found at one position, and
        #: `nxt.index` names the one found there.
        self.alone = not any(a != b and b.startswith(a) for a in texts for b in texts)
        #: With `alone`: for each text, its one try when one delimiter starts with it, else None.
        self.only = tuple(t[0] if len(t) == 1 else None for t in tries)
        #: The regexes that can match at offset 0 only (`^\\s*(?=\\{...)` of Llama 3, `end_search.end_plan`
        #: reads nothing for them past it), as regex tries: tried at offset 0 only (`_at_start`).
        self.start = start

    def fresh(self, window: str, pos: int) -> list[int]:
        """The finds list for `window`, for a first call at `pos`: each text's first find at or after `pos`,
        `len(window)` for none. (A plain loop: `list(map(...))` of the finds is ~1.6x dearer for 2-5 texts; two
        or three texts (one too), most watches', are searched without the loop: ~25 of ~55-75 Python opcodes per call.)"""
        n = len(window)
        texts = self.texts
        width = self.width
        if width < 4:
            a = window.find(texts[0], pos)
            if width == 1:
                return [a if a >= 0 else n]
            b = window.find(texts[1], pos)
            if width == 2:
                return [a if a >= 0 else n, b if b >= 0 else n]
            c = window.find(texts[2], pos)
            return [a if a >= 0 else n, b if b >= 0 else n, c if c >= 0 else n]
        out = []
        for text in self.texts:
            k = window.find(text, pos)
            out.append(k if k >= 0 else n)
        return out

    def end(self, window: str, pos: int, zw: int, fired: frozenset, timeout: float | None,
            nxt: list[int]) -> tuple[int, int, Any, dict | None] | int:
        """`Watch.scan_end(window, pos, zw, fired, (), timeout, memo)`: `(start, end, delimiter, captures)`
        of the first delimiter in `window[pos:]`, or `len(window)`. `nxt`: this text's finds (`fresh`,
        then kept between calls on the same `window`, `pos` never going back); each is the first find of its
        text at or after `pos`, `len(window)` if there is none, or stale (before `pos`: searched again).
        Raises `DelimiterTimeout` as `scan_end` does."""
        if not pos and self.start:
            best = self._at_start(window, zw, fired, timeout)
            if best is not None and best is not _SKIPPED:
                return best
        n = len(window)
        i = min(nxt)
        while i < pos:  # a stale find (usually the one text the last call found): search it again from `pos`
            j = nxt.index(i)
            k = window.find(self.texts[j], pos)
            nxt[j] = k if k >= 0 else n
            i = min(nxt)
        while i < n:
            if self.alone:
                j = nxt.index(i)
                t = self.only[j]
                if t is None:
                    best = self._best(self.tries[j], window, i, zw, fired, timeout, None)
                elif t[1] > 0:  # a literal (or a regex whose match there is known)
                    return i, i + t[1], t[0], None
                elif t[1] == _EMPTY:  # a regex whose match there is known to be zero-width (`_sure_width`)
                    if i != zw or t[0] not in fired:
                        return i, i, t[0], None
                    best = _SKIPPED
                else:  # (`_match`, inlined: the usual case, one regex starts with the text found)
                    d = t[0]
                    try:
                        m = t[2](window, i) if n - i <= t[3] else t[4](window, i, None, None, False, timeout)
                    except TimeoutError:
                        raise DelimiterTimeout(d, window[i:]) from None
                    best = None
                    if m is not None:
                        end = m.end()
                        if end - i <= MAX_DELIMITER_LENGTH:
                            if end == i == zw and d in fired:
                                best = _SKIPPED
                            elif not d.group_slots:
                                return i, end, d, None
                            else:
                                groups = m.groupdict()
                                if None in groups.values():  # (only the groups that took part: `_groups`)
                                    groups = {k: v for k, v in groups.items() if v is not None}
                                return i, end, d, groups
            else:
                best = None
                for j in range(self.width):
                    if nxt[j] == i:
                        best = self._best(self.tries[j], window, i, zw, fired, timeout, best)
            if best is not None and best is not _SKIPPED:
                return best
            # nothing matches at `i`: the next find (after a zero-width match skipped at `zw`, which a later
            # call at `zw` may not skip, the finds past it go to a copy: `nxt` keeps this one)
            if best is _SKIPPED:
                nxt = nxt[:]
            at = i
            while i == at:
                j = nxt.index(i)
                k = window.find(self.texts[j], at + 1)
                nxt[j] = k if k >= 0 else n
                i = min(nxt)
        return n

    def _at_start(self, window: str, zw: int, fired: frozenset, timeout: float | None) -> Any:
        """The best match at offset 0 of the `start` regexes and of the delimiters whose text is there (`_best`):
        the earliest match there is, when there is one (the finds then try those texts again, in vain).
        (`_match` and `_best` inlined for the `start` regexes: this runs once per response.)"""
        best: Any = None
        n = len(window)
        for d, _, fast, span, timed in self.start:
            try:
                m = fast(window, 0) if n <= span else timed(window, 0, None, None, False, timeout)
            except TimeoutError:
                raise DelimiterTimeout(d, window) from None
            if m is None:
                continue
            end = m.end()
            if end > MAX_DELIMITER_LENGTH:
                continue
            if end == 0 == zw and d in fired:
                if best is None:
                    best = _SKIPPED
                continue
            if best is None or best is _SKIPPED or end > best[1] or (end == best[1] and d.rank < best[2].rank):
                groups = None
                if d.group_slots:
                    groups = m.groupdict()
                    if None in groups.values():  # (only the groups that took part: `delimiters._groups`)
                        groups = {k: v for k, v in groups.items() if v is not None}
                best = (0, end, d, groups)
        if window.startswith(self.texts):
            for j, text in enumerate(self.texts):
                if window.startswith(text):
                    best = self._best(self.tries[j], window, 0, zw, fired, timeout, best)
        return best

    @staticmethod
    def _best(tries: tuple[tuple[Any, ...], ...], window: str, i: int, zw: int, fired: frozenset,
              timeout: float | None, best: Any) -> Any:
        """The best of `best` and the matches at `i` of the delimiters `tries` (longest, then lowest rank);
        `_SKIPPED` if there is none but a zero-width one skipped at `zw`."""
        for t in tries:
            d = t[0]
            width = t[1]
            if width > 0:
                got = (i, i + width, d, None)
            elif width == _EMPTY:
                got = _SKIPPED if i == zw and d in fired else (i, i, d, None)
            else:
                got = _match(t, window, i, zw, fired, timeout)
            if got is None:
                continue
            if got is _SKIPPED:
                if best is None:
                    best = _SKIPPED
                continue
            if best is None or best is _SKIPPED or got[1] > best[1] or (got[1] == best[1] and d.rank < best[2].rank):
                best = got
        return best


#: `_match`'s answer for a zero-width match at `zw` of a delimiter that fired there (no match).
_SKIPPED: Any = ()
#: A try's width for a regex known to match with zero width where its text is (`_sure_width`).
_EMPTY = -2


def _match(t: tuple[Any, ...], window: str, i: int, zw: int, fired: frozenset,
           timeout: float | None) -> tuple[int, int, Any, dict | None] | None:
    """The match of regex try `t` (see `LeadScan.tries`) at `i`, as `Watch.scan_end` has it (`delimiters.
    _match_at`): None if there is none or it is longer than `MAX_DELIMITER_LENGTH`, `_SKIPPED` if it is
    zero-width at `zw` and its delimiter fired there."""
    d = t[0]
    try:
        if len(window) - i <= t[3]:  # proven bounded here: no timeout (`Delimiter.untimed_match`)
            m = t[2](window, i)
        else:
            m = t[4](window, i, None, None, False, timeout)
    except TimeoutError:
        raise DelimiterTimeout(d, window[i:]) from None
    if m is None:
        return None
    end = m.end()
    if end - i > MAX_DELIMITER_LENGTH:
        return None
    if end == i == zw and d in fired:
        return _SKIPPED
    if not d.group_slots:
        return i, end, d, None
    groups = m.groupdict()
    if None in groups.values():  # (only the groups that took part: `delimiters._groups`)
        groups = {k: v for k, v in groups.items() if v is not None}
    return i, end, d, groups


class LeadSearch(LeadScan):
    """A `LeadScan` whose fixed texts share their first character: the first of them from a position is found
    by one `re` search of their alternation, instead of one `str.find` per text. `re` skips to the shared
    first character in C and tries the texts only there, so it reads the text once, where the finds read it
    once per text, to the end for each text that is absent (Kimi K3's idle watch, six texts: ~0.7 vs ~3.4 µs
    per response; GLM-4.7's, five: ~1.7 vs ~15). Texts with different first characters stay `LeadScan`'s:
    `re` searches such an alternation slowly (Mistral's `[TOOL_CALLS]|</s>`, ~6x the two finds).

    Texts of which one begins another (Kimi K2's `<|tool_calls_section_begin|>` and
    `<|tool_calls_section_begin|><|tool_calls_section_end|>`) are searched longest first (the texts are kept in
    that order): at the earliest find, `re` names the longest text there, and the texts there are exactly it
    and those that begin it, whose tries `at` holds together (so one find per position, as for texts that
    begin no other).

    Its finds list (`fresh`) is `[at, j]`: the last search's find (`at`, `len(window)` for none) and the
    index of its text, valid while the position asked is at most `at` (nothing starts between); searched again
    once passed, so each part of the text is searched about once (linear, as `LeadScan`'s finds)."""

    __slots__ = ("search", "at")

    def __init__(self, texts: tuple[str, ...], tries: tuple[tuple[tuple[Any, ...], ...], ...],
                 start: tuple[tuple[Any, ...], ...] = ()) -> None:
        if len({t[0] for t in texts}) != 1:
            raise ValueError("LeadSearch: the texts must share their first character")
        order = sorted(range(len(texts)), key=lambda j: -len(texts[j]))  # (stable: the same order if alone)
        texts = tuple(texts[j] for j in order)
        tries = tuple(tries[j] for j in order)
        super().__init__(texts, tries, start)
        #: For each text, the tries of every delimiter that starts there when `re` names it: its own, then
        #: those of the shorter texts that begin it (all there too). `only`: the one try of `at`, else None.
        self.at = tuple(tuple(x for k, other in enumerate(texts) if text.startswith(other) for x in tries[k])
                        for text in texts)
        self.only = tuple(t[0] if len(t) == 1 else None for t in self.at)
        # (each text marked by an empty group after it: `lastindex` names the text found; not wrapped in a
        # group, so every alternative starts with a literal character and `re` skips to it in C; longest
        # first, so that where several texts are found `re` names the longest)
        self.search = _stdre.compile("|".join(_stdre.escape(t) + "()" for t in texts)).search

    def fresh(self, window: str, pos: int) -> list[int]:
        """The finds list for `window`: nothing searched yet (see the class docstring)."""
        return [-1, 0]

    def end(self, window: str, pos: int, zw: int, fired: frozenset, timeout: float | None,
            nxt: list[int]) -> tuple[int, int, Any, dict | None] | int:
        """`LeadScan.end`, with `nxt` this class's finds list (`fresh`, kept between calls on one `window`,
        `pos` never going back)."""
        if not pos and self.start:
            best = self._at_start(window, zw, fired, timeout)
            if best is not None and best is not _SKIPPED:
                return best
        n = len(window)
        i = nxt[0]
        if i < pos:  # stale: search from `pos`
            m = self.search(window, pos)
            if m is None:
                nxt[0] = n
                return n
            i = nxt[0] = m.start()
            j = nxt[1] = m.lastindex - 1
        elif i >= n:
            return n
        else:
            j = nxt[1]
        while True:
            t = self.only[j]
            if t is None:
                best = self._best(self.at[j], window, i, zw, fired, timeout, None)
            elif t[1] > 0:  # a literal (or a regex whose match there is known)
                return i, i + t[1], t[0], None
            elif t[1] == _EMPTY:  # a regex whose match there is known to be zero-width (`_sure_width`)
                if i != zw or t[0] not in fired:
                    return i, i, t[0], None
                best = _SKIPPED
            else:  # (`_match`, inlined, as in `LeadScan.end`)
                d = t[0]
                try:
                    m = t[2](window, i) if n - i <= t[3] else t[4](window, i, None, None, False, timeout)
                except TimeoutError:
                    raise DelimiterTimeout(d, window[i:]) from None
                best = None
                if m is not None:
                    end = m.end()
                    if end - i <= MAX_DELIMITER_LENGTH:
                        if end == i == zw and d in fired:
                            best = _SKIPPED
                        elif not d.group_slots:
                            return i, end, d, None
                        else:
                            groups = m.groupdict()
                            if None in groups.values():  # (only the groups that took part: `_groups`)
                                groups = {k: v for k, v in groups.items() if v is not None}
                            return i, end, d, groups
            if best is not None and best is not _SKIPPED:
                return best
            # nothing matches at `i`: the next find (past a zero-width match skipped at `zw`, which a later call
            # at `zw` may not skip, into a copy: `nxt` keeps this one)
            if best is _SKIPPED:
                nxt = [i, j]
            m = self.search(window, i + 1)
            if m is None:
                nxt[0] = n
                return n
            i = nxt[0] = m.start()
            j = nxt[1] = m.lastindex - 1


def lead_scan(watch: Any) -> Any:
    """The one-shot scan of `watch` (`fresh` and `end`, as `LeadScan`'s): its `LeadScan` (`fixed_scan`), else
    its `trigger_scan.TriggerScan` (delimiters that may start before or after a fixed text), else None (the
    plan asks `Watch.scan_end`)."""
    scan = fixed_scan(watch)
    if scan is None:
        from .trigger_scan import trigger_scan  # (it builds on this module)

        return trigger_scan(watch)
    return scan


def fixed_scan(watch: Any, late: bool = False) -> LeadScan | None:
    """The `LeadScan` of `watch`, or None when some delimiter of it may match where no fixed text of it
    starts (a regex without leads that can match past offset 0, `\\G`, a reverse search), it has no fixed
    text, or it has no regex and one search finds its literals (one `str.find`, or one compiled alternation
    of literals sharing their first character: the plan reads those itself). A watch of literals with
    different first characters (Mistral Small 3.1's idle `[TOOL_CALLS]` / `</s>`, Phi-4-mini's `functools` /
    `<|end|>` / `<|endoftext|>` closes) is one: its finds are kept as a regex watch's are, where
    `Watch.scan_end` would take `_literal_end`'s memo and finder tuples.

    `late`: for a scan that no regex alternative anchored at offset 0 can match from (past offset 0, or from it
    where those were tried there and none matched: the plan's late idle scan after `plan_shape._start`'s), a regex
    with such alternatives is found by the fixed texts of its others (`Delimiter.late_leads`: Hunyuan's
    `^\\s*助手：|<answer>` by `<answer>`) and matched there (where `^` cannot match)."""
    if watch is None or (not watch.regexes and len(watch.lit_finders) < 2):
        return None
    by_text: dict[str, list[tuple[Any, ...]]] = {}
    start: list[tuple[Any, ...]] = []
    for d in watch.delimiters:
        if d.literals is not None:
            for lit in d.literals:
                if watch.lit_lookup.get(lit) is d:  # (a literal two delimiters share is the first one's)
                    by_text.setdefault(lit, []).append((d, len(lit)))
            continue
        lead = watch.leads.get(d)
        if lead is None and late and d.anchored and d.late_leads:
            lead = d.late_leads
        if d not in watch.reusable:
            return None
        if lead is None:
            if end_plan(d.source) != ("", ()):  # (`("", ())`: no match past offset 0)
                return None
            start.append((d, -1, d.fast.match, d.untimed_match, d.pattern.match))
            continue
        for text in (lead if lead.__class__ is tuple else (lead,)):
            if not text:
                return None
            width = _sure_width(d, text)
            if width is None:
                by_text.setdefault(text, []).append((d, -1, d.fast.match, d.untimed_match, d.pattern.match))
            else:  # the regex's match where `text` is found is known: a literal, or `_EMPTY` (zero width)
                by_text.setdefault(text, []).append((d, width or _EMPTY))
    texts = tuple(by_text)
    if not texts:
        return None
    tries = tuple(tuple(by_text[t]) for t in texts)
    if len(texts) > 1 and len({t[0] for t in texts}) == 1:
        return LeadSearch(texts, tries, tuple(start))
    return LeadScan(texts, tries, tuple(start))


def _sure_width(d: Any, text: str) -> int | None:
    """The width of regex delimiter `d`'s match at any position where fixed text `text` is, when the regex's
    structure decides it whatever follows: each top-level alternative a fixed text (`</s>`) or a lookahead of
    one (`(?=\\[TOOL_CALLS\\])`), tried in order as the regex engines do (the first that matches wins); one
    that `text` begins with matches (its length, 0 for a lookahead), one that differs from `text` within their
    common length fails. None when it depends on what follows (an alternative longer than `text` that begins
    with it), on anything else in the pattern, or when none matches."""
    if d.group_slots or len(text) > MAX_DELIMITER_LENGTH or d.pattern.flags & (regex.IGNORECASE | regex.VERBOSE):
        return None
    parsed = strict_parse(d.source)  # (None for case-insensitive matching or syntax `re` does not read)
    if parsed is None:
        return None
    items = list(parsed)
    alternatives = items[0][1][1] if len(items) == 1 and items[0][0] is _C.BRANCH else [items]
    for alternative in alternatives:
        alternative = list(alternative)
        consuming = True
        if len(alternative) == 1 and alternative[0][0] is _C.ASSERT and alternative[0][1][0] == 1:
            consuming = False  # a lookahead (`(?=...)`, direction 1) of what follows
            alternative = list(alternative[0][1][1])
        if not alternative or any(op is not _C.LITERAL for op, _ in alternative):
            return None
        fixed = "".join(chr(c) for _, c in alternative)
        if text.startswith(fixed):
            return len(fixed) if consuming else 0
        if fixed.startswith(text):
            return None  # (a longer text: whether it matches depends on what follows)
    return None
