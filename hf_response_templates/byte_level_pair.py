"""A prompt's and a response's token ids to their texts for a byte-level BPE backend: the response decoded alone.

A `tokenizers` backend whose decoder is `tokenizers.decoders.ByteLevel` alone (GPT-2 style byte-level BPE: Qwen,
Llama 3, DeepSeek, GLM, Mistral's Tekken, ...) decodes ids as the bytes of their tokens joined, read as UTF-8 with
U+FFFD for each maximal invalid run (`joint_context`'s docstring). The joint decode of prompt + response is then
the prompt's decode followed by the response's as soon as the response's bytes start a character: an unfinished
character at the prompt's end is cut there in both decodes (one U+FFFD), and from the response's first byte on both
read the same bytes from a character's start. The response's own decode says so: it does not start with U+FFFD
(a continuation byte, or any invalid first byte, starts with one; the rare case falls back to
`joint_decode.decode_one_pair`). So the split of the joint decode where the prompt's text ends
(`joint_decode._split_point`) is exactly (the prompt's decode, the response's decode): the response is decoded
once, with no prompt tokens of context, and no split is searched.

The prompt's text is needed only from its last start anchor on (the engine keeps what follows it,
`ResponseTemplate.cut_prefix`): a window of its last tokens whose decode does not start with U+FFFD is exactly the
end of the whole prompt's text, so a window holding the anchor stands for it (`joint_decode._window_text`'s rule
with no head). The window the ids point to (`anchor_lead.lead_window`: the anchor's lead added token) is tried
first, then the usual windows (`joint_decode._PAIR_WINDOWS`) as long as a failed try costs at most half the
prompt's decode; else the whole prompt is decoded. Each decode is one call of the backend's own `decode`, with
no Python wrapper.

Only `tokenizer._decode_one` calls this (the one-sequence path, the backend's own decode, padding already
stripped): it makes the decode calls [response, window] (or [response, window..., prompt]) where
`decode_one_pair` made [window, window + response] or [window, tail, tail + response].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .joint_decode import _PAIR_WINDOWS, _anchor_test  # (first: it imports `anchor_lead`, which reads it)

# isort: split
from . import joint_context as _jc  # (its `_byte_level`: `tokenizers.decoders.ByteLevel` once imported)
from .anchor_lead import lead_window


def byte_level_texts(
    decode: Callable[[list[int], bool], str], backend: Any, prompt: list[int], response: list[int], anchor: Any,
    used: list[int] | None = None,
) -> tuple[str, str] | None:
    """(prefix text, response text) of a non-empty `prompt` and its `response` as decoding `prompt + response` in
    one piece and splitting where the prompt's text ends gives them (the prefix text may be only the end of the
    prompt's, from before its last start `anchor` on, which parses the same), for the `tokenizers` `backend` whose
    decoder is `ByteLevel` alone; `decode` is its `decode` (called with special tokens kept). None where this does
    not apply: another decoder (read at every call), or a response whose decode starts with U+FFFD (its first
    bytes may finish a character the prompt began: `joint_decode.decode_one_pair` then). `used`: a list the
    number of the prompt's last ids the prefix text was decoded from is appended to (`control_tokens`)."""
    decoder = getattr(backend, "decoder", None)
    if decoder is None or type(decoder) is not (_jc._byte_level or _jc._byte_level_type()):
        return None
    text = decode(response, False)
    if text[:1] == "\ufffd":
        return None
    size = len(prompt)
    test = None if anchor is None else _anchor_test(anchor)
    if test is not None:
        literal, search = test
        hint = None if literal is None else lead_window(backend, literal, prompt)
        if hint is not None and hint < size:  # (the ids say where the anchor starts: this window holds it)
            window_text = decode(prompt[-hint:], False)
            if window_text[:1] != "\ufffd" and window_text.rfind(literal) >= 0:
                if used is not None:
                    used.append(hint)
                return window_text, text
        for window in _PAIR_WINDOWS:
            if 2 * window > size:  # (a failed try costs at most half the prompt's decode)
                break
            if hint is not None and window <= hint:
                continue
            window_text = decode(prompt[-window:], False)
            if window_text[:1] == "\ufffd":
                continue
            if window_text.rfind(literal) >= 0 if literal is not None else search(window_text, 0):
                if used is not None:
                    used.append(window)
                return window_text, text
    if used is not None:
        used.append(size)
    return decode(prompt, False), text
