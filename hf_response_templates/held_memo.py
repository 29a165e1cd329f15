"""Held headers remembered: the regex answers of `held.still_held` and `held_commit.commit_at` (issue 19).

A streamed region change costs little Python but several `regex` calls: every token of a held header
(gpt-oss's ``<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>``, Kimi K3's
``<|open|>call tool="get_weather"<|sep|>``) asks the pending delimiter's regex again (`still_held`, one partial
match), and the chunk after the header asks every regex delimiter that may start there, then probes the winner
(`commit_at`, 3-4 calls): 1.5-5 µs each with the `regex` module, most of a region change's cost at ~1k
characters. The texts asked about recur: the same headers start every response of a model, and every call of
a tool.

Where no regex of the watch can look at text before the position it is asked at (`Watch.needs_context` false:
no lookbehind, `^`, `\\A`, `\\b`), both answers are functions of the watch and the text from the held start
alone (plus, for `still_held`, the delimiter asked): each `Watch` keeps them in a small dict
(`Watch.held_memo`, None where a regex needs context), keyed by that text (`commit_at`) or by the delimiter and
that text (`still_held`; the id of one of the watch's own delimiters), at most `MEMO_LIMIT` entries (emptied when full: bounded memory, whatever the
stream). Positions are kept relative to the held start and captures are copied out, so a remembered answer is
the one the regexes would give again. `tests/test_held_memo.py` compares both with the uncached answers.
"""

from __future__ import annotations

from typing import Any

#: Entries of one watch's memo before it is emptied (texts of at most `MAX_DELIMITER_LENGTH` characters).
MEMO_LIMIT = 512

#: Marks an answer not yet known (None is an answer: "the scan decides").
MISSING = object()


def remember(memo: dict, key: Any, value: Any) -> None:
    """Keep `value` under `key` in a watch's memo, emptying it first when it holds `MEMO_LIMIT` entries."""
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = value
