"""False partial matches behind a lookbehind: `regex` holds text that no match can start (issue 19).

`regex` reports a partial match for a pattern whose alternative starts with a lookbehind even where that
lookbehind fails, once enough text precedes the position: Gemma 4's
``(?<=<channel\\|>\\s{0,2})call:(?P<name>[^{<\\s]+)(?=\\{)`` partially matches the ``c`` ending ``we compute the c``
(and ``cx``, ``call:x{``: anything from there), so a chunk ending with ``c`` was held until the next one (a second
scan, and the text streamed a chunk late). A lookbehind alone, matched without partial matching at that position,
is answered right.

`false_partial` reads a delimiter's top-level alternatives: those that start with a positive lookbehind (each with
the fixed texts its matches begin with, `regex_leads._partial_leads`) and the others (their fixed texts). A partial
match at `i` is false when the text from `i` fits no fixed text of an alternative without a lookbehind and, for each
alternative with one whose fixed texts it fits, that lookbehind does not match at `i`: then no match can start at
`i`, whatever text follows. Where any of this is unknown (an alternative without fixed texts, a lookbehind that is
not a plain group at the start), there is no test and partial matches are taken as `regex` reports them.
`tests/test_behind_guard.py` checks it against `regex` matches of the completed texts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import regex

from .regex_leads import _fits_leads, _partial_leads


def _group_end(source: str, start: int) -> int | None:
    """The index just past the `)` closing the group that opens at `source[start]` (escapes and character classes
    read through), or None if it does not close."""
    depth = 0
    i = start
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(source, i)
            if i < 0:
                return None
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _class_end(source: str, start: int) -> int:
    """The index just past the `]` closing the character class that opens at `source[start]`, or -1."""
    i = start + 1
    n = len(source)
    if i < n and source[i] == "^":
        i += 1
    if i < n and source[i] == "]":
        i += 1  # (a `]` first in a class is a literal)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and source.startswith("[:", i):  # (a POSIX class, `[:alpha:]`)
            j = source.find(":]", i + 2)
            if j < 0:
                return -1
            i = j + 2
            continue
        if c == "]":
            return i + 1
        i += 1
    return -1


def top_alternatives(source: str) -> list[str] | None:
    """The top-level alternatives of regex `source`, as source texts (one if it has no `|` at the top), or None if
    it does not read (an unclosed group or class, a stray `)`)."""
    alts: list[str] = []
    depth = 0
    last = 0
    i = 0
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(source, i)
            if i < 0:
                return None
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif c == "|" and depth == 0:
            alts.append(source[last:i])
            last = i + 1
        i += 1
    if depth:
        return None
    alts.append(source[last:])
    return alts


def false_partial(source: str, flags: int) -> Callable[[str, int, Any], bool] | None:
    """For a regex delimiter `source` (compiled with `flags`) with an alternative that starts with a positive
    lookbehind: `test(window, i, timeout)`, True where a partial match `regex` reports at `i` is false (see the
    module docstring); None where there is no such alternative or the test cannot be made."""
    alts = top_alternatives(source)
    if alts is None or not any(a.startswith("(?<=") for a in alts):
        return None
    free: list[str] = []
    guards: list[tuple[tuple[str, ...], Any]] = []
    for alt in alts:
        leads = _partial_leads(alt) if alt else None
        if leads is None:
            return None
        if alt.startswith("(?<="):
            end = _group_end(alt, 0)
            if end is None:
                return None
            try:
                behind = regex.compile(alt[:end], flags)
            except regex.error:
                return None
            guards.append((leads, behind))
        else:
            free.extend(leads)
    unguarded = tuple(free)
    joined = "\x00" + "\x00".join(unguarded) if unguarded else None
    checks = tuple(guards)

    def test(window: str, i: int, timeout: Any) -> bool:
        tail = window[i:]  # (`_fits_leads` in two C-level tests: a beginning of a lead, or a lead and more)
        if joined is not None and ("\x00" + tail in joined or tail.startswith(unguarded)):
            return False
        for leads, behind in checks:
            if _fits_leads(window, i, leads) and behind.match(window, i, None, None, False, timeout) is not None:
                return False
        return True

    return test
