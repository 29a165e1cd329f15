"""The one-shot plan's idle scan where one fixed text starts several delimiters (`tries_scan.TriesScan`, issue 19):
GigaChat 3's idle watch reads its first find in one frame instead of `LeadScan.end`'s `_best` and `_match`. Its
answers are `LeadScan.end`'s, and the plan's messages the general loop's and the streaming parser's.
"""

from __future__ import annotations

from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import load_template
from hf_response_templates.lead_scan import LeadScan, fixed_scan
from hf_response_templates.tries_scan import TriesScan, tries_scan

_plan = oneshot_plan


def test_gigachat3_idle_watch_is_a_tries_scan():
    # (fails on the code before `tries_scan`: a `LeadScan`)
    fast = _plan(TEMPLATES["gigachat3"])._fast
    assert fast[0] == 2 and fast[1].__class__ is TriesScan


def test_only_a_scan_with_a_text_of_several_delimiters_becomes_one():
    for name in TEMPLATES:
        tpl = load_template(TEMPLATES[name])
        for w in (tpl.idle_watch, *tpl.close_watches):
            scan = fixed_scan(w)
            if scan is None:
                continue
            got = tries_scan(scan)
            several = scan.__class__ is LeadScan and scan.alone and not scan.start and any(
                len(t) > 1 for t in scan.tries)
            assert (got.__class__ is TriesScan) == several
            assert got is scan or (got.texts, got.tries) == (scan.texts, scan.tries)


#: One text that starts a literal, regexes (one with captures, one zero-width, one that may be long) and another
#: text's delimiters: every branch of `TriesScan.end`.
_TRIES = {"start_anchor": "<s>", "fields": {
    "a": {"open_pattern": r"<m>\s*call(?P<n>\d*):", "close": "</a>", "repeats": True,
          "transform": {"n": "{n}", "v": "{content}"}},
    "b": {"open_pattern": r"<m>(?!\s*call)", "close": "</b>", "repeats": True},
    "c": {"open_pattern": r"(?=<m>\s*z)", "close": "</c>", "repeats": True},
    "d": {"open_pattern": r"<m>[^<]*y", "close": "</d>", "repeats": True},
    "content": {"close_pattern": r"<m>\s*call\d*:|\[e\]"},
}}
_PIECES = ["<m>", "call:", "call7:", " ", "x", "xx", "y", "y" * 600, "</a>", "</b>", "</c>", "</d>", "[e]", "<", "[", "z"]


def _scans(tpl):
    idle = load_template(tpl).idle_watch
    scan = fixed_scan(idle)
    return scan, tries_scan(scan)


def test_the_synthetic_idle_watch_is_a_tries_scan():
    scan, tries = _scans(_TRIES)
    assert scan.__class__ is LeadScan and tries.__class__ is TriesScan
    assert _plan(_TRIES)._fast[1].__class__ is TriesScan


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), st.data())
def test_tries_scan_end_equals_lead_scan_end(text, data):
    scan, tries = _scans(_TRIES)
    positions = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
    zw = data.draw(st.sampled_from([-1, *positions]))
    fired = frozenset(data.draw(st.sampled_from([(), tuple(load_template(_TRIES).idle_watch.delimiters)])))
    a, b = scan.fresh(text, positions[0] if positions else 0), None
    b = a[:]
    for pos in positions:
        assert tries.end(text, pos, zw, fired, None, b) == scan.end(text, pos, zw, fired, None, a)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), st.sampled_from(["", "<s>", "<s><m>"]))
def test_tries_scan_in_the_plan_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_TRIES, text, prefix)


_GIGA = ["<|message_sep|>", "\n\n", "function call<|role_sep|>", "\n", '{"name": "f", "arguments": {}}', "</s>",
         " ", "x", "{", "<|"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_GIGA), max_size=12).map("".join))
def test_gigachat3_equals_the_general_loop_and_the_state_machine(text):
    assert_fast_loop_agrees(TEMPLATES["gigachat3"], text, "")


