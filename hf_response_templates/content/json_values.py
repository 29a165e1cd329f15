"""The `json` content parser: plain JSON through the C scanner, and its dialects (unquoted keys,
custom string delimiters, trailing text, separated sequences) rewritten to JSON or read by a lax reader."""

from __future__ import annotations

import functools
import json
import re as _stdre
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import TemplateError
from .base import MAX_NESTING


def _string_delims(value: Any, field: str, key: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    if not isinstance(value, list):
        raise TemplateError("must be a list of [open, close] string pairs", field=field, key=key)
    for i, pair in enumerate(value):
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(s, str) and s for s in pair)
        ):
            raise TemplateError(
                f"item {i} must be a pair [open, close] of non-empty strings, got {pair!r}", field=field, key=key
            )
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


# --------------------------------------------------------------------------- json


_NUMBER = _stdre.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")  # JSON digits are ASCII only


_BARE_KEY = _stdre.compile(r"\w+")  # a bare key (unquoted_keys); the partial JSON dialect reader reads keys with it too


_WS = _stdre.compile(r"[ \t\n\r]*")


_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]


#: The C scanner behind `json.loads` (one value from a position): `_loads` calls it directly.
_SCAN_ONCE = json.JSONDecoder().scan_once


_JSON_SPACE = " \t\n\r"


def _loads(text: str) -> Any:
    """`json.loads(text)`: the same value, or the same error (the failing cases are handed to `json.loads`),
    ~1 µs cheaper per call (`json.loads` reaches the C scanner through three Python-level calls)."""
    try:
        start = _WS.match(text).end() if text[:1] in _JSON_SPACE else 0
        value, end = _SCAN_ONCE(text, start)
        if end == len(text) or _WS.match(text, end).end() == len(text):
            return value
    except (StopIteration, ValueError, RecursionError):
        pass
    return json.loads(text)  # not one JSON value: json.loads raises its own error


def parse_json(text: str, args: Mapping[str, Any]) -> Any:
    """JSON, optionally with bare keys (`unquoted_keys`) or custom string delimiters (`string_delims`); a
    separated sequence of values read into a list (`separator`); an empty body read as `empty`.
    (`trailing` is applied by the parser, which cuts the region where the value ends; see `jsonscan`.)"""
    if not args:  # the common case: plain JSON, no options
        try:
            return _loads(text)
        except RecursionError:
            raise ValueError("invalid JSON: nested too deeply (lists and objects inside each other)") from None
        except ValueError as e:
            raise ValueError(f"invalid JSON: {e}") from None
    translate = args.get("_translate")
    if translate is not None:  # the dialect options alone (Gemma 4): the rewrite to JSON, worked out once
        try:
            standard = translate(text)
            if text.count("{") + text.count("[") <= MAX_NESTING or not _too_deep(standard):
                return _loads(standard)
        except (ValueError, RecursionError):
            pass  # the general path below decides, and words the error
    if "_empty" in args and (not text or text.isspace()):
        return json.loads(args["_empty"])  # a fresh copy for every region
    lax = bool(args.get("unquoted_keys") or args.get("string_delims"))
    try:
        try:
            separator = args.get("separator")
            if separator is not None:
                return _read_sequence(text, separator, args, lax)
            if not lax:
                return _loads(text)
            unquoted, delims = bool(args.get("unquoted_keys")), args.get("string_delims") or ()
            if delims.__class__ is not tuple:  # args not from a compiled template (JSON lists): the cache needs tuples
                delims = tuple(map(tuple, delims))
            translate = _to_json(unquoted, delims)
            if translate is not None:
                try:  # ~2x cheaper than the reader below; where it fails, the reader decides (and words the error)
                    standard = translate(text)
                    if text.count("{") + text.count("[") <= MAX_NESTING or not _too_deep(standard):
                        return _loads(standard)
                except (ValueError, RecursionError):
                    pass
            return _LaxJSON(text, unquoted, delims).parse()
        except RecursionError:
            raise ValueError("nested too deeply (lists and objects inside each other)") from None
    except ValueError as e:
        if args.get("allow_non_json"):
            return text.strip()
        raise ValueError(f"invalid JSON: {e}") from None


_DECODER = json.JSONDecoder()


