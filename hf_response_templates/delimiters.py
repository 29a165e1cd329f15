"""Delimiter matching with hold-back: which delimiter fires next, and how much text is safe to emit.

Theory of operation
-------------------
At any moment the parser watches a small set of delimiters (a `Watch`): the opens of every
explicit field plus the implicit field's close while no explicit region is open, or just the close
of the open region. `Watch.scan(window, pos, eos)` looks at `window[pos:]` (the text not yet routed)
and answers one of two things:

* a delimiter to commit now: `(start, end, delimiter, captures)`; text before `start` belongs to the
  current region, `window[start:end]` is the delimiter;
* or a hold position `h`: `window[pos:h]` can be routed now, `window[h:]` must wait, because it may
  still turn out to be (part of) a delimiter.

The rule, for literal and regex delimiters alike: a delimiter is *pending* if it is a partial match
(runs into the end of the window) or a complete match that more text could still change (it ends at
the window's edge and could grow). The hold position is the earliest start of a pending delimiter.
The best complete match is the earliest one (then the longest, then the template's priority: opens
before closes, opens by field name); it is committed only if it starts strictly before the hold
position, since an earlier pending delimiter could still turn out to be the real one.

At the end of the stream (and so for all of one-shot parsing) nothing can be pending: `Watch.scan_end`
answers the same question without partial matching, and with shortcuts that only hold there (see it).

Linear time: literal delimiters are found with one C-level search of an alternation, and their
possible partial match is found by searching only the last `max_len - 1` characters for a suffix
that is a proper prefix of a watched literal. Regex delimiters use the `regex` module's partial
matching over the same window; a partial match it reports that fits none of the fixed texts every match
starts with (`Delimiter.partial_leads`) is false and holds nothing back. The parser only keeps the held text (plus, for templates with regex
delimiters, a little context so lookbehinds and `^` behave), so nothing already routed is searched
again; and a regex match longer than `MAX_DELIMITER_LENGTH` is not a delimiter, so a partial match (a tool
call header that starts and never completes) holds back at most that much: the window stays bounded.

Zero-width delimiters: `^` / `\\A` can only match at stream offset 0 (the window keeps that offset while
it is within `LOOKBEHIND_CONTEXT`; past it, the search position is never 0); `$` / `\\Z` at the edge of
the window are pending, so they are decided by `scan_end` at the end of the stream (`Watch.zero_width`
makes the parser scan there even when nothing is held).

Nothing here keeps state: a `Watch` is immutable and shared by every parser of a template.

The facts the prefilters rest on (first characters, leading texts, guards, anchors) are worked out from
each pattern's structure in `regex_leads`.
"""

from __future__ import annotations

import re as _stdre
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

import regex

from .behind_guard import false_partial
from .end_search import _finders, _next_of, end_finder
from .guard_steady import guarded_steady
from .regex_leads import (
    _SPACE_CHARS,
    ANCHOR_NONE,
    _after_guard,
    _can_be_empty,
    _fits_leads,
    _guard_chars,
    _hold_prefixes,
    _late_leads,
    _literal_leads,
    _mixed_width,
    _needs_context,
    _nested_prefixes,
    _partial_leads,
    _spaced_prefilter,
    _start_chars,
    _sure_holds,
    _sure_leads,
    always_groups,
    stdlib_equivalent,
)
from .regex_safety import backtracking_degree

OPEN, CLOSE = 0, 1


#: How many characters of already-routed text regex delimiters can look behind at.
LOOKBEHIND_CONTEXT = 256


#: The longest text a regex delimiter may match. A longer match is not a delimiter (one-shot and streamed
#: alike), so a partial match holds back at most this much text: past it, the held text is routed and
#: streamed (a tool call header that never completes does not stop the stream; issue 14).
MAX_DELIMITER_LENGTH = 512


#: The key of a scan's `memo` under which `Watch.scan` keeps the regex delimiter whose partial match set the hold
#: position it answered (`held.still_held` asks it again, alone, when the held text grows).
HELD_BY = "held_by"


#: The regex steps a call without a timeout may cost at worst: a pattern whose match attempts are proven to
#: cost O(n**d) (`regex_safety.backtracking_degree`) runs without the timeout (no clock system calls) on
#: texts short enough for n**d (a match) or n**(d+1) (a search) to stay below this (~0.1-0.3 s at worst).
UNTIMED_WORK = 1 << 24


@lru_cache(maxsize=1024)  # by source: a template's delimiters are built twice (ranks)
def untimed_spans(source: str) -> tuple[int, int]:
    """(longest text a `match`, longest text a `search` of regex `source` may run on without a timeout):
    -1 for both when no polynomial bound is proven (see `UNTIMED_WORK`)."""
    degree = backtracking_degree(source)
    if degree is None:
        return -1, -1
    return int(UNTIMED_WORK ** (1 / max(degree, 1))), int(UNTIMED_WORK ** (1 / (degree + 1)))


class DelimiterTimeout(Exception):
    """Internal: a delimiter's regex timed out (the parser turns it into `RegexTimeoutError`)."""

    def __init__(self, delimiter: Delimiter, text: str):
        super().__init__(delimiter.source)
        self.delimiter = delimiter
        self.text = text


