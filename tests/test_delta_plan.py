"""`delta_plan`: what a `DeltaStream` derives per field is built once per (template, options) and equals the
per-stream computation it replaced (the oracle below is that old loop, verbatim in substance)."""

from __future__ import annotations

from typing import Any

import pytest

from hf_response_templates import delta_plan
from hf_response_templates.content import get_content_parser
from hf_response_templates.delta_state import _REASONING_NAMES
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import _FACTORIES, has_partial_parser
from hf_response_templates.template import load_template

OPTIONS: list[dict[str, Any]] = [
    {},
    {"reasoning_field": None},
    {"content_field": "reasoning_content", "reasoning_field": "auto"},
    {"tool_call_fields": ()},
    {"field_keys": {"content": "text", "tool_calls": None}},
]


def _old(tpl: Any, tool_call_fields: Any = ("tool_calls",), reasoning_field: Any = "auto",
         content_field: str = "content", field_keys: Any = None) -> dict:
    """The per-stream loop of `DeltaStream.__init__` before `delta_plan` (42a9b5e)."""
    sources = tpl.source["fields"]
    tool_fields = set(tool_call_fields)
    names = tpl.field_names
    if reasoning_field == "auto":
        reasoning_field = next(
            (n for n in _REASONING_NAMES if n in names and n not in tool_fields and n != content_field), None)
    kind, key, strip, shape, pargs = {}, {}, {}, set(), {}
    for f in tpl.fields:
        spec = sources[f.name]
        cargs = spec.get("content_args") or {}
        if f.name in tool_fields:
            k, kk = "tool", "tool_calls"
            shape.add(f.name)
        else:
            k = "text" if f.content == "text" and (not f.repeats or f.join is not None) else "value"
            kk = {content_field: "content", reasoning_field: "reasoning_content"}.get(f.name, f.name)
        if field_keys and f.name in field_keys:
            kk = field_keys[f.name]
        kind[f.name], key[f.name] = k, kk
        strip[f.name] = bool(cargs.get("strip", True))
        if has_partial_parser(f.content):
            pargs[f.name] = get_content_parser(f.content).compile_args(cargs, f.name)
    return {"kind": kind, "key": key, "strip": strip, "shape": shape, "partial": pargs}


@pytest.mark.parametrize("name", list_templates())
def test_the_plan_equals_the_old_per_stream_loop(name: str) -> None:
    tpl = load_template(get_template(name))
    for opts in OPTIONS:
        want = _old(tpl, **opts)
        for _ in range(2):  # built, then reused
            ds = DeltaStream(tpl, prefix="", id_seed=0, **opts)
            got = {"kind": ds._kind, "key": ds._key, "strip": ds._strip, "shape": set(ds._shape),
                   "partial": ds._partial_args}
            # (compiled args hold fresh objects, e.g. patterns, each time they are compiled: compare their keys
            # and that they are the template's cached compilation)
            assert {k: sorted(v) for k, v in got.pop("partial").items()} == {
                k: sorted(v) for k, v in want["partial"].items()}, (name, opts)
            cached = delta_plan._analysis(tpl)[1]
            assert all(v is cached[k][1] for k, v in ds._partial_args.items())
            assert got == {k: v for k, v in want.items() if k != "partial"}, (name, opts)
            assert set(ds._text) == set(tpl.field_names)


def test_the_plan_is_built_once_per_template_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    builds = []
    real = delta_plan._build
    monkeypatch.setattr(delta_plan, "_build", lambda *a: builds.append(a) or real(*a))
    tpl = load_template(get_template("hermes3"))
    delta_plan._analysis(tpl)[3].clear()
    monkeypatch.setattr(delta_plan, "_LAST", None)  # (the last plan a stream got: `stream_plan`)
    streams = [DeltaStream(tpl, prefix="", id_seed=i) for i in range(5)]
    assert len(builds) == 1  # (fails on the old code's shape: one build per stream)
    DeltaStream(tpl, prefix="", reasoning_field=None)
    DeltaStream(tpl, prefix="", field_keys={"content": "text"})
    DeltaStream(tpl, prefix="", field_keys={"content": "text"})
    assert len(builds) == 3
    # each stream has dicts of its own, and fresh text states
    assert streams[0]._kind is not streams[1]._kind
    assert streams[0]._text["content"] is not streams[1]._text["content"]


def test_a_partial_parser_registered_later_rebuilds_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    tpl = load_template(get_template("hermes3"))
    DeltaStream(tpl, prefix="", id_seed=0)
    plan = delta_plan.field_plan(tpl, ("tool_calls",), "auto", "content", None)
    monkeypatch.setitem(_FACTORIES, "some-new-format", lambda args: None)
    again = delta_plan.field_plan(tpl, ("tool_calls",), "auto", "content", None)
    assert again is not plan and again.factories == plan.factories + 1


def test_construction_does_less_python_work_per_field() -> None:
    """Opcodes of one `DeltaStream` construction with the plan cached (deterministic): 42a9b5e ran its field
    loop in ``__init__`` (527 opcodes there for Hermes 3); it is now a handful of copies."""
    import sys

    tpl = load_template(get_template("hermes3"))
    DeltaStream(tpl, prefix="", id_seed=0)
    ops = {}

    def trace(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            ops[frame.f_code.co_name] = ops.get(frame.f_code.co_name, 0) + 1
        return trace

    sys.settrace(trace)
    try:
        DeltaStream(tpl, prefix="", id_seed=0)
    finally:
        sys.settrace(None)
    assert ops.get("_build", 0) == 0
    assert ops["__init__"] < 450, ops  # (DeltaStream's and the parser's __init__ together)
