"""Incremental partial parsers: what is stable so far in a region body that is still being written.

One interface for every content format that streams tool-call arguments (``json``, ``xml-inline``,
``python-call-list``), so that the delta adapters (`hf_response_templates.openai`) need no format knowledge:

* ``feed(text)``: add body text. The cost is proportional to ``len(text)`` (plus, for ``python-call-list``
  and ``xml-inline`` patterns without a known `content.TagShape`, the length of the one parameter or call
  being written when its end may have arrived), never to the length of the body so far. It may return True
  (``json`` and `XmlTagsPartial` do): all of ``text`` was appended, as it is, to the pieces of the open
  string value (`open_string`), and the structure did not change. Until the next ``feed``, the parser then
  only waits for more of that string: a caller may append text without ``"``, ``\\``, control characters or
  the parser's ``sink_stop`` character (if it has that attribute: ``<`` for XML tags) to those pieces itself
  instead of feeding it (what `DeltaStream` does while an argument streams).
* ``value``: the live partial value (containers are updated in place; `MISSING` before anything parsed).
  Strings still being written are not in it (see `open_string`), numbers are added when they end.
* ``complete(path)``: whether the node at ``path`` (keys / indexes from the root) can no longer change.
* ``frame(node)``: for a container still open, its `Frame` (member keys in order, the member being
  written); None for a node that is complete.
* ``open_string(frame)``: the decoded pieces of the string member being written in ``frame``, or None.
* ``version``: grows whenever the structure changes (a member starts or ends); unchanged while only the
  characters of an open string (or whitespace) arrive.
* ``broken``: the text can no longer be a prefix of a valid body (nothing more becomes stable).
* ``snapshot()``: a copy of the partial value, open strings included (for display).
* ``follow(frame)`` (optional; ``json``, its dialect `JsonDialectPartial` and `XmlTagsPartial` have it): write the members of the open object
  ``frame`` out as ``json.dumps`` writes them (``, `` and ``: `` separators, ``ensure_ascii=False``), from
  where the reader stands (False: not from here; None: never, for this parser). While `following` is that
  frame, ``feed`` returns the text those members add (a ``str``, possibly empty; or True as above: then
  ``text`` itself), and ``hold(text)`` keeps text that can neither complete a member nor open its string value, for less than a
  ``feed`` costs (True: kept); ``string_sink()`` is the open string value's pieces when text may be appended
  to them instead of fed. Members whose text is json.dumps's (integers, literals, floats as ``repr``
  writes them, strings, flat lists of scalars, keys without escapes) are read with string operations; at
  anything else (spaces, nested objects, ``1e5``, escaped keys), and at the object's end, `following` becomes
  None, `followed` is how many of its members the text written held whole, and the reader goes on as usual.
  The dialect's reader writes its members out from any spacing (see `JsonDialectPartial`); instead of
  ``string_sink()`` its custom-delimited string value has `sink` (text without its closing delimiter's first
  character, ``sink_stop``, may be appended).

`partial_parser(content, args)` makes the parser for a content format, or None if it has none.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from hf_response_templates.content import (
    _BARE_KEY,  # a bare key of the dialect (``unquoted_keys``): the full parse's definition, read here too
    DEFAULT_REGEX_TIMEOUT,
    MAX_NESTING,
    get_content_parser,
    parse_json,
)
from hf_response_templates.errors import RegexTimeoutError

_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # json.dumps of a str

__all__ = [
    "MISSING",
    "Frame",
    "JsonPartial",
    "JsonDialectPartial",
    "XmlInlinePartial",
    "XmlTagsPartial",
    "CallListPartial",
    "partial_parser",
    "register_partial_parser",
    "has_partial_parser",
]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: No value (yet) at a path.
MISSING: Any = _Missing()


class Frame:
    """An open container: its node, member keys in order (dicts), and the member being written."""

    __slots__ = ("node", "is_dict", "keys", "open_key", "pending_key", "version")

    def __init__(self, node: Any, is_dict: bool):
        self.node = node
        self.is_dict = is_dict
        self.keys: list = []  # dict member keys, in order, as their values start
        self.open_key: Any = None  # the key (dict) or index (list) whose value is being written
        self.pending_key: Any = None  # a dict key read, its value not started yet
        self.version = 0  # grows when one of its own members starts or ends (not deeper changes)


# --------------------------------------------------------------------------- JSON

_WS_RUN = re.compile(r"[ \t\n\r]*")
_STR_RUN = re.compile(r'[^"\\\x00-\x1f]*')
_TOKEN_RUN = re.compile(r"[0-9A-Za-z.+\-]*")
_PLAIN_KEY = re.compile(r'"([^"\\\x00-\x1f]*)"')
_ESCAPE = re.compile(
    r'\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|["\\/bfnrt])'
)
_ESCAPE_PREFIX = re.compile(r"\\(?:u[0-9a-fA-F]{0,4}(?:\\(?:u[0-9a-fA-F]{0,3})?)?)?")
_HIGH_ALONE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LITERALS = {"true": True, "false": False, "null": None}
# A followed object's member as json.dumps writes it, whole, for the most common values (see `_follow_members`):
# a key and a string without escapes, an integer or a literal followed by what ends it
_MEMBER = r'"([^"\\\x00-\x1f]*)": (?:(0|-?[1-9][0-9]*)(?=[,}])|(true|false|null)(?=[,}])|"([^"\\\x00-\x1f]*)")'
_FIRST_MEMBER = re.compile(_MEMBER)
_NEXT_MEMBER = re.compile(", " + _MEMBER)
_scan_value = json.JSONDecoder().scan_once  # one JSON value at an index (the C scanner): (value, end)
_encode_value = json.JSONEncoder(ensure_ascii=False).encode  # == json.dumps(value, ensure_ascii=False)


def _value_encoder() -> Callable[[Any, int], Any]:
    """``f(value, 0)``: the pieces of ``json.dumps(value, ensure_ascii=False)`` for a value read from JSON (no
    cycles), from the C encoder that `json.JSONEncoder.encode` builds per call (here once), else from it."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is not None:
        try:
            enc = make(None, None, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
            sample = [1, -2.5, "é\n", True, None, [float("nan")]]
            if "".join(enc(sample, 0)) == _encode_value(sample):
                return enc
        except (TypeError, ValueError):  # (another Python's signature)
            pass
    return lambda value, _level: (_encode_value(value),)


_encode_pieces = _value_encoder()
# `follow`: what the start of a member held back waits for (`JsonPartial.hold`): text with none of these
# characters, and fewer `"` than the quotes still to come, cannot complete the member or open its string
# value. From a member's end on: the third quote (that opens its string value, or else the next key, which
# comes after a scalar value's end), or the end of the object or of a list value; in a list value: its end;
# in a number or literal cut by the end of the text: its end
_WAIT_MEMBER = frozenset("}]")
_WAIT_LIST = frozenset("]")
_WAIT_TOKEN = frozenset(",}")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "b": "\b", "f": "\f"}

# modes
_VALUE, _VALUE_FIRST, _KEY, _KEY_FIRST, _COLON, _AFTER, _STR, _CSTR, _TOKEN, _BARE, _DEAD = range(11)


