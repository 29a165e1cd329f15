"""The ``json`` parser's dialect (``unquoted_keys``, ``string_delims``: Gemma 4): `JsonDialectPartial`."""

from __future__ import annotations

import re
from typing import Any

from hf_response_templates.content import parse_json
from hf_response_templates.content.json_values import _BARE_KEY
from hf_response_templates.partial.base import Frame
from hf_response_templates.partial.json_reader import (
    _AFTER,
    _CSTR,
    _DEAD,
    _KEY_FIRST,
    _LITERALS,
    _STR,
    _TOKEN_RUN,
    _WAIT_LIST,
    _WAIT_TOKEN,
    JsonPartial,
    _encode_pieces,
    _encode_string,
    _encode_value,
    _scan_value,
)

_WS = r"[ \t\n\r]*"
_KEY = _WS + "(" + _BARE_KEY.pattern + ")" + _WS + ":" + _WS  # `key: ` (its end: where the value starts)
# a value the member regexes read whole, as json.dumps writes it (so that its text is what is written): an
# integer, a literal, a list of integers written `[1, 2, 3]`, each followed by what ends it
_INT = r"0|-?[1-9][0-9]*"
_WHOLE = rf"(?:({_INT})|(true|false|null)|(\[(?:(?:{_INT})(?:, (?:{_INT}))*)?\]))(?=[ \t\n\r]*[,}}])"
# what a member's start cut before its `:` looks like (the key may go on); group 1: the `,` before it
_DIALECT_FIRST_CUT = re.compile(_WS + "(?:" + _BARE_KEY.pattern + _WS + ")?")
_DIALECT_NEXT_CUT = re.compile(_WS + "(?:(,)" + _WS + "(?:" + _BARE_KEY.pattern + _WS + ")?)?")
_MEMBERS: dict[tuple, tuple[re.Pattern, re.Pattern, dict]] = {}
# text held between two members, completed: `, key: ` and a value json.dumps writes as it is (an integer or a
# literal followed by what ends it, a list of integers), then the start of the next member cut before its value
# (as `_DIALECT_NEXT_CUT`), and nothing else: what `_follow_members` reads in two regex calls and many steps
_HELD_MEMBER = re.compile(
    _WS + "," + _WS + "(" + _BARE_KEY.pattern + ")" + _WS + ":" + _WS
    + rf"(?:({_INT})(?=[ \t\n\r]*[,}}])|(true|false|null)(?=[ \t\n\r]*[,}}])|(\[(?:(?:{_INT})(?:, (?:{_INT}))*)?\]))"
    + "(" + _WS + "(?:(,)" + _WS + "(?:" + _BARE_KEY.pattern + _WS + ")?)?" + r")\Z"
)  # fmt: skip


def _member_regexes(delims: tuple) -> tuple[re.Pattern, re.Pattern, dict]:
    """The regexes of a member's start (`key: `, then `, key: `), one call each: groups 1 the key, 2-4 a value
    read whole (`_WHOLE`), 5 the opening delimiter of a string value (``"`` first, then the custom ones in
    their order, as `_follow_members` tries them); and each opening delimiter's closing one (None: ``"``)."""
    found = _MEMBERS.get(delims)
    if found is None:
        openers = ['"', *(o for o, _c in delims if o and not o.startswith('"'))]
        value = "(?:" + _WHOLE + "|(" + "|".join(re.escape(o) for o in openers) + "))?"
        close_of = {o: c for o, c in reversed(delims) if o}
        close_of['"'] = None
        found = _MEMBERS[delims] = (re.compile(_KEY + value), re.compile(_WS + "," + _KEY + value), close_of)
    return found


_WAIT_COMMA = frozenset(",}")  # after a member: the `,` before the next one (or the object's end)


#: `_dialect_constants` per dialect: ``{(unquoted_keys, delimiters, openers): constants}``
_DIALECT_CONSTANTS: dict[tuple, tuple] = {}


