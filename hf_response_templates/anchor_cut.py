"""The start anchor's last match in a prompt, searched from the prompt's end (issue 19).

`ResponseTemplate.cut_prefix` keeps the part of the prompt after the start anchor's last match. A regex anchor that
is not a few fixed texts (`template._anchor_texts`) was read by iterating over every match from the prompt's start:
one C-level scan of the whole prompt per call, most of Granite 3.3's prologue (`<\\|start_of_role\\|>assistant
[^<]*<\\|end_of_role\\|>`: ~10 µs of a ~40 µs one-shot parse on a 2,500-character prompt, where the floor's
`str.rfind` reads only the prompt's end).

Where every match starts with a fixed text (its lead) that cannot occur inside a match past its first character
(`anchor_lead`), the matches found left to right are exactly the lead's occurrences where the regex matches (no
match hides a later one), so the last match is the one at the last such occurrence: `last_cut` finds the lead
with `str.rfind` from the end and matches there, going back an occurrence at a time until one matches.
`tests/test_anchor_cut.py` compares it with the left-to-right scan.
"""

from __future__ import annotations

from typing import Any

from .regex_leads import stdlib_equivalent
from .regex_safety import _C, strict_parse

__all__ = ["anchor_lead", "last_cut"]


def _excludes(op: Any, av: Any, c: int) -> bool:
    """Whether the one-character item `(op, av)` of a parsed regex cannot match the character of code `c`
    (False where that is not known: a category, anything else)."""
    if op is _C.LITERAL:
        return av != c
    if op is _C.NOT_LITERAL:
        return av == c
    if op is _C.IN:
        negate = False
        hit = False
        for kind, x in av:
            if kind is _C.NEGATE:
                negate = True
            elif kind is _C.LITERAL:
                hit = hit or x == c
            elif kind is _C.RANGE:
                hit = hit or x[0] <= c <= x[1]
            else:  # (a category: `\w`, `\s`, ...)
                return False
        return hit if negate else not hit
    return False


def anchor_lead(source: str) -> str | None:
    """The fixed text every match of regex `source` starts with, when no occurrence of it can start inside a
    match past its first character; else None. Proven on the parsed regex for a flat sequence of literals and
    (repeated) one-character classes: each class must exclude the lead's first character, and each run of
    literals must differ from the lead wherever that character is in it (the lead's own run from its second
    character on). None for anything else (groups, alternations, assertions, `.`), or when the standard
    library's `re` would read `source` differently (`regex_leads.stdlib_equivalent`)."""
    parsed = strict_parse(source)
    if parsed is None or stdlib_equivalent(source) is None:
        return None
    items = list(parsed)
    runs = [""]
    for op, av in items:
        if op is _C.LITERAL:
            runs[-1] += chr(av)
            continue
        if not runs[0]:
            return None  # (no fixed text first)
        c = ord(runs[0][0])
        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and len(av[2]) == 1:
            op, av = av[2][0]
        if not _excludes(op, av, c):
            return None
        runs.append("")
    lead = runs[0]
    if not lead:
        return None
    for k, run in enumerate(runs):
        for p in range(1 if k == 0 else 0, len(run)):
            if run[p] == lead[0] and (run[p:].startswith(lead) or lead.startswith(run[p:])):
                return None  # (the lead may start there)
    return lead


def last_cut(prefix: str, lead: str, match: Any) -> str:
    """The part of `prefix` after the last match of the anchor whose `anchor_lead` is `lead` (`match`: its
    `re.Pattern.match`), or `prefix` if there is none (`ResponseTemplate.cut_prefix`)."""
    i = prefix.rfind(lead)
    back = len(lead) - 1
    while i >= 0:
        m = match(prefix, i)
        if m is not None:
            return prefix[m.end() :]
        i = prefix.rfind(lead, 0, i + back)  # (the occurrence before: one that starts before `i`)
    return prefix
