"""A static check that a template regex cannot backtrack catastrophically, and the tolerant parse it uses.

Why: every `regex` call made with a timeout reads the CPU clock twice (two system calls, several times the
cost of a short match). A pattern this check bounds runs without the timeout on texts short enough for the
bound to be small (`Delimiter.untimed_match` / `untimed_search`); a pattern that fails it keeps
`regex_timeout` everywhere, so a hostile template still times out cleanly.

What the check proves: `backtracking_degree(source)` is `d` when one match attempt at one position costs
O(n**d) steps in the length `n` of the text it may look at (a search, one attempt per position, at most
O(n**(d+1))). It counts chains of unbounded loops that can compete for the same characters (`.*a.*b`: the
second `.*` retries everything for each end of the first, d = 2) and answers None (unbounded: exponential, or
a degree above `MAX_DEGREE`) for

* a repeat whose body can match the empty string (`(a*)*`, `(a?){20}`);
* an unbounded repeat whose iterations can share characters with a loop inside its body: the body written
  twice has two loops over the same characters (`(a+)+`, `(\\w+\\s?)*`);
* a counted repeat that chains more loops than `MAX_DEGREE` allows (`(.*a){12}`: degree 12);
* an alternation with overlapping first characters inside a repeat (`(a|a)*`, `(a|ab)*`, `(a|a){30}`);
* a lookaround holding a loop inside a repeat (`(?:(?=\\w+x)\\w)*`);
* a back reference or a conditional group, case-insensitive matching, or syntax the standard library's
  parser does not read even after `tolerant_parse`'s rewrites: unknown counts as unbounded.

Conservative by construction: character sets are over-approximated (`\\w`, `\\d`: the ASCII ones plus every
non-ASCII character that is not a space; `\\s`: exactly `regex`'s set),
so an overlap is never missed, and two loops count as competing whenever the characters between them could
all be taken by the first.
"""

from __future__ import annotations

import re as _stdre
import warnings
from typing import Any

try:
    from re import _constants as _C
    from re import _parser as _P
except ImportError:  # Python < 3.11
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _P  # type: ignore[no-redef]

__all__ = ["MAX_DEGREE", "backtracking_degree", "bare_braces", "strict_parse", "tolerant_parse", "unsafe_reason"]

#: The highest per-attempt degree `backtracking_degree` accepts (2: quadratic per attempt).
MAX_DEGREE = 2

#: A counted repeat with more than this many optional iterations counts as a loop (`a{0,2}` does not).
_SMALL_REPEAT = 16

