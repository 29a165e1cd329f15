"""Held text that grows: whether a chunk only extends what the last scan held (issue 19).

A tool-call header arrives token by token (gpt-oss's ``<|start|>assistant<|channel|>commentary
to=functions.get_weather <|constrain|>json<|message|>`` in ~15 chunks, Kimi K3's ``<|open|>call
tool="get_weather" index="1"<|sep|>``, DeepSeek's ``<｜DSML｜invoke name="get_weather">``): the scan of its
first chunk holds it (a delimiter's partial match starts there), and every chunk after it only makes the held
text longer. While some delimiter of the watch still has a partial match from the start of the held text, that
start is the earliest a pending match can start, so nothing can commit before it and nothing can be routed: the
scan's answer is that same position, whatever the other delimiters would say. `still_held` checks it with at
most one `regex` call, so the parser (`ResponseParser._scan`) can keep the text held without building a window,
a memo and a scan (about 250 Python opcodes of bookkeeping, and `Watch._held_at`'s look-up of the pending
delimiter, per chunk).

Two ways to know, the cheap one first:

* the held text is a proper beginning of a fixed text that some delimiter consumes (or looks ahead at) before
  any other assertion (`Watch.sure_holds`: ``<|start|>assis``): a partial match there for sure, no regex
  needed (the same fact `feed()` holds a chunk's end on); the regex whose fixed text it begins becomes the one
  asked when the held text grows past such beginnings;
* else the regex whose pending match set the hold (`Watch.scan` keeps it in its memo under
  `delimiters.HELD_BY`) is asked again, from the start of the held text: still a partial match that fits its
  leading texts (`_fits_leads`), as `Watch._held_at` asks it, or a complete match that ends at the end of the
  window (pending: `_settle`), and no longer than `MAX_DELIMITER_LENGTH`.

When neither says so, the parser scans as before (a header that completes or dies), with the last scan's results
(`resume`) still valid: they were found on a prefix of the same held text.

Only where the answer needs no timeout (the regex is proven bounded on this much text, `Delimiter.untimed_match`)
and no delimiter is disabled (a regex timeout or the budget): the full scan handles those.
"""

from __future__ import annotations

from .delimiters import HELD_BY, MAX_DELIMITER_LENGTH, Watch
from .held_memo import remember
from .regex_leads import _fits_leads


def still_held(watch: Watch, memo: dict, ctx: str, held: str, remembered: bool = True) -> bool:
    """Whether `held` (the text the last scan of `watch` held, then the new text) is still held from its start:
    some delimiter of `watch` still has a partial match there (see the module docstring). `memo`: that scan's
    memo; `ctx`: the routed text before `held` that the scan's window started with (lookbehinds read it).
    `remembered=False`: ask the regex even where the watch remembers its answers (`held_memo`)."""
    if held in watch.sure_holds:  # (its texts include `Watch.hold_prefixes`)
        d = watch.sure_holds[held]  # a beginning of a sure lead: a partial match of it here; its regex is asked next
        if d is not None:
            memo[HELD_BY] = d
        return True
    d = memo.get(HELD_BY)
    n = len(held)
    if d is None or n > d.untimed_match or n > MAX_DELIMITER_LENGTH or d not in watch.regexes:
        return False
    if watch.held_memo is not None and remembered:  # (no regex of the watch reads `ctx`: `d` and `held` decide)
        key = (id(d), held)  # (`d` is one of the watch's own delimiters: its id is stable while the memo lives)
        got = watch.held_memo.get(key)
        if got is None:
            got = still_held(watch, memo, "", held, False)
            remember(watch.held_memo, key, got)
        return got
    if ctx:
        window = ctx + held
        pos = len(ctx)
    else:
        window = held
        pos = 0
    m = d.pattern.match(window, pos, None, None, True, None)  # (positional: `regex` parses keywords slowly)
    if m is None or m.end() != len(window):
        return False  # (no match, or a complete one that more text cannot change: the scan commits it)
    # A partial match that fits the leads, or a complete one at the window's end, which more text may still
    # extend or move (Mistral's `\[TOOL_CALLS\](?P<name>[^\[\]{}\s<]+)...(?:...|\Z)` on `[TOOL_CALLS]get`):
    # pending, as `Watch.scan` judges both.
    leads = d.partial_leads
    return not m.partial or leads is None or window.startswith(leads, pos) or _fits_leads(window, pos, leads)
