"""`end_search.end_finder` (issue 19): the end-of-stream search of a regex delimiter without one fixed leading
text, tried only at candidate positions (after a lookbehind's character, in the run of spaces before a fixed
text, at a fixed text of an alternative that can match past offset 0), must find exactly what the plain search
(`delimiters._search_regex` at the end of the stream) finds, from every start position, on texts made of the
pieces those delimiters are built from; and `Watch.scan_end` takes it instead of the plain search."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import delimiters as delim_mod
from hf_response_templates import load_template
from hf_response_templates.delimiters import Delimiter, _match_at, _search_regex, compile_regex
from hf_response_templates.end_search import MAX_MISSES, end_finder, end_plan
from hf_response_templates.library import get_template, list_templates


def _delimiter(source: str) -> Delimiter:
    return Delimiter("f", delim_mod.CLOSE, "close_pattern", None, compile_regex(source), source)


#: Shipped regex delimiters without fixed leading texts, and hand-made ones around the same structures.
HAND = [
    r"(?<=\})(?=\s*(?:;\s*)?\{\s*\"name\"\s*:)|\s*<\|python_end\|>|\s*<\|eot\|>|\s*<\|eom\|>",
    r"^\s*(?:<\|python_start\|>\s*)?(?=\{\s*\"name\"\s*:)|(?<=\})\s*(?:;\s*)?(?=\{\s*\"name\"\s*:)",
    r"(?<=\)\s*\])|(?=<end_of_turn>)",
    r"^\s*助手：|<answer>",
    r"\s*\}\s*<\|eot\|>",
    r"\s+<a>|<ab>",  # a text that starts with another one: both forms count at a find of the longer one
    r"(?<=\]) *x|\n*\}",
    r"(?<=[;}])\s*(?=\{)|\s*</s>",
    r"x\s*y|\s*z",
    r"^x",  # nothing past offset 0: the finder never matches
    r"\s*ab|\s*a\s*c",  # what follows a text (`_follow_of`): the shorter text's `a` must be followed by `[spaces]*c`
    r"\s*x\s+y|\s*x<y",  # two alternatives of one text: either follower
    r"\s*x\s*z|\s*x",  # one alternative of the text with nothing after it: no follower asked
    r" *\}(?=\s*;)| *\}\s*(?:b|c)",
    r"\s*\}\s*<\|action_end\|>",
]

#: Pieces the texts are made of: the delimiters' fixed texts, their beginnings, spaces, brackets.
PIECES = ["{", "}", ";", " ", "\n", "\t", '"name"', ":", "<|eot|>", "<|eom|>", "<|python_end|>", "<|py", "]", ")",
          "<end_of_turn>", "<answer>", "助手：", "x", "y", "z", "a", "<a>", "<ab>", "</s>", "\\", '"', "b", "c", "<|action_end|>",
          "<|action"]


def _shipped() -> list[str]:
    out = []
    for name in list_templates():
        tpl = load_template(get_template(name))
        for w in (tpl.idle_watch, *tpl.close_watches, tpl.late_idle_watch, *tpl.late_close_watches):
            if w is not None:
                out.extend(d.source for d in w.end_finders)
    return sorted(set(out))


SOURCES = sorted(set(HAND) | set(_shipped()))


def _reference(d: Delimiter, window: str, start: int):
    found = _search_regex(d, window, start, True, -1, None)
    return None if found is None else found[:3]


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=40))
def test_finder_equals_the_plain_search(source, pieces):
    d = _delimiter(source)
    find = end_finder(d, _match_at, _search_regex)
    assert find is not None
    window = "".join(pieces)
    for start in range(1, len(window) + 1):
        assert find(window, start, None) == _reference(d, window, start), (window, start)


def test_finders_of_the_shipped_templates():
    """The delimiters the one-shot search of Llama 4, Gemma 3 and Hunyuan reads by candidates (a finder lost
    in a refactoring shows here)."""
    shipped = _shipped()
    assert r"(?<=\)\s*\])|(?=<end_of_turn>)" in shipped
    assert r"^\s*助手：|<answer>" in shipped
    assert sum("python_end" in s for s in shipped) == 1  # Llama 4 JSON's tool-call close
    assert sum(s.startswith("^") and "|(?<=" in s for s in shipped) == 1  # and its open


@pytest.mark.parametrize("source", [
    r"\s*\s<x>",  # a fixed text that starts with a run character: a run could reach back over an earlier find
    r"(?<=\s)x|\s*y",  # a lookbehind character that is a run character
    r"(?m)^x|<y>",  # `^` after any newline
    r"[^<]*<x>",  # a run of a class that is not small
    r"(?=\w)",  # no fixed text, no lookbehind
    r"(?<=a)x|a",  # a lookbehind character that starts a fixed text: one trigger find could hide the other
])
def test_no_finder_where_the_order_does_not_hold(source):
    assert end_plan(source) is None


def test_many_misses_hand_over_to_the_plain_search(monkeypatch):
    """After `MAX_MISSES` candidates that do not match, the rest is one plain search (a text full of `]`)."""
    d = _delimiter(r"(?<=\)\s*\])|(?=<end_of_turn>)")
    find = end_finder(d, _match_at, _search_regex)
    calls = []
    window = "x" + "a]" * 50 + "f(x)]" + "<end_of_turn>"

    def counted(*args):
        calls.append(args[3])
        return _match_at(*args)

    find = end_finder(d, counted, _search_regex)
    assert find(window, 1, None) == _reference(d, window, 1) == (len(window) - 13, len(window) - 13, None)
    assert len(calls) == MAX_MISSES


def test_scan_end_takes_the_finder(monkeypatch):
    """Llama 4's tool-call close is found by candidates, without a plain search of the regex."""
    tpl = load_template(get_template("llama4-json"))
    watch = tpl.close_watches[[f.name for f in tpl.fields].index("tool_calls")]
    (d,) = watch.regexes
    assert d in watch.end_finders
    searched = []
    monkeypatch.setattr(delim_mod, "_search_regex", lambda *a: searched.append(a) or _search_regex(*a))
    window = '{"name": "f", "parameters": {"a": {"b": 1}}}  {"name": "g", "parameters": {}}\n<|eot|>'
    got = watch.scan_end(window, 0, -1, frozenset(), frozenset(), None)
    assert got[:2] == (44, 44)
    got = watch.scan_end(window, 46, -1, frozenset(), frozenset(), None)
    assert got[:2] == (len(window) - 8, len(window))
    assert searched == []


def test_the_trigger_finds_a_text_only_where_what_must_follow_it_does():
    """internlm2's close `\\s*\\}\\s*<\\|action_end\\|>`: the trigger finds the `}` followed by spaces and
    `<|action_end|>` only, not every `}` of the call's arguments (each was a candidate tried by the regex)."""
    source, kinds = end_plan(r"\s*\}\s*<\|action_end\|>")
    import re
    text = '{"name": "f", "parameters": {"a": {"b": 1}, "c": {}}} \n<|action_end|>'
    finds = [m.start() for m in re.finditer(source, text)]
    assert finds == [text.rindex("}")]
    source, _ = end_plan(r"\s*ab|\s*a\s*c")
    assert [m.start() for m in re.finditer(source, "a x a  c ab")] == [4, 9]
    assert end_plan(r"\s*\}")[0] == r"\}()"  # (nothing after the text: every `}`)
