"""Decoding a prompt's and a response's token ids as one sequence, decoding as little as gives the same texts.

The texts of a response given as ids, with its prompt also given as ids, are those of decoding prompt + response
in one piece and splitting it where the prompt's own text ends (`_split_point`): decoding depends on the tokens just
before (a SentencePiece leading space, a UTF-8 character split over byte tokens), so the response is decoded after
some of the prompt's last tokens. Nothing here knows Transformers: `decode` is any callable from a list of ids to
their text (`tokenizer.py` makes it from a tokenizer).

* `_joint_split`: the prompt's last `_JOINT_TOKENS` tokens decoded again with the response (a batch decodes each
  distinct prompt once, `_prompt_text`, and this per row).
* `_window_text` / `_anchor_search`: when the prompt's last tokens hold the template's start anchor (the engine
  keeps only the prompt text after the last one), the rest of a long prompt is never decoded.
* `decode_one_pair`: one prompt and one response (the one-sequence path of `tokenizer.parse_response`): the
  anchor's window is decoded alone and jointly with the response, so the window is the joint decode's context and
  its own text is where the split is (three decodes: the window, its head, window + response), with no decode of
  the whole prompt nor of a separate tail. A byte-level backend's own decode goes through `byte_level_pair` first
  (the response decoded alone, then a window); this plan is its fallback and every other decoder's.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any


def _split_point(full: str, prefix: str) -> int:
    """Where the prefix's text ends inside the joint decode of prefix + response."""
    if full.startswith(prefix):
        return len(prefix)
    # The prompt ended inside a UTF-8 character (byte-level tokens): its decode ends with U+FFFD where
    # the joint decode has the whole character. The character goes to the response, which completed it.
    trimmed = prefix.rstrip("\ufffd")
    if full.startswith(trimmed):
        return len(trimmed)
    # Decoding rules that rewrite text across the boundary: split where the two still agree.
    return len(os.path.commonprefix([full, prefix]))


#: Prompt tokens decoded together with the response. Decoding depends on the tokens just before (a
#: SentencePiece leading space on the previous token, a UTF-8 character split over up to 4 byte tokens,
#: byte-fallback `<0xNN>` runs), so the last few prompt tokens give the response exactly the text it has in
#: the whole sequence; the rest of the prompt is decoded once, on its own.
_JOINT_TOKENS = 8

#: A prompt of at most this many tokens is decoded whole together with the response (two decodes: the
#: prompt, prompt + response) rather than its last `_JOINT_TOKENS` tokens (three: the prompt, the tail,
#: tail + response): each decode call has a fixed cost of about 15 tokens' decoding.
_SHORT_PROMPT = 24


#: Prompt tokens decoded to look for a literal start anchor near the end of the prompt. The engine keeps only
#: the prompt text after the last start anchor (`ResponseTemplate.cut_prefix`), so when the anchor is in
#: the prompt's last tokens the rest of a long prompt (a system prompt, tool schemas, earlier turns) is
#: never decoded.
_ANCHOR_WINDOW = 64

#: The windows tried in turn (`_prompt_text`): a generation prompt's anchor is most often within the last
#: few tokens, and a smaller window decodes fewer tokens.
_ANCHOR_WINDOWS = (24, _ANCHOR_WINDOW)


def _window_text(
    decode: Callable[[list[int]], str], prompt: list[int], anchor: Any, size: int = _ANCHOR_WINDOW
) -> str | None:
    """Text standing in for the whole prompt's: the decode of its last `size` tokens, when the
    start `anchor` (a literal `str`, or the template's start-anchor `Delimiter`) is found there after the
    window's first `_JOINT_TOKENS` tokens (whose text may differ from the whole decode's: a character split
    at the window's start, a dropped leading space). The text from there on is the end of the whole
    prompt's text, so its last anchor, and what follows it, are the whole prompt's (for a regex anchor see
    `_anchor_search`). None: the whole prompt must be decoded."""
    if anchor is None or len(prompt) <= size:
        return None
    literal: str | None
    search: Callable[[str, int], bool] | None
    if isinstance(anchor, str):
        literal, search = anchor, None
    else:
        literals = anchor.literals
        literal = literals[0] if literals is not None and len(literals) == 1 else None
        search = None if literal is not None else _anchor_search(anchor.source, anchor.untimed_search)
        if literal is None and search is None:
            return None
    window = prompt[-size:]
    head, text = decode(window[:_JOINT_TOKENS]), decode(window)
    if literal is not None:
        return text if text.rfind(literal) > len(head) else None
    return text if search is not None and search(text, len(head)) else None