def _read_sequence(text: str, separator: str, args: Mapping[str, Any], lax: bool) -> list[Any]:
    """`separator`: values with the separator (and any whitespace) between them, read into a list; a
    separator after the last value is allowed (the `trailing: stream` scanner keeps it in the region)."""
    if lax:
        reader = _LaxJSON(text, bool(args.get("unquoted_keys")), args.get("string_delims") or ())
        read: Callable[[int], tuple[Any, int]] = lambda pos: reader.value(pos, 0)  # noqa: E731
    else:
        read = lambda pos: _DECODER.raw_decode(text, pos)  # noqa: E731
    n = len(text)
    out: list[Any] = []
    pos = _WS.match(text, 0).end()
    while True:
        if pos == n:
            raise ValueError(f"expected a value at character {pos}, got the end of the text")
        value, pos = read(pos)
        out.append(value)
        pos = _WS.match(text, pos).end()
        if pos == n:
            return out
        if not text.startswith(separator, pos):
            raise ValueError(f"expected {separator!r} or the end of the text after a value, at character {pos}")
        pos = _WS.match(text, pos + len(separator)).end()
        if pos == n:
            return out


_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]


_KEY_CHARS = _stdre.compile(r"[\w\s{}\[\],:\"]")


@functools.lru_cache(maxsize=64)
def _to_json(unquoted_keys: bool, string_delims: tuple[tuple[str, str], ...]) -> Callable[[str], str] | None:
    """A function rewriting the lax dialect into standard JSON (custom-delimited strings become JSON
    strings, bare keys quoted), for `json.loads` to read; None where that could read some text differently
    from `_LaxJSON` (a string delimiter starting with a word character, a space or JSON punctuation).

    Sound because it only rewrites tokens into JSON strings: if `json.loads` accepts the result, the
    skeleton of brackets, commas and colons is the text's own, and `_LaxJSON` reads each rewritten token at
    the same place the same way (custom delimiters are tried first there, as below). Text the rewrite
    cannot make valid falls back to `_LaxJSON`, so errors are worded as before."""
    if any(not o or _KEY_CHARS.match(o) for o, _c in string_delims):
        return None
    parts = [f"{_stdre.escape(o)}(.*?){_stdre.escape(c)}" for o, c in string_delims]
    parts.append(r'"(?:[^"\\]|\\.)*"')  # a standard string, copied as it is
    key = len(string_delims) + 1  # the group of a bare key's lead (`{` or `,` and spaces)
    if unquoted_keys:
        parts.append(r"([{,][ \t\n\r]*)(\w+)(?=[ \t\n\r]*:)")
    tokens = _stdre.compile("|".join(parts), _stdre.DOTALL)

    def rewrite(m: Any) -> str:
        i = m.lastindex
        if i is None:
            return m.group()
        if i > key:
            return m.group(key) + '"' + m.group(i) + '"'
        return _encode_string(m.group(i))

    return functools.partial(tokens.sub, rewrite)


_JSON_STRING = _stdre.compile(r'"(?:[^"\\]|\\.)*"')


_NOT_BRACKET = _stdre.compile(r"[^\[\]{}]+")


_INNERMOST = _stdre.compile(r"\[\]|\{\}")


