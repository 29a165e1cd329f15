"""Held headers remembered (`held_memo`): `still_held` and `commit_at` answer from a watch's memo what their regexes
would answer (issue 19).

Pinned here: a stream parsed with a warm memo (the same template, streams before it) gives the events of the
full scan for any chunking (hypothesis; the oracle has every shortcut for held text off), `commit_at` answers
from the memo what it computes without one, wherever the held start is, the memo stays bounded, a watch whose
regexes read text before their start keeps none, and a repeated header asks no regex (counted, not timed).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scaled
from test_delimiters_resume import HEADERS, PREFIXES, held_texts
from test_held_commit import STREAMS, _ids_dropped, _watches, no_shortcuts
from test_parser_prefix_cache import _stream as _events  # (message, merged events) of a stream

import hf_response_templates.held as held_module
import hf_response_templates.held_commit as held_commit
import hf_response_templates.held_memo as held_memo
from hf_response_templates import load_template, parse_response
from hf_response_templates.library import get_template

_TEMPLATES: dict = {}


def _shared(name: str):
    """One template per name (`load_template` caches it by content): its watches' memos stay warm from example
    to example."""
    if name not in _TEMPLATES:
        _TEMPLATES[name] = load_template(get_template(name))
    return _TEMPLATES[name]


def _forgotten(tpl):
    """`tpl` with every watch's memo emptied (the template is shared: other tests may have filled them)."""
    for w in _watches(tpl):
        if w.held_memo is not None:
            w.held_memo.clear()
        if w.whole is not None and w.regexes:  # (and `region_change`'s learnt texts, which come from the memo)
            w.whole.clear()
    return tpl


@pytest.mark.parametrize("name", sorted(HEADERS))
@settings(max_examples=scaled(150), deadline=None)
@given(data=st.data())
def test_a_warm_memo_gives_the_full_scans_events(name, data):
    text, chunks = data.draw(held_texts(name))
    tpl = _shared(name)
    prefix = PREFIXES[name]
    warm = _events(tpl, prefix, chunks)
    again = _events(tpl, prefix, chunks)  # (every answer of the first pass now remembered)
    with pytest.MonkeyPatch.context() as m:  # (the oracle: no shortcut for held text, so no memo either)
        no_shortcuts(m, tpl)
        full = _events(tpl, prefix, chunks)
    assert _ids_dropped(warm) == _ids_dropped(full) == _ids_dropped(again)
    assert _ids_dropped(warm[0]) == _ids_dropped(parse_response(text, tpl, prefix=prefix, strict=False))


@pytest.mark.parametrize("name", sorted(STREAMS))
@settings(max_examples=scaled(100), deadline=None)
@given(data=st.data())
def test_random_chunkings_of_whole_streams_with_a_warm_memo(name, data):
    prefix, text = STREAMS[name]
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=len(text) // 2)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    tpl = _shared(name)
    warm = _events(tpl, prefix, chunks)
    with pytest.MonkeyPatch.context() as m:  # (the oracle: no shortcut for held text, so no memo either)
        no_shortcuts(m, tpl)
        full = _events(tpl, prefix, chunks)
    assert _ids_dropped(warm) == _ids_dropped(full)


@pytest.mark.parametrize("name", sorted(STREAMS))
@settings(max_examples=scaled(200), deadline=None)
@given(data=st.data())
def test_commit_at_from_the_memo_is_commit_at(name, data):
    tpl = _shared(name)
    watch = data.draw(st.sampled_from([w for w in _watches(tpl) if w.held_memo is not None]))
    pieces = HEADERS.get(name, []) + ["x", " ", "<", "<|", "Paris", "<|message|>", "<|sep|>", '"', "="]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=6)))
    ctx = data.draw(st.sampled_from(["", "ab ", "}", "<|end|>"]))
    expected = held_commit.commit_at(watch, ctx + text, len(ctx), False)
    for _ in range(2):  # (the first call may fill the memo, the second reads it)
        got = held_commit.commit_at(watch, ctx + text, len(ctx))
        assert got == expected
        if got.__class__ is tuple and got[3]:
            assert got[3] is not expected[3]
            got[3]["name"] = "changed"  # a caller's edit of the captures does not reach the memo
    assert held_commit.commit_at(watch, ctx + text, len(ctx)) == expected


def _counting(monkeypatch) -> dict[str, int]:
    calls = {"still_held": 0, "commit_at": 0}  # answers computed and remembered, by function
    still, commit = held_module.remember, held_commit.remember

    def counting_still(*args):
        calls["still_held"] += 1
        return still(*args)

    def counting_commit(*args):
        calls["commit_at"] += 1
        return commit(*args)

    monkeypatch.setattr(held_module, "remember", counting_still)
    monkeypatch.setattr(held_commit, "remember", counting_commit)
    return calls


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_repeated_stream_asks_no_regex_for_its_headers(name, monkeypatch):
    prefix, text = STREAMS[name]
    tpl = _forgotten(load_template(get_template(name)))
    chunks = [text[i : i + 3] for i in range(0, len(text), 3)]
    calls = _counting(monkeypatch)
    first = _events(tpl, prefix, chunks)
    assert calls["still_held"] + calls["commit_at"] > 0, calls  # (the headers are asked about: not a no-op)
    calls.update(still_held=0, commit_at=0)
    second = _events(tpl, prefix, chunks)
    assert calls == {"still_held": 0, "commit_at": 0}
    assert _ids_dropped(first) == _ids_dropped(second)


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(held_memo, "MEMO_LIMIT", 4)
    tpl = _forgotten(load_template(get_template("gpt-oss")))
    prefix, text = STREAMS["gpt-oss"]
    for size in range(1, 9):
        _events(tpl, prefix, [text[i : i + size] for i in range(0, len(text), size)])
        assert all(len(w.held_memo) <= 4 for w in _watches(tpl) if w.held_memo is not None)
    assert any(w.held_memo for w in _watches(tpl) if w.held_memo is not None)


def test_no_memo_where_a_regex_reads_before_its_start():
    # Llama 4's JSON tool call follows a `}` it looks behind at (`(?<=\})`): its answers depend on routed text.
    tpl = load_template(get_template("llama4-json"))
    needing = [w for w in _watches(tpl) if w.needs_context]
    assert needing and all(w.held_memo is None for w in needing)
    assert all(w.held_memo is not None for w in _watches(tpl) if w.regexes and not w.needs_context)
    gpt = load_template(get_template("gpt-oss"))
    assert gpt.late_idle_watch.held_memo is not None