_BACKREF = re.compile(r"\\[1-9]")


@functools.lru_cache(maxsize=256)
def _anchor_search(source: str, untimed: int) -> Callable[[str, int], bool] | None:
    """For a start-anchor regex whose matches are at most `width` characters long (computed from the
    pattern), a test `found(text, start)`: does `text` (a window's decode, reliable from `start` on) show
    the prompt's last anchor match? It does when the first match at or after `start + 1` begins at least
    `width` characters after `start + 1`: a match of the whole prompt's text that begins before that point
    ends before it (matches are at most `width` long), so from there the scan of the whole text and the scan
    of the window find the same matches, and the same last one (`ResponseTemplate.cut_prefix`). One
    character of slack leaves out a context rule (`^` in multiline mode, `\\b`) that reads the character
    before `start`. A pattern of unbounded length qualifies when no match can span the start of its leading
    text (`_lead_never_inside`): then any match at or after `start + 1` shows it. None (decode the whole
    prompt): unbounded length otherwise, lookbehind, back references, or a pattern the standard library's
    `re` does not read exactly as `regex` does."""
    from .regex_leads import stdlib_equivalent

    if untimed < 0 or "(?<=" in source or "(?<!" in source or "(?P=" in source or "(?(" in source:
        return None
    if _BACKREF.search(source):  # back references `\1` (an escaped backslash before a digit is declined too)
        return None
    compiled = stdlib_equivalent(source)
    if compiled is None:
        return None
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    try:
        parsed = sre_parse.parse(source, compiled.flags)
        low, width = parsed.getwidth()
    except Exception:  # noqa: BLE001 - any doubt: decode the whole prompt
        return None
    if low < 1:
        return None
    search = compiled.search
    if width > 4096:  # unbounded (Granite 3.3's `<\|start_of_role\|>assistant[^<]*<\|end_of_role\|>`)
        if compiled.flags & re.IGNORECASE or not _lead_never_inside(list(parsed)):
            return None

        def found_at_lead(text: str, start: int) -> bool:
            # a match at q >= start + 1 begins with the lead, and no match spans a lead: the whole text's
            # matches from q on are the window's (see `_lead_never_inside`)
            return len(text) <= untimed and search(text, start + 1) is not None

        return found_at_lead

    def found(text: str, start: int) -> bool:
        if len(text) > untimed:  # a window longer than the regex is proven cheap on: decode the whole prompt
            return False
        m = search(text, start + 1)
        return m is not None and m.start() >= start + 1 + width

    return found


def _lead_never_inside(items: list) -> bool:
    """Whether no match of the pattern parsed as `items` (`re._parser`, flat) can span a position where its
    leading literal text L starts: a match beginning before such a position q ends at or before it. Then a
    scan reaching q in the whole prompt's text and in a window's (where the text from q on is the same)
    finds the same matches from q on, whatever the matches before q were.

    Proven from the pattern's shape: L is its leading run of literal characters (at least 2), followed only by
    literals and single-character sets (or repeats of one); the first character c of L is never consumed
    inside a match, except by a literal c whose following literals differ from L's continuation before the
    pattern (or the run of literals) ends: there the text cannot go on as L does. Anything else (groups,
    alternations, lookarounds, anchors, `.`) declines."""
    lead = []
    for op, arg in items:
        if str(op) != "LITERAL":
            break
        lead.append(arg)
    if len(lead) < 2:
        return False
    c = lead[0]
    for i in range(1, len(items)):
        op, arg = items[i]
        kind = str(op)
        if kind == "LITERAL":
            if arg != c:
                continue
            run = []
            for o, a in items[i + 1 :]:
                if str(o) != "LITERAL" or len(run) == len(lead) - 1:
                    break
                run.append(a)
            if run == lead[1 : len(run) + 1]:  # the text after this c may go on as L does
                return False
        elif kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            body = list(arg[2])
            if len(body) != 1 or not _one_char_excludes(body[0], c):
                return False
        elif not _one_char_excludes((op, arg), c):
            return False
    return True


_CATEGORY_TESTS = {
    "CATEGORY_DIGIT": str.isdecimal,
    "CATEGORY_NOT_DIGIT": lambda ch: not ch.isdecimal(),
    "CATEGORY_SPACE": lambda ch: re.fullmatch(r"\s", ch) is not None,
    "CATEGORY_NOT_SPACE": lambda ch: re.fullmatch(r"\s", ch) is None,
    "CATEGORY_WORD": lambda ch: re.fullmatch(r"\w", ch) is not None,
    "CATEGORY_NOT_WORD": lambda ch: re.fullmatch(r"\w", ch) is None,
}


