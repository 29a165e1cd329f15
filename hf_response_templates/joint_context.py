"""How many of the prompt's last tokens a response's decode needs before it, read from the `tokenizers` backend.

`joint_decode` decodes the prompt's last `_JOINT_TOKENS` (8) tokens again with the response, and takes a window's
text as reliable after its first `_JOINT_TOKENS` tokens (its head), because decoding depends on the tokens just
before: a SentencePiece leading space, a UTF-8 character split over up to 4 byte tokens, byte-fallback ``<0xNN>``
runs. A backend whose decoder is `tokenizers.decoders.ByteLevel` alone (GPT-2 style byte-level BPE: Qwen, Llama 3,
DeepSeek, GLM, ...) decodes a sequence as the bytes of its tokens joined (each character of a token stands for one
byte, an added token's text for its UTF-8 bytes), then read as UTF-8 with U+FFFD for what is not valid: a token's
text depends on the tokens before it only through a character whose first bytes they hold, at most 3 bytes back,
so at most 3 tokens back (every token has at least one byte). 4 tokens of context are then exactly as good as 8;
every other decoder (or none, or a `Sequence`) keeps 8. For the same reason a byte-level window's text is the end
of the whole prompt's as soon as it does not start with U+FFFD: its windows need no head (`decode_context`).

Only the one-sequence path with the backend's own decode asks (`tokenizer._decode_one`): a tokenizer decoding
through Transformers (a slow tokenizer, a class overriding `decode`) keeps `_JOINT_TOKENS`. The decoder is read at
every call (one attribute read of the backend), never cached: a decoder replaced later is seen at once.
"""

from __future__ import annotations

from typing import Any

from .joint_decode import _JOINT_TOKENS

#: Prompt tokens decoded with the response for a byte-level decoder: a UTF-8 character is at most 4 bytes, so
#: its first byte is at most 3 tokens back.
BYTE_LEVEL_TOKENS = 4

_byte_level: type | None = None


def _byte_level_type() -> type | None:
    """`tokenizers.decoders.ByteLevel`, imported on first use (None without `tokenizers`)."""
    global _byte_level
    if _byte_level is None:
        try:
            from tokenizers.decoders import ByteLevel
        except ImportError:  # pragma: no cover - the backend path needs `tokenizers`
            return None
        _byte_level = ByteLevel
    return _byte_level


#: (context, head) of `decode_context` for a byte-level decoder, and for any other
BYTE_LEVEL = (BYTE_LEVEL_TOKENS, 0)
DEFAULT = (_JOINT_TOKENS, _JOINT_TOKENS)


def decode_context(backend: Any) -> tuple[int, int]:
    """(context, head) for `joint_decode.decode_one_pair`: the prompt tokens decoded again with the response, and
    the tokens of a window's head. A byte-level decoder's window needs no head: its text, unless it starts with
    U+FFFD (its first byte continues a character begun before it), is exactly the end of the whole prompt's text
    (the bytes from a character's start on read the same whatever precedes them), so the anchor may be anywhere
    in it and the window may start at the anchor's lead token."""
    decoder = getattr(backend, "decoder", None)
    if decoder is not None and type(decoder) is (_byte_level or _byte_level_type()):
        return BYTE_LEVEL
    return DEFAULT

