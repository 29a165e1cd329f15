"""The cut prefix's state, cached per template (`parser_start.py`, issue 19).

A chat template prefills the same few texts for every response (``<think>\\n`` after the start anchor), so
running the cut prefix through the state machine gives the same parser state every time. The first parser of
a template records what that run changed; the next ones copy it instead of scanning. Pinned here:

* a parser built from the cache streams exactly as one that ran the prefix itself, for every shipped
  template, any prefix (its cut) and any generation in any chunking (hypothesis);
* the cache hit runs no scan at all (a count), and shares nothing mutable between parsers;
* a prefix whose run stores a value, keeps text in ``unparsed`` or is not the default configuration is not
  cached (and still parses the same).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled
from test_delimiters_leads import _Count

from hf_response_templates import ResponseParser, get_template, list_templates, load_template

_NAMES = list_templates()


def _literal_texts(node) -> list[str]:
    """The fixed delimiter texts of a template dict (open, close, start_anchor), to build prompts from."""
    out: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("open", "close", "start_anchor"):
                out.extend([value] if isinstance(value, str) else [v for v in value if isinstance(v, str)])
            else:
                out.extend(_literal_texts(value))
    elif isinstance(node, list):
        for value in node:
            out.extend(_literal_texts(value))
    return out


_GENERIC = ["<think>", "<think>\n", "</think>", "\n", " ", "Hi", "a < b", '{"name": "f", "arguments": {"x": 1}}']


def _fresh(tpl) -> None:
    tpl.__dict__.pop("_prefix_states", None)


def _stream(tpl, prefix: str, chunks: list[str]):
    p = ResponseParser(tpl, prefix)
    events = list(p.initial_events)
    for c in chunks:
        events += p.feed(c)
    message, final = p.finalize()
    return message, merge_chunks(events + final)


def _cut(draw, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if a < b]


@st.composite
def _cases(draw):
    name = draw(st.sampled_from(_NAMES))
    src = get_template(name)
    pieces = _literal_texts(src) + _GENERIC
    prefix = "".join(draw(st.lists(st.sampled_from(pieces), max_size=4)))
    text = "".join(draw(st.lists(st.sampled_from(pieces), max_size=8)))
    return name, prefix, _cut(draw, text)


@given(_cases())
@settings(max_examples=scaled(300))
def test_cached_prefix_streams_as_the_prefix_run(case):
    name, prefix, chunks = case
    tpl = load_template(get_template(name))
    _fresh(tpl)
    ran = _stream(tpl, prefix, chunks)  # runs the cut (and caches it, if it can)
    cached = _stream(tpl, prefix, chunks)  # from the cache, if it was cached
    assert cached == ran
    _fresh(tpl)


@pytest.mark.parametrize("name", ["qwen3.5", "deepseek-r1", "kimi-k3", "glm-4.7", "seed-oss", "minimax-m2"])
def test_a_cache_hit_scans_nothing(name, monkeypatch):
    tpl = load_template(get_template(name))
    _fresh(tpl)
    anchor = tpl.start_anchor.literals
    prefill = {"kimi-k3": "<|open|>think<|sep|>", "glm-4.7": "<think>", "seed-oss": "\n"}.get(name, "<think>\n")
    regex_anchor = {"deepseek-r1": "<｜Assistant｜>", "glm-4.7": "<|assistant|>"}  # (a match of each one's pattern)
    prefix = "user turn" + (anchor[0] if anchor else regex_anchor[name]) + prefill
    assert tpl.cut_prefix(prefix) == prefill  # the prefix cuts to the prefill these templates write
    runs = _Count(ResponseParser._run)
    monkeypatch.setattr(ResponseParser, "_run", lambda self, *a: runs(self, *a))
    first = ResponseParser(tpl, prefix)
    assert runs.calls == 1
    second = ResponseParser(tpl, prefix)
    assert runs.calls == 1  # the cut prefix was not run again
    assert prefill in tpl.__dict__["_prefix_states"]
    # the same state, sharing nothing mutable
    assert second.initial_events == first.initial_events
    assert second._body == first._body and second._body is not first._body
    for e, f in zip(second.initial_events, first.initial_events, strict=True):
        assert e is not f
    if first.initial_events:
        first.initial_events[0]["mutated"] = True
    first._body.append("x")
    third = ResponseParser(tpl, prefix)
    assert third.initial_events == second.initial_events
    assert third._body == second._body
    _fresh(tpl)


def test_a_run_that_stores_a_value_is_not_cached():
    tpl = load_template(get_template("qwen3"))
    _fresh(tpl)
    prefix = "<|im_start|>assistant\n<think>Hm</think>So"  # the reasoning is stored by the prefix's run
    for _ in range(2):
        p = ResponseParser(tpl, prefix)
        p.feed(" hello")
        message, _ = p.finalize()
        assert message["reasoning_content"] == "Hm" and message["content"] == "So hello"
    assert not tpl.__dict__.get("_prefix_states")
    _fresh(tpl)


def test_not_cached_outside_the_default_configuration():
    tpl = load_template(get_template("qwen3.5"))
    _fresh(tpl)
    prefix = "<|im_start|>assistant\n<think>\n"
    p = ResponseParser(tpl, prefix, trace=True)  # trace adds `delimiter` events: not the cached state
    assert any(e["type"] == "delimiter" for e in p.initial_events)
    assert not tpl.__dict__.get("_prefix_states")
    ResponseParser(tpl, prefix)
    q = ResponseParser(tpl, prefix, trace=True)  # the cache (now filled) is not used with trace either
    assert any(e["type"] == "delimiter" for e in q.initial_events)
    _fresh(tpl)