def _dialect_constants(unquoted_keys: bool, delims: tuple, openers: str) -> tuple:
    """What `JsonDialectPartial.__init__` derives from its dialect alone, made once per dialect (its regexes and
    sets cost ~450 Python opcodes per parser): ``(_wake, _wake_no_comma, _dialect, _opener_chars, _members,
    _held_open, _sink_close, sink_test)``.

    * ``_wake``: what a member whose value has not started waits for: a number's or literal's end, a list's, a
      string delimiter's last character (a ``"`` too without custom delimiters); ``_wake_no_comma`` without ``,``;
    * ``_dialect``: the dialect as `content.json.parse_json` takes it (shared: read only);
    * ``_members``: `_member_regexes`; ``_held_open``: text held between two members, completed: ``, key: `` and
      the opening delimiter of a custom-delimited string value (group 2; as `_member_regexes` tries them, after
      ``"``), with the string's text after it;
    * ``_sink_close``: the first character every closing delimiter starts with, if one (Gemma 4: ``<``): then
      `sink_stop` is that character from the start (a caller may bind it once) and `string_sink` gives a
      custom-delimited string's pieces too;
    * ``sink_test``: with ``_sink_close``, a search of a piece that finds nothing when it holds no closing
      delimiter and no start of one at its end (then all of it is more of the open string, `sink_stop` or not);
      else None.
    """
    key = (unquoted_keys, delims, openers)
    done = _DIALECT_CONSTANTS.get(key)
    if done is not None:
        return done
    wake = frozenset(",}]" + ("".join(o[-1] for o, _c in delims if o) or '"'))
    custom = [o for o, _c in delims if o and not o.startswith('"')]
    held_open = re.compile(_WS + "," + _KEY + "(" + "|".join(re.escape(o) for o in custom) + ")") if custom else None
    firsts = {c[0] for _o, c in delims if c}
    sink_close = firsts.pop() if len(firsts) == 1 and unquoted_keys else None
    sink_test = None
    if sink_close is not None:
        closes = sorted({c for _o, c in delims if c}, key=len, reverse=True)
        cuts = sorted({c[:k] for c in closes for k in range(1, len(c))}, key=len, reverse=True)
        sink_test = re.compile(
            "|".join(re.escape(c) for c in closes) + ("|(?:" + "|".join(map(re.escape, cuts)) + r")\Z" if cuts else "")
        ).search
    done = (wake, wake - {","}, {"unquoted_keys": unquoted_keys, "string_delims": delims}, frozenset(openers),
            _member_regexes(delims), held_open, sink_close, sink_test)
    if len(_DIALECT_CONSTANTS) >= 64:  # (a bound: templates have one or two dialects)
        _DIALECT_CONSTANTS.clear()
    _DIALECT_CONSTANTS[key] = done
    return done


