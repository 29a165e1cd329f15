"""What a `DeltaStream` derives from its template and options, computed once per (template, options).

A `DeltaStream` maps each template field to a kind (``"tool"``, ``"text"`` or ``"value"``), a delta key, a
``strip`` flag, a tool-call `_Shape` and, for a content format with a partial parser, its compiled content
args. That depends only on the (immutable) compiled template, the stream's field options and the content
parser registry, yet building it field by field cost ~500 Python opcodes per stream (a third of a 1k
character stream's fixed cost). `field_plan` builds it once per template and options and hands each stream
copies of the same dicts.

The registry can change between streams: a plan records how many partial-parser factories existed when it
was built (factories are only ever added) and is rebuilt when that changes, and each stream checks, as
before, that a field's compiled content args were made by the content parser registered now.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from hf_response_templates.content import get_content_parser
from hf_response_templates.content.base import _REGISTRY
from hf_response_templates.delta_state import _MODEL_ID_PATTERNS, _REASONING_NAMES, _Shape
from hf_response_templates.partial import _FACTORIES, has_partial_parser
from hf_response_templates.template import ResponseTemplate

__all__ = ["FieldPlan", "field_plan", "partial_args", "stream_plan"]


class FieldPlan:
    """Per field of a template under one set of `DeltaStream` options (read-only once built)."""

    __slots__ = ("kind", "key", "strip", "shape", "partials", "names", "factories", "id_fields")

    def __init__(self, kind: dict, key: dict, strip: dict, shape: dict, partials: tuple, names: tuple,
                 factories: int, id_fields: frozenset = frozenset()):
        self.kind = kind  # {field: "tool" | "text" | "value"}
        self.key = key  # {field: delta key or None}
        self.strip = strip  # {field: content_args' strip}
        self.shape = shape  # {tool-call field: _Shape}
        self.partials = partials  # ((field, content format), ...): the fields with a partial parser
        self.names = names  # every field name, in template order
        self.factories = factories  # len(_FACTORIES) when built
        self.id_fields = id_fields  # the tool-call fields whose open delimiter may hold a call id (`_may_hold_id`)


#: Per template: its fields' sources, ``{field: (content parser, its compiled content args)}`` for the fields
#: with a partial parser (compiling xml-inline args costs ~0.5 ms), ``{field: _Shape}`` for the tool-call
#: fields met so far, and ``{options: FieldPlan}``.
_ANALYSIS: weakref.WeakKeyDictionary[ResponseTemplate, tuple[dict, dict, dict, dict]] = weakref.WeakKeyDictionary()


def _analysis(tpl: ResponseTemplate) -> tuple[dict, dict, dict, dict]:
    entry = _ANALYSIS.get(tpl)
    if entry is None:
        entry = _ANALYSIS[tpl] = (tpl.source["fields"], {}, {}, {})
    return entry


def _build(tpl: ResponseTemplate, tool_fields: frozenset, reasoning_field: str | None, content_field: str,
           field_keys: Mapping[str, str | None] | None) -> FieldPlan:
    sources, _compiled, shapes, _plans = _analysis(tpl)
    factories = len(_FACTORIES)
    names = tpl.field_names
    if reasoning_field == "auto":
        reasoning_field = next(
            (n for n in _REASONING_NAMES if n in names and n not in tool_fields and n != content_field), None
        )
    kinds: dict[str, str] = {}
    keys: dict[str, str | None] = {}
    strips: dict[str, bool] = {}
    shape_of: dict[str, _Shape] = {}
    partials: list[tuple[str, str]] = []
    id_fields: set[str] = set()
    for f in tpl.fields:
        spec = sources[f.name]
        cargs = spec.get("content_args") or {}
        if f.name in tool_fields:
            kind, key = "tool", "tool_calls"
            shape = shapes.get(f.name)
            if shape is None:
                shape = shapes[f.name] = _Shape(spec)
            shape_of[f.name] = shape
            if _may_hold_id(spec):
                id_fields.add(f.name)
        else:
            # text streams piece by piece; other content (int, json, a list of texts) at its close
            kind = "text" if f.content == "text" and (not f.repeats or f.join is not None) else "value"
            key = {content_field: "content", reasoning_field: "reasoning_content"}.get(f.name, f.name)
        if field_keys and f.name in field_keys:
            key = field_keys[f.name]
        kinds[f.name], keys[f.name] = kind, key
        strips[f.name] = bool(cargs.get("strip", True))
        if has_partial_parser(f.content):
            partials.append((f.name, f.content))
    return FieldPlan(kinds, keys, strips, shape_of, tuple(partials), tuple(f.name for f in tpl.fields),
                     factories, frozenset(id_fields))


def _may_hold_id(spec: Mapping[str, Any]) -> bool:
    """Whether the open delimiter of a field (its raw spec) may hold a call id that `DeltaStream` keeps
    (`delta_state._MODEL_ID_PATTERNS`): any ``open_pattern`` may; literal ``open`` texts only if a pattern finds
    one in them (the delimiter event's text is then that literal)."""
    if "open" not in spec or "open_pattern" in spec:
        return True
    texts = spec["open"]
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return True
    return any(p.search(t) for p in _MODEL_ID_PATTERNS for t in texts)


def field_plan(tpl: ResponseTemplate, tool_call_fields: Iterable[str], reasoning_field: str | None,
               content_field: str, field_keys: Mapping[str, str | None] | None) -> FieldPlan:
    """The `FieldPlan` of `tpl` under these `DeltaStream` options (built on first use, then reused)."""
    tool_fields = frozenset(tool_call_fields)
    plans = _analysis(tpl)[3]
    try:
        options: Any = (tool_fields, reasoning_field, content_field,
                        tuple(field_keys.items()) if field_keys else None)
        plan = plans.get(options)
    except TypeError:  # (an unhashable option value: build one for this stream only)
        options = plan = None
    if plan is None or plan.factories != len(_FACTORIES):
        plan = _build(tpl, tool_fields, reasoning_field, content_field, field_keys)
        if options is not None:
            plans[options] = plan
    return plan


def partial_args(tpl: ResponseTemplate, plan: FieldPlan) -> dict[str, Any]:
    """``{field: compiled content args}`` for the plan's fields with a partial parser, compiled by the content
    parser registered now (compiled again if it was registered again since)."""
    sources, compiled = _analysis(tpl)[:2]
    out: dict[str, Any] = {}
    for name, content in plan.partials:
        cp = get_content_parser(content)
        done = compiled.get(name)
        if done is None or done[0] is not cp:
            done = compiled[name] = (cp, cp.compile_args(sources[name].get("content_args") or {}, name))
        out[name] = done[1]
    return out


#: The last template and options `stream_plan` answered, and its answer: ``(weakref to the template,
#: tool_call_fields, reasoning_field, content_field, plan, partial args, ((content format, its parser), ...))``
_LAST: tuple | None = None


def stream_plan(tpl: ResponseTemplate, tool_call_fields: Iterable[str], reasoning_field: str | None,
                content_field: str, field_keys: Mapping[str, str | None] | None) -> tuple[FieldPlan, dict[str, Any]]:
    """`field_plan` and `partial_args` (a dict of the stream's own) of a new stream. A server makes its streams
    from one template with the same options: the last template and options (``field_keys`` None,
    ``tool_call_fields`` a tuple) are answered from `_LAST`, without the per-template lookups (~100 Python
    opcodes per stream), as long as no partial-parser factory was added and every content parser it compiled
    args with is still the registered one (what `field_plan` and `partial_args` check)."""
    global _LAST
    last = _LAST
    if (
        last is not None
        and field_keys is None
        and last[0]() is tpl
        and last[1] == tool_call_fields
        and last[2] == reasoning_field
        and last[3] == content_field
        and last[4].factories == len(_FACTORIES)
    ):
        for content, cp in last[6]:
            if _REGISTRY.get(content) is not cp:
                break
        else:
            return last[4], last[5].copy()
    plan = field_plan(tpl, tool_call_fields, reasoning_field, content_field, field_keys)
    pargs = partial_args(tpl, plan) if plan.partials else {}
    if field_keys is None and type(tool_call_fields) is tuple:
        parsers = tuple((content, _REGISTRY.get(content)) for _name, content in plan.partials)
        _LAST = (weakref.ref(tpl), tool_call_fields, reasoning_field, content_field, plan, pargs.copy(), parsers)
    return plan, pargs
