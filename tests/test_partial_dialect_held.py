"""Gemma 4's dialect, following (issue 18, item 1: deltas within 3x of the parser): a member held back between
two others (an integer, a literal, a list of integers) and the start of the next one are read with one match
(`json_dialect._HELD_MEMBER`) instead of `JsonDialectPartial._follow_members`; a custom-delimited string value
sinks as a JSON string does (`string_sink`, `sink_stop` known from the start, `sink_test` for a piece holding
``<``). The old paths (the pattern never matching, the string's pieces through `sink`) are the oracle: for any
arguments and chunking, every piece gives the deltas it gave before."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import SETTINGS, chunkings

import hf_response_templates.partial.json_dialect as json_dialect
from hf_response_templates import get_template
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import JsonDialectPartial, partial_parser

GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"
ARGS = {"unquoted_keys": True, "string_delims": (('<|"|>', '<|"|>'),)}

VALUES = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(["true", "false", "null", "[]", "[1, 2, 3]", "[1,2]", "[-1, 0]", "01", "-0", "1.5", "1e3",
                     '<|"|>a, b<|"|>', '<|"|>x < y<|"|>', "[1, [2]]", '[<|"|>a<|"|>]', "{a: 1}",
                     '<|"|>a\n<|b < |"<|"|>', '<|"|><<|"|>', '"q<|x"', '<|"|>é \\ "<|"|>']),  # fmt: skip
)
SEPS = st.sampled_from([", ", ",", " , ", ",\n", ",  "])


def _per_piece(pieces: list[str]) -> tuple[list, dict | None]:
    ds = DeltaStream(get_template("gemma4"), prefix=GEMMA, id_seed=0)
    out = [ds.feed(p) for p in pieces]
    out.append(ds.finish())
    assert ds.warnings == []
    return out, ds.message


@settings(max_examples=300, **SETTINGS)
@given(values=st.lists(VALUES, min_size=1, max_size=8), seps=st.lists(SEPS, min_size=8, max_size=8),
       colon=st.sampled_from([": ", ":", " : "]), data=st.data())  # fmt: skip
def test_members_give_the_deltas_of_the_old_path_piece_by_piece(values, seps, colon, data) -> None:  # noqa: ANN001
    body = "".join((seps[i] if i else "") + f"k{i % 5}{colon}{v}" for i, v in enumerate(values))
    text = f"<|tool_call>call:f{{{body}}}<tool_call|><turn|>"
    pieces = data.draw(chunkings(text))
    new = _per_piece(pieces)
    held, init = json_dialect._HELD_MEMBER, JsonDialectPartial.__init__

    def old_init(self: JsonDialectPartial, *args: object) -> None:  # the string's pieces through `sink` only
        init(self, *args)  # type: ignore[arg-type]
        self._sink_close, self.sink_stop, self.sink_test = None, "", None

    json_dialect._HELD_MEMBER = re.compile(r"(?!)")
    JsonDialectPartial.__init__ = old_init  # type: ignore[method-assign]
    try:
        old = _per_piece(pieces)
    finally:
        json_dialect._HELD_MEMBER = held
        JsonDialectPartial.__init__ = init  # type: ignore[method-assign]
    assert new == old


def test_a_member_between_two_others_is_read_with_one_match(monkeypatch) -> None:  # noqa: ANN001
    p = partial_parser("json", ARGS)
    assert isinstance(p, JsonDialectPartial)
    p.feed("{")
    assert p.follow(p.stack[0])
    assert p.feed("a: 1, ") == '"a": 1'
    calls: list[int] = []
    members = JsonDialectPartial._follow_members
    monkeypatch.setattr(JsonDialectPartial, "_follow_members", lambda *a: calls.append(1) or members(*a))
    written = []
    for piece in ["b", ": 12", "34, c", ": [1, ", "2]", ", d: tr", "ue, e"]:
        written.append("" if p.hold(piece) else p.feed(piece))
    assert "".join(written) == ', "b": 1234, "c": [1, 2], "d": true'
    assert calls == []
    p.feed(": 5}")
    assert json.loads('{"a": 1' + "".join(written) + ', "e": 5}') == p.value


def test_a_bracket_in_a_quoted_string_value_opened_in_the_text_kept_is_no_list() -> None:
    """A `[` and a `,` in a piece after `, key: "` was kept: the `"` opened a standard string, so the piece is
    read (not kept waiting for a `]`, which never came: the reader stopped there). Fails on 9ecb8ae."""
    from test_partial_dialect import _check

    body = '{k0: [true],k1: "a[b, c"}'
    _check({"k0": [True], "k1": "a[b, c"}, body, ["{", "k0: [true]", ',k1: "', "a[b,", ' c"}'])


STRINGS = st.lists(st.sampled_from(["a", " b", "<", "<|", "x < y", '<|"', "é", '"', "\\", "\n", ",", "}"]),
                   max_size=5).map("".join)  # fmt: skip


@settings(max_examples=200, **SETTINGS)
@given(values=st.lists(st.one_of(STRINGS.map(lambda s: '<|"|>' + s + '<|"|>'), VALUES), min_size=1, max_size=8),
       seps=st.lists(SEPS, min_size=8, max_size=8), data=st.data())  # fmt: skip
def test_a_string_value_opening_in_held_text_gives_the_deltas_of_follow_members(values, seps, data) -> None:  # noqa: ANN001
    """A member held back, completed by a string value's opening delimiter (`JsonDialectPartial._held_open`), and
    the string's text after it read in the same step when it holds no character its close starts with: the
    oracle is `_follow_members` reading it (`_held_open` None), piece by piece."""
    body = "".join((seps[i] if i else "") + f"k{i}: {v}" for i, v in enumerate(values))
    text = f"<|tool_call>call:f{{{body}}}<tool_call|><turn|>"
    pieces = data.draw(chunkings(text))
    new = _per_piece(pieces)
    init = JsonDialectPartial.__init__

    def old_init(self: JsonDialectPartial, *args: object) -> None:
        init(self, *args)  # type: ignore[arg-type]
        self._held_open = None

    JsonDialectPartial.__init__ = old_init  # type: ignore[method-assign]
    try:
        old = _per_piece(pieces)
    finally:
        JsonDialectPartial.__init__ = init  # type: ignore[method-assign]
    assert new == old


def test_a_string_value_opening_in_held_text_is_read_without_custom_string(monkeypatch) -> None:  # noqa: ANN001
    """Counts: ``, b: <|"|>xy`` completes the member held back (``, b: ``) and its text holds no ``<``: read in
    `feed` itself, without `JsonDialectPartial._custom_string` (the old path called it)."""
    calls: list[str] = []
    custom = JsonDialectPartial._custom_string
    monkeypatch.setattr(JsonDialectPartial, "_custom_string", lambda self, s, i: calls.append(s) or custom(self, s, i))
    ds = DeltaStream(get_template("gemma4"), prefix=GEMMA, id_seed=0)
    for piece in ["<|tool_call>call:f{", "a: 1", ", b: ", '<|"|>xy']:
        out = ds.feed(piece)
    assert out == [{"tool_calls": [{"index": 0, "function": {"arguments": ', "b": "xy'}}]}]
    assert calls == []
    for piece in [" z", '<|"|>}', "<tool_call|><turn|>"]:
        ds.feed(piece)
    ds.finish()
    assert ds.message["tool_calls"][0]["function"]["arguments"] == {"a": 1, "b": "xy z"}
