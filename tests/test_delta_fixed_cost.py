"""What a `DeltaStream` pays once per stream (issue 18, item 1: a 1k character stream cannot amortise it): its
construction (`delta_plan.stream_plan`), the ids it generates (`delta_ids`), its partial parsers' constants
(`xml_tags._shape_constants`, `json_dialect._dialect_constants`), the delimiters it searches for model ids
(`FieldPlan.id_fields`) and a one-call region's sources (`_Region.srcs`). Counts that fail on the code before
(c1c2fdf), and equality of each shortcut with the path it replaces."""

from __future__ import annotations

import copy
import random
import re
import string
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import ALL_RAW, CHATML, SETTINGS, TOOLS, chunkings

from hf_response_templates import delta_ids, delta_plan, get_template
from hf_response_templates.delta_plan import _may_hold_id
from hf_response_templates.delta_tools import ToolCallDeltas
from hf_response_templates.deltas import DeltaStream
from hf_response_templates.partial import json_dialect, partial_parser, xml_tags
from hf_response_templates.template import load_template

_CHARS = string.ascii_letters + string.digits


def _calls_text(n: int) -> str:
    return "".join(f'<tool_call>\n{{"name": "f{i}", "arguments": {{"i": {i}}}}}\n</tool_call>' for i in range(n)) + (
        "<|im_end|>"
    )


def _reference_ids(seed: Any, n: int, completion: bool) -> tuple[str, list[str]]:
    """One generator per stream, as before: its first draw is the completion id (unless given), then the calls'."""
    rng = random.Random(seed)
    draws = ["".join(rng.choice(_CHARS) for _ in range(24)) for _ in range(n + 1)]
    return "chatcmpl-" + draws[0], ["call_" + d for d in (draws[1:] if completion else draws[:n])]


def _ids_of(seed: Any, n: int, completion_id: str | None = None, pieces: list[str] | None = None) -> tuple:
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=seed, completion_id=completion_id)
    text = _calls_text(n)
    for piece in pieces or [text]:
        ds.feed(piece)
    ds.finish()
    assert ds.warnings == []
    return ds.completion_id, ds.tool_call_ids


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("seed", [0, 7, 2**80, -3, "a seed", True, 1.5, b"bytes"])
@pytest.mark.parametrize("n", [0, 1, 3, delta_ids._KEEP + 6])  # (past the draws kept per seed: `Draws.fork`)
def test_seeded_ids_are_one_generator_per_streams_ids(seed: Any, n: int) -> None:
    completion, calls = _reference_ids(seed, n, completion=True)
    for _ in range(2):  # drawn, then read from what the seed kept
        assert _ids_of(seed, n) == (completion, calls)
    _, calls = _reference_ids(seed, n, completion=False)
    assert _ids_of(seed, n, completion_id="given") == ("given", calls)


@settings(max_examples=40, **SETTINGS)
@given(seeds=st.lists(st.integers(0, 3), min_size=1, max_size=4), n=st.integers(0, 4), data=st.data())
def test_interleaved_streams_of_one_seed_draw_as_separate_generators(seeds: list[int], n: int, data) -> None:
    """Streams sharing a seed's draws, fed in turns, get the ids each would get from a generator of its own."""
    text = _calls_text(n)
    streams = [(seed, DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=seed)) for seed in seeds]
    plans = [data.draw(chunkings(text)) for _ in streams]
    for k in range(max(map(len, plans))):
        for (_, ds), pieces in zip(streams, plans, strict=True):
            if k < len(pieces):
                ds.feed(pieces[k])
    for seed, ds in streams:
        ds.finish()
        assert (ds.completion_id, ds.tool_call_ids) == _reference_ids(seed, n, completion=True)


