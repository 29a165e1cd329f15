"""Where the start anchor sits in a prompt's ids, read from the ids: the windows `decode_one_pair` tries.

A start anchor written by a chat template usually begins with an added token (Qwen's ``<|im_start|>``, Llama's
``<|start_header_id|>``, Gemma's ``<start_of_turn>``): the tokenizer matches added tokens before its model, so in a
generation prompt the anchor's text starts at that token's id, followed by the ids of the rest of the anchor (as
encoded alone: checked). The last such occurrences among the prompt's last ids tell
how many tokens a window needs to hold the anchor after its head of `_JOINT_TOKENS` tokens (`_window_text`'s rule),
so `decode_one_pair` decodes the smallest window that can hold it (10 tokens and up, instead of 16, 24 or 64), and
does not try (and decode) windows too small to hold it (Kimi K3's prefill ``<|open|>think`` starts with its anchor's
token: the check of the next ids skips it; so does a prompt cut inside its anchor).

This is only a choice of which windows to try: each window is still checked on its decoded text exactly as before
(the anchor found after its head), the usual windows follow, and the plan without a window remains the fallback; so
a wrong guess (a token added to the vocabulary later, the anchor's text tokenized another way) costs decodes, never a
different text. Without an occurrence the usual windows are tried, as without this hint.
"""

from __future__ import annotations

import functools
from typing import Any

from .joint_decode import _ANCHOR_WINDOW, _DIRECT_WINDOW, _JOINT_TOKENS, _PAIR_WINDOWS

_SCAN = _JOINT_TOKENS + 1 - _ANCHOR_WINDOW  # the prompt's ids a window of at most `_ANCHOR_WINDOW` tokens can use

#: (id(backend), anchor literal) -> (id of the longest added token the literal starts with, the ids of the rest of the
#: literal reversed, or None) or None. A bounded cache (cleared when full). It holds no reference to a backend (a
#: tokenizer's vocabulary is large): an id reused by another backend may give a wrong hint, which costs decodes only.
_LEADS: dict[tuple[int, str], tuple[int, list[int] | None] | None] = {}
_MAX_ENTRIES = 256
_UNKNOWN = object()


def _learn(backend: Any, literal: str) -> tuple[int, list[int] | None] | None:
    """(the id of the longest added token of the `tokenizers` `backend` that the anchor `literal` starts with, the
    ids of the rest of the literal encoded alone, reversed, or None when nothing follows), or None (no such token,
    or an object that does not list its added tokens); cached."""
    if len(_LEADS) >= _MAX_ENTRIES:
        _LEADS.clear()
    found: tuple[int, list[int] | None] | None = None
    try:
        best = ""
        for token_id, token in backend.get_added_tokens_decoder().items():
            content = getattr(token, "content", None)
            if isinstance(content, str) and len(best) < len(content) and literal.startswith(content):
                found, best = (int(token_id), None), content
        rest = literal[len(best) :]
        if found is not None and rest:
            ids = [int(i) for i in backend.encode(rest, add_special_tokens=False).ids]
            found = (found[0], ids[::-1]) if ids else None
    except Exception:  # noqa: BLE001 - not a `tokenizers.Tokenizer`: no hint
        found = None
    _LEADS[id(backend), literal] = found
    return found


def lead_windows(
    backend: Any, literal: str, prompt: list[int], plain: int, context: int = _JOINT_TOKENS, head: int | None = None
) -> tuple[int, ...] | None:
    """The windows to try when the anchor `literal` starts with an added token of `backend` found (followed by the
    ids of the rest of the literal) among the prompt's last `_ANCHOR_WINDOW - _JOINT_TOKENS - 1` ids: the
    smallest holding its last such occurrence after a head of `_JOINT_TOKENS` tokens and one more token (the
    anchor's text must start strictly after the head's), then the larger of `_PAIR_WINDOWS`; only those that decode
    fewer tokens than `plain` (the plan without a window) on success, and for the usual windows on failure. None
    (no hint) without a lead token or an occurrence. `context` stands for `_JOINT_TOKENS` (the head's tokens: fewer
    where the tokenizer's decoding allows, `joint_context.decode_context`); `head` the window's head (`context` when
    None; 0: no head, the window starts at the anchor's lead token, `joint_context.decode_context`)."""
    at = _lead_at(backend, literal, prompt)
    if at is None:
        return None
    if head is None:
        head = context
    return _windows(at + head + 2 if head else at + 1, plain, context, head)


def lead_window(backend: Any, literal: str, prompt: list[int]) -> int | None:
    """The window starting at the last occurrence of the anchor `literal`'s lead added token of `backend` (followed
    by the ids of the rest of the literal) among the prompt's last `_ANCHOR_WINDOW - _JOINT_TOKENS - 1` ids, or
    None (no lead token, or no occurrence): the window with no head of a byte-level decoder
    (`byte_level_pair.byte_level_texts`), `lead_windows`' first with `head=0`. A hint only: the window's text is
    still checked."""
    at = _lead_at(backend, literal, prompt)
    return None if at is None else at + 1


def _lead_at(backend: Any, literal: str, prompt: list[int]) -> int | None:
    """How many ids from the end of `prompt` the last occurrence of the anchor `literal`'s lead added token of
    `backend` (followed by the ids of the rest of the literal) stands, counting it as 0, among the prompt's last
    `_ANCHOR_WINDOW - _JOINT_TOKENS - 1` ids; None without a lead token or an occurrence."""
    ids = _LEADS.get((id(backend), literal), _UNKNOWN)
    if ids is _UNKNOWN:
        ids = _learn(backend, literal)
    if ids is None:
        return None
    lead, after = ids
    tail = prompt[_SCAN:]
    tail.reverse()
    at = -1
    while True:
        try:
            at = tail.index(lead, at + 1)
        except ValueError:
            return None
        if after is None or tail[at - len(after) : at] == after:  # (the reversed tail: the ids after `lead`)
            return at


@functools.lru_cache(maxsize=1024)
def _windows(size: int, plain: int, context: int = _JOINT_TOKENS, head: int = _JOINT_TOKENS) -> tuple[int, ...]:
    """`size`, then the larger of `_PAIR_WINDOWS`, as far as each saves tokens over `plain`: a window the ids point
    to on success (the window, its head and, up to `2 * _JOINT_TOKENS` tokens (`joint_decode._DIRECT_WINDOW` with
    a smaller context), the window again, else the prompt's last `_JOINT_TOKENS` tokens twice), the usual ones also
    on failure (`decode_one_pair`'s rule); `context` stands for `_JOINT_TOKENS`, `head` for the head's tokens."""
    if size + (size if size <= max(2 * context, _DIRECT_WINDOW) else 2 * context) + head > plain:
        return ()
    return (size, *[w for w in _PAIR_WINDOWS if w > size and 3 * w + context <= plain])
