"""The per-piece path of a `DeltaStream` in a tool region whose arguments stream without events: a string
argument the stream appends to itself (`_Region.sink`) or an arguments object its partial parser writes out
(`_Region.follow`, `JsonPartial.follow`).

`hot_feed` makes, per region, a function that the stream installs as its ``feed`` while that region is open
(only a stream with its own parser, not coalescing): the branch of `DeltaStream._feed` for such a region, with
`DeltaStream._take`'s common case (the piece is kept for the parser, `_lag`) inlined and the region, its partial
parser and the lag list bound once instead of looked up per piece. It takes only pieces that `_take` would keep;
anything else (a piece that may end the region, an empty piece, the region closed, neither sink nor follow) goes
to `DeltaStream._feed`, before anything was done with it, so the deltas are those of `_feed` piece by piece.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hf_response_templates.delta_state import _COMPACT_AT, _Region
from hf_response_templates.partial.json_reader import _STR_RUN, JsonPartial

_LAG_AT = 128  # pieces kept by `DeltaStream._take` before the parser gets them anyway


def hot_feed(ds: Any, r: _Region) -> Callable[[str], list[dict[str, Any]]]:
    """The ``feed`` of stream `ds` (a `DeltaStream` with its own parser) while tool region `r` is open."""
    slow = ds._feed
    lag = ds._lag
    unlag = ds._unlag
    p = r.partial
    # A member held back (`JsonPartial.wait`) is read on by `JsonPartial._follow_feed`, where `JsonPartial.feed`
    # sends text while following, outside a string, not broken (it stops following then), text not empty; a
    # dialect's (`JsonDialectPartial.feed`) does more
    held_feed = p._follow_feed if type(p) is JsonPartial else p.feed
    # (`JsonPartial.end_string`: where the text a string value sinks holds its closing quote)
    plain = _STR_RUN.match if type(p) is JsonPartial else None

    def feed(text: str) -> list[dict[str, Any]]:
        if ds._open is not r:  # (the region closed: `_feed` from now on, which installs another region's)
            ds.feed = slow
            return slow(text)
        c = ds._lag_char
        if not c or not text or c in text and ((t := ds._lag_test) is None or t(text) is not None):
            return slow(text)  # (`_take` hands the lag on)
        call = r.sink
        if call is not None:
            lag.append(text)  # (`_take`, inlined)
            if len(lag) >= _LAG_AT:
                unlag()
            if '"' not in text and "\\" not in text and r.stop not in text and text.isprintable():
                # (as `DeltaStream._feed`: text needing no JSON escaping is the next piece of the string the
                # partial parser sits in, and its fragment)
                call.parts.append(text)
                chunks = call.str_chunks
                chunks.append(text)
                if len(chunks) >= _COMPACT_AT:
                    chunks[:] = ["".join(chunks)]
                    parts = call.parts
                    parts[:] = ["".join(parts)]
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            if r.follow is None:
                return ds._partial_chunk(r, text)
            if plain is not None:
                q = plain(text).end()
                if q < len(text) and text[q] == '"':  # the string ends, its last characters need no escaping
                    r.sink = None  # (`DeltaStream._follow_chunk`, with `JsonPartial.end_string` for its `feed`)
                    try:
                        res = p.end_string(text, q)
                        if p.following is not None:
                            if not res:
                                return []
                            parts = call.parts
                            if not res.isascii() or len(parts) >= _COMPACT_AT:
                                out: list[dict] = []
                                ds._send(call, res, out)  # (surrogates, compaction)
                                return out
                            parts.append(res)
                            return [{"tool_calls": [{"index": call.index, "function": {"arguments": res}}]}]
                    except Exception as e:  # noqa: BLE001 - model output must never crash a server loop
                        ds.warnings.append(f"{type(e).__name__}: {e} (streaming {r.name})")
                        return []
                    return ds._follow_result(r, call, text, res)
            return ds._follow_chunk(r, text)
        call = r.follow
        if call is None:
            ds.feed = slow  # (neither: the general path, until `_feed` meets a sink or follow again)
            return slow(text)
        lag.append(text)
        if len(lag) >= _LAG_AT:
            unlag()
        wait = p.wait
        if wait is not None:
            if wait.isdisjoint(text):  # `JsonPartial.hold`, inlined
                q = p.quotes
                if not q:
                    p.pending.append(text)
                    return []
                n = text.count('"')
                if n < q:
                    p.quotes = q - n
                    p.pending.append(text)
                    return []
            feed = held_feed
        else:  # (in a string value)
            chunks = p.sink  # the json dialect's custom-delimited string (`JsonDialectPartial.sink`)
            if (
                chunks is not None
                and p.sink_stop not in text
                and '"' not in text
                and "\\" not in text
                and text.isprintable()
            ):
                chunks.append(text)
                parts = call.parts
                parts.append(text)
                if len(chunks) >= _COMPACT_AT:  # (`parts` with them: at most twice as many, as for `_Region.sink`)
                    chunks[:] = ["".join(chunks)]
                    parts[:] = ["".join(parts)]
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            feed = p.feed
        try:  # `DeltaStream._follow_chunk`, inlined for what a member's end writes
            res = feed(text)
            if type(res) is str and p.following is not None:
                if p.wait is None and p.sink is None:  # (in a string value the stream is not sinking)
                    chunks = p.string_sink()
                    if chunks is not None:  # its pieces so far are in `res`: a sink
                        r.sink = call
                        call.str_chunks = chunks
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
