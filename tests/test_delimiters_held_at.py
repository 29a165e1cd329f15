"""`Watch._held_at`: a resumed scan whose held text is still a partial match from its start (issue 19).

A tool-call header streamed token by token (gpt-oss's ``<|start|>assistant<|channel|>commentary
to=functions.get_weather <|constrain|>json<|message|>``, ~12 chunks) is held chunk after chunk. While the
first regex that was pending at the start of the held text still runs into the end of the window, the hold
position is that start, the earliest it can be, so nothing can commit: `scan` answers after that one `regex`
call instead of searching every delimiter. Pinned here: the events are the same as the full scan's for any
chunking (hypothesis, with the shortcut turned off as the oracle), and the work is what it promises (counted).
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
from hf_response_templates.library import get_template


def _ids_dropped(value):
    if isinstance(value, dict):
        return {k: _ids_dropped(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [_ids_dropped(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(HEADERS))
@settings(max_examples=scaled(150))
@given(data=st.data())
def test_the_shortcut_gives_the_full_scans_events(name, data):
    text, chunks = data.draw(held_texts(name))
    tpl = load_template(get_template(name))
    prefix = PREFIXES[name]
    fast = _events(tpl, prefix, chunks)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(delimiters.Watch, "_held_at", lambda self, *a: False)  # every resumed scan in full
        m.setattr(parser_module, "still_held", lambda *a: False)  # (and no held text kept without a scan)
        full = _events(tpl, prefix, chunks)
    assert _ids_dropped(fast) == _ids_dropped(full)
    assert _ids_dropped(fast[0]) == _ids_dropped(parse_response(text, tpl, prefix=prefix, strict=False))


def _count(monkeypatch) -> dict[str, int]:
    calls = {"searches": 0}
    search, lead_search = delimiters._search_regex, delimiters._search_by_leads

    def counting(d, *args):
        calls["searches"] += 1
        return search(d, *args)

    def counting_leads(d, *args):
        calls["searches"] += 1
        return lead_search(d, *args)

    monkeypatch.setattr(delimiters, "_search_regex", counting)
    monkeypatch.setattr(delimiters, "_search_by_leads", counting_leads)
    return calls


@pytest.mark.parametrize("chunked", ["characters", "tokens"])
def test_a_held_header_is_not_searched_again_per_chunk(chunked, monkeypatch):
    header = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    pieces = list(header) if chunked == "characters" else [
        "<|start|>", "assistant", "<|channel|>", "commentary", " to", "=", "functions", ".", "get", "_", "weather",
        " ", "<|constrain|>", "json", "<|message|>"]
    tpl = load_template(get_template("gpt-oss"))
    parser = ResponseParser(tpl, "<|start|>assistant")
    parser.feed("<|channel|>final<|message|>Hi<|end|>")
    calls = _count(monkeypatch)
    for piece in pieces:
        parser.feed(piece)
    parser.feed('{"city": "Paris"}<|call|>')
    message, _ = parser.finalize()
    assert message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert message["content"] == "Hi"
    # Without the shortcut each held chunk searches every live delimiter (`content` while the header can still
    # be `<|start|>assistant<|channel|>commentary<|message|>`, `tool_calls` all along): more than one search per
    # piece and then some (measured: 268 searches for the 94 characters, 46 for the 15 tokens, the content
    # after them included). With it, only the chunks where a delimiter's answer changes search (a beginning
    # dies, the header completes) and the content after the header: 20 either way.
    assert calls["searches"] <= 24, calls


@pytest.mark.parametrize("shortcut", [True, False])
def test_a_header_held_after_a_zero_width_close_is_not_searched_again_per_chunk(shortcut, monkeypatch):
    # Kimi K3's tool section opens with `<|open|>tools<|sep|>` and closes with no width where the first call
    # opens, so the call header is held in a zero-width state (the resume of `scan` is off there: its results
    # for zero-width matches may differ); a partial match is none, and `_held_at` still applies.
    tpl = load_template(get_template("kimi-k3"))
    parser = ResponseParser(tpl, "")
    parser.feed("<|open|>response<|sep|>Hi<|close|>response<|sep|>")
    parser.feed("<|open|>tools<|sep|>")
    if not shortcut:
        monkeypatch.setattr(delimiters.Watch, "_held_at", lambda self, *a: False)
        monkeypatch.setattr(parser_module, "still_held", lambda *a: False)
        # (and the later shortcuts for held text: its first chunk held without a search, its end committed)
        monkeypatch.setattr(delimiters, "commit_at", lambda *a: None)
        for w in {id(w): w for w in [tpl.late_idle_watch, *tpl.late_close_watches]}.values():
            monkeypatch.setattr(w, "sure_holds", {})
            monkeypatch.setattr(w, "whole", None)  # (and what `region_change` knows of held texts)
    calls = _count(monkeypatch)
    header = '<|open|>call tool="get_weather" index="1"<|sep|>'
    for ch in header:
        parser.feed(ch)
    parser.feed('<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>')
    parser.feed("<|close|>call<|sep|><|close|>tools<|sep|>")
    message, _ = parser.finalize()
    assert message["content"] == "Hi"
    assert message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}
    if shortcut:
        assert calls["searches"] <= 12, calls
    else:  # (the oracle of the bound above: the full scan searches the held header on each of its chunks)
        assert calls["searches"] >= len(header), calls
