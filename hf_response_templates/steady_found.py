"""`feed()`'s steady state where its trigger finds something in a chunk (issue 19).

In the steady state (`ResponseParser._fast_state`: a region open, nothing held), a chunk with one of the watch's
prefilter characters is searched by the tuple's trigger (`Watch.feed_trigger`: the fixed texts the delimiters start
with, or a beginning of one ending the chunk). Where it found something, `feed()` went on through its slow path,
which settles the steady state's text, checks the state again and runs the same trigger on the same chunk before
deciding from its find (`ResponseParser._held_end`, `_guards_only`, else `_scan`): ~45-110 Python opcodes per such
chunk before the decision, and for a held beginning (` <` with two prefilter characters, GigaChat's ` f`) a new
tuple at the next chunk. `found_in_steady` decides from the find the steady state already has, in the same order,
for a tuple without markup (the markup's trigger is joined into the tuple's there, `Markup.joint_trigger`, so its
find is not the watch's).
"""

from __future__ import annotations

from typing import Any

from .region_change import held_chunk


def found_in_steady(p: Any, fast: tuple, text: str, found: Any) -> list[dict[str, Any]]:
    """`p.feed(text)` for a `ResponseParser` in the steady state `fast` (a tuple without markup) whose trigger found
    `found` in `text`: what the rest of `feed()` does then, without its checks (it would find the same with the same
    trigger). A sure beginning of a delimiter ending `text` (` f` of GigaChat's `function call`, `<｜` of DeepSeek's
    `<｜DSML｜`, `Watch.feed_holds`) is held and what is before it routed (`_held_end`); the next chunk is looked at
    from `_held_fast` (the tuple's `hold_next` for its lone character, else its trigger of the two joined). Else a
    lookbehind guard's character no match can follow is routed (`_guards_only`), or the text is scanned."""
    i = found.start()
    if found.end() == len(text) and text[i:] in fast[9]:
        p._buf = text[i:]
        p._fheld = True
        p._fast = None
        if fast[6] is None or i == len(text) - 1:
            p._held_fast = fast  # (the text before it waits in `_acc`, settled from there)
            return p._fast_route(fast, text[:i]) if i else []
        # (`hold_next` is for the lone character: the next chunk goes the whole way, so nothing stays in `_acc`)
        if not i:
            p._settle()
            return []
        p._acc(text[:i])
        p._settle()
        event = fast[8].copy()
        event["text"] = text[:i]
        return [event]
    watch = p._watch
    if watch.guard_only is not None and p._guards_only(found, text, watch):
        p._acc(text)  # (Llama 4's `}` that no match can follow: routed)
        if p._fast is None:  # (it ends the text: `_rescan`, no steady state to settle `_acc` later)
            p._settle()
        event = fast[8].copy()
        event["text"] = text
        return [event]
    p._settle()
    events: list[dict[str, Any]] = []
    if text == watch.lit_alone and watch.whole is not None and held_chunk(p, text, events):
        return events  # (the watch's one literal, `</think>` in one chunk: `region_change.py`)
    p._scan(text, events, False)
    return events