class JsonPartial:
    """An incremental JSON reader (with the `json` parser's dialect: bare keys, custom string delimiters).

    It keeps its state between `feed` calls (a stack of open containers, the string or number being read)
    and never looks at text twice, so a body of any length costs time proportional to its length.
    Duplicate keys, syntax errors and nesting deeper than the `json` parser allows make it `broken`.
    """

    __slots__ = (
        "value",
        "broken",
        "done",
        "version",
        "stack",
        "_mode",
        "_carry",
        "_chunks",
        "_is_key",
        "_close",
        "_unquoted",
        "_delims",
        "_openers",
        "following",
        "followed",
        "wait",
        "quotes",
        "pending",
    )

    #: (`JsonDialectPartial.sink`: a plain JSON string value has `string_sink`)
    sink: list[str] | None = None

    def __init__(self, unquoted_keys: bool = False, string_delims: tuple = ()):
        self.value: Any = MISSING
        self.broken = False
        self.done = False  # the root value is complete
        self.version = 0
        self.stack: list[Frame] = []
        self._mode = _VALUE
        self._carry = ""  # text that must be read again with what follows (a split escape, delimiter, token)
        self._chunks: list[str] = []  # decoded pieces of the open string
        self._is_key = False
        self._close = ""  # the closing delimiter of an open custom string
        self._unquoted = unquoted_keys
        self._delims = tuple(tuple(p) for p in string_delims)
        self._openers = "".join({p[0][0] for p in self._delims if p[0]})
        self.following: Frame | None = None  # the object whose members `feed` writes out (see `follow`)
        self.followed = 0  # its members written whole when `following` ended
        self.wait: frozenset | None = None  # while following: what `pending` waits for (see `hold`)
        self.quotes = 0  # while following: the quotes still to come before the pending member's value opens
        self.pending: list[str] = []  # while following: the start of its next member, not complete yet

    # -- the interface ---------------------------------------------------------------------------

    def feed(self, text: str) -> bool | None:
        """Read more body text. True: all of it went, as one piece, into the open string value (not a key),
        and it needs no JSON escaping (no ``"``, ``\\``, control character): the structure did not change."""
        if self._mode == _STR and not self._carry:  # fast path: more characters of an open string
            if _STR_RUN.match(text).end() == len(text):
                if text:
                    self._chunks.append(text)
                    return not self._is_key or None
                return None
        if self.broken or not text:
            return None
        if self.following is not None:
            return self._follow_feed(text)
        if self._carry:
            text = self._carry + text
            self._carry = ""
        try:
            self._run(text)
        except (ValueError, RecursionError):
            self.broken = True
            self._mode = _DEAD
        return None

    def complete(self, path: tuple) -> bool:
        node = self.value
        if node is MISSING:
            return False
        stack = self.stack
        depth = len(stack)
        for d, key in enumerate(path):
            if d < depth and stack[d].node is node:
                f = stack[d]
                if key != f.open_key:
                    return True
                try:
                    node = node[key]
                except (KeyError, IndexError, TypeError):
                    return False  # an open scalar
                continue
            return True
        d = len(path)
        if d < depth and stack[d].node is node:
            return False
        return bool(path) or self.done

    def frame(self, node: Any) -> Frame | None:
        for f in self.stack:
            if f.node is node:
                return f
        return None

    def open_string(self, frame: Frame) -> list[str] | None:
        if self._mode in (_STR, _CSTR) and not self._is_key and self.stack and self.stack[-1] is frame:
            return self._chunks
        return None

    def string_sink(self) -> list[str] | None:
        """While `following`: the pieces of its open string value, if text without ``"``, ``\\`` or control
        characters may be appended to them instead of fed (nothing held back, e.g. a cut escape); else None."""
        if self._mode != _STR or self._carry or self._is_key or not self.stack or self.stack[-1] is not self.following:
            return None
        return self._chunks

    def snapshot(self) -> Any:
        if self.value is MISSING and not (self._mode in (_STR, _CSTR) and not self.stack):
            return None
        if not self.stack:
            if self.value is not MISSING:
                return copy.deepcopy(self.value)
            return "".join(self._chunks)
        value = copy.deepcopy(self.value)
        if self._mode in (_STR, _CSTR) and not self._is_key:
            node = value
            for f in self.stack[:-1]:
                node = node[f.open_key]
            top = self.stack[-1]
            text = "".join(self._chunks)
            if top.is_dict:
                node[top.open_key] = text
            else:
                node.append(text)
        return value

    def follow(self, frame: Frame) -> bool | None:
        """Write out the members of the open object `frame` from now on (see the module docs); False if the
        reader does not stand where that can start: `frame` must be the innermost open container, a dict,
        with the reader between two of its members (or before the first) or in its open string value, and
        nothing held back but a cut escape of that string. None: never (a dialect: bare keys, custom string
        delimiters, which json.dumps does not write)."""
        if self._unquoted or self._delims:
            return None
        if (
            self.broken
            or not self.stack
            or self.stack[-1] is not frame
            or not frame.is_dict
            or frame.pending_key is not None
        ):
            return False
        mode = self._mode
        if mode == _STR:
            if self._is_key or frame.open_key is None:
                return False
        elif self._carry or not (mode == _AFTER or mode == _KEY_FIRST and not frame.keys):
            return False
        self.following = frame
        if mode == _STR:
            self.wait = None
        else:
            self._hold_at("", 0)
        return True

    def hold(self, text: str) -> bool:
        """While `following`: keep `text` (in `pending`, read with the next text fed) if it can neither
        complete the member being written nor open its string value; True if it was kept. Cheaper than
        `feed` for such text: a set test and a count."""
        wait = self.wait
        if wait is None or not wait.isdisjoint(text):
            return False
        q = self.quotes
        if q:
            c = text.count('"')
            if c >= q:
                return False
            self.quotes = q - c
        self.pending.append(text)
        return True

    def _hold_at(self, s: str, i: int) -> None:
        """Keep `s[i:]`, the start of a member (or the text before it), and what it waits for."""
        rest = s[i:] if i else s
        if rest:
            self.pending.append(rest)
            self.wait, self.quotes = _WAIT_MEMBER, max(3 - rest.count('"'), 1)
        else:
            self.wait, self.quotes = _WAIT_MEMBER, 3

    def _follow_feed(self, text: str) -> str:
        """`feed` while `following`: the text the followed object's members add, as json.dumps writes it."""
        out: list[str] = []
        try:
            if self._carry:
                text = self._carry + text
                self._carry = ""
            i = 0
            if self._mode == _STR:  # its open string value
                chunks = self._chunks
                start = len(chunks)  # (the pieces before were written out, by `feed` or by the caller)
                i = self._string(text, 0)
                if len(chunks) > start:
                    new = chunks[start] if len(chunks) == start + 1 else "".join(chunks[start:])
                    out.append(_encode_string(new)[1:-1])
                if self._mode == _STR:
                    return out[0] if out else ""
                out.append('"')
            pending = self.pending
            if pending:
                pending.append(text[i:] if i else text)
                text = "".join(pending)
                pending.clear()
                i = 0
            self._follow_members(text, i, out)
        except (ValueError, RecursionError):
            self.broken = True
            self._mode = _DEAD
            self.following = None
            self.wait = None
            return ""  # (as without `follow`: nothing of a text that breaks the body is sent)
        return out[0] if len(out) == 1 else "".join(out)

    def _follow_members(self, s: str, i: int, out: list[str]) -> None:
        """Read whole members of the followed object from `s[i:]` (see `follow`); hold back a partial one in
        `pending` (`wait`: the characters it waits for); hand what is not written as json.dumps would to the
        general reader."""
        frame = self.following
        node, keys = frame.node, frame.keys
        n = len(s)
        while i < n:
            m = (_NEXT_MEMBER if keys else _FIRST_MEMBER).match(s, i)
            if m is not None:  # the common members whole, in one match: what the steps below check, one by one
                key = m.group(1)
                if key in node:
                    return self._unfollow(s, i)  # (a duplicate)
                g = m.lastindex
                keys.append(key)
                if g == 4:  # a string: it opened and ended (two changes, as below)
                    node[key] = m.group(4)
                    self.version += 2
                    frame.version += 2  # type: ignore[union-attr]
                else:
                    node[key] = int(m.group(2)) if g == 2 else _LITERALS[m.group(3)]
                    self.version += 1
                    frame.version += 1  # type: ignore[union-attr]
                self._mode = _AFTER
                j = m.end()
                out.append(s[i:j])
                i = j
                continue
            if keys:  # `, "key": value`
                if not s.startswith(', "', i):
                    if len(s) - i < 3 and ', "'.startswith(s[i:]):
                        return self._hold_at(s, i)
                    return self._unfollow(s, i)
                k = i + 3
            elif s[i] == '"':
                k = i + 1
            else:
                return self._unfollow(s, i)
            q = s.find('"', k)
            if q < 0:
                return self._hold_at(s, i)
            key = s[k:q]
            v = q + 3
            if not s.startswith('": ', q):
                if len(s) - q < 3 and '": '.startswith(s[q:]):
                    return self._hold_at(s, i)
                return self._unfollow(s, i)
            if v >= n:
                return self._hold_at(s, i)
            if key in node or _encode_string(key) != s[k - 1 : q + 1]:
                return self._unfollow(s, i)  # (a duplicate, or a key with escapes)
            c = s[v]
            if c == '"':  # a string opens: the reader reads it (escapes included)
                keys.append(key)
                frame.open_key = key
                self.version += 1
                frame.version += 1
                self._mode = _STR
                self._is_key = False
                chunks = self._chunks = []
                out.append(s[i : v + 1])
                i = self._string(s, v + 1)
                if chunks:
                    out.append(_encode_string(chunks[0] if len(chunks) == 1 else "".join(chunks))[1:-1])
                if self._mode == _STR:
                    self.wait = None
                    return
                out.append('"')
                continue
            if c == "[":
                if s.find("]", v) < 0:
                    self.pending.append(s[i:])
                    self.wait, self.quotes = _WAIT_LIST, 0
                    return
                try:
                    value, j = _scan_value(s, v)
                except (ValueError, StopIteration) as exc:
                    at = exc.value if isinstance(exc, StopIteration) else getattr(exc, "pos", -1)
                    if not (isinstance(at, int) and at >= n) and not str(exc).startswith("Unterminated string"):
                        return self._unfollow(s, i)
                    # the list is cut by the end of the text (`["]`, `["x]",`: that `]` was in a string): wait on
                    self.pending.append(s[i:])
                    self.wait, self.quotes = _WAIT_LIST, 0
                    return
                if type(value) is not list or "".join(_encode_pieces(value, 0)) != s[v:j]:
                    return self._unfollow(s, i)
            else:
                j = _TOKEN_RUN.match(s, v).end()
                if j == n:
                    self.pending.append(s[i:])
                    self.wait, self.quotes = _WAIT_TOKEN, 0
                    return
                tok = s[v:j]
                if tok.isdigit():
                    if tok[0] == "0" and len(tok) > 1:
                        return self._unfollow(s, i)
                    value = int(tok)
                elif tok in _LITERALS:
                    value = _LITERALS[tok]
                elif c == "-" and tok[1:].isdigit() and tok[1] != "0":
                    value = int(tok)
                elif c in "-0123456789" and "." in tok:
                    try:
                        value = float(tok)
                    except ValueError:
                        return self._unfollow(s, i)
                    if float.__repr__(value) != tok:
                        return self._unfollow(s, i)
                else:
                    return self._unfollow(s, i)
                if s[j] != "," and s[j] != "}":
                    return self._unfollow(s, i)
            keys.append(key)
            node[key] = value
            self.version += 1
            frame.version += 1
            self._mode = _AFTER
            out.append(s[i:j])
            i = j
        self.wait, self.quotes = _WAIT_MEMBER, 3  # (`_hold_at("", 0)`)

    def _unfollow(self, s: str, i: int) -> None:
        """Stop following; the general reader reads `s[i:]`."""
        self.followed = len(self.following.keys)
        self.following = None
        self.wait = None
        self._run(s[i:])

    # -- the reader ------------------------------------------------------------------------------

    def _run(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n:
            mode = self._mode
            if mode == _STR:
                i = self._string(text, i)
                continue
            if mode == _CSTR:
                i = self._custom_string(text, i)
                continue
            if mode == _TOKEN or mode == _BARE:
                i = self._token(text, i)
                continue
            c = text[i]
            if c in " \t\n\r":
                i += 1  # (one space is the common case: no regex call for it)
                if i < n and text[i] in " \t\n\r":
                    i = _WS_RUN.match(text, i).end()
                continue
            if mode == _AFTER:
                if not self.stack:
                    raise ValueError("extra data after the JSON value")
                top = self.stack[-1]
                if c == ",":
                    self._mode = _KEY if top.is_dict else _VALUE
                elif c == ("}" if top.is_dict else "]"):
                    self._end_container()
                else:
                    raise ValueError(f"unexpected {c!r}")
                i += 1
                continue
            if mode == _COLON:
                if c != ":":
                    raise ValueError("expected ':'")
                self._mode = _VALUE
                i += 1
                continue
            if mode == _VALUE_FIRST and c == "]" or mode == _KEY_FIRST and c == "}":
                self._end_container()
                i += 1
                continue
            if self._delims and c in self._openers:
                j = self._custom_open(text, i)
                if j < 0:
                    return  # a possible delimiter cut by the end of the text
                if j > i:
                    i = j
                    continue
            if mode == _KEY or mode == _KEY_FIRST:
                if c == '"':
                    m = _PLAIN_KEY.match(text, i)
                    if m is not None:  # the whole key, without escapes, in this text
                        self.stack[-1].pending_key = m.group(1)
                        self._mode = _COLON
                        i = m.end()
                        continue
                    self._start_string(True)
                    i += 1
                elif self._unquoted and _BARE_KEY.match(c):
                    self._mode = _BARE
                    self._chunks = []
                else:
                    raise ValueError("expected a key")
                continue
            # a value
            if c == '"':
                self._start_member()
                self._start_string(False)
                i += 1
            elif c == "{" or c == "[":
                if len(self.stack) >= MAX_NESTING:
                    raise ValueError("nested too deeply")
                node: Any = {} if c == "{" else []
                self._start_member(node)
                self.stack.append(Frame(node, c == "{"))
                self._mode = _KEY_FIRST if c == "{" else _VALUE_FIRST
                self.version += 1
                i += 1
            elif _TOKEN_RUN.match(c).end():
                self._start_member(bump=False)
                j = _TOKEN_RUN.match(text, i).end()
                if j < n:  # the whole number or literal is in this text
                    self._end_value(_token_value(text[i:j]))
                    i = j
                else:
                    self._mode = _TOKEN
                    self._chunks = []
            else:
                raise ValueError(f"unexpected {c!r}")

    def _custom_open(self, text: str, i: int) -> int:
        """Open a custom string at `i`: the index after its delimiter, `i` if none, -1 if undecided."""
        for opener, closer in self._delims:
            if text.startswith(opener, i):
                if self._mode in (_KEY, _KEY_FIRST):
                    self._is_key = True
                else:
                    self._start_member()
                    self._is_key = False
                self._mode = _CSTR
                self._chunks = []
                self._close = closer
                return i + len(opener)
        rest = text[i:]
        if any(opener.startswith(rest) for opener, _ in self._delims):
            self._carry = rest
            return -1
        return i

    def _start_string(self, is_key: bool) -> None:
        self._mode = _STR
        self._is_key = is_key
        self._chunks = []

    def _start_member(self, node: Any = MISSING, bump: bool = True) -> None:
        """A member starts (`node`: a container, inserted now; scalars are inserted when they end). A
        number or literal starting is no structural change a reader acts on (``bump=False``)."""
        stack = self.stack
        if not stack:
            if self.value is not MISSING or self.done:
                raise ValueError("extra data after the JSON value")
            if node is not MISSING:
                self.value = node
            return
        top = stack[-1]
        if top.is_dict:
            key = top.pending_key
            if key in top.node:  # (the member before is complete, so in the node)
                raise ValueError(f"duplicate key {key!r}")
            top.keys.append(key)
            top.open_key = key
            top.pending_key = None
            if node is not MISSING:
                top.node[key] = node
        else:
            top.open_key = len(top.node)
            if node is not MISSING:
                top.node.append(node)
        if bump:
            self.version += 1
            top.version += 1

    def _end_value(self, value: Any) -> None:
        """A scalar member (or the root scalar) is complete."""
        stack = self.stack
        self._mode = _AFTER
        self.version += 1
        if not stack:
            self.value = value
            self.done = True
            return
        top = stack[-1]
        if top.is_dict:
            top.node[top.open_key] = value
        else:
            top.node.append(value)
        top.open_key = None
        top.version += 1

    def _end_container(self) -> None:
        self.stack.pop()
        self._mode = _AFTER
        self.version += 1
        if self.stack:
            top = self.stack[-1]
            top.open_key = None
            top.version += 1
        else:
            self.done = True

    def _end_string(self) -> None:
        text = "".join(self._chunks)
        self._chunks = []
        if self._is_key:
            self.stack[-1].pending_key = text
            self._mode = _COLON
        else:
            self._end_value(text)

    def _string(self, text: str, i: int) -> int:
        n = len(text)
        chunks = self._chunks
        while True:
            j = _STR_RUN.match(text, i).end()
            if j > i:
                chunks.append(text[i:j])
            if j == n:
                return n
            c = text[j]
            if c == '"':
                self._end_string()
                return j + 1
            if c != "\\":
                raise ValueError("control character in a string")
            simple = _SIMPLE_ESCAPES.get(text[j + 1 : j + 2])
            if simple is not None:
                chunks.append(simple)
                i = j + 2
                continue
            m = _ESCAPE.match(text, j)
            if m is not None and m.end() == n and _HIGH_ALONE.fullmatch(m.group()):
                m = None  # a high surrogate at the end: its low half may follow
            elif m is not None and _HIGH_ALONE.fullmatch(m.group()):
                rest = text[m.end() : m.end() + 6]
                if len(rest) < 6 and _ESCAPE_PREFIX.fullmatch(rest):
                    m = None
            if m is None:
                p = _ESCAPE_PREFIX.match(text, j)
                if p.end() == n:  # an escape cut by the end of the text
                    self._carry = text[j:]
                    return n
                raise ValueError("invalid escape")
            chunks.append(json.loads('"' + m.group() + '"'))
            i = m.end()

    def _custom_string(self, text: str, i: int) -> int:
        close = self._close
        k = text.find(close, i)
        if k >= 0:
            if k > i:
                self._chunks.append(text[i:k])
            self._end_string()
            return k + len(close)
        rest = text[i:]
        for cut in range(min(len(close) - 1, len(rest)), 0, -1):
            if rest.endswith(close[:cut]):
                self._carry = rest[-cut:]
                rest = rest[:-cut]
                break
        if rest:
            self._chunks.append(rest)
        return len(text)

    def _token(self, text: str, i: int) -> int:
        pattern = _TOKEN_RUN if self._mode == _TOKEN else _BARE_KEY_REST
        j = pattern.match(text, i).end()
        if j > i:
            self._chunks.append(text[i:j])
        if j == len(text):
            return j
        token = "".join(self._chunks)
        self._chunks = []
        if self._mode == _BARE:
            self.stack[-1].pending_key = token
            self._mode = _COLON
        else:
            self._end_value(_token_value(token))
        return j


_BARE_KEY_REST = re.compile(_BARE_KEY.pattern[:-1] + "*")  # (the rest of a bare key cut by the end of a piece)


def _token_value(token: str) -> Any:
    """A number or literal (``true``, ``false``, ``null``); ValueError if it is none."""
    return int(token) if token.isdigit() and (token[0] != "0" or len(token) == 1) else json.loads(token)


_DIALECT_FIRST = re.compile(r"[ \t\n\r]*(" + _BARE_KEY.pattern + r")[ \t\n\r]*:[ \t\n\r]*")
_DIALECT_NEXT = re.compile(r"[ \t\n\r]*,[ \t\n\r]*(" + _BARE_KEY.pattern + r")[ \t\n\r]*:[ \t\n\r]*")
# what a member's start cut before its `:` looks like (the key may go on)
_DIALECT_FIRST_CUT = re.compile(r"[ \t\n\r]*(?:" + _BARE_KEY.pattern + r"[ \t\n\r]*)?")
_DIALECT_NEXT_CUT = re.compile(r"[ \t\n\r]*(?:,[ \t\n\r]*(?:" + _BARE_KEY.pattern + r"[ \t\n\r]*)?)?")
_WAIT_COMMA = frozenset(",}")  # after a member: the `,` before the next one (or the object's end)


class JsonDialectPartial(JsonPartial):
    """`JsonPartial` for the `json` parser's dialect (``unquoted_keys``, ``string_delims``: Gemma 4's
    ``{location:<|"|>Paris<|"|>,days:3}``), with `follow`: the members of an open object are written out as
    ``json.dumps`` writes them (keys quoted, custom-delimited strings encoded, ``, `` / ``: ``), whatever spaces
    the model put between them.

    What a member is stays the `json` content parser's: keys are its bare keys (`content._BARE_KEY`), a
    number or a flat list is read, once its text is complete, by its full parse (`content.parse_json`, with the
    same dialect options), the general reader (`JsonPartial`) takes over at anything else (a quoted key, a
    nested object, a list holding lists or objects, or that does not parse, a duplicate key, the object's end).
    A string value streams: text of its custom-delimited value that holds no first character of the closing
    delimiter is appended to its pieces by `feed` at once (the fragment: that text, JSON-escaped), or by the
    caller (`sink`). `hold` keeps what cannot complete a member or open its string value: after a member, text
    without ``,`` or ``}``; after its ``,``, text holding none of ``,`` ``}`` ``]`` and the last characters of
    the opening delimiters (``"`` without custom delimiters); within a list, text without ``]``; within a
    number or literal, text without ``,`` or ``}``.
    """

    __slots__ = ("_wake", "_dialect", "_opener_chars", "sink", "sink_stop")

    def __init__(self, unquoted_keys: bool = False, string_delims: tuple = ()):
        super().__init__(unquoted_keys, string_delims)
        # what a member whose value has not started waits for: a number's or literal's end, a list's, a string
        # delimiter's last character (a `"` too without custom delimiters)
        self._wake = frozenset(",}]" + ("".join(o[-1] for o, _c in self._delims if o) or '"'))
        self._dialect = {"unquoted_keys": unquoted_keys, "string_delims": self._delims}
        self._opener_chars = frozenset(self._openers)
        #: While `following`, in its open custom-delimited string value with nothing held back: that string's
        #: pieces, to which text holding neither `sink_stop` (the first character of the closing delimiter) nor
        #: ``"``, ``\\``, or a character that is not printable may be appended instead of fed (that text is then
        #: its own fragment); else None. Set by each `feed`.
        self.sink: list[str] | None = None
        self.sink_stop = ""

    def feed(self, text: str) -> bool | str | None:  # type: ignore[override]  # (as JsonPartial.feed's: str too)
        """`JsonPartial.feed`; while `following`, text that stays inside the open custom-delimited string value
        goes straight into its pieces, and its JSON-escaped text is returned."""
        if self.following is not None and text:
            mode = self._mode
            if mode == _CSTR and not self._carry:
                stop = self._close[0]
                if stop not in text:
                    chunks = self._chunks
                    chunks.append(text)
                    if len(chunks) >= 4096:  # (memory: a long string arrives in many small pieces)
                        chunks[:] = ["".join(chunks)]
                    self.sink, self.sink_stop = chunks, stop
                    return _encode_string(text)[1:-1]
            if mode != _STR:
                res = self._follow_feed(text)
                self._sink()
                return res
        self.sink = None
        return JsonPartial.feed(self, text)

    def _sink(self) -> None:
        """Set `sink` after a `feed` or `follow`."""
        if self._mode == _CSTR and not self._carry and self.following is not None:
            self.sink, self.sink_stop = self._chunks, self._close[0]
        else:
            self.sink = None

    def follow(self, frame: Frame) -> bool | None:
        """`JsonPartial.follow` for the dialect: also from inside a custom-delimited string value. None (never)
        without ``unquoted_keys`` (the members it reads have bare keys)."""
        if not self._unquoted:
            return None
        if (
            self.broken
            or not self.stack
            or self.stack[-1] is not frame
            or not frame.is_dict
            or frame.pending_key is not None
        ):
            return False
        mode = self._mode
        if mode == _STR or mode == _CSTR:
            if self._is_key or frame.open_key is None:
                return False
            self.wait = None
            self.following = frame
            self._sink()
            return True
        elif self._carry or not (mode == _AFTER or mode == _KEY_FIRST and not frame.keys):
            return False
        else:
            self.wait, self.quotes = (self._wake if mode == _KEY_FIRST else _WAIT_COMMA), 0
        self.following = frame
        return True

    def _follow_feed(self, text: str) -> str:
        """`feed` while `following`: the text the followed object's members add, as json.dumps writes it."""
        out: list[str] = []
        try:
            if self._carry:
                text = self._carry + text
                self._carry = ""
            i = 0
            mode = self._mode
            if mode == _CSTR or mode == _STR:  # its open string value
                chunks = self._chunks
                start = len(chunks)  # (the pieces before were written out)
                i = self._custom_string(text, 0) if mode == _CSTR else self._string(text, 0)
                if len(chunks) > start:
                    new = chunks[start] if len(chunks) == start + 1 else "".join(chunks[start:])
                    out.append(_encode_string(new)[1:-1])
                if self._mode == mode:
                    return out[0] if out else ""
                out.append('"')
            pending = self.pending
            if pending:
                pending.append(text[i:] if i else text)
                text = "".join(pending)
                pending.clear()
                i = 0
            self._follow_dialect(text, i, out)
        except (ValueError, RecursionError):
            self.broken = True
            self._mode = _DEAD
            self.following = None
            self.wait = None
            return ""
        return out[0] if len(out) == 1 else "".join(out)

    def _follow_dialect(self, s: str, i: int, out: list[str]) -> None:
        """Read whole members of the followed object from `s[i:]` (see the class docs); hold back a partial
        one in `pending`; hand anything else to the general reader."""
        frame: Frame = self.following  # type: ignore[assignment]  # (following: not None)
        node, keys = frame.node, frame.keys
        n = len(s)
        while True:
            # `, key: ` (`key: ` first), one regex call; its end is where the value starts
            m = (_DIALECT_NEXT if keys else _DIALECT_FIRST).match(s, i)
            if m is None:
                if (_DIALECT_NEXT_CUT if keys else _DIALECT_FIRST_CUT).fullmatch(s, i):
                    # the text so far starts a member: it waits for the `,` before it, then for its value
                    wait = self._wake if not keys or s.find(",", i) >= 0 else _WAIT_COMMA
                    break
                return self._unfollow(s, i)  # (the object's end, a quoted key, not the dialect: the general reader)
            j = m.end()
            if j == n:
                wait = self._wake
                break
            key = m.group(1)
            if key in node:
                return self._unfollow(s, i)  # (a duplicate: the general reader says how)
            sep = ", " if keys else ""
            c = s[j]
            if c in self._openers or c == '"':  # a string value opens: it streams
                close = None
                if c == '"':
                    j += 1
                else:
                    for opener, closer in self._delims:
                        if s.startswith(opener, j):
                            close, j = closer, j + len(opener)
                            break
                    else:
                        if any(opener.startswith(s[j:]) for opener, _c in self._delims):
                            wait = self._wake  # (a delimiter cut by the end of the text)
                            break
                        return self._unfollow(s, i)
                keys.append(key)
                frame.open_key = key
                self.version += 1
                frame.version += 1
                self._is_key = False
                chunks = self._chunks = []
                out.append(sep + _encode_string(key) + ': "')
                if close is None:
                    self._mode = _STR
                    i = self._string(s, j)
                else:
                    self._mode, self._close = _CSTR, close
                    i = self._custom_string(s, j)
                if chunks:
                    out.append(_encode_string(chunks[0] if len(chunks) == 1 else "".join(chunks))[1:-1])
                if self._mode == _CSTR or self._mode == _STR:
                    self.wait = None
                    return
                out.append('"')
                continue
            if c == "[":
                t = s.find("]", j)
                if t < 0:
                    wait = _WAIT_LIST
                    break
                t += 1
                try:
                    if self._openers and not self._opener_chars.isdisjoint(s[j:t]):
                        value = parse_json(s[j:t], self._dialect)
                    else:  # (no custom string: the dialect's list is JSON's, and the C scanner reads it)
                        value, e = _scan_value(s, j)
                        if e != t:
                            raise ValueError
                except (ValueError, StopIteration):  # (a `]` in one of its strings, a cut string: the general reader)
                    return self._unfollow(s, i)
                for v in value:
                    if type(v) is list or type(v) is dict:
                        return self._unfollow(s, i)  # (only flat lists here)
                written = "".join(_encode_pieces(value, 0))
            else:
                t = _TOKEN_RUN.match(s, j).end()  # type: ignore[union-attr]  # (it matches the empty text)
                if t == n:
                    wait = _WAIT_TOKEN  # (a number or literal may go on)
                    break
                written = s[j:t]
                if written.isdigit() and (c != "0" or t == j + 1):
                    value = int(written)
                elif written in _LITERALS:
                    value = _LITERALS[written]
                else:
                    if t == j:
                        return self._unfollow(s, i)  # (a nested object, or not a value)
                    try:
                        value = parse_json(written, self._dialect)
                    except ValueError:
                        return self._unfollow(s, i)
                    written = _encode_value(value)
            keys.append(key)
            node[key] = value
            self.version += 1
            frame.version += 1
            self._mode = _AFTER
            out.append(sep + _encode_string(key) + ": " + written)
            i = t
        if i < n:  # hold the start of the member back
            self.pending.append(s[i:] if i else s)
        self.wait = wait


# --------------------------------------------------------------------------- xml-inline, python-call-list


class _OpenRoot:
    """Shared by the formats whose root (a dict of parameters, a list of calls) stays open to the end."""

    __slots__ = ("value", "broken", "version", "stack", "_frame", "_final")

    def __init__(self, root: Any, members_final: bool):
        self.value = root
        self.broken = False
        self.version = 0
        self._frame = Frame(root, isinstance(root, dict))
        self.stack = [self._frame]  # as JsonPartial's: the open containers (here the root, to the end)
        self._final = members_final

    def complete(self, path: tuple) -> bool:
        return bool(path) and self._final

    def frame(self, node: Any) -> Frame | None:
        return self._frame if node is self.value else None

    def open_string(self, frame: Frame) -> list[str] | None:
        return None

    def snapshot(self) -> Any:
        return copy.deepcopy(self.value)


def _last_literal(source: str) -> str | None:
    """The character every match of `source` ends with, when the regex visibly ends with a literal."""
    if len(source) < 2 or "|" in source or source[-1] in _REGEX_META or source[-2] in _REGEX_META:
        return None
    return source[-1]


_REGEX_META = set("\\.^$*+?{}[]|()")


def _literal_suffix(pattern: Any) -> str | None:
    """The text every match of a compiled `pattern` ends with (e.g. ``</parameter>``), when it visibly ends with
    literal characters: at least the one of `_last_literal`; just that one when case or spacing are loose."""
    source = pattern.pattern
    last = _last_literal(source)
    if last is None or pattern.flags & (re.IGNORECASE | re.VERBOSE):
        return None if last is None or pattern.flags & re.IGNORECASE and last.lower() != last.upper() else last
    i = len(source) - 1
    while i > 0 and source[i - 1] not in _REGEX_META:
        i -= 1
    if i > 0 and source[i - 1] == "\\":
        i += 1  # an escape (\n, \d ...) is no literal
    return source[i:]


def _escaped(source: str, i: int) -> bool:
    n = 0
    while i > 0 and source[i - 1] == "\\":
        n += 1
        i -= 1
    return n % 2 == 1


def _match_ends(pattern: Any) -> tuple[str, ...]:
    """The texts a match of `pattern` ends with or just before: ``("</parameter>",)`` for a pattern ending in
    that literal; for one ending in a group of alternatives that are literals, lookaheads of literals or the
    end of the text, ``(?:</parameter>|(?=<parameter=)|\\Z)``, each literal (``("</parameter>", "<parameter=")``;
    a match ending with the end of the text waits for one of them anyway). ``()``: not known, search on every
    piece."""
    single = _literal_suffix(pattern)
    if single:
        return (single,)
    source = pattern.pattern
    if pattern.flags & (re.IGNORECASE | re.VERBOSE) or not source.endswith(")") or _escaped(source, len(source) - 1):
        return ()
    depth, start = 0, -1
    for i in range(len(source) - 1, -1, -1):
        c = source[i]
        if c in "()" and not _escaped(source, i):
            depth += 1 if c == ")" else -1
            if depth == 0:
                start = i
                break
    if start < 0 or not source.startswith("(?:", start):
        return ()
    ends = []
    for alt in source[start + 3 : -1].split("|"):
        if alt in ("\\Z", "\\z", "$"):
            continue
        lit = alt[3:-1] if alt.startswith("(?=") and alt.endswith(")") else alt
        if not lit or any(c in _REGEX_META for c in lit):
            return ()
        ends.append(lit)
    return tuple(ends)


class XmlInlinePartial(_OpenRoot):
    """``xml-inline``: each parameter once its match is complete and can no longer grow.

    Text since the last complete parameter is kept as pieces and searched again only when text that can end
    a match arrives: the pattern's literal end (``</parameter>``: the ``>`` of ``<parameter=city>`` is not
    one), or one of the literal alternatives its end is made of (see `_match_ends`).
    With ``merge_duplicates``, members stay open until the region closes.
    """

    __slots__ = ("_args", "_pattern", "_ends", "_pieces", "_pending", "_merged")

    def __init__(self, args: Mapping[str, Any]):
        super().__init__({}, not args.get("merge_duplicates", False))
        self._args = args
        self._pattern = args["tag_pattern"]
        self._ends = _match_ends(self._pattern)
        self._pieces: list[str] = []
        self._pending = False
        self._merged: list[str] = []  # merge_duplicates: the text of every complete parameter

    def _arrived(self, text: str) -> bool:
        """Whether one of the texts a match ends with (or before) ends in `text`."""
        pieces = self._pieces  # (`text` is the last one)
        for end in self._ends:
            if end[-1] not in text:
                continue
            if len(end) == 1:
                return True
            k, start = len(text) + len(end) - 1, len(pieces) - 1
            have = len(text)
            while have < k and start > 0:
                start -= 1
                have += len(pieces[start])
            window = text if start == len(pieces) - 1 else "".join(pieces[start:])
            if end in window[-k:]:
                return True
        return False

    def feed(self, text: str) -> None:
        pieces = self._pieces
        pieces.append(text)
        ends = self._ends
        if not self._pending and ends and not self._arrived(text):
            return
        tail = "".join(pieces)
        self._pieces = [tail]
        self._pending = False
        pattern = self._pattern
        pos = 0
        while True:
            if ends and all(tail.find(end, pos) < 0 for end in ends):  # no match can end in what is left
                break
            m = pattern.search(tail, pos, timeout=DEFAULT_REGEX_TIMEOUT)
            if m is None or m.end() == m.start():
                break
            if m.end() >= len(tail):  # at the edge of what arrived
                if not ends:
                    self._pending = True  # an end not known: the next character decides
                    break
                if not tail.endswith(ends):
                    break  # it ended with the end of the text: the real end comes later (and is searched for)
            # more text must not change this match: probe two continuations (an unrelated character, and
            # the match's own text, which carries its closing tag: a greedy pattern would grow)
            stable = True
            for probe in ("\x00", tail[m.start() : m.end()]):
                p = pattern.search(tail + probe, pos, timeout=DEFAULT_REGEX_TIMEOUT)
                if p is None or p.span() != m.span() or p.groupdict() != m.groupdict():
                    stable = False
                    break
            if not stable:
                self._pending = True
                break
            pos = m.end()
        if pos:
            self._take(tail[:pos])
            self._pieces = [tail[pos:]]

    def _take(self, text: str) -> None:
        params = get_content_parser("xml-inline").parse(text, self._args)
        root = self.value
        if self._final:
            keys = self._frame.keys
            for key, value in params.items():
                if key not in root:
                    keys.append(key)
                root[key] = value
        else:  # merge_duplicates: the whole text so far decides (members are not final anyway)
            self._merged.append(text)
            root.clear()
            root.update(get_content_parser("xml-inline").parse("".join(self._merged), self._args))
            self._frame.keys[:] = list(root)
        self.version += 1
        self._frame.version += 1


_SEEK, _HEAD, _IN_VALUE = range(3)


class XmlTagsPartial(_OpenRoot):
    """``xml-inline`` with a `tag_pattern` of the form the content parser describes as a `content.TagShape`
    (``<parameter=(?P<key>[^>\\s]+)>\\n?(?P<value>.*?)\\n?(?:</parameter>|(?=<parameter=)|\\Z)``, the
    usual tags): it reads the tags as they come and keeps its place between pieces (looking for a tag, in a
    tag's head, in a value). A piece inside a value that holds none of the characters its end can start with
    costs a set test and an append; only the short text that may be a cut end (``\\n</para``) is held back.

    When a value ends with the end of the text too (``\\Z``: a match exists as soon as a head does) and values
    are kept as text (no ``value_parser``, ``value_parser_group``), each value streams as it is written: its
    key is in `Frame.keys` (the frame's ``open_key``) and `open_string` gives its pieces, as for `JsonPartial`;
    `feed` returns True when the piece went whole into it and needs no JSON escaping (the structure did not
    change). Such a reader can also `follow` (see the module docs): write the arguments object out as
    json.dumps writes it, each value as a JSON string. A value of a key seen before is not streamed (the later
    value replaces it at its end, as in the parsed result; following stops there). Otherwise a parameter is
    added once its end arrived, read by the content parser from its own text.
    """

    __slots__ = (
        "_args", "_head", "_head_fast", "_head_last", "_head_nl", "_opener", "_cut_opener", "_end", "_ends",
        "_looks", "_stops", "_sink", "_tail", "_hold", "_plain", "_streams", "_mode", "_buf", "_edge", "_chunks",
        "_key", "_stream", "_sinks", "_head_text", "_out", "_wait_seek", "_wait_head", "sink_stop", "following",
        "followed", "wait", "quotes", "pending",
    )  # fmt: skip

    #: (`JsonDialectPartial.sink`: a custom-delimited string's pieces; its values stream through `string_sink`)
    sink = None

    def __init__(self, args: Mapping[str, Any]):
        super().__init__({}, True)
        shape = args["_shape"]
        self._args = args
        self._head = shape.head
        self._head_fast = shape.head_fast
        self._head_last = shape.head_last
        self._head_nl = shape.head_nl
        self._opener = shape.opener
        self._cut_opener = shape.cut_opener
        self._end = shape.value_end
        self._ends, self._looks = shape.ends, shape.looks
        self._stops = frozenset({t[0] for t in shape.ends + shape.looks} | ({"\n"} if shape.newline else set()))
        self._tail = shape.cut_end
        self._hold = max(len(t) for t in shape.ends + shape.looks) + 1  # (at most) the text held back
        self._plain = not args.get("value_parser") and args.get("_select") is None
        self._streams = shape.at_end and self._plain
        printable = [c for c in self._stops if c.isprintable()]
        #: the one character (besides ``"``, ``\\`` and control characters) that text a caller appends to the
        #: open value's pieces itself, after `feed` returned True, must not hold (``<``); None: `feed` never
        #: returns True (the value's end may start with several)
        self.sink_stop: str | None = printable[0] if len(printable) == 1 else None
        self._sink = self.sink_stop is not None
        self._mode = _SEEK
        self._buf: list[str] = []  # text that must be read again with what follows
        self._edge = False  # in a head: it matched up to the end of the text (one more character decides)
        self._chunks: list[str] = []  # the open value's pieces
        self._key: Any = None
        self._stream = False  # the open value streams (`open_string`)
        self._sinks = False  # ... and `feed` may return True
        self._head_text = ""
        self._out: list[str] | None = None  # while following: the fragments the text being read writes
        self._wait_seek = frozenset(shape.opener[0])
        self._wait_head = frozenset(shape.head_last) if shape.head_last is not None else None
        self.following: Frame | None = None  # (see `follow`)
        self.followed = 0
        self.wait: frozenset | None = None  # while following: text without these characters goes to `pending`
        self.quotes = 0  # (`JsonPartial.hold`'s quote count: none here)
        self.pending: list[str] = []  # while following: text kept by the caller, read with the next `feed`

    def feed(self, text: str) -> Any:
        """Read more body text. Not following: True as `JsonPartial.feed`, else None. Following: the JSON
        fragment the text writes (a ``str``), or True (the text itself, which went whole into the open
        value)."""
        mode = self._mode
        buf = self._buf
        following = self.following
        if mode == _IN_VALUE and text:
            if not buf:
                if self._stops.isdisjoint(text):
                    self._chunks.append(text)  # more of the open value (fast path)
                    if following is None:
                        sinks = self._sinks and '"' not in text and "\\" not in text and text.isprintable()
                        return sinks or None
                    if '"' not in text and "\\" not in text and text.isprintable():
                        return True
                    return _encode_string(text)[1:-1]
            else:
                held = buf[0] + text
                if self._tail.fullmatch(held):  # still (maybe) the start of the value's end: keep it
                    buf[0] = held
                    return None if following is None else ""
        if self.broken or not text:
            return None if following is None else ""
        if following is not None and self.pending:
            self.pending.append(text)
            text = "".join(self.pending)
            self.pending = []
        if buf:
            if mode == _HEAD:
                if not self._edge and self._head_last is not None and self._head_last not in text:
                    buf.append(text)  # (a head cut by the end of the text cannot complete without it)
                    return None if following is None else ""
            elif mode == _SEEK:
                held = buf[0] + text
                if self._opener.startswith(held):  # (a cut opener)
                    buf[0] = held
                    return None if following is None else ""
            buf.append(text)
            text = "".join(buf)
            self._buf = []
        written = self._out = [] if following is not None else None
        try:
            self._read(text)
        except (ValueError, RegexTimeoutError):
            self.broken = True
            self._stop_following()
        if written is None:
            return None
        self._out = None
        if self.following is not None:
            self._set_wait()
        return "".join(written)

    def follow(self, frame: Frame) -> bool | None:
        """Write the arguments object out from now on (see the module docs): True; False: not from here (in a
        value that does not stream); None: never (values that are not streamed text)."""
        if not self._streams:
            return None
        if self.broken or frame is not self._frame or self._mode == _IN_VALUE and not self._stream:
            return False
        self.following = frame
        self._set_wait()
        return True

    def hold(self, text: str) -> bool:
        """While following: keep `text` (in `pending`, read with the next text fed) if it holds none of the
        characters it must hold to be read now (`wait`); True if it was kept."""
        wait = self.wait
        if wait is None or not wait.isdisjoint(text):
            return False
        self.pending.append(text)
        return True

    def string_sink(self) -> list[str] | None:
        """While following: the open value's pieces, when text without ``"``, ``\\``, control characters and
        `sink_stop` may be appended to them instead of fed (nothing held back); else None."""
        if self.following is None or self._mode != _IN_VALUE or self._buf or not self._stream or not self._sink:
            return None
        return self._chunks

    def _set_wait(self) -> None:
        """While following: what a piece must hold to be read now (the rest waits in `pending`)."""
        mode = self._mode
        if mode == _IN_VALUE:
            self.wait = None
        elif mode == _SEEK and not self._buf:
            self.wait = self._wait_seek  # (text before the next tag is not read)
        elif mode == _HEAD and not self._edge and self._head_last is not None:
            self.wait = self._wait_head
        else:
            self.wait = None

    def _stop_following(self) -> None:
        if self.following is not None:
            self.following = None
            self.wait = None
            self.followed = len(self._frame.keys) - (1 if self._stream else 0)
            self._out = None

    def _read(self, s: str) -> None:
        i, n = 0, len(s)
        while True:
            mode = self._mode
            if mode == _IN_VALUE:
                m = self._end.search(s, i)
                if m is None:  # the value goes on: keep what may be the start of its end
                    m = self._tail.search(s, max(i, n - self._hold))
                    cut = m.start() if m is not None else n
                    if cut > i:
                        self._chunks.append(s[i:cut])
                        if self._out is not None:
                            self._out.append(_encode_string(s[i:cut])[1:-1])
                    if cut < n:
                        self._buf = [s[cut:]]
                    return
                j = m.start()
                if j > i:
                    self._chunks.append(s[i:j])
                    if self._out is not None:
                        self._out.append(_encode_string(s[i:j])[1:-1])
                i = m.end()
                self._end_value(s, j, i)
                continue
            if mode == _SEEK:
                k = s.find(self._opener, i)
                if k < 0:  # keep a cut opener
                    m = self._cut_opener.search(s, max(i, n - len(self._opener)))
                    if m is not None:
                        self._buf = [m.group()]
                    return
                i = k
                self._mode = _HEAD
            last = self._head_last
            if last is not None and s.find(last, i + len(self._opener)) < 0:
                self._edge = False  # it cannot have ended: wait for its last fixed character
                self._buf = [s[i:]]
                return
            fast = self._head_fast
            m = fast.match(s, i) if fast is not None else None
            if m is None:  # (the standard library's match has no partial matches)
                m = self._head.match(s, i, partial=True, timeout=DEFAULT_REGEX_TIMEOUT)
                if m is None:  # no tag starts here: the next one may
                    self._mode = _SEEK
                    i += 1
                    continue
                if m.partial:  # wait for more of the head
                    self._edge = False
                    self._buf = [s[i:]]
                    return
            end = m.end()
            if end >= n and (last is None or self._head_nl and s[n - 1] != "\n"):
                self._edge = True  # wait for the character after it (``\n?``, or a head of unknown end)
                self._buf = [s[i:]]
                return
            self._edge = False
            self._start_value(m)
            i = end

    def _start_value(self, m: Any) -> None:
        key = m.group("key")
        if key is None:
            raise ValueError("xml-inline: a tag_pattern match has no 'key'")
        self._mode = _IN_VALUE
        self._key = key
        self._chunks = []
        if not self._plain:
            self._head_text = m.group()
        elif self._streams and key not in self.value:
            self._stream = True
            self._sinks = self._sink
            frame = self._frame
            if self._out is not None:  # following: the member's key and the opening quote of its value
                self._out.append((", " if frame.keys else "") + _encode_string(key) + ': "')
            frame.keys.append(key)
            frame.open_key = key
            self.version += 1
            frame.version += 1
        else:
            self._stop_following()  # (a repeated key: the general path takes it)

    def _end_value(self, s: str, at: int, end: int) -> None:
        """The open value ended at `at`; what ends it (the optional newline, an end text) ends at `end`."""
        self._mode = _SEEK
        root, frame = self.value, self._frame
        value = "".join(self._chunks)
        self._chunks = []
        if self._plain:
            if self._stream:
                if self._out is not None:
                    self._out.append('"')
            elif self._key not in root:
                frame.keys.append(self._key)
            root[self._key] = value
        else:  # the content parser reads the tag from its own text (value parsers), with what ends it
            tail = s[at:end]
            if not tail.endswith(self._ends):
                tail += next((t for t in self._looks if s.startswith(t, end)), "")
            params = get_content_parser("xml-inline").parse(self._head_text + value + tail, self._args)
            for key, v in params.items():
                if key not in root:
                    frame.keys.append(key)
                root[key] = v
        frame.open_key = None
        self._stream = self._sinks = False
        self.version += 1
        frame.version += 1

    def complete(self, path: tuple) -> bool:
        return bool(path) and not (self._stream and path[0] == self._key)

    def open_string(self, frame: Frame) -> list[str] | None:
        return self._chunks if self._stream and frame is self._frame else None

    def snapshot(self) -> Any:
        value = copy.deepcopy(self.value)
        if self._stream:
            value[self._key] = "".join(self._chunks)
        return value


def _xml_inline(args: Mapping[str, Any]) -> Any:
    """The partial reader of an ``xml-inline`` field: by tags (`XmlTagsPartial`) when the content parser knows
    the shape of its `tag_pattern`, else by searches of the pattern (`XmlInlinePartial`)."""
    if args.get("_shape") is not None and not args.get("merge_duplicates", False):
        return XmlTagsPartial(args)
    return XmlInlinePartial(args)


_CALL_SEP = re.compile(r"\s*,")


class CallListPartial(_OpenRoot):
    """``python-call-list``: each call once its ``)`` is there and the call parses on its own."""

    __slots__ = ("_pieces", "_started", "_need_comma", "_closed")

    def __init__(self) -> None:
        super().__init__([], True)
        self._pieces: list[str] = []
        self._started = False  # the opening '[' was seen
        self._need_comma = False
        self._closed = False

    def feed(self, text: str) -> None:
        if self.broken or self._closed:
            return
        if not self._started:
            self._pieces.append(text)
            head = "".join(self._pieces).lstrip()
            if not head:
                self._pieces = []
                return
            if head[0] != "[":
                self.broken = True
                return
            self._started = True
            self._pieces = [head[1:]]
            text = head[1:]
        else:
            self._pieces.append(text)
        if ")" not in text:
            return
        tail = "".join(self._pieces)
        parse = get_content_parser("python-call-list").parse
        start = 0
        i = tail.find(")")
        while i >= 0:
            seg = tail[start : i + 1]
            if self._need_comma:
                m = _CALL_SEP.match(seg)
                if m is None:
                    if seg.strip():
                        self.broken = True
                        return
                    i = tail.find(")", i + 1)
                    continue
                seg = seg[m.end() :]
            try:
                calls = parse("[" + seg + "]", {})
            except ValueError:
                calls = None
            if calls:
                self.value.extend(calls)
                self.version += 1
                self._frame.version += 1
                self._need_comma = True
                start = i + 1
            i = tail.find(")", i + 1)
        self._pieces = [tail[start:]]


_FACTORIES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "json": lambda args: (
        JsonDialectPartial if args.get("unquoted_keys") or args.get("string_delims") else JsonPartial
    )(bool(args.get("unquoted_keys")), tuple(args.get("string_delims") or ())),
    "xml-inline": _xml_inline,
    "python-call-list": lambda args: CallListPartial(),
}


def register_partial_parser(content: str, factory: Callable[[Mapping[str, Any]], Any]) -> None:
    """Let a content format (e.g. one added with `register_content_parser`) stream tool-call arguments.

    ``factory(compiled_content_args)`` returns a new object with this module's interface (``feed``,
    ``value``, ``complete``, ``frame``, ``open_string``, ``version``, ``broken``, ``snapshot``).
    """
    _FACTORIES[content] = factory


def has_partial_parser(content: str) -> bool:
    """Whether `partial_parser` knows the content format."""
    return content in _FACTORIES


def partial_parser(content: str, args: Mapping[str, Any] | None = None) -> Any:
    """A new partial parser for a content format (``json``, ``xml-inline``, ``python-call-list``), or None.

    ``args``: the field's compiled ``content_args`` (`ContentParser.compile_args`).
    """
    factory = _FACTORIES.get(content)
    return None if factory is None else factory(args or {})
