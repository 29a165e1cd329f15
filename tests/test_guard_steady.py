"""`feed()`'s steady state away from a lookbehind's guard (`guard_steady.py`), issue 19.

Pinned here: the events and message are those of the parser without the view (every watch's `narrow` turned off: the
watch's own steady state, the oracle), raw and unmerged, for any chunking of texts built around Gemma 4's guarded open
(``<channel|>`` then up to a few spaces then ``call:``, a ``c`` anywhere, markup, the other delimiters) and of the real
outputs of the templates that have such a view; the view is what it promises (Gemma 4's content steady state has ``<``
alone as its prefilter, a ``c`` chunk takes no trigger search, Qwen3's guarded close keeps its watch's own); and the
guard texts and reach are read from the pattern.
"""

from __future__ import annotations

import pytest
from _real_outputs import load_corpus
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scaled
from test_held_commit import _ids_dropped, _watches

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.guard_steady import guard_leads
from hf_response_templates.library import get_template

GEMMA4 = load_template(get_template("gemma4"))

#: Pieces around Gemma 4's guarded open: the guard, spaces, the lead and beginnings of it, markup, other delimiters.
_PIECES = [
    "<channel|>",
    "<channel",
    "|>",
    "<chan",
    "nel|>",
    " ",
    "  ",
    "\n",
    "call:",
    "c",
    "ca",
    "call",
    ":",
    "get_w{a:1}",
    "f{",
    'x:<|"|>c<|"|>}',
    "}",
    "<tool_call|>",
    "<|tool_call>",
    "<|tool_call>call:g{b:2}<tool_call|>",
    "case ",
    "check",
    " compute c",
    "a<b",
    "<",
    " <",
    "<|channel>thought\n",
    "<|channel>",
    "<turn|>",
    "<|tool_response>",
    "<t",
    "<|",
    "é",
    "x",
    "ok. ",
]


def _raw(tpl, prefix: str, chunks: list[str]):
    """(message, every event unmerged) of a stream."""
    p = ResponseParser(tpl, prefix)
    events = list(p.initial_events)
    for c in chunks:
        events.append(p.feed(c))
    message, final = p.finalize()
    return _ids_dropped(message), _ids_dropped([*events, final])


def _without_view(m: pytest.MonkeyPatch, tpl) -> None:
    for w in _watches(tpl):
        m.setattr(w, "narrow", None)


def _both(tpl, prefix: str, chunks: list[str]):
    got = _raw(tpl, prefix, chunks)
    with pytest.MonkeyPatch.context() as m:
        _without_view(m, tpl)
        oracle = _raw(tpl, prefix, chunks)
    return got, oracle


@st.composite
def _gemma4_streams(draw):
    pieces = draw(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14))
    text = "".join(pieces)
    if draw(st.booleans()):
        return pieces
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=20))))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@settings(max_examples=scaled(400), deadline=None)
@given(chunks=_gemma4_streams(), reasoning=st.booleans())
def test_gemma4_streams_give_the_watchs_own_events(chunks, reasoning):
    prefix = "<|turn>model\n" + ("<|channel>thought\nhm" if reasoning else "")
    got, oracle = _both(GEMMA4, prefix, chunks)
    assert got == oracle
    assert got[0] == _ids_dropped(parse_response("".join(chunks), GEMMA4, prefix=prefix, strict=False))


RECORDS = [r for r in load_corpus() if r.prefix is not None]
_VIEWED = sorted(
    {
        r.family
        for r in RECORDS
        if any(w.narrow is not None for w in _watches(load_template(get_template(r.family))))
    }
)


def test_the_templates_with_a_view_have_real_outputs():
    assert "gemma4" in _VIEWED


@pytest.mark.parametrize("family", _VIEWED)
@settings(max_examples=scaled(40), deadline=None)
@given(data=st.data())
def test_real_outputs_give_the_watchs_own_events(family, data):
    record = data.draw(st.sampled_from([r for r in RECORDS if r.family == family]))
    text = record.output
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=40))))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    tpl = load_template(get_template(family))
    got, oracle = _both(tpl, record.prefix, chunks)
    assert got == oracle


