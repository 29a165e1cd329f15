"""`lead_scan.LeadScan`: the one-shot plan's scan of a watch whose delimiters all start with fixed texts gives
exactly `Watch.scan_end`'s answer (issue 19).

Every watch of every shipped template that has a `LeadScan` (idle, closes, late watches) is asked, on texts
made of its own fixed texts, beginnings of them and the characters around them, from non-decreasing
positions (as the plan asks: the finds list is kept for the whole text), with and without a zero-width
match that fired at the position (the plan clears `scan_end`'s memo then, and keeps the finds).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template
from hf_response_templates.delimiters import DelimiterTimeout, Watch
from hf_response_templates.lead_scan import LeadScan, lead_scan
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.plan import plan_for


def _watches() -> list[tuple[str, Watch, LeadScan]]:
    out = []
    for name in list_templates():
        tpl = load_template(get_template(name))
        watches = [tpl.idle_watch, *tpl.close_watches]
        watches += [w.late for w in watches if w is not None and w.late is not None and w.late is not w]
        for w in watches:
            scan = lead_scan(w) if w is not None else None
            if scan is not None:
                out.append((name, w, scan))
    return out


WATCHES = _watches()
#: The watches used only once the stream has moved past offset 0 (`Watch.late`: a watch with delimiters that can
#: match only at the start); the plan never asks them at 0, so neither do the tests.
_LATE = {id(w.late) for _, w, _ in WATCHES if w.late is not None and w.late is not w}
_NOISE = [" ", "\n", "{", "}", '"', "a", "x y", "[ARGS]", "[CALL_ID]", "get_weather", '{"a": 1}', "=", "<", ">",
          "[", "]", ":", "call:", "(", ")", "name", "{\"name\":", "[f(", "<|python_tag|>", ";", "```", "\n```json\n",
          " to=functions.f ", "<|channel|>commentary", "<|channel|>analysis", "<|message|>", "<|constrain|>json",
          "<|start|>assistant", "<|python_end|>", "<|eot|>", '{"name": "f"}', "}}", "<|python_start|>"]


def test_the_mistral_family_and_others_have_lead_scans():
    """The watches this is for: Mistral's `[TOOL_CALLS]` open and `(?=\\[TOOL_CALLS\\])|</s>` close, MiniMax's."""
    names = {name for name, _, _ in WATCHES}
    assert {"mistral-small-3.2", "ministral-3", "minimax-m2", "qwen3.5", "deepseek-r1"} <= names
    assert len(WATCHES) >= 40


def test_a_watch_of_literals_with_different_first_characters_has_a_lead_scan():
    """Mistral Small 3.1's idle `[TOOL_CALLS]` / `</s>` (literals only, two `str.find` finders): a `LeadScan`,
    which the plan reads (not `Watch.scan_end`'s `_literal_end`), and which the tests below compare with
    `scan_end`; a watch of one literal or of literals one alternation finds keeps the plan's own search."""
    tpl = load_template(get_template("mistral-small-3.1"))
    idle = tpl.idle_watch
    assert idle.only_literals and len(idle.lit_finders) == 2
    scan = lead_scan(idle)
    assert isinstance(scan, LeadScan) and set(scan.texts) == {"[TOOL_CALLS]", "</s>"}
    # (by name and texts: WATCHES was compiled at collection, and the template cache may hold another object now)
    assert any(n == "mistral-small-3.1" and set(s.texts) == {"[TOOL_CALLS]", "</s>"} for n, _, s in WATCHES)
    assert plan_for(tpl)._ones[idle][2] is not None
    for name in list_templates():
        t = load_template(get_template(name))
        for w in (t.idle_watch, *t.close_watches):
            if w is not None and w.only_literals and len(w.lit_finders) < 2:
                assert lead_scan(w) is None


def test_a_watch_with_a_regex_without_fixed_leading_text_has_no_lead_scan_but_a_trigger_scan():
    """Llama 4's `\\s*<|eot|>`-led delimiters can start with any space: no `LeadScan` (`fixed_scan`), a
    `TriggerScan` (`lead_scan`), whose answers the tests below compare with `scan_end`'s."""
    from hf_response_templates.lead_scan import fixed_scan
    from hf_response_templates.trigger_scan import TriggerScan
    tpl = load_template(get_template("llama4-json"))
    watches = [tpl.idle_watch, *(w for w in tpl.close_watches if w is not None and not w.only_literals)]
    assert len(watches) == 2
    assert all(fixed_scan(w) is None for w in watches)
    assert all(isinstance(lead_scan(w), TriggerScan) for w in watches)
    kinds = {name: scan.__class__ for name, _, scan in WATCHES}
    assert {n for n, k in kinds.items() if k is TriggerScan} >= {"llama4-json", "deepseek-r1", "internlm2"}


def test_the_plan_uses_them():
    tpl = load_template(get_template("mistral-small-3.2"))
    plan = plan_for(tpl)
    assert plan is not None
    kinds = [one[2].__class__ for one in plan._ones.values() if one[0] is None and one[1] is None]
    assert kinds.count(LeadScan) == 2  # the idle watch and the tool call's close


@st.composite
def _script(draw):
    name, watch, scan = draw(st.sampled_from(WATCHES))
    texts = getattr(scan, "texts", None) or [lit for lit, _ in scan.lits]  # (a `TriggerScan`: its literals)
    frags = [*texts, *(t[: max(1, len(t) // 2)] for t in texts), *_NOISE]
    text = "".join(draw(st.lists(st.sampled_from(frags), max_size=14)))
    steps = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 255)), min_size=1,
                          max_size=6))
    return name, watch, scan, text, steps


@settings(max_examples=1500, deadline=None)
@given(_script())
def test_lead_scan_equals_scan_end(script):
    name, watch, scan, text, steps = script
    n = len(text)
    finds = scan.fresh(text, 0)
    memo: dict = {}
    pos, zw, fired = (1 if id(watch) in _LATE and n else 0), -1, frozenset()
    regexes = watch.regexes
    for advance, event, pick in steps:
        pos = min(n, pos + advance)
        if event == 0:  # a zero-width match fired here: some of this watch's regexes may not match empty here
            zw = pos
            fired = frozenset(d for k, d in enumerate(regexes) if pick >> k & 1)
            memo.clear()
        elif event == 1 and zw != pos:
            zw, fired = -1, frozenset()
            memo.clear()
        try:
            want = watch.scan_end(text, pos, zw, fired, frozenset(), 1.0, memo)
        except DelimiterTimeout:
            want = "timeout"
        try:
            got = scan.end(text, pos, zw, fired, 1.0, finds)
        except DelimiterTimeout:
            got = "timeout"
        assert got == want, (name, text, pos, zw, sorted(d.source for d in fired))


@pytest.mark.parametrize("text, want", [
    ("Hi</s>", (2, 6, "content", None)),
    ("[TOOL_CALLS]f[ARGS]{}</s>", (0, 19, "tool_calls", {"name": "f"})),
    ("a [TOOL_CALLS] b</s>", (16, 20, "content", None)),  # `[TOOL_CALLS]` then a space: no open there
    ("no delimiter", 12),
])
def test_mistral_idle_scan(text, want):
    tpl = load_template(get_template("mistral-small-3.2"))
    scan = lead_scan(tpl.idle_watch)
    got = scan.end(text, 0, -1, frozenset(), 1.0, scan.fresh(text, 0))
    if isinstance(want, int):
        assert got == want
    else:
        assert (got[0], got[1], got[2].field, got[3]) == want


def test_a_zero_width_match_skipped_at_zw_is_found_again_by_a_later_call_that_does_not_skip_it():
    """The finds list keeps a find where a fired zero-width match was skipped: the next call at that position
    with fewer fired delimiters (the plan never does that, but the scan does not rely on it) finds it."""
    tpl = load_template(get_template("mistral-small-3.2"))
    close = tpl.close_watches[tpl.by_name["tool_calls"].index]
    scan = lead_scan(close)
    text = "{}[TOOL_CALLS]g{}</s>"
    finds = scan.fresh(text, 0)
    lookahead = next(d for d in close.regexes)
    got = scan.end(text, 2, 2, frozenset({lookahead}), 1.0, finds)
    assert got[:2] == (17, 21)  # `</s>`: the zero-width match at 2 fired there
    got = scan.end(text, 2, -1, frozenset(), 1.0, finds)
    assert got[:2] == (2, 2)


def _regex(source: str):
    from hf_response_templates.delimiters import CLOSE, Delimiter, compile_regex
    return Delimiter("f", CLOSE, "close_pattern", None, compile_regex(source), source)


@pytest.mark.parametrize("source, text, width", [
    (r"(?=\[TOOL_CALLS\])|</s>", "[TOOL_CALLS]", 0),  # the lookahead matches where its text is: zero width
    (r"(?=\[TOOL_CALLS\])|</s>", "</s>", 4),  # the lookahead fails there (another text), `</s>` matches
    (r"</think>|(?=<minimax:tool_call>)|(?=<think>)", "<think>", 0),
    (r"</s>|(?=</s>)", "</s>", 4),  # the first alternative that matches wins, not the longest
    (r"(?=</s>)|</s>", "</s>", 0),
    (r"(?=<tool_call>x)|</s>", "<tool_call>", None),  # longer than the text: depends on what follows
    (r"(?i)</s>", "</s>", None),  # case-insensitive: not read here
    (r"(?P<n></s>)", "</s>", None),  # a capture: its groups are the regex's to give
    (r"<a>\s*|</s>", "<a>", None),  # more than a fixed text
    (r"<x>|<y>", "<z>", None),  # no alternative matches there: left to the regex
])
def test_sure_width(source, text, width):
    """Where the regex's match at a find of its text is known from its structure, no regex call is made."""
    from hf_response_templates.lead_scan import _sure_width
    assert _sure_width(_regex(source), text) == width
    if width is not None:  # what the regex itself says, at the text followed by anything
        for after in ("", "x", "</s>", "[TOOL_CALLS]"):
            m = _regex(source).pattern.match(text + after, 0)
            assert m is not None and m.end() == width


def test_watches_of_texts_sharing_their_first_character_search_their_alternation():
    """`LeadSearch`: one `re` search of the texts' alternation where they share a first character (Kimi K3's
    six `<|open|>...` / `<|close|>...` texts, Qwen3-Coder's, GLM's); not where they do not (Mistral's
    `[TOOL_CALLS]` and `</s>`), nor for one text alone (Kimi K3's `(?=<)`)."""
    from hf_response_templates.lead_scan import LeadSearch
    kinds = {}
    for name, _watch, scan in WATCHES:
        if isinstance(scan, LeadScan):
            kinds.setdefault(name, []).append((scan.__class__, len(scan.texts)))
    assert (LeadSearch, 6) in kinds["kimi-k3"] and (LeadScan, 1) in kinds["kimi-k3"]
    assert all(k is LeadSearch for k, _ in kinds["qwen3-coder"] + kinds["glm-4.7"] + kinds["deepseek-r1"])
    assert all(k is LeadScan for k, _ in kinds["mistral-small-3.2"])
    assert sum(k is LeadSearch for ks in kinds.values() for k, _ in ks) >= 25


_NESTED = [(name, watch, scan) for name, watch, scan in WATCHES if isinstance(scan, LeadScan) and not scan.alone
           and len({t[0] for t in scan.texts}) == 1]


def test_texts_of_which_one_begins_another_are_searched_longest_first():
    """Kimi K2's idle watch (`<|tool_calls_section_begin|>` begins one of its content's closes): a `LeadSearch`
    (it was five `str.find` and a loop over the texts at each find), the longer text first, whose tries at a
    find of it hold the shorter one's too."""
    from hf_response_templates.lead_scan import LeadSearch
    assert "kimi-k2" in {name for name, _, _ in _NESTED}
    scan = lead_scan(load_template(get_template("kimi-k2")).idle_watch)
    assert scan.__class__ is LeadSearch and not scan.alone
    assert list(scan.texts) == sorted(scan.texts, key=len, reverse=True)
    both = scan.texts.index("<|tool_calls_section_begin|><|tool_calls_section_end|>")
    assert len(scan.at[both]) == 2 and scan.only[both] is None
    assert all(isinstance(s, LeadSearch) for _, _, s in _NESTED)


@pytest.mark.parametrize("text, want", [
    ("Hi<|tool_calls_section_begin|><|tool_calls_section_end|>", (2, 56, "content")),  # the longer literal
    ("Hi<|tool_calls_section_begin|> <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}",
     (2, 91, "tool_calls")),  # the open regex led by the shorter text
    ("Hi<|tool_calls_section_begin|>x<|im_end|>", (31, 41, "content")),  # neither matches there: the next find
    ("<|tool_calls_section_end|>", (0, 26, "content")),
    ("<|tool_calls_section", 20),
])
def test_kimi_k2_idle_scan(text, want):
    tpl = load_template(get_template("kimi-k2"))
    scan = lead_scan(tpl.idle_watch)
    got = scan.end(text, 0, -1, frozenset(), 1.0, scan.fresh(text, 0))
    assert got == tpl.idle_watch.scan_end(text, 0, -1, frozenset(), frozenset(), 1.0, {})
    if isinstance(want, int):
        assert got == want
    else:
        assert (got[0], got[1], got[2].field) == want


@st.composite
def _nested_script(draw):
    name, watch, scan = draw(st.sampled_from(_NESTED))
    frags = [*scan.texts, *(t[: max(1, len(t) // 2)] for t in scan.texts), " ", "\n", "functions.f:0", "x",
             "<|tool_call_argument_begin|>", "{}", "<|"]
    text = "".join(draw(st.lists(st.sampled_from(frags), max_size=12)))
    steps = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 255)), min_size=1,
                          max_size=6))
    return name, watch, scan, text, steps


