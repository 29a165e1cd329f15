"""The `text` content parser and `Markup`, the `remove_pattern` markup it strips (also while streaming)."""

from __future__ import annotations

import re as _stdre
from collections.abc import Mapping
from typing import Any

import regex

from ..errors import RegexTimeoutError, TemplateError
from .base import DEFAULT_REGEX_TIMEOUT, REGEX_TIMEOUT, _regex_arg
from .patterns import _looks_around


def _remove_pattern(value: Any, field: str, key: str) -> Markup:
    """`text`'s `remove_pattern`: a regex of inline markup; a group named `keep` is the text left in place."""
    pattern = _regex_arg(value, field, key)
    if pattern.search("") is not None:
        raise TemplateError("matches the empty string, so it would match everywhere", field=field, key=key)
    if _looks_around(pattern):
        raise TemplateError(
            "uses an anchor (^, $, \\A, \\Z, \\b) or a lookbehind: a streamed region is cleaned chunk by chunk, "
            "where those would see the start or end of a chunk; write the markup itself (lookaheads are fine)",
            field=field,
            key=key,
        )
    return Markup(pattern)


def _prepare_text(args: dict[str, Any], field: str, key: str) -> None:
    """`report_as` needs `remove_pattern` (it names where that pattern's matches are reported)."""
    if "report_as" in args and "remove_pattern" not in args:
        raise TemplateError(
            "needs remove_pattern: report_as names the message key that lists remove_pattern's matches",
            field=field,
            key=f"{key}.report_as",
        )


# --------------------------------------------------------------------------- basic types


def parse_text(text: str, args: Mapping[str, Any]) -> str:
    markup = args.get("remove_pattern")
    if markup is not None:
        text = markup.sub(text)
    return text.strip() if args.get("strip", True) else text


#: While a possible markup match is held back in a stream (`MarkupStream`), it is searched again on every
#: chunk up to this many held characters; past that, only each time the held text has doubled (so a `<co>`
#: that never closes costs linear time, not quadratic).
_MARKUP_RESEARCH = 256


class Markup:
    """The compiled `remove_pattern` of a `text` field: inline markup taken out of the text.

    Each match of `pattern` is replaced by the text of its `keep` group (removed whole if the pattern has
    no such group, or the group did not take part). `marks` reports the matches: for Cohere's citations
    `<co>Paris</co: 0:[1]>` with a pattern like `<co>(?P<keep>.*?)</co:\\s*(?P<sources>[^>]*)>` (the shipped
    one is stricter), the cited text `Paris` stays in the text and
    `{"start", "end", "text": "Paris", "sources": "0:[1]"}` is reported.
    """

    __slots__ = ("pattern", "keep", "groups", "first", "first_char", "leads", "trigger", "next_chars", "joints")

    def __init__(self, pattern: regex.Pattern):
        # local: structural helpers shared with the delimiter prefilters
        from ..delimiters import _lead_trigger
        from ..regex_leads import _first_chars, _literal_leads, _partial_leads

        self.pattern = pattern
        self.keep = pattern.groupindex.get("keep")
        self.groups = tuple(name for name in pattern.groupindex if name != "keep")
        chars = _first_chars(pattern.pattern) if isinstance(pattern.pattern, str) else None
        #: the characters a match can start with, as one string (None if unknown): a chunk without any of
        #: them, with nothing held, is clean as it is (no regex search)
        self.first = "".join(sorted(chars)) if chars else None
        #: `first` when it is one character (the parser's `feed()` tests it inline), else None
        self.first_char = self.first if self.first is not None and len(self.first) == 1 else None
        #: fixed texts every match starts with (None if unknown): a text holding none of them has no match, so
        #: `sub` returns it without a regex search (a timed `regex` search costs ~2 µs even when it finds nothing)
        self.leads = _literal_leads(pattern.pattern) if isinstance(pattern.pattern, str) else None
        #: for a chunk that has one of them: a search for the fixed texts every match starts with, or a
        #: beginning of one at the end of the chunk (None if unknown); no find: the chunk is clean too
        partial = _partial_leads(pattern.pattern) if chars else None
        self.trigger = _lead_trigger(partial) if chars else None
        #: With `first_char`: the characters that follow it in those fixed texts, when all are longer than it
        #: (a text whose only `first_char` is its first, followed by none of them, is `plain`), else None
        self.next_chars = (
            "".join(sorted({t[1] for t in partial}))
            if self.first_char is not None and partial and self.trigger is not None
            and all(len(t) > 1 and t[0] == self.first_char for t in partial) else None
        )
        #: `joint_trigger`'s answers, by the watch's trigger (the parser reads it first: no call once known)
        self.joints: dict[Any, Any] = {}

    def joint_trigger(self, watch_trigger: Any) -> Any:
        """A search that finds nothing in a text exactly when neither `watch_trigger` (a watch's `feed_trigger`:
        fixed texts a delimiter starts with, or a beginning of one at the end) nor this markup's `trigger` finds
        anything there (then no delimiter nor markup can start in the text: the parser's `feed()` routes it as it
        is); None without both. One stdlib search of the two alternations joined (each finds its leftmost
        match, so the joined one finds nothing only where both find nothing)."""
        joint = self.joints.get(watch_trigger, self)
        if joint is self:
            joint = None if watch_trigger is None or self.trigger is None else _stdre.compile(
                f"(?:{watch_trigger.__self__.pattern})|(?:{self.trigger.__self__.pattern})").search
            self.joints[watch_trigger] = joint
        return joint

    def plain(self, text: str) -> bool:
        """Whether no match (nor the beginning of one) can start in `text` (a chunk with nothing held)."""
        first = self.first
        if first is None:
            return False
        if text.find(first) < 0 if len(first) == 1 else not any(c in text for c in first):
            return True
        return self.trigger is not None and self.trigger(text) is None

    def kept(self, m: Any) -> str:
        """What a match leaves in the text."""
        return (m.group(self.keep) or "") if self.keep is not None else ""

    def sub(self, text: str) -> str:
        """`text` with every match replaced by its kept text."""
        leads = self.leads
        if leads is not None:
            for lead in leads:
                if lead in text:
                    break
            else:
                return text
        timeout = REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT)
        try:
            if self.pattern.search(text, timeout=timeout) is None:  # the common case: no markup at all
                return text
            return self.pattern.sub(self.kept, text, timeout=timeout)
        except TimeoutError:
            raise RegexTimeoutError(field=None, key="content_args.remove_pattern", pattern=self.pattern.pattern,
                                    timeout=timeout, text=text) from None

    def marks(self, text: str) -> list[dict[str, Any]]:
        """One dict per match of `text`: `start` and `end` of its kept text in `sub(text)`, that `text`,
        and the text of every other named group of the pattern (None if it did not take part)."""
        out: list[dict[str, Any]] = []
        leads = self.leads
        if leads is not None:  # (as in `sub`: a text holding none of the fixed texts every match starts with)
            for lead in leads:
                if lead in text:
                    break
            else:
                return out
        shift = 0  # characters removed before the current match
        for m in self.pattern.finditer(text, timeout=REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT)):
            kept = self.kept(m)
            start = m.start() - shift
            out.append({"start": start, "end": start + len(kept), "text": kept,
                        **{name: m.group(name) for name in self.groups}})
            shift += len(m.group()) - len(kept)
        return out

    def stream(self) -> MarkupStream:
        """A cleaner for one streamed region (see `MarkupStream`)."""
        return MarkupStream()