@pytest.mark.parametrize(
    "before, after",
    [
        ("<channel|>", "call:f{a:1}"),
        ("<channel|> ", "call:f{a:1}"),
        ("<channel|>  ", "call:f{a:1}"),
        ("<channel|>", " call:f{a:1}"),
        ("<channel", "|>call:f{a:1}"),
        ("<channel|>   ", "call:f{a:1}"),
        ("x <", "channel|>call:f{a:1}"),
        ("<channel|>\n", "\ncall:f{a:1}"),
    ],
)
def test_a_guard_just_passed_keeps_the_guarded_open(before, after):
    # content, then the guard (or part of it) ending one chunk and the guarded open in the next: as the watch's own
    chunks = [
        "Sure. The case",
        " c",
        "heck",
        before,
        *after.partition("{")[:1],
        "{" + after.partition("{")[2],
    ]
    got, oracle = _both(GEMMA4, "<|turn>model\n", chunks)
    assert got == oracle
    called = "tool_calls" in got[0]
    assert called == (
        before.count(" ")
        + after[: after.find("call")].count(" ")
        + before.count("\n")
        + after[: after.find("call")].count("\n")
        <= 2
    )


def test_gemma4_content_steady_state_has_one_prefilter_character():
    p = ResponseParser(GEMMA4, "<|turn>model\n")
    p.feed("Hello")
    p.feed(" there")
    assert p._fast is not None and p._fast[0] == p._fast[1] == "<"
    assert p._fast[5] == "<"  # (a lone `<` ending a chunk is held without a search)
    p.feed(" c")  # (no `c` prefilter: routed by the steady state, which stays)
    assert p._fast is not None and p._fast[0] == "<"
    p.feed(" <channel|>")  # (the guard: the watch's own steady state until the text is out of its reach)
    assert p._fast is None or p._fast[0] != p._fast[1]
    for piece in ("x", "y", "z"):
        p.feed(piece)
    p.feed(" c")  # (a scan, `c` may begin `call:` for the watch's own: out of the guard's reach after it)
    assert p._fast is not None and p._fast[0] == p._fast[1] == "<"


def test_only_templates_with_guarded_leads_get_a_view():
    views = {
        name: [w.narrow for w in _watches(load_template(get_template(name))) if w.narrow is not None]
        for name in ("gemma4", "qwen3", "llama4-json", "gemma3-pythonic", "gpt-oss")
    }
    assert views["gemma4"] and all(v.fast_chars == "<" and v.span == 12 for v in views["gemma4"])
    assert not views["qwen3"]  # (its guard `<think>` is its guarded lead: nothing to leave out)
    assert not views["llama4-json"] and not views["gemma3-pythonic"] and not views["gpt-oss"]


def test_guard_leads_read_the_lookbehinds():
    assert guard_leads(
        r"<\|tool_call>(?:call)?:(?P<name>[^{<]+)(?=\{)|(?<=<channel\|>\s{0,2})call:(?P<name>[^{<\s]+)"
    ) == ({"<|tool_call>:", "<|tool_call>call:"}, {"<channel|>"}, 12)
    assert guard_leads(r"</think>|(?<=<think>\s{0,4})(?=<think>)") == ({"</think>"}, {"<think>"}, 11)
    assert guard_leads(r"(?<=<a>|<bc>)x|y") == ({"y"}, {"<a>", "<bc>"}, 4)
    assert guard_leads(r"<x>|y") is None  # (no lookbehind)
    assert guard_leads(r"(?<=\s*<a>)x") is None  # (no fixed text its matches begin with)
    assert guard_leads(r"(?<=<a>\s*)x") is None  # (no longest match)
    assert guard_leads(r"(?<=<a>)x|\w+") is None  # (an alternative without fixed texts)