@dataclass(frozen=True, eq=False)
class Delimiter:
    """One delimiter of one field: literal(s) or a regex."""

    field: str
    kind: int  # OPEN or CLOSE
    key: str  # "open", "open_pattern", "close", "close_pattern"
    literals: tuple[str, ...] | None
    pattern: Any  # regex.Pattern for regex delimiters, None for literals
    source: str
    rank: int = 0  # priority among delimiters of one Watch (lower wins ties)
    group_names: frozenset[str] = field(default_factory=frozenset)
    #: `(name, index in Match.groups())` of the pattern's named groups, in `groupdict()` order: reading
    #: `m.groups()` is ~5x cheaper than `m.groupdict()` with the `regex` module.
    group_slots: tuple[tuple[str, int], ...] = field(init=False, repr=False)
    #: Whether the regex has both zero-width and consuming matches (`(?:<think>\s*|^)`): a zero-width match
    #: of it is only final once no consuming match from the same position can still reach further text.
    mixed_width: bool = field(init=False, repr=False)
    #: Longest text (from the start position to the end of the window) a `match` / a search of the regex
    #: may run on without the timeout (`untimed_spans`); -1: always timed.
    untimed_match: int = field(init=False, repr=False)
    untimed_search: int = field(init=False, repr=False)
    #: The same regex compiled by the standard library's `re` (2-3x cheaper per call, no timeout), when it
    #: matches exactly what `regex` does (`stdlib_equivalent`); used for untimed calls at the end of the stream.
    fast: Any = field(init=False, repr=False)
    #: The characters a match (or a partial one) can start with past stream offset 0, None if unknown
    #: (see `_start_chars`), and whether some (`ANCHOR_SOME`) or all (`ANCHOR_ALL`) of its alternatives
    #: can only match at offset 0 (`^`, `\A`).
    first_chars: frozenset[str] | None = field(init=False, repr=False)
    anchored: int = field(init=False, repr=False)
    #: Fixed texts such that the text at the start of every match (lookahead contents included) begins with
    #: one of them (`_partial_leads`), or None if unknown: a partial match `regex` reports that fits none
    #: of them is false (issue 19) and holds nothing back.
    partial_leads: tuple[str, ...] | None = field(init=False, repr=False)
    #: A stdlib search for where a match of the regex can start, from `partial_leads`: one of them, or a
    #: beginning of one that ends the text (`_lead_trigger`); None without leads. Streaming tries the regex
    #: only there (`_search_by_leads`), not with a partial-matching search over the whole window.
    lead_search: Any = field(init=False, repr=False)
    #: The prefilter's characters, for the watch (`_guard_chars`): `(at, behind)`, a match starts at one of
    #: `at` or right after one of `behind` (the end of a lookbehind: `}` for `(?<=\})\s*(?=\{)`); None if
    #: unknown.
    guard: tuple[frozenset[str], frozenset[str]] | None = field(init=False, repr=False)
    #: Whether every match starts by consuming one of `partial_leads`, nothing (no lookaround, no anchor)
    #: before it: then a beginning of one at the end of the window is a partial match, no regex needed.
    bare_leads: bool = field(init=False, repr=False)
    #: The fixed texts some way of matching starts by consuming or looking ahead at, with no other assertion
    #: before (`_sure_leads`; the literals of a literal delimiter): a window that ends with a proper beginning
    #: of one is a partial match of this delimiter there, whatever came before (`Watch.hold_prefixes`).
    sure_leads: frozenset[str] = field(init=False, repr=False)
    #: `partial_leads` of the alternatives that can match past stream offset 0 (`_late_leads`; `("<answer>",)`
    #: for Hunyuan's `^\s*助手：|<answer>`), for the lead prefilter of a `late` watch; the same as
    #: `partial_leads` for a delimiter that is not `anchored`.
    late_leads: tuple[str, ...] | None = field(init=False, repr=False)
    #: For a regex without `lead_search`: a stdlib search for the guard's characters (None if unknown or
    #: whitespace is among them), and how far before the search position to look (1 with `behind`
    #: characters): while streaming, the regex only searches from the first one found, and not at all
    #: without one (`Watch.scan`).
    guard_search: Any = field(init=False, repr=False)
    guard_reach: int = field(init=False, repr=False)
    #: For a regex with an alternative that starts with a lookbehind: `behind_guard.false_partial`'s test of a
    #: partial match `regex` reports where that lookbehind fails (held text no match can start); else None.
    behind_false: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        groupindex = self.pattern.groupindex if self.pattern is not None else {}
        object.__setattr__(self, "group_slots", tuple((name, i - 1) for name, i in groupindex.items()))
        regex_ = self.literals is None
        object.__setattr__(self, "mixed_width", regex_ and _mixed_width(self.source))
        match_span, search_span = untimed_spans(self.source) if regex_ else (-1, -1)
        object.__setattr__(self, "untimed_match", match_span)
        object.__setattr__(self, "untimed_search", search_span)
        fast = stdlib_equivalent(self.source, digits=True) if regex_ and match_span >= 0 else None
        object.__setattr__(self, "fast", fast or self.pattern)
        if regex_:
            firsts, anchored = _start_chars(self.source)
        else:
            firsts, anchored = {lit[0] for lit in self.literals or ()}, ANCHOR_NONE
        object.__setattr__(self, "first_chars", frozenset(firsts) if firsts is not None else None)
        object.__setattr__(self, "anchored", anchored)
        leads = _partial_leads(self.source) if regex_ else None
        object.__setattr__(self, "partial_leads", leads)
        object.__setattr__(self, "lead_search", _lead_trigger(leads) if leads else None)
        object.__setattr__(self, "bare_leads", leads is not None and _literal_leads(self.source) == leads)
        object.__setattr__(
            self, "behind_false", false_partial(self.source, self.pattern.flags) if regex_ and leads else None)
        object.__setattr__(self, "sure_leads", _sure_leads(self.source) if regex_ else frozenset(self.literals or ()))
        object.__setattr__(self, "late_leads", _late_leads(self.source) if regex_ and anchored else leads)
        if not regex_:
            guard = (self.first_chars, frozenset()) if self.first_chars is not None else None
        elif leads is not None:  # the leads give the second prefilter (`Watch.lead_trigger`): no lookbehind guard
            guard = (self.first_chars, frozenset()) if self.first_chars is not None else None
        else:
            guard = _guard_chars(self.source)
        object.__setattr__(self, "guard", guard)
        chars = guard[0] | guard[1] if guard is not None and regex_ and leads is None else None
        usable = bool(chars) and not chars & _SPACE_CHARS
        object.__setattr__(self, "guard_search", _char_search(chars) if usable else None)
        object.__setattr__(self, "guard_reach", 1 if usable and guard[1] else 0)


