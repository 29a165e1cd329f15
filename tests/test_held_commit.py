"""Held headers: held from their first chunk without a search (`Watch.sure_holds`), and committed by the chunk
after their last one without a full scan (`held_commit.commit_at`) (issue 19).

Pinned here: the events are those of the full scan for any chunking (hypothesis, with every shortcut for held
text turned off as the oracle), `commit_at` answers what `Watch.scan` answers where it answers, and the work is
what it promises (counted: `Watch.scan` calls and regex searches, not time).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scaled
from test_delimiters_resume import HEADERS, PREFIXES, held_texts
from test_parser_prefix_cache import _stream as _events  # (message, merged events) of a stream

import hf_response_templates.delimiters as delimiters
import hf_response_templates.parser as parser_module
from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.held_commit import commit_at
from hf_response_templates.library import get_template
from hf_response_templates.regex_leads import _sure_holds


def _ids_dropped(value):
    if isinstance(value, dict):
        return {k: _ids_dropped(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [_ids_dropped(v) for v in value]
    return value


def _watches(tpl) -> list:
    out = []
    for w in [tpl.idle_watch, tpl.late_idle_watch, *tpl.close_watches, *tpl.late_close_watches]:
        for x in (w, getattr(w, "late", None)):
            if x is not None and all(x is not y for y in out):
                out.append(x)
    return out


def no_shortcuts(m: pytest.MonkeyPatch, tpl) -> None:
    """Turn off every shortcut for held text: each chunk of held text is scanned in full, from its start."""
    m.setattr(delimiters.Watch, "_held_at", lambda self, *a: False)
    m.setattr(parser_module, "still_held", lambda *a: False)
    m.setattr(delimiters, "commit_at", lambda *a: None)
    for w in _watches(tpl):
        m.setattr(w, "sure_holds", {})
        m.setattr(w, "whole", None)  # (`region_change`: held texts known to grow or complete a delimiter)




@pytest.mark.parametrize("name", sorted(HEADERS))
@settings(max_examples=scaled(150), deadline=None)
@given(data=st.data())
def test_the_shortcuts_give_the_full_scans_events(name, data):
    text, chunks = data.draw(held_texts(name))
    tpl = load_template(get_template(name))
    prefix = PREFIXES[name]
    fast = _events(tpl, prefix, chunks)
    with pytest.MonkeyPatch.context() as m:
        no_shortcuts(m, tpl)
        full = _events(tpl, prefix, chunks)
    assert _ids_dropped(fast) == _ids_dropped(full)
    assert _ids_dropped(fast[0]) == _ids_dropped(parse_response(text, tpl, prefix=prefix, strict=False))


STREAMS = {
    "gpt-oss": (
        "<|start|>assistant",
        "<|channel|>analysis<|message|>Let me think: a < b.<|end|><|start|>assistant<|channel|>commentary<|message|>"
        "Checking.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris"}<|call|>',
    ),
    "kimi-k3": (
        '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>',
        "Hmm, a < b.<|close|>think<|sep|><|open|>response<|sep|>Hi<|close|>response<|sep|><|open|>tools<|sep|>"
        '<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris'
        "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
    ),
}


@pytest.mark.parametrize("name", sorted(STREAMS))
@settings(max_examples=scaled(100), deadline=None)
@given(data=st.data())
def test_random_chunkings_of_whole_streams(name, data):
    prefix, text = STREAMS[name]
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=len(text) // 2)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    tpl = load_template(get_template(name))
    fast = _events(tpl, prefix, chunks)
    with pytest.MonkeyPatch.context() as m:
        no_shortcuts(m, tpl)
        full = _events(tpl, prefix, chunks)
    assert _ids_dropped(fast) == _ids_dropped(full)
    assert _ids_dropped(fast[0]) == _ids_dropped(parse_response(text, tpl, prefix=prefix, strict=False))


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_every_character_a_chunk(name):
    prefix, text = STREAMS[name]
    tpl = load_template(get_template(name))
    fast = _events(tpl, prefix, list(text))
    with pytest.MonkeyPatch.context() as m:
        no_shortcuts(m, tpl)
        assert _ids_dropped(fast) == _ids_dropped(_events(tpl, prefix, list(text)))


def _scan_answers(watch, window: str, pos: int):
    """`Watch.scan`'s answer from `pos` (no resume, no zero-width state), in `commit_at`'s terms: the committed
    `(start, end, delimiter, captures)`, or the hold position."""
    return watch.scan(window, pos, False, -1, frozenset(), frozenset(), None, {})


@pytest.mark.parametrize("name", sorted(STREAMS))
@settings(max_examples=scaled(200), deadline=None)
@given(data=st.data())
def test_commit_at_answers_as_the_scan(name, data):
    # Wherever `commit_at` answers, it is `Watch.scan`'s answer: a commit is the scan's commit, a hold is the
    # scan holding everything from `pos`.
    tpl = load_template(get_template(name))
    watch = data.draw(st.sampled_from(_watches(tpl)))
    pieces = HEADERS.get(name, []) + ["x", " ", "<", "<|", "Paris", "<|message|>", "<|sep|>", '"', "="]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=6)))
    ctx = data.draw(st.sampled_from(["", "ab ", "}"]))
    got = commit_at(watch, ctx + text, len(ctx))
    if got is None:
        return
    scanned = _scan_answers(watch, ctx + text, len(ctx))
    if got.__class__ is tuple:
        assert scanned == got
    else:
        assert scanned == len(ctx)  # held from `pos`
        assert got in watch.delimiters


def test_commit_at_on_a_completed_header():
    tpl = load_template(get_template("gpt-oss"))
    watch = tpl.late_idle_watch
    header = "<|channel|>analysis<|message|>"
    start, end, d, groups = commit_at(watch, header + "a", 0)
    assert (start, end, d.field) == (0, len(header), "thinking")
    assert commit_at(watch, header, 0).field == "thinking"  # ends the window: more text may extend it, held
    assert commit_at(watch, "<|channel|>commentary to", 0) is not None  # the tool call's beginning: held
    tool = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    start, end, d, groups = commit_at(watch, tool + '{"', 0)
    assert (end, d.field, groups) == (len(tool), "tool_calls", {"name": "get_weather"})
    kimi = load_template(get_template("kimi-k3")).late_idle_watch
    start, end, d, groups = commit_at(kimi, "<|open|>response<|sep|>", 0)  # a literal is final at the edge
    assert (end, d.field) == (len("<|open|>response<|sep|>"), "content")
    assert commit_at(kimi, "<|open|>respo", 0).field == "content"  # a beginning of it: held


def test_sure_holds():
    tpl = load_template(get_template("gpt-oss"))
    holds = _sure_holds(tpl.late_idle_watch.delimiters)
    assert max(map(len, holds)) == len("<|start|>assistant<|channel|>analysis<|message|>") - 1
    assert holds["<|channel|>"] is not None and holds["<|channel|>analysis"].field == "thinking"
    assert "<|channel|>analysis<|message|>" not in holds  # whole: a complete match, not a sure partial one
    assert _sure_holds(()) == {}


def _counting(monkeypatch) -> dict[str, int]:
    calls = {"scans": 0, "searches": 0}
    scan, search, lead_search = delimiters.Watch.scan, delimiters._search_regex, delimiters._search_by_leads

    def counting_scan(self, *args):
        calls["scans"] += 1
        return scan(self, *args)

    def counting(d, *args):
        calls["searches"] += 1
        return search(d, *args)

    def counting_leads(d, *args):
        calls["searches"] += 1
        return lead_search(d, *args)

    monkeypatch.setattr(delimiters.Watch, "scan", counting_scan)
    monkeypatch.setattr(delimiters, "_search_regex", counting)
    monkeypatch.setattr(delimiters, "_search_by_leads", counting_leads)
    return calls


@pytest.mark.parametrize("shortcut", [True, False])
def test_a_header_from_its_first_chunk_to_its_commit_searches_nothing(shortcut, monkeypatch):
    # gpt-oss's `<|channel|>analysis<|message|>` in tokens after a closed region, then the first token of the
    # region: held from `<|channel|>` on without a scan (a beginning of `thinking`'s fixed text), still held at
    # `<|message|>` (a complete match at the window's end: `still_held` asks `thinking`, the delimiter the
    # beginning named), committed by the next chunk without a regex search (`commit_at`, in `Watch.scan`).
    tpl = load_template(get_template("gpt-oss"))
    parser = ResponseParser(tpl, "<|start|>assistant")
    parser.feed("<|channel|>final<|message|>Hi<|end|>")
    if not shortcut:
        no_shortcuts(monkeypatch, tpl)
    calls = _counting(monkeypatch)
    for piece in ["<|channel|>", "analysis", "<|message|>", "So"]:
        parser.feed(piece)
    message, _ = parser.finalize()
    assert message["thinking"] == "So" and message["content"] == "Hi"
    if shortcut:
        assert calls["searches"] == 0, calls
        # the first three chunks without a scan; "So": `region_change` commits the header (answered by `commit_at`,
        # or known to the watch from an earlier stream) and the region's text takes `_run`'s fast path, or one scan
        # (2 scans before `region_change`: the idle watch's and the region's)
        assert calls["scans"] <= 1, calls
    else:  # (the oracle of the bounds above: the full scan searches the header's regexes on each of its chunks)
        assert calls["searches"] >= 9, calls
        assert calls["scans"] >= 5, calls


@pytest.mark.parametrize("shortcut", [True, False])
def test_kimi_call_header_commits_without_a_scan(shortcut, monkeypatch):
    tpl = load_template(get_template("kimi-k3"))
    parser = ResponseParser(tpl, "")
    parser.feed("<|open|>response<|sep|>Hi<|close|>response<|sep|><|open|>tools<|sep|>")
    if not shortcut:
        no_shortcuts(monkeypatch, tpl)
    calls = _counting(monkeypatch)
    for piece in ["<|open|>", "call", " tool", '="', "get", "_", "weather", '"', "<|sep|>", "<|open|>"]:
        parser.feed(piece)
    parser.feed('argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|>')
    parser.feed("<|close|>tools<|sep|>")
    message, _ = parser.finalize()
    assert message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}
    if shortcut:
        assert calls["searches"] <= 6, calls
    else:
        assert calls["searches"] >= 12, calls
