"""What a delimiter regex's structure proves about where its matches can start.

The prefilters of `delimiters.Watch` rest on these facts, worked out once per pattern from its parse by the
standard library's `re` (`stdlib_parse`, only where `re` reads the pattern as `regex` does):

* the characters a match can start with (`_start_chars`, `_first_chars`), through lookarounds;
* the fixed texts every match starts with (`_literal_leads`, `_partial_leads`, `_late_leads`, `_sure_leads`),
  and for patterns led by a run of spaces the texts after that run (`_spaced_leads`, `_spaced_prefilter`);
* lookbehind guards (`_guard_chars`, `_after_guard`), whether a pattern needs context before the search
  position (`_needs_context`), anchors (`_FirstWalk`, `_multiline`), match widths (`_widths`);
* `stdlib_equivalent`: the `re` twin of a pattern, where `re` matches exactly what `regex` does.

Everything here is pure and cached per pattern source: no state, no matching of model text.
"""

from __future__ import annotations

import re as _stdre
from functools import lru_cache
from typing import Any

import regex

from .regex_safety import _SPACE as _regex_space_ranges
from .regex_safety import strict_parse, tolerant_parse

try:  # the standard library's regex parser's constants, to walk parsed patterns (`strict_parse`)
    from re import _constants as _sre_constants
except ImportError:  # Python < 3.11
    import sre_constants as _sre_constants  # type: ignore[no-redef]
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .delimiters import Delimiter


_REPEATS = tuple(
    op
    for op in (
        _sre_constants.MAX_REPEAT,
        _sre_constants.MIN_REPEAT,
        getattr(_sre_constants, "POSSESSIVE_REPEAT", None),
    )
    if op is not None
)


_ATOMIC_GROUP = getattr(_sre_constants, "ATOMIC_GROUP", object())


#: `Delimiter.anchored`: no alternative, some, or every alternative of a regex starts with `^` / `\A`.
ANCHOR_NONE, ANCHOR_SOME, ANCHOR_ALL = 0, 1, 2


def _nested_prefixes(literal: str) -> str:
    """A regex that, followed by `\\Z`, matches exactly the proper, non-empty prefixes of `literal` that end
    the text.

    Flat, so that a literal of any allowed length compiles (nesting `(?:b(?:c)?)?` one group per
    character overflowed the `re` parser's recursion from about 495 characters): every character after
    the first is `(?:c|\\Z)`, so once the text has ended the rest matches nothing, and before that each
    character must be the literal's.
    """
    parts = [_stdre.escape(c) for c in literal[:-1]]
    return parts[0] + "".join(f"(?:{p}|\\Z)" for p in parts[1:])


def stdlib_parse(source: str) -> Any | None:
    """Regex `source` as parsed by the standard library's `re` parser, for structural questions (first
    characters, leading literal text, lookbehinds, which groups always take part); None when `re` may
    read it differently from `regex`: a parse error (`regex`-only syntax), a warning (a "[[:alpha:]]"
    POSIX class is a nested set for `regex`, a list of characters for `re`), a `{` outside a class and not
    escaped that is not a plain counted repeat (`a{e<=1}` is fuzzy matching for `regex`, literal text for
    `re`; `\\{` and `[^{]` are literal braces for both), or case-insensitive matching (`regex` folds more
    characters). Group names must be unique here (`regex_safety.tolerant_parse` renames them)."""
    return strict_parse(source)


def always_groups(pattern: Any) -> frozenset[str]:
    """The names of compiled regex `pattern`'s named groups that take part in every match: each written at the
    pattern's top level or inside a group that is (not inside an alternative, an optional or repeated part, or a
    lookaround), read from `stdlib_parse`; none where that parse is unknown or numbers the groups otherwise."""
    parsed = stdlib_parse(pattern.pattern)
    if parsed is None or parsed.state.groups != pattern.groups + 1:
        return frozenset()
    top: set[int] = set()
    stack = [parsed]
    while stack:
        for op, av in stack.pop():
            if op is _sre_constants.SUBPATTERN:
                if av[0] is not None:
                    top.add(av[0])
                stack.append(av[3])
    return frozenset(name for name, i in pattern.groupindex.items() if i in top)


