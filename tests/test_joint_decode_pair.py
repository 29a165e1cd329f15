"""`joint_decode.decode_one_pair`, the one-sequence token-id path: the start anchor's window of the prompt is
decoded alone, its head, and window + response. The response's text is exactly its part of the whole decode of
prompt + response, and the prefix text keeps what the engine reads of the prompt (the text after its last start
anchor), whatever the tokenizer, the anchor's distance from the end, the prompt's length or the cut; and the
decodes are the ones the plan states (counted, not timed)."""

from __future__ import annotations

import pytest
from _tokenizers import (
    byte_level_tokenizer,
    char_slow_tokenizer,
    enc,
    metaspace_tokenizer,
    verbatim_template,
    whole,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import parse_response
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.joint_decode import _JOINT_TOKENS, _PAIR_WINDOWS, _SHORT_PROMPT, decode_one_pair
from hf_response_templates.tokenizer import install

install()

TOKENIZERS = {"byte_level": byte_level_tokenizer, "metaspace": metaspace_tokenizer, "slow": char_slow_tokenizer}
ANCHOR = "<|im_start|>assistant\n"
WORDS = ["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "ok", "\n", "\u2615", "a", "<think>",
         "</think>", "caf\u00e9", " \u00e7a", ANCHOR]


def counting_decoder(tok) -> tuple[list[int], object]:
    seen: list[int] = []
    decode = hf_tok._decoder(tok)

    def counted(ids: list[int]) -> str:
        seen.append(len(ids))
        return decode(ids)

    return seen, counted


def after_anchor(text: str) -> str | None:
    at = text.rfind(ANCHOR)
    return None if at < 0 else text[at:]


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
@settings(max_examples=80, deadline=None, database=None)
@given(
    before=st.lists(st.sampled_from(WORDS), max_size=40),
    prefill=st.lists(st.sampled_from([w for w in WORDS if w != ANCHOR]), max_size=8),
    generated=st.lists(st.sampled_from(WORDS), min_size=1, max_size=30),
    shift=st.integers(-6, 6),
)
def test_the_pair_gives_the_whole_decodes_response_and_what_follows_the_last_anchor(
    kind: str, before: list[str], prefill: list[str], generated: list[str], shift: int
) -> None:
    """Equality with the plain decode-then-split path on generated id sequences: prompts of every length with the
    anchor near their end (or not), cut anywhere around the prompt's end (inside a character, mid-word)."""
    tok = TOKENIZERS[kind]()
    ids = enc(tok, "".join(before) + ANCHOR + "".join(prefill) + "".join(generated))
    end = len(enc(tok, "".join(before) + ANCHOR + "".join(prefill)))
    i = min(max(end + shift, 1), len(ids))
    prompt, response = ids[:i], ids[i:]
    seen, decode = counting_decoder(tok)
    anchor = hf_tok._resolve_template(tok, verbatim_template()).start_anchor
    prefix_text, text = decode_one_pair(decode, prompt, response, anchor)
    whole_prefix, whole_text = whole(tok, prompt, response)
    assert text == whole_text
    assert after_anchor(prefix_text) == after_anchor(whole_prefix)
    if after_anchor(whole_prefix) is None:  # no anchor: the whole prompt's text
        assert prefix_text == whole_prefix
    assert sum(seen) <= 2 * len(prompt) + len(response) + 3 * sum(_PAIR_WINDOWS)  # bounded, never quadratic
    # and the message: tokenizer.parse_response equals parsing the whole decode's texts
    tok.response_template = verbatim_template()
    assert tok.parse_response(response, prefix=prompt) == parse_response(whole_text, verbatim_template(),
                                                                          prefix=whole_prefix)


@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
def test_the_decodes_are_the_plans(kind: str) -> None:
    """Call counts: a prompt of 40+ tokens whose last 8 hold the anchor decodes the 16-token window, its 8-token
    head and window + response (40 tokens besides the response: what one joint decode of a 40-token prompt
    decodes; the code before decoded the prompt, its last 8 tokens and those + the response, 56); a prompt of
    24-39 tokens, where a failed window would cost more than a success saves, keeps the plain plan, and one of at
    most `_SHORT_PROMPT` tokens is decoded whole with the response. Fails on the code before the window plan."""
    tok = TOKENIZERS[kind]()
    tok.response_template = verbatim_template()
    anchor = hf_tok._resolve_template(tok, None).start_anchor
    filler = enc(tok, "<|im_start|>user\n" + "Olá, café! ok " * 20 + "<|im_end|>\n")
    tail = enc(tok, ANCHOR)
    response = enc(tok, "Hi there \N{GRINNING FACE}<|im_end|>")
    small = _PAIR_WINDOWS[0]
    assert len(tail) < small - _JOINT_TOKENS and small <= 2 * _JOINT_TOKENS
    for size in (12, _SHORT_PROMPT, _SHORT_PROMPT + 1, 39, 40, 64, 400):
        prompt = (filler * 20)[: size - len(tail)] + tail
        assert len(prompt) == size
        seen, decode = counting_decoder(tok)
        prefix_text, text = decode_one_pair(decode, prompt, response, anchor)
        assert (after_anchor(prefix_text), text) == (after_anchor(whole(tok, prompt, response)[0]), whole(tok, prompt, response)[1])
        if size <= _SHORT_PROMPT:
            assert seen == [size, size + len(response)], size
        elif 3 * small + _JOINT_TOKENS > size + 2 * _JOINT_TOKENS:
            assert seen == [size, _JOINT_TOKENS, _JOINT_TOKENS + len(response)], size
        else:
            assert seen == [small, _JOINT_TOKENS, small + len(response)], size


def test_no_head_decode_when_the_window_lacks_the_anchor() -> None:
    """A window whose text does not hold a literal anchor costs its own decode only (no head decode), then the
    next window or the plain plan."""
    tok = byte_level_tokenizer()
    anchor = hf_tok._resolve_template(tok, verbatim_template()).start_anchor
    prompt = enc(tok, ANCHOR + "Sure, " * 200)
    response = enc(tok, "ok<|im_end|>")
    seen, decode = counting_decoder(tok)
    prefix_text, text = decode_one_pair(decode, prompt, response, anchor)
    assert (prefix_text, text) == whole(tok, prompt, response)
    assert seen == [*_PAIR_WINDOWS, len(prompt), _JOINT_TOKENS, _JOINT_TOKENS + len(response)]
