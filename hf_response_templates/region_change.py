"""Region changes in a stream: a held delimiter that a chunk completes, and the steady state after it (issue 19).

A delimiter streamed token by token (Kimi K3's ``<|close|>`` ``think`` ``<|sep|>``, gpt-oss's ``<|end|>``) is held
by the scan of its first token; the chunk with its last token ends it exactly, and the parser scanned the window
again (context, held text, chunk): a window and a memo built, `Watch.scan` (or `held_commit.commit_at` inside it),
the loop's bookkeeping, then the region change and the steady state rebuilt (250-400 Python opcodes per delimiter
before the change itself, a third of a 1k Kimi K3 stream's cost).

When the text from the held start is one whole delimiter, what the scan answers depends on that text alone, for a
watch whose regexes look at nothing before the position asked (`Watch.held_memo`, or a watch of one literal): the
delimiter at the held start, from the start to the end of the window (nothing is left to scan: the loop stops
there). `Watch.whole` keeps those answers per watch, built once (the lone literal of a close) or remembered the
first time `commit_at` gives one (bounded, as `held_memo`), so `commit_whole` commits it with the state the scan
would leave and nothing else; any other answer (a partial match, a delimiter that ends before the chunk does, a
zero-width one, a JSON value's end scanner to start) goes to the scan as before.

`steady_for` is `ResponseParser._fast_state`'s tuple for a region without markup: a function of the watch and the
field only, so it is built once per (watch, field) and kept on the watch (`Watch.steady`), not rebuilt at every
region change and scan.

`tests/test_region_change.py` compares both with the scan and the tuple they replace.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from .delimiters import LOOKBEHIND_CONTEXT, MAX_DELIMITER_LENGTH, OPEN, Watch
from .held import still_held
from .held_commit import commit_at
from .held_memo import MEMO_LIMIT

#: `Watch.whole`'s answer for a text that is not a whole delimiter the scan commits (kept: asked once per text).
NOT_WHOLE = False

#: `Watch.whole`'s answer for a text the scan holds whole, from its start (a partial match there, for sure).
HELD = True


def held_chunk(p: Any, text: str, events: Any) -> bool:
    """`p.feed(text)`'s work (a `ResponseParser` past its steady-state paths, its `_acc` settled, not finalized, not at
    the end of the stream, `text` not empty, its watch with a `Watch.whole`; maybe nothing held, for a watch without
    regexes) where the text from `p._consumed` (held, then `text`) is known to the watch: held whole again (`HELD`:
    the held text grown, as `_scan` leaves it after `held.still_held`), or a delimiter committed from its start (its
    events added to `events`): then True. False, with nothing done, where it is not known (the usual path decides)."""
    if p._vend is not None:
        return False
    watch = p._watch
    held = p._buf + text
    got = watch.whole.get(held)
    if got.__class__ is not tuple and got is not HELD:
        return False
    if watch.regexes:  # (`commit_at`'s and `still_held`'s premise: the last scan of this watch held from here)
        r = p._resume
        if r is None or r[0] is not watch or r[1] != p._consumed or p._disabled:
            return False
    if got is HELD:  # (no regex runs: nothing to time, as for a markup chunk without one)
        p._buf = held
        p._fheld = False
        behind = watch.behind
        p._rescan = behind is not None and held[-1] in behind
        p._fast = None
        return True
    if p._ctx_on and p._ctx_at != p._consumed:
        p._sync_ctx()
    return commit_whole(p, got, held, events, False)


def held_scan(p: Any, resume: tuple, text: str, events: Any, timed: bool) -> bool:
    """`p._scan(text)`'s start (a `ResponseParser`, not at the end of the stream, no JSON value-end scanner, no
    disabled delimiter) where the last scan of the watch, which has a `Watch.whole`, held text from `p._consumed`
    (`resume`: its `_resume`): if the held text and `text` are known to it, or `held.still_held` says they are
    still held, or `held_commit.commit_at` finds one whole delimiter in them (then known), leave the state the scan
    would and return True; else False (the scan goes on: `_resume` is still valid)."""
    watch = resume[0]
    whole = watch.whole
    held = p._buf + text
    got = whole.get(held)
    if got is None or got is NOT_WHOLE:
        # (NOT_WHOLE, learned where `still_held` could not say, e.g. after a scan held the text for another
        # delimiter, says only that no delimiter is whole there: the text may be held all the same, a fact about it
        # `still_held` knows now, which `remember_held` keeps)
        if still_held(watch, resume[4], p._ctx, held):
            remember_held(whole, held)
            got = HELD
        elif got is None and watch.regexes:
            got = learn_whole(watch, whole, held)  # (not yet asked: `held_commit.commit_at`)
    if got is HELD:
        p._buf = held
        p._fheld = False
        behind = watch.behind
        p._rescan = behind is not None and held[-1] in behind
        p._fast = None
        if timed:
            p._left -= perf_counter() - p._t0
            if p._left < p._timeout:
                p._spend(0.0, events)
        return True
    return got.__class__ is tuple and commit_whole(p, got, held, events, timed)


def learn_whole(watch: Watch, whole: dict, held: str) -> Any:
    """`watch.whole`'s answer for `held` (text the last scan of `watch`, a watch with regexes and `held_memo`, held
    from its start, then more; not a partial match any longer: `held.still_held` said no), found by
    `held_commit.commit_at` and kept: `(delimiter, captures, end)` if the scan commits one delimiter from the start
    (to `end`: the text after it is scanned as a chunk of its own, Kimi K3's `<|open|>` after a call header whose
    match the header's end could still extend), else `NOT_WHOLE`."""
    got: Any = NOT_WHOLE
    if len(held) <= MAX_DELIMITER_LENGTH:
        ans = commit_at(watch, held, 0)
        if ans.__class__ is tuple:
            got = (ans[2], ans[3], ans[1])
    if len(whole) >= MEMO_LIMIT:
        whole.clear()
    whole[held] = got
    return got


def remember_held(whole: dict, held: str) -> None:
    """Keep in `whole` (a watch's `Watch.whole`, with regexes) that the scan holds `held` whole from its start
    (`held.still_held` said so: a partial match there; a fact about the text alone for such a watch)."""
    if len(held) <= MAX_DELIMITER_LENGTH:
        if len(whole) >= MEMO_LIMIT:
            whole.clear()
        whole[held] = HELD


def commit_whole(p: Any, got: tuple, held: str, events: Any, timed: bool) -> bool:
    """`p._scan(text)` (a `ResponseParser`, not at the end of the stream, no JSON value-end scanner running) where
    `held` (the held text and `text`, from the stream offset `p._consumed`) begins with a delimiter that the scan
    commits there: `got`, `(delimiter, captures, end)` from `Watch.whole` (for a watch with regexes, only where its
    last scan held text from `p._consumed` and no delimiter is disabled: `commit_at`'s premise). Commit it, leave the
    state that scan leaves (the text after `end`, if any, run as the next chunk: `_run`), return True; False, with nothing done, for an open whose JSON value-end scanner starts
    (the scan goes on into it, even with no text left). `timed`: the scan's clock runs (`p._t0`: a regex ran to
    know `got`), so its time is taken from the budget as the scan takes it."""
    d, groups, n = got
    if d.kind == OPEN and p._tpl.by_name[d.field].value_end is not None:
        return False
    at = p._consumed
    p._resume = None
    p._buf = ""
    p._fheld = False
    p._on_delimiter(d, dict(groups) if groups else groups, held, 0, n, events, at)
    p._consumed = at + n
    if p._ctx_on:
        ctx = p._ctx + held[:n] if n < len(held) else p._ctx + held
        p._ctx = ctx[-LOOKBEHIND_CONTEXT:] if len(ctx) > LOOKBEHIND_CONTEXT else ctx
        p._ctx_at = p._consumed
    if p._early:
        p._go_late()
    watch = p._watch
    p._rescan = watch is not None and watch.behind is not None and held[n - 1] in watch.behind
    if timed:
        p._left -= perf_counter() - p._t0
        if p._left < p._timeout:
            p._spend(0.0, events)
    if n < len(held):  # (what the scan's loop does with the rest of its window: the same from a window of its own)
        p._fast = None
        p._run(held[n:], events, False)
        return True
    p._fast = p._fast_state()
    return True


def steady_for(watch: Watch, cur: Any) -> tuple:
    """`ResponseParser._fast_state`'s tuple for the open region `cur` (a field without markup) under `watch` (whose
    `fast_chars` is set), from `watch.steady`, built there the first time. Its event is copied before use, never
    changed: the tuple is shared by every parser of the template."""
    got = watch.steady.get(cur)
    if got is None:
        chars = watch.fast_chars
        dirty = not cur.streamable
        got = watch.steady[cur] = (
            chars[0], chars[-1], cur.name, dirty, None, watch.lone_hold, watch.hold_next, watch.feed_trigger,
            {"type": "region_chunk", "field": cur.name, "text": "", "dirty": dirty}, watch.feed_holds)
    return got


def steady_markup(watch: Watch, cur: Any, mk: Any) -> tuple | None:
    """`ResponseParser._fast_state`'s tuple for the open region `cur`, a field with markup whose stream `mk` is idle,
    under `watch` (whose `fast_chars` is set), or None where no steady state applies: all but `mk` built once per
    watch and field and kept in `watch.steady` (an empty tuple for None)."""
    got = watch.steady.get(cur)
    if got is None:
        got = watch.steady[cur] = _markup_steady(watch, cur)
    return got[:4] + (mk,) + got[5:] if got else None


def _markup_steady(watch: Watch, cur: Any) -> tuple:
    """`steady_markup`'s tuple without its markup stream (None in its place), or `()`."""
    markup = cur.markup
    chars = watch.fast_chars
    # (the trigger: no delimiter's nor markup's fixed text in the chunk, `Markup.joint_trigger`)
    trigger = markup.joints.get(watch.feed_trigger, markup)
    if trigger is markup:
        trigger = markup.joint_trigger(watch.feed_trigger)
    if len(chars) > 1:  # two characters, one of them the markup's (Gemma 4's content: `<`, `c`; `<channel|>`)
        if markup.first_char not in chars:
            return ()
        return (chars[0], chars[1], cur.name, False, None, None, None, trigger,
                {"type": "region_chunk", "field": cur.name, "text": "", "dirty": False}, None)
    hold = watch.lone_hold
    after = markup.next_chars
    if hold is not None and (markup.first_char != hold or after is None):
        hold = None
    return (chars, markup.first_char, cur.name, False, None, hold,
            watch.hold_next + after if hold is not None else None, trigger,
            {"type": "region_chunk", "field": cur.name, "text": "", "dirty": False}, None)
