"""The short paths of `XmlTagsPartial` while it follows (issue 18, item 1: deltas within 3x of the parser): a
piece of a value that holds ``<`` or a newline is read with one search (`_value_stop`), a value's end that
completes the text held back and a head that completes are taken without the general reader (`_follow_end`,
`_follow_head`). The old paths (the general reader, `_value_stop` None) are the oracle: for any text and
chunking, every piece gives the deltas it gave before."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_delta_xml_params import qwen_call
from test_openai_deltas import CHATML, SETTINGS, chunkings

from hf_response_templates import get_template
from hf_response_templates.content import get_content_parser
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import XmlTagsPartial, partial_parser
from hf_response_templates.partial import xml_tags as xml_tags_module


@contextlib.contextmanager
def old_paths() -> Iterator[None]:
    """Within the block: new readers have no `_value_stop`, so following takes the general reader."""
    value_stop = xml_tags_module._value_stop
    xml_tags_module._value_stop = lambda shape: None
    try:
        yield
    finally:
        xml_tags_module._value_stop = value_stop


def _per_piece(name: str, pieces: list[str]) -> tuple[list, dict | None]:
    ds = DeltaStream(get_template(name), prefix=CHATML, id_seed=0)
    out = [ds.feed(p) for p in pieces]
    out.append(ds.finish())
    assert ds.warnings == []
    return out, ds.message


def _same_as_old(name: str, pieces: list[str]) -> None:
    new = _per_piece(name, pieces)
    with old_paths():
        old = _per_piece(name, pieces)
    assert new == old


@settings(max_examples=300, **SETTINGS)
@given(text=qwen_call(), data=st.data())
def test_qwen_calls_give_the_deltas_of_the_general_reader_piece_by_piece(text: str, data: st.DataObject) -> None:
    _same_as_old("qwen3-coder", data.draw(chunkings(text)))


VALUE = st.lists(st.sampled_from(["a", " ", "\n", "<", "</", "x < y", "</p", "<p", "</parameter", "<parameter",
                                  "é", '"', "\\", ">", "="]), max_size=8).map("".join)  # fmt: skip


@settings(max_examples=300, **SETTINGS)
@given(values=st.lists(VALUE, min_size=1, max_size=4), sep=st.sampled_from(["\n", "", "\n\n", " "]),
       data=st.data())  # fmt: skip
def test_values_with_cut_ends_give_the_deltas_of_the_general_reader(values: list[str], sep: str, data) -> None:  # noqa: ANN001
    body = "".join(f"<parameter=k{i}>\n{v}\n</parameter>{sep}" for i, v in enumerate(values))
    text = f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call><|im_end|>"
    pieces = data.draw(chunkings(text))
    _same_as_old("qwen3-coder", pieces)
    _same_as_old("qwen3-coder", list(text))


@pytest.mark.parametrize("name", ["qwen3-coder", "qwen3.5"])
def test_a_tag_sequence_is_read_without_the_general_reader(name: str, monkeypatch) -> None:  # noqa: ANN001
    args = get_content_parser("xml-inline").compile_args(
        get_template(name)["fields"]["tool_calls"]["content_args"], "tool_calls"
    )
    p = partial_parser("xml-inline", args)
    assert isinstance(p, XmlTagsPartial) and p._fast
    assert p.feed("<parameter=a>\nx") is None
    assert p.follow(p._frame)
    reads: list[str] = []
    read = XmlTagsPartial._read
    monkeypatch.setattr(XmlTagsPartial, "_read", lambda self, s, i=0: reads.append(s) or read(self, s, i))
    # (as `DeltaStream` feeds it: text that `hold` keeps is read with the next piece fed)
    pieces = ["y < z", "\n</p", "aram", "eter>\n<p", "arameter=b", ">\nv", "\nw", "\n</"]
    written = ["" if p.hold(t) else p.feed(t) for t in pieces]
    assert written == ["y < z", "", "", '"', "", ', "b": "v', "\\nw", ""]
    assert reads == []  # (each piece: one search, or a prefix test)
    assert p.snapshot() == {"a": "xy < z", "b": "v\nw"}


def test_a_value_piece_holding_a_lt_that_ends_nothing_sinks(monkeypatch) -> None:  # noqa: ANN001
    """`XmlTagsPartial.sink_test`: `delta_hot.hot_feed` appends such a piece to the open value itself."""
    fed: list[str] = []
    feed = XmlTagsPartial.feed
    monkeypatch.setattr(XmlTagsPartial, "feed", lambda self, t: fed.append(t) or feed(self, t))
    text = "<tool_call>\n<function=f>\n<parameter=a>\nx < y and z<\n</parameter>\n</function>\n</tool_call><|im_end|>"
    pieces = [text[: text.index("x < y")], "x", " < y", " and z", "<", "\n</parameter>\n</function>\n</tool_call><|im_end|>"]
    out, message = _per_piece("qwen3-coder", pieces)
    assert out[2] == [{"tool_calls": [{"index": 0, "function": {"arguments": " < y"}}]}]
    assert " < y" not in fed and " and z" not in fed  # (appended by the stream: no `feed`)
    assert message["tool_calls"][0]["function"]["arguments"] == {"a": "x < y and z<"}