class Watch:
    """An immutable set of delimiters watched together, in priority order."""

    __slots__ = (
        "delimiters",
        "regexes",
        "lit_find",
        "lit_finders",
        "lead_finders",
        "end_finders",
        "lit_suffix",
        "lit_lookup",
        "lit_floor",
        "lit_one",
        "lit_one_delimiter",
        "lit_alone",
        "only_literals",
        "first_set",
        "first_char",
        "first_search",
        "reusable",
        "needs_context",
        "leads",
        "zero_width",
        "held_search",
        "late",
        "prefilter",
        "own_search",
        "end_search",
        "lead_trigger",
        "behind",
        "reach",
        "guarded",
        "lead_texts",
        "hold_prefixes",
        "sure_holds",
        "feed_trigger",
        "feed_holds",
        "after_guard",
        "held_chars",
        "fast_chars",
        "lone_hold",
        "hold_next",
        "guard_only",
        "held_memo",
        "whole",
        "steady",
        "narrow",
    )

    def __init__(self, delimiters: list[Delimiter], early: bool = True, *, prefilter: bool = True):
        """`early`: the watch used while the stream is at offset 0 (delimiters anchored there count);
        `prefilter=False`: no `first_char` / `first_search`, so every text is scanned (and the parser's
        fast paths, which route text that cannot hold a delimiter without scanning it, never apply)."""
        self.prefilter = prefilter
        self.delimiters = tuple(delimiters)
        lookup: dict[str, Delimiter] = {}
        for d in delimiters:
            for lit in d.literals or ():
                lookup.setdefault(lit, d)  # the first (highest-priority) delimiter owns a shared literal
        self.lit_lookup = lookup
        self.regexes = tuple(d for d in delimiters if d.literals is None)
        self.only_literals = not self.regexes
        if lookup:
            ordered = sorted(lookup, key=len, reverse=True)
            self.lit_find = _stdre.compile("|".join(_stdre.escape(s) for s in ordered)).search
            longer = [s for s in ordered if len(s) > 1]
            self.lit_suffix = (
                _stdre.compile("(?:" + "|".join(_nested_prefixes(s) for s in longer) + r")\Z").search
                if longer
                else None
            )
            self.lit_floor = len(ordered[0]) - 1  # a partial literal is at most this long
        else:
            ordered = []
            self.lit_find = self.lit_suffix = None
            self.lit_floor = 0
        #: How `scan_end` searches the literals (`_literal_end`): `_finders`, by first character.
        self.lit_finders = _finders(ordered)
        self.lit_one = next(iter(lookup)) if len(lookup) == 1 else None
        self.lit_one_delimiter = lookup[self.lit_one] if self.lit_one is not None else None
        #: `lit_one` when it is all the watch has (most closes): `scan` finds it, or the beginning of it that ends
        #: the window, with one or two C-level searches and nothing else (`_find_literal` and the hold, inlined).
        self.lit_alone = self.lit_one if not self.regexes else None
        # Prefilter: every delimiter (and every partial one) starts with one of a few characters, so
        # text without them needs no search at all. Most chunks are like that ("<" rarely occurs in
        # prose), which makes `scan` several times cheaper for them (regex searches cost ~1 µs each).
        # A delimiter that can match at stream offset 0 only (`^\s*...`, `\A`) is left out of the prefilter
        # of a `late` watch (the one used once the stream has moved past offset 0); until then (`early`), a
        # watch with one has no prefilter.
        # A delimiter may be guarded by the character before its match instead (the end of a leading
        # lookbehind, `Delimiter.guard`): then a chunk after one that ends with such a character is scanned
        # too (`behind`, the parser's `_rescan`), and scans look one character back (`reach`).
        firsts: set[str] | None = set()
        behind: set[str] = set()
        plain: set[str] | None = set()  # the characters a match can start with (`first_set`)
        for d in delimiters:
            g = d.guard
            if g is None or (early and d.anchored):
                firsts = None
                break
            firsts |= g[0] | g[1]
            behind |= g[1]
        for d in delimiters:
            f = d.first_chars
            if f is None or (early and d.anchored):
                plain = None
                break
            plain |= f
        #: The regexes searched only from their guard's first character (`Delimiter.guard_search`); not those
        #: with an alternative anchored at offset 0 while the stream may be there.
        self.guarded = frozenset(
            d for d in self.regexes if d.guard_search is not None and not (early and d.anchored)
        )
        self.behind = frozenset(behind) if firsts is not None and behind and prefilter else None
        self.reach = 1 if self.behind else 0
        #: This watch once the stream has moved past offset 0 (set by the template; itself if the same).
        self.late: Watch | None = self
        # A regex result found from `pos` stays the answer from any later position up to its start (in
        # the same window): `scan` reuses it through `memo`, so a delimiter absent from a long window
        # (a one-shot parse) is searched for once, not once per region. Not for `\G` (anchored at the
        # search position) nor reverse-searching patterns.
        self.reusable = frozenset(
            d for d in self.regexes if "\\G" not in d.source and not d.pattern.flags & regex.REVERSE
        )
        # Whether a regex here can look at text before the search position (lookbehind, `^`, `\b`):
        # only then must the parser keep routed text around (`LOOKBEHIND_CONTEXT`) for it.
        self.needs_context = any(_needs_context(d.source) for d in self.regexes)
        #: `held_memo`'s remembered regex answers at a held start (None where a regex reads text before it).
        self.held_memo: dict | None = None if self.needs_context or not self.regexes else {}
        # Whether a regex here can match the empty string (`$`, `\Z`, `(?:^|<think>)`, lookaheads): such a
        # delimiter can fire where no text is left, so the end of the stream is scanned even then.
        self.zero_width = any(_can_be_empty(d.source) for d in self.regexes)
        # At the end of the stream, a regex whose every match starts with a fixed text (`<tool_call>`
        # for Qwen3's `<tool_call>\s*<function=...>`) is only run where `str.find` sees that text:
        # most one-shot responses have no (further) tool call, and a `regex` search with a timeout costs
        # ~1.5 µs even when it finds nothing. Not for `\G` nor reverse-searching patterns.
        # With several fixed texts (hardened Qwen3-Coder: `<tool_call>\s*<function=...|<function=...`), a
        # tuple of them: the regex runs where `str.find` sees any of them. A regex with lookarounds
        # (`</think>|(?=<tool_call>)|(?=<think>)`) uses the fixed texts the text at every match starts
        # with (`partial_leads`): a `re` search of it tries every position (~20 µs per 1,000 characters).
        # (A zero-width match found so is never at the scan's `zw_at`: those searches start past `pos`.)
        self.leads = {
            d: lead[0] if len(lead) == 1 else lead
            for d in self.reusable
            if (lead := _literal_leads(d.source) or d.partial_leads) is not None
        }
        self.lead_finders = {d: _finders(lead) for d, lead in self.leads.items() if lead.__class__ is tuple}
        #: The others' end-of-stream search, tried only at candidate positions (`end_search.end_finder`: after
        #: Llama 4's `}`, before its `<|eot|>` and the spaces that lead to it, at Hunyuan's late `<answer>`).
        self.end_finders = {
            d: f for d in self.reusable if d not in self.leads
            if (f := end_finder(d, _match_at, _search_regex)) is not None
        }
        self.first_set = frozenset(plain) if plain is not None else None
        # The second prefilter, for text that has one of those characters: a search for the fixed texts every
        # delimiter here starts with (literals, `Delimiter.partial_leads`) or a beginning of one at the end
        # of the text; no find means no delimiter (nor a partial one) starts in the text. Not with a
        # lookbehind guard (such a delimiter has no leads), nor without a prefilter.
        texts: set[str] | None = set(lookup)
        for d in self.regexes:
            leads = d.late_leads if not early else d.partial_leads if not d.anchored else None
            if leads is None:
                texts = None
                break
            texts.update(leads)
        self.lead_trigger = _lead_trigger(tuple(texts)) if texts and prefilter and firsts is not None else None
        # When every delimiter here starts by consuming its fixed text (literals, `Delimiter.bare_leads`), a
        # beginning of one that ends a chunk is a partial match for sure (see also `hold_prefixes`).
        self.lead_texts = (
            frozenset(texts)
            if self.lead_trigger is not None and texts and all(d.bare_leads for d in self.regexes)
            else None
        )
        #: With `lead_trigger`: the texts that, found by it at the end of a chunk, are a partial match for sure
        #: (a proper beginning of some delimiter's `sure_leads`, and not a whole fixed text): `feed()` holds
        #: such an end without a scan, and routes what is before it (where no delimiter starts).
        self.hold_prefixes: frozenset[str] = (
            _hold_prefixes(self.delimiters, texts) if self.lead_trigger is not None and texts else frozenset()
        )
        #: `feed()`'s own second prefilter: `lead_trigger`, or where a delimiter has no leads but a lookbehind
        #: guard (Llama 4's `(?<=\})\s*(?:;\s*)?(?=\{...)`), one that also finds its guard's characters (a
        #: `}` of the chunk, as one more fixed text). Only for a chunk that does not follow one (`_rescan`) and
        #: text `feed()` itself held: `scan` searches from the scan position, where a guarded match may start
        #: after a guard character routed before. `feed_holds`: its `hold_prefixes`.
        #: `{text: regex or None}`: the proper beginnings of the delimiters' `sure_leads` (`_sure_holds`): text
        #: from the scan position that is one is held there for sure, without a search (`held.still_held`, the
        #: parser's `_hold_sure`); the regex it begins a sure lead of is the one `still_held` asks when it grows.
        self.sure_holds = _sure_holds(self.delimiters) if prefilter else {}
        self.feed_trigger = self.lead_trigger
        self.feed_holds = self.hold_prefixes
        #: With a `feed_trigger` that also finds lookbehind guards' characters: those of them that no delimiter
        #: here starts with, nor any other fixed text it finds (Llama 4's `}`): a match can only begin right
        #: after one, so where `after_guard` matches nothing after it, `feed()` routes it without a scan.
        self.guard_only: frozenset[str] | None = None
        #: With `behind`: a stdlib `match` for how a match of a guarded delimiter can begin right after its guard
        #: character (`_after_guard`: `\s*(?:;|\{)` for Llama 4's open, or a beginning of it that ends the text):
        #: where it matches nothing, the chunk after one ending with that character needs no scan for it.
        self.after_guard = (
            _after_guard([d for d in self.delimiters if d.guard is not None and d.guard[1]])
            if self.behind is not None else None
        )
        if self.lead_trigger is None and prefilter and firsts is not None and self.behind is not None:
            guarded: set[str] = set(lookup)
            for d in self.regexes:
                leads = d.late_leads if not early else d.partial_leads if not d.anchored else None
                guarded.update(leads if leads is not None else d.guard[0] | d.guard[1])  # type: ignore[index]
            if guarded and not guarded & _SPACE_CHARS:  # (a space among them: nearly every chunk has one)
                self.feed_trigger = _lead_trigger(tuple(guarded))
                self.feed_holds = _hold_prefixes(self.delimiters, guarded)
                starts: set[str] = set()
                for d in delimiters:
                    starts |= d.guard[0]  # type: ignore[index]
                only = frozenset(
                    c for c in behind
                    if c in guarded and c not in starts and not any(t != c and t.startswith(c) for t in guarded)
                )
                self.guard_only = only if only and self.after_guard is not None else None
        self.first_char = self.first_search = None
        # With `prefilter=False`, the prefilter is kept here instead (`None`: no character is known to be safe).
        self.held_search = None
        #: With `prefilter=False`: the characters `held_search` looks for, when it is a search for characters
        #: (the parser's JSON value-end scanner looks for them too, `jsonscan.ValueEnd.calm`); else None.
        self.held_chars: str | None = None
        if firsts is not None and " " in firsts:
            # (`\s*<x>`, gpt-oss's `\s*to=`): most chunks hold a space, so a set of first characters would
            # rarely skip one; a space can only start a match followed by the fixed text after it, or at the
            # end of the text (`_spaced_prefilter`; `scan_end` still uses the set to try matches at `pos`).
            # (Not at the end of the stream: there a chunk is the whole rest of the text, which the alternation
            # costs ~20 ns a character to search, and it rarely skips a scan; `end_search` stays None.)
            spaced = _spaced_prefilter(delimiters)
            if not prefilter:
                self.held_search = None if behind else spaced
            else:
                self.first_search = spaced
        elif not prefilter:
            if firsts and not behind:
                self.held_search = _stdre.compile("[" + "".join(_stdre.escape(c) for c in sorted(firsts)) + "]").search
                self.held_chars = "".join(sorted(firsts))
        elif firsts is not None and len(firsts) == 1:
            self.first_char = next(iter(firsts))
        elif firsts:
            self.first_search = _stdre.compile("[" + "".join(_stdre.escape(c) for c in sorted(firsts)) + "]").search
        self.end_search = self.first_search if firsts is None or " " not in firsts else None
        #: The prefilter as one or two characters that every delimiter here (and every beginning of one) starts
        #: with, when it is that small: `feed()`'s steady-state path tests them with `in` (two C-level `in`
        #: tests cost about a third of a `re` search of a short chunk); else None.
        self.fast_chars: str | None = (
            self.first_char if self.first_char is not None
            else "".join(sorted(firsts)) if self.first_search is not None and firsts and len(firsts) == 2
            and " " not in firsts else None
        )
        #: With `fast_chars` one character that every fixed text of `lead_trigger` starts with, and is a proper
        #: beginning of one held for sure (`feed_holds`): that character (`feed()` holds it without a search
        #: when it ends a chunk and is its only one), and `hold_next`, the characters that follow it in those
        #: texts (a chunk after it that starts with none of them, and has no such character, is no delimiter
        #: with it: `lead_trigger` of the two would find nothing). Else both None.
        self.lone_hold: str | None = None
        self.hold_next: str | None = None
        first = self.first_char
        if (first is not None and texts and self.lead_trigger is not None and self.feed_trigger is self.lead_trigger
                and first in self.feed_holds and all(len(t) > 1 and t[0] == first for t in texts)):
            self.lone_hold = first
            self.hold_next = "".join(sorted({t[1] for t in texts}))
        # Each regex of a watch of several gets a prefilter of its own: a scan made for another delimiter (a
        # `<` in prose, for Llama 4's `<|eot|>`) then skips this one's `regex` search (1-8 µs with partial
        # matching) where it cannot start. Not where it may match at offset 0 (`^`), nor without a prefilter.
        self.own_search: dict[Delimiter, Any] = {}
        if prefilter and firsts is not None and len(self.delimiters) > 1:
            for d in self.regexes:
                f = d.first_chars
                if not f or (early and d.anchored):
                    continue
                if " " in f:
                    own = _spaced_prefilter([d])
                else:
                    own = _stdre.compile("[" + "".join(_stdre.escape(c) for c in sorted(f)) + "]").search
                if own is not None:
                    self.own_search[d] = own
        #: `region_change`'s answers, `{text from a held start: (delimiter, captures, end), True (held whole) or False}`,
        #: where the text alone decides them: a lone literal (prefilled with it and its proper beginnings) or a
        #: watch with `held_memo` and no zero-width delimiter (filled as texts come); else None.
        self.whole: dict | None = (
            {**dict.fromkeys((self.lit_alone[:i] for i in range(1, len(self.lit_alone))), True),
             self.lit_alone: (self.lit_one_delimiter, None, len(self.lit_alone))} if self.lit_alone is not None
            and prefilter
            else {} if self.held_memo is not None and not self.zero_width else None
        )
        #: `region_change.steady_for`'s tuples, by field (the parser's steady state in a region without markup).
        self.steady: dict = {}
        #: `feed()`'s steady state where the text so far is out of every lookbehind guard's reach: this watch's prefilter
        #: without the leads those guards keep (`guard_steady.GuardedSteady`: Gemma 4's `call:`), or None.
        self.narrow = guarded_steady(self) if prefilter else None

    def scan(
        self,
        window: str,
        pos: int,
        eos: bool,
        zw_at: int,
        zw_fired: frozenset,
        disabled: frozenset | set,
        timeout: float | None,
        memo: dict | None = None,
        resume: tuple[dict, int, int] | None = None,
        held_only: bool = False,
    ) -> tuple[int, int, Delimiter, dict | None] | int:
        """See the module docstring. `zw_at`: a window index where zero-width delimiters were just
        committed, or -1; `zw_fired`: those delimiters (each may match there with zero width once, so
        a lookahead close and a lookahead open can meet at one position, and nothing loops).
        `disabled`: delimiters to skip. `memo`: a dict the caller keeps for one `window` (and one
        `eos`, `zw_at` and `zw_fired`) across scans.

        `resume`: what the last scan of this watch learnt about the text still held, when `window[pos:]`
        is that held text plus new text (no zero-width state on either): `(memo, shift, end)`, that scan's
        `memo`, what to add to its window indices to get this window's, and where its window ended here.
        A regex whose (partial) match it found starting at `i` is searched from `i`, one it found nothing
        for from `end`: a position where no match nor partial match starts cannot become one with more text
        (what routing text before the hold position relies on), so only the delimiters still alive are
        tried, each from its held candidate, not every regex again from `pos` (issue 19). `held_only`: `resume`
        is only for `_held_at` (a zero-width state on this scan or the last one: what they found for zero-width
        matches may differ, a partial match's is the same), else the scan is done as without it."""
        if eos:
            return self.scan_end(window, pos, zw_at, zw_fired, disabled, timeout, memo)
        n = len(window)
        if resume is not None and self.regexes:
            if not self.zero_width and not disabled:  # what starts at the held start decides (`held_commit`)
                got = commit_at(self, window, pos)
                if got is not None:
                    if got.__class__ is tuple:
                        return got
                    if memo is not None:
                        memo[HELD_BY] = got  # (still held, by this delimiter: `still_held` asks it next)
                    return pos
            if self._held_at(window, pos, disabled, timeout, memo, resume):
                return pos  # a regex still runs from `pos` into the end: nothing can commit, all stays held
        if held_only:
            resume = None
        if resume is None:  # (resumed, something is known to be held at `pos`: the prefilters would find it)
            back = pos - self.reach if pos else 0  # a lookbehind guard's character may be the last one routed
            if self.first_char is not None:
                if window.find(self.first_char, back) < 0:
                    return n
            elif self.first_search is not None and self.first_search(window, back) is None:
                return n
            if self.lead_trigger is not None and self.lead_trigger(window, pos) is None:
                return n
        hold = n
        best: tuple | None = None
        if self.lit_find is not None:
            if self.lit_alone is not None:
                # (a beginning of the literal that ends the window cannot start before a whole one found: it
                # would run past it; nor right at it)
                one = self.lit_alone
                i = window.find(one, pos)
                if i >= 0:
                    return i, i + len(one), self.lit_one_delimiter, None
                s = self.lit_suffix(window, max(pos, n - self.lit_floor)) if self.lit_suffix is not None else None
                return s.start() if s is not None else n
            old = resume[0].get(self, _UNSET) if resume is not None else _UNSET
            if old is not _UNSET and (old is None or old[0] + resume[1] >= pos):  # type: ignore[index]
                # The last scan's first literal (or none) from `pos`: a literal that starts earlier must run
                # into the new text, so it starts at most `lit_floor` characters before the old window's end.
                lit = self._find_literal(window, max(pos, resume[2] - self.lit_floor))  # type: ignore[index]
                if old is not None and (lit is None or old[0] + resume[1] < lit[0]):  # type: ignore[index]
                    lit = (old[0] + resume[1], old[1] + resume[1], old[2])  # type: ignore[index]
            else:
                lit = self._find_literal(window, pos)
            if memo is not None:
                memo[self] = lit  # (for the next scan's `resume`; `scan_end` keeps other things there)
            if self.lit_suffix is not None:
                s = self.lit_suffix(window, max(pos, n - self.lit_floor))
                if s is not None:
                    hold = s.start()
            if self.only_literals:
                if lit is not None and lit[0] < hold:
                    return lit[0], lit[1], lit[2], None
                return hold
            if lit is not None:
                best = (lit[0], lit[0] - lit[1], lit[2].rank, lit[1], lit[2], None)
        held_by = None  # the regex pending at `hold`, for the next chunk's `held.still_held`
        for d in self.regexes:
            if d in disabled:
                continue
            seen = memo.get(d) if memo is not None else None
            if seen is not None and seen[0] <= pos and (seen[1] is None or seen[1][0] >= pos):
                found = seen[1]
            else:
                p = pos  # no (partial) match of `d` starts in window[pos:p]
                if resume is not None:
                    old = resume[0].get(d)
                    if old is not None:
                        i = resume[2] if old[1] is None else old[1][0] + resume[1]
                        if i > pos:
                            p = i
                if d in self.guarded:
                    # No match starts before the first of the guard's characters (or right after it, for a
                    # lookbehind's): search from there, or not at all (a `regex` search costs 1.5-2 µs).
                    g = d.guard_search(window, p - d.guard_reach if p else 0)
                    found = None if g is None else _search_regex(
                        d, window, max(p, g.start()), False, zw_at if zw_at < 0 or d in zw_fired else -1, timeout)
                else:
                    own = self.own_search.get(d)
                    if own is not None and own(window, p) is None:
                        found = None  # no match (nor partial one) of `d` can start in `window[p:]`
                    else:
                        found = _search_regex(d, window, p, False, zw_at if zw_at < 0 or d in zw_fired else -1, timeout)
                if memo is not None and d in self.reusable:
                    memo[d] = (pos, found)
            if found is None:
                continue
            start, end, groups, pending = found
            if pending:
                if start <= hold:  # (equal: a literal's beginning set it, the regex is what can outlive it)
                    hold = start
                    held_by = d
                continue
            # earliest, then longest, then by rank (compared field by field: no key tuple to build)
            if best is None or start < best[0] or (start == best[0] and (start - end, d.rank) < best[1:3]):
                best = (start, start - end, d.rank, end, d, groups)
        if best is not None and best[0] < hold:
            return best[0], best[3], best[4], best[5]
        if held_by is not None and memo is not None:
            memo[HELD_BY] = held_by
        return hold

    def _held_at(
        self, window: str, pos: int, disabled: frozenset | set, timeout: float | None, memo: dict | None,
        resume: tuple[dict, int, int],
    ) -> bool:
        """`scan`'s shortcut for a resumed scan (held text, then new text): whether the first regex whose partial
        match the last scan found starting at `pos` is still a partial match from `pos` (runs into the end of
        the window, as a tool-call header held chunk after chunk does). Then the hold position is `pos`, the
        earliest it can be, and no delimiter can commit before it: `scan` answers `pos` after this one `regex`
        call, not one search per delimiter (issue 19). False if that regex's answer changed (it completed, or
        failed) or none was pending at `pos`: the full scan decides."""
        n = len(window)
        if n - pos > MAX_DELIMITER_LENGTH:
            return False  # (a partial match this long is no delimiter: `_search_regex` looks past it)
        old_memo, shift = resume[0], resume[1]
        for d in self.regexes:
            old = old_memo.get(d)
            if old is None or old[1] is None or not old[1][3] or old[1][0] + shift != pos or d in disabled:
                continue
            try:
                m = d.pattern.match(window, pos, None, None, True, None if n - pos <= d.untimed_match else timeout)
            except TimeoutError:
                raise DelimiterTimeout(d, window[pos:]) from None
            if m is None or not m.partial or not _fits_leads(window, pos, d.partial_leads):
                return False
            if memo is not None:
                if d in self.reusable:
                    memo[d] = (pos, (pos, n, None, True))  # (for the next scan's `resume`, as the full scan keeps)
                memo[HELD_BY] = d
            return True
        return False

    def scan_end(
        self,
        window: str,
        pos: int,
        zw_at: int,
        zw_fired: frozenset,
        disabled: frozenset | set,
        timeout: float | None,
        memo: dict | None = None,
    ) -> tuple[int, int, Delimiter, dict | None] | int:
        """`scan` at the end of the stream, where nothing is pending any more: the first complete match in
        `window[pos:]` (earliest, then longest, then by priority), or `len(window)` if there is none.

        What one-shot parsing spends its time in, so it does less than `scan`: no hold-back; a match
        found beyond `pos` is kept in `memo` for the next scans of the window (so each part of the text
        is searched about once); a regex whose matches all start with a fixed text (`leads`) is only
        tried where `str.find` sees that text; and when something matches right at `pos` (delimiters
        often follow each other: gpt-oss's `<|end|><|start|>assistant...`), no regex searches the rest
        of the text.
        """
        n = len(window)
        if memo is None:
            memo = {}
        if self.only_literals:
            one = self.lit_one
            if one is not None:  # the close of most explicit fields: `_find_literal`, inlined
                i = window.find(one, pos)
                return (i, i + len(one), self.lit_one_delimiter, None) if i >= 0 else n
            lit = self._literal_end(window, pos, memo)
            return (lit[0], lit[1], lit[2], None) if lit is not None else n
        if pos >= n and not self.zero_width:
            return n
        back = pos - self.reach if pos else 0  # a lookbehind guard's character may be the last one routed
        if self.first_char is not None:
            if window.find(self.first_char, back) < 0:
                return n
        elif self.end_search is not None and self.end_search(window, back) is None:
            return n
        best: tuple | None = None
        if self.lit_find is not None:
            lit = self._literal_end(window, pos, memo)
            if lit is not None:
                best = (lit[0], lit[0] - lit[1], lit[2].rank, lit[1], lit[2], None)
        leads = self.leads
        firsts = self.first_set
        if (best is not None and best[0] == pos) or firsts is None or (pos < n and window[pos] in firsts):
            here = best if best is not None and best[0] == pos else None
            for d in self.regexes:
                if d in disabled:
                    continue
                lead = leads.get(d)
                if lead is not None and not window.startswith(lead, pos):
                    continue
                found = _match_here(d, window, pos, zw_at if zw_at < 0 or d in zw_fired else -1, timeout)
                if found is not None and (here is None or (pos - found[0], d.rank) < here[1:3]):
                    here = (pos, pos - found[0], d.rank, found[0], d, found[1])
            if here is not None:
                return pos, here[3], here[4], here[5]
        # Nothing matches at `pos` (the block above tried every regex that can start there): search.
        for d in self.regexes:
            if d in disabled:
                continue
            seen = memo.get(d)
            if seen is not None and seen[0] <= pos and (seen[1] is None or seen[1][0] >= pos):
                found = seen[1]
            else:
                lead = leads.get(d)
                if lead.__class__ is tuple:  # several fixed texts: a C-level search per first character (`_finders`)
                    found = _search_leads(d, window, pos + 1, self.lead_finders[d], timeout)
                elif lead is not None:
                    # Every match starts with `lead`: try only where `str.find` sees it. Written here, not
                    # in a helper: this is the search one-shot parsing runs once per tool call.
                    found = None
                    i = window.find(lead, pos + 1)
                    while i >= 0:
                        try:
                            if n - i <= d.untimed_match:  # proven bounded here: no timeout, `re` where it can
                                m = d.fast.match(window, i)
                            else:  # (string, pos, endpos, concurrent, partial, timeout) positionally: cheaper
                                m = d.pattern.match(window, i, None, None, False, timeout)
                        except TimeoutError:
                            raise DelimiterTimeout(d, window[i:]) from None
                        if m is not None and m.end() - i <= MAX_DELIMITER_LENGTH:
                            found = (i, m.end(), _groups(d, m))
                            break
                        i = window.find(lead, i + 1)
                elif pos < n and d in self.end_finders:  # (nothing matches at `pos`: see above)
                    found = self.end_finders[d](window, pos + 1, timeout)
                else:
                    found = _search_regex(d, window, pos, True, zw_at if zw_at < 0 or d in zw_fired else -1, timeout)
                if d in self.reusable:
                    memo[d] = (pos, found)
            if found is None:
                continue
            start, end = found[0], found[1]
            # earliest, then longest, then by rank (compared field by field: no key tuple to build)
            if best is None or start < best[0] or (start == best[0] and (start - end, d.rank) < best[1:3]):
                best = (start, start - end, d.rank, end, d, found[2])
        return (best[0], best[3], best[4], best[5]) if best is not None else n

    def _literal_end(self, window: str, pos: int, memo: dict) -> tuple[int, int, Delimiter] | None:
        """`_find_literal` at the end of the stream, through `lit_finders` (see `_finders`), each one's next
        find kept in `memo` (for this window) and searched for again only once passed: each part of the
        window is searched about once per finder. Earliest, then longest."""
        finders = self.lit_finders
        nxt = memo.get(self)
        if len(finders) == 1:  # (the usual case: one literal, or literals sharing their first character)
            if nxt is None or (nxt[0] is not None and nxt[0][0] < pos):
                nxt = memo[self] = (_next_of(finders[0], window, pos),)
            hit = nxt[0]
            return None if hit is None else (hit[0], hit[0] + len(hit[1]), self.lit_lookup[hit[1]])
        if nxt is None:
            nxt = memo[self] = [_next_of(f, window, pos) for f in finders]
        best = None
        for j in range(len(nxt)):
            hit = nxt[j]
            if hit is not None and hit[0] < pos:
                hit = nxt[j] = _next_of(finders[j], window, pos)
            if hit is not None and (best is None or hit[0] < best[0]):
                best = hit  # (two finders never find at one position: their texts start differently)
        if best is None:
            return None
        i, lit = best
        return i, i + len(lit), self.lit_lookup[lit]

    def _find_literal(self, window: str, pos: int) -> tuple[int, int, Delimiter] | None:
        """The first literal delimiter in `window[pos:]`: `(start, end, delimiter)` or None."""
        if self.lit_one is not None:  # one literal: str.find is ~2x cheaper than a regex search
            i = window.find(self.lit_one, pos)
            return (i, i + len(self.lit_one), self.lit_one_delimiter) if i >= 0 else None
        m = self.lit_find(window, pos)
        return (m.start(), m.end(), self.lit_lookup[m.group()]) if m is not None else None


