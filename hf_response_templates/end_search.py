"""End-of-stream searches for regex delimiters without one fixed leading text: tried only at candidate positions.

At the end of the stream (one-shot parsing, `Watch.scan_end`) a regex delimiter is searched for once per region.
A regex whose every match starts with a fixed text is tried only where `str.find` sees that text
(`Watch.leads`). Many delimiters have no such text: Llama 4's `\\s*<\\|eot\\|>` may start with any run of spaces,
`(?<=\\})\\s*(?:;\\s*)?(?=\\{\\s*"name"\\s*:)` with a space or nothing, Gemma 3's `(?<=\\)\\s*\\])` right after a `]`,
Hunyuan's `^\\s*助手：|<answer>` at offset 0 or at `<answer>`. A search of such a regex tries every position of
the text (~20-40 ns a character with `re`, several alternatives and lookbehinds each), which made it the largest
part of a one-shot parse of those templates.

`end_finder` reads the regex's structure (`regex_leads`) once, per top-level alternative:

* an alternative anchored at offset 0 (`^`, `\\A`, no MULTILINE) cannot match past it, and is left out (the
  search here always starts past offset 0);
* otherwise the forms every match of it starts with (`regex_leads._spaced_leads`): a run of characters of a
  small class (maybe none), then a fixed text; a match of the form `(run, text)` starts inside the run of
  `run` characters that ends where `text` is, or at `text` itself;
* an alternative that starts with a lookbehind whose match ends with one of a few characters (`}` for
  `(?<=\\})...`) starts right after one of them: that filters its forms' candidates with one character test,
  or gives its candidates alone when it has no forms (Gemma 3's `(?<=\\)\\s*\\])`).

* an alternative whose fixed text (after its run) is followed by more that `_spaced_of` reads (internlm2's
  `\\s*\\}\\s*<\\|action_end\\|>`: spaces then `<|action_`) has its text found only where that follows
  (`_follow_of`, a lookahead in the trigger): the `}` of the call's arguments are not candidates.

The finder then walks the fixed texts (`str.find` per first character, `_finders`) and the guard characters in
order of position, and tries the whole regex (`match` at the candidate: the same match a search would find
there) at each candidate in increasing order; the first match is the leftmost one, as every position where a
match can start is a candidate. That order holds because no fixed text and no guard character is a character of
a run (checked, else no finder): the run before a later text cannot reach back over an earlier text or guard.
After `MAX_MISSES` candidates that do not match (a text full of `]` or `{` that start nothing), it hands the
rest to the plain search, so a finder never costs much more than the search it replaces.
"""

from __future__ import annotations

import re as _stdre
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from .regex_leads import (
    _REPEATS,
    _START_ANCHORS,
    _lookbehind_ends,
    _multiline,
    _only_at_start,
    _run_class,
    _spaced_of,
    _sre_constants,
    _top_alternatives,
    _Unknown,
)
from .regex_safety import tolerant_parse

__all__ = ["end_finder", "end_plan", "start_only", "MAX_MISSES"]

#: `sre` ops with nothing nested (characters, classes, group references): `start_only` reads past them.
_FLAT_OPS = frozenset(
    getattr(_sre_constants, n) for n in ("LITERAL", "NOT_LITERAL", "ANY", "IN", "CATEGORY", "GROUPREF")
    if getattr(_sre_constants, n, None) is not None
)

#: Candidates that do not match before a finder hands the rest of the text to the plain search.
MAX_MISSES = 8

#: `(run characters or None, lookbehind characters or None)`: how a match can start around a fixed text.
Entry = tuple


def _finders(texts: list[str] | tuple[str, ...]) -> tuple[Any, ...]:
    """How to find the first of `texts` (distinct, non-empty) in a window, at the end of the stream: one
    finder per first character, `str` (`str.find`) for a text alone with its first character, else the
    `search` of their alternation, longest first. `re` searches an alternation of texts sharing a first
    character fast, but of texts with different ones slowly, ~4x a `str.find` of each (`[THINK]|</s>`:
    6.9 vs 1.8 µs on 1,000 characters; `<tool_call>|<|im_end|>|<think>`: 0.6 vs 1.9)."""
    by_first: dict[str, list[str]] = {}
    for t in sorted(texts, key=len, reverse=True):
        by_first.setdefault(t[0], []).append(t)
    return tuple(
        group[0] if len(group) == 1 else _stdre.compile("|".join(_stdre.escape(t) for t in group)).search
        for group in by_first.values()
    )


