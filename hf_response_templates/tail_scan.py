"""The one-shot plan's close search for a regex that is a run of a few characters then a fixed tail (issue 19).

FunctionGemma's tool-call close `\\}\\s*<end_function_call>` and InternLM2's `\\s*\\}\\s*<\\|action_end\\|>` are read
by `lead_scan.LeadScan` (a `str.find` of `}`, the regex tried there) and `trigger_scan.TriggerScan` (a trigger
search, every position of a run of spaces tried) through a method call, its finds list and its checks: ~60-90
Python opcodes per tool call. Their every match is characters of a small set (`}` and the spaces) and then a
fixed text (the tail) none of those characters starts, and that shape gives the answer more directly:

* no match can hold a tail's first character before its tail; so, with `k` the first find of the tail at or
  after the position, every match that starts at or before `k` has its tail at `k` (one with its tail later
  would hold the character at `k`), and a match starting after `k` is later;
* such a match is made of the set's characters up to `k`, so it starts no earlier than the run of them that
  ends at `k` (walked back from `k`, no further than the position nor than `MAX_DELIMITER_LENGTH` allows).

`plan._fast_run` reads such a close itself (close kind 10, `tail_close`): it finds the tail, strips the run
back from it (`str.rstrip` of the set's characters, no further than the position nor than `MAX_DELIMITER_LENGTH`
allows) and searches the regex from the run's start: the first position that matches is the earliest match,
which `Watch.scan_end` gives when it is no longer than `MAX_DELIMITER_LENGTH` (none is zero-width). A regex
that ends with its tail is searched in the text up to the tail's end (`search(window, lo, end)`: every match
from the run ends there); one with more after its tail (DeepSeek-R1's close, the tail then an alternation of
what may follow) in the whole text. Anything else (no match, a longer one, a search that would be timed) goes
to the watch's own scanner, from the same position.
`tests/test_tail_scan.py` compares it with `Watch.scan_end`.
"""

from __future__ import annotations

import re as _stdre
from functools import lru_cache
from typing import Any

import regex

from .delimiters import MAX_DELIMITER_LENGTH
from .regex_safety import _C, strict_parse

__all__ = ["tail_close"]


@lru_cache(maxsize=1)
def _spaces() -> str:
    """Every character `\\s` matches with either engine (`re`'s adds `\\x1c`-`\\x1f`); none is past U+3000."""
    chars = "".join(map(chr, range(0x3001)))
    return "".join(sorted(set(_stdre.findall(r"\s", chars)) | set(regex.findall(r"\s", chars))))


def _item_chars(op: Any, av: Any) -> str | None:
    """The characters one item of a parsed regex can match (a literal, a class of literals, small ranges and
    `\\s`), or None for anything else."""
    if op is _C.LITERAL:
        return chr(av)
    if op is not _C.IN:
        return None
    out = []
    for kind, arg in av:
        if kind is _C.LITERAL:
            out.append(chr(arg))
        elif kind is _C.RANGE and arg[1] - arg[0] < 256:
            out.extend(map(chr, range(arg[0], arg[1] + 1)))
        elif kind is _C.CATEGORY and arg is _C.CATEGORY_SPACE:
            out.append(_spaces())
        else:  # (a negated class, `\\d`, a large range: not a small set)
            return None
    return "".join(out)


def tail_shape(source: str) -> tuple[str, str, bool] | None:
    """`(chars, tail, bounded)` of regex `source` when each of its matches is characters of `chars` (a run of
    items, each a literal, a small class or `\\s`, repeated or not) then the fixed text `tail`, then (not
    `bounded`) whatever the rest of the pattern matches (DeepSeek-R1's `\\s*```\\s*<｜tool▁call▁end｜>(?:...)`), and no
    character of `chars` is the tail's first; else None (a top-level alternation, a group or a lookaround
    before the tail, an anchor, ...)."""
    parsed = strict_parse(source)
    if parsed is None:
        return None
    items = list(parsed)
    lead = 0  # the leading items of single characters: the run, then the tail's literals
    chars = []
    for op, av in items:
        if op is _C.MAX_REPEAT or op is _C.MIN_REPEAT:
            sub = list(av[2])
            if len(sub) != 1:
                break
            op, av = sub[0]
        got = _item_chars(op, av)
        if got is None:
            break
        chars.append(got)
        lead += 1
    tail = []
    while lead and items[lead - 1][0] is _C.LITERAL:
        lead -= 1
        tail.append(chr(items[lead][1]))
    if not tail or not lead:
        return None
    text = "".join(reversed(tail))
    run = "".join(sorted(set("".join(chars[:lead]))))
    if text[0] in run or len(text) > MAX_DELIMITER_LENGTH:
        return None
    return run, text, lead + len(tail) == len(items)


def tail_close(watch: Any, scanner: tuple[int, Any, Any]) -> tuple[int, Any, Any]:
    """A close watch's `plan_shape._scanner` answer, as close kind 10 where the watch is one regex of
    `tail_shape` (no captures, searched untimed on some text) and the plan reads it by a scanner with a finds
    slot (kind 2, the fallback): `(10, tail, (chars, fast search, untimed search span, delimiter, scanner, slot,
    bounded, ones))` (`_ones`)."""
    kind, scan, slot = scanner
    if kind != 2 or watch is None or len(watch.delimiters) != 1 or watch.lit_lookup:
        return scanner
    (d,) = watch.delimiters
    if d.literals is not None or d.group_slots or d.untimed_search < 0 or d not in watch.reusable \
            or d.pattern.flags & (regex.IGNORECASE | regex.VERBOSE):
        return scanner
    shape = tail_shape(d.source)
    if shape is None:
        return scanner
    chars, tail, bounded = shape
    return 10, tail, (chars, d.fast.search, d.untimed_search, d, scan, slot, bounded, _ones(d, chars, tail, bounded))


def _ones(d: Any, chars: str, tail: str, bounded: bool) -> str:
    """The characters `c` of `chars` for which `c + tail` is a match of bounded regex `d` (FunctionGemma's `}`):
    where the run stripped back from the tail is one of them alone, the search from it would match there (a bounded
    regex is the run's items then the tail, nothing around them, so a match there reads only those characters), and
    `plan._fast_run` takes that match without the search. "" where the regex is not bounded or that text is past its
    untimed span (the search then decides, as for any run)."""
    if not bounded or len(tail) + 1 > d.untimed_search:
        return ""
    return "".join(c for c in chars if (m := d.fast.match(c + tail)) is not None and m.end() == len(tail) + 1)
