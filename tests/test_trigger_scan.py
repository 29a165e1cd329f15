"""`trigger_scan.TriggerScan.end` past offset 0: `_search` with `_here` inlined, and a zero-width answer kept at
`pos` that fired at `zw` skipped without trying it again (issue 19).

The answers are compared with `Watch.scan_end` and with the unfused path (`_here` at offset 0, then `_search`,
kept in the module for offset 0) along the chains the one-shot plan asks: each call from where the last answer
ends, a zero-width answer firing its delimiter there (`tests/test_lead_scan.py` asks from random positions).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template, parse_response
from hf_response_templates.delimiters import DelimiterTimeout
from hf_response_templates.lead_scan import _SKIPPED, lead_scan
from hf_response_templates.library import get_template
from hf_response_templates.trigger_scan import TriggerScan


def _scans() -> list[tuple[str, Any, TriggerScan]]:
    out = []
    for name in ("llama4-json", "internlm2", "deepseek-r1"):
        tpl = load_template(get_template(name))
        watches = [tpl.idle_watch, *tpl.close_watches]
        watches += [w.late for w in watches if w is not None and w.late is not None and w.late is not w]
        for w in watches:
            scan = lead_scan(w) if w is not None else None
            if isinstance(scan, TriggerScan):
                out.append((name, w, scan))
    return out


SCANS = _scans()
_FRAGS = ['{"name": "f", "parameters": {}}', '{"name":"g","arguments":{"a":1}}', "}", "{", " ", "\n", ";", "; ",
          "<|eot|>", "<|eom|>", "<|python_start|>", "<|python_end|>", "x", '"name"', ":", "```", "\n```\n",
          "<|action_start|><|plugin|>", "<|action_end|>", "<|im_end|>", "<think>", "</think>", "[", "]"]


def _unfused(scan: TriggerScan, window: str, pos: int, zw: int, fired: frozenset) -> Any:
    """What `end` answered before the fusion (no state kept): `_here` at offset 0, then `_search`."""
    got = None
    if not pos:
        got = scan._here(window, 0, zw, fired, 1.0)
        if got is _SKIPPED:
            got = None
    if got is None:
        got = scan._search(window, pos, zw, fired, 1.0, len(window))
        if got.__class__ is list:
            got = got[0]
    return got


def test_the_shipped_trigger_scans():
    names = {name for name, _, _ in SCANS}
    assert names == {"llama4-json", "internlm2", "deepseek-r1"}


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SCANS), st.lists(st.sampled_from(_FRAGS), max_size=12), st.integers(0, 3))
def test_end_along_the_plans_chain_equals_scan_end_and_the_unfused_path(entry, frags, start):
    name, watch, scan = entry
    text = "".join(frags)
    n = len(text)
    pos = min(start, n)
    zw, fired = -1, frozenset()
    finds = scan.fresh(text, pos)
    for _ in range(12):
        try:
            want = watch.scan_end(text, pos, zw, fired, frozenset(), 1.0, {})
        except DelimiterTimeout:
            want = "timeout"
        try:
            got = scan.end(text, pos, zw, fired, 1.0, finds)
            again = scan.end(text, pos, zw, fired, 1.0, finds)  # (the state kept answers a second call alike)
        except DelimiterTimeout:
            got = again = "timeout"
        assert got == again == want, (name, text, pos, zw)
        if got == "timeout" or got.__class__ is int:
            return
        assert _unfused(scan, text, pos, zw, fired) == got
        start_, end, d, _ = got
        if start_ == end:  # as the plan: the zero-width match may not fire here again
            fired = (fired if start_ == zw else frozenset()) | {d}
            zw = start_
        pos = end
        if pos >= n:
            return


def _close_scan() -> tuple[Any, TriggerScan]:
    tpl = load_template(get_template("llama4-json"))
    watch = tpl.close_watches[tpl.by_name["tool_calls"].index]
    scan = lead_scan(watch)
    assert isinstance(scan, TriggerScan)
    return watch, scan


def test_a_zero_width_answer_fired_at_pos_is_not_tried_again():
    """Llama 4's `}{`: the close `(?<=\\})(?=...)` matched at the `{` with zero width and fired there; the next
    close search from that position tries the regex only at the next candidate (the end of the second call),
    where it tried the position it had already matched first (and `_search` called `_here` per candidate)."""
    watch, scan = _close_scan()
    text = '{"name": "f", "parameters": {}}{"name": "g", "parameters": {}}\n<|eot|>'
    tries: list[int] = []
    d, w, fast, span, timed = scan.one

    def counted(window: str, i: int) -> Any:
        tries.append(i)
        return fast(window, i)

    scan.one = (d, w, counted, span, timed)
    finds = scan.fresh(text, 0)
    first = scan.end(text, 0, -1, frozenset(), 1.0, finds)
    p = text.index("}{") + 1
    assert first == (p, p, d, None)
    del tries[:]
    calls = []
    here = TriggerScan._here
    try:
        TriggerScan._here = lambda self, *a: calls.append(a) or here(self, *a)  # type: ignore[method-assign]
        second = scan.end(text, p, p, frozenset({d}), 1.0, finds)
    finally:
        TriggerScan._here = here  # type: ignore[method-assign]
    q = text.index("\n<|eot|>")
    assert second[:2] == (q, len(text)) and second[2] is d
    assert tries == [q] and calls == []
    assert second == watch.scan_end(text, p, p, frozenset({d}), frozenset(), 1.0, {})


def test_llama4_parses_as_before():
    text = '{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}\n<|eot|>'
    got = parse_response(text, "llama4-json", prefix="")
    assert [c["function"]["name"] for c in got["tool_calls"]] == ["f", "g"]


def test_start_only_sees_every_offset_0_anchor():
    """`end_search.start_only`: True wherever `end_plan`'s trigger may miss a match at offset 0 (an anchored
    path, even inside a group or an alternation: `(?:^|x)abc`'s trigger finds `xabc` only)."""
    from hf_response_templates.end_search import end_plan, start_only

    assert end_plan(r"(?:^|x)abc")[0] == "xabc()"
    for source in (r"^\s*(?=\{)|<\|eot\|>", r"(?:^|x)abc", r"\Aabc|x", r"(?=^a)b|c", r"(?>a)b"):
        assert start_only(source), source
    for source in (r"(?<=\})(?=\s*(?:;\s*)?\{\s*\"name\"\s*:)|\s*<\|python_end\|>|\s*<\|eot\|>", r"a\Z", r"[ab]c\b"):
        assert not start_only(source), source