def _next_of(finder: Any, window: str, pos: int) -> tuple[int, str] | None:
    """`(start, text)` of the first find of `finder` (see `_finders`) in `window[pos:]`, or None."""
    if finder.__class__ is str:
        i = window.find(finder, pos)
        return (i, finder) if i >= 0 else None
    m = finder(window, pos)
    return (m.start(), m.group()) if m is not None else None


#: How a find of the trigger's alternative turns into candidates: `_AT` the find itself, `_AFTER` the position
#: after the find's first character (a lookbehind's), or a run (a frozenset: every position from where a run of
#: those characters that ends at the find starts, up to the find).
_AT, _AFTER = 0, 1


@lru_cache(maxsize=1024)
def end_plan(source: str) -> tuple[str, tuple[Any, ...]] | None:
    """`(trigger, kinds)` for regex `source`: a stdlib pattern of marked alternatives, one per way a match
    past offset 0 can start (a fixed text, maybe after a run of spaces; a lookbehind's character and what
    follows it), and for group `k` (from 1) `kinds[k - 1]`, how its find gives candidates (`_AT`, `_AFTER` or a
    run's characters). None if some match may start where the trigger finds nothing, or the order argument of
    the module docstring does not hold; `("", ())` if nothing matches past offset 0."""
    if _multiline(source):
        return None  # (`^` may match after a newline: not an offset-0 anchor)
    alternatives = _top_alternatives(source)
    if alternatives is None:
        return None
    texts: dict[str, set[str]] = {}  # fixed text -> the characters of the runs that may come before it
    follows: dict[str, set[str] | None] = {}  # fixed text -> what must follow it (`_follow_of`; None: anything)
    parsed = tolerant_parse(source)
    caseless = parsed is None or bool(parsed.state.flags & _stdre.IGNORECASE)
    after: dict[frozenset[str], set[str]] = {}  # lookbehind characters -> what may follow them ("": anything)
    for alternative in alternatives:
        if _only_at_start(alternative):
            continue  # (the search starts past offset 0)
        behind = _lookbehind_ends(alternative)
        try:
            forms = _spaced_of(alternative)
        except _Unknown:
            forms = None
        if forms is not None and not forms:
            continue  # every way of matching starts at offset 0
        if forms is not None and all(text for _run, text, _more in forms):
            for run, text, _more in forms:
                if behind:
                    lead = "[" + "".join(_stdre.escape(c) for c in sorted(run)) + "]*" if run else ""
                    after.setdefault(frozenset(behind), set()).add(lead + _stdre.escape(text))
                else:
                    texts.setdefault(text, set()).update(run or ())
                    ahead = None if caseless or len(forms) != 1 else _follow_of(alternative, run, text)
                    if ahead is None or follows.get(text, ()) is None:
                        follows[text] = None
                    else:
                        follows.setdefault(text, set()).update(ahead)
        elif behind:
            after.setdefault(frozenset(behind), set()).add("")
        else:
            return None
    runs = {c for run in texts.values() for c in run}
    guards = {c for chars in after for c in chars}
    firsts = {t[0] for t in texts}
    if firsts & runs or guards & runs or guards & firsts:
        return None
    parts: list[str] = []
    kinds: list[Any] = []
    for chars, follow in sorted(after.items(), key=lambda kv: sorted(kv[0])):
        head = _stdre.escape(next(iter(chars))) if len(chars) == 1 else "[" + "".join(_stdre.escape(c) for c in sorted(chars)) + "]"
        parts.append(head if "" in follow else head + "(?:" + "|".join(sorted(follow)) + ")")
        kinds.append(_AFTER)
    for text in sorted(texts, key=lambda t: (-len(t), t)):  # (longest first: a text's find holds the shorter ones')
        run = set(texts[text])
        for other in texts:
            if text.startswith(other):
                run |= texts[other]
        ahead = follows.get(text)
        if ahead is not None and any(text.startswith(other) and other != text for other in texts):
            ahead = None  # (its find holds a shorter text's candidates, which need not be followed so)
        parts.append(_stdre.escape(text) + ("(?=" + "|".join(sorted(ahead)) + ")" if ahead else ""))
        kinds.append(frozenset(run) if run else _AT)
    # (each alternative marked by an empty group at its end, not wrapped in one: then every alternative starts
    # with a literal character and `re` skips to those characters in C, ~5x faster than trying every position)
    return "|".join(f"{p}()" for p in parts), tuple(kinds)