def _one_char_excludes(item: tuple, c: int) -> bool:
    """Whether the one-character item (`re._parser`: a literal, a negated literal or a set) cannot match
    the character `c`; False for anything else (`.`, groups, ...)."""
    op, arg = item
    kind = str(op)
    if kind == "LITERAL":
        return arg != c
    if kind == "NOT_LITERAL":
        return arg == c
    if kind != "IN":
        return False
    negate, hit = False, False
    for sub_op, sub_arg in arg:
        sub = str(sub_op)
        if sub == "NEGATE":
            negate = True
        elif sub == "LITERAL":
            hit = hit or sub_arg == c
        elif sub == "RANGE":
            hit = hit or sub_arg[0] <= c <= sub_arg[1]
        elif sub == "CATEGORY" and str(sub_arg) in _CATEGORY_TESTS:
            hit = hit or _CATEGORY_TESTS[str(sub_arg)](chr(c))
        else:
            return False
    return hit == negate


def _joint_split(
    decode: Callable[[list[int]], str],
    prompt: list[int],
    prompt_text: str,
    response: list[int],
    whole: bool = False,
    context: int = _JOINT_TOKENS,
    used: list[int] | None = None,
) -> tuple[str, str]:
    """(prefix text, response text) as decoding `prompt + response` in one piece and splitting it where the
    prompt's text ends (`_split_point`) gives them, decoding only the prompt's last `_JOINT_TOKENS` tokens
    again (a prompt of more than `_SHORT_PROMPT` tokens). Falls back to the whole joint decode when the
    tail's text is not the end of the prompt's text (its first token decodes differently without what
    precedes it, e.g. the middle of a UTF-8 character). `whole`: `prompt_text` is the whole prompt's decode
    (not a window's), which the whole joint decode then reuses. `context`: the prompt tokens decoded again (fewer
    where the tokenizer's decoding allows, `joint_context.decode_context`)."""
    if len(prompt) > _SHORT_PROMPT:
        tail = prompt[-context:]
        tail_text = decode(tail)
        tail += response
        joint = decode(tail)
        if prompt_text.endswith(tail_text) and not tail_text.startswith("\ufffd"):
            cut = _split_point(joint, tail_text)
            return prompt_text[: len(prompt_text) - len(tail_text) + cut], joint[cut:]
    if used is not None:  # (the prefix text is the whole prompt's: `used`, as in `decode_one_pair`)
        used.append(len(prompt))
    full = decode(prompt + response)
    cut = _split_point(full, prompt_text if whole else decode(prompt))
    return full[:cut], full[cut:]


def _prompt_text(
    decode: Callable[[list[int]], str], prompt: list[int], anchor: Any, used: list[int] | None = None
) -> tuple[str, bool]:
    """(the text standing in for the (non-empty) prompt's, whether it is the whole prompt's decode): the
    decode of its last tokens when they hold the start anchor (`_window_text`, the windows of
    `_ANCHOR_WINDOWS` in turn, each where it decodes fewer tokens than the whole prompt: the window and its
    head of `_JOINT_TOKENS` tokens, two calls), else its whole decode."""
    if anchor is not None:
        for size in _ANCHOR_WINDOWS:
            if len(prompt) <= size + 3 * _JOINT_TOKENS:
                break
            text = _window_text(decode, prompt, anchor, size)
            if text is not None:
                if used is not None:  # (the window's size: `decode_one_pair`'s `used`)
                    used.append(size)
                return text, False
    if used is not None:
        used.append(len(prompt))
    return decode(prompt), True


#: The largest window `decode_one_pair` decodes again whole with the response when its context is smaller than
#: `_JOINT_TOKENS` (`joint_context`): `_joint_split`'s extra decode call and Python cost about 4 tokens' decoding,
#: so a window of up to `2 * context + 4` tokens decodes faster whole (with `_JOINT_TOKENS`: `2 * _JOINT_TOKENS`).
_DIRECT_WINDOW = 12

#: The windows `decode_one_pair` tries, from the smallest: a generation prompt's start anchor (and a prefill after
#: it) is most often within its last few tokens.
_PAIR_WINDOWS = (16, 24, _ANCHOR_WINDOW)

from .anchor_lead import lead_windows  # noqa: E402 - it reads the constants above


