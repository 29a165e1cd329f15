"""The content-parser registry, its `ContentParser` record, and the argument checks every parser shares."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from ..errors import TemplateError

#: Seconds one regex call may run before it is abandoned (see `RegexTimeoutError`).
DEFAULT_REGEX_TIMEOUT = 1.0


#: The timeout content parsers use for their own regexes (`tag_pattern`): the parser's `regex_timeout`
#: while a region is being parsed, `DEFAULT_REGEX_TIMEOUT` otherwise.
REGEX_TIMEOUT: contextvars.ContextVar[float] = contextvars.ContextVar("hf_response_templates_regex_timeout")


#: Deepest nesting of lists/dicts the `json` parser accepts with dialect options (plain JSON is bounded by
#: the interpreter's recursion limit, about the same depth); deeper input is a clear error, never a crash.
MAX_NESTING = 512


ParseFn = Callable[[str, Mapping[str, Any]], Any]


ArgCheck = Callable[[Any, str, str], Any]  # (value, field, key) -> compiled value


@dataclass(frozen=True)
class ContentParser:
    """A registered content parser.

    `compile_args(args, field)` validates `content_args` once, at template load time, and returns the
    object handed to `parse` for every region (so regexes are compiled once).
    """

    name: str
    parse: ParseFn
    streamable: bool = False
    args: Mapping[str, ArgCheck] | None = None  # None: accept any args unchecked
    #: Built-ins only: adds entries derived from the validated args (how to read a pattern's matches, say)
    #: once per template, so that `parse` does not work them out for every region.
    prepare: Callable[[dict[str, Any], str, str], None] | None = None

    def compile_args(self, args: Any, field: str, key: str = "content_args") -> Mapping[str, Any]:
        """Validate `args`; errors name `field` and `key` (`content_args`, or where a value parser's `args`
        sit: `content_args.value_parser.args`)."""
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise TemplateError(
                f"must be a dict of arguments for the {self.name!r} parser, got {type(args).__name__}",
                field=field,
                key=key,
            )
        if self.args is None:
            out = dict(args)
            if self.prepare is not None:
                self.prepare(out, field, key)
            return out
        unknown = sorted(set(args) - set(self.args))
        if unknown:
            allowed = ", ".join(sorted(self.args)) or "none"
            raise TemplateError(
                f"unknown argument(s) {unknown} for the {self.name!r} parser (accepted: {allowed})",
                field=field,
                key=key,
            )
        out = {k: self.args[k](v, field, f"{key}.{k}") for k, v in args.items()}
        missing = [k for k, check in self.args.items() if getattr(check, "required", False) and k not in out]
        if missing:
            raise TemplateError(
                f"the {self.name!r} parser requires {missing}", field=field, key=f"{key}.{missing[0]}"
            )
        if self.prepare is not None:
            self.prepare(out, field, key)
        return out


_REGISTRY: dict[str, ContentParser] = {}


def register_content_parser(
    name: str,
    parse: ParseFn,
    *,
    streamable: bool = False,
    args: Mapping[str, type | tuple[type, ...]] | None = None,
    overwrite: bool = False,
) -> ContentParser:
    """Register a content parser usable as `"content": name` in templates.

    Args:
        name: the name templates refer to.
        parse: `parse(text, args) -> value`. Raise `ValueError` on bad input: the region is then
            reported as malformed instead of failing the stream.
        streamable: chunks are part of the final value (`dirty=False`), as for `text`.
        args: accepted `content_args` as `{name: type or tuple of types}`; `None` accepts anything.
        overwrite: replace an existing parser of that name (built-ins included).

    Example:
        >>> register_content_parser("upper", lambda text, args: text.strip().upper(), streamable=True)
        ContentParser(name='upper', ...)
    """
    if not isinstance(name, str) or not name:
        raise ValueError("content parser name must be a non-empty string")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"a content parser named {name!r} is already registered (pass overwrite=True)")
    checks = None if args is None else {k: _typed(t) for k, t in args.items()}
    parser = ContentParser(name, parse, streamable, checks)
    _REGISTRY[name] = parser
    return parser


def get_content_parser(name: str, *, field: str = "?", key: str = "content") -> ContentParser:
    """The registered parser called `name`; `TemplateError` naming `field` if there is none."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise TemplateError(
            f"unknown content parser {name!r}; available: {', '.join(sorted(_REGISTRY))} "
            "(register your own with hf_response_templates.register_content_parser)",
            field=field,
            key=key,
        ) from None


def content_parsers() -> dict[str, ContentParser]:
    """A copy of the registry."""
    return dict(_REGISTRY)


# --------------------------------------------------------------------------- argument validators


def _typed(types: type | tuple[type, ...]) -> ArgCheck:
    def check(value: Any, field: str, key: str) -> Any:
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in _as_tuple(types))
        if not ok:
            want = " or ".join(t.__name__ for t in _as_tuple(types))
            raise TemplateError(f"must be {want}, got {type(value).__name__}", field=field, key=key)
        return value

    return check


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _required(check: ArgCheck) -> ArgCheck:
    check.required = True  # type: ignore[attr-defined]
    return check


def _nonempty_str(value: Any, field: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise TemplateError("must be a non-empty string", field=field, key=key)
    return value


def _regex_arg(value: Any, field: str, key: str) -> regex.Pattern:
    """A regex argument (`tag_pattern`, `remove_pattern`), compiled like delimiter patterns."""
    from ..delimiters import compile_regex
    from ..template import MAX_PATTERN_LENGTH  # local: template imports this module

    if not isinstance(value, str) or not value:
        raise TemplateError("must be a non-empty regex string", field=field, key=key)
    if len(value) > MAX_PATTERN_LENGTH:
        raise TemplateError(f"is longer than {MAX_PATTERN_LENGTH} characters", field=field, key=key)
    try:
        return compile_regex(value)
    except regex.error as e:
        raise TemplateError(f"is not a valid regex ({e}): {value!r}", field=field, key=key) from None