@lru_cache(maxsize=1024)
def start_only(source: str) -> bool:
    """Whether some way of matching regex `source` is anchored at offset 0 (`^`, `\\A` anywhere in it):
    `end_plan` leaves those paths out (`_spaced_of`), so its trigger gives every position where a match may
    start but offset 0 for them. False lets a scan from offset 0 use the trigger alone (Llama 4's close watch,
    `(?<=\\})(?=...)|\\s*<\\|eot\\|>|...`: no anchor; a lookbehind matches nothing at offset 0). True where
    unsure (the pattern does not parse, a construct the walk does not read)."""
    parsed = tolerant_parse(source)
    if parsed is None:
        return True
    C = _sre_constants
    stack = [list(parsed)]
    while stack:
        for op, av in stack.pop():
            if op is C.AT:
                if av in _START_ANCHORS:
                    return True
            elif op is C.SUBPATTERN:
                stack.append(list(av[3]))
            elif op is C.BRANCH:
                stack.extend(list(alt) for alt in av[1])
            elif op in _REPEATS:
                stack.append(list(av[2]))
            elif op is C.ASSERT or op is C.ASSERT_NOT:
                stack.append(list(av[1]))
            elif op not in _FLAT_OPS:
                return True  # (an atomic group, a conditional...: not read)
    return False


def _follow_of(alternative: Any, run: frozenset[str] | None, text: str) -> set[str] | None:
    """What must follow `text` in every match of `alternative` (parsed), whose one `_spaced_of` form is
    `(run, text)`: lookahead sources of `_spaced_of`'s forms of the items after a plain leading run and the
    text's literals (internlm2's `\\s*\\}\\s*<\\|action_end\\|>`: `}` followed by `[spaces]*<|action_`), so
    the trigger finds only the `}` such a match can hold; None if the alternative is not that plain, or some
    form of what follows has no fixed text."""
    C = _sre_constants
    items = list(alternative)
    k = 0
    if run is not None:
        if not items or items[0][0] not in _REPEATS or _run_class(items[0][1]) != run:
            return None
        k = 1
    for ch in text:
        if k >= len(items) or items[k][0] is not C.LITERAL or chr(items[k][1]) != ch:
            return None
        k += 1
    if k >= len(items):
        return None
    try:
        forms = _spaced_of(items[k:])
    except _Unknown:
        return None
    if not forms or any(not t for _r, t, _m in forms):
        return None
    return {("[" + "".join(_stdre.escape(c) for c in sorted(r)) + "]*" if r else "") + _stdre.escape(t)
            for r, t, _m in forms}


def end_finder(d: Any, match_at: Callable[..., Any], search_regex: Callable[..., Any]) -> Callable[..., Any] | None:
    """The end-of-stream search of regex delimiter `d` by candidates (see the module docstring), or None if
    `end_plan` reads nothing for it: `find(window, start, timeout)` gives the first match at or after `start`
    (at least 1), `(start, end, captures)` or None, as `search_regex(d, window, start, True, -1, timeout)`
    does. `match_at(d, window, i, n, timeout)`: `(i, end, captures)` of a match at `i`, or None."""
    plan = end_plan(d.source)
    if plan is None:
        return None
    source, kinds = plan
    if not source:
        return _nothing
    trigger = _stdre.compile(source).search

    def find(window: str, start: int, timeout: float | None) -> tuple[int, int, dict | None] | None:
        n = len(window)
        done = start - 1  # every position up to here is tried, or no match can start there
        misses = 0
        f = trigger(window, done)  # (a lookbehind's character may be right before `start`)
        while f is not None:
            t = f.start()
            kind = kinds[f.lastindex - 1]
            if kind is _AT:
                lo = t
            elif kind is _AFTER:
                lo = t = t + 1
            else:  # a run of these characters may come before the text: every position of it
                lo = t
                while lo > start and window[lo - 1] in kind:
                    lo -= 1
            if lo <= done:
                lo = done + 1
            while lo <= t:
                m = match_at(d, window, lo, n, timeout)
                if m is not None:
                    return m
                misses += 1
                if misses >= MAX_MISSES:
                    found = search_regex(d, window, lo + 1, True, -1, timeout) if lo < n else None
                    return found[:3] if found is not None else None
                lo += 1
            if t > done:
                done = t
            f = trigger(window, f.start() + 1)
        return None

    return find


def _nothing(window: str, start: int, timeout: float | None) -> None:
    """The finder of a delimiter that matches nothing past offset 0."""
    return None