# `\s` as `regex` reads it, written out for `re` (whose `\s` also takes \x1c-\x1f): inside a class.
_REGEX_SPACE = "\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"


#: An inline flag group that sets ASCII or LOCALE matching (`(?a)`, `(?aL-s:...)`), under which `\d` reads otherwise
#: (a false find, `\(?a` being no such group, only declines `digits`)
_ASCII_FLAGS = _stdre.compile(r"\(\?[a-zA-Z]*[aL]")


@lru_cache(maxsize=1)
def regex_digits() -> str:
    """`\\d` as `regex` reads it in a pattern of a `str` (Unicode, no ASCII flag), written out for `re` (whose `\\d`
    follows Python's own, older or newer, Unicode tables): the ranges of every code point it matches, inside a class.
    Found once by `regex` itself, one search over a text of every code point (~20-30 ms, made by slices of
    UTF-32 bytes: a loop of `chr` is ~30x slower), so it is what the installed `regex` matches, whatever its
    Unicode version."""
    n = 0x110000
    raw = bytearray(4 * n)  # code point k, little-endian, at 4 * k
    raw[0::4] = bytes(range(256)) * (n // 256)
    raw[1::4] = b"".join(bytes((b,)) * 256 for b in range(256)) * (n // 65536)
    raw[2::4] = b"".join(bytes((p,)) * 65536 for p in range(n // 65536))
    # (the surrogates apart: UTF-32 does not decode them)
    every = (
        raw[: 0xD800 * 4].decode("utf-32-le")
        + "".join(map(chr, range(0xD800, 0xE000)))
        + raw[0xE000 * 4 :].decode("utf-32-le")
    )
    return "".join(f"\\U{m.start():08x}-\\U{m.end() - 1:08x}" for m in regex.finditer(r"\d+", every))


@lru_cache(maxsize=1024)
def stdlib_equivalent(source: str, digits: bool = False) -> Any | None:
    """Regex `source` compiled by the standard library's `re` (DOTALL), when `re` matches exactly what
    `regex` does with it; else None.

    Only for patterns `stdlib_parse` reads (so no `regex`-only syntax, no case folding), whose class
    escapes are `\\s` alone (written out as `regex`'s set; `\\d`, `\\w`, `\\b` and their negations
    follow each module's own Unicode tables and are left to `regex`), or with `digits` `\\s` and `\\d`
    (`\\d` written out as `regex`'s set, `regex_digits`: made once, on the first pattern that has one, so
    only for the callers that match with the twin often, `Delimiter.fast`; not under an ASCII or LOCALE
    flag)."""
    if stdlib_parse(source) is None:
        return None
    if digits and _ASCII_FLAGS.search(source):
        digits = False
    out = []
    i, n = 0, len(source)
    in_class = False
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            e = source[i + 1]
            if e == "s":
                out.append(_REGEX_SPACE if in_class else f"[{_REGEX_SPACE}]")
            elif e == "d" and digits:
                out.append(regex_digits() if in_class else f"[{regex_digits()}]")
            elif e in "SdDwWbB":
                return None
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            j = i + 1
            if source.startswith("^", j):
                j += 1
            if source.startswith("]", j):
                j += 1
            out.append(source[i:j])
            i = j
            continue
        out.append(c)
        i += 1
    try:
        return _stdre.compile("".join(out), _stdre.DOTALL)
    except Exception:  # (a lookbehind `re` does not take, ...)
        return None


#: Give up on a prefilter whose set of first characters is larger than this (it would rarely skip).
_MAX_FIRST_CHARS = 40


def _first_chars(source: str) -> frozenset[str] | None:
    """The characters a non-empty match of regex `source` can start with past stream offset 0 (or where a
    zero-width match can be: `(?=<tool_call>)` needs a `<` there), or None if unknown. See `_start_chars`."""
    return _start_chars(source)[0]


@lru_cache(maxsize=1024)
def _start_chars(source: str) -> tuple[frozenset[str] | None, int]:
    """(`_first_chars`, `ANCHOR_*`: whether alternatives start with `^` / `\\A`).

    Found by walking the pattern as parsed by `regex_safety.tolerant_parse` (a group name used twice is
    fine; escaped and in-class braces are literals), conservatively: anything it does not parse
    (`regex`-only syntax), case-insensitive parts, `.`, negated classes and classes such as `\\s`, back
    references, conditionals, or a pattern that can match the empty string anywhere give None (no
    prefilter). A lookahead before anything is consumed gives the characters its own match starts with
    (the text at the match must start so); other assertions consume nothing, so they are skipped. An
    alternative that starts with `^` or `\\A` adds nothing: past offset 0 it cannot match (the engine
    leaves such delimiters out of the prefilter only then, see `Watch`).
    """
    parsed = tolerant_parse(source)
    if parsed is None:
        return None, ANCHOR_NONE
    walk = _FirstWalk(multiline=_multiline(source))
    try:
        chars, nullable = walk.sequence(parsed)
    except _Unknown:
        return None, ANCHOR_NONE
    anchored = ANCHOR_NONE if not walk.anchored else ANCHOR_ALL if not chars and not nullable else ANCHOR_SOME
    if nullable or len(chars) > _MAX_FIRST_CHARS:
        return None, anchored
    return frozenset(chars), anchored


@lru_cache(maxsize=1024)
def _guard_chars(source: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """`Delimiter.guard` of regex `source`: `(at, behind)` such that every match past stream offset 0 starts
    at a character of `at` or right after one of `behind`, or None if unknown.

    Per top-level alternative: the characters it can start with (`_start_chars`), or, when it starts with a
    lookbehind that cannot match the empty string and those are unknown, hold whitespace or are more, the
    characters that lookbehind's match can end with: `}` for llama4's `(?<=\\})\\s*;?\\s*(?=\\{\\s*"name")`,
    whose own first characters (`\\s`, `;`, `{`) are in nearly every chunk. An alternative anchored at `^` /
    `\\A` adds nothing (see `_start_chars`)."""
    alternatives = _top_alternatives(source)
    if alternatives is None:
        return None
    at: set[str] = set()
    behind: set[str] = set()
    try:
        for alternative in alternatives:
            walk = _FirstWalk(multiline=_multiline(source))
            try:
                chars: set[str] | None
                chars, nullable = walk.sequence(alternative)
                if nullable or len(chars) > _MAX_FIRST_CHARS:
                    chars = None
            except _Unknown:
                chars = None
            if chars is not None and walk.anchored and not chars:
                continue  # only at offset 0
            last = _lookbehind_ends(alternative)
            if last is not None and (chars is None or len(last) < len(chars) or chars & _SPACE_CHARS):
                behind |= last
            elif chars is None:
                return None
            else:
                at |= chars
    except _Unknown:
        return None
    return frozenset(at), frozenset(behind)


def _lookbehind_ends(items: Any) -> set[str] | None:
    """The characters the match of a lookbehind that `items` (a parsed alternative) starts with, before
    anything is consumed, can end with; None if there is none, or it may match the empty string, or unknown."""
    C = _sre_constants
    for op, av in items:
        if op is C.ASSERT and av[0] < 0:
            walk = _FirstWalk(reverse=True)
            try:
                chars, nullable = walk.sequence(av[1])
            except _Unknown:
                return None
            return None if nullable or not chars else chars
        if op not in (C.ASSERT, C.ASSERT_NOT):
            return None
    return None


def _widths(source: str) -> tuple[int, int] | None:
    """(shortest, longest) match of regex `source`, or None if unknown."""
    parsed = stdlib_parse(_GROUP_NAME.sub("(?:", source))
    return None if parsed is None else parsed.getwidth()


def _can_be_empty(source: str) -> bool:
    """Whether regex `source` can match the empty string somewhere (True when unsure)."""
    widths = _widths(source)
    return widths is None or widths[0] == 0


def _mixed_width(source: str) -> bool:
    """Whether regex `source` has both empty and non-empty matches (True when unsure)."""
    widths = _widths(source)
    return widths is None or (widths[0] == 0 < widths[1])


#: At most this many fixed texts for `_literal_leads` (more: a plain search is as cheap).
_MAX_LEADS = 6


def _partial_leads(source: str) -> tuple[str, ...] | None:
    """Fixed texts such that the text from the start of every match of regex `source` begins with one of
    them, reading through lookarounds (None if unknown): `("</think>", "<think>")` for
    `</think>|(?<=<think>\\s{0,4})(?=<think>)`. A lookbehind or negative lookahead constrains nothing
    ahead and is read past; a lookahead's own fixed texts are where the match's text begins.

    Streaming checks `regex`'s partial matches against them (`_fits_leads`): `regex` reports a partial
    match of `(?<=<think>\\s{0,4})(?=<think>)` at any `</x` after `<think>` (issue 19)."""
    return _literal_leads(source, lookaround=True)


def _fits_leads(window: str, start: int, leads: tuple[str, ...] | None) -> bool:
    """Whether `window[start:]` starts with one of `leads` or is a prefix of one (True without `leads`)."""
    if leads is None:
        return True
    for t in leads:
        if t.startswith(window[start : start + len(t)]):
            return True
    return False


def _literal_leads(source: str, lookaround: bool = False) -> tuple[str, ...] | None:
    """Fixed texts such that every match of regex `source` starts with one of them (None if unknown, or
    some match may start with no fixed text): `("<tool_call>", "<function=")` for
    `(?:<tool_call>\\s*<function=|<function=(?=...))...`, `("<x>", "<y>")` for `(?:<x>\\s*)?<y>`.

    Read from `regex_safety.tolerant_parse` (None when unsure): literal characters, groups, alternations
    and optional parts (`?`) at the start; any other item ends the fixed texts there. A text that starts
    with another one of the set is dropped (a match starting with it starts with the shorter one too)."""
    parsed = tolerant_parse(source)
    if parsed is None:
        return None
    try:
        found = _leads_of(parsed, lookaround)
    except _Unknown:
        return None
    texts = {t for t, _ in found}
    if not texts or "" in texts:
        return None
    return _shortest(texts)


def _shortest(texts: set[str]) -> tuple[str, ...]:
    """`texts` without those that start with another one of them (a match starting with such a text starts
    with the shorter one too), sorted."""
    kept: list[str] = []
    for t in sorted(texts, key=len):
        if not any(t.startswith(k) for k in kept):
            kept.append(t)
    return tuple(sorted(kept))


def _top_alternatives(source: str) -> list[Any] | None:
    """The top-level alternatives of regex `source`, each a parsed sequence (one if it has no `|` at the top);
    None if it does not parse (`regex_safety.tolerant_parse`)."""
    parsed = tolerant_parse(source)
    if parsed is None:
        return None
    items = list(parsed)
    return items[0][1][1] if len(items) == 1 and items[0][0] is _sre_constants.BRANCH else [items]


def _after_guard(delimiters: list[Delimiter]) -> Any | None:
    """`Watch.after_guard`: a `re` match, at the start of a text, of every way a (partial) match of one of
    `delimiters` past stream offset 0 can begin there (`_spaced_leads`: a run of its characters, then its fixed
    text, a proper beginning of that text ending the text, or only the run up to the end); None if unknown."""
    alternatives: list[str] = []
    for d in delimiters:
        forms = _spaced_leads(d.source)
        if not forms:
            return None
        for run, text in forms:
            lead = "[" + "".join(_stdre.escape(c) for c in sorted(run)) + "]*" if run else ""
            body = _stdre.escape(text)
            if len(text) > 1:
                body = "(?:" + body + "|" + _nested_prefixes(text) + r"\Z)"
            alternatives.append(lead + body)
            if run:
                alternatives.append(lead + r"\Z")
    return _stdre.compile("|".join(alternatives)).match if alternatives else None


def _hold_prefixes(delimiters: tuple[Delimiter, ...], texts: set[str]) -> frozenset[str]:
    """`Watch.hold_prefixes`: the proper beginnings of the delimiters' `sure_leads` that are none of `texts`."""
    sure = {t for d in delimiters for t in d.sure_leads}
    return frozenset(t[:k] for t in sure for k in range(1, len(t)) if t[:k] not in texts)


def _sure_holds(delimiters: tuple[Delimiter, ...]) -> dict[str, Delimiter | None]:
    """`Watch.sure_holds`: every proper beginning of the delimiters' `sure_leads` (whole fixed texts too, unlike
    `_hold_prefixes`: held from the scan position, a complete match there cannot commit before a partial one that
    starts at the same place) with the first regex delimiter it begins a sure lead of (None if only literals')."""
    holds: dict[str, Delimiter | None] = {}
    for d in delimiters:
        for t in d.sure_leads:
            for k in range(1, len(t)):
                if holds.get(t[:k]) is None:
                    holds[t[:k]] = d if d.literals is None else None
    return holds


@lru_cache(maxsize=1024)
def _late_leads(source: str) -> tuple[str, ...] | None:
    """`_partial_leads` of regex `source` leaving out its top-level alternatives that match only at stream
    offset 0 (`^` / `\\A` first, as `_guard_chars` reads them): `()` if every one does, None if unknown."""
    alternatives = _top_alternatives(source)
    if alternatives is None:
        return None
    texts: set[str] = set()
    try:
        multiline = _multiline(source)
        for alternative in alternatives:
            if _only_at_start(alternative, multiline):
                continue
            texts |= {t for t, _ in _leads_of(alternative, True)}
    except _Unknown:
        return None
    return None if "" in texts else _shortest(texts)


@lru_cache(maxsize=1024)
def _sure_leads(source: str) -> frozenset[str]:
    """`Delimiter.sure_leads` of regex `source`: the non-empty fixed texts of `_leads_of` reading through
    positive lookaheads only (`<|tool_call>` for Gemma 4's `<\\|tool_call>...|(?<=<channel\\|>\\s{0,2})call:...`,
    not `call:`, which a lookbehind guards). A proper beginning of one ends the window: the match that
    consumes (or looks ahead at) it runs into the window's end before any other assertion, a partial match."""
    parsed = tolerant_parse(source)
    if parsed is None:
        return frozenset()
    try:
        found = _leads_of(parsed, False, True)
    except _Unknown:
        return frozenset()
    return frozenset(t for t, _ in found if t)


def _leads_of(items: Any, lookaround: bool = False, ahead: bool = False) -> set[tuple[str, bool]]:
    """(fixed text, whether it is the whole match so far and more may follow) for a parsed sequence.
    `lookaround`: read through zero-width assertions (`_partial_leads`) instead of stopping there; `ahead`:
    read through positive lookaheads only."""
    C = _sre_constants
    out = {("", True)}
    for op, av in items:
        if not any(more for _, more in out):
            break
        if op is C.LITERAL:
            step = {(chr(av), True)}
        elif op is C.SUBPATTERN and not av[1] & _stdre.IGNORECASE:
            step = _leads_of(av[3], lookaround, ahead)
        elif op is C.BRANCH:
            step = set().union(*(_leads_of(alt, lookaround, ahead) for alt in av[1]))
        elif op in _REPEATS and av[0] == 0 and av[1] == 1:
            step = {("", True)} | _leads_of(av[2], lookaround, ahead)
        elif (lookaround or ahead) and op is C.ASSERT and av[0] >= 0:
            # the text ahead starts with the lookahead's fixed texts; what follows starts at the same place
            step = {(t, False) for t, _ in _leads_of(av[1], lookaround, ahead)}
        elif lookaround and (op is C.ASSERT or op is C.ASSERT_NOT or op is C.AT):
            step = {("", True)}  # a lookbehind, negative lookahead or anchor: zero width, read past it
        else:
            step = {("", False)}
        out = {(t + u, more2) if more else (t, False) for t, more in out for u, more2 in step}
        if len(out) > _MAX_LEADS:
            raise _Unknown
    return out


class _Unknown(Exception):
    pass


#: `_spaced_leads` keeps fixed texts at most this long (a prefix of a lead is a lead too: coarser, still sound).
_MAX_SPACED_TEXT = 8


#: At most this many (run, text) forms for `_spaced_leads` (more: no prefilter).
_MAX_SPACED_FORMS = 12


Form = tuple  # tuple[frozenset[str] | None, str]: (characters of a leading run, or None; the fixed text after it)


@lru_cache(maxsize=1024)
def _spaced_leads(source: str) -> frozenset[Form] | None:
    """How every match of regex `source` past stream offset 0 starts, for a prefilter that survives a leading
    `\\s*` (gpt-oss's `\\s*to=`, Llama 4's `\\s*<\\|eot\\|>`): `(run, text)` forms, each saying "a run of
    characters of `run` (maybe none; None: no run), then `text`". None if unknown (some match may start with
    no fixed text after its run, or a construct the walk does not read).

    Read from `regex_safety.tolerant_parse` as `_literal_leads` reads it (literals, groups, alternations,
    optional parts), plus: a repeat of one small character class (`\\s*`, `[ \\t]+`, `\\s{0,4}`) before any
    fixed text is the run; lookaheads give the text ahead (`(?=\\s*\\{)` is the form (spaces, "{")); other
    assertions are read past; an alternative that starts with `^` / `\\A` matches nothing past offset 0.

    Why it is enough: a match starting at `i` in a text either has its fixed text in it (so the text holds
    that text, or its first character), or runs into the text's end inside the run or the fixed text (so the
    text ends with a run character, or with a proper prefix of the fixed text). See `_spaced_prefilter`."""
    parsed = tolerant_parse(source)
    if parsed is None:
        return None
    try:
        found = _spaced_of(parsed)
    except _Unknown:
        return None
    forms = frozenset((run, text) for run, text, _more in found)
    if not forms or any(not text for _run, text in forms):
        return None
    return forms


def _spaced_of(items: Any) -> set[tuple[frozenset[str] | None, str, bool]]:
    """(run, fixed text, whether more fixed text may follow) for a parsed sequence (`_spaced_leads`)."""
    C = _sre_constants
    out: set[tuple[frozenset[str] | None, str, bool]] = {(None, "", True)}
    for op, av in items:
        if not any(more for _r, _t, more in out):
            break
        run_chars = _run_class(av) if op in _REPEATS else None
        if op is C.LITERAL:
            step = {(None, chr(av), True)}
        elif op is C.SUBPATTERN and not av[1] & _stdre.IGNORECASE:
            step = _spaced_of(av[3])
        elif op is C.BRANCH:
            step = set().union(*(_spaced_of(alt) for alt in av[1]))
        elif op in _REPEATS and av[0] == 0 and av[1] == 1:
            step = {(None, "", True)} | _spaced_of(av[2])
        elif run_chars is not None:
            step = {(run_chars, "", True)}
        elif op is C.ASSERT and av[0] >= 0:  # a lookahead: the text ahead starts as its match does
            step = {(run, text, False) for run, text, _more in _spaced_of(av[1])}
        elif op is C.AT and av in _START_ANCHORS:
            step = set()  # past offset 0, nothing matches on this path
        elif op is C.ASSERT or op is C.ASSERT_NOT or op is C.AT:
            step = {(None, "", True)}  # a lookbehind, negative lookahead or other anchor: zero width
        else:
            step = {(None, "", False)}
        new = set()
        for run, text, more in out:
            if not more:
                new.add((run, text, False))
                continue
            for run2, text2, more2 in step:
                if text and run2 is not None:  # a run after fixed text: the fixed text ends here
                    new.add((run, text, False))
                    continue
                lead = run if run2 is None else run2 if run is None else run | run2  # (runs in a row: one run)
                joined = text + text2
                new.add((lead, joined[:_MAX_SPACED_TEXT], more2 and len(joined) < _MAX_SPACED_TEXT))
        out = new
        if len(out) > _MAX_SPACED_FORMS:
            raise _Unknown
    return out


def _run_class(av: Any) -> frozenset[str] | None:
    """The characters of a repeat of one small character class (`\\s*`, `[ \\t]+`, `x{0,4}`), or None."""
    C = _sre_constants
    body = av[2]
    if len(body) != 1:
        return None
    op, value = body[0]
    if op is C.LITERAL:
        return frozenset(chr(value))
    chars = _small_class(value) if op is C.IN else None
    return None if chars is None else frozenset(chars)


def _small_class(items: Any) -> set[str] | None:
    """The characters of a parsed `IN` class of literals, narrow ranges and `\\s` (`regex`'s: 25
    characters), or None (a negated class, `\\w`, `\\d`, `\\S`, a wide range...)."""
    C = _sre_constants
    chars: set[str] = set()
    for kind, value in items:
        if kind is C.LITERAL:
            chars.add(chr(value))
        elif kind is C.RANGE and value[1] - value[0] < _MAX_FIRST_CHARS:
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        elif kind is C.CATEGORY and value is C.CATEGORY_SPACE:
            chars |= _SPACE_CHARS
        else:
            return None
    return chars


def _spaced_prefilter(delimiters: Any) -> Any | None:
    """A `re` search such that no (partial) match of any of `delimiters` past stream offset 0 can start in a
    text it finds nothing in (`Watch.first_search` for watches whose delimiters may start with a space), or
    None when some delimiter's starts are unknown (`_spaced_leads`).

    It looks for: the first character of each fixed text, or the whole text where that character is a letter,
    digit or space (`to=` for gpt-oss's `\\s*to=`: a `t` is in most prose); and, at the end of the text, a
    character of a leading run or a proper prefix of such a whole text (`to` may become `to=`)."""
    chars: set[str] = set()
    words: set[str] = set()
    runs: set[str] = set()
    for d in delimiters:
        if d.literals is not None:
            forms: Any = {(None, lit[:_MAX_SPACED_TEXT]) for lit in d.literals}
        else:
            forms = _spaced_leads(d.source)
            if forms is None:
                return None
        for run, text in forms:
            if run is not None:
                runs |= run
            if text[0].isalnum() or text[0].isspace():
                words.add(text)
            else:
                chars.add(text[0])
    # a text that starts with another one is dropped (where it is, or begins to be, so is the shorter one)
    words = {w for w in words if not any(w != v and w.startswith(v) for v in words)}
    parts = []
    if chars:
        parts.append("[" + "".join(_stdre.escape(c) for c in sorted(chars)) + "]")
    parts.extend(_stdre.escape(w) for w in sorted(words))
    ends = sorted({_stdre.escape(w[:i]) for w in words for i in range(1, len(w))})
    if runs:
        ends.insert(0, "[" + "".join(_stdre.escape(c) for c in sorted(runs)) + "]")
    if ends:
        parts.append("(?:" + "|".join(ends) + ")\\Z")
    return _stdre.compile("|".join(parts)).search if parts else None


#: Zero-width assertions that only look ahead (`$`, `\Z`): they do not need text before the match.
_FORWARD_ANCHORS = frozenset(
    a for a in (getattr(_sre_constants, n, None) for n in ("AT_END", "AT_END_STRING", "AT_END_LINE")) if a is not None
)


_GROUP_NAME = _stdre.compile(r"\(\?P<\w+>")


def _needs_context(source: str) -> bool:
    """Whether a match of regex `source` can depend on text before its start (True when unsure)."""
    # `regex` allows a group name twice (gpt-oss: one `name` per alternative), `re` does not; renaming
    # groups changes no anchor or lookaround, so the answer stays the same.
    count = iter(range(1 << 30))
    renamed = _GROUP_NAME.sub(lambda m: f"(?P<g{next(count)}>", source)
    parsed = stdlib_parse(renamed)
    if parsed is None:
        return True  # `regex`-only syntax (`\G`, `\K`, variable lookbehind, ...): assume it does
    stack = [parsed]
    while stack:
        for op, av in stack.pop():
            if op is _sre_constants.AT:
                if av not in _FORWARD_ANCHORS:
                    return True  # `^`, `\A`, `\b`, `\B`
            elif op in (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT):
                if av[0] < 0:
                    return True  # lookbehind
                stack.append(av[1])
            elif op is _sre_constants.SUBPATTERN:
                stack.append(av[3])
            elif op is _sre_constants.BRANCH:
                stack.extend(av[1])
            elif op in _REPEATS:
                stack.append(av[2])
            elif op is _ATOMIC_GROUP:
                stack.append(av)
            elif op is _sre_constants.GROUPREF_EXISTS:
                stack.extend(b for b in av[1:] if b is not None)
    return False


class _FirstWalk:
    """`_start_chars`' walk: (first characters, can match empty) of parsed regex items; notes `^` / `\\A`."""

    def __init__(self, reverse: bool = False, multiline: bool = False) -> None:
        self.anchored = False
        #: walk from the end: the characters a match can end with (`_lookbehind_ends`); no assertions then
        self.reverse = reverse
        #: the pattern sets MULTILINE somewhere (`(?m)`): `^` also matches after any newline (`_multiline`)
        self.multiline = multiline

    def sequence(self, items: Any) -> tuple[set[str], bool]:
        chars: set[str] = set()
        for op, av in reversed(items) if self.reverse else items:
            first, nullable = self.item(op, av)
            chars |= first
            if len(chars) > _MAX_FIRST_CHARS:
                raise _Unknown
            if not nullable:
                return chars, False
        return chars, True

    def item(self, op: Any, av: Any) -> tuple[set[str], bool]:
        C = _sre_constants
        if op is C.LITERAL:
            return {chr(av)}, False
        if op is C.IN:
            chars = _small_class(av)
            if chars is None:  # NEGATE, CATEGORY (\w, \d, \S, ...), wide ranges
                raise _Unknown
            return chars, False
        if op is C.SUBPATTERN:
            _group, add_flags, _del_flags, sub = av
            if add_flags & _stdre.IGNORECASE:
                raise _Unknown
            return self.sequence(sub)
        if op is C.BRANCH:
            chars, nullable = set(), False
            for alternative in av[1]:
                first, empty = self.sequence(alternative)
                chars |= first
                nullable = nullable or empty
            return chars, nullable
        if op in _REPEATS:
            low, _high, sub = av
            first, nullable = self.sequence(sub)
            return first, nullable or low == 0
        if op is _ATOMIC_GROUP:
            return self.sequence(av)
        if self.reverse and (op is C.AT or op is C.ASSERT or op is C.ASSERT_NOT):
            raise _Unknown  # (an anchor or assertion inside a lookbehind)
        if op is C.AT:
            if av in _START_ANCHORS and not (self.multiline and av is C.AT_BEGINNING):
                self.anchored = True  # matches nothing past offset 0 (`\A`; `^` without MULTILINE)
                return set(), False
            return set(), True
        if op is C.ASSERT and av[0] > 0:  # a lookahead: the text here starts as its match does
            inner = _FirstWalk(self.reverse, self.multiline)
            first, nullable = inner.sequence(av[1])
            self.anchored = self.anchored or inner.anchored
            return (first, False) if not nullable else (set(), True)
        if op in (C.ASSERT, C.ASSERT_NOT):  # zero width: consumes nothing
            return set(), True
        raise _Unknown  # ANY, NOT_LITERAL, GROUPREF, GROUPREF_EXISTS, ...


_SPACE_CHARS = frozenset(chr(c) for lo, hi in _regex_space_ranges for c in range(lo, hi + 1))


def _only_at_start(alternative: Any, multiline: bool = False) -> bool:
    """Whether a top-level `alternative` can only match at offset 0 (anchored, with no first character)."""
    walk = _FirstWalk(multiline=multiline)
    try:
        chars, _ = walk.sequence(alternative)
    except _Unknown:
        return False
    return walk.anchored and not chars


@lru_cache(maxsize=1024)
def _multiline(source: str) -> bool:
    """Whether regex `source` turns MULTILINE on anywhere (`(?m)`, `(?m:...)`): then its `^` is no anchor at
    stream offset 0 (it matches after every newline too). True where unsure (the pattern does not parse)."""
    parsed = tolerant_parse(source)
    if parsed is None:
        return True
    if parsed.state.flags & _stdre.MULTILINE:
        return True
    C = _sre_constants
    stack = [list(parsed)]
    while stack:
        for op, av in stack.pop():
            if op is C.SUBPATTERN:
                if av[1] & _stdre.MULTILINE:
                    return True
                stack.append(list(av[3]))
            elif op is C.BRANCH:
                stack.extend(list(alt) for alt in av[1])
            elif op in _REPEATS:
                stack.append(list(av[2]))
            elif op in (C.ASSERT, C.ASSERT_NOT):
                stack.append(list(av[1]))
            elif op is _ATOMIC_GROUP:
                stack.append(list(av))
    return False


_START_ANCHORS = frozenset(
    a for a in (getattr(_sre_constants, n, None) for n in ("AT_BEGINNING", "AT_BEGINNING_STRING")) if a is not None
)