def _may_grow(pattern: regex.Pattern, text: str, start: int) -> bool:
    """Whether all of `text` from `start` could be the beginning of a longer match (so a match found there
    now may not be the one the whole text gives)."""
    m = pattern.fullmatch(text, start, partial=True, timeout=REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT))
    return m is not None and m.partial


class MarkupStream:
    """`Markup.sub` applied to a region's text as it streams: `feed(chunk)` returns the clean text that is
    now certain, and holds back text from where a match may still be completing (a `regex` partial match).
    It holds no reference to the template (a parser's state pickles without it).

    A complete match is held too while the text from its start could still begin a longer match (an
    optional or repeated part may still grow, `_may_grow`). So the joined output is `Markup.sub` of the
    joined chunks, whatever the chunking, as long as no match can contain the start of another (`regex`
    reports a complete match before an earlier partial one); the usual markup, whose kept text excludes
    its opening tag, cannot. The region's value is always `Markup.sub` of its whole text.
    """

    __slots__ = ("held", "searched", "sent", "off")

    def __init__(self) -> None:
        self.held = ""  # text from where a partial match starts
        self.searched = 0  # len(held) when it was last searched
        self.sent = 0  # characters of clean text returned so far
        self.off = False  # a search timed out: nothing more is returned (the value at close is exact)

    def feed(self, markup: Markup, text: str) -> str:
        """The clean text of `text` (and of what was held before it) that later text cannot change."""
        if self.off:
            return ""
        if not self.held and markup.plain(text):
            self.sent += len(text)
            return text
        held = self.held + text if self.held else text
        if self.held and len(held) > _MARKUP_RESEARCH and len(held) < 2 * self.searched:
            self.held = held
            return ""
        search = markup.pattern.search
        out: list[str] = []
        pos = 0
        try:
            while True:
                m = search(held, pos, partial=True, timeout=REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT))
                if m is None:
                    out.append(held[pos:])
                    held = ""
                    break
                if m.partial or m.end() == len(held) or _may_grow(markup.pattern, held, m.start()):
                    # a match may still be completing, or still growing: an optional or repeated part, as
                    # in `<\|channel>(?:thought)?` on "<|channel>th"
                    out.append(held[pos : m.start()])
                    held = held[m.start() :]
                    break
                out.append(held[pos : m.start()])
                out.append(markup.kept(m))
                if m.end() == pos:  # a zero-width match (e.g. a lone lookahead): no progress is possible
                    out.append(held[pos:])
                    held = ""
                    break
                pos = m.end()
        except TimeoutError:
            self.off = True
            return ""
        self.held, self.searched = held, len(held)
        clean = "".join(out)
        self.sent += len(clean)
        return clean

    def rest(self, value: str) -> str:
        """At the close of the region: the clean text not returned yet, given the region's full clean
        text `value` (`Markup.sub` of all of it)."""
        return value[self.sent :]