def _search_regex(
    d: Delimiter, window: str, pos: int, eos: bool, zw_at: int, timeout: float | None
) -> tuple[int, int, dict | None, bool] | None:
    """Leftmost match of a regex delimiter: `(start, end, captures, pending)` or None.

    A match longer than `MAX_DELIMITER_LENGTH` is not a delimiter (searched past), and a pending match
    that starts more than `MAX_DELIMITER_LENGTH` characters before the end of the window could only
    become such a match: it holds nothing back. So the held text stays bounded, and each scan of a stream
    costs at most about `MAX_DELIMITER_LENGTH` characters of regex work beyond the new text."""
    if not eos and d.lead_search is not None:
        return _search_by_leads(d, window, pos, zw_at, timeout)
    pat = d.pattern
    leads = d.partial_leads
    n = len(window)
    lo = n - MAX_DELIMITER_LENGTH  # a pending match starting before this is too long to be a delimiter
    if n - pos <= d.untimed_search:
        timeout = None  # proven bounded on this little text: no clock system calls
    try:
        if eos:
            if timeout is None:
                # `re` when it reads the pattern as `regex` does: the same matches, cheaper calls
                search = d.fast.search
            else:
                search = partial(_timed_search, pat.search, timeout)
            m = search(window, pos)
            while m is not None:
                start, end = m.span()
                if start == end == zw_at:
                    m = search(window, zw_at + 1) if zw_at < n else None
                elif end - start > MAX_DELIMITER_LENGTH:
                    m = search(window, start + 1) if start < n else None
                else:
                    return start, end, _groups(d, m), False
            return None
        m = pat.search(window, pos, None, None, True, timeout)
        while m is not None:
            start, end = m.span()
            if m.partial:
                if start < lo:  # `regex` reports a partial match only when nothing complete follows
                    m = pat.search(window, lo, None, None, True, timeout)
                    continue
                if leads is not None and not _fits_leads(window, start, leads) or (
                        d.behind_false is not None and d.behind_false(window, start, timeout)):
                    # A false partial match (`regex` reports `</b` for `(?<=<think>\s*)(?=<think>)`, issue
                    # 19): no text can complete it, so it holds nothing back; look past it.
                    m = pat.search(window, start + 1, None, None, True, timeout) if start < n else None
                    continue
                return start, end, None, True
            if start == end == zw_at:
                m = pat.search(window, zw_at + 1, None, None, True, timeout) if zw_at < n else None
                continue
            if end - start > MAX_DELIMITER_LENGTH:
                m = pat.search(window, start + 1, None, None, True, timeout) if start < n else None
                continue
            break
        if m is None:
            return None
        # `regex` prefers a complete match anywhere over an earlier partial one: look for one.
        if start > pos and start > lo:
            earlier = _earlier_partial(pat, window, max(pos, lo), start, timeout, leads, d.behind_false)
            if earlier is not None:
                return earlier, n, None, True
        return _settle(d, window, m, lo, timeout)
    except TimeoutError:
        raise DelimiterTimeout(d, window[pos:]) from None


