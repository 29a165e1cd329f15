"""Control tokens in token ids: a control token acts as a delimiter only where the model generated its id.

When a response (or a prompt) is given as token ids, a *control token* (an added token that is special, or listed in
the tokenizer's `chat_control_tokens`, or, without that list, whose text appears in the chat template's literal
text and is not whitespace; the tokens `apply_chat_template(..., sanitize_control_tokens=True)` of Transformers
5.25 protects) is a delimiter only where its own id is in the ids. A model that *spells one out* with ordinary
tokens (`<`, `|im_end`, `|>`) wrote text: the spelling is *defused* (`MARKER` between its characters, so that no
delimiter can match it), the text is parsed, and the markers are removed from the message and the events
(`strip_markers`), so the spelling appears unchanged in the content, the reasoning, a tool call's arguments.

The rule, exactly (the reference the tests compare with): split the ids at the control ids; each control id's text
is its decode in context, and in the text of each run of ordinary ids between them (decoded in context: the text
of the whole sequence, cut at the runs' ends) every control-token spelling is defused, scanning left to right and
taking the longest spelling at each position (`re.sub` with the spellings longest first). The prompt and the
response are separate sequences for this rule (a spelling that straddles them is not defused, as in Transformers).

Nothing here knows Transformers or the tokenizer: `ControlTokens` is built from `{id: text}` (`tokenizer.py` reads
them from a tokenizer, once per tokenizer), and `IdTextStream` takes a `decode_many` callable (lists of ids to
their texts). Cost: `is_clean` decides from the text already decoded whether the rule changes
anything (almost never: the model wrote no spelling), in one scan of the text for spellings (a literal first
character's C loop per first character) and, where it finds some, one `list.index` per spelling found, which together
walk the ids (a prompt's: those of the window its text was decoded from) at most once per first character; only
otherwise is the text decoded again run by run (`IdTextStream`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .joint_decode import _split_point

#: Put between the characters of a spelled-out control token so that no delimiter matches it, and removed from
#: the message: a Unicode noncharacter (reserved for a program's internal use), the one Transformers uses.
MARKER = "\ufdd2"

#: Ids held back while their text ends in U+FFFD (an unfinished UTF-8 character), as the streamer does: a
#: character is at most 4 bytes and every token carries at least one.
MAX_HELD_TOKENS = 4

#: Prompt tokens decoded before the first new token of a stream (leading spaces depend on them).
CONTEXT_TOKENS = 4

#: At most this many ids read before are decoded again as the context of the next ones (`joint_decode`'s
#: `_JOINT_TOKENS`).
_LONG_CONTEXT = 8

#: `ControlTokens.is_clean` scans once per first character of the control tokens up to this many of them (else one
#: scan with a set of first characters)
_FIRST_CHAR_SCANS = 4


def _trie_pattern(tokens: Iterable[str]) -> str:
    """A regex matching the longest of `tokens` at each position: a trie of alternations (one character test per
    branch, so `re` scans in time linear in the text, and finds a first-character set or literal to skip with),
    where a token that is a prefix of longer ones is a greedy optional tail (the longer ones are tried first)."""
    trie: dict = {}
    for token in tokens:
        node = trie
        for ch in token:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        ends = "" in node
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return "(?:" + body + ")?"
        return body

    return build(trie)


def _interior_start(token: str, tokens: frozenset[str], prefixes: frozenset[str]) -> bool:
    """Whether another occurrence of a control token could start strictly inside an occurrence of `token` (a
    token there, or the start of one that the text after `token` could finish)."""
    for i in range(1, len(token)):
        rest = token[i:]
        if rest in prefixes or rest in tokens:
            return True
        if any(rest[:j] in tokens for j in range(1, len(rest))):
            return True
    return False


class ControlTokens:
    """The control tokens of one tokenizer, and the tests and scans over them (built once per tokenizer).

    `by_id`: id -> its text. `verbatim`: every control id decodes to exactly its text wherever it is (probed by
    `tokenizer.py`); without it the cheap test cannot see the ids in the text and says "clean" only for a text
    without any spelling (the exact path then decides)."""

    __slots__ = ("by_id", "ids", "tokens", "regex", "search", "first", "longest", "prefixes", "inner", "verbatim",
                 "is_control", "scans", "id_of")

    def __init__(self, by_id: dict[int, str], verbatim: bool = True) -> None:
        self.by_id = {int(k): v for k, v in by_id.items() if v}
        self.ids = frozenset(self.by_id)
        self.is_control = self.ids.__contains__
        self.tokens = frozenset(self.by_id.values())
        self.verbatim = verbatim
        self.longest = max(map(len, self.tokens), default=0)
        self.prefixes = frozenset(t[:n] for t in self.tokens for n in range(1, len(t)))
        self.inner = frozenset(t for t in self.tokens if _interior_start(t, self.tokens, self.prefixes))
        self.regex = re.compile(_trie_pattern(self.tokens) or "(?!)")
        self.search = self.regex.search
        self.first = re.compile("[" + "".join(sorted({re.escape(t[0]) for t in self.tokens})) + "]" if self.tokens
                                else "(?!)")
        # The spellings scan of `is_clean`: one trie per first character, whose literal first character `re` skips
        # to in a tight C loop (a set of first characters is tested character by character, ~15x slower), when
        # they are few.
        groups: dict[str, list[str]] = {}
        for token in sorted(self.tokens):
            groups.setdefault(token[0], []).append(token)
        self.scans = (
            tuple(re.compile(_trie_pattern(group)).findall for group in groups.values())
            if len(groups) <= _FIRST_CHAR_SCANS
            else (self.regex.findall,)
        )
        # a control token's text -> its id, where exactly one control id has that text
        ids_by_text: dict[str, list[int]] = {}
        for i, text in self.by_id.items():
            ids_by_text.setdefault(text, []).append(i)
        self.id_of = {text: ids[0] for text, ids in ids_by_text.items() if len(ids) == 1}

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def __reduce__(self) -> tuple:
        # (rebuilt from what defines it: the scans are compiled again)
        return (ControlTokens, (self.by_id, self.verbatim))

    # -- the rule --------------------------------------------------------------------------------------
    def defuse(self, text: str) -> str:
        """`text` (one run of ordinary ids' text) with every control-token spelling defused."""
        if self.search(text) is None:
            return text
        return self.regex.sub(_spread, text)

    # -- the cheap exact test --------------------------------------------------------------------------
    def is_clean(self, text: str, ids: list[int]) -> bool:
        """Whether `text`, the decode of exactly `ids` (in context), holds no spelled-out control token, so that
        the rule leaves it as it is.

        The spellings scan finds the control-token texts in `text` (leftmost, longest); none: clean. Else, with no
        occurrence able to start inside another (`inner`, or no match is one such token), the matches start at
        every position where a control-token text starts in `text`; every control id of `ids` starts its own text
        at its own position (`verbatim`), one of them, so the control ids are at most as many as the matches, and
        when they are exactly as many, every match is an id's own text and no run of ordinary ids spells one out
        (its spelling would start at another position, another match). Per first character too (the matches of
        one scan, the control ids whose text starts with it: an occurrence the scan passes over is inside one of
        its matches, an `inner` token); and they are as many when the ids hold, in order, the id of each match's
        text (the last matches compared with the last ids, then `list.index` from the last one found, before
        those: one C walk of the ids per scan at most): that many control ids of that first character, at
        distinct positions. Where they do not (a spelling, or a match longer than the text of the id at its
        position), the counts decide (`_count_clean`).
        Without `verbatim`: clean where no first character of a control token is in the text."""
        if not self.verbatim:
            return self.first.search(text) is None
        index = ids.index
        id_of = self.id_of
        inner = self.inner
        for scan in self.scans:
            found = scan(text)
            if not found:
                continue
            if inner and not inner.isdisjoint(found):
                return False
            # (the matches that the last ids are, from the end: no walk of the ids for them, the common case of a
            # response ending with its end token)
            n = len(found)
            end = len(ids)
            while n and end and ids[end - 1] == id_of.get(found[n - 1]):
                n -= 1
                end -= 1
            at = 0
            try:
                for i in range(n):
                    at = index(id_of[found[i]], at, end) + 1
            except (KeyError, ValueError):  # (KeyError: a text several control ids have)
                return self._count_clean(text, ids)
        return True

    def _count_clean(self, text: str, ids: list[int]) -> bool:
        """`is_clean` past the `inner` test, by counting: the matches of the scans as many as the control ids."""
        return sum(len(scan(text)) for scan in self.scans) == sum(map(self.is_control, ids))


def _spread(match: re.Match) -> str:
    return MARKER.join(match.group())


def strip_markers(value: Any) -> Any:
    """`value` (a message, an event, a list of them) with every `MARKER` removed from its strings (keys too)."""
    if isinstance(value, str):
        return value.replace(MARKER, "") if MARKER in value else value
    if isinstance(value, list):
        return [strip_markers(item) for item in value]
    if isinstance(value, tuple):
        return tuple(strip_markers(item) for item in value)
    if isinstance(value, dict):
        return {strip_markers(k): strip_markers(v) for k, v in value.items()}
    return value


class IdTextStream:
    """Token ids in, the rule's text out, incrementally (`feed`, then `flush` at the end).

    Decoding is the streamer's: the new ids after a few ids of context, text ending in U+FFFD (an unfinished
    UTF-8 character) held back for up to `MAX_HELD_TOKENS` ids. A control id ends the run of ordinary ids before
    it (its held text is released); its own text is emitted as it is. In a run, spellings are defused as the
    run's whole text would be (`ControlTokens.defuse`), holding back the end of the text that could still start
    one (or grow a complete one into a longer one) until later ids decide.

    `decode_many`: lists of ids -> their texts (special tokens kept, no clean-up). `context`: the ids before the
    first fed one (the prompt's last ones), only decoding context."""

    def __init__(self, decode_many: Callable[[list[list[int]]], list[str]], control: ControlTokens,
                 context: list[int] = ()) -> None:  # type: ignore[assignment]
        self._decode_many = decode_many
        self._control = control
        self._ids: list[int] = list(context)
        self._read = len(self._ids)  # ids[_read:] not yet turned into text
        self._prefix = max(0, self._read - CONTEXT_TOKENS)  # ids[_prefix:_read]: decoding context
        self._run = ""  # text of the current run not yet emitted (a possible spelling's start)
        self.defused = False  # whether a spelling was defused (markers are in the text given out)

    def feed(self, ids: list[int]) -> str:
        out: list[str] = []
        is_control = self._control.is_control
        start = 0
        for i, token in enumerate(ids):
            if is_control(token):
                if i > start:
                    self._ids.extend(ids[start:i])
                    out.append(self._push(self._new_text(False), False))
                self._ids.append(token)
                text = self._new_text(True)
                spelling = self._control.by_id[token]
                before, own = (text[: -len(spelling)], spelling) if text.endswith(spelling) else ("", text)
                out.append(self._push(before, True))
                out.append(own)
                start = i + 1
        if start < len(ids):
            self._ids.extend(ids[start:] if start else ids)
            out.append(self._push(self._new_text(False), False))
        return "".join(out)

    def flush(self) -> str:
        """The text held back, at the end of the ids."""
        return self._push(self._new_text(True), True)

    def _new_text(self, final: bool) -> str:
        if self._read >= len(self._ids):
            return ""
        ids = self._ids
        before, after = self._decode_many([ids[self._prefix : self._read], ids[self._prefix :]])
        end = len(ids)
        if not final and (len(after) <= len(before) or after.endswith("\ufffd")):
            # hold the ids of the unfinished character only: the text up to the last id that ends a character
            cut = end - 1
            while cut > self._read:
                (text,) = self._decode_many([ids[self._prefix : cut]])
                if len(text) > len(before) and not text.endswith("\ufffd"):
                    break
                cut -= 1
            if end - cut < MAX_HELD_TOKENS:
                if cut == self._read:
                    return ""
                end, after = cut, text
            else:
                # more than a character's worth: the U+FFFD before the last ids is real. An unfinished character
                # at the end has at most 3 bytes so far, so it starts in the last 3 ids: hold those.
                end -= MAX_HELD_TOKENS - 1
                before, after = self._decode_many([ids[self._prefix : self._read], ids[self._prefix : end]])
        text = after[_split_point(after, before) :]
        # the next ids' context: the ids just read (at most `_LONG_CONTEXT` of them)
        self._prefix, self._read = max(self._read, end - _LONG_CONTEXT), end
        return text

    def _push(self, text: str, final: bool) -> str:
        """Run text in, defused text out; the end that may still be (or grow into) a spelling is held unless
        `final` (the run ends)."""
        buf = self._run + text if self._run else text
        if not buf:
            return ""
        control = self._control
        search = control.search
        out = []
        pos = 0
        while True:
            m = search(buf, pos)
            hold = len(buf) if final else self._hold_from(buf, pos)
            if m is not None and m.start() < hold:
                out.append(buf[pos : m.start()])
                out.append(MARKER.join(m.group()))
                self.defused = True
                pos = m.end()
                continue
            out.append(buf[pos:hold])
            self._run = buf[hold:]
            return "".join(out)

    def _hold_from(self, buf: str, pos: int) -> int:
        """The first position from `pos` whose text to the end is a proper prefix of a control token (a spelling
        the next text may finish or make longer), else the end."""
        control = self._control
        lo = max(pos, len(buf) - control.longest + 1)
        if control.first.search(buf, lo) is None:
            return len(buf)
        prefixes = control.prefixes
        for q in range(lo, len(buf)):
            if buf[q:] in prefixes:
                return q
        return len(buf)


def defused_text(decode_many: Callable[[list[list[int]]], list[str]], control: ControlTokens, ids: list[int],
                 context: list[int] = ()) -> tuple[str, bool]:  # type: ignore[assignment]
    """(the rule's text of `ids` decoded after `context`, whether a spelling was defused): the exact path."""
    stream = IdTextStream(decode_many, control, context)
    text = stream.feed(ids) + stream.flush()
    return text, stream.defused
