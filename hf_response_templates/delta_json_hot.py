"""`json_hot_feed`: `delta_hot.hot_feed` for a tool region whose partial parser is a plain `JsonPartial` (Hermes and
the other JSON formats), with a member's end read in the same call, a feed per state and a small per-piece frame.

While the arguments object is followed (`JsonPartial.follow`), a piece that may complete the member held back
(`JsonPartial.wait`) went through `hot_feed`, `JsonPartial._follow_held` and `JsonPartial._follow_members`: three
frames, a list of fragments and a failed match before the cut start of the next member was recognised. Here the
common case is read by one function (`member_end`): the held text and the piece, joined, are one whole member as
json.dumps writes it (`json_reader._MEMBER`), followed by nothing or by the next member cut before its value (one
match: `_FIRST_HELD` / `_NEXT_HELD`). The reader's state is then changed exactly as `_follow_members` changes it
for that text, and the fragment (the member's text) is the delta. Anything else (a duplicate key, more members after
it, a member the patterns do not take) is handed, untouched, to `_follow_held`, as before. The same holds for the
end of a sunk string followed by nothing or a cut member (`unsink`, `_STRING_ENDS`: `JsonPartial.end_string`'s
steps), and for a piece of a sunk string whose escapes are those json.dumps writes (`_ESCAPED_RUN`: the piece is its
own fragment, decoded once, and the string is sunk again).

The stream's ``feed`` is the function of the state the region is in: `sink_feed` while a string argument is sunk
(`_Region.sink`), `held_feed` while a member is held back, else `feed` (the region's feed, which the stream installs,
with all the branches). Each of the first two keeps only its state's common pieces, told by a few one-character
`in` tests (the stops include the stream's lag character, `DeltaStream._lag_char`, cached); any other piece goes to
a function of its own (`sink_exit`, `held_exit`), which puts `feed` back first, then takes `feed`'s steps. They are installed only where their state and that lag character are known,
and both can change only in steps that put `feed` back before they run. A piece in which the region's end may start
(the lag character, and the parser's test) goes to the parser directly (`sink_parse`, `sink_resume`: the steps of
`DeltaStream._feed` and `_take` for it, and `DeltaStream._route`'s common case for its chunk), unless all the test
finds is a sure beginning of it ending the piece (``x <``): the stream keeps that end, takes the text before it as
any other piece and joins the end with the next piece (`delta_tail.cut_tail`, `keep_tail`, `joined`), as
`delta_hot.hot_feed` does; the parser then goes on taking the pieces without being fed.

CPython copies a closure's cells into every call's frame and clears every local slot at its return, so a large
function costs on every piece, whichever branch it takes: the rarer steps are functions of their own. The branches
are those of `hot_feed` (without the dialect's), so the deltas are the same piece by piece.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from hf_response_templates.delta_hot import _LAG_AT, _hot_feed
from hf_response_templates.delta_state import _COMPACT_AT, _compact, _join_pieces, _Region
from hf_response_templates.delta_tail import cut_tail
from hf_response_templates.partial.json_reader import (
    _AFTER,
    _CUT_MEMBER,
    _LITERALS,
    _STR,
    _STR_RUN,
    _WAIT_MEMBER,
    _scan_value,
)

_Deltas = list[dict[str, Any]]
# Text of a JSON string with escapes, each as json.dumps (``ensure_ascii=False``) writes the character it stands for:
# decoded and written again, it is the same text (if printable: no raw control character, no lone surrogate)
_ESCAPED_RUN = re.compile(r'(?:[^"\\\x00-\x1f]|\\[nrtbf"\\])*')
_scanstring = json.decoder.scanstring  # (the C scanner: the rest of a JSON string after its opening quote)
# A followed member (`json_reader._MEMBER`, first or next) that the text held back and the piece, joined, hold whole
# (in `member_end`), followed by nothing or by the next member cut before its value (`json_reader._CUT_MEMBER`, in
# a lookahead: the match ends with the member; the quotes the cut holds, counted, are those its groups saw).
# `_HELD_MEMBER` is `json_reader._MEMBER` with possessive runs (a run of characters that cannot be the one after it
# gives nothing back: the same matches, without the backtracking of a failed alternative), and `_CUT_AHEAD` is
# `_CUT_MEMBER` (or nothing) written as alternatives that each start with a literal or the end, instead of nested
# optional groups (the regex engine enters an optional group as a repeat): the same language, about a third fewer
# machine instructions per match (callgrind: ~5,900 -> ~4,100 for `_NEXT_HELD`). A list's items are a possessive
# repeat (an item cannot start with the ", " that follows it: giving one back never lets the "]" match) and the
# empty list an alternative, not an optional group: ~6,700 -> ~5,600 for a `[1, 2, 3]` member.
# tests/test_delta_json_hot.py compares them with the plain patterns
_S_RUN = r'[^"\\\x00-\x1f]*+'
_SCALAR_P = rf'(?:0|-?[1-9][0-9]*+|true|false|null|"{_S_RUN}")'
_HELD_MEMBER = (
    rf'"({_S_RUN})": (?:(0|-?[1-9][0-9]*+)(?=[,}}])|(true|false|null)(?=[,}}])|"({_S_RUN})"'
    rf"|(\[(?:\]|{_SCALAR_P}(?:, {_SCALAR_P})*+\]))"
    rf'|"({_S_RUN})\Z)'
)
_CUT_TAIL = r'(?:\Z| \Z| "[^"]*+(?:\Z|"(?:\Z|:(?:\Z| \Z))))'  # (after the cut's comma)
_CUT_AHEAD = rf"(?=\Z|,{_CUT_TAIL})"
_FIRST_HELD = re.compile(f"(?:{_HELD_MEMBER}){_CUT_AHEAD}")
_NEXT_HELD = re.compile(f", (?:{_HELD_MEMBER}){_CUT_AHEAD}")
# The end of a JSON string without escapes (its last characters, group 1, and its quote), followed by nothing or by
# the next member cut before its value (`json_reader._CUT_MEMBER`)
_STRING_ENDS = re.compile(rf'({_S_RUN})"(?:\Z|,{_CUT_TAIL})')
_UNSET = object()  # (`json_hot_feed`'s lag character before the first piece)


def json_hot_feed(ds: Any, r: _Region) -> Callable[[str], _Deltas]:
    """The ``feed`` of stream `ds` while tool region `r`, whose partial parser is a `JsonPartial` (not a dialect's
    subclass), is open: `delta_hot.hot_feed`'s, with the end of a followed member read here (see the module docs)."""
    if r.stop != '"':  # (a plain JsonPartial has no `sink_stop`: the stream's own stop is '"')
        return _hot_feed(ds, r)
    lag = ds._lag
    lag_append = lag.append  # (the same list for the stream's life: only appended to and cleared)
    p = r.partial
    pending = p.pending  # (the same list for the reader's life: only appended to and cleared)
    pending_append = pending.append
    join = "".join
    first_member, next_member, string_ends = _FIRST_HELD.match, _NEXT_HELD.match, _STRING_ENDS.match
    # The stream's lag character (`DeltaStream._lag_char`, one character) when `feed` last saw it (see `first`):
    # while it is still that one, a piece holding none of '"', a backslash and it (a sunk string's piece needing
    # no escaping and not ending the region), or none of '"', "}", "]" and it (a piece held between members, quotes
    # aside), takes `feed`'s first branches
    lag_c: Any = _UNSET
    # The call whose string `sink_feed` appends to (with its pieces' `append` and its index), whose member
    # `held_feed` holds (set as either is installed: `sink_on`, `held_on`)
    scall: Any = None
    sappend: Any = None
    sidx: Any = None
    fcall: Any = None
    unlag_lag = ds._unlag

    def feed(text: str) -> _Deltas:
        # (the region's close, or the stream's finish, puts `_feed` back: `DeltaStream._on_close`)
        nonlocal fcall
        if ds._lag_char is not lag_c or not text:
            return first(text)
        call = r.sink
        if call is not None:
            if '"' not in text and "\\" not in text and lag_c not in text and text.isprintable():
                # the next piece of the string the partial parser sits in, needing no JSON escaping, and its fragment
                # (in `call.parts` later: `_Call.run`); the next pieces go to `sink_feed`
                sink_on(call)
                lag_append(text)  # (`DeltaStream._take`, inlined)
                if len(lag) >= _LAG_AT:
                    unlag(call)
                call.str_chunks.append(text)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            return sink_other(call, text)
        if p.wait is _WAIT_MEMBER and (call := r.follow) is not None:  # between members
            if '"' not in text and "}" not in text and "]" not in text and lag_c not in text:
                # a piece that can neither complete the member held back nor open its string value (no quote: the
                # quotes still to come stay as they are): `JsonPartial.hold`, inlined; the next pieces go to
                # `held_feed`
                fcall = call
                ds.feed = r.hot = held_feed
                lag_append(text)
                if len(lag) >= _LAG_AT:
                    ds._unlag()
                pending_append(text)
                return []
            if lag_c not in text:  # (a quote, "}" or "]")
                lag_append(text)
                if len(lag) >= _LAG_AT:
                    ds._unlag()
                if "}" not in text and "]" not in text:
                    q = p.quotes  # (at least 1 while `wait` is `_WAIT_MEMBER`)
                    n = text.count('"')
                    if n < q:
                        p.quotes = q - n
                        pending_append(text)
                        return []
                return member_end(call, text)
        return follow_other(text)

    # While the string stays sunk, or the member held back waits for more: `feed`'s branch for that state, as the
    # stream's ``feed`` (and the region's, so that `DeltaStream._feed` installs it again), and `feed` back for any
    # other piece, before anything else is done. They are installed where that state and the lag character are
    # known (`feed`, `member_end`, `unsink`), and the state can change only in the steps that put `feed` back first
    # (the lag character, `DeltaStream._lag_char`, only in `DeltaStream._feed` and `_take`)

    # Their common pieces are told by `in` tests (a C search each, for one character), not by a set's
    # `isdisjoint`, which iterates the piece and hashes each of its characters (about twice the machine
    # instructions for a 4-character piece); their other pieces by functions of their own (`sink_exit`,
    # `held_exit`), so that the cells a call copies into its frame are few

    def sink_feed(text: str) -> _Deltas:
        """`feed` while the stream sinks the string of `scall`."""
        if text and '"' not in text and "\\" not in text and lag_c not in text and text.isprintable():
            lag_append(text)  # (`DeltaStream._take`, inlined)
            if len(lag) >= _LAG_AT:
                sink_unlag()
            sappend(text)  # (`scall.str_chunks.append`)
            return [{"tool_calls": [{"index": sidx, "function": {"arguments": text}}]}]
        return sink_exit(text)

    def sink_exit(text: str) -> _Deltas:
        """`sink_feed` of another piece: `feed` back, and its steps (`unsink` puts `feed` back itself, where it does
        not install `held_feed`: one store of ``ds.feed``, unspecialized by CPython, saved on a string's end)."""
        if text and lag_c not in text:  # a quote, a backslash or a character that needs escaping (`sink_other`)
            lag_append(text)
            if len(lag) >= _LAG_AT:
                unlag(scall)
            return unsink(scall, text)
        if (
            text
            and (t := ds._lag_test) is not None
            and t(text) is None
            and '"' not in text
            and "\\" not in text
            and text.isprintable()
        ):
            # the lag character starting no delimiter (`ds._lag_char` is `lag_c` while `sink_feed` is installed) in
            # a piece needing no escaping: `sink_other`'s steps, `sink_feed` staying installed
            lag_append(text)
            if len(lag) >= _LAG_AT:
                unlag(scall)
            sappend(text)
            return [{"tool_calls": [{"index": sidx, "function": {"arguments": text}}]}]
        ds.feed = r.hot = feed
        return sink_other(scall, text) if text else feed(text)  # (`feed`'s step for it)

    def sink_unlag() -> None:
        """`unlag` of `scall`."""
        unlag(scall)

    def sink_on(call: Any) -> None:
        """Install `sink_feed` for the string of `call` (sunk: `_Region.sink`)."""
        nonlocal scall, sappend, sidx
        scall = call
        sappend = call.str_chunks.append  # (the list is only appended to and joined in place while sunk)
        sidx = call.index
        ds.feed = r.hot = sink_feed

    def held_feed(text: str) -> _Deltas:
        """`feed` while the followed arguments of `fcall` hold a member back (`JsonPartial.wait` is
        `_WAIT_MEMBER`)."""
        # (an empty piece too: held, as `_feed` would leave it, no delta; one truth test less per piece)
        if "}" not in text and "]" not in text and lag_c not in text:
            lag_append(text)  # (its length: `member_end`, once per member)
            if '"' not in text:  # (the quotes still to come stay as they are: no count)
                pending_append(text)
                return []
            q = p.quotes  # (at least 1 while `wait` is `_WAIT_MEMBER`)
            if q > 1:  # (with one quote to come, the piece's are enough: no `str.count`, ~900 machine instructions)
                n = text.count('"')
                if n < q:
                    p.quotes = q - n
                    pending_append(text)
                    return []
            return member_end(fcall, text)  # (which puts `feed` back unless it installs a feed itself)
        return held_exit(text)

    def held_exit(text: str) -> _Deltas:
        """`held_feed` of another piece (`feed`'s steps)."""
        if text and lag_c not in text:  # ("}" or "]")
            lag_append(text)
            if len(lag) >= _LAG_AT:
                ds._unlag()
            return member_end(fcall, text)
        ds.feed = r.hot = feed
        return feed(text)

    def first(text: str) -> _Deltas:
        """`feed` of a piece while the lag character is not the one `feed` last saw (it changed, or is unknown: a
        piece then goes to `_feed`), or of an empty piece: `lag_c` becomes the new one."""
        nonlocal lag_c
        c = ds._lag_char
        if not c or not text or len(c) != 1:  # (one character: `ResponseParser.region_char`)
            if c is None and text and (call := r.sink) is not None and r.follow is call and not lag:
                return sink_resume(call, text)
            return slow(text)
        lag_c = c
        call = r.sink
        if call is not None:
            return sink_other(call, text)
        return follow_other(text)

    def sink_other(call: Any, text: str) -> _Deltas:
        """A piece of the sunk string that may end the region, needs escaping or ends the string (`hot_feed`'s
        steps); `feed` is the stream's ``feed``, the lag character `lag_c`."""
        c = ds._lag_char
        if c in text and ((t := ds._lag_test) is None or t(text) is not None):
            if t is None:
                return slow(text)
            # (a sure beginning of a delimiter ending it: kept, the text before it taken, `delta_tail.cut_tail`)
            cut = cut_tail(ds, text)
            if cut is None:
                return sink_parse(call, text)
            return keep_tail(sink_other(call, cut) if cut else [])
        lag_append(text)  # (`DeltaStream._take`, inlined)
        if len(lag) >= _LAG_AT:
            unlag(call)
        if '"' not in text and "\\" not in text and text.isprintable():  # (the lag character, with no delimiter)
            sink_on(call)
            call.str_chunks.append(text)
            return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
        return unsink(call, text)

    def sink_parse(call: Any, text: str) -> _Deltas:
        """A piece of the sunk string in which a delimiter may start (the lag character, and the parser's test):
        `slow` and `DeltaStream._feed`'s steps for it (`_take` hands the lag on, the parser reads the piece)."""
        if len(call.str_chunks) >= _COMPACT_AT:
            _compact(call)
        ds._unlag()
        ds._lag_char = None
        return parsed(call, ds._pfeed(text))

    def sink_resume(call: Any, text: str) -> _Deltas:
        """A piece of the sunk string while the lag character is unknown (after `sink_parse`), nothing lagging:
        `slow` and `DeltaStream._feed`'s steps for it (`_take` finds the lag character again if the parser takes
        the piece as region text, else the parser reads it). Where that piece is the string's next one and the
        lag character is one character, `sink_feed` is installed for the next pieces, as `first` and `feed` would
        (`lag_c` becomes that character)."""
        nonlocal lag_c
        if len(call.str_chunks) >= _COMPACT_AT:
            _compact(call)
        if ds._region_take(text):
            ds._lag_char = c = ds._region_char() or ""
            ds._lag_test = ds._region_test()
            ds._lag_holds = None  # (as `DeltaStream._take`: `delta_tail.cut_tail` asks again)
            if '"' not in text and "\\" not in text and text.isprintable():
                chunks = call.str_chunks
                chunks.append(text)
                if len(chunks) >= _COMPACT_AT:
                    _compact(call)
                if len(c) == 1:
                    lag_c = c
                    sink_on(call)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            return ds._follow_chunk(r, text)
        return parsed(call, ds._pfeed(text))

    def parsed(call: Any, events: list) -> _Deltas:
        """`DeltaStream._route` of the parser's `events` for a piece of the sunk string, with its common case here:
        one chunk of the region that needs no escaping (`DeltaStream._follow_chunk` appends it to the string and
        sinks it again: the same as appending it to the sunk string)."""
        if len(events) == 1 and ds._open is r and r.sink is call and r.follow is call:
            ev = events[0]
            if ev["type"] == "region_chunk" and ev["field"] == r.name and r.captures is not None:
                text = ev["text"]
                if text and '"' not in text and "\\" not in text and text.isprintable():
                    call.str_chunks.append(text)
                    return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
        return ds._route(events)

    def follow_other(text: str) -> _Deltas:
        """Not sinking: a piece that may end the region, or complete the member held back, or anything else while
        following (`hot_feed`'s steps)."""
        c = ds._lag_char
        if c in text and ((t := ds._lag_test) is None or t(text) is not None):
            if t is None or r.follow is None or (cut := cut_tail(ds, text)) is None:
                return slow(text)
            return keep_tail(follow_other(cut) if cut else [])  # (as in `sink_other`)
        call = r.follow
        if call is None:
            ds.feed = ds._feed  # (neither: the general path, until `_feed` meets a sink or follow again)
            return ds._feed(text)
        lag_append(text)
        if len(lag) >= _LAG_AT:
            ds._unlag()
        if p.wait is _WAIT_MEMBER:  # between members: `JsonPartial.hold`, inlined
            if "}" not in text and "]" not in text:
                if '"' not in text:  # (the quotes still to come stay as they are: no count)
                    pending_append(text)
                    return []
                q = p.quotes  # (at least 1 while `wait` is `_WAIT_MEMBER`)
                n = text.count('"')
                if n < q:
                    p.quotes = q - n
                    pending_append(text)
                    return []
            return member_end(call, text)
        return other(call, text)

    def keep_tail(out: _Deltas) -> _Deltas:
        """After the text before an end kept by `delta_tail.cut_tail` (`DeltaStream._tail`) was taken (`out`, its
        deltas): `joined` installed, unless the stream's ``feed`` is `DeltaStream._feed` (which takes the kept end
        first)."""
        if ds.feed is r.hot:
            ds.feed = joined
        return out

    def joined(text: str) -> _Deltas:
        """The stream's ``feed`` while it keeps an end cut by `delta_tail.cut_tail` (`delta_tail.joined_feed`): the
        feed of the region's state (`r.hot`, installed by the steps that took the text before that end) put back,
        given the kept end and the piece, joined."""
        f = ds.feed = r.hot
        tail = ds._tail
        ds._tail = ""
        return f(tail + text)

    def slow(text: str) -> _Deltas:
        """A piece that may end the region (or an empty one, or before the lag character is known): `_feed`."""
        call = r.sink
        if call is not None and len(call.str_chunks) >= _COMPACT_AT:
            _compact(call)
        return ds._feed(text)  # (`_take` hands the lag on)

    def unlag(call: Any) -> None:
        """`DeltaStream._unlag` while sinking, and the sunk pieces joined once there are many."""
        ds._unlag()
        if len(call.str_chunks) >= _COMPACT_AT:  # (checked here, not per piece: at most `_LAG_AT` more)
            _compact(call)

    def unsink(call: Any, text: str) -> _Deltas:
        """A piece of the sunk string that needs escaping, or ends it (`hot_feed`'s steps, with the common end read
        here: see `string_end`); `feed` is the stream's ``feed``, or `sink_feed` (from `sink_exit`): `feed` is put
        back here then, unless the string's end installs `held_feed`."""
        nonlocal fcall
        if r.follow is None:
            ds.feed = r.hot = feed
            return ds._partial_chunk(r, text)
        m = string_ends(text)
        if m is not None and (k := call.run) >= 0 and call is r.follow and text.isascii():
            parts = call.parts
            if len(parts) < _COMPACT_AT - 1:
                # the string ends, its last characters need no escaping, followed by nothing or by the next member cut
                # before its value: the steps below (`_unsink`, `JsonPartial.end_string`) in one, the sunk pieces
                # and the fragment in one item of `parts`
                q = m.end(1)
                j = q + 1
                chunks = call.str_chunks  # (== `p._chunks`: the string sunk)
                if q:
                    chunks.append(text[:q])
                call.run = -1
                r.sink = None
                try:
                    frame = p.following
                    frame.node[frame.open_key] = v = chunks[0] if len(chunks) == 1 else join(chunks)
                    p._chunks = []
                    p._mode = _AFTER
                    p.version += 1
                    frame.open_key = None
                    frame.version += 1
                    p.wait = _WAIT_MEMBER
                    if j < len(text):
                        rest = text[j:]
                        p.quotes = 3 - rest.count('"')  # (those the cut's groups see: `_CUT_MEMBER`)
                        pending_append(rest)
                        text = text[:j]
                    else:
                        p.quotes = 3
                except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                    ds.feed = r.hot = feed
                    ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                    return []
                # (the sunk pieces, the last ones, and the quote: the string's text `v` after its first `k` pieces, cut
                # from it where `k` is 0 or 1, as `member_end` leaves it: one join fewer)
                parts.append((v if not k else v[len(chunks[0]) :] if k == 1 else join(chunks[k:])) + '"')
                fcall = call
                ds.feed = r.hot = held_feed
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
        if r.hot is not feed:  # (from `sink_exit`)
            ds.feed = r.hot = feed
        k = call.run  # `delta_state._unsink`, inlined
        if k >= 0:
            call.run = -1
            chunks = call.str_chunks
            n = len(chunks)
            if n > k:
                parts = call.parts
                parts.append(chunks[k] if n == k + 1 else "".join(chunks[k:]))
                if len(parts) >= _COMPACT_AT:
                    _join_pieces(parts)
        r.sink = None  # (`DeltaStream._follow_chunk`: while following, the parser knows its open string)
        call = r.follow
        q = _STR_RUN.match(text).end()
        if q < len(text) and text[q] == '"':  # the string ends, its last characters need no escaping
            j = q + 1
            if j == len(text):
                quotes = 3
            elif (t := _CUT_MEMBER.match(text, j)) is not None:  # the next member, cut before its value
                quotes = 3 if (g := t.lastindex) is None else 3 - g
            else:
                return string_end(call, text, q)
            try:  # `JsonPartial.end_string`, inlined for these two (the string's last characters need no escaping)
                chunks = p._chunks
                if q:
                    chunks.append(text[:q])
                frame = p.following
                frame.node[frame.open_key] = chunks[0] if len(chunks) == 1 else "".join(chunks)
                p._chunks = []
                p._mode = _AFTER
                p.version += 1
                frame.open_key = None
                frame.version += 1
                p.wait = _WAIT_MEMBER
                p.quotes = quotes
                if j < len(text):
                    pending_append(text[j:])
                    text = text[:j]
                fcall = call
                ds.feed = r.hot = held_feed
            except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                return []
            parts = call.parts
            if not text.isascii() or len(parts) >= _COMPACT_AT:
                out: _Deltas = []
                ds._send(call, text, out)  # (surrogates, compaction)
                return out
            parts.append(text)
            return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
        if _ESCAPED_RUN.match(text).end() == len(text) and text.isprintable():
            # more of the string, with escapes json.dumps writes as they are here: the text is the fragment, and
            # the string is sunk again (what `general` reading it with `JsonPartial.feed` does, in one decode)
            chunks = p._chunks  # (== `call.str_chunks`: the string sunk)
            chunks.append(_scanstring(text + '"', 0)[0])
            r.sink = call
            call.str_chunks = chunks
            call.run = len(chunks)
            sink_on(call)
            parts = call.parts
            if len(parts) < _COMPACT_AT:
                parts.append(text)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            out = []
            ds._send(call, text, out)  # (compaction)
            return out
        return general(call, text, p.feed)  # (an escape: read by the parser, which sinks the string again if open)

    def string_end(call: Any, text: str, q: int) -> _Deltas:
        """The sunk string ends at `q` in `text` and more than a cut member follows: `JsonPartial.end_string`."""
        try:
            res = p.end_string(text, q)
            if p.following is not None:
                if not res:
                    return []
                parts = call.parts
                if not res.isascii() or len(parts) >= _COMPACT_AT:
                    out: _Deltas = []
                    ds._send(call, res, out)  # (surrogates, compaction)
                    return out
                parts.append(res)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
            return []
        return ds._follow_result(r, call, text, res)

    def member_end(call: Any, text: str) -> _Deltas:
        """A piece that may complete the member held back: `JsonPartial._follow_held`, with the common member read
        here (see the module docs). It installs the feed of the state it leaves (`held_feed`, `sink_feed`), or
        `feed`."""
        nonlocal fcall
        if len(lag) >= _LAG_AT:  # (`held_feed` leaves it to here)
            unlag_lag()
        if pending:
            s = join(pending) + text
            pending.clear()
        else:
            s = text
        frame = p.following
        keys = frame.keys
        m = next_member(s) if keys else first_member(s)
        if m is not None and (key := m[1]) not in (node := frame.node):
            g = m.lastindex  # the value's group: 2 integer, 3 literal, 4 string, 5 list, 6 open string
            if g == 6:  # a string opens, cut by the end of the text: the stream sinks it
                keys.append(key)
                frame.open_key = key
                p.version += 1
                frame.version += 1
                p._mode = _STR
                p._is_key = False
                v = m[6]
                p._chunks = chunks = [v] if v else []
                p.wait = None
                if not p._carry:  # (`JsonPartial.string_sink`: nothing is held back then)
                    r.sink = call
                    call.str_chunks = chunks
                    call.run = len(chunks)
                    sink_on(call)
                else:
                    ds.feed = r.hot = feed
            else:  # (followed by nothing, or by the next member cut before its value: held)
                keys.append(key)
                try:
                    node[key] = (
                        int(m[2]) if g == 2 else _scan_value(s, m.start(5))[0] if g == 5 else m[4] if g == 4
                        else _LITERALS[m[3]]
                    )
                except (ValueError, RecursionError):  # (as `_follow_held`: the body broke)
                    ds.feed = r.hot = feed
                    return ds._follow_result(r, call, text, p._break())
                except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                    ds.feed = r.hot = feed
                    ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                    return []
                if g == 4:  # (a string opened and ended: two changes)
                    p.version += 2
                    frame.version += 2
                else:
                    p.version += 1
                    frame.version += 1
                p._mode = _AFTER
                j = m.end()
                if j < len(s):  # (`wait` stays `_WAIT_MEMBER`, for the quotes still to come)
                    rest = s[j:]
                    p.quotes = 3 - rest.count('"')
                    pending_append(rest)
                    s = s[:j]
                else:
                    p.quotes = 3
                # (from `held_feed` or `held_exit`: installed, for `call`; `r.hot` is `ds.feed` here, and a slot:
                # ``ds.feed`` shadows a method, which CPython reads and writes unspecialized)
                if r.hot is not held_feed:
                    fcall = call
                    ds.feed = r.hot = held_feed
            parts = call.parts  # (`sent`, inlined)
            if (s.isascii() or s.isprintable()) and len(parts) < _COMPACT_AT:
                parts.append(s)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": s}}]}]
            return sent(call, s)
        ds.feed = r.hot = feed
        pending_append(s)  # (undone: `_follow_held` reads it all, as before)
        return general(call, "", p._follow_held)

    def sent(call: Any, res: str) -> _Deltas:
        """The delta of fragment `res` of the followed arguments."""
        parts = call.parts
        if (res.isascii() or res.isprintable()) and len(parts) < _COMPACT_AT:  # (no lone surrogate)
            parts.append(res)
            return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
        out: _Deltas = []
        ds._send(call, res, out)  # (surrogates, compaction)
        return out

    def other(call: Any, text: str) -> _Deltas:
        """Following, not between members held for the usual characters: a list or a number held back (`wait`
        other than `_WAIT_MEMBER`), or a string value the stream does not sink."""
        wait = p.wait
        if wait is not None:
            if wait.isdisjoint(text):  # `JsonPartial.hold`, inlined
                q = p.quotes
                if not q:
                    pending.append(text)
                    return []
                n = text.count('"')
                if n < q:
                    p.quotes = q - n
                    pending.append(text)
                    return []
            return general(call, text, p._follow_held)
        return general(call, text, p.feed)

    def general(call: Any, text: str, read: Callable[[str], Any]) -> _Deltas:
        """`DeltaStream._follow_chunk`, as `hot_feed` inlines it: the reader's `read` of `text`, and its result."""
        try:
            res = read(text)
            if type(res) is str and p.following is not None:
                if p.wait is None:  # (in a string value the stream is not sinking)
                    chunks = p.string_sink()
                    if chunks is not None:  # its pieces so far are in `res`: a sink
                        r.sink = call
                        call.str_chunks = chunks
                        call.run = len(chunks)
                if not res:
                    return []
                return sent(call, res)
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
            return []
        return ds._follow_result(r, call, text, res)

    return feed
