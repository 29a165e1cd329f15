"""A parser's start state, cached per template and cut prefix (`parser_start.py`, issue 19).

In the default configuration a new `ResponseParser` takes its whole state after the cut prefix from one cached
tuple (`parser_start.start`) instead of `_setup` and a run of the cut. Pinned here:

* `parser_start.SLOTS` and `FRESH` are every slot of the parser, once;
* a parser from the cache holds exactly what one built the slow way holds (every slot, for every shipped template
  and several prompts), sharing nothing mutable with it nor with the cache;
* with `tools=`, a parser from the cache types tool calls as one built the slow way (hypothesis: any chunking);
* a timed start anchor search (a long prompt, a pattern proven bounded only up to 4,096 characters) still counts
  against the regex budget when the state comes from the cache.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled

from hf_response_templates import ResponseParser, get_template, list_templates, load_template
from hf_response_templates import parser_start as start

_NAMES = list_templates()
_MUTABLE = {list, dict, set}


def _fresh(tpl) -> None:
    tpl.__dict__.pop("_prefix_states", None)


def _slow(tpl, prefix: str, **kw) -> ResponseParser:
    """A parser built the slow way (`_setup` and a run of the cut), as a cache miss builds it."""
    states = tpl.__dict__.pop("_prefix_states", None)
    try:
        return ResponseParser(tpl, prefix, **kw)
    finally:
        tpl.__dict__.pop("_prefix_states", None)
        if states is not None:
            object.__setattr__(tpl, "_prefix_states", states)


def _state(p: ResponseParser) -> dict:
    out = {}
    for name in ResponseParser.__slots__:
        try:
            out[name] = getattr(p, name)
        except AttributeError:
            out[name] = "<unset>"
    return out


def test_the_slots_are_split_once():
    slots = set(ResponseParser.__slots__)
    assert set(start.SLOTS) | start.FRESH == slots
    assert not set(start.SLOTS) & start.FRESH
    assert len(start.SLOTS) == len(set(start.SLOTS))


def _prompts(name: str) -> list[str]:
    tpl = load_template(get_template(name))
    anchor = tpl.start_anchor.literals[0] if tpl.start_anchor.literals else (tpl.anchor_texts or ("",))[0]
    return ["", "system text " + anchor, "user " + anchor + "<think>\n", "user " + anchor + "<think>", anchor + "\n"]


@pytest.mark.parametrize("name", _NAMES)
def test_a_parser_from_the_cache_holds_what_the_slow_way_builds(name):
    tpl = load_template(get_template(name))
    _fresh(tpl)
    for prefix in _prompts(name):
        first = ResponseParser(tpl, prefix)  # (records the state, if it can)
        if tpl.cut_prefix(prefix) not in tpl.__dict__.get("_prefix_states", {}):
            assert first._mk is not None or first._assigned or first._unclaimed, (name, prefix)  # (not shareable)
            continue
        cached = ResponseParser(tpl, prefix)
        slow = _slow(tpl, prefix)
        a, b = _state(cached), _state(slow)
        assert a.keys() == b.keys()
        for key in a:
            if key in ("_left", "_call_timeout", "_t0"):
                continue  # the slow way's prefix scan was timed and spent a little of the budget: the cache's was not
            if key == "_acc":  # `feed()`'s accumulator: made alike (none, or an empty one of the parser's own)
                assert (a[key] is None) == (b[key] is None), (name, prefix)
                if a[key] is not None:
                    assert a[key].__self__.getvalue() == b[key].__self__.getvalue() == ""
                    assert a[key].__self__ is not b[key].__self__
                    assert a[key].__self__ is not getattr(first._acc, "__self__", None)
                continue
            assert a[key] == b[key], (name, prefix, key)
            if a[key].__class__ in _MUTABLE and a[key]:
                assert a[key] is not b[key] and a[key] is not getattr(first, key), (name, key)
        assert cached._left == cached._budget
        for e, f in zip(cached.initial_events, first.initial_events, strict=True):
            assert e is not f
    _fresh(tpl)


def test_a_state_is_recorded_only_in_the_default_configuration():
    tpl = load_template(get_template("qwen3.5"))
    _fresh(tpl)
    prefix = "<|im_start|>assistant\n<think>\n"
    ResponseParser(tpl, prefix, regex_timeout=0.5)
    ResponseParser(tpl, prefix, policy={"tool_calls_in_reasoning": "reasoning"})
    assert not tpl.__dict__.get("_prefix_states")
    ResponseParser(tpl, prefix, tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}])
    assert "<think>\n" in tpl.__dict__["_prefix_states"]
    _fresh(tpl)


def test_a_timed_anchor_search_counts_against_the_budget_from_the_cache():
    tpl = load_template(get_template("granite-3.3"))
    assert tpl.start_anchor.literals is None and tpl.start_anchor.untimed_search == 4096
    _fresh(tpl)
    prefix = "x" * 5000 + "<|start_of_role|>assistant<|end_of_role|>"
    ResponseParser(tpl, prefix)
    assert "" in tpl.__dict__["_prefix_states"]
    p = ResponseParser(tpl, prefix)
    assert p._left < p._budget  # the search is timed and counted, as `_setup` counts it
    assert p._call_timeout == min(p._timeout, p._left)
    p.feed("Hi")
    assert p.finalize()[0]["content"] == "Hi"
    _fresh(tpl)


_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"days": {"type": "integer"}, "city": {"type": "string"}}}}}]
_BODIES = {
    "qwen3": ("<|im_start|>assistant\n", '<think>a</think>Hi<tool_call>\n{"name": "get_weather", "arguments": '
              '{"city": "Paris", "days": "3"}}\n</tool_call><|im_end|>'),
    "qwen3.5": ("<|im_start|>assistant\n<think>\n", 'Hm</think>\n\nHi<tool_call>\n<function=get_weather>\n'
                '<parameter=days>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>'),
    "deepseek-r1": ("<｜Assistant｜><think>\n", "Hm</think>Hi<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
                    '<｜tool▁sep｜>get_weather\n```json\n{"days": "3"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
}


@given(st.sampled_from(sorted(_BODIES)), st.data())
@settings(max_examples=scaled(60), deadline=None)
def test_a_parser_from_the_cache_with_tools_streams_as_the_slow_way(name, data):
    tpl = load_template(get_template(name))
    prefix, text = _BODIES[name]
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=12)))
    bounds = [0, *cuts, len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]

    def stream(p):
        events = list(p.initial_events)
        for c in chunks:
            events += p.feed(c)
        message, final = p.finalize()
        return message, merge_chunks(events + final)

    ResponseParser(tpl, prefix, tools=_TOOLS)  # (records the state)
    cached = stream(ResponseParser(tpl, prefix, tools=_TOOLS))
    slow = stream(_slow(tpl, prefix, tools=_TOOLS))
    assert cached == slow
    assert cached[0]["tool_calls"][0]["function"]["arguments"]["days"] == 3  # typed by the schema


class _NoMatch:
    """A start anchor's pattern that must not be called (`cut_prefix` of prefix-free fixed texts)."""

    def __init__(self, pattern):
        self.pattern = pattern

    def match(self, *a):
        raise AssertionError("the anchor's regex was called")


@pytest.mark.parametrize("name", [n for n in _NAMES if load_template(get_template(n)).anchor_texts
                                  and load_template(get_template(n)).start_anchor.literals is None])
def test_an_anchor_of_prefix_free_texts_is_cut_without_a_regex_call(name):
    import regex

    tpl = load_template(get_template(name))
    texts = tpl.anchor_texts
    assert tpl.anchor_prefix_free == (not any(a != b and b.startswith(a) for a in texts for b in texts))
    prompts = ["", "no anchor", *("a" + t + "b" + u + "\n" for t in texts for u in texts), texts[0] * 3]
    anchor = tpl.start_anchor
    fast = anchor.fast
    if tpl.anchor_prefix_free:
        object.__setattr__(anchor, "fast", _NoMatch(fast))
    try:
        for prompt in prompts:
            last = None
            for m in regex.finditer(anchor.pattern.pattern, prompt):
                last = m
            assert tpl.cut_prefix(prompt) == (prompt if last is None else prompt[last.end():]), (name, prompt)
    finally:
        object.__setattr__(anchor, "fast", fast)
