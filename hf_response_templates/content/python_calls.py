"""The `python-call-list` content parser: `[f(a=1), g(b='x')]` read by a strict reader (never evaluated),
with a one-`fullmatch` fast path for calls whose arguments are plain scalars."""

from __future__ import annotations

import re as _stdre
from collections.abc import Callable, Mapping
from typing import Any

from .json_values import _WS

# --------------------------------------------------------------------------- python-call-list

_CALL_NAME = _stdre.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")


_KWARG = _stdre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_CALL_NUMBER = _stdre.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


_CALL_STRING = _stdre.compile(r"'((?:[^'\\\n\r]|\\.)*)'|\"((?:[^\"\\\n\r]|\\.)*)\"")


_CALL_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


_CALL_CONSTANTS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}


_CALL_MAX_INT = 2**53 - 1  # integers a JSON consumer in any language can hold exactly


_CALL_MAX_DEPTH = 100


class _CallListReader:
    r"""A strict reader for pythonic tool calls, e.g. `[get_weather(city="Paris", days=3)]`.

    Grammar (JSON whitespace allowed between tokens), kept strict so that other implementations can
    match it exactly:

        calls   := '[' [call (',' call)*] ']'
        call    := NAME '(' [kwarg (',' kwarg)*] ')'     NAME: identifier, parts joined by '.' or '-'
        kwarg   := NAME '=' value                        (no positional arguments, no repeated names)
        value   := string | number | True | False | None | true | false | null
                 | '[' [value (',' value)*] ']' | '{' [string ':' value (',' ...)*] '}'
        string  := '...' or "..." on one line; escapes \\ \' \" \/ \b \f \n \r \t \uXXXX
        number  := a JSON number; integers within +-(2**53 - 1), floats finite

    Lists and dicts nest at most 100 deep. Nothing is evaluated: model text never reaches `eval` or `ast`.
    """

    def __init__(self, text: str):
        self.s = text

    def fail(self, what: str, pos: int) -> None:
        raise ValueError(f"python-call-list: {what} at character {pos}")

    def ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()

    def parse(self) -> list[dict[str, Any]]:
        pos = self.ws(0)
        if not self.s.startswith("[", pos):
            self.fail("expected '[' (a list of calls)", pos)
        calls, pos = self.seq(pos + 1, "]", self.call)
        pos = self.ws(pos)
        if pos != len(self.s):
            self.fail("unexpected text after the closing ']'", pos)
        return calls

    def seq(self, pos: int, close: str, item: Callable[[int], tuple[Any, int]]) -> tuple[list, int]:
        out: list[Any] = []
        pos = self.ws(pos)
        if self.s.startswith(close, pos):
            return out, pos + 1
        while True:
            value, pos = item(self.ws(pos))
            out.append(value)
            pos = self.ws(pos)
            if self.s.startswith(close, pos):
                return out, pos + 1
            if not self.s.startswith(",", pos):
                self.fail(f"expected ',' or {close!r}", pos)
            pos += 1

    def call(self, pos: int) -> tuple[dict[str, Any], int]:
        m = _CALL_NAME.match(self.s, pos)
        if not m:
            self.fail("expected a function name", pos)
        name, pos = m.group(), self.ws(m.end())
        if not self.s.startswith("(", pos):
            self.fail(f"expected '(' after {name!r}", pos)
        pairs, end = self.seq(pos + 1, ")", self.kwarg)
        arguments: dict[str, Any] = {}
        for key, value in pairs:
            if key in arguments:
                self.fail(f"argument {key!r} repeated in the call to {name!r}", pos)
            arguments[key] = value
        return {"name": name, "arguments": arguments}, end

    def kwarg(self, pos: int) -> tuple[tuple[str, Any], int]:
        m = _CALL_NAME.match(self.s, pos)  # as native: `a.b=1` and `a-b=1` are keyword names too
        if not m:
            self.fail("expected a keyword argument (name=value; positional arguments are not supported)", pos)
        pos = self.ws(m.end())
        if not self.s.startswith("=", pos):
            self.fail(f"expected '=' after argument name {m.group()!r} (positional arguments are not supported)", pos)
        value, end = self.value(self.ws(pos + 1), 0)
        return (m.group(), value), end

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        c = s[pos : pos + 1]
        if c in ("'", '"'):
            result = self.string(pos)
        elif c in ("[", "{"):
            if depth >= _CALL_MAX_DEPTH:
                self.fail(f"lists and dicts nested more than {_CALL_MAX_DEPTH} deep", pos)
            if c == "[":
                result = self.seq(pos + 1, "]", lambda p: self.value(p, depth + 1))
            else:
                pairs, end = self.seq(pos + 1, "}", lambda p: self.pair(p, depth + 1))
                out: dict[str, Any] = {}
                for key, value in pairs:
                    if key in out:
                        self.fail(f"dict key {key!r} repeated", pos)
                    out[key] = value
                result = (out, end)
        elif (m := _CALL_NUMBER.match(s, pos)) is not None:
            num = m.group()
            if m.group(1) is None and m.group(2) is None:
                if len(num) > 17 or abs(int(num)) > _CALL_MAX_INT:
                    self.fail("integer outside the range -(2**53 - 1) to 2**53 - 1", pos)
                result = (int(num), m.end())
            else:
                number = float(num)
                if number in (float("inf"), float("-inf")):
                    self.fail("number too large", pos)
                result = (number, m.end())
        elif (m := _KWARG.match(s, pos)) is not None and m.group() in _CALL_CONSTANTS:
            result = (_CALL_CONSTANTS[m.group()], m.end())
        else:
            self.fail("expected a value (a string, number, list, dict, True, False or None)", pos)
        return result

    def pair(self, pos: int, depth: int) -> tuple[tuple[str, Any], int]:
        if self.s[pos : pos + 1] not in ("'", '"'):
            self.fail("dict keys must be strings", pos)
        key, pos = self.string(pos)
        pos = self.ws(pos)
        if not self.s.startswith(":", pos):
            self.fail("expected ':'", pos)
        value, end = self.value(self.ws(pos + 1), depth)
        return (key, value), end

    def string(self, pos: int) -> tuple[str, int]:
        m = _CALL_STRING.match(self.s, pos)
        if not m:
            self.fail("invalid or unterminated string (strings stay on one line)", pos)
        body = m.group(1) if m.group(1) is not None else m.group(2)
        out: list[str] = []
        i = 0
        while (j := body.find("\\", i)) >= 0:
            out.append(body[i:j])
            esc = body[j + 1]
            if esc in _CALL_ESCAPES:
                out.append(_CALL_ESCAPES[esc])
                i = j + 2
                continue
            hexa = body[j + 2 : j + 6]
            if esc != "u" or not _stdre.fullmatch(r"[0-9a-fA-F]{4}", hexa):
                self.fail(f"unsupported escape '\\{esc}' in string", pos + 1 + j)
            code, i = int(hexa, 16), j + 6
            if 0xD800 <= code <= 0xDBFF and body[i : i + 2] == "\\u":
                low = body[i + 2 : i + 6]
                if _stdre.fullmatch(r"[dD][c-fC-F][0-9a-fA-F]{2}", low):
                    code, i = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00), i + 6
            if 0xD800 <= code <= 0xDFFF:
                self.fail("lone surrogate escape in string", pos + 1 + j)
            out.append(chr(code))
        out.append(body[i:])
        text = "".join(out)
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in body):
            self.fail("lone surrogate in string", pos)
        return text, m.end()