#: A regex that wins where it matches (`TriesScan.lead`): at `<m>`, `a` (8 to 10 characters where it matches) is
#: longer than every other try there can be (at most 5), so it is tried first and, where it matches, alone; `b` and
#: `d` match as long at `<m>x` (the lower rank wins), `d` is longer at `<m>xy`; `c` is a lookahead's.
_RANKED = {"start_anchor": "<s>", "fields": {
    "a": {"open_pattern": r"<m>\s?call(?P<n>\d?):", "close": "</a>", "repeats": True,
          "transform": {"n": "{n}", "v": "{content}"}},
    "b": {"open_pattern": r"<m>(?!call)x?", "close": "</b>", "repeats": True},
    "c": {"open_pattern": r"<m>(?:c|q)(?=a)", "close": "</c>", "repeats": True},
    "d": {"open_pattern": r"<m>(?:x|z)y?", "close": "</d>", "repeats": True},
    "content": {"close_pattern": r"\[e\]"},
}}
_RANKED_PIECES = ["<m>", "call:", "call7:", " call:", "ca", "qa", "x", "xy", "zy", "y", " ", "</a>", "</b>", "</c>", "</d>", "[e]", "<"]


def test_a_try_longer_than_every_other_one_is_tried_first_and_alone():
    scan, tries = _scans(_RANKED)
    assert tries.__class__ is TriesScan
    j = scan.texts.index("<m>")
    assert tries.lead[j][0].field == "a" and [t[0].field for t in tries.rest[j]] == ["b", "c", "d"]
    assert tries.lead[scan.texts.index("[e]")] is None
    # (no lead where another try may be as long: `_TRIES`'s `<m>[^<]*y`)
    assert set(_scans(_TRIES)[1].lead) == {None}
    # the tries' matches recorded: where `a` matches no other is tried (fails if the others were still read)
    called = []

    def recorded(t):
        if len(t) < 3:  # (a literal)
            return t
        return (*t[:2], lambda w, i, m=t[2], f=t[0].field: called.append(f) or m(w, i), *t[3:])

    spy = TriesScan(scan.texts, tuple(tuple(map(recorded, r)) for r in scan.tries), scan.start)
    spy.lead = tuple(t and recorded(t) for t in tries.lead)
    spy.rest = tuple(tuple(map(recorded, r)) for r in tries.rest)
    for text, want in [("<m>call7:v</a>", ["a"]), ("<m> call:v</a>", ["a"]), ("<m>xy</d>", ["a", "b", "c", "d"])]:
        called.clear()
        got = spy.end(text, 0, -1, frozenset(), None, scan.fresh(text, 0))
        assert got == scan.end(text, 0, -1, frozenset(), None, scan.fresh(text, 0))
        assert called == want


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_RANKED_PIECES), max_size=12).map("".join), st.data())
def test_tries_scan_with_a_lead_end_equals_lead_scan_end(text, data):
    scan, tries = _scans(_RANKED)
    positions = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
    a = scan.fresh(text, positions[0] if positions else 0)
    b = a[:]
    for pos in positions:
        assert tries.end(text, pos, -1, frozenset(), None, b) == scan.end(text, pos, -1, frozenset(), None, a)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_RANKED_PIECES), max_size=14).map("".join), st.sampled_from(["", "<s>", "<s><m>"]))
def test_tries_with_a_lead_in_the_plan_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_RANKED, text, prefix)


#: `_TRIES` with a third fixed text (`%%`, a literal open): `TriesScan.end` finds the first of three texts by
#: comparing them (GigaChat 3's count: not `min` and `list.index`); the first of equal finds is the one taken
_TRIES3 = {**_TRIES, "fields": {**_TRIES["fields"], "e": {"open": "%%", "close": "</e>", "repeats": True}}}


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from([*_PIECES, "%%", "</e>", "%"]), max_size=12).map("".join), st.data())
def test_tries_scan_end_of_three_texts_equals_lead_scan_end(text, data):
    scan, tries = _scans(_TRIES3)
    assert tries.__class__ is TriesScan and tries.width == 3
    positions = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
    zw = data.draw(st.sampled_from([-1, *positions]))
    fired = frozenset(data.draw(st.sampled_from([(), tuple(load_template(_TRIES3).idle_watch.delimiters)])))
    a = scan.fresh(text, positions[0] if positions else 0)
    b = a[:]
    for pos in positions:
        assert tries.end(text, pos, zw, fired, None, b) == scan.end(text, pos, zw, fired, None, a)
        assert b == a  # (the same finds kept: each stale one searched again from `pos`)


@settings(max_examples=800, deadline=None)
@given(
    st.lists(st.sampled_from([*_PIECES, "%%", "</e>", "%"]), max_size=14).map("".join),
    st.sampled_from(["", "<s>", "<s><m>"]),
)
def test_tries_scan_of_three_texts_in_the_plan_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_TRIES3, text, prefix)
