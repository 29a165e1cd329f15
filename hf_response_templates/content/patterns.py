"""Reading a regex's structure (its parse by the standard library's `re`): what the content parsers
prove about a `tag_pattern` or a `remove_pattern` before relying on it."""

from __future__ import annotations

from typing import Any

import regex

try:  # the standard library's regex constants, used only to read the structure of a `tag_pattern`
    from re import _constants as _sre_constants
except ImportError:  # Python < 3.11
    import sre_constants as _sre_constants  # type: ignore[no-redef]


def _looks_around(pattern: regex.Pattern) -> bool:
    """Whether `pattern` has an anchor or a lookbehind anywhere (False if the standard library cannot
    read it: `regex`-only syntax is not checked)."""
    from ..regex_leads import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

    parsed = stdlib_parse(pattern.pattern)
    return parsed is not None and any(
        op is _sre_constants.AT or (op in _LOOKAROUNDS and av[0] < 0) for op, av in _every_item(parsed))


_ASSERTIONS = (_sre_constants.AT, _sre_constants.ASSERT, _sre_constants.ASSERT_NOT)


_REPEATS = tuple(getattr(_sre_constants, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                 if hasattr(_sre_constants, n))


_ATOMIC = getattr(_sre_constants, "ATOMIC_GROUP", object())


_LOOKAROUNDS = (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT)


def _every_item(items: Any) -> Any:
    """Every `(op, av)` of a pattern parsed by the standard library, at every depth (inside groups,
    repeats, alternatives, conditionals and lookarounds)."""
    stack = [items]
    while stack:
        for op, av in stack.pop():
            yield op, av
            if op is _sre_constants.SUBPATTERN:
                stack.append(av[3])
            elif op in _REPEATS:
                stack.append(av[2])
            elif op is _sre_constants.BRANCH:
                stack.extend(av[1])
            elif op is _ATOMIC:
                stack.append(av)
            elif op is _sre_constants.GROUPREF_EXISTS:
                stack.extend(sub for sub in av[1:] if sub is not None)
            elif op in _LOOKAROUNDS:
                stack.append(av[1])


def _is_literals(items: Any) -> bool:
    return bool(items) and all(op is _sre_constants.LITERAL for op, _ in items)


def _is_terminator(op: Any, av: Any) -> bool:
    r"""Whether a top-level item is an alternation of ends only: fixed texts, lookaheads at a fixed text and
    the end of the text, e.g. `(?:</parameter>|(?=<parameter=)|\Z)` (a value that ends at its close tag,
    or where the next tag or the text begins and ends, when the model left the close tag out)."""
    if op is not _sre_constants.BRANCH:
        return False
    for alternative in av[1]:
        if _is_literals(alternative):
            continue
        if len(alternative) != 1:
            return False
        aop, aav = alternative[0]
        if aop is _sre_constants.ASSERT and aav[0] == 1 and _is_literals(aav[1]):  # (?=fixed text)
            continue
        if aop is _sre_constants.AT and aav is _sre_constants.AT_END_STRING:  # \Z
            continue
        return False
    return True