# The fast path of `python-call-list`: a list of calls whose arguments are scalars written without escapes, or
# flat lists and dicts of them (the usual tool call) is recognised by one C-level `fullmatch` of that subset of
# the grammar and read by `findall`s of its tokens, ~4x cheaper than the reader; anything else (deeper nesting,
# escapes, a repeated name or dict key, an integer out of range, an error) is left to `_CallListReader`, which
# decides and words the error. Every loop below is followed by a character it cannot take, so a failing match
# backtracks linearly.
_F_WS = r"[ \t\n\r]*"


_F_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*"


_F_STRING = r"\"[^\"\\\n\r\ud800-\udfff]*\"|'[^'\\\n\r\ud800-\udfff]*'"  # no escape, no surrogate


_F_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"


_F_CONSTANT = "True|False|None|true|false|null"


_F_SCALAR = f"{_F_STRING}|{_F_NUMBER}|{_F_CONSTANT}"


_F_PAIR = f"(?:{_F_STRING}){_F_WS}:{_F_WS}(?:{_F_SCALAR})"


#: a list or a dict of scalars (one level: deeper nesting is the reader's)
_F_FLAT = (f"\\[{_F_WS}(?:(?:{_F_SCALAR})(?:{_F_WS},{_F_WS}(?:{_F_SCALAR}))*{_F_WS})?\\]"
           f"|\\{{{_F_WS}(?:{_F_PAIR}(?:{_F_WS},{_F_WS}{_F_PAIR})*{_F_WS})?\\}}")


_F_KWARG = f"{_F_NAME}{_F_WS}={_F_WS}(?:{_F_SCALAR}|{_F_FLAT})"


_F_CALL = f"{_F_NAME}{_F_WS}\\({_F_WS}(?:{_F_KWARG}(?:{_F_WS},{_F_WS}{_F_KWARG})*{_F_WS})?\\)"


