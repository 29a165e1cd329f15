"""Where a streamed JSON value ends: the scanner behind the `json` parser's `"trailing": "stream"`.

A region whose content is `json` with `"trailing": "stream"` ends where its JSON value ends, not only at
its close delimiter: Mistral writes prose right after `[TOOL_CALLS]name[ARGS]{...}`, Granite after the
`<|tool_call|>[...]` array. The parser gives every text it routes into such a region to a `ValueEnd`
first, which reads it once (structural characters are found by C-level regex searches, so a long body
costs a few searches, not a Python step per character) and answers:

* `MORE` (-1): all of it belongs to the value (or to the sequence of values), which is not done yet;
* an index `k >= 0`: the value ended at `k`; the text from `k` on is handed back to the stream (the
  parser closes the region there and routes the rest as if a close delimiter had been seen);
* `HOLD` (-2): route the text up to `ValueEnd.hold` and keep the rest back, it may still be a separator
  (only a multi-character separator partly seen at the end of the text; at most its length minus one).

A JSON value is done at its closing `}` / `]` / `"` (brackets and strings are tracked, so a `}` inside a
string or a nested object does not end it), or, for a number or literal at the top level (`3`, `true`,
`NaN`), at the first character that cannot continue it (the word must then be a JSON number or literal).
A value that is all there (one-shot parsing, large chunks) is found by the standard library's C decoder in
one call, and its value is kept (`decoded`), so the body is not decoded twice. Otherwise whether the text
is valid JSON is not checked here: the `json` parser reads the region's body afterwards and reports errors
as usual. Text that cannot
start a JSON value makes the scanner give up: the region then runs to its close delimiter (a body that
is not JSON is malformed, and kept in `unparsed`), so nothing is cut early.

With a `separator` (`";"` for Llama 3's parallel calls) the region holds a sequence: after a value,
whitespace, the separator, whitespace and the next value belong to the region too; the sequence ends at
the first other character. A separator after the last value (and the whitespace after it) belong to the
sequence, like a trailing comma; a separator that is only partly there does not.

The decisions depend only on the text, never on where the chunks are cut, so streaming gives the same
regions as one-shot parsing for every chunking.

Most chunks of a long value change nothing but whether the scanner is inside a string: `ValueEnd.calm` is a
C-level search (or None) for the characters that may do more in the current state (brackets, backslashes,
at the top level a quote, and the characters the region's close delimiter can start with, `also`). A chunk
where it finds nothing needs no `scan`: the parser routes it and flips `state` between `IN_LIST` and
`IN_STRING` when the chunk holds an odd number of quotes (`calm_chunk` does both, for other callers).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

__all__ = ["ValueEnd", "MORE", "HOLD", "IN_LIST", "IN_STRING", "FLIP", "whole_sequence_end", "whole_value_end"]

#: `ValueEnd.scan` results that are not an index.
MORE = -1
HOLD = -2

_STRUCTURE = re.compile(r'["{}\[\]]')  # inside a list or object, outside strings
_IN_STRING = re.compile(r'["\\]')
_SCALAR = re.compile(r"[A-Za-z0-9+\-.]*")  # numbers and literals (true, null, NaN, -Infinity)
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR_START = frozenset("-0123456789tfnNI")
#: What a top-level scalar must be once it ended (anything else is not JSON: the scanner gives up).
_SCALAR_VALUE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|NaN|-?Infinity")
_MAX_SCALAR = 1_000
_decode = json.JSONDecoder().raw_decode
#: The C scanner behind `_decode` (`raw_decode` without its Python frame: `(value, end)` for a value known to start at
#: the position asked, `StopIteration` for no value there, `ValueError` / `RecursionError` as `raw_decode`'s):
#: `whole_value_end` and `whole_sequence_end`, once per value.
_scan_once = json.JSONDecoder().scan_once

# States.
_BEFORE, _NESTED, _STRING, _ESCAPE, _SCALAR_TOP, _AFTER, _SEPARATOR, _NEXT, _FAILED, _DONE = range(10)
#: The two states a chunk that `ValueEnd.calm` finds nothing in moves between (`state ^ FLIP`): inside a list
#: or object and outside strings, inside a string of one.
IN_LIST, IN_STRING = _NESTED, _STRING
FLIP = _NESTED ^ _STRING


@lru_cache(maxsize=64)
def _calm_searches(also: str) -> tuple[Any, Any, Any]:
    """`ValueEnd.calm` for (inside a list or object or a string of one, inside a top-level string, gave up:
    no quote either, so that the state stays), with the characters of `also`."""
    extra = "".join(re.escape(c) for c in sorted(set(also)))
    return (re.compile(r"[\[\]{}\\" + extra + "]").search, re.compile(r'["\\' + extra + "]").search,
            re.compile('["' + extra + "]").search)


class ValueEnd:
    """Reads one region's text as it streams in and finds where its JSON value (or sequence) ends.

    Args:
        separator: the text between the values of a sequence, or None for one value.
        max_depth: deeper nesting makes the scanner give up (the region runs to its close delimiter).
        also: the characters the region's close delimiter can start with, for `calm` (None: unknown, and
            `calm` stays None: every chunk is scanned).
    """

    __slots__ = ("separator", "max_depth", "state", "stack", "seen", "sep_at", "sep_read", "hold", "scalar", "end",
                 "values", "calm", "_calms")

    def __init__(self, separator: str | None = None, max_depth: int = 512, *, also: str | None = None):
        self.separator = separator
        self.max_depth = max_depth
        self.state = _BEFORE
        self.stack: list[str] = []  # the closing brackets expected, innermost last
        self.seen = 0  # stream offset of the first character not read yet
        self.sep_at = 0  # stream offset where a partly read separator starts
        self.sep_read = 0  # how many of its characters were read
        self.hold = 0  # with HOLD: the window index from which text is kept back
        self.scalar = ""  # the text of a top-level number or literal read so far
        self.end = 0  # once done: the stream offset where the value (or sequence) ended
        #: the values read so far, while every one was decoded whole (None once one was tracked instead)
        self.values: list[Any] | None = []
        #: A `search` that finds nothing in a chunk that can only move the scanner between `IN_LIST` and
        #: `IN_STRING` (one move per quote in it), or None when every chunk must be scanned (see the module
        #: docstring). Set by `scan` for the state it leaves.
        self.calm: Any = None
        self._calms = _calm_searches(also) if also is not None else None

    def scan(self, s: str, pos: int, stop: int, w0: int, closed: bool) -> int:
        """Read `s[pos:stop]` (`w0`: the stream offset of `s[0]`; text read by an earlier call, held back
        and given again, is not read twice). `closed`: `stop` is where the region's close delimiter
        starts or the end of the stream, so nothing more comes. Returns `MORE`, `HOLD` or the index where
        the value ends (see the module docstring). Asking again about the same text gives the same answer."""
        state = self.state
        if state >= _FAILED:
            return self.end - w0 if state == _DONE else MORE
        i = self.seen - w0
        if i < pos:
            i = pos
        stack = self.stack
        while i < stop:
            if state == _NESTED:
                m = _STRUCTURE.search(s, i, stop)
                if m is None:
                    i = stop
                    break
                c = s[m.start()]
                i = m.end()
                if c == '"':
                    state = _STRING
                elif c == "{" or c == "[":
                    if len(stack) >= self.max_depth:
                        state = _FAILED
                        break
                    stack.append("}" if c == "{" else "]")
                elif stack.pop() != c:
                    state = _FAILED  # a bracket that closes nothing open: not JSON, leave it to the parser
                    break
                elif not stack:
                    state = self._value_done()
                    if state == _DONE:
                        break
            elif state == _STRING:
                m = _IN_STRING.search(s, i, stop)
                if m is None:
                    i = stop
                    break
                i = m.end()
                if s[m.start()] == "\\":
                    if i < stop:
                        i += 1
                    else:
                        state = _ESCAPE
                elif stack:
                    state = _NESTED
                else:
                    state = self._value_done()
                    if state == _DONE:
                        break
            elif state == _ESCAPE:
                i += 1
                state = _STRING
            elif state == _BEFORE or state == _NEXT:
                i = _WS.match(s, i, stop).end()
                if i == stop:
                    break
                c = s[i]
                if c == "{" or c == "[" or c == '"':
                    # The whole value is often here (one-shot parsing, large chunks): the standard library's C
                    # decoder finds its end in one call. Valid JSON ends where the tracking below would end it;
                    # otherwise (invalid, cut off, or running past `stop`) the tracking decides.
                    try:
                        value, e = _decode(s, i)
                    except (ValueError, RecursionError):
                        e = -1
                    if 0 <= e <= stop:
                        if self.values is not None:
                            self.values.append(value)
                        i = e
                        state = self._value_done()
                        if state == _DONE:
                            break
                        continue
                self.values = None  # this one is tracked, not decoded
                if c == "{" or c == "[":
                    stack.append("}" if c == "{" else "]")
                    state = _NESTED
                    i += 1
                elif c == '"':
                    state = _STRING
                    i += 1
                elif c in _SCALAR_START:
                    state = _SCALAR_TOP
                    self.scalar = ""
                elif state == _BEFORE:
                    state = _FAILED  # no JSON value starts here: the region runs to its close delimiter
                    break
                else:
                    state = _DONE  # a separator followed by no value: the sequence ended with it
                    break
            elif state == _SCALAR_TOP:
                j = _SCALAR.match(s, i, stop).end()
                self.scalar += s[i:j]
                i = j
                if len(self.scalar) > _MAX_SCALAR:
                    state = _FAILED
                    break
                if i == stop:
                    break
                if _SCALAR_VALUE.fullmatch(self.scalar) is None:
                    state = _FAILED  # prose such as `not json`: the region runs to its close delimiter
                    break
                state = self._value_done()
                if state == _DONE:
                    break
            elif state == _AFTER:
                i = _WS.match(s, i, stop).end()
                if i == stop:
                    break
                if s[i] != self.separator[0]:  # type: ignore[index]
                    state = _DONE
                    break
                state = _SEPARATOR
                self.sep_at = w0 + i
                self.sep_read = 0
            else:  # _SEPARATOR
                sep = self.separator
                assert sep is not None
                read = self.sep_read
                n = min(len(sep) - read, stop - i)
                if s[i : i + n] != sep[read : read + n]:
                    self.state = _DONE
                    self.end = self.sep_at
                    return self.sep_at - w0  # not the separator: the sequence ended before it
                i += n
                self.sep_read = read + n
                if self.sep_read == len(sep):
                    state = _NEXT
        self.state = state
        calms = self._calms
        if calms is not None:
            if state == _NESTED or (state == _STRING and stack):
                self.calm = calms[0]
            elif state == _STRING:
                self.calm = calms[1]
            else:
                self.calm = calms[2] if state == _FAILED else None  # (no quote: the state stays)
        if state == _DONE:
            self.seen = self.end = w0 + i
            return i
        if i > self.seen - w0:
            self.seen = w0 + i
        if state == _SEPARATOR:
            self.hold = self.sep_at - w0
            if closed:  # cut short by the close delimiter or the end of the stream: no separator
                self.state = _DONE
                self.end = self.sep_at
                return self.hold
            return HOLD
        return MORE

    def calm_chunk(self, text: str) -> bool:
        """Whether `text` (the next text of the region) leaves the value open and needs no `scan`: `calm`
        finds nothing in it. If so, the state it leads to is taken (a quote opens or closes a string)."""
        calm = self.calm
        if calm is None or calm(text) is not None:
            return False
        if text.count('"') & 1:
            self.state ^= FLIP
        return True

    def decoded(self) -> tuple[Any] | None:
        """When the region closes: `(value,)`, its value, if every value in it was decoded whole and nothing
        else is in it but whitespace and separators (what the `json` parser would read from the region's
        body: the value, or with a separator the list), else None."""
        values = self.values
        if not values or not (self.state == _DONE or self.state == _AFTER or self.state == _NEXT):
            return None
        return (values,) if self.separator is not None else (values[0],)

    def _value_done(self) -> int:
        """A value just ended: the region ends here, unless a separator may follow."""
        return _DONE if self.separator is None else _AFTER


def whole_value_end(s: str, pos: int, stop: int) -> tuple[int, Any] | None:
    """One-shot parsing's first step of a fresh `ValueEnd()` (one value, no separator) asked about `s[pos:stop]`
    with `closed=True`, when the value is all there: `(k, value)` where `scan` would return the index `k` and
    `decoded()` then `(value,)`; None when that scanner must decide (the value is not one whole JSON object,
    list or string before `stop`), with nothing read. Saves building the scanner and its state per region."""
    i = _WS.match(s, pos, stop).end()
    if i < stop and s[i] in '{["':
        try:
            value, e = _scan_once(s, i)
        except (StopIteration, ValueError, RecursionError):
            return None
        if e <= stop:
            return e, value
    return None


def whole_sequence_end(separator: str, s: str, pos: int, stop: int) -> tuple[int, list[Any]] | None:
    """`whole_value_end` of a sequence: a fresh `ValueEnd(separator)` asked about `s[pos:stop]` with
    `closed=True`, when every value in it is one whole JSON object, list or string the C decoder reads before
    `stop`: `(k, values)`, where `scan` would return `k` (an index, or `MORE` when the sequence runs to `stop`)
    and `decoded()` then `(values,)`; None when that scanner must decide (a value that does not decode whole
    before `stop`, a top-level number or literal, no value at all or none after a separator), with nothing
    read. Llama 3's `{...}; {...}`
    calls: one decode per value and no scanner built."""
    values = []
    i = _WS.match(s, pos, stop).end()
    if i == stop or s[i] not in '{["':
        return None  # (no value: `scan` gives up or waits; a scalar: tracked)
    width = len(separator)
    first = separator[0]
    while True:
        try:
            value, e = _scan_once(s, i)  # (`_decode(s, i)`: `s[i]` starts a value)
        except (StopIteration, ValueError, RecursionError):
            return None
        if e > stop:
            return None
        values.append(value)
        i = _WS.match(s, e, stop).end()  # (`_AFTER`)
        if i == stop:
            return MORE, values
        if s[i] != first:
            return i, values
        at = i  # (`_SEPARATOR`: all of it, or the sequence ends before it)
        if stop - i < width or s[i : i + width] != separator:
            return at, values
        i = _WS.match(s, i + width, stop).end()  # (`_NEXT`)
        if i == stop:
            return MORE, values
        if s[i] not in '{["':
            return None  # (a scalar: tracked; no value after the separator: not all values decoded)
