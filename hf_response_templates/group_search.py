"""The one-shot plan's idle scan of fixed texts most of which share their first character (issue 19).

MiniMax M2's idle watch starts its delimiters with five fixed texts: `<think>`, `<minimax:tool_call>`,
`<invoke name="`, `</minimax:tool_call>` and `[e~[`. As a `lead_scan.LeadScan` (different first characters) the
plan kept one `str.find` per text: five whole-text finds up front (~125 Python opcodes), each text found again
once passed (the absent ones to the end of the text again), ~100 opcodes per response in that loop. One `re`
search of all five is slow in C (`re` tries the alternation at every character of the first-character set: ~2x
the five finds); one search of the texts that share their first character (`re` skips to that character in C,
as `LeadSearch`) and one `str.find` of each other text, bounded by that find, read the text about once each.

`GroupSearch` is that `LeadSearch`: its `search(window, pos)` gives the `re.Match` of the earliest text from `pos`
(`lastindex` naming the text, as `LeadSearch.search`'s), so the plan's `LeadSearch` scan (kind 9, from `pos` at
every scan) and `LeadSearch.end` read it unchanged. `tests/test_group_search.py` compares it with
`Watch.scan_end` and the plan with the general loop and the streaming parser.
"""

from __future__ import annotations

import re as _stdre
from typing import Any

from .lead_scan import LeadScan, LeadSearch

__all__ = ["GroupSearch", "group_search"]


class GroupSearch(LeadSearch):
    """A `LeadSearch` of texts no one of which begins another, several of them sharing one first character (the
    lead group, searched by one `re` alternation) and the others each of a first character of its own (one
    `str.find` each, only before the lead group's find). Immutable."""

    __slots__ = ("lead", "others", "full", "other", "back")

    def __init__(self, texts: tuple[str, ...], tries: tuple[tuple[tuple[Any, ...], ...], ...]) -> None:
        firsts: dict[str, list[int]] = {}
        for j, t in enumerate(texts):
            firsts.setdefault(t[0], []).append(j)
        group = max(firsts.values(), key=len)
        order = group + [j for j in range(len(texts)) if j not in group]
        texts = tuple(texts[j] for j in order)
        tries = tuple(tries[j] for j in order)
        LeadScan.__init__(self, texts, tries)
        if not self.alone or len(group) < 2 or any(len(g) > 1 for g in firsts.values() if g is not group):
            raise ValueError("GroupSearch: texts that begin no other, one group sharing a first character")
        self.at = tries
        self.only = tuple(t[0] if len(t) == 1 else None for t in tries)
        marked = [_stdre.escape(t) + "()" for t in texts]  # (each text's empty group: `lastindex` names it)
        #: The lead group's search (its texts first: the same `lastindex` as `full`'s), the other texts, and the
        #: match of every text at a position (one of the others, where `str.find` found it).
        self.lead = _stdre.compile("|".join(marked[:len(group)])).search
        self.others = texts[len(group):]
        self.full = _stdre.compile("|".join(marked)).match
        #: `_search_one`'s other text, and how far before the lead group's find it may start and still end past it.
        self.other = self.others[0] if self.others else None
        self.back = len(self.other) - 1 if self.others else 0
        self.search = self._search_one if len(self.others) == 1 else self._search

    def fresh(self, window: str, pos: int) -> list[int]:
        """The finds list for `window`: nothing searched yet (`LeadSearch.fresh`)."""
        return [-1, 0]

    def _search_one(self, window: str, pos: int) -> Any:
        """`_search` of one other text (MiniMax's `[e~[`), without the loop."""
        m = self.lead(window, pos)
        if m is None:  # (the other text from `pos` on)
            k = window.find(self.other, pos)
            return None if k < 0 else self.full(window, k)
        k = window.find(self.other, pos, m.start() + self.back)  # (only where it starts before the lead find)
        return m if k < 0 else self.full(window, k)

    def _search(self, window: str, pos: int) -> Any:
        """The `re.Match` of the first text in `window[pos:]` (`lastindex`: 1 + its index), or None."""
        m = self.lead(window, pos)
        at = m.start() if m is not None else len(window)
        first = -1
        for text in self.others:  # (only before the earliest find so far: a text not there is not read past it)
            k = window.find(text, pos, at + len(text) - 1)
            if k >= 0:
                at = first = k
        return m if first < 0 else self.full(window, first)


def group_search(scan: LeadScan) -> GroupSearch | None:
    """`scan`'s texts and tries as a `GroupSearch`, when they make one (see the class) of four texts or more, else
    None. (With two or three, `LeadScan.fresh` finds them without its loop, and the plan's kind 8 reads them at
    about the cost of this search: Mistral's `[THINK]` / `[TOOL_CALLS]` / `</s>` stay there.)"""
    if scan.__class__ is not LeadScan or scan.start or len(scan.texts) < 4:
        return None
    try:
        return GroupSearch(scan.texts, scan.tries)
    except ValueError:
        return None
