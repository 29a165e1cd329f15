"""`joint_context`: a byte-level BPE backend (decoder `ByteLevel` alone) decodes 4 of the prompt's last tokens with
the response, and its windows have no head (the window the ids point to starts at the anchor's lead token: two
decodes, the window and window + response); every other decoder 8, and a head of 8.

The decodes are counted through the backend itself (its `decode` wrapped, so `tokenizer.parse_response` still takes
the backend's own decode, the only path that asks), and the texts are compared with decoding prompt + response in
one piece and splitting where the prompt's text ends, on generated id sequences cut anywhere (inside a UTF-8
character split over byte tokens, inside the anchor, mid-word)."""

from __future__ import annotations

import pytest
from _tokenizers import byte_level_tokenizer, counted, enc, metaspace_tokenizer, verbatim_template, whole
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import decoders

from hf_response_templates import parse_response
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.joint_context import (
    BYTE_LEVEL,
    BYTE_LEVEL_TOKENS,
    DEFAULT,
    decode_context,
)
from hf_response_templates.joint_decode import _JOINT_TOKENS
from hf_response_templates.tokenizer import install

install()

ANCHOR = "<|im_start|>assistant\n"
WORDS = ["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "ok", "\n", "\u2615", "a", "<think>",
         "</think>", "caf\u00e9", " \u00e7a", "\U0001f9ea\U0001f9ea", ANCHOR]


def test_the_decoder_decides() -> None:
    tok = byte_level_tokenizer()
    backend = tok.backend_tokenizer
    assert decode_context(backend)[0] == BYTE_LEVEL_TOKENS == 4
    assert decode_context(metaspace_tokenizer().backend_tokenizer)[0] == _JOINT_TOKENS == 8
    backend.decoder = decoders.Sequence([decoders.ByteLevel()])  # not the decoder alone
    assert decode_context(backend)[0] == _JOINT_TOKENS
    backend.decoder = decoders.ByteLevel()  # read at every call: seen at once
    assert decode_context(backend)[0] == BYTE_LEVEL_TOKENS
    assert decode_context(object())[0] == _JOINT_TOKENS
    assert decode_context(backend) == BYTE_LEVEL == (4, 0)
    assert decode_context(metaspace_tokenizer().backend_tokenizer) == DEFAULT == (8, 8)


@pytest.mark.parametrize("prefill", ["", "<think>\n"])
def test_byte_level_window_starts_at_the_anchor(prefill: str) -> None:
    """A 40-token prompt ending with the anchor (and a prefill): the response decoded alone (`byte_level_pair`),
    then the window the ids point to, which starts at the anchor's lead token: two decodes (before: the window,
    then the window again with the response; before that, a window 9 tokens larger, a head of 8, then the window
    with the response)."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    ids = enc(tok, "Hello there caf\u00e9 ok " * 20 + ANCHOR + prefill)[-40:]
    response = enc(tok, "Hi \N{GRINNING FACE} there<|im_end|>")
    backend = counted(tok)
    message = tok.parse_response(response, prefix=ids)
    window = len(enc(tok, ANCHOR + prefill))
    assert backend.seen == [len(response), window]
    whole_prefix, whole_text = whole(tok, ids, response)
    assert message == parse_response(whole_text, verbatim_template(), prefix=whole_prefix)


def test_byte_level_tail_of_four_without_an_anchor_window() -> None:
    """No anchor in the prompt: the response alone, the smallest window (no anchor in its text), then the whole
    prompt (before: the window, the whole prompt, then its last 4 tokens alone and with the response)."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    ids = enc(tok, "Hello there caf\u00e9 ok " * 20)[-40:]
    response = enc(tok, "Hi there<|im_end|>")
    backend = counted(tok)
    tok.parse_response(response, prefix=ids)
    assert backend.seen == [len(response), 16, len(ids)]


def test_metaspace_keeps_eight() -> None:
    tok = metaspace_tokenizer()
    tok.response_template = verbatim_template()
    ids = enc(tok, "Hello there ok " * 20)[-40:]
    response = enc(tok, "Hi there<|im_end|>")
    backend = counted(tok)
    tok.parse_response(response, prefix=ids)
    assert backend.seen == [16, len(ids), _JOINT_TOKENS, _JOINT_TOKENS + len(response)]


def regex_template() -> dict:
    """The verbatim template with a regex start anchor of bounded width (an alternation, as DeepSeek's and Gemma 4's)."""
    template = verbatim_template()
    del template["start_anchor"]
    template["start_anchor_pattern"] = r"<\|im_start\|>assistant\n|</think>"
    return template


@pytest.mark.parametrize("regex", [False, True])
@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
@settings(max_examples=50, deadline=None, database=None)
@given(
    before=st.lists(st.sampled_from(WORDS), min_size=10, max_size=40),
    prefill=st.lists(st.sampled_from([w for w in WORDS if w != ANCHOR]), max_size=6),
    generated=st.lists(st.sampled_from(WORDS), min_size=1, max_size=20),
    shift=st.integers(-6, 6),
)
def test_the_texts_are_the_whole_decodes(kind: str, regex: bool, before: list[str], prefill: list[str],
                                         generated: list[str], shift: int) -> None:
    """`tokenizer.parse_response(ids, prefix=ids)` through the backend's own decode equals decoding prompt +
    response in one piece, splitting it where the prompt's text ends and parsing that (`tokenizer.decode` then
    `parse_response`); and the texts of `_decode_one` are the whole decode's (the response's exactly, the prefix's
    from its last anchor on)."""
    tok = byte_level_tokenizer() if kind == "byte_level" else metaspace_tokenizer()
    template = regex_template() if regex else verbatim_template()
    tok.response_template = template
    ids = enc(tok, "".join(before) + ANCHOR + "".join(prefill) + "".join(generated))
    end = len(enc(tok, "".join(before) + ANCHOR + "".join(prefill)))
    i = min(max(end + shift, 1), len(ids) - 1)
    prompt, response = ids[:i], ids[i:]
    # (a trailing run of EOS ids is one EOS to both paths: `generate`'s padding)
    whole_prefix, whole_text = whole(tok, prompt, hf_tok._strip_response_padding(response, *hf_tok._pad_ids(tok)))
    anchor = hf_tok._resolve_template(tok, None).start_anchor
    texts = hf_tok._decode_one(tok, response, prompt, anchor)
    assert texts is not None
    prefix_text, text = texts
    assert text == whole_text
    at = whole_prefix.rfind(ANCHOR)
    if regex:  # what the engine reads of the prompt (the text after its last anchor match) is the same
        assert tok.parse_response(response, prefix=prompt) == parse_response(whole_text, template, prefix=whole_prefix)
        return
    if at >= 0:  # what the engine reads of the prompt: its text from the last anchor on
        assert prefix_text[prefix_text.rfind(ANCHOR):] == whole_prefix[at:]
    else:
        assert prefix_text == whole_prefix
    assert tok.parse_response(response, prefix=prompt) == parse_response(whole_text, verbatim_template(),
                                                                          prefix=whole_prefix)