def _timed_search(search: Any, timeout: float, window: str, pos: int) -> Any:
    """`search(window, pos)` of a `regex` pattern with `timeout`, its arguments positional (cheaper)."""
    return search(window, pos, None, None, False, timeout)


_UNSET: Any = object()


def _settle(d: Delimiter, window: str, m: Any, lo: int, timeout: float | None) -> tuple[int, int, dict | None, bool]:
    """`_search_regex` for a complete match `m` while streaming: final, or pending on text still to come."""
    pat = d.pattern
    start, end = m.span()
    if end == len(window):
        return start, end, None, True  # at the edge: more text could extend or move the match
    if start == end and d.mixed_width:
        # `(?:<think>\s*|^)` on "<th": `regex` reports the complete zero-width match, yet with more text
        # the consuming alternative may win; wait while one can still run into the end of the window.
        longer = pat.fullmatch(window, start, None, None, True, timeout)
        if longer is not None and longer.partial and start >= lo and _fits_leads(window, start, d.partial_leads):
            return start, end, None, True
    # A match before the edge can still rely on the edge (`$` before a final newline, lookaheads).
    # (positional arguments: `regex` parses keyword arguments slowly, ~0.5 µs a call; `groups()` first: cheaper)
    probe = pat.match(window + "\x00", start, None, None, False, timeout)
    if probe is None or probe.span() != (start, end) or (
            probe.groups() != m.groups() and probe.groupdict() != m.groupdict()):
        return start, end, None, True
    return start, end, _groups(d, m), False