_MAXCODE = 0x10FFFF
_REPEATS = tuple(op for op in (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", None)) if op)
_ATOMIC = getattr(_C, "ATOMIC_GROUP", object())
_MAXREPEAT = _C.MAXREPEAT

# ---------------------------------------------------------------- character sets: sorted disjoint ranges

CharSet = tuple  # tuple[tuple[int, int], ...]
_EMPTY: CharSet = ()
_ALL: CharSet = ((0, _MAXCODE),)


def _norm(ranges: list) -> CharSet:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def _union(a: CharSet, b: CharSet) -> CharSet:
    return a if not b else b if not a else _norm([*a, *b])


def _inter(a: CharSet, b: CharSet) -> CharSet:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _negate(a: CharSet) -> CharSet:
    out, at = [], 0
    for lo, hi in a:
        if lo > at:
            out.append((at, lo - 1))
        at = hi + 1
    if at <= _MAXCODE:
        out.append((at, _MAXCODE))
    return tuple(out)


# `\s` as `regex` reads it (Unicode White_Space, unchanged since Unicode 6.3): the engine these patterns run
# in. (`re` adds \x1c-\x1f; where the engine runs a pattern with `re` instead, `\s` is written out as this
# set, see `regex_leads.stdlib_equivalent`.)
_SPACE = _norm([(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)])
_ASCII_DIGIT: CharSet = ((0x30, 0x39),)
_ASCII_WORD = _norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
_NON_ASCII_NON_SPACE = _inter(((0x80, _MAXCODE),), _negate(_SPACE))
_ASCII: CharSet = ((0, 0x7F),)
# (over-approximation, under-approximation) of each class escape, in either engine and any Unicode version
_CATEGORIES = {
    _C.CATEGORY_SPACE: (_SPACE, _SPACE),
    _C.CATEGORY_NOT_SPACE: (_negate(_SPACE), _negate(_SPACE)),
    _C.CATEGORY_DIGIT: (_union(_ASCII_DIGIT, _NON_ASCII_NON_SPACE), _ASCII_DIGIT),
    _C.CATEGORY_NOT_DIGIT: (_negate(_ASCII_DIGIT), _inter(_ASCII, _negate(_ASCII_DIGIT))),
    _C.CATEGORY_WORD: (_union(_ASCII_WORD, _NON_ASCII_NON_SPACE), _ASCII_WORD),
    _C.CATEGORY_NOT_WORD: (_negate(_ASCII_WORD), _inter(_ASCII, _negate(_ASCII_WORD))),
}


class _Unbounded(Exception):
    """The pattern may backtrack without a polynomial bound of degree <= MAX_DEGREE (the message says why)."""


def _class(items: list) -> CharSet:
    """The characters an `IN` class can match (over-approximated)."""
    negate = bool(items) and items[0][0] is _C.NEGATE
    ranges: list = []
    for kind, value in items[1:] if negate else items:
        if kind is _C.LITERAL:
            ranges.append((value, value))
        elif kind is _C.RANGE:
            ranges.append(value)
        elif kind is _C.CATEGORY and value in _CATEGORIES:
            over, under = _CATEGORIES[value]
            ranges.extend(under if negate else over)  # a negated class: subtract at most what surely is in
        else:
            raise _Unbounded(f"unknown class item {kind} {value}")
    members = _norm(ranges)
    return _negate(members) if negate else members


def _single(op: Any, av: Any) -> CharSet | None:
    """The characters a one-character item matches, or None if `op` is not one."""
    if op is _C.LITERAL:
        return ((av, av),)
    if op is _C.NOT_LITERAL:
        return _negate(((av, av),))
    if op is _C.ANY:
        return _ALL
    if op is _C.IN:
        return _class(av)
    return None


# ---------------------------------------------------------------- structure: first characters, all characters


def _first_seq(items: Any) -> tuple[CharSet, bool]:
    """(characters a match of the sequence can start with, whether it can match the empty string)."""
    first: CharSet = _EMPTY
    for op, av in items:
        f, nullable = _first_item(op, av)
        first = _union(first, f)
        if not nullable:
            return first, False
    return first, True


def _first_item(op: Any, av: Any) -> tuple[CharSet, bool]:
    one = _single(op, av)
    if one is not None:
        return one, False
    if op is _C.SUBPATTERN:
        return _first_seq(av[3])
    if op is _ATOMIC:
        return _first_seq(av)
    if op is _C.BRANCH:
        first, nullable = _EMPTY, False
        for alt in av[1]:
            f, e = _first_seq(alt)
            first, nullable = _union(first, f), nullable or e
        return first, nullable
    if op in _REPEATS:
        f, e = _first_seq(av[2])
        return f, e or av[0] == 0
    if op in (_C.AT, _C.ASSERT, _C.ASSERT_NOT):
        return _EMPTY, True
    raise _Unbounded(f"unsupported construct {op}")


def _chars_seq(items: Any) -> CharSet:
    """Every character a match of the sequence can consume (over-approximated)."""
    out: CharSet = _EMPTY
    for op, av in items:
        one = _single(op, av)
        if one is not None:
            out = _union(out, one)
        elif op is _C.SUBPATTERN:
            out = _union(out, _chars_seq(av[3]))
        elif op is _ATOMIC:
            out = _union(out, _chars_seq(av))
        elif op is _C.BRANCH:
            for alt in av[1]:
                out = _union(out, _chars_seq(alt))
        elif op in _REPEATS:
            out = _union(out, _chars_seq(av[2]))
        elif op in (_C.AT, _C.ASSERT, _C.ASSERT_NOT):
            pass
        else:
            raise _Unbounded(f"unsupported construct {op}")
    return out


def _has_loop(items: Any) -> bool:
    """Whether the sequence holds an unbounded (or widely counted) repeat, lookarounds included."""
    for op, av in items:
        if op in _REPEATS:
            if _is_loop(av) or _has_loop(av[2]):
                return True
        elif op is _C.SUBPATTERN:
            if _has_loop(av[3]):
                return True
        elif op is _ATOMIC:
            if _has_loop(av):
                return True
        elif op is _C.BRANCH:
            if any(_has_loop(alt) for alt in av[1]):
                return True
        elif op in (_C.ASSERT, _C.ASSERT_NOT):
            if _has_loop(av[1]):
                return True
    return False


def _is_loop(av: Any) -> bool:
    low, high, _body = av
    return high is _MAXREPEAT or high == _MAXREPEAT or high - low > _SMALL_REPEAT


# ---------------------------------------------------------------- the flow: live loops and their depth

Live = dict  # depth -> CharSet: characters an earlier chain of `depth` loops may still be consuming here


def _live_hit(live: Live, chars: CharSet) -> int:
    """The deepest chain in `live` that can take a character of `chars` (0: none)."""
    return max((d for d, cs in live.items() if _inter(cs, chars)), default=0)


def _live_inter(live: Live, chars: CharSet) -> Live:
    out = {}
    for d, cs in live.items():
        x = _inter(cs, chars)
        if x:
            out[d] = x
    return out


def _live_union(a: Live, b: Live) -> Live:
    out = dict(a)
    for d, cs in b.items():
        out[d] = _union(out.get(d, _EMPTY), cs)
    return out


class _Flow:
    def __init__(self) -> None:
        self.degree = 0

    def _loop(self, depth: int) -> None:
        if depth > MAX_DEGREE:
            raise _Unbounded(f"{depth} unbounded repeats can compete for the same characters (a match attempt "
                             f"costs O(n^{depth}))")
        self.degree = max(self.degree, depth)

    def seq(self, items: Any, live: Live, in_loop: bool) -> Live:
        for op, av in items:
            live = self.item(op, av, live, in_loop)
        return live

    def item(self, op: Any, av: Any, live: Live, in_loop: bool) -> Live:
        one = _single(op, av)
        if one is not None:
            return _live_inter(live, one)
        if op is _C.SUBPATTERN:
            if av[1] & _stdre.IGNORECASE:
                raise _Unbounded("case-insensitive group")
            return self.seq(av[3], live, in_loop)
        if op is _ATOMIC:
            return self.seq(av, live, in_loop)
        if op is _C.AT:
            return live
        if op in (_C.ASSERT, _C.ASSERT_NOT):
            body = av[1]
            if in_loop and _has_loop(body):
                raise _Unbounded("a lookaround holding an unbounded repeat is inside a repeat")
            self.seq(body, live, in_loop)  # its loops compete with the live ones; it consumes nothing
            return live
        if op is _C.BRANCH:
            alts = av[1]
            if in_loop:
                firsts = [_first_seq(alt) for alt in alts]
                for i, (fi, ei) in enumerate(firsts):
                    for fj, ej in firsts[i + 1:]:
                        if ei or ej or _inter(fi, fj):
                            raise _Unbounded("alternatives that can start with the same character are inside a repeat")
            out: Live = {}
            for alt in alts:
                out = _live_union(out, self.seq(alt, live, in_loop))
            return out
        if op in _REPEATS:
            return self.repeat(av, live, in_loop)
        if op in (_C.GROUPREF, _C.GROUPREF_EXISTS) or op is getattr(_C, "GROUPREF_IGNORE", None):
            raise _Unbounded("back reference or conditional group")
        raise _Unbounded(f"unsupported construct {op}")

    def repeat(self, av: Any, live: Live, in_loop: bool) -> Live:
        low, high, body = av
        first, nullable = _first_seq(body)
        if high > 1 and nullable:
            raise _Unbounded("a repeated group can match the empty string")
        if not _is_loop(av):  # a counted repeat (`x{0,2}`, `(.*a){12}`): written out, up to _UNROLL times
            out: Live = live
            skipped: Live = {}  # where the optional iterations not taken leave off
            for i in range(min(high, _UNROLL)):
                if i >= low:
                    skipped = _live_union(skipped, out)
                out = self.seq(body, out, in_loop or high > 1)  # `(a|a){30}`: 2**30 ways, as in a loop
            return _live_union(out, skipped)
        depth = _live_hit(live, first) + 1
        self._loop(depth)
        # Iterations must not compete with each other: what one iteration's own loops may still be consuming
        # where it ends can neither start the next iteration nor feed a loop inside it.
        own = _Flow().seq(body, {}, True)
        if _live_hit(own, first):
            raise _Unbounded("an unbounded repeat's iterations can share characters with a loop inside it")
        if _chained(body, own):
            raise _Unbounded("an unbounded repeat's iterations can share characters with a loop inside it")
        out = _live_union(self.seq(body, live, True), {depth: _chars_seq(body)})
        return _live_union(out, live) if low == 0 else out


def _chained(body: Any, live: Live) -> bool:
    """Whether a loop inside `body` competes with the loops in `live` (a chain of two or more)."""
    flow = _Flow()
    flow.seq(body, live, True)
    return flow.degree > 1


#: How many iterations of a counted repeat the check writes out (more cannot chain more loops than that).
_UNROLL = 2 * MAX_DEGREE + 4


# ---------------------------------------------------------------- parsing


_COUNTED_REPEAT = _stdre.compile(r"\{\d*(?:,\d*)?\}")


def bare_braces(source: str) -> bool:
    """Whether `source` has a `{` outside a class and not escaped that does not start a counted repeat
    (`x{e<=1}` is fuzzy matching for `regex`, literal text for `re`, `\\p{L}` a property). An escaped
    brace (`\\{`) and a brace in a class (`[^{<]`) are literals in both engines."""
    i, n = 0, len(source)
    in_class = False
    while i < n:
        c = source[i]
        if c == "\\":
            if i + 1 < n and source[i + 1] in "pPNxuUg" and source.startswith("{", i + 2):
                return True  # a braced escape: `regex`-only in part, leave it to the careful route
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            elif c == "[" and source.startswith(":", i + 1):
                return True  # a POSIX class
        elif c == "[":
            in_class = True
            j = i + 1
            if source.startswith("^", j):
                j += 1
            if source.startswith("]", j):  # a leading `]` is a literal
                j += 1
            i = j
            continue
        elif c == "{" and (i == 0 or not _COUNTED_REPEAT.match(source, i) or source[i - 1] in "(|"):
            return True
        i += 1
    return False


_NAMED_GROUP = _stdre.compile(r"\(\?P<(\w+)>")


def strict_parse(source: str) -> Any | None:
    """`source` parsed by the standard library's regex parser, or None where that parser may read it
    differently from `regex` or does not read it: a bare `{` that is not a counted repeat, a POSIX class,
    a parse error or warning (`regex`-only syntax, a group name used twice), or case-insensitive matching
    (`regex` folds more characters)."""
    if bare_braces(source):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = _P.parse(source)
    except Exception:
        return None
    if parsed.state.flags & _stdre.IGNORECASE:
        return None
    return parsed


def tolerant_parse(source: str) -> Any | None:
    """`strict_parse` for structural questions, more tolerant: group names are renamed first (`regex`
    allows one name in several alternatives, gpt-oss does that; names change no structure). None with a
    named back reference (renaming would break it)."""
    if "(?P=" in source:
        return None
    count = iter(range(1 << 30))
    return strict_parse(_NAMED_GROUP.sub(lambda m: f"(?P<g{next(count)}>", source))


# ---------------------------------------------------------------- the public check


def _degree(source: str) -> int:
    parsed = tolerant_parse(source)
    if parsed is None:
        raise _Unbounded("the standard library's parser does not read it the way `regex` does")
    flow = _Flow()
    flow.seq(parsed, {}, False)
    return flow.degree


def backtracking_degree(source: str) -> int | None:
    """`d` such that one match attempt of regex `source` costs O(n**d) steps for a text of length n (0: no
    loop at all), or None if no such bound <= `MAX_DEGREE` is proven (possibly catastrophic)."""
    try:
        return _degree(source)
    except (_Unbounded, RecursionError):
        return None


def unsafe_reason(source: str) -> str | None:
    """Why `backtracking_degree(source)` is None (a sentence), or None when the pattern is bounded."""
    try:
        _degree(source)
    except _Unbounded as e:
        return str(e)
    except RecursionError:
        return "too deeply nested to analyse"
    return None
