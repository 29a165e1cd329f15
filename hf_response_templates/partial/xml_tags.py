"""``xml-inline``: `XmlTagsPartial` (by tags, when the content parser knows the tag shape) and
`XmlInlinePartial` (by searches of the tag pattern)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from hf_response_templates.content import DEFAULT_REGEX_TIMEOUT, get_content_parser
from hf_response_templates.errors import RegexTimeoutError
from hf_response_templates.partial.base import Frame, _OpenRoot
from hf_response_templates.partial.json_reader import _encode_string


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


def _value_stop(shape: Any) -> Any:
    """`XmlTagsPartial._value_stop`: ``value_end|(cut_end)`` in one pattern, when the leftmost match of it is
    where `XmlTagsPartial._read` stops in a value: the first end (``_end.search``), else the start of a cut
    end at the text's end (``_tail.search``). That holds when no cut end holds an end or lookahead text (then
    no cut end can start before an end in the same text); else None."""
    end, tail = shape.value_end, shape.cut_end
    if end.groups or tail.groups or end.flags != tail.flags:
        return None
    cuts = [t[:k] for t in shape.ends + shape.looks for k in range(1, len(t))]
    if any(t in c for t in shape.ends + shape.looks for c in cuts):
        return None
    return re.compile(f"{end.pattern}|({tail.pattern})", end.flags)


#: `_shape_constants` per shape: ``{id(shape): (shape, constants)}`` (the shape kept, so that its id is not reused)
_SHAPE_CONSTANTS: dict[int, tuple] = {}


def _shape_constants(shape: Any) -> tuple:
    """What `XmlTagsPartial.__init__` derives from a `content.TagShape` alone, made once per shape (the value end
    and cut end patterns joined by `_value_stop` cost ~600 Python opcodes, a fifth of a short stream's fixed cost):
    ``(_stops, _hold, _value_stop, _fast, sink_test, sink_stop, _wait_seek, _wait_head)``.

    * ``_stops``: the characters a value's end may start with; ``_hold``: (at most) the text held back;
    * ``_value_stop``: while following, in a value with nothing held back, one search of it finds where the value
      ends in a piece (a `_end` match) or what of its end may start there (a `_tail` match, group 1); None: unsure;
    * ``_fast``: following takes the short paths of `feed`, `_follow_end` and `_follow_head`;
    * ``sink_test``: while `string_sink` is not None, a search of a piece that finds nothing when all of it is more
      of the open value (it may hold `sink_stop`: ``x < y``), so that a caller may append it too; None: unknown;
    * ``sink_stop``: the one character (besides ``"``, ``\\`` and control characters) that text a caller appends
      to the open value's pieces itself, after `feed` returned True, must not hold (``<``); None: `feed` never
      returns True (the value's end may start with several);
    * ``_wait_seek``, ``_wait_head``: what text between tags and in a head waits for.
    """
    entry = _SHAPE_CONSTANTS.get(id(shape))
    if entry is not None and entry[0] is shape:
        return entry[1]
    stops = frozenset({t[0] for t in shape.ends + shape.looks} | ({"\n"} if shape.newline else set()))
    hold = max(len(t) for t in shape.ends + shape.looks) + 1
    value_stop = _value_stop(shape)
    fast = value_stop is not None and shape.head_fast is not None and shape.head_last is not None
    printable = [c for c in stops if c.isprintable()]
    constants = (
        stops,
        hold,
        value_stop,
        fast,
        value_stop.search if fast else None,
        printable[0] if len(printable) == 1 else None,
        frozenset(shape.opener[0]),
        frozenset(shape.head_last) if shape.head_last is not None else None,
    )
    if len(_SHAPE_CONSTANTS) >= 256:  # (shapes are per compiled template field: a bound, not an expected size)
        _SHAPE_CONSTANTS.clear()
    _SHAPE_CONSTANTS[id(shape)] = (shape, constants)
    return constants


class XmlTagsPartial(_OpenRoot):
    """``xml-inline`` with a `tag_pattern` of the form the content parser describes as a `content.TagShape`
    (``<parameter=(?P<key>[^>\\s]+)>\\n?(?P<value>.*?)\\n?(?:</parameter>|(?=<parameter=)|\\Z)``, the
    usual tags): it reads the tags as they come and keeps its place between pieces (looking for a tag, in a
    tag's head, in a value). A piece inside a value that holds none of the characters its end can start with
    costs a set test and an append; only the short text that may be a cut end (``\\n</para``) is held back.

    When a value ends with the end of the text too (``\\Z``: a match exists as soon as a head does) and values
    are kept as text (no ``value_parser``, ``value_parser_by``), each value streams as it is written: its
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
        "followed", "wait", "quotes", "pending", "_value_stop", "_fast", "sink_test",
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
        self._tail = shape.cut_end
        # (what follows from the shape alone, worked out once per shape: `_shape_constants`)
        (self._stops, self._hold, self._value_stop, self._fast, self.sink_test, self.sink_stop, self._wait_seek,
         self._wait_head) = _shape_constants(shape)
        self._sink = self.sink_stop is not None
        self._plain = not args.get("value_parser") and args.get("_select") is None
        self._streams = shape.at_end and self._plain
        self._mode = _SEEK
        self._buf: list[str] = []  # text that must be read again with what follows
        self._edge = False  # in a head: it matched up to the end of the text (one more character decides)
        self._chunks: list[str] = []  # the open value's pieces
        self._key: Any = None
        self._stream = False  # the open value streams (`open_string`)
        self._sinks = False  # ... and `feed` may return True
        self._head_text = ""
        self._out: list[str] | None = None  # while following: the fragments the text being read writes
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
                if following is not None and self._fast:
                    stop = self._value_stop
                    # (a piece that may end the value: read here when it does not, or only starts its end)
                    m = stop.search(text)
                    if m is None:
                        self._chunks.append(text)
                        return _encode_string(text)[1:-1]
                    if m.lastindex:  # the start of the value's end, at the end of the piece: keep it
                        cut = m.start()
                        self._buf = [text[cut:]]
                        if cut:
                            text = text[:cut]
                            self._chunks.append(text)
                            return _encode_string(text)[1:-1]
                        return ""
            else:
                held = buf[0] + text
                if self._tail.fullmatch(held):  # still (maybe) the start of the value's end: keep it
                    buf[0] = held
                    return None if following is None else ""
                if following is not None and self._fast:
                    m = self._end.match(held)
                    if m is not None:  # the value ends where the text held back starts
                        self._buf = []
                        return self._follow_end(held, m.end())
        elif following is not None and text and self._fast:  # between tags, in a head (following: not broken)
            pending = self.pending
            if pending:
                pending.append(text)
                text = "".join(pending)
                self.pending = []
            if buf:  # (as below)
                if mode == _HEAD:
                    if not self._edge and self._head_last not in text:
                        buf.append(text)
                        return ""
                else:
                    held = buf[0] + text
                    if self._opener.startswith(held):
                        buf[0] = held
                        return ""
                buf.append(text)
                text = "".join(buf)
                self._buf = []
            k = text.find(self._opener)  # (in a head, the text held back starts with the opener)
            if k >= 0:
                m = self._head_fast.match(text, k)
                if m is not None:
                    n = len(text)
                    end = m.end()
                    key = m.group("key")
                    if (end < n or not self._head_nl or text[n - 1] == "\n") and key is not None and key not in self.value:
                        return self._follow_head(text, key, end)  # (a head complete, and no more needed to know it)
            written = self._out = []
            try:
                self._read(text)
            except (ValueError, RegexTimeoutError):
                self.broken = True
                self._stop_following()
            self._out = None
            if self.following is not None:
                self._set_wait()
            return "".join(written)
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

    def _follow_end(self, s: str, end: int) -> str:
        """`feed` while following, when the open value ends at the start of `s` (the text held back, then the
        piece) and what ends it ends at `end`: `_end_value` and `_read` from there, for what is common."""
        frame = self._frame
        chunks = self._chunks
        self.value[self._key] = chunks[0] if len(chunks) == 1 else "".join(chunks)
        self._chunks = []
        frame.open_key = None
        self._stream = self._sinks = False
        self.version += 1
        frame.version += 1
        self._mode = _SEEK
        n = len(s)
        opener = self._opener
        k = s.find(opener, end) if end < n else -1
        if k < 0:  # no tag starts in the rest: keep a cut opener (`_read`)
            if end < n:
                m = self._cut_opener.search(s, max(end, n - len(opener)))
                if m is not None:
                    self._buf = [m.group()]
            self._set_wait()
            return '"'
        written = self._out = ['"']
        try:
            self._read(s, k)
        except (ValueError, RegexTimeoutError):
            self.broken = True
            self._stop_following()
        self._out = None
        if self.following is not None:
            self._set_wait()
        return "".join(written)

    def _follow_head(self, s: str, key: str, end: int) -> str:
        """`feed` while following, when `s` holds a complete head (`head_fast`) of a new key ending at `end`:
        `_start_value` and `_read` from there, for what is common."""
        self._edge = False
        self._mode = _IN_VALUE
        self._key = key
        chunks: list[str] = []
        self._chunks = chunks
        self._stream = True
        self._sinks = self._sink
        frame = self._frame
        keys = frame.keys
        piece = (", " if keys else "") + _encode_string(key) + ': "'
        keys.append(key)
        frame.open_key = key
        self.version += 1
        frame.version += 1
        self.wait = None
        n = len(s)
        if end == n:
            return piece
        m = self._value_stop.search(s, end)  # (see the first branch of `feed`)
        if m is None:
            text = s[end:]
            chunks.append(text)
            return piece + _encode_string(text)[1:-1]
        if m.lastindex:
            cut = m.start()
            self._buf = [s[cut:]]
            if cut > end:
                text = s[end:cut]
                chunks.append(text)
                return piece + _encode_string(text)[1:-1]
            return piece
        written = self._out = [piece]  # (the value ends in `s` too)
        try:
            self._read(s, end)
        except (ValueError, RegexTimeoutError):
            self.broken = True
            self._stop_following()
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
        if self._buf or self._mode != _IN_VALUE or not self._sinks or self.following is None:  # (the commonest first)
            return None
        return self._chunks

    def _set_wait(self) -> None:
        """While following: what a piece must hold to be read now (the rest waits in `pending`)."""
        mode = self._mode
        if mode == _IN_VALUE:
            self.wait = None
        elif mode == _SEEK:
            # (nothing is written before a head completes, and a head needs its last fixed character: text
            # without it, between two tags or after a cut opener, is not read; without one, text before the
            # next tag's opener)
            wait = self._wait_head
            self.wait = wait if wait is not None else self._wait_seek if not self._buf else None
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

    def _read(self, s: str, i: int = 0) -> None:
        n = len(s)
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
                if i == n:
                    return  # (nothing after it: no opener, nor a cut one)
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
            if i == n:
                return  # (nothing after the head: the value is empty so far)

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
