"""Copying and pickling compiled templates and parsers (`copy.deepcopy`, `pickle`, multiprocessing).

A compiled `ResponseTemplate` holds closures and compiled regexes, so it is pickled as its source dict
and recompiled through `load_template`'s cache when loaded (in the same process that gives back the very
same object). A `ResponseParser` is pickled as its template's source plus its state, copied generically:
every slot (and `__dict__` entry, if any) is saved, and any value that is one of the template's own
compiled objects (a field, a delimiter, a watch, the template itself, also inside lists, tuples, sets and
dicts) is replaced by its position in a deterministic walk of the template, then resolved again against
the recompiled template on load. New attributes added to the parser are carried without changes here.

A template that uses a content parser registered at run time (`register_content_parser`) can only be
loaded where that parser is registered too (e.g. register it at import time of the worker's module).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["reduce_parser", "restore_parser"]

_PACKAGE = __name__.rpartition(".")[0]


class _Ref:
    """A reference to the n-th compiled object of the template (see `_template_objects`)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self) -> tuple:
        return (_Ref, (self.index,))


def _attribute_names(obj: Any) -> list[str]:
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    names: list[str] = []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    names.extend(getattr(obj, "__dict__", {}))
    return names


def _template_objects(template: Any) -> list[Any]:
    """The package's compiled objects reachable from `template`, in a deterministic order.

    Sets are not walked (their order depends on memory addresses); everything they hold is also held in
    order elsewhere (a watch's `delimiters` tuple).
    """
    out: list[Any] = []
    seen: set[int] = set()
    stack = [template]
    while stack:
        obj = stack.pop()
        if isinstance(obj, (str, bytes, int, float, bool)) or obj is None:
            continue
        if isinstance(obj, (list, tuple)):
            stack.extend(reversed(obj))
            continue
        if isinstance(obj, Mapping):
            stack.extend(reversed(list(obj.values())))
            continue
        if not type(obj).__module__.startswith(_PACKAGE) or id(obj) in seen:
            continue
        seen.add(id(obj))
        out.append(obj)
        stack.extend(reversed([getattr(obj, name, None) for name in _attribute_names(obj)]))
    return out


def _encode(value: Any, refs: dict[int, int]) -> Any:
    index = refs.get(id(value))
    if index is not None:
        return _Ref(index)
    cls = type(value)
    if cls in (list, tuple, set, frozenset):
        return cls(_encode(v, refs) for v in value)
    if cls is dict:
        return {k: _encode(v, refs) for k, v in value.items()}
    return value


def _decode(value: Any, objects: list[Any]) -> Any:
    cls = type(value)
    if cls is _Ref:
        return objects[value.index]
    if cls in (list, tuple, set, frozenset):
        return cls(_decode(v, objects) for v in value)
    if cls is dict:
        return {k: _decode(v, objects) for k, v in value.items()}
    return value


#: Parser attributes not pickled (restored as None): `_resume`, the last scan's results keyed by delimiter
#: objects, and `_fast` / `_held_fast` / `_acc`, `feed()`'s steady-state path (recomputed at the next scan; the
#: parser moves what `_acc` holds to the region before it is pickled), only optimizations.
_TRANSIENT = frozenset({"_resume", "_fast", "_held_fast", "_acc"})


def reduce_parser(parser: Any) -> tuple:
    """`ResponseParser.__reduce__`: (restore, (class, template source, encoded state))."""
    template = parser.template
    objects = _template_objects(template)
    refs = {id(obj): i for i, obj in enumerate(objects)}
    state = {}
    for name in _attribute_names(parser):
        if name in _TRANSIENT:
            state[name] = None
            continue
        try:
            state[name] = _encode(getattr(parser, name), refs)
        except AttributeError:  # a slot never set
            continue
    return (restore_parser, (type(parser), template.source, state))


def restore_parser(cls: type, source: dict, state: dict) -> Any:
    """Rebuild a parser pickled by `reduce_parser` (the template is recompiled through the cache)."""
    from .template import load_template

    objects = _template_objects(load_template(source))
    parser = object.__new__(cls)
    for name, value in copy.deepcopy(state).items():  # copy.copy shares the state dict: never alias it
        object.__setattr__(parser, name, _decode(value, objects))
    return parser