def test_llama4_close_reads_offset_0_by_its_trigger_alone():
    """The close watch has no anchored alternative (`at0` False: no `_here` at offset 0); the idle watch does."""
    watch, scan = _close_scan()
    assert scan.at0 is False
    tpl = load_template(get_template("llama4-json"))
    assert lead_scan(tpl.idle_watch).at0 is True
    calls = []
    here = TriggerScan._here
    try:
        TriggerScan._here = lambda self, *a: calls.append(a) or here(self, *a)  # type: ignore[method-assign]
        for text in ("\n<|eot|>", "<|eot|>", " \n <|python_end|>x", "}{\"name\": 1}", "", "x}", "}; {\"name\":"):
            for zw, fired in ((-1, frozenset()), (0, frozenset(watch.delimiters))):
                got = scan.end(text, 0, zw, fired, 1.0, scan.fresh(text, 0))
                assert got == watch.scan_end(text, 0, zw, fired, frozenset(), 1.0, {}), text
    finally:
        TriggerScan._here = here  # type: ignore[method-assign]
    assert calls == []


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SCANS), st.lists(st.sampled_from(_FRAGS), max_size=12),
       st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=10))
def test_end_from_increasing_positions_with_zero_width_skips_equals_scan_end(entry, frags, steps):
    """The state kept between calls (an answer found past a zero-width match skipped at `pos` is kept from
    `pos + 1`): calls from positions that go up by 0-3, each either with the last zero-width answer fired at
    its position or with nothing fired, compared with `Watch.scan_end` (and a second call alike)."""
    name, watch, scan = entry
    text = "".join(frags)
    finds = scan.fresh(text, 0)
    pos, zw, fired = 0, -1, frozenset()
    for step, fire in steps:
        pos = min(pos + step, len(text))
        if not fire or zw > pos:
            zw, fired = -1, frozenset()
        try:
            want = watch.scan_end(text, pos, zw, fired, frozenset(), 1.0, {})
        except DelimiterTimeout:
            return
        got = scan.end(text, pos, zw, fired, 1.0, finds)
        again = scan.end(text, pos, zw, fired, 1.0, finds)
        assert got == again == want, (name, text, pos, zw, fired)
        if fire and got.__class__ is not int and got[0] == got[1]:
            zw, fired = got[0], (fired if got[0] == zw else frozenset()) | {got[2]}
            pos = got[0]


def test_an_answer_past_a_skipped_zero_width_match_is_kept_past_its_position_only():
    """Llama 4's `}{`: the close search from the `{` with the close fired there skips it and finds the next
    close; asked again from a later position (the next call's `{`) it answers from the state without trying the
    regex, but asked again at the `{` with nothing fired there the zero-width close is the answer."""
    watch, scan = _close_scan()
    text = '{"name": "f", "parameters": {}}{"name": "g", "parameters": {}}{"name": "h", "parameters": {}}\n<|eot|>'
    d = scan.one[0]
    p = text.index("}{") + 1
    q = text.index("}{", p) + 1
    finds = scan.fresh(text, 0)
    assert scan.end(text, 0, -1, frozenset(), 1.0, finds) == (p, p, d, None)
    assert scan.end(text, p, p, frozenset({d}), 1.0, finds) == (q, q, d, None)
    assert finds[0] == p + 1  # (kept past `p` only)
    tries: list[int] = []
    _d, w, fast, span, timed = scan.one
    scan.one = (d, w, lambda window, i: tries.append(i) or fast(window, i), span, timed)
    try:
        assert scan.end(text, q, q, frozenset({d}), 1.0, finds)[:2] == (text.index("\n<|eot|>"), len(text))
        assert tries == [text.index("\n<|eot|>")]  # (not `q` again: its answer was kept)
        for zw, fired in ((-1, frozenset()), (p, frozenset({d}))):
            assert scan.end(text, p, zw, fired, 1.0, scan.fresh(text, 0)) == watch.scan_end(
                text, p, zw, fired, frozenset(), 1.0, {})
        finds = scan.fresh(text, 0)
        scan.end(text, p, p, frozenset({d}), 1.0, finds)
        assert scan.end(text, p, -1, frozenset(), 1.0, finds) == (p, p, d, None)  # (nothing fired at `p` now)
    finally:
        scan.one = (d, w, fast, span, timed)