def _too_deep(standard: str) -> bool:
    """Whether standard JSON text nests lists and objects more than `MAX_NESTING` deep (or is unbalanced):
    a few C-level passes, each removing one level of the brackets left once strings are dropped."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", standard))
    for _ in range(MAX_NESTING):
        if not brackets:
            return False
        inner = _INNERMOST.sub("", brackets)
        if inner == brackets:
            return True  # unbalanced: let the reader report it
        brackets = inner
    return bool(brackets)


class _LaxJSON:
    """A small recursive-descent JSON reader with the two dialect knobs of the `json` parser.

    Standard strings are decoded by the standard library's `scanstring`; custom-delimited strings
    are taken verbatim between their delimiters. Nesting is limited to `MAX_NESTING`.
    """

    def __init__(self, text: str, unquoted_keys: bool, string_delims: tuple[tuple[str, str], ...]):
        self.s = text
        self.unquoted = unquoted_keys
        self.delims = string_delims

    def fail(self, what: str, pos: int) -> None:
        raise ValueError(f"{what} at character {pos}")

    def ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()

    def parse(self) -> Any:
        value, pos = self.value(self.ws(0), 0)
        pos = self.ws(pos)
        if pos != len(self.s):
            self.fail("extra data after the JSON value", pos)
        return value

    def custom_string(self, pos: int) -> tuple[str, int] | None:
        for open_, close in self.delims:
            if self.s.startswith(open_, pos):
                start = pos + len(open_)
                end = self.s.find(close, start)
                if end < 0:
                    self.fail(f"unterminated string opened by {open_!r}", pos)
                return self.s[start:end], end + len(close)
        return None

    def string(self, pos: int) -> tuple[str, int] | None:
        custom = self.custom_string(pos) if self.delims else None
        if custom is not None:
            return custom
        if pos < len(self.s) and self.s[pos] == '"':
            return _scanstring(self.s, pos + 1, True)
        return None

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        if pos >= len(s):
            self.fail("expected a value, got end of text", pos)
        got = self.string(pos)
        if got is not None:
            return got
        c = s[pos]
        if c == "{" or c == "[":
            if depth >= MAX_NESTING:
                self.fail(f"nested more than {MAX_NESTING} levels deep", pos)
            return (self.obj if c == "{" else self.arr)(pos + 1, depth + 1)
        m = _NUMBER.match(s, pos)
        if m:
            num = m.group()
            return (int(num) if num.lstrip("-").isdigit() else float(num)), m.end()
        for word, val in (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
                          ("Infinity", float("inf")), ("-Infinity", float("-inf"))):
            if s.startswith(word, pos):
                return val, pos + len(word)
        self.fail(f"unexpected character {c!r}", pos)
        raise AssertionError  # unreachable

    def key(self, pos: int) -> tuple[str, int]:
        got = self.string(pos)
        if got is not None:
            return got
        if self.unquoted:
            m = _BARE_KEY.match(self.s, pos)
            if m:
                return m.group(), m.end()
        self.fail("expected a key", pos)
        raise AssertionError

    def obj(self, pos: int, depth: int) -> tuple[dict, int]:
        out: dict[str, Any] = {}
        pos = self.ws(pos)
        if self.s.startswith("}", pos):
            return out, pos + 1
        while True:
            k, pos = self.key(self.ws(pos))
            pos = self.ws(pos)
            if not self.s.startswith(":", pos):
                self.fail("expected ':'", pos)
            v, pos = self.value(self.ws(pos + 1), depth)
            out[k] = v
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
            elif self.s.startswith("}", pos):
                return out, pos + 1
            else:
                self.fail("expected ',' or '}'", pos)

    def arr(self, pos: int, depth: int) -> tuple[list, int]:
        out: list[Any] = []
        pos = self.ws(pos)
        if self.s.startswith("]", pos):
            return out, pos + 1
        while True:
            v, pos = self.value(self.ws(pos), depth)
            out.append(v)
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
            elif self.s.startswith("]", pos):
                return out, pos + 1
            else:
                self.fail("expected ',' or ']'", pos)


# --------------------------------------------------------------------------- json options


_MAX_SEPARATOR = 16


def _trailing(value: Any, field: str, key: str) -> str:
    if value not in ("error", "stream"):
        raise TemplateError(
            f'must be "error" (text after the JSON value is an error) or "stream" (the region ends where the '
            f"value ends and the rest goes back to the stream), got {value!r}",
            field=field,
            key=key,
        )
    return value


def _separator(value: Any, field: str, key: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_SEPARATOR:
        raise TemplateError(f"must be a non-empty string of at most {_MAX_SEPARATOR} characters, got {value!r}",
                            field=field, key=key)
    if value != value.strip(" \t\n\r"):
        raise TemplateError(f"must not start or end with whitespace (whitespace around the separator is always "
                            f"allowed), got {value!r}", field=field, key=key)
    if value[0] in '{["-0123456789tfnNI':
        raise TemplateError(f"must not start with a character that can start a JSON value, got {value!r}",
                            field=field, key=key)
    return value


def _json_value(value: Any, field: str, key: str) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TemplateError(f"must be a JSON value ({e})", field=field, key=key) from None
    return value


def _prepare_json(args: dict[str, Any], field: str, key: str) -> None:
    """Check the options together; `_empty`: the `empty` value as JSON text (each region gets its own
    copy); `_value_end`: for `trailing: stream`, the factory of the scanner the parser runs (`jsonscan`)."""
    if "empty" in args:
        args["_empty"] = json.dumps(args.pop("empty"))
    if args.get("trailing") == "stream":
        if key != "content_args":
            raise TemplateError('"stream" applies to a field\'s own content only (a value parser reads a '
                                "whole value)", field=field, key=f"{key}.trailing")
        if args.get("string_delims"):
            raise TemplateError('"stream" does not work with string_delims (the end of a value is found by '
                                "tracking JSON strings and brackets)", field=field, key=f"{key}.trailing")
        from functools import partial

        from ..jsonscan import ValueEnd

        args["_value_end"] = partial(ValueEnd, args.get("separator"), MAX_NESTING)
    if args.get("trailing") == "error" and len(args) == 1:
        del args["trailing"]  # the default: keep the plain fast path
    if (args.get("unquoted_keys") or args.get("string_delims")) and args.get("separator") is None:
        args["_translate"] = _to_json(bool(args.get("unquoted_keys")), args.get("string_delims") or ())
