"""The per-piece path of a `DeltaStream` in a tool region whose arguments stream without events: a string
argument the stream appends to itself (`_Region.sink`) or an arguments object its partial parser writes out
(`_Region.follow`, `JsonPartial.follow`).

`hot_feed` makes, per region, a function that the stream installs as its ``feed`` while that region is open
(only a stream with its own parser, not coalescing): the branch of `DeltaStream._feed` for such a region, with
`DeltaStream._take`'s common case (the piece is kept for the parser, `_lag`) inlined and the region, its partial
parser and the lag list bound once instead of looked up per piece. It takes only pieces that `_take` would keep;
anything else (a piece that may end the region, an empty piece, the region closed, neither sink nor follow) goes
to `DeltaStream._feed`, before anything was done with it, so the deltas are those of `_feed` piece by piece.
`hot_text` does the same for a text region whose text streams with its trailing whitespace held back. Both keep a
sure beginning of a delimiter that ends a piece (`delta_tail.cut_tail`: ``x <``) and take the text before it here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hf_response_templates.delta_state import _COMPACT_AT, _compact, _join_pieces, _Region, _unsink
from hf_response_templates.delta_tail import cut_tail, joined_feed
from hf_response_templates.partial.json_reader import _STR_RUN, _WAIT_MEMBER, JsonPartial

_LAG_AT = 128  # pieces kept by `DeltaStream._take` before the parser gets them anyway


def hot_feed(ds: Any, r: _Region) -> Callable[[str], list[dict[str, Any]]]:
    """The ``feed`` of stream `ds` (a `DeltaStream` with its own parser) while tool region `r` is open: for a plain
    `JsonPartial`, `delta_json_hot.json_hot_feed`'s (a followed member's end read in the same call), else
    `_hot_feed`'s."""
    if type(r.partial) is JsonPartial:
        from hf_response_templates import delta_json_hot  # (it imports this module's `_LAG_AT`)

        return delta_json_hot.json_hot_feed(ds, r)
    return _hot_feed(ds, r)