def test_a_seed_drawn_before_costs_no_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second stream of a seed neither seeds a generator nor draws (c1c2fdf did both per stream: ~260 Python
    opcodes, a tenth of a 1k stream's fixed cost)."""
    _ids_of(11, 2)
    drawn: list[int] = []
    real = delta_ids._random_id
    monkeypatch.setattr(delta_ids, "_random_id", lambda rng: drawn.append(1) or real(rng))
    in_random: list[str] = []

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code.co_filename.endswith("random.py"):
            in_random.append(frame.f_code.co_name)
        return None

    sys.settrace(trace)
    try:
        got = _ids_of(11, 2)
    finally:
        sys.settrace(None)
    assert got == _reference_ids(11, 2, completion=True)
    assert drawn == [] and in_random == []


def test_unseeded_ids_have_the_format() -> None:
    completion, calls = _ids_of(None, 3)
    assert re.fullmatch(r"chatcmpl-[A-Za-z0-9]{24}", completion)
    assert len(set(calls)) == 3 and all(re.fullmatch(r"call_[A-Za-z0-9]{24}", c) for c in calls)
    assert _ids_of(None, 1) != _ids_of(None, 1)


# --------------------------------------------------------------------------- construction


def test_a_second_stream_of_a_template_plans_without_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    """`stream_plan` answers the last template and options itself (c1c2fdf looked the plan and the partial args
    up per stream); another template, other options or a content parser registered again are looked up."""
    tpl = load_template(get_template("hermes3"))
    DeltaStream(tpl, prefix="", id_seed=0)
    calls: list[str] = []
    for name in ("field_plan", "partial_args"):
        real = getattr(delta_plan, name)
        monkeypatch.setattr(delta_plan, name, lambda *a, _n=name, _r=real: calls.append(_n) or _r(*a))
    a, b = DeltaStream(tpl, prefix="", id_seed=0), DeltaStream(tpl, prefix="")
    assert calls == []
    assert a._partial_args == b._partial_args and a._partial_args is not b._partial_args
    assert a._kind == b._kind and a._kind is not b._kind
    DeltaStream(tpl, prefix="", reasoning_field=None)
    assert calls == ["field_plan", "partial_args"]
    DeltaStream(tpl, prefix="", field_keys={"content": "text"})
    DeltaStream(tpl, prefix="", field_keys={"content": "text"})  # (a mapping: not kept, may be changed)
    assert len(calls) == 6
    from hf_response_templates.content import base

    DeltaStream(tpl, prefix="")
    calls.clear()
    monkeypatch.setitem(base._REGISTRY, "json", base._REGISTRY["json"])  # (the same parser: still valid)
    DeltaStream(tpl, prefix="")
    assert calls == []
    # (registered again: the args are compiled again, by that parser)
    monkeypatch.setitem(base._REGISTRY, "json", copy.copy(base._REGISTRY["json"]))
    again = DeltaStream(tpl, prefix="")
    assert calls == ["field_plan", "partial_args"]
    assert again._partial_args["tool_calls"] is not a._partial_args["tool_calls"]


def _old_xml_constants(shape: Any) -> tuple:
    """`XmlTagsPartial.__init__`'s derivation at c1c2fdf (the oracle of `_shape_constants`)."""
    stops = frozenset({t[0] for t in shape.ends + shape.looks} | ({"\n"} if shape.newline else set()))
    hold = max(len(t) for t in shape.ends + shape.looks) + 1
    value_stop = xml_tags._value_stop(shape)
    fast = value_stop is not None and shape.head_fast is not None and shape.head_last is not None
    printable = [c for c in stops if c.isprintable()]
    return (stops, hold, value_stop, fast, value_stop.search if fast else None,
            printable[0] if len(printable) == 1 else None, frozenset(shape.opener[0]),
            frozenset(shape.head_last) if shape.head_last is not None else None)


def _comparable(values: tuple) -> tuple:
    def one(v: Any) -> Any:
        if isinstance(v, re.Pattern):
            return ("re", v.pattern, v.flags)
        if callable(v) and isinstance(getattr(v, "__self__", None), re.Pattern):
            return ("search", v.__self__.pattern, v.__self__.flags)
        if isinstance(v, dict):
            return {k: one(x) for k, x in v.items()}
        if isinstance(v, tuple):
            return tuple(one(x) for x in v)
        return v

    return tuple(one(v) for v in values)


XML_TEMPLATES = ["qwen3-coder", "qwen3.5", "glm-4.7", "minimax-m2", "kimi-k3", "seed-oss", "deepseek-v3.2"]


@pytest.mark.parametrize("name", XML_TEMPLATES)
def test_xml_tag_parsers_derive_their_shape_constants_once(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tpl = load_template(get_template(name))
    ds = DeltaStream(tpl, prefix="")
    args = ds._partial_args.get("tool_calls")
    parser = partial_parser("xml-inline", args)
    if not isinstance(parser, xml_tags.XmlTagsPartial):
        pytest.skip("not a tag-shape reader")
    shape = args["_shape"]
    assert _comparable(xml_tags._shape_constants(shape)) == _comparable(_old_xml_constants(shape))
    made: list[int] = []
    real = xml_tags._value_stop
    monkeypatch.setattr(xml_tags, "_value_stop", lambda s: made.append(1) or real(s))
    for _ in range(3):
        partial_parser("xml-inline", args)
    assert made == []  # (c1c2fdf: one `_value_stop` per parser, ~600 Python opcodes)


def _old_dialect_constants(p: json_dialect.JsonDialectPartial, unquoted_keys: bool) -> tuple:
    """`JsonDialectPartial.__init__`'s derivation at c1c2fdf (the oracle of `_dialect_constants`)."""
    delims = p._delims
    wake = frozenset(",}]" + ("".join(o[-1] for o, _c in delims if o) or '"'))
    custom = [o for o, _c in delims if o and not o.startswith('"')]
    held_open = (
        re.compile(json_dialect._WS + "," + json_dialect._KEY + "(" + "|".join(re.escape(o) for o in custom) + ")")
        if custom else None
    )
    firsts = {c[0] for _o, c in delims if c}
    sink_close = firsts.pop() if len(firsts) == 1 and unquoted_keys else None
    sink_test = None
    if sink_close is not None:
        closes = sorted({c for _o, c in delims if c}, key=len, reverse=True)
        cuts = sorted({c[:k] for c in closes for k in range(1, len(c))}, key=len, reverse=True)
        sink_test = re.compile(
            "|".join(re.escape(c) for c in closes) + ("|(?:" + "|".join(map(re.escape, cuts)) + r")\Z" if cuts else "")
        ).search
    return (wake, wake - {","}, {"unquoted_keys": unquoted_keys, "string_delims": delims}, frozenset(p._openers),
            json_dialect._member_regexes(delims), held_open, sink_close, sink_test)


@pytest.mark.parametrize(
    "dialect", [(True, (('<|"|>', '<|"|>'),)), (True, ()), (False, (("'", "'"),)), (True, (("«", "»"), ("'", "'")))]
)
def test_dialect_parsers_derive_their_constants_once(dialect: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    unquoted, delims = dialect
    p = json_dialect.JsonDialectPartial(unquoted, delims)
    got = (p._wake, p._wake_no_comma, p._dialect, p._opener_chars, p._members, p._held_open, p._sink_close,
           p.sink_test)
    assert _comparable(got) == _comparable(_old_dialect_constants(p, unquoted))
    assert p.sink_stop == (p._sink_close or "") and p.sink is None
    made: list[int] = []
    real = json_dialect._member_regexes
    monkeypatch.setattr(json_dialect, "_member_regexes", lambda d: made.append(1) or real(d))
    for _ in range(3):
        json_dialect.JsonDialectPartial(unquoted, delims)
    assert made == []  # (c1c2fdf: once per parser)


# --------------------------------------------------------------------------- model ids and sources


def test_only_delimiters_that_may_hold_an_id_are_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermes 3's literal ``<tool_call>`` cannot hold a call id: its delimiters are not searched (c1c2fdf searched
    every one); Mistral's and Kimi K2's patterns may, and theirs are."""
    searched: list[str] = []
    real = DeltaStream._on_delimiter
    monkeypatch.setattr(DeltaStream, "_on_delimiter", lambda self, ev: searched.append(ev["text"]) or real(self, ev))
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=0)
    ds.feed(_calls_text(2))
    ds.finish()
    assert searched == [] and len(ds.tool_call_ids) == 2
    ds = DeltaStream(get_template("mistral-small-3.2"), prefix="[INST]Hi[/INST]", id_seed=0)
    ds.feed('[TOOL_CALLS]f[CALL_ID]abcdefghi[ARGS]{"a": 1}</s>')
    ds.finish()
    assert searched and ds.tool_call_ids == ["abcdefghi"]
    assert _may_hold_id({"open": "<tool_call>"}) is False
    assert _may_hold_id({"open": ["<a>", "<|tool_call_begin|> functions.f:0"]}) is True
    assert _may_hold_id({"open": "[TOOL_CALLS]f[CALL_ID]x[ARGS]"}) is True
    assert _may_hold_id({"open_pattern": "<tool_call>"}) is True
    assert _may_hold_id({"open": 3}) is True


def test_a_one_call_region_works_out_its_sources_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = ToolCallDeltas._sources
    monkeypatch.setattr(ToolCallDeltas, "_sources", lambda self, *a: calls.append(1) or real(self, *a))
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=0)
    for c in '<tool_call>\n{"name": "write", "arguments": {"text": "hi", "n": [1, 2]}}\n</tool_call><|im_end|>':
        ds.feed(c)
    ds.finish()
    assert len(calls) == 1  # (c1c2fdf: once per update of the region until its arguments were complete, 7 here)


def _stream(name: str, prefix: str, pieces: list[str], tools: Any, oracle: bool) -> tuple:
    ds = DeltaStream(get_template(name), prefix=prefix, tools=tools, id_seed=0)
    if oracle:  # every tool delimiter searched, and the sources worked out at each update (the general loop)
        ds._id_fields = frozenset(k for k, v in ds._kind.items() if v == "tool")
        update = ds._update_tool

        def general(r: Any, out: list) -> None:
            r.srcs = None
            update(r, out)
            r.srcs = None

        ds._update_tool = general  # type: ignore[method-assign]
    deltas = [d for piece in pieces for d in ds.feed(piece)] + ds.finish()
    return deltas, ds.tool_call_ids, ds.message, ds.warnings


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_the_shortcuts_give_the_deltas_of_the_general_paths(data: st.DataObject) -> None:
    name, prefix, text = data.draw(st.sampled_from(ALL_RAW))
    pieces = data.draw(chunkings(text))
    tools = data.draw(st.sampled_from([TOOLS, None]))
    fast = _stream(name, prefix, pieces, tools, oracle=False)
    assert fast == _stream(name, prefix, pieces, tools, oracle=True)
    assert fast[3] == []
