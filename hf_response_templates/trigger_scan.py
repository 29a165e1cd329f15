"""The one-shot plan's scan of a watch whose delimiters may start before or after a fixed text (issue 19).

`lead_scan.LeadScan` reads a watch whose every delimiter starts with a fixed text. Some do not: Llama 4 JSON's
close `(?<=\\})(?=\\s*(?:;\\s*)?\\{\\s*"name"\\s*:)|\\s*<\\|python_end\\|>|\\s*<\\|eot\\|>|...` starts right after a
`}` or at any space of a run before `<|eot|>`, gpt-oss's tool-call open `...|\\s*to=...` at a space before `to=`,
DeepSeek-R1's tool-call close `\\s*```...` before the fence. `Watch.scan_end` reads those through each regex's
`end_search.end_finder` (one trigger search per regex, with its candidates) after trying every regex at the
scan position, plus its literals, its memo and its prefilters: ~700-1,200 Python opcodes per Llama 4 response.

`TriggerScan` reads the whole watch through one `end_search.end_plan` of all its delimiters together (their
top-level alternatives joined, literals escaped): one `re` search finds the next fixed text or guard character
any of them can start at or after, and each position where a match can start (the find, the position after a
guard character, every position of a run of spaces that ends at the find) is tried in increasing order with
every delimiter (a literal by `str.startswith`, a regex by `match`, untimed where proven bounded, no match
longer than `MAX_DELIMITER_LENGTH`, no zero-width match at `zw` of a delimiter that fired there); the first
position where one matches gives the longest, then the highest-priority, match there. Every match of every
delimiter starts at such a position (`end_plan` reads nothing otherwise), and positions come in increasing
order (`end_plan` checks that no run character is a guard or a text's first character), so that is
`Watch.scan_end`'s answer. At offset 0 every delimiter is tried first when some alternative is anchored there
(Llama 4's `^\\s*(?=\\{...)` has no candidates; `end_search.start_only`). After `end_search.MAX_MISSES` positions without a match (a text
full of `}`), the rest goes to `Watch.scan_end`, so it never costs much more than that.
`tests/test_lead_scan.py` compares it with `Watch.scan_end`.
"""

from __future__ import annotations

import re as _stdre
from typing import Any

from .delimiters import MAX_DELIMITER_LENGTH, DelimiterTimeout
from .end_search import _AFTER, _AT, MAX_MISSES, end_plan, start_only
from .lead_scan import _SKIPPED

__all__ = ["TriggerScan", "trigger_scan"]

_NO_DISABLED: frozenset = frozenset()
#: `fresh`'s "from": past every position, so no answer is kept yet.
_NOWHERE = 1 << 62