def _search_by_leads(
    d: Delimiter, window: str, pos: int, zw_at: int, timeout: float | None
) -> tuple[int, int, dict | None, bool] | None:
    """`_search_regex` while streaming, for a regex whose every match starts with one of a few fixed texts
    (`Delimiter.partial_leads`): the regex is tried (partial matching) only where `d.lead_search` sees one
    of them, or a beginning of one that ends the window, in order, so the first answer is the earliest
    match or partial match. Same answers as the partial-matching search over the window, which costs
    1.5-2 µs per call with the `regex` module even where no lead is (10-15x a stdlib search)."""
    pat = d.pattern
    n = len(window)
    lo = n - MAX_DELIMITER_LENGTH  # a pending match starting before this is too long to be a delimiter
    find = d.lead_search
    f = find(window, pos)
    try:
        while f is not None:
            i = f.start()
            if f.end() == n and d.bare_leads and window[i:] not in d.partial_leads:  # type: ignore[operator]
                return i, n, None, True  # the beginning of a lead ends the window: a partial match
            m = pat.match(window, i, None, None, True, None if n - i <= d.untimed_match else timeout)
            if m is not None:
                end = m.end()
                if m.partial:
                    if i >= lo and (d.behind_false is None or not d.behind_false(window, i, timeout)):
                        return i, n, None, True
                elif not (i == end == zw_at or end - i > MAX_DELIMITER_LENGTH):
                    return _settle(d, window, m, lo, None if n - i <= d.untimed_match else timeout)
            f = find(window, i + 1)
    except TimeoutError:
        raise DelimiterTimeout(d, window[pos:]) from None
    return None