@settings(max_examples=300, deadline=None)
@given(_nested_script())
def test_lead_search_of_nested_texts_equals_scan_end(script):
    """`test_lead_scan_equals_scan_end` on the watches whose texts begin one another, often."""
    test_lead_scan_equals_scan_end.hypothesis.inner_test(script)


@pytest.mark.parametrize("pos, want", [
    (0, (0, 20, "reasoning_content")),
    (1, (67, 87, "tool_section")),  # `<|open|>thin` and `<|open|>call tool="f<|sep|>...` open nothing
    (80, (87, 115, "tool_calls", {"name": "f"})),
    (110, (128,)),
])
def test_lead_search_finds_the_first_text_that_opens_something(pos, want):
    """Kimi K3's idle watch: the first find whose delimiter matches; a find whose regex fails there (a call
    header cut short) is passed, and so is a beginning of a text."""
    tpl = load_template(get_template("kimi-k3"))
    scan = lead_scan(tpl.idle_watch)
    text = '<|open|>think<|sep|>x<|open|>thin<|open|>call tool="f<|sep|> y < z <|open|>tools<|sep|>' \
           '<|open|>call tool="f"<|sep|>{}<|close|>ca'
    assert len(text) == 128 and text.index("<|open|>tools") == 67
    finds = scan.fresh(text, pos)
    got = scan.end(text, pos, -1, frozenset(), 1.0, finds)
    assert got == tpl.idle_watch.scan_end(text, pos, -1, frozenset(), frozenset(), 1.0, {})
    if len(want) == 1:
        assert got == want[0]
    else:
        assert (got[0], got[1], got[2].field, got[3]) == (*want, None)[:4]
    assert scan.end(text, pos, -1, frozenset(), 1.0, finds) == got  # (the find kept: the same answer)


