"""A piece of a lagged tool region ending in a sure beginning of a delimiter (`delta_tail.py`, issue 18 item 1): the
stream keeps that end itself and takes the text before it as any other lagged piece, where the parser's `feed` held
it and the next piece went through `feed` too. The oracle is the old path (`ResponseParser.region_holds` None: no end
is kept) and the stream over a parser the caller passed in (no lag at all): for any text and chunking, cut right
after every ``<`` or anywhere, every piece gives the same deltas, and `finish` the same message."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_delta_xml_params import qwen_call
from test_openai_deltas import ALL_RAW, CHATML, SETTINGS, chunkings

from hf_response_templates import ResponseParser, get_template
from hf_response_templates.openai import DeltaStream

GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"


@contextlib.contextmanager
def old_path() -> Iterator[None]:
    """Within the block: new streams keep no end (the parser gives no holds)."""
    holds = ResponseParser.region_holds
    ResponseParser.region_holds = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        ResponseParser.region_holds = holds  # type: ignore[method-assign]


def _per_piece(name: str, prefix: str, pieces: list[str], finish: str | None, own: bool = True) -> tuple:
    tpl = get_template(name)
    ds = DeltaStream(tpl, prefix=prefix, id_seed=0) if own else DeltaStream(ResponseParser(tpl, prefix, trace=True), id_seed=0)
    out = [ds.feed(p) for p in pieces]
    out.append(ds.finish(finish))
    assert ds.warnings == []
    return out, ds.message, ds.finish_reason


def _same_as_old(name: str, prefix: str, pieces: list[str], finish: str | None = None) -> None:
    new = _per_piece(name, prefix, pieces, finish)
    with old_path():
        old = _per_piece(name, prefix, pieces, finish)
    assert new == old
    assert new == _per_piece(name, prefix, pieces, finish, own=False)


def _after_each_lt(text: str, extra: list[int]) -> list[str]:
    """`text` cut right after each ``<`` (and ``<|``, ``</``), and at `extra`."""
    at = {i + 1 for i, c in enumerate(text) if c == "<"} | {i + 2 for i, c in enumerate(text) if c == "<"}
    at |= {c % (len(text) + 1) for c in extra} | {0, len(text)}
    bounds = sorted(a for a in at if a <= len(text))
    return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


@settings(max_examples=200, **SETTINGS)
@given(text=qwen_call(), cuts=st.lists(st.integers(0, 10_000), max_size=8), data=st.data())
def test_qwen_calls_give_the_deltas_of_the_old_path(text: str, cuts: list[int], data: st.DataObject) -> None:
    _same_as_old("qwen3-coder", CHATML, _after_each_lt(text, cuts))
    _same_as_old("qwen3-coder", CHATML, data.draw(chunkings(text)))


@settings(max_examples=100, **SETTINGS)
@given(text=qwen_call(), cut=st.integers(0, 10_000), data=st.data())
def test_a_stream_cut_after_a_kept_end_finishes_as_the_old_path(text: str, cut: int, data: st.DataObject) -> None:
    """The stream ends (``length``, or not) right after a piece whose end the stream keeps."""
    ends = [i + 1 for i, c in enumerate(text) if c == "<"] or [len(text)]
    text = text[: ends[cut % len(ends)]]
    finish = data.draw(st.sampled_from([None, "length"]))
    _same_as_old("qwen3-coder", CHATML, _after_each_lt(text, []), finish)
    _same_as_old("qwen3-coder", CHATML, data.draw(chunkings(text)), finish)


_DIALECT_TEXT = st.lists(
    st.sampled_from(["a", " b", "x < y", "<", "<|", '<|"', "<|\"|", "<t", "<tool_call|", "<turn|", "<|tool_resp",
                     "<<", "é", "\n", ",", ":", "}", "{", "[", "]", '"', "\\"]),
    max_size=6,
).map("".join)  # fmt: skip
_DIALECT_VALUE = st.one_of(
    _DIALECT_TEXT.map(lambda s: '<|"|>' + s + '<|"|>'),
    st.sampled_from(["3", "-1", "true", "null", "[1, 2, 3]", "1.5", "[<|\"|>a<|\"|>]", "{x:1}"]),
)


@st.composite
def gemma_call(draw: st.DrawFn) -> str:
    """A Gemma 4 call in its dialect, strings holding beginnings of delimiters; sometimes cut or left open."""
    n = draw(st.integers(0, 6))
    sep = draw(st.sampled_from([",", ", ", " , "]))
    body = sep.join(f"k{i}:{draw(st.sampled_from(['', ' ']))}{draw(_DIALECT_VALUE)}" for i in range(n))
    end = draw(st.sampled_from(["}<tool_call|><turn|>", "}<tool_call|>", "}", ""]))
    return f"<|tool_call>call:f{{{body}{end}"


@settings(max_examples=200, **SETTINGS)
@given(text=gemma_call(), cuts=st.lists(st.integers(0, 10_000), max_size=8), data=st.data())
def test_gemma_calls_give_the_deltas_of_the_old_path(text: str, cuts: list[int], data: st.DataObject) -> None:
    finish = data.draw(st.sampled_from([None, "length"]))
    _same_as_old("gemma4", GEMMA, _after_each_lt(text, cuts), finish)
    _same_as_old("gemma4", GEMMA, data.draw(chunkings(text)), finish)


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_raw_outputs_of_every_template_give_the_deltas_of_the_old_path(data: st.DataObject) -> None:
    name, prefix, text = data.draw(st.sampled_from(ALL_RAW))
    cuts = data.draw(st.lists(st.integers(0, 10_000), max_size=8))
    _same_as_old(name, prefix, _after_each_lt(text, cuts))
    _same_as_old(name, prefix, data.draw(chunkings(text)))


_PROSE = st.lists(
    st.sampled_from(["a", " b", "x < y", "<", "</", "<t", "<th", "</think", "<|im_end", "<tool_call", "<<", "é", "\n",
                     " ", "<b>", "</b>"]),
    max_size=12,
).map("".join)  # fmt: skip


@settings(max_examples=150, **SETTINGS)
@given(reasoning=_PROSE, content=_PROSE, cuts=st.lists(st.integers(0, 10_000), max_size=8), data=st.data())
def test_text_regions_give_the_deltas_of_the_old_path(reasoning: str, content: str, cuts: list[int], data) -> None:  # noqa: ANN001
    """Text regions (`delta_hot.hot_text`): reasoning and content holding beginnings of delimiters."""
    name = data.draw(st.sampled_from(["smollm3", "qwen3", "hermes3"]))
    end = data.draw(st.sampled_from(["<|im_end|>", "", "<"]))
    text = f"<think>\n{reasoning}\n</think>\n{content}{end}"
    finish = data.draw(st.sampled_from([None, "length"]))
    _same_as_old(name, CHATML, _after_each_lt(text, cuts), finish)
    _same_as_old(name, CHATML, data.draw(chunkings(text)), finish)


def _parser_feeds(name: str, prefix: str, pieces: list[str], monkeypatch) -> tuple[list[str], DeltaStream]:  # noqa: ANN001
    """The texts the stream's parser's `feed` got for `pieces[2:-1]` (the first two open the region and get the
    stream lagging: the second holds no ``<``)."""
    fed: list[str] = []
    feed = ResponseParser.feed
    monkeypatch.setattr(ResponseParser, "feed", lambda self, text: fed.append(text) or feed(self, text))
    ds = DeltaStream(get_template(name), prefix=prefix, id_seed=0)
    ds.feed(pieces[0])
    ds.feed(pieces[1])
    fed.clear()
    for p in pieces[2:-1]:
        ds.feed(p)
    return fed, ds


@pytest.mark.parametrize(
    ("name", "prefix", "pieces", "end"),
    [
        (
            "qwen3-coder",
            CHATML,
            ["<tool_call>\n<function=f>\n<parameter=a>\nx", " z", " y\n<", "/parameter>\n<", "parameter=b>\n1\n</",
             "parameter>\n<", "parameter=c>\nx <", " y</", "parameter>\n</function>\n</tool_call>"],
            "</",
        ),
        (
            "smollm3",
            CHATML,
            ["<think>\nx", " z", " y <", "b> a <", "/b> <", " c</", "b>\n</think>\nok<|im_end|>"],
            "</",
        ),
        (
            "gemma4",
            GEMMA,
            ["<|tool_call>call:f{a:<|\"|>x", " z", " y<|", "\"|>,b:<|", "\"|>x <", " y<", "|\"|>,c:1,d:<", "|\"|>z<|",
             "\"|>}<tool_call|><turn|>"],
            "<|",
        ),
    ],
)
def test_pieces_ending_in_a_sure_beginning_never_reach_the_parsers_feed(name, prefix, pieces, end, monkeypatch) -> None:  # noqa: ANN001
    """Counts: each piece ends in ``<`` (``<|``, ``</``), which the parser would hold; the stream keeps it, and
    neither that piece nor the next goes to the parser's `feed` (the old path: every such piece did, and in tool
    regions the piece after it too); the deltas are the old path's."""
    fed, ds = _parser_feeds(name, prefix, pieces, monkeypatch)
    assert fed == []
    assert ds._tail == end
    with old_path():
        fed, _ = _parser_feeds(name, prefix, pieces, monkeypatch)
    assert len(fed) >= len(pieces) - 3  # (at least each of `pieces[2:-1]`)
    _same_as_old(name, prefix, pieces)


def test_an_end_the_text_before_which_ends_in_a_beginning_too_goes_to_the_parser() -> None:
    """``<<``: the text before the last ``<`` ends in a beginning itself, which a lagged piece must not: the piece
    goes to the parser's `feed` as before."""
    pieces = ["<tool_call>\n<function=f>\n<parameter=a>\nx", " y <<", "b\n</parameter>\n</function>\n</tool_call>"]
    ds = DeltaStream(get_template("qwen3-coder"), prefix=CHATML, id_seed=0)
    ds.feed(pieces[0])
    ds.feed(pieces[1])
    assert ds._tail == ""
    _same_as_old("qwen3-coder", CHATML, pieces)
