"""`transform`: post-parse templates with whole-string `"{name}"` placeholders.

A transform is a JSON-like structure. Every string leaf that is exactly `"{path}"` is replaced by the
value at `path` in the scope (`content` plus the named groups of `open_pattern` / `close_pattern`;
with `transform_each`, the keys of each list element). The value keeps its type. Paths may be dotted
(`"{content.args}"`) to descend into dicts. Two steps read a one-key object, whose key is data (Apertus
writes a call as `{"get_weather": {...}}`): `$key` gives its only key and `$value` its only value
(`"{content.$key}"`, `"{content.$value.city}"`); at the start of a path (`"{$key}"`) they read the
`transform_each` element itself. A placeholder may list fallbacks, `"{content.parameters|content.arguments}"`:
the first path that resolves gives the value (Llama 3 models write either key). Mixed strings such as
`"abc {name}"` and unknown `$` steps are rejected when the template is loaded; a path that does not resolve raises `TransformError` when the
region closes.

Transforms are compiled once into a tree of small closures, so applying one does no string parsing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

from .errors import TemplateError

__all__ = ["ONE_KEY_STEPS", "TransformError", "compile_transform", "placeholder_roots"]

#: `{name}` or `{name.key.key}`, names of word characters (a digit may come first: `{0}` is a placeholder,
#: as in Transformers' native parser, resolved against the keys of a `transform_each` element).
#: A step may also be `$word`: `$key` and `$value` are the one-key-object steps, any other `$word` is rejected
#: when the template loads (it would otherwise be a literal string that looks like a placeholder).
#: Alternatives are separated by `|`: the first that resolves gives the value.
_PLACEHOLDER = re.compile(r"\{(\$?\w+(?:\.\$?\w+)*(?:\|\$?\w+(?:\.\$?\w+)*)*)\}")
#: The steps that read a one-key object: its only key, its only value.
ONE_KEY_STEPS = ("$key", "$value")
MAX_TRANSFORM_DEPTH = 32
MAX_TRANSFORM_NODES = 2_000


class TransformError(ValueError):
    """A transform placeholder could not be resolved against the parsed region."""


Applier = Callable[[Mapping[str, Any]], Any]


def placeholder_roots(transform: Any) -> set[str]:
    """The first path component of every placeholder in `transform` (`$key` / `$value` for `"{$key}"`)."""
    roots: set[str] = set()
    stack = [transform]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            m = _PLACEHOLDER.fullmatch(node)
            if m:
                roots.update(path.split(".", 1)[0] for path in m.group(1).split("|"))
    return roots


#: How a compiled transform node gets its value: a constant, one key of the scope, or a function.
_CONST, _ROOT, _CALL = 0, 1, 2


def compile_transform(transform: Any, *, field: str) -> Applier:
    """Validate `transform` and compile it into a function `scope -> value`.

    Raises `TemplateError` (naming `field`) for mixed-text placeholders, non-string dict keys,
    unsupported leaf types, or a structure that is too deep or too large.
    """
    count = [0]

    def build(node: Any, depth: int, where: str) -> tuple[int, Any]:
        count[0] += 1
        if count[0] > MAX_TRANSFORM_NODES:
            raise TemplateError(f"has more than {MAX_TRANSFORM_NODES} nodes", field=field, key="transform")
        if depth > MAX_TRANSFORM_DEPTH:
            raise TemplateError(
                f"is nested more than {MAX_TRANSFORM_DEPTH} levels deep (at {where})", field=field, key="transform"
            )
        if isinstance(node, dict):
            items = []
            for k, v in node.items():
                if not isinstance(k, str):
                    raise TemplateError(f"keys must be strings, got {k!r} at {where}", field=field, key="transform")
                items.append((k, *build(v, depth + 1, f"{where}.{k}")))
            return _CALL, _dict_applier(tuple(items))
        if isinstance(node, list):
            parts = [_as_applier(*build(v, depth + 1, f"{where}[{i}]")) for i, v in enumerate(node)]
            return _CALL, lambda scope: [f(scope) for f in parts]
        if isinstance(node, str):
            m = _PLACEHOLDER.fullmatch(node)
            if m:
                path = m.group(1)
                if "|" in path:
                    return _CALL, _with_path(_first_of(path, where, field), path)
                if "$" in path:
                    _check_steps(path, where, field)
                    return _CALL, _lookup(path)
                return (_ROOT, path) if "." not in path else (_CALL, _with_path(_lookup(path), path))
            if _PLACEHOLDER.search(node):
                raise TemplateError(
                    f"string {node!r} at {where} mixes a {{placeholder}} with other text; placeholders must be the "
                    'whole string (e.g. "{content}" or "{content.name}"): they are not f-strings',
                    field=field,
                    key="transform",
                )
            return _CONST, node
        if node is None or isinstance(node, (bool, int, float)):
            return _CONST, node
        raise TemplateError(
            f"unsupported value {node!r} ({type(node).__name__}) at {where}; use JSON values only",
            field=field,
            key="transform",
        )

    kind, value = build(transform, 0, "transform")
    if kind == _CALL and getattr(value, "items", None) is not None:
        return _flat(value)
    return _as_applier(kind, value)


def _with_path(apply: Applier, path: str) -> Applier:
    """`apply` (a placeholder's function) marked with its path, for `_flat`."""
    apply.path = path  # type: ignore[attr-defined]
    return apply


def _flat(general: Applier) -> Applier:
    """A dict transform (`_dict_applier`) as a few closures chosen by its shape, each filling one dict level:
    constants copied from a prebuilt dict, `{name}` lookups read from the scope in place, nested dicts by their
    own level's closure, `{a|b.c}` by `_alternatives`, other placeholders called (Kimi K3's `{"type":
    "function", "function": {"name": "{name}", "arguments": "{content}"}}` is `d = base.copy(); d["function"] =
    inner(scope)` with `inner` returning `{"name": scope["name"], "arguments": scope["content"]}`: two calls and
    ~25 opcodes where the loops of `_dict_applier` cost two calls and ~45). Nothing is generated or evaluated.
    A `KeyError` (a name not in the scope) hands the scope to `general`, which gives the same value or raises
    its own error: every placeholder function is free of side effects. The result keeps `general` as `.general`."""
    flat = _level(general.items, general)  # type: ignore[attr-defined]
    flat.general = general  # type: ignore[attr-defined]
    return flat


def _level(items: tuple[tuple[str, int, Any], ...], general: Applier | None) -> Applier:
    """One dict level of `_flat`: the closure for its shape (one or two `{name}` lookups; two values without
    constants; constants and one value, or a nested level of two values written in place; the general form, a
    loop). Each value that is not a
    constant is read by a function of the scope (`operator.itemgetter` for `{name}`, a nested level's closure,
    `_alternatives`), in the transform's order, so the first error raised is the tree's. `general` is the whole
    transform's tree at the top level (a `KeyError` hands it the scope), None below (the `KeyError` goes up)."""
    base: dict[str, Any] = {}  # every key, in order: the constants' values, None where a value is filled in
    roots: list[tuple[str, str]] = []
    getters: list[tuple[str, Applier]] = []
    for key, kind, value in items:
        base[key] = value if kind == _CONST else None
        if kind == _ROOT:
            roots.append((key, value))
            getters.append((key, itemgetter(value)))
        elif kind == _CALL:
            nested = getattr(value, "items", None)
            getters.append((key, _level(nested, None) if nested is not None else _alternatives(value)))
    constants = len(getters) < len(base)

    if not constants and len(roots) == 1 == len(getters):
        ((k0, n0),) = roots

        def one_lookup(scope: Mapping[str, Any]) -> Any:
            try:
                return {k0: scope[n0]}
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        return one_lookup
    if not constants and len(roots) == 2 == len(getters):  # {"name": "{name}", "arguments": "{content}"}
        (k0, n0), (k1, n1) = roots

        def two_lookups(scope: Mapping[str, Any]) -> Any:
            try:
                return {k0: scope[n0], k1: scope[n1]}
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        return two_lookups
    if not constants and len(getters) == 2:  # {"name": "{content.name}", "arguments": "{content.a|content.b}"}
        (k0, g0), (k1, g1) = getters

        def two_values(scope: Mapping[str, Any]) -> Any:
            try:
                return {k0: g0(scope), k1: g1(scope)}
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        two_values.getters = getters  # type: ignore[attr-defined]  # (a parent level may read them in place)
        return two_values
    if constants and len(roots) == 1 == len(getters):  # {"type": "function", "function": "{content}"}
        ((k0, n0),) = roots

        def constants_and_lookup(scope: Mapping[str, Any]) -> Any:
            try:
                out = base.copy()
                out[k0] = scope[n0]
                return out
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        return constants_and_lookup
    inner = [getattr(value, "items", None) for _, kind, value in items if kind == _CALL]
    if (constants and len(getters) == 1 and inner and inner[0] is not None and len(inner[0]) == 2
            and all(kind == _ROOT for _, kind, _ in inner[0])):
        # {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}: the nested level in place
        k0 = getters[0][0]
        (a0, _, m0), (a1, _, m1) = inner[0]

        def constants_and_two_lookups(scope: Mapping[str, Any]) -> Any:
            try:
                out = base.copy()
                out[k0] = {a0: scope[m0], a1: scope[m1]}
                return out
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        # (its parts, for a caller that has the scope's values at hand: `template._compile_field`'s `decoded`)
        constants_and_two_lookups.parts = (base, k0, a0, m0, a1, m1)  # type: ignore[attr-defined]
        return constants_and_two_lookups
    inner_getters = getattr(getters[0][1], "getters", None) if constants and len(getters) == 1 else None
    if inner_getters is not None and len(inner_getters) == 2:
        # {"type": "function", "function": {"name": "{name}", "arguments": "{parameters|arguments}"}}: the nested
        # level's two values in place
        k0 = getters[0][0]
        (a0, g0), (a1, g1) = inner_getters

        def constants_and_two_values(scope: Mapping[str, Any]) -> Any:
            try:
                out = base.copy()
                out[k0] = {a0: g0(scope), a1: g1(scope)}
                return out
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        # (its parts, for a caller that has the content at hand: `template._compile_field`'s `decoded`)
        constants_and_two_values.values2 = (base, k0, a0, g0, a1, g1)  # type: ignore[attr-defined]
        return constants_and_two_values
    if constants and len(getters) == 1:  # {"type": "function", "function": {...}}
        ((k0, g0),) = getters

        def constants_and_value(scope: Mapping[str, Any]) -> Any:
            try:
                out = base.copy()
                out[k0] = g0(scope)
                return out
            except KeyError:
                if general is None:
                    raise
                return general(scope)

        return constants_and_value
    every = tuple(getters)

    def level(scope: Mapping[str, Any]) -> Any:
        try:
            out = base.copy()
            for key, get in every:
                out[key] = get(scope)
            return out
        except KeyError:
            if general is None:
                raise
            return general(scope)

    return level


def _alternatives(apply: Applier) -> Applier:
    """A placeholder's function for `_flat`: for `{a|b.c}` (roots and one plain key per alternative), a
    closure that gives each alternative's value where it surely resolves and goes on to the next where it is
    surely missing (its root not in the scope, or a plain dict without the key: `_first_of` goes on there too),
    and calls `apply` otherwise (which gives the value or words the error); `apply` itself for the rest
    (`{a.b}`'s function already reads in place)."""
    path = getattr(apply, "path", None)
    if path is None or "|" not in path or "$" in path:
        return apply
    steps = [alternative.split(".") for alternative in path.split("|")]
    if any(len(alternative) > 2 for alternative in steps):
        return apply
    if len(steps) == 2 and all(len(alternative) == 1 for alternative in steps):  # "{parameters|arguments}"
        ((r0,), (r1,)) = steps

        def one_of_two_roots(scope: Mapping[str, Any]) -> Any:
            if r0 in scope:
                return scope[r0]
            if r1 in scope:
                return scope[r1]
            return apply(scope)  # (neither there: `apply` words the error)

        return one_of_two_roots
    if all(len(alternative) == 2 for alternative in steps) and len({root for root, _ in steps}) == 1:
        root = steps[0][0]  # "{content.parameters|content.arguments}": one root, a key each
        keys = tuple(key for _, key in steps)

        if len(keys) == 2:
            k0, k1 = keys

            def two_keys_of_one_root(scope: Mapping[str, Any]) -> Any:
                if root in scope:
                    value = scope[root]
                    if value.__class__ is dict:
                        if k0 in value:
                            return value[k0]
                        if k1 in value:
                            return value[k1]
                return apply(scope)  # (neither there, or not a plain dict: `apply` decides)

            two_keys_of_one_root.keys = (root, keys)  # type: ignore[attr-defined]  # (`values2`'s reader)
            return two_keys_of_one_root

        def keys_of_one_root(scope: Mapping[str, Any]) -> Any:
            if root in scope:
                value = scope[root]
                if value.__class__ is dict:
                    for key in keys:
                        if key in value:
                            return value[key]
            return apply(scope)  # (none there, or not a plain dict: `apply` decides)

        return keys_of_one_root
    pairs = tuple((alternative[0], alternative[1] if len(alternative) == 2 else None) for alternative in steps)

    def first_there(scope: Mapping[str, Any]) -> Any:
        for root, key in pairs:
            if root in scope:
                if key is None:
                    return scope[root]
                value = scope[root]
                if value.__class__ is not dict:
                    break  # (not a plain dict: `apply` decides)
                if key in value:
                    return value[key]
        return apply(scope)

    return first_there


def _first_of(path: str, where: str, field: str) -> Applier:
    """`"{a|b.c}"`: the value of the first alternative that resolves; if none does, one error that says why
    for each."""
    alternatives = path.split("|")
    if len(set(alternatives)) != len(alternatives):
        raise TemplateError(f"placeholder '{{{path}}}' at {where} repeats an alternative", field=field,
                            key="transform")
    for alternative in alternatives:
        if "$" in alternative:
            _check_steps(alternative, where, field)
    lookups = [_lookup(alternative) for alternative in alternatives]
    pairs = [(_quick(alternative), lookup) for alternative, lookup in zip(alternatives, lookups, strict=True)]

    def apply(scope: Mapping[str, Any]) -> Any:
        for quick, lookup in pairs:
            if quick is not None:
                value = quick(scope)
                if value is _MISSING:
                    continue  # the lookup would raise: not worth building its error yet
                if value is not _UNSURE:
                    return value
            try:
                return lookup(scope)
            except TransformError:
                pass
        errors = []  # (worded only when none resolves: the lookups have no side effects)
        for lookup in lookups:
            try:
                lookup(scope)
            except TransformError as e:
                errors.append(str(e))
        raise TransformError(f"transform placeholder '{{{path}}}': no alternative resolves ({'; '.join(errors)})")

    return apply


_MISSING: Any = object()  # `_quick`: the path does not resolve (its lookup raises)
_UNSURE: Any = object()  # `_quick`: not a plain dict on the way (its lookup decides)


def _quick(path: str) -> Callable[[Mapping[str, Any]], Any] | None:
    """For an alternative of plain keys (`content.arguments`): its value, `_MISSING` where its lookup raises
    for sure (the root is not in the scope, a plain dict on the way lacks the key), `_UNSURE` where the lookup
    decides (a value on the way is not a plain dict); None for paths with `$` steps."""
    if "$" in path:
        return None
    root, *rest = path.split(".")
    keys = tuple(rest)

    def quick(scope: Mapping[str, Any]) -> Any:
        if root not in scope:
            return _MISSING
        value = scope[root]
        for key in keys:
            if value.__class__ is not dict:
                return _UNSURE
            if key not in value:
                return _MISSING
            value = value[key]
        return value

    return quick


def _check_steps(path: str, where: str, field: str) -> None:
    """Reject unknown `$` steps, and steps after `$key` (a key is a string: there is nothing to descend into)."""
    steps = path.split(".")
    for i, step in enumerate(steps):
        if step.startswith("$") and step not in ONE_KEY_STEPS:
            raise TemplateError(
                f"placeholder '{{{path}}}' at {where} has the unknown step {step!r}; the steps that start with $ "
                "are $key (the only key of a one-key object) and $value (its only value)",
                field=field,
                key="transform",
            )
        if step == "$key" and i < len(steps) - 1:
            raise TemplateError(
                f"placeholder '{{{path}}}' at {where} goes on after $key, which is a string; use $value to "
                "descend into the object's value",
                field=field,
                key="transform",
            )


def _only(value: Any, step: str, path: str, where: str) -> Any:
    """The only key (`$key`) or value (`$value`) of the dict `value`, reached by `where` in `path`."""
    if not isinstance(value, dict):
        raise TransformError(
            f"transform placeholder '{{{path}}}': {step} needs a one-key object, but {where} is a "
            f"{type(value).__name__}, not a dict"
        )
    if len(value) != 1:
        keys = sorted(value)
        raise TransformError(
            f"transform placeholder '{{{path}}}': {step} needs a one-key object, but {where} has "
            f"{len(keys)} keys{f' {keys[:8]}' if keys else ''}"
        )
    return next(iter(value)) if step == "$key" else next(iter(value.values()))


def _as_applier(kind: int, value: Any) -> Applier:
    if kind == _CALL:
        return value
    if kind == _ROOT:
        return _lookup(value)
    return lambda scope: value


def _undefined(path: str, scope: Mapping[str, Any]) -> TransformError:
    return TransformError(f"transform placeholder '{{{path}}}' is not defined; available names: {sorted(scope)}")


def _dict_applier(items: tuple[tuple[str, int, Any], ...]) -> Applier:
    """A dict node: one function with a loop, not one function per value (Transforms run once per
    tool call; constants and `{name}` lookups, the usual values, cost no call at all)."""

    def apply(scope: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for key, kind, value in items:
            if kind == _ROOT:
                if value not in scope:
                    raise _undefined(value, scope)
                out[key] = scope[value]
            elif kind == _CONST:
                out[key] = value
            else:
                out[key] = value(scope)
        return out

    apply.items = items  # type: ignore[attr-defined]  # (`_flat` reads the structure)
    return apply


def _lookup(path: str) -> Applier:
    root, *keys = path.split(".")

    if root in ONE_KEY_STEPS:  # "{$key}": the transform_each element itself is the one-key object
        return _lookup_steps(path, None, [root, *keys])
    if not keys:  # "{content}", "{name}": one lookup

        def apply_root(scope: Mapping[str, Any]) -> Any:
            if root in scope:
                return scope[root]
            raise _undefined(path, scope)

        return apply_root

    return _lookup_steps(path, root, keys)


def _lookup_steps(path: str, root: str | None, steps: list[str]) -> Applier:
    """A dotted path: from `scope[root]` (the scope itself when `root` is None, as for `"{$key}"` with
    `transform_each`, whose scope is the element), each step a key of a dict, `$key` or `$value`."""

    def where(i: int) -> str:  # the part of the path before step i, for error messages
        if root is None:
            return ".".join(steps[:i]) if i else "the element"
        return ".".join([root, *steps[:i]])

    # each step as (0: a key, 1: $key, 2: $value; the key); the part of the path before a step is worked out
    # only for an error message
    kinds = tuple((ONE_KEY_STEPS.index(step) + 1 if step in ONE_KEY_STEPS else 0, step) for step in steps)

    def apply(scope: Mapping[str, Any]) -> Any:
        if root is None:
            value: Any = scope
        elif root in scope:
            value = scope[root]
        else:
            raise _undefined(path, scope)
        for i, (kind, step) in enumerate(kinds):
            if kind:
                if value.__class__ is dict and len(value) == 1:  # the usual one-key object
                    for only in value if kind == 1 else value.values():
                        value = only
                else:
                    value = _only(value, step, path, where(i))
            elif not isinstance(value, dict):
                raise TransformError(
                    f"transform placeholder '{{{path}}}' cannot look up {step!r} in {where(i)}, which is a "
                    f"{type(value).__name__}, not a dict"
                )
            elif step not in value:
                raise TransformError(
                    f"transform placeholder '{{{path}}}': {where(i)} has no key {step!r} (keys: {sorted(value)})"
                )
            else:
                value = value[step]
        return value

    if root is None or any(kind for kind, _ in kinds):
        return apply
    keys = tuple(steps)
    if len(keys) == 1:  # "{content.name}": the usual dotted placeholder
        key = keys[0]

        def apply_key(scope: Mapping[str, Any]) -> Any:
            if root in scope:
                value = scope[root]
                if value.__class__ is dict and key in value:
                    return value[key]
            return apply(scope)  # (not there, or not a plain dict: `apply` decides, and words the error)

        apply_key.keys = (root, keys)  # type: ignore[attr-defined]  # (`values2`'s reader)
        return apply_key

    def apply_keys(scope: Mapping[str, Any]) -> Any:
        if root not in scope:
            return apply(scope)
        value = scope[root]
        for key in keys:
            if value.__class__ is not dict or key not in value:
                return apply(scope)
            value = value[key]
        return value

    return apply_keys