def _char_search(chars: frozenset[str] | set[str]) -> Any:
    """The `search` of a stdlib regex for any of `chars`."""
    return _stdre.compile("[" + "".join(_stdre.escape(c) for c in sorted(chars)) + "]").search


def _lead_trigger(texts: tuple[str, ...] | None) -> Any:
    """The `search` of a stdlib regex finding the first place where one of `texts` is, or where a proper
    beginning of one ends the text (`<|t` for `<|tool_call>`); None without texts."""
    if not texts:
        return None
    ordered = sorted(set(texts), key=lambda t: (-len(t), t))
    source = "|".join(_stdre.escape(t) for t in ordered)
    longer = [t for t in ordered if len(t) > 1]
    if longer:
        source += "|(?:" + "|".join(_nested_prefixes(t) for t in longer) + r")\Z"
    return _stdre.compile(source).search


def _search_leads(
    d: Delimiter, window: str, start: int, finders: tuple[Any, ...], timeout: float | None
) -> tuple[int, int, dict | None] | None:
    """At the end of the stream: the first match of regex delimiter `d` at or after `start`, trying only
    where `finders` (`_finders` of the fixed texts every match starts with) find one of them:
    `(start, end, captures)` or None. Linear: each finder searches on past its own last find."""
    n = len(window)
    if len(finders) == 1 and finders[0].__class__ is not str:  # (the common case: one alternation)
        search = finders[0]
        f = search(window, start)
        while f is not None:
            i = f.start()
            m = _match_at(d, window, i, n, timeout)
            if m is not None:
                return m
            f = search(window, i + 1)
        return None
    nxt = [_next_of(f, window, start) for f in finders]
    while True:
        i = -1
        for hit in nxt:
            if hit is not None and (i < 0 or hit[0] < i):
                i = hit[0]
        if i < 0:
            return None
        m = _match_at(d, window, i, n, timeout)
        if m is not None:
            return m
        for j in range(len(nxt)):
            hit = nxt[j]
            if hit is not None and hit[0] == i:
                nxt[j] = _next_of(finders[j], window, i + 1)