class TriggerScan:
    """`Watch.scan_end` of one eligible watch (see the module docstring and `trigger_scan`). Immutable; the
    per-text state lives in a list the caller keeps for one text (`fresh`)."""

    __slots__ = ("watch", "trigger", "kinds", "lits", "regexes", "lit_texts", "one", "hot", "at0", "lit_at", "lit_of")

    def __init__(self, watch: Any, trigger: Any, kinds: tuple[Any, ...], at0: bool = True) -> None:
        self.watch = watch
        #: The `re` search of `end_plan`'s alternation, and how each alternative's find gives positions.
        self.trigger = trigger
        self.kinds = kinds
        #: `(literal, delimiter)` for each literal (a literal two delimiters share is the first one's).
        self.lits = tuple(watch.lit_lookup.items())
        #: The regex tries (`lead_scan._match`'s `(delimiter, -1, fast match, untimed span, timed match)`).
        self.regexes = tuple((d, -1, d.fast.match, d.untimed_match, d.pattern.match) for d in watch.regexes)
        #: The literals' texts, for one `str.startswith` before the literals are looked at one by one (at most
        #: candidates none of them is at), and the one regex's try (`trigger_scan` takes one regex only).
        self.lit_texts = tuple(lit for lit, _ in self.lits)
        #: The longest literal at a position, in one `re` match (`_here`): the literals escaped, longest first (`re`
        #: takes the first alternative that matches; two of one length are one text), a pattern that matches
        #: nothing if there are none; and each literal's delimiter.
        self.lit_at = _stdre.compile("|".join(_stdre.escape(lit) for lit in sorted(self.lit_texts, key=len, reverse=True))
                                     or "(?!)").match
        self.lit_of = dict(self.lits)
        (self.one,) = self.regexes
        #: What `end` reads per call, in one unpack: the kinds by group number (`f.lastindex`, from 1), the
        #: literals' texts, whether the regex has captures.
        self.hot = ((None, *kinds), self.lit_texts, bool(self.one[0].group_slots))
        #: Whether a delimiter may match at offset 0 where no candidate is (an alternative anchored there,
        #: `end_search.start_only`): then `end` tries every delimiter there first.
        self.at0 = at0

    def fresh(self, window: str, pos: int) -> list[Any]:
        """The state list for `window`: `[from, answer]`, the last answer and the first position it holds
        from (see `end`); nothing yet (no position is that far)."""
        return [_NOWHERE, None]

    def end(self, window: str, pos: int, zw: int, fired: frozenset, timeout: float | None,
            nxt: list[Any]) -> tuple[int, int, Any, dict | None] | int:
        """`Watch.scan_end(window, pos, zw, fired, (), timeout, memo)`: `(start, end, delimiter, captures)` of
        the first delimiter in `window[pos:]`, or `len(window)`. `nxt`: this text's state (`fresh`, then kept
        between calls on the same `window`, `pos` never going back): an answer found from `from <= pos` is
        still the answer while it starts after `pos` (nothing matches between), or at `pos` unless a zero-width
        match may be skipped there. Raises `DelimiterTimeout` as `scan_end` does.

        This is `_here` at offset 0 (only where some alternative matches nowhere else: `at0`), then `_search`
        with `_here` inlined: one frame per call, the regex's try and the answer's checks in the candidate loop
        itself (these frames and their unpacking were ~100 of Llama 4 JSON's ~1,900 opcodes a one-shot parse);
        a candidate where a literal is, or of a regex with captures, goes to `_here`. A zero-width answer kept
        at `pos` that fired at `zw` is skipped without trying it again. An answer found past a zero-width match
        skipped at `pos` is kept from `pos + 1` (`keep`): past `pos` that skip no longer matters, and at `pos`
        itself it may not hold (Llama 4's close after `}{`: each such answer was searched for twice)."""
        frm, got = nxt
        keep = pos  # (where the answer found here holds from: `pos + 1` once it passed a skipped match at `pos`)
        if frm <= pos:
            if got.__class__ is int or pos < got[0] or (pos == got[0] and zw != pos):
                return got
            if pos == got[0] == got[1] and got[2] in fired:  # (then `zw == pos`)
                # the answer kept is a zero-width match at `pos`, the best there (nothing wider), and it fired at
                # `zw`: skipped at `pos` now, without trying it again (the plan's close search right after a
                # zero-width close and open at one position, Llama 4's `}{`); the search goes on past it
                keep = pos + 1
                done = pos
            else:
                done = pos - 1
        else:
            done = pos - 1  # every position up to here is tried, or no match can start there
        if not pos and done < 0 and self.at0:  # (every delimiter at offset 0: its alternatives anchored there
            got = self._here(window, 0, zw, fired, timeout)  # have no candidates)
            if got is _SKIPPED:
                keep = 1
            elif got is not None:
                nxt[0] = 0
                nxt[1] = got
                return got
        f = self.trigger(window, done)  # (a guard character may be right before `pos`; `re` reads -1 as 0)
        n = len(window)
        if f is None:  # (no candidate: the usual last call of a response, set up for nothing)
            nxt[0] = keep
            nxt[1] = n
            return n
        kinds, lits, caps = self.hot
        d, _, fast, span, timed = self.one
        misses = 0
        while f is not None:
            t = f.start()
            kind = kinds[f.lastindex]
            if kind is _AFTER:
                lo = t = t + 1
            elif kind is _AT:
                lo = t
            else:  # a run of these characters may come before the text: every position of it
                lo = t
                while lo > pos and window[lo - 1] in kind:
                    lo -= 1
            if lo <= done:
                lo = done + 1
            while lo <= t:
                if lits and window.startswith(lits, lo):  # (`_here`'s rarer cases: a literal there, captures)
                    best = self._here(window, lo, zw, fired, timeout, True)
                elif caps:
                    best = self._here(window, lo, zw, fired, timeout, False)
                else:  # `_here` of the one regex alone, without captures
                    try:
                        m = fast(window, lo) if n - lo <= span else timed(window, lo, None, None, False, timeout)
                    except TimeoutError:
                        raise DelimiterTimeout(d, window[lo:]) from None
                    best = None
                    if m is not None:
                        e = m.end()
                        if e - lo <= MAX_DELIMITER_LENGTH:
                            if e != lo or lo != zw or d not in fired:
                                best = nxt[1] = lo, e, d, None
                                nxt[0] = keep
                                return best
                            keep = lo + 1  # (zero width at `zw`, fired there: skipped)
                if best is not None:
                    if best is not _SKIPPED:
                        nxt[0] = keep
                        nxt[1] = best
                        return best
                    keep = lo + 1
                misses += 1
                if misses >= MAX_MISSES:  # (a text full of guard characters: `scan_end` reads the rest)
                    got = nxt[1] = self.watch.scan_end(window, lo + 1, zw, fired, _NO_DISABLED, timeout, {}) if (
                        lo < n) else n
                    nxt[0] = keep
                    return got
                lo += 1
            if t > done:
                done = t
            f = self.trigger(window, f.start() + 1)
        nxt[0] = keep
        nxt[1] = n
        return n

    def _search(self, window: str, pos: int, zw: int, fired: frozenset, timeout: float | None, n: int) -> Any:
        """The first match from the candidates at or after `pos`, or `n`; in a one-item list if it passed a
        zero-width match skipped at `zw`. (`end` runs this loop inlined; this is its unfused form, which
        `tests/test_trigger_scan.py` compares it with.)"""
        kinds = self.kinds
        skipped = False
        done = pos - 1  # every position up to here is tried, or no match can start there
        misses = 0
        f = self.trigger(window, done if done > 0 else 0)  # (a guard character may be right before `pos`)
        while f is not None:
            t = f.start()
            kind = kinds[f.lastindex - 1]
            if kind is _AT:
                lo = t
            elif kind is _AFTER:
                lo = t = t + 1
            else:  # a run of these characters may come before the text: every position of it
                lo = t
                while lo > pos and window[lo - 1] in kind:
                    lo -= 1
            if lo <= done:
                lo = done + 1
            while lo <= t:
                best = self._here(window, lo, zw, fired, timeout)
                if best is not None:
                    if best is not _SKIPPED:
                        return [best] if skipped else best
                    skipped = True
                misses += 1
                if misses >= MAX_MISSES:  # (a text full of guard characters: `scan_end` reads the rest)
                    got = self.watch.scan_end(window, lo + 1, zw, fired, _NO_DISABLED, timeout, {}) if lo < n else n
                    return [got] if skipped else got
                lo += 1
            if t > done:
                done = t
            f = self.trigger(window, f.start() + 1)
        return [n] if skipped else n

    def _here(self, window: str, i: int, zw: int, fired: frozenset, timeout: float | None,
              lit: Any = None) -> Any:
        """The best match at `i` of every delimiter (longest, then lowest rank); None if there is none,
        `_SKIPPED` if none but a zero-width one skipped at `zw`. (`lead_scan._match` and `LeadScan._best`,
        inlined: this runs at every candidate. The literals by one `re` match of them all, `lit_at`, unless the
        caller knows none is at `i` (`lit` False); then the one regex.)"""
        best: Any = None
        if lit is not False:  # (the longest literal at `i`: of one length, only one text can be there)
            m = self.lit_at(window, i)
            if m is not None:
                best = (i, m.end(), self.lit_of[m.group()], None)
        d, _, fast, span, timed = self.one
        try:
            m = fast(window, i) if len(window) - i <= span else timed(window, i, None, None, False, timeout)
        except TimeoutError:
            raise DelimiterTimeout(d, window[i:]) from None
        if m is None:
            return best
        end = m.end()
        if end - i > MAX_DELIMITER_LENGTH:
            return best
        if end == i == zw and d in fired:
            return _SKIPPED if best is None else best
        if best is None or end > best[1] or (end == best[1] and d.rank < best[2].rank):
            if not d.group_slots:
                return i, end, d, None
            groups = m.groupdict()
            if None in groups.values():  # (only the groups that took part: `delimiters._groups`)
                groups = {k: v for k, v in groups.items() if v is not None}
            return i, end, d, groups
        return best


def trigger_scan(watch: Any) -> TriggerScan | None:
    """The `TriggerScan` of `watch`, or None when `end_search.end_plan` reads nothing for its delimiters together
    (a match may start where no candidate is), its regex is not `reusable` (`\\G`, a reverse search), or it
    has no regex (the plan reads literals itself) or more than one."""
    if watch is None or len(watch.regexes) != 1 or watch.regexes[0] not in watch.reusable:
        return None  # (with several regexes, each candidate would try them all: `scan_end` tries those whose
        # fixed text is there, and gpt-oss's idle watch, three regexes, cost ~5% more opcodes so)
    parts = []
    for d in watch.delimiters:
        if d.literals is not None:
            parts.extend(_stdre.escape(lit) for lit in d.literals)
        else:
            parts.append(d.source)
    try:
        plan = end_plan("|".join(parts))
    except Exception:  # (sources that do not join: a global flag, group names used twice)
        return None
    if plan is None or not plan[0]:
        return None
    return TriggerScan(watch, _stdre.compile(plan[0]).search, plan[1], start_only("|".join(parts)))
