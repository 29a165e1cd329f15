"""``json``: `JsonPartial`, the incremental reader of a JSON body, with `follow` (see the package docs)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from hf_response_templates.content import MAX_NESTING
from hf_response_templates.content.json_values import _BARE_KEY
from hf_response_templates.partial.base import MISSING, Frame

_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # json.dumps of a str
_BARE_KEY_REST = re.compile(_BARE_KEY.pattern[:-1] + "*")  # (the rest of a bare key cut by the end of a piece)


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
# a key and a string without escapes, an integer or a literal followed by what ends it, or a list of such
# strings, integers and literals (json.dumps writes each of them as it is written here)
_SCALAR = r'(?:0|-?[1-9][0-9]*|true|false|null|"[^"\\\x00-\x1f]*")'
_MEMBER = (
    r'"([^"\\\x00-\x1f]*)": (?:(0|-?[1-9][0-9]*)(?=[,}])|(true|false|null)(?=[,}])|"([^"\\\x00-\x1f]*)"'
    rf"|(\[(?:{_SCALAR}(?:, {_SCALAR})*)?\])"
    r'|"([^"\\\x00-\x1f]*)\Z)'  # (a string without escapes so far, open at the end of the text)
)
_FIRST_MEMBER = re.compile(_MEMBER)
_NEXT_MEMBER = re.compile(", " + _MEMBER)
# The start of the next member at the end of the text, cut before its value (`,`, `, "ke`, `, "key": `): what
# `_follow_members` holds back, waiting for the quotes still to come (3 less those the groups saw)
_CUT_MEMBER = re.compile(r',(?: (?:(")[^"]*(?:(")(?::(?: )?)?)?)?)?\Z')
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
            mode = self._mode
            if mode == _STR or mode == _CSTR:  # its open string value (custom-delimited: the dialect's)
                chunks = self._chunks
                start = len(chunks)  # (the pieces before were written out, by `feed` or by the caller)
                i = self._string(text, 0) if mode == _STR else self._custom_string(text, 0)
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
            self._follow_members(text, i, out)  # (the dialect's own reader of members: `JsonDialectPartial`)
        except (ValueError, RecursionError):
            return self._break()
        return out[0] if len(out) == 1 else "".join(out)

    def _follow_held(self, text: str) -> str:
        """`_follow_feed` of text that may complete the member held back (`wait` set: between members, nothing
        cut), without its steps for a string value or a cut escape: the held text and `text`, read as members."""
        pending = self.pending
        if pending:
            pending.append(text)
            text = "".join(pending)
            pending.clear()
        out: list[str] = []
        try:
            self._follow_members(text, 0, out)
        except (ValueError, RecursionError):
            return self._break()
        return out[0] if len(out) == 1 else "".join(out)

    def _break(self) -> str:
        """The body broke while following: "", as without `follow` nothing of a text that breaks it is sent."""
        self.broken = True
        self._mode = _DEAD
        self.following = None
        self.wait = None
        return ""

    def end_string(self, text: str, q: int) -> str:
        """`feed` (its result, and all it does), while `following` and in the open string value with nothing held
        back (`string_sink`), of text whose first character that a JSON string cannot hold as it is, at `q`, is
        the ``"`` that ends that string: in one call, the string ends and the members after it are read."""
        out = [text[: q + 1]]  # (the string's last characters need no escaping)
        chunks = self._chunks
        if q:
            chunks.append(text[:q])
        try:
            frame: Frame = self.following  # type: ignore[assignment]  # (`_end_string`, inlined: a value of it)
            frame.node[frame.open_key] = chunks[0] if len(chunks) == 1 else "".join(chunks)
            self._chunks = []
            self._mode = _AFTER
            self.version += 1
            frame.open_key = None
            frame.version += 1
            q += 1
            if q == len(text):  # (`_follow_members` of nothing)
                self.wait, self.quotes = _WAIT_MEMBER, 3
                return out[0]
            t = _CUT_MEMBER.match(text, q)
            if t is not None:  # the next member cut before its value, as `_follow_members` holds it (in one match)
                self.pending.append(text[q:])
                self.wait = _WAIT_MEMBER
                g = t.lastindex
                self.quotes = 3 if g is None else 3 - g
                return out[0]
            self._follow_members(text, q, out)
        except (ValueError, RecursionError):  # (as `_follow_feed`)
            return self._break()
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
                key, num, lit, text, items, opened = m.groups()
                if key in node:
                    return self._unfollow(s, i)  # (a duplicate)
                keys.append(key)
                if opened is not None:  # a string opens, cut by the end of the text (as below, in one step)
                    frame.open_key = key
                    self.version += 1
                    frame.version += 1  # type: ignore[union-attr]
                    self._mode = _STR
                    self._is_key = False
                    self._chunks = [opened] if opened else []
                    out.append(s[i:] if i else s)  # (its text needs no escaping: as json.dumps writes it)
                    self.wait = None
                    return None
                if text is not None:  # a string: it opened and ended (two changes, as below)
                    node[key] = text
                    self.version += 2
                    frame.version += 2  # type: ignore[union-attr]
                else:
                    if items is not None:  # (a list: read by the C scanner, as below)
                        node[key] = _scan_value(s, m.start(5))[0]
                    else:
                        node[key] = int(num) if num is not None else _LITERALS[lit]
                    self.version += 1
                    frame.version += 1  # type: ignore[union-attr]
                self._mode = _AFTER
                j = m.end()
                out.append(s[i:j])
                i = j
                if j < n:
                    t = _CUT_MEMBER.match(s, j)
                    if t is not None:
                        # the next member, cut before its value (the common end of a piece that ends a member):
                        # held as the steps below hold it (`_hold_at(s, j)`), in one match
                        self.pending.append(s[j:])
                        self.wait = _WAIT_MEMBER
                        g = t.lastindex  # (None: no quote yet; 1: the key's opening one; 2: its closing one too)
                        self.quotes = 3 if g is None else 3 - g
                        return None
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
            if q < 0:  # (`_hold_at(s, i)`, inlined for the common end of a piece: a key cut after its quote)
                self.pending.append(s[i:] if i else s)
                self.wait, self.quotes = _WAIT_MEMBER, 2
                return None
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




def _token_value(token: str) -> Any:
    """A number or literal (``true``, ``false``, ``null``); ValueError if it is none."""
    return int(token) if token.isdigit() and (token[0] != "0" or len(token) == 1) else json.loads(token)