_SIMPLE_CALLS = _stdre.compile(f"{_F_WS}\\[{_F_WS}(?:{_F_CALL}(?:{_F_WS},{_F_WS}{_F_CALL})*{_F_WS})?\\]{_F_WS}")


#: In a text `_SIMPLE_CALLS` matches: (call name, "", "", "", "") for each call, (keyword, string with its
#: quotes, number, constant, flat list or dict) for each argument, in order (the name is read once: an
#: alternation of a call and a keyword would read each keyword twice, and try every shorter name in between).
_SIMPLE_TOKENS = _stdre.compile(
    f"({_F_NAME}){_F_WS}(?:\\(|={_F_WS}(?:({_F_STRING})|({_F_NUMBER})|({_F_CONSTANT})|({_F_FLAT})))")


#: In a flat list `_F_FLAT` matches: (string, number, constant) of each item; in a flat dict: (key with its
#: quotes, string, number, constant) of each pair.
_FLAT_ITEMS = _stdre.compile(f"({_F_STRING})|({_F_NUMBER})|({_F_CONSTANT})")


_FLAT_PAIRS = _stdre.compile(f"({_F_STRING}){_F_WS}:{_F_WS}(?:({_F_STRING})|({_F_NUMBER})|({_F_CONSTANT}))")


_INF = float("inf")


_NO_VALUE = object()  # a scalar the reader rejects (an integer out of range, a float too large)


def _simple_scalar(string: str, number: str, constant: str) -> Any:
    """The value of one scalar token of the fast path (one of the three is non-empty), or `_NO_VALUE`."""
    if string:
        return string[1:-1]
    if constant:
        return _CALL_CONSTANTS[constant]
    if "." in number or "e" in number or "E" in number:
        value = float(number)
        return _NO_VALUE if value in (_INF, -_INF) else value
    if len(number) > 17 or abs(value := int(number)) > _CALL_MAX_INT:
        return _NO_VALUE
    return value


def _simple_flat(text: str) -> Any:
    """The value of a flat list or dict that `_F_FLAT` matches, or `_NO_VALUE` (a scalar out of range, a
    repeated dict key: the reader's errors)."""
    if text[0] == "[":
        items = []
        for string, number, constant in _FLAT_ITEMS.findall(text):
            value = _simple_scalar(string, number, constant)
            if value is _NO_VALUE:
                return value
            items.append(value)
        return items
    out: dict[str, Any] = {}
    for key, string, number, constant in _FLAT_PAIRS.findall(text):
        key = key[1:-1]
        value = _simple_scalar(string, number, constant)
        if value is _NO_VALUE or key in out:
            return _NO_VALUE
        out[key] = value
    return out


def _simple_call_list(text: str) -> list[dict[str, Any]] | None:
    """`_CallListReader(text).parse()` for a call list of scalar arguments without escapes, or flat lists and
    dicts of them; None for any other text (also one the reader rejects), which the reader then reads."""
    if _SIMPLE_CALLS.fullmatch(text) is None:
        return None
    calls: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {}
    for key, string, number, constant, flat in _SIMPLE_TOKENS.findall(text):
        if not (string or number or constant or flat):  # (a value's text is never empty: a string has its quotes)
            arguments = {}
            calls.append({"name": key, "arguments": arguments})
            continue
        if key in arguments:
            return None  # repeated: an error, worded by the reader
        if string:
            arguments[key] = string[1:-1]
            continue
        value = _simple_flat(flat) if flat else _simple_scalar(string, number, constant)
        if value is _NO_VALUE:
            return None
        arguments[key] = value
    return calls


def parse_python_call_list(text: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`[get_weather(city="Paris", days=3)]` -> `[{"name": "get_weather", "arguments": {...}}]`."""
    calls = _simple_call_list(text)
    return calls if calls is not None else _CallListReader(text).parse()


def parse_python_literal(text: str) -> Any:
    """One Python literal as `str()` writes it (`{'lang': 'fr', 'safe': True}`, `[1, 'a']`) -> its value.

    The value grammar of `python-call-list` (strings, numbers, lists, dicts with string keys, `True`,
    `False`, `None`), read the same strict way and never evaluated. Raises `ValueError` for anything else,
    or for text after the value. Chat templates that print an object argument with `{{ value }}` or
    `|string` write this form; :mod:`.tools` reads it back for object and array parameters.
    """
    reader = _CallListReader(text)
    value, pos = reader.value(reader.ws(0), 0)
    if reader.ws(pos) != len(text):
        reader.fail("unexpected text after the value", reader.ws(pos))
    return value