@pytest.mark.parametrize("name, text, want", [
    ("llama3", '  {"name": "f", "parameters": {}}<|eot_id|>', (0, 2, "tool_calls")),  # `^\s*(?=\{...)`: zero width
    ("llama3", '<|python_tag|>{"name": "f"}', (0, 14, "tool_calls")),
    ("llama3", "Hi {\"name\": 1}<|eot_id|>", (14, 24, "content")),  # not at offset 0: the close
    ("llama3", "<|eot_id|>", (0, 10, "content")),
    ("llama3.2-pythonic", " [f(a=1)]<|eom_id|>", (0, 1, "tool_calls")),
    ("xlam-qwen", 'x [{"name": "f"}]', 17),
])
def test_a_regex_anchored_at_offset_0_is_tried_there_alone(name, text, want):
    """The idle watch while the stream is at offset 0: an open that matches only there (no fixed text) is tried
    at 0 and nowhere else; `scan_end` gives the same answer."""
    tpl = load_template(get_template(name))
    watch = tpl.idle_watch
    scan = lead_scan(watch)
    assert scan is not None and len(scan.start) == 1
    got = scan.end(text, 0, -1, frozenset(), 1.0, scan.fresh(text, 0))
    assert got == watch.scan_end(text, 0, -1, frozenset(), frozenset(), 1.0, {})
    if isinstance(want, int):
        assert got == want
    else:
        assert (got[0], got[1], got[2].field) == want
    if got.__class__ is tuple and got[0] == got[1] == 0:  # fired there: not again (the plan's next scan at 0)
        again = scan.end(text, 0, 0, frozenset({got[2]}), 1.0, scan.fresh(text, 0))
        assert again == watch.scan_end(text, 0, 0, frozenset({got[2]}), frozenset(), 1.0, {})
        assert again.__class__ is int or again[2] is not got[2]


@given(st.lists(st.sampled_from(["<a>", "[B]", "</s>", "x", "{c}", "<|d|>", " "]), max_size=12).map("".join),
       st.integers(0, 30), st.integers(1, 6))
def test_fresh_is_each_texts_first_find_whatever_the_width(text, pos, width):
    # `fresh` searches one to three texts without its loop: the loop's answer
    texts = ("<a>", "[B]", "</s>", "{c}", "<|d|>", "x")[:width]
    scan = LeadScan(texts, tuple(((None, len(t)),) for t in texts))
    pos = min(pos, len(text))
    assert scan.fresh(text, pos) == [text.find(t, pos) if text.find(t, pos) >= 0 else len(text) for t in texts]