class JsonDialectPartial(JsonPartial):
    """`JsonPartial` for the `json` parser's dialect (``unquoted_keys``, ``string_delims``: Gemma 4's
    ``{location:<|"|>Paris<|"|>,days:3}``), with `follow`: the members of an open object are written out as
    ``json.dumps`` writes them (keys quoted, custom-delimited strings encoded, ``, `` / ``: ``), whatever spaces
    the model put between them.

    What a member is stays the `json` content parser's: keys are its bare keys (`content.json_values._BARE_KEY`); a
    member's start and, where json.dumps would write it the same (an integer, a literal, a list of integers
    written ``[1, 2]``), its value are read with one regex call; any other number or flat list is read, once its
    text is complete, by its full parse (`content.parse_json`, with the same dialect options); the general
    reader (`JsonPartial`) takes over at anything else (a quoted key, a nested object, a list holding lists or
    objects, or that does not parse, a duplicate key, the object's end). A string value streams: text of its
    custom-delimited value that holds no first character of the closing delimiter (or no start of it at its
    end) is appended to its pieces by `feed` at once (the fragment: that text, JSON-escaped), or by the caller
    (`sink`: no first character of it at all). `hold` keeps what cannot complete a member or open its string
    value: after a member, text without ``,`` or ``}``; after its ``,``, text holding none of ``,`` ``}`` ``]``
    and the last characters of the opening delimiters (``"`` without custom delimiters); within a list, text
    without ``]``; within a number or literal, text without ``,`` or ``}``.
    """

    __slots__ = (
        "_wake", "_wake_no_comma", "_dialect", "_opener_chars", "_members", "sink", "sink_stop", "_sink_close",
        "sink_test", "_held_open",
    )  # fmt: skip

    def __init__(self, unquoted_keys: bool = False, string_delims: tuple = ()):
        super().__init__(unquoted_keys, string_delims)
        (self._wake, self._wake_no_comma, self._dialect, self._opener_chars, self._members, self._held_open,
         self._sink_close, self.sink_test) = _dialect_constants(unquoted_keys, self._delims, self._openers)
        #: While `following`, in its open custom-delimited string value with nothing held back: that string's
        #: pieces, to which text holding neither `sink_stop` (the first character of the closing delimiter) nor
        #: ``"``, ``\\``, or a character that is not printable may be appended instead of fed (that text is then
        #: its own fragment); else None. Set by each `feed`.
        self.sink: list[str] | None = None
        self.sink_stop = self._sink_close or ""

    def feed(self, text: str) -> bool | str | None:  # type: ignore[override]  # (as JsonPartial.feed's: str too)
        """`JsonPartial.feed`; while `following`, text that stays inside the open custom-delimited string value
        goes straight into its pieces, and its JSON-escaped text is returned."""
        if self.following is not None and text:
            mode = self._mode
            if mode == _CSTR and not self._carry:
                close = self._close
                stop = close[0]
                # (text that holds neither the closing delimiter nor a start of it at its end: all of it is
                # the string's, e.g. the `<` of `x < y` before `<|"|>`)
                if stop not in text or close not in text and stop not in text[1 - len(close) :]:
                    chunks = self._chunks
                    chunks.append(text)
                    if len(chunks) >= 4096:  # (memory: a long string arrives in many small pieces)
                        chunks[:] = ["".join(chunks)]
                    if self._sink_close is None:  # (else `string_sink` gives them)
                        self.sink, self.sink_stop = chunks, stop
                    return _encode_string(text)[1:-1]
            if mode != _STR:
                wait = self.wait
                out: list[str] = []
                if wait is None:  # in the open custom-delimited string (see `follow`): does it close?
                    if self._carry:
                        text = self._carry + text
                        self._carry = ""
                    close = self._close
                    k = text.find(close)
                    if k < 0:  # (a start of the delimiter ends it, or something to escape)
                        if mode == _CSTR:  # `_follow_feed` (`_custom_string`), inlined: keep a cut delimiter
                            n = len(text)
                            for cut in range(min(len(close) - 1, n), 0, -1):
                                if text.endswith(close[:cut]):
                                    self._carry = text[n - cut :]
                                    text = text[: n - cut]
                                    break
                            if text:
                                self._chunks.append(text)
                                res = _encode_string(text)[1:-1]
                            else:
                                res = ""
                        else:
                            res = self._follow_feed(text)
                        i = -1
                    else:  # `_follow_feed`: the string ends (`_end_string`, inlined), members may follow
                        chunks = self._chunks
                        if k:
                            chunks.append(text[:k])
                            out.append(_encode_string(text[:k])[1:-1])
                        out.append('"')
                        frame: Frame = self.following
                        frame.node[frame.open_key] = chunks[0] if len(chunks) == 1 else "".join(chunks)
                        frame.open_key = None
                        frame.version += 1
                        self.version += 1
                        self._mode = _AFTER
                        self._chunks = []
                        i = k + len(close)
                        cut_member = _DIALECT_NEXT_CUT.fullmatch(text, i)
                        if cut_member is not None:  # (`_follow_members` of the rest: the next member's start, cut)
                            if i < len(text):
                                self.pending.append(text[i:])
                            self.wait = self._wake if cut_member.lastindex else _WAIT_COMMA
                            self.sink = None
                            return out[0] if len(out) == 1 else "".join(out)
                elif wait is _WAIT_COMMA and text.count(",") == 1 and self._wake_no_comma.isdisjoint(text):
                    # after a member, its `,`, and no character that may complete the next member (see
                    # `_follow_members`): the start of that member, kept for the next text that may complete it
                    self.pending.append(text)
                    self.wait = self._wake
                    self.sink = None
                    return ""
                elif (
                    wait is self._wake
                    and (  # (the rarest first: a member's end holds no `[`)
                        "[" in text and text.find("[") < text.find(",")
                        or self.pending and "[" in self.pending[-1]
                    )
                    and self._wake_no_comma.isdisjoint(text)
                    and '"' not in text
                    and '"' not in "".join(self.pending)
                ):
                    # the member's value opened as a list (in the text kept, or before the text's first `,`; no
                    # `"` where the `[` may be a standard string's, in the text or the text kept), and the `,` is
                    # in it: its `]` completes it
                    # (what else the text holds, the reading of it decides then)
                    self.pending.append(text)
                    self.wait = _WAIT_LIST
                    self.sink = None
                    return ""
                else:  # between two members (no string open, nothing carried)
                    pending = self.pending
                    if pending:
                        text = (pending[0] if len(pending) == 1 else "".join(pending)) + text
                        pending.clear()
                    i = 0
                    frame = self.following
                    m = _HELD_MEMBER.match(text)
                    if m is not None and frame.keys and m.group(1) not in frame.node:  # a member, the next one's start
                        key, number, literal, items, rest, comma = m.groups()
                        if number is not None:
                            value, written = int(number), number
                        elif literal is not None:
                            value, written = _LITERALS[literal], literal
                        else:
                            value, written = _scan_value(items, 0)[0], items
                        frame.keys.append(key)
                        frame.node[key] = value
                        self.version += 1
                        frame.version += 1
                        self._mode = _AFTER
                        if rest:
                            pending.append(rest)
                        self.wait = self._wake if comma else _WAIT_COMMA
                        self.sink = None
                        return f', "{key}": {written}'
                    opens = self._held_open
                    m = opens.match(text) if opens is not None and frame.keys else None
                    if m is not None and m.group(1) not in frame.node:  # (`_follow_members`: a string value opens)
                        key = m.group(1)
                        frame.keys.append(key)
                        frame.open_key = key
                        self.version += 1
                        frame.version += 1
                        self._is_key = False
                        chunks = self._chunks = []
                        out.append(f', "{key}": "')  # (a bare key needs no escaping: `_encode_string`'s)
                        close = self._members[2][m.group(2)]
                        self._mode, self._close = _CSTR, close
                        i = m.end()
                        if text.find(close[0], i) < 0:  # `_custom_string` and the steps below, where the rest is
                            if i < len(text):  # all the string's (no character its close starts with)
                                rest = text[i:]
                                chunks.append(rest)
                                out.append(_encode_string(rest)[1:-1])
                            self.wait = None
                            if self._sink_close is None:
                                self.sink, self.sink_stop = chunks, close[0]
                            else:
                                self.sink = None
                            return out[0] if len(out) == 1 else "".join(out)
                        i = self._custom_string(text, i)
                        if chunks:
                            out.append(_encode_string(chunks[0] if len(chunks) == 1 else "".join(chunks))[1:-1])
                        if self._mode == _CSTR:
                            self.wait = None
                            res = out[0] if len(out) == 1 else "".join(out)
                            i = -1
                        else:  # (it closed: the members after it, as `_follow_members` goes on)
                            out.append('"')
                if i >= 0:  # `_follow_feed`'s own reading of the members, one call less
                    try:
                        self._follow_members(text, i, out)
                    except (ValueError, RecursionError):
                        self.broken = True
                        self._mode = _DEAD
                        self.following = self.wait = self.sink = None
                        return ""  # (as `_follow_feed`: nothing of a text that breaks the body is sent)
                    res = out[0] if len(out) == 1 else "".join(out)
                if self._mode == _CSTR and not self._carry and self.following is not None and self._sink_close is None:
                    self.sink, self.sink_stop = self._chunks, self._close[0]
                else:
                    self.sink = None
                return res
        self.sink = None
        return JsonPartial.feed(self, text)

    def _custom_string(self, text: str, i: int) -> int:
        """`JsonPartial._custom_string`, looking for a closing delimiter cut by the end of the text (kept back)
        only when a first character of it is among the text's last characters."""
        close = self._close
        k = text.find(close, i)
        if k < 0:
            n = len(text)
            tail = n + 1 - len(close)
            if text.find(close[0], tail if tail > i else i) < 0:
                if n > i:
                    self._chunks.append(text[i:] if i else text)
                return n
            return JsonPartial._custom_string(self, text, i)
        if k > i:
            self._chunks.append(text[i:k])
        self._end_string()
        return k + len(close)

    def string_sink(self) -> list[str] | None:
        """`JsonPartial.string_sink`; also the pieces of an open custom-delimited string value when every closing
        delimiter starts with `sink_stop` (text without it, ``"``, ``\\`` or control characters may be appended)."""
        if self._mode == _CSTR and self._sink_close is not None:
            if self._carry or self._is_key or not self.stack or self.stack[-1] is not self.following:
                return None
            return self._chunks
        return JsonPartial.string_sink(self)

    def _sink(self) -> None:
        """Set `sink` after a `feed` or `follow`."""
        if self._mode == _CSTR and not self._carry and self.following is not None and self._sink_close is None:
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

    def _follow_members(self, s: str, i: int, out: list[str]) -> None:
        """Read whole members of the followed object from `s[i:]` (see the class docs); hold back a partial
        one in `pending`; hand anything else to the general reader."""
        frame: Frame = self.following  # type: ignore[assignment]  # (following: not None)
        node, keys = frame.node, frame.keys
        n = len(s)
        first, nxt, close_of = self._members
        value: Any
        while True:
            # `, key: ` (`key: ` first) and, if it is there, a value read whole or a string's opening delimiter:
            # one regex call
            m = (nxt if keys else first).match(s, i)
            if m is None:
                cut = (_DIALECT_NEXT_CUT if keys else _DIALECT_FIRST_CUT).fullmatch(s, i)
                if cut is not None:
                    # the text so far starts a member: it waits for the `,` before it, then for its value
                    wait = self._wake if not keys or cut.lastindex else _WAIT_COMMA
                    break
                return self._unfollow(s, i)  # (the object's end, a quoted key, not the dialect: the general reader)
            j = m.end()
            groups = m.groups()
            key = groups[0]
            if key in node:
                return self._unfollow(s, i)  # (a duplicate: the general reader says how)
            sep = ", " if keys else ""
            at = m.lastindex or 1  # (group 1, the key, always matches)
            if at == 5:  # a string value opens: it streams
                close = close_of[groups[4]]
            elif at != 1:  # an integer, a literal, a list of integers, as json.dumps writes them
                written = groups[at - 1]
                if at == 2:
                    value = int(written)
                else:
                    value = _LITERALS[written] if at == 3 else _scan_value(written, 0)[0]
                close = ""
            elif j == n:
                wait = self._wake
                break
            else:
                c = s[j]
                close = ""
                if c in self._openers:
                    if any(opener.startswith(s[j:]) for opener, _c in self._delims):
                        wait = self._wake  # (a delimiter cut by the end of the text)
                        break
                    return self._unfollow(s, i)
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
                    except (ValueError, StopIteration):  # (a `]` in one of its strings, a cut string)
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
                j = t
            if close != "":  # (the string value opens: `close`, its closing delimiter; None: `"`)
                keys.append(key)
                frame.open_key = key
                self.version += 1
                frame.version += 1
                self._is_key = False
                chunks = self._chunks = []
                out.append(f'{sep}"{key}": "')  # (a bare key needs no escaping: `_encode_string`'s)
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
            keys.append(key)
            node[key] = value
            self.version += 1
            frame.version += 1
            self._mode = _AFTER
            out.append(f'{sep}"{key}": {written}')
            i = j
            # what follows a member is most often the start of the next one, cut: one regex call
            cut = _DIALECT_NEXT_CUT.fullmatch(s, i)
            if cut is not None:
                wait = self._wake if cut.lastindex else _WAIT_COMMA
                break
        if i < n:  # hold the start of the member back
            self.pending.append(s[i:] if i else s)
        self.wait = wait
