"""A piece of a `DeltaStream`'s lagged region that ends in a sure beginning of a delimiter (`<` of Qwen3-Coder's
`</function>`, `<|` of Gemma 4's `<|tool_response>`, `<` of SmolLM3's `<|im_end|>` in ``x <``): its end kept by the
stream, the rest taken as any other piece (in the hot feeds of `delta_hot`: tool regions that sink or follow their
arguments, text regions).

While its own parser stands in an open region (`ResponseParser.region_char`), a stream keeps the pieces the parser
would take whole (`DeltaStream._lag`) and hands them on later, joined. A piece in which the parser's lead test
(`ResponseParser.region_test`) finds something goes to the parser's `feed` at once, after the lag; the parser then
stops taking pieces until the stream asks again. Where all the test finds is a proper beginning of a delimiter's
fixed text at the end of the piece that the parser holds for sure (`ResponseParser.region_holds`, the watch's
`feed_holds`), its `feed` would hold that end without a scan and give the text before it as one ``region_chunk``
(`ResponseParser._held_end`, `steady_found.found_in_steady`, the lone `<` of its steady state), and at the next
piece it would read the held end and that piece joined, as one text. So the stream does that itself
(`cut_tail`): it keeps the end (`DeltaStream._tail`) and takes the text before it as a lagged piece; the next
piece is joined to the kept end before anything else (`joined_feed`, installed as the stream's ``feed``;
`DeltaStream._feed` and `DeltaStream.finish` also take a kept end first) and goes its way: lagged if the test
finds nothing in the two joined (a value's `<` in Gemma 4's `<|"|>`, Qwen3-Coder's `</parameter>`), kept again if
it ends in such a beginning, else to the parser's `feed` (which sees the same joined text it would have joined
itself). The deltas are those of the parser holding the end, piece by piece (`tests/test_delta_tail.py`); the
parser is not called at all for such a piece, nor for the next one, and stays in its region state, so the pieces
after them are lagged too, where they went through `feed` until the stream asked the parser again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_Deltas = list[dict[str, Any]]


def cut_tail(ds: Any, text: str) -> str | None:
    """For a hot feed (`delta_hot`) of stream `ds` whose lag test found something in `text` (not empty): the text
    before a sure beginning of a delimiter that ends `text` and is all the test finds (the text before it ends in
    no beginning itself: it is lagged, and may be handed on alone), that beginning kept in `ds._tail` (the caller
    installs its `joined_feed`, and takes the text before it without `DeltaStream._feed`, which would take the kept
    end first); None if the piece must go to the stream's `_feed`."""
    holds = ds._lag_holds
    if holds is None:  # (asked once per `_lag_test`)
        holds = ds._lag_holds = ds._region_holds() or frozenset()
    t = ds._lag_test
    if not holds or t is None or not ds._lag_char:
        return None
    found = t(text)
    if found is None or found.end() != len(text):
        return None
    i = found.start()
    if text[i:] not in holds:
        return None
    if not i:
        ds._tail = text
        return ""
    cut = text[:i]
    if t(cut) is not None:  # (it ends in a beginning of one too, `<<`: a lagged piece must not)
        return None
    ds._tail = text[i:]
    return cut


def joined_feed(ds: Any, feed: Callable[[str], _Deltas]) -> Callable[[str], _Deltas]:
    """The ``feed`` of stream `ds` while it keeps an end cut by `cut_tail`: puts `feed` (the region's hot feed)
    back and gives it the kept end and the piece, joined."""

    def joined(text: str) -> _Deltas:
        ds.feed = feed
        tail = ds._tail
        ds._tail = ""
        return feed(tail + text)

    return joined