def decode_one_pair(
    decode: Callable[[list[int]], str], prompt: list[int], response: list[int], anchor: Any, backend: Any = None,
    context: int = _JOINT_TOKENS, head: int | None = None, used: list[int] | None = None,
) -> tuple[str, str]:
    """(prefix text, response text) of one non-empty prompt and its response, as decoding `prompt + response` in
    one piece and splitting where the prompt's text ends gives them (the prefix text may be only the end of the
    prompt's, from before its last start `anchor` on, which parses the same).

    When the prompt's last tokens (a window of `_PAIR_WINDOWS`) hold the start anchor after the window's first
    `_JOINT_TOKENS` tokens (`_window_text`'s rule), the window is decoded alone, its head, and window + response:
    the window is the response's decoding context and its own text says where to split (`_split_point`). A window
    is tried only where that saves, over the plan without one (the prompt, then `_joint_split`), at least the
    tokens a failed try costs (the window's decode); else, or when no window holds the anchor, that plan. A
    window of more than `2 * _JOINT_TOKENS` tokens gives the prompt's text only: its last `_JOINT_TOKENS` tokens
    are decoded with the response (`_joint_split`, fewer tokens). With the `tokenizers` `backend` (its added tokens:
    only a hint, `decode` still decides), a literal anchor starting with an added token has its windows chosen from
    the prompt's ids (`anchor_lead.lead_windows`: the smallest window holding it, each saving tokens on success).
    `context` stands for `_JOINT_TOKENS` throughout (the head, the tail decoded again): fewer where the tokenizer's
    decoding depends on fewer tokens before (`joint_context.decode_context`). `head`: the tokens of a window's head
    (`context` when None); 0 where a window's text is the end of the whole prompt's as soon as it does not start
    with U+FFFD (a byte-level decoder, `joint_context.decode_context`): a window with no head, the anchor anywhere
    in its text. `used`: a list the number of the prompt's last ids the prefix text is decoded from (the window,
    or the whole prompt) is appended to (the control-token test, `control_tokens.ControlTokens.is_clean`)."""
    if head is None:
        head = context
    size = len(prompt)
    test = None if anchor is None else _anchor_test(anchor)
    if test is not None:
        literal, search = test
        # tokens decoded besides the response: without a window (the prompt and prompt + response up to
        # `_SHORT_PROMPT` tokens, else the prompt, its tail and tail + response) and with one (window, head, window)
        plain = 2 * size if size <= _SHORT_PROMPT else size + 2 * context
        # a success must save what a failure costs (reckoned with `_JOINT_TOKENS` whatever `context` is: the same
        # windows are tried, each decoding no more than with `_JOINT_TOKENS`)
        limit = ((2 * size if size <= _SHORT_PROMPT else size + 2 * _JOINT_TOKENS) - _JOINT_TOKENS) // 3
        windows = _PAIR_WINDOWS
        if literal is not None and backend is not None and plain > 3 * context + 4:  # (a 10-token window saves)
            hinted = lead_windows(backend, literal, prompt, plain, context, head)  # the windows the ids point to, each saving
            if hinted is not None:
                windows, limit = hinted, plain
        for window in windows:
            if window > limit:
                break
            tokens = prompt[-window:]
            text = decode(tokens)
            if not head:  # (the text is the whole prompt's end unless it starts inside a character)
                if text[:1] == "\ufffd" or (text.rfind(literal) < 0 if literal is not None else not search(text, 0)):
                    continue
            elif literal is not None:
                at = text.rfind(literal)
                if at <= 0 or at <= len(decode(tokens[:head])):  # (no head decode without the anchor)
                    continue
            elif not search(text, len(decode(tokens[:head]))):
                continue
            if used is not None:
                used.append(window)
            if window > max(2 * context, _DIRECT_WINDOW):
                return _joint_split(decode, prompt, text, response, False, context, used)
            joint = decode(tokens + response)
            if joint.startswith(text):  # (`_split_point`'s first case, without the call)
                return text, joint[len(text) :]
            cut = _split_point(joint, text)
            return text[:cut], joint[cut:]
    text = decode(prompt)
    if used is not None:
        used.append(len(prompt))
    return _joint_split(decode, prompt, text, response, True, context)


@functools.lru_cache(maxsize=256)
def _anchor_test(anchor: Any) -> tuple[str | None, Callable[[str, int], bool] | None] | None:
    """(literal, None) or (None, regex test) to find the start `anchor` (a `str`, or the template's start-anchor
    `Delimiter`) in a window's text (`_window_text`'s rules), or None where no window can stand in for the prompt.
    Cached per anchor (compiled templates keep theirs)."""
    if isinstance(anchor, str):
        return anchor, None
    literals = anchor.literals
    if literals is not None and len(literals) == 1:
        return literals[0], None
    search = _anchor_search(anchor.source, anchor.untimed_search)
    return None if search is None else (None, search)
