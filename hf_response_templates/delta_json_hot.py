"""`json_hot_feed`: `delta_hot.hot_feed` for a tool region whose partial parser is a plain `JsonPartial` (Hermes and
the other JSON formats), with a member's end read in the same call.

While the arguments object is followed (`JsonPartial.follow`), a piece that may complete the member held back
(`JsonPartial.wait`) went through `hot_feed`, `JsonPartial._follow_held` and `JsonPartial._follow_members`: three
frames, a list of fragments and a failed match before the cut start of the next member was recognised. Here the
common case is read in place: the held text and the piece, joined, start with one whole member as json.dumps writes
it (`_FIRST_MEMBER` / `_NEXT_MEMBER`), followed by nothing or by the next member cut before its value
(`_CUT_MEMBER`). The reader's state is then changed exactly as `_follow_members` changes it for that text, and the
fragment (the member's text) is the delta. Anything else (a duplicate key, more text after the member, a member the
pattern does not take) is handed, untouched, to `_follow_members`, as before. The other branches are those of
`hot_feed` (without the dialect's), so the deltas are the same piece by piece.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hf_response_templates.delta_hot import _LAG_AT
from hf_response_templates.delta_state import _COMPACT_AT, _compact, _Region, _unsink
from hf_response_templates.partial.json_reader import (
    _AFTER,
    _CUT_MEMBER,
    _FIRST_MEMBER,
    _LITERALS,
    _NEXT_MEMBER,
    _STR,
    _STR_RUN,
    _WAIT_MEMBER,
    _scan_value,
)


def json_hot_feed(ds: Any, r: _Region) -> Callable[[str], list[dict[str, Any]]]:
    """The ``feed`` of stream `ds` while tool region `r`, whose partial parser is a `JsonPartial` (not a dialect's
    subclass), is open: `delta_hot.hot_feed`'s, with the end of a followed member read here (see the module docs)."""
    slow = ds._feed
    lag = ds._lag
    unlag = ds._unlag
    p = r.partial
    pending = p.pending  # (the same list for the reader's life: only appended to and cleared)
    follow_members = p._follow_members
    plain = _STR_RUN.match
    first_member = _FIRST_MEMBER.match
    next_member = _NEXT_MEMBER.match
    cut_member = _CUT_MEMBER.match
    stop = r.stop  # (set at the region's open)
    quote = stop == '"'  # (then a piece without '"' has no `stop` either)

    def feed(text: str) -> list[dict[str, Any]]:
        # (the region's close, or the stream's finish, puts `_feed` back: `DeltaStream._on_close`)
        c = ds._lag_char
        if not c or not text or c in text and ((t := ds._lag_test) is None or t(text) is not None):
            call = r.sink
            if call is not None and len(call.str_chunks) >= _COMPACT_AT:
                _compact(call)
            return slow(text)  # (`_take` hands the lag on)
        call = r.sink
        if call is not None:  # (as `hot_feed`)
            lag.append(text)
            if len(lag) >= _LAG_AT:
                unlag()
                if len(call.str_chunks) >= _COMPACT_AT:
                    _compact(call)
            if '"' not in text and "\\" not in text and (quote or stop not in text) and text.isprintable():
                call.str_chunks.append(text)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            if r.follow is None:
                return ds._partial_chunk(r, text)
            _unsink(call)
            r.sink = None
            call = r.follow
            q = plain(text).end()
            if q < len(text) and text[q] == '"':
                try:
                    res = p.end_string(text, q)
                    if p.following is not None:
                        if not res:
                            return []
                        parts = call.parts
                        if not res.isascii() or len(parts) >= _COMPACT_AT:
                            out: list[dict] = []
                            ds._send(call, res, out)
                            return out
                        parts.append(res)
                        return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
                except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                    ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                    return []
                return ds._follow_result(r, call, text, res)
            feed = p.feed
        else:
            call = r.follow
            if call is None:
                ds.feed = slow
                return slow(text)
            lag.append(text)
            if len(lag) >= _LAG_AT:
                unlag()
            wait = p.wait
            if wait is _WAIT_MEMBER:  # between members: `JsonPartial.hold`, inlined
                if "}" not in text and "]" not in text:
                    if '"' not in text:
                        pending.append(text)
                        return []
                    q = p.quotes
                    if not q:
                        pending.append(text)
                        return []
                    n = text.count('"')
                    if n < q:
                        p.quotes = q - n
                        pending.append(text)
                        return []
                # `JsonPartial._follow_held`, with its first member read here when the pattern takes it
                if pending:
                    pending.append(text)
                    s = "".join(pending)
                    pending.clear()
                else:
                    s = text
                frame = p.following
                keys = frame.keys
                m = next_member(s) if keys else first_member(s)
                if m is not None and (key := m[1]) not in (node := frame.node):
                    try:
                        g = m.lastindex  # the value's group: 2 integer, 3 literal, 4 string, 5 list, 6 open string
                        keys.append(key)
                        if g == 6:  # a string opens, cut by the end of the text: the stream sinks it
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
                            res = s
                        else:
                            if g == 4:
                                node[key] = m[4]
                                p.version += 2
                                frame.version += 2
                            else:
                                node[key] = (
                                    int(m[2]) if g == 2 else _LITERALS[m[3]] if g == 3 else _scan_value(s, m.start(5))[0]
                                )
                                p.version += 1
                                frame.version += 1
                            p._mode = _AFTER
                            j = m.end()
                            if j == len(s):
                                p.quotes = 3  # (`wait` stays `_WAIT_MEMBER`)
                                res = s
                            else:
                                t = cut_member(s, j)
                                if t is not None:  # the next member, cut before its value: held
                                    pending.append(s[j:])
                                    g = t.lastindex
                                    p.quotes = 3 if g is None else 3 - g
                                    res = s[:j]
                                else:
                                    out = [s[:j]]
                                    follow_members(s, j, out)
                                    res = out[0] if len(out) == 1 else "".join(out)
                                    if p.following is None or p.wait is None:
                                        return _after(call, res)
                    except (ValueError, RecursionError):
                        res = p._break()
                        return ds._follow_result(r, call, text, res)
                    except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                        ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                        return []
                    parts = call.parts
                    if (res.isascii() or res.isprintable()) and len(parts) < _COMPACT_AT:
                        parts.append(res)
                        return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
                    out = []
                    ds._send(call, res, out)
                    return out
                pending.append(s)  # (undone: `_follow_held` reads it all, as before)
                feed = p._follow_held
                text = ""
            elif wait is not None:
                if wait.isdisjoint(text):
                    q = p.quotes
                    if not q:
                        pending.append(text)
                        return []
                    n = text.count('"')
                    if n < q:
                        p.quotes = q - n
                        pending.append(text)
                        return []
                feed = p._follow_held
            else:  # (in a string value the stream does not sink)
                feed = p.feed
        return _general(feed, call, text)

    def _after(call: Any, res: str) -> list[dict[str, Any]]:
        """`hot_feed`'s steps after the reader's feed returned `res` (a str) and `following` may have ended or a
        string opened: as `_general` from its result on."""
        return _result(call, "", res)

    def _general(feed: Callable[[str], Any], call: Any, text: str) -> list[dict[str, Any]]:
        """`hot_feed`'s general step: the reader's `feed` (or `_follow_held`) of `text`, and its result."""
        try:
            res = feed(text)
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
            return []
        return _result(call, text, res)

    def _result(call: Any, text: str, res: Any) -> list[dict[str, Any]]:
        try:  # `DeltaStream._follow_chunk`, inlined for what a member's end writes
            if type(res) is str and p.following is not None:
                if p.wait is None:  # (in a string value the stream is not sinking)
                    chunks = p.string_sink()
                    if chunks is not None:  # its pieces so far are in `res`: a sink
                        r.sink = call
                        call.str_chunks = chunks
                        call.run = len(chunks)
                if not res:
                    return []
                parts = call.parts
                if (res.isascii() or res.isprintable()) and len(parts) < _COMPACT_AT:  # (no lone surrogate)
                    parts.append(res)
                    return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
                out: list[dict] = []
                ds._send(call, res, out)  # (surrogates, compaction)
                return out
        except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
            ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
            return []
        return ds._follow_result(r, call, text, res)

    return feed