def _hot_feed(ds: Any, r: _Region) -> Callable[[str], list[dict[str, Any]]]:
    """`hot_feed` for any partial parser (the branches for a plain `JsonPartial` are `json_hot_feed`'s oracle)."""
    slow = ds._feed
    lag = ds._lag
    unlag = ds._unlag
    p = r.partial
    # A member held back (`JsonPartial.wait`) is read on by `JsonPartial._follow_held`: `JsonPartial.feed` while
    # following, between members (what `wait` is set for), not broken (it stops following then), text not
    # empty; a dialect's (`JsonDialectPartial.feed`) does more
    held_feed = p._follow_held if type(p) is JsonPartial else p.feed
    # (`JsonPartial.end_string`: where the text a string value sinks holds its closing quote)
    plain = _STR_RUN.match if type(p) is JsonPartial else None

    stop = r.stop  # (set at the region's open)
    quote = stop == '"'  # (then a piece without '"' has no `stop` either)
    # (`XmlTagsPartial.sink_test`: None for text holding `stop` that is all more of the open value)
    sink_test = getattr(p, "sink_test", None)

    def feed(text: str) -> list[dict[str, Any]]:
        # (the region's close, or the stream's finish, puts `_feed` back: `DeltaStream._on_close`)
        c = ds._lag_char
        if not c or not text or c in text and ((t := ds._lag_test) is None or t(text) is not None):
            # (a sure beginning of a delimiter ending it: kept, the text before it taken below, which never goes
            # to `_feed` when the region sinks or follows)
            cut = cut_tail(ds, text) if c and text and (r.sink is not None or r.follow is not None) else None
            if cut is None:
                call = r.sink
                if call is not None and len(call.str_chunks) >= _COMPACT_AT:
                    _compact(call)
                return slow(text)  # (`_take` hands the lag on)
            ds.feed = joined
            if not cut:
                return []
            text = cut
        call = r.sink
        if call is not None:
            lag.append(text)  # (`_take`, inlined)
            if len(lag) >= _LAG_AT:
                unlag()
                if len(call.str_chunks) >= _COMPACT_AT:  # (checked here, not per piece: at most `_LAG_AT` more)
                    _compact(call)
            if (
                '"' not in text
                and "\\" not in text
                and text.isprintable()
                and (quote or stop not in text or sink_test is not None and sink_test(text) is None)
            ):
                # (as `DeltaStream._feed`: text needing no JSON escaping is the next piece of the string the
                # partial parser sits in, and its fragment; in `call.parts` later: `_Call.run`)
                call.str_chunks.append(text)
                return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
            if r.follow is None:
                return ds._partial_chunk(r, text)
            _unsink(call)
            r.sink = None  # (`DeltaStream._follow_chunk`: while following, the parser knows its open string)
            call = r.follow
            if plain is not None:
                q = plain(text).end()
                if q < len(text) and text[q] == '"':  # the string ends, its last characters need no escaping
                    try:  # (with `JsonPartial.end_string` for its `feed`)
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
            feed = p.feed  # (an escape, or a character the stream does not append itself: read below, which
            # sinks the string again if it is still open)
        else:
            call = r.follow
            if call is None:
                ds.feed = slow  # (neither: the general path, until `_feed` meets a sink or follow again)
                return slow(text)
            lag.append(text)
            if len(lag) >= _LAG_AT:
                unlag()
            wait = p.wait
            if wait is not None:
                if (
                    "}" not in text and "]" not in text if wait is _WAIT_MEMBER else wait.isdisjoint(text)
                ):  # `JsonPartial.hold`, inlined (two `in` tests are cheaper than a set's for the common wait)
                    if '"' not in text:  # (the quotes still to come stay as they are: no count)
                        p.pending.append(text)
                        return []
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
                        _join_pieces(chunks)
                        _join_pieces(parts)
                    return [{"tool_calls": [{"index": call.index, "function": {"arguments": text}}]}]
                feed = p.feed
        try:  # `DeltaStream._follow_chunk`, inlined for what a member's end writes
            res = feed(text)
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

    joined = joined_feed(ds, feed)
    return feed


def hot_text(ds: Any, r: _Region, key: str) -> Callable[[str], list[dict[str, Any]]]:
    """The ``feed`` of stream `ds` (a `DeltaStream` with its own parser) while text region `r` streams under
    `key` with its trailing whitespace held back (`_Region.hot_key`): `DeltaStream._feed`'s branch for such a
    region, with `DeltaStream._take`'s common case (the piece is kept for the parser, `_lag`) and
    `DeltaStream._text_piece` inlined: one call per piece instead of three. Any other piece goes to `_feed`
    before anything was done with it."""
    slow = ds._feed
    lag = ds._lag
    unlag = ds._unlag
    sent = r.sent  # (joined in place: the same list for the region's life)

    def feed(text: str) -> list[dict[str, Any]]:
        c = ds._lag_char
        if not c or not text or c in text and ((t := ds._lag_test) is None or t(text) is not None):
            cut = cut_tail(ds, text) if c and text else None  # (as in `hot_feed`)
            if cut is None:
                return slow(text)  # (`_take` hands the lag on)
            ds.feed = joined
            if not cut:
                return []
            text = cut
        lag.append(text)  # (`_take`, inlined)
        if len(lag) >= _LAG_AT:
            unlag()
            if len(sent) >= _COMPACT_AT:  # (checked here, not per piece: at most `_LAG_AT` more, as in `hot_feed`)
                _join_pieces(sent)
        held = r.held  # (`_text_piece`, inlined)
        if held:
            text = held + text
            r.held = ""
        core = text.rstrip()
        if core is not text:  # (`rstrip` returns the string itself when there is nothing to strip)
            r.held = text[len(core) :]
            if not core:
                return []
        sent.append(core)
        return [{key: core}]

    joined = joined_feed(ds, feed)
    return feed
