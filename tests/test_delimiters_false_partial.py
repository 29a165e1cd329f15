"""False partial matches (issue 19): the `regex` module reports a partial match of
`(?<=<think>\\s{0,4})(?=<think>)` at any `</x` after `<think>` (qwen3's reasoning close), which held
reasoning text back up to `MAX_DELIMITER_LENGTH` characters. A partial match that fits none of the fixed
texts every match starts with (`_partial_leads`, read through lookarounds) is false and holds nothing back;
a real one still does, and streaming still equals one-shot for any chunking."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates.regex_leads import _fits_leads, _partial_leads

QWEN3_CLOSE = r"</think>|(?=<tool_call>\s*\{\s*\"name\")|(?<=<think>\s{0,4})(?=<think>)"
QWEN3_THINKING = ["qwen3", "qwen3.5", "qwen3-thinking-2507"]
QWEN3_FAMILY = QWEN3_THINKING + ["qwen3-coder"]


def test_regex_reports_the_false_partial_match():
    """The cause, pinned: if `regex` stops reporting it, the check is still right, but this documents why."""
    m = regex.compile(QWEN3_CLOSE).search("<think>\nab </b", 0, partial=True)
    assert m is not None and m.partial and m.group() == "</b"


@pytest.mark.parametrize(
    "source, leads",
    [
        (QWEN3_CLOSE, ("</think>", "<think>", "<tool_call>")),
        (r"(?<=x)(?=\{)", ("{",)),  # a lookbehind constrains nothing ahead
        (r"(?!a)<b>", ("<b>",)),  # nor does a negative lookahead
        (r"(?=<a>)<a>\s*x|<c>", ("<a>", "<c>")),
        (r"^\s*<x>", None),  # no fixed text at the start: no check
        (r"</think>|(?=\s)", None),
        (r"(?i)</think>", None),  # case-insensitive: not fixed texts
    ],
)
def test_partial_leads(source, leads):
    assert _partial_leads(source) == leads


@pytest.mark.parametrize(
    "text, start, fits",
    [
        ("ab </b", 3, False),
        ("ab </th", 3, True),  # a prefix of `</think>`
        ("ab </think> more", 3, True),  # starts with it
        ("ab <", 3, True),
        ("ab <tool_c", 3, True),
        ("ab <thinkk", 3, False),
        ("ab ", 3, True),  # nothing left: a prefix of every text
    ],
)
def test_fits_leads(text, start, fits):
    assert _fits_leads(text, start, ("</think>", "<think>", "<tool_call>")) is fits


@pytest.mark.parametrize("name", QWEN3_THINKING)
def test_markup_in_reasoning_is_not_held_back(name):
    """Before the fix, qwen3 held `<b>bold</b> claim` and everything after it (up to 512 characters)."""
    parser = ResponseParser(get_template(name), prefix="")
    events = parser.feed("<think>\nLet me see: a <b>bold</b> claim")
    events += parser.feed(" and more text, <i>x</i> here")
    streamed = "".join(e["text"] for e in events if e["type"] == "region_chunk")
    assert streamed == "\nLet me see: a <b>bold</b> claim and more text, <i>x</i> here"


@pytest.mark.parametrize("name", QWEN3_THINKING)
def test_a_real_partial_close_is_still_held_back(name):
    parser = ResponseParser(get_template(name), prefix="")
    events = parser.feed("<think>\nsee </b> then </thi")
    streamed = "".join(e["text"] for e in events if e["type"] == "region_chunk")
    assert streamed == "\nsee </b> then "
    events = parser.feed("nk>done")
    assert [e["value"] for e in events if e["type"] == "region_close"] == ["see </b> then"]
    message, _ = parser.finalize()
    assert message["content"] == "done"


@pytest.mark.parametrize("name", ["qwen3", "qwen3-thinking-2507"])
def test_held_text_stays_small_with_markup_in_reasoning(name):
    """Held text never exceeds the longest watched delimiter while reasoning holds `</x` markup."""
    parser = ResponseParser(get_template(name), prefix="")
    sent = "<think>\n"
    received = "".join(e["text"] for e in parser.feed(sent) if e["type"] == "region_chunk")
    for i in range(200):
        piece = f"step {i}: </b{i % 7}> "
        sent += piece
        received += "".join(e["text"] for e in parser.feed(piece) if e["type"] == "region_chunk")
        assert len(sent) - len("<think>") - len(received) <= 16
    message, _ = parser.finalize()
    assert message == parse_response(sent, get_template(name), prefix="")


_PIECES = ["<think>", "</think>", "</b>", "</th", "ink>", "<tool_call>", "<", "</", "\n", " ", "a", "x</", "{\"name\": \"f\"}"]


@pytest.mark.parametrize("name", QWEN3_FAMILY)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=14), data=st.data())
def test_streamed_equals_one_shot(name, pieces, data):
    template = get_template(name)
    text = "".join(pieces)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=8)))
    parser = ResponseParser(template, prefix="")
    last = 0
    for cut in cuts + [len(text)]:
        parser.feed(text[last:cut])
        last = cut
    message, _ = parser.finalize()
    assert message == parse_response(text, template, prefix="", strict=False)


_ATOMS = ["<a>", "</a>", "<b", "x", r"\s*", "(?=<a>)", "(?=<b)", "(?<=x)", "(?<!y)", "(?!<b)", "(?:<a>)?", "(?:x|<b>)", r"\b"]


@given(
    alternatives=st.lists(st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=4), min_size=1, max_size=3),
    text=st.text(alphabet="<>/abxy ", max_size=16),
)
def test_partial_leads_never_reject_the_start_of_a_real_match(alternatives, text):
    """Soundness: wherever the pattern matches in `text`, every prefix of `text` reaching that start fits the
    leads there, so a real partial match is never taken for a false one."""
    source = "|".join("".join(alt) for alt in alternatives)
    leads = _partial_leads(source)
    pat = regex.compile(source, regex.DOTALL)
    for start in range(len(text) + 1):
        if pat.match(text, start) is None:
            continue
        for k in range(start, len(text) + 1):
            assert _fits_leads(text[:k], start, leads), (source, text, start, k, leads)


@pytest.mark.parametrize(
    "chunks",
    [
        ["<think>", "abc", "<think>more</think>done"],  # `abc` between: the lookbehind must see it
        ["<think>", "\n ", "<think>more</think>done"],  # a repeated <think> closes the reasoning
        ["<think>", "x" * 300, "y", "<think>z</think>done"],  # longer than the kept context
    ],
)
def test_lookbehind_reads_text_routed_without_a_scan(chunks):
    """Chunks without `<` take the fast path even for a template whose delimiter looks behind (qwen3): the
    kept context must still hold their text, so the lookbehind decides as in one-shot parsing."""
    template = get_template("qwen3")
    parser = ResponseParser(template, prefix="")
    for c in chunks:
        parser.feed(c)
    assert parser.finalize()[0] == parse_response("".join(chunks), template, prefix="", strict=False)