def _match_at(d: Delimiter, window: str, i: int, n: int, timeout: float | None) -> tuple[int, int, dict | None] | None:
    """`(i, end, captures)` of a match of regex delimiter `d` at `i` (at most `MAX_DELIMITER_LENGTH` long), or None."""
    try:
        if n - i <= d.untimed_match:  # proven bounded here: no timeout, `re` where it can
            m = d.fast.match(window, i)
        else:
            m = d.pattern.match(window, i, None, None, False, timeout)
    except TimeoutError:
        raise DelimiterTimeout(d, window[i:]) from None
    if m is not None and m.end() - i <= MAX_DELIMITER_LENGTH:
        return i, m.end(), _groups(d, m)
    return None


def _match_here(d: Delimiter, window: str, pos: int, zw_at: int, timeout: float | None) -> tuple[int, dict | None] | None:
    """At the end of the stream: `(end, captures)` of a match of regex delimiter `d` starting at `pos`."""
    try:
        if len(window) - pos <= d.untimed_match:
            m = d.fast.match(window, pos)  # proven bounded on this text: no timeout, `re` where it can
        else:
            m = d.pattern.match(window, pos, None, None, False, timeout)
    except TimeoutError:
        raise DelimiterTimeout(d, window[pos:]) from None
    if m is None or m.end() == pos == zw_at or m.end() - pos > MAX_DELIMITER_LENGTH:
        return None
    return m.end(), _groups(d, m)


def _earlier_partial(
    pat: Any, window: str, pos: int, limit: int, timeout: float | None, leads: tuple[str, ...] | None = None,
    false: Any = None,
) -> int | None:
    """The earliest position in [pos, limit) where a partial match of `pat` starts, or None. With `leads`
    (`Delimiter.partial_leads`), a partial match that fits none of them is false and does not count; so is one
    `false` (`Delimiter.behind_false`) says is behind a failing lookbehind."""
    p = pos
    while p < limit:
        cand = pat.search(window, p, limit, None, True, timeout)
        if cand is None:
            return None
        if not cand.partial and cand.start() == cand.end():
            # A zero-width complete match (`\z` at `limit`, which `regex` takes as the end) hides any
            # partial match before it: try each position instead.
            for q in range(p, min(cand.start() + 1, limit)):
                real = pat.match(window, q, None, None, True, timeout)
                if real is not None and real.partial and _fits_leads(window, q, leads) and (
                        false is None or not false(window, q, timeout)):
                    return q
            p = cand.start() + 1
            continue
        p = cand.start()
        if p >= limit:
            return None
        real = pat.match(window, p, None, None, True, timeout)
        if real is not None and real.partial and _fits_leads(window, p, leads) and (
                false is None or not false(window, p, timeout)):
            return p
        p += 1
    return None


def _groups(d: Delimiter, m: Any) -> dict | None:
    """The named groups of match `m` of `d` that took part in it, or None if there are none."""
    slots = d.group_slots
    if not slots:
        return None
    g = m.groups()
    out = {}
    for name, i in slots:  # a loop, not a comprehension: no function call (Python 3.11)
        if g[i] is not None:
            out[name] = g[i]
    return out


def open_at(match: Any, window: str, at: int, slots: int) -> tuple[int, dict | None] | None:
    """An open delimiter's regex matched at `at` the way the one-shot chains take it (`call_chain`, `fused_chain`,
    `section_scan`): `(end, groups)` where `match(window, at)` (an untimed match) matches, not with zero width and no
    longer than `MAX_DELIMITER_LENGTH`; else None. `groups`: the named groups that took part (None where `slots`
    is 0: the delimiter has none; `open_slots` says which)."""
    m = match(window, at)
    if m is None:
        return None
    end = m.end()
    if not at < end <= at + MAX_DELIMITER_LENGTH:
        return None
    if not slots:
        return end, None
    groups = m.groupdict()
    if slots == 1 and None in groups.values():  # (only the groups that took part)
        groups = {k: v for k, v in groups.items() if v is not None}
    return end, groups


def open_slots(d: Delimiter) -> int:
    """`open_at`'s `slots` for open delimiter `d`: 0 where it has no named groups, 2 where each takes part in every
    match (`regex_leads.always_groups`: then its `groupdict()` is the groups that took part, with no test), else 1."""
    if not d.group_slots:
        return 0
    return 2 if len(always_groups(d.pattern)) == len(d.group_slots) else 1


#: The most characters a template regex may stand for once its counted repeats are written out
#: (`a{1000}` is 1,000; `(?:a{100}){100}` 10,000): the `regex` module expands them when it compiles, so
#: `a{100000000}` would take half a minute and then run out of memory. 100,000 compile in ~0.05 s.
MAX_REGEX_EXPANSION = 100_000


_COUNTED = _stdre.compile(r"\{(\d*)(,?)(\d*)\}")


_BRACED_ESCAPE = frozenset("NpPxuUg")


def regex_expansion(source: str) -> int:
    """An upper bound of the characters regex `source` stands for with its counted repeats written out.

    A linear scan, no recursion: escapes and character classes count 1, a group the sum of what it holds
    (all alternatives), `X{m}`/`X{m,n}`/`X{m,}` multiply `X` by the largest count. Anything unsure
    counts high, never low; `{` that is not a counted repeat (`{e<=1}`, a literal brace) counts 1.
    """
    stack = [[0, 0]]  # per open group: [size so far, size of the last atom]
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        atom = 1
        if c == "\\":
            i += 2
            if i <= n and source[i - 1] in _BRACED_ESCAPE and source.startswith("{", i):
                close = source.find("}", i)
                i = n if close < 0 else close + 1
        elif c == "[":
            j = i + 1
            if source.startswith("^", j):
                j += 1
            if source.startswith("]", j):
                j += 1
            while j < n and source[j] != "]":
                j += 2 if source[j] == "\\" else 1
            i = j + 1
        elif c == "(":
            stack.append([0, 0])
            i += 1
            continue
        elif c == ")" and len(stack) > 1:
            atom = stack.pop()[0]
            i += 1
        elif c == "{" and (m := _COUNTED.match(source, i)) is not None and (m.group(1) or m.group(3)):
            low = int(m.group(1) or 0)
            high = int(m.group(3)) if m.group(3) else low
            factor = max(low, high, 1)
            top = stack[-1]
            top[0] += top[1] * (factor - 1)
            top[1] *= factor
            i = m.end()
            continue
        else:
            i += 1
            if c in "*+?|":
                continue
        top = stack[-1]
        top[0] += atom
        top[1] = atom
    return sum(size for size, _ in stack)


def compile_regex(source: str) -> Any:
    """Compile a template regex the portable way: unicode, DOTALL, no MULTILINE.

    Raises `regex.error` (never `MemoryError` or `RecursionError`, and within a bounded time) for a
    regex that cannot be compiled, including one whose counted repeats expand past `MAX_REGEX_EXPANSION`.
    """
    size = regex_expansion(source)
    if size > MAX_REGEX_EXPANSION:
        raise regex.error(
            f"its counted repeats expand to about {size:,} characters; at most {MAX_REGEX_EXPANSION:,} are "
            "allowed (use * or + for an open-ended repeat)"
        )
    try:
        return regex.compile(source, regex.DOTALL, cache_pattern=False)
    except (MemoryError, RecursionError, OverflowError) as e:
        raise regex.error(f"{type(e).__name__} while compiling it") from None


from .held_commit import commit_at  # noqa: E402  (it reads this module's names: imported last)
