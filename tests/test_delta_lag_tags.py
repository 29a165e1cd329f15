"""Fewer reads per piece in tool regions of tags and dialects (issue 18, item 1: deltas within 3x of the parser):

* `DeltaStream._take` keeps a piece holding the parser's `region_char` (``<``) in its lag too when the parser's
  `ResponseParser.region_test` says no delimiter starts in it (``x < y``, ``</parameter>``), and hands a piece
  that test flags straight to the parser's `feed` (one `feed_region` call of the lag before it, not two);
* `XmlTagsPartial`, following, between two tags and after a cut opener (``\\n<para``), keeps text without the
  head's last character (``>``) for later (`wait`), as it did in a head (it waited for ``<`` between tags).

The old paths are the oracle: for any text and chunking, every piece gives the deltas it gave before."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from test_delta_xml_params import _args, qwen_call
from test_openai_deltas import CHATML, SETTINGS, chunkings

from hf_response_templates import ResponseParser, get_template
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import XmlTagsPartial, partial_parser
from hf_response_templates.partial import xml_tags as xml_tags_module

GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"


def _old_set_wait(self: XmlTagsPartial) -> None:
    """`XmlTagsPartial._set_wait` before: between two tags, text holding `<` is read; after a cut opener, any text."""
    mode = self._mode
    if mode == xml_tags_module._IN_VALUE:
        self.wait = None
    elif mode == xml_tags_module._SEEK and not self._buf:
        self.wait = self._wait_seek
    elif mode == xml_tags_module._HEAD and not self._edge and self._head_last is not None:
        self.wait = self._wait_head
    else:
        self.wait = None


@contextlib.contextmanager
def old_paths() -> Iterator[None]:
    """Within the block: no `region_test` (a piece with ``<`` goes to `feed_region` as before) and the old
    `_set_wait`."""
    region_test, set_wait = ResponseParser.region_test, XmlTagsPartial._set_wait
    ResponseParser.region_test = lambda self: None  # type: ignore[method-assign]
    XmlTagsPartial._set_wait = _old_set_wait  # type: ignore[method-assign]
    try:
        yield
    finally:
        ResponseParser.region_test = region_test  # type: ignore[method-assign]
        XmlTagsPartial._set_wait = set_wait  # type: ignore[method-assign]


def _per_piece(name: str, prefix: str, pieces: list[str]) -> tuple[list, dict | None]:
    ds = DeltaStream(get_template(name), prefix=prefix, id_seed=0)
    out = [ds.feed(p) for p in pieces]
    out.append(ds.finish())
    assert ds.warnings == []
    return out, ds.message


def _same_as_old(name: str, prefix: str, pieces: list[str]) -> None:
    new = _per_piece(name, prefix, pieces)
    with old_paths():
        old = _per_piece(name, prefix, pieces)
    assert new == old


@settings(max_examples=150, **SETTINGS)
@given(text=qwen_call(), data=st.data())
def test_qwen_calls_give_the_deltas_of_the_old_paths_piece_by_piece(text: str, data: st.DataObject) -> None:
    _same_as_old("qwen3-coder", CHATML, data.draw(chunkings(text)))


WORDS = st.sampled_from(["a", "é", " ", "\n", "<", "</", "<|", "|>", "x < y", ", ", "1", "k", ": ", "[1, 2]", "<b>"])


@settings(max_examples=150, **SETTINGS)
@given(a=st.lists(WORDS, max_size=20), b=st.lists(WORDS, max_size=20), data=st.data())
def test_gemma_and_hermes_calls_give_the_deltas_of_the_old_paths_piece_by_piece(a, b, data) -> None:  # noqa: ANN001
    s, t = "".join(a).replace("<|", ""), "".join(b).replace("<|", "")
    gemma = f'<|tool_call>call:f{{s:<|"|>{s}<|"|>,n:[1, 2],k: 3,t:<|"|>{t}<|"|>}}<tool_call|>{t}<turn|>'
    _same_as_old("gemma4", GEMMA, data.draw(chunkings(gemma)))
    s, t = s.replace('"', ""), t.replace('"', "")
    hermes = f'{t}<tool_call>\n{{"name": "f", "arguments": {{"s": "{s}", "n": 1}}}}\n</tool_call>{s}<|im_end|>'
    _same_as_old("hermes3", CHATML, data.draw(chunkings(hermes)))
    smol = f"<think>\n{s}\n</think>\n{t}<|im_end|>"
    _same_as_old("smollm3", CHATML, data.draw(chunkings(smol)))


def _region_takes(monkeypatch, name: str, prefix: str, pieces: list[str]) -> list[str]:  # noqa: ANN001
    taken: list[str] = []
    region_take = ResponseParser.feed_region
    monkeypatch.setattr(ResponseParser, "feed_region", lambda self, t: taken.append(t) or region_take(self, t))
    ds = DeltaStream(get_template(name), prefix=prefix, id_seed=0)
    for p in pieces:
        ds.feed(p)
    ds.finish()
    assert ds.warnings == []
    return taken


def test_pieces_with_a_lt_that_starts_no_delimiter_stay_in_the_lag(monkeypatch) -> None:  # noqa: ANN001
    """A value full of ``x < y``: its pieces reach the parser joined (once per `_LAG_AT` pieces), not one
    `feed_region` call per piece holding ``<`` (the old path: 100 calls)."""
    body = "<parameter=q>\n" + "x < y " * 100 + "\n</parameter>\n"
    text = f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call><|im_end|>"
    head = text.index("x < y")
    pieces = [text[:head]] + ["x < y "] * 100 + [text[head + 600 :]]
    assert len(_region_takes(monkeypatch, "qwen3-coder", CHATML, pieces)) <= 5


def test_a_piece_that_may_start_a_delimiter_skips_feed_region(monkeypatch) -> None:  # noqa: ANN001
    """``<|`` may start Gemma 4's ``<|"|>`` and ``<tool_call|>``: the lag before it is handed on (one call),
    the piece goes to `feed` (the old path tried `feed_region` with the piece first: two calls)."""
    text = '<|tool_call>call:f{s:<|"|>abc def ghi<|"|>}<tool_call|><turn|>'
    cut = text.index("ghi") + 3
    pieces = [text[: text.index("abc")], "abc", " def", " ghi", "<|", text[cut + 2 :]]
    taken = _region_takes(monkeypatch, "gemma4", GEMMA, pieces)
    assert [t for t in taken if "ghi" in t] == [" def ghi"]


def test_after_a_cut_opener_text_without_its_gt_waits() -> None:
    """Following, after ``\\n<par`` (a cut opener, read with the value's end), text without ``>`` is kept
    (`hold`) and read with the piece that holds it: the same members, written at that piece; between two tags,
    an opener too."""
    p = partial_parser("xml-inline", _args("qwen3-coder"))
    assert p.follow(p.stack[0]) is True
    out = [p.feed("<parameter=a>\nx\n</parameter>\n<par")]
    assert p.wait == frozenset(">")
    assert p.hold("ameter=b") and p.hold("c") and not p.hold(">\n")
    out.append(p.feed(">\ny"))
    assert "".join(out) == '"a": "x", "bc": "y' and p.wait is None
    out.append(p.feed("\n</parameter>\n"))
    assert p.wait == frozenset(">") and p.hold("<parameter=d") and not p.hold(">")
    out.append(p.feed(">z"))
    assert "".join(out) == '"a": "x", "bc": "y", "d": "z'
