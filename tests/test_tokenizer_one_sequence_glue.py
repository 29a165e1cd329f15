"""The one-sequence token-id path's shortcuts (`tokenizer._decode_one`, `tokenizer._backend_decoder`): the pad /
EOS lookup is skipped where Transformers 5's special-token map sets neither, and a tokenizer class's cached "plain
fast decoding" is read before the instance's overrides. The oracle: decoding prompt + response in one piece and
splitting where the prompt's text ends (`whole_split`), then parsing the text; counts, not time."""

from __future__ import annotations

import pytest
from _tokenizers import byte_level_tokenizer, verbatim_template
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import parse_response
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.tokenizer import (
    _pad_ids,
    _split_point,
    _strip_prefix_padding,
    _strip_response_padding,
)

PROMPT = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
WORDS = ["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "ok", "\n", "\u2615", "a", "<|endoftext|>"]
#: (pad token, EOS token) of the tokenizer: neither (the lookup skipped on Transformers 5), each, both, the same
SPECIALS = [(None, None), (None, "<|im_end|>"), ("<|endoftext|>", None), ("<|endoftext|>", "<|im_end|>"),
            ("<|im_end|>", "<|im_end|>")]


def tokenizer_with(pad: str | None, eos: str | None):
    tok = byte_level_tokenizer()
    tok.pad_token = pad
    tok.eos_token = eos
    tok.response_template = verbatim_template()
    return tok


def plain_parse(tok, response: list[int], prompt: list[int]) -> dict:
    """Decode-then-parse: padding stripped as the batch path strips it, prompt + response decoded in one piece."""
    pad, eos = tok.pad_token_id, tok.eos_token_id
    prompt = _strip_prefix_padding(prompt, pad)
    response = _strip_response_padding(response, pad, eos)
    kwargs = hf_tok._DECODE_KWARGS
    full = tok.decode(prompt + response, **kwargs)
    cut = _split_point(full, tok.decode(prompt, **kwargs)) if prompt else 0
    return parse_response(full[cut:], verbatim_template(), prefix=full[:cut])


@pytest.mark.parametrize("specials", SPECIALS)
@settings(max_examples=25, deadline=None, database=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=25),
    cut=st.integers(0, 10_000),
    left=st.integers(0, 3),
    right=st.lists(st.sampled_from(["<|endoftext|>", "<|im_end|>"]), max_size=3),
)
def test_one_sequence_equals_decode_then_parse(specials, words, cut, left, right) -> None:
    tok = tokenizer_with(*specials)
    ids = tok.encode(PROMPT + "".join(words), add_special_tokens=False)
    i = 1 + cut % len(ids)
    pad_id = tok.convert_tokens_to_ids("<|endoftext|>")
    prompt = [pad_id] * left + ids[:i]
    response = ids[i:] + [tok.convert_tokens_to_ids(t) for t in right]
    if not response:
        response = [tok.convert_tokens_to_ids("a")]
    assert tok.parse_response(response, prefix=prompt) == plain_parse(tok, response, prompt)


@pytest.mark.parametrize("specials", SPECIALS)
def test_pad_ids_are_looked_up_unless_the_map_sets_neither(monkeypatch, specials) -> None:
    """Transformers 5 (the ids read from `_special_tokens_map`): no `_pad_ids` call when neither is set; a class
    whose attributes decide the ids (4.x) always calls it. Fails where the skip reads the wrong map."""
    tok = tokenizer_with(*specials)
    ids = tok.encode(PROMPT + "Hello<|im_end|>", add_special_tokens=False)
    _pad_ids(tok)  # the class's kind is known
    calls = []
    real = hf_tok._pad_ids
    monkeypatch.setattr(hf_tok, "_pad_ids", lambda t: calls.append(1) or real(t))
    message = tok.parse_response(ids[-3:], prefix=ids[:-3])
    by_map = hf_tok._SPECIAL_IDS_BY_MAP[type(tok)]
    assert len(calls) == (0 if by_map and specials == (None, None) else 1)
    assert message == plain_parse(tok, ids[-3:], ids[:-3])


def test_backend_decoder_reads_the_instance_after_the_class_is_known() -> None:
    """An instance's own `decode` / `batch_decode` / `_decode` turns the backend off, whether the class was looked
    up before or not (a class first seen through such an instance is not cached as plain or not)."""

    class Fresh(type(byte_level_tokenizer())):
        pass

    tok = byte_level_tokenizer()
    fresh = Fresh(tokenizer_object=tok.backend_tokenizer)
    fresh.decode = lambda ids, **kwargs: "x"
    assert hf_tok._backend_decoder(fresh) is None
    assert Fresh not in hf_tok._PLAIN_FAST_DECODE
    del fresh.decode
    assert hf_tok._backend_decoder(fresh) is not None
    assert hf_tok._PLAIN_FAST_DECODE[Fresh] is True
    for name in ("decode", "batch_decode", "_decode"):
        setattr(fresh, name, lambda *a, **k: "x")
        assert hf_tok._backend_decoder(fresh) is None, name
        delattr(fresh, name)
    assert hf_tok._backend_decoder(fresh)([1], False) == tok.backend_tokenizer.decode([1], False)


@pytest.mark.parametrize("kind", ["fast", "slow"])
@pytest.mark.parametrize("where", ["second", "middle", "last", "padding"])
def test_a_bad_response_id_is_named_with_its_position(kind: str, where: str) -> None:
    """Through the backend's decode (fast) or the tokenizer's own (slow), with a pad / EOS map set so the
    padding rules run: a bad id, also inside trailing padding (a float equal to the pad id), is named."""
    from _tokenizers import char_slow_tokenizer

    tok = byte_level_tokenizer() if kind == "fast" else char_slow_tokenizer()
    tok.response_template = verbatim_template()
    prompt = tok.encode(PROMPT, add_special_tokens=False)
    response = tok.encode("Hi there<|im_end|>", add_special_tokens=False) + [tok.pad_token_id] * 2
    position = {"second": 1, "middle": 3, "last": len(response) - 3, "padding": len(response) - 1}[where]
    bad = list(response)
    bad[position] = float(bad[position])
    message = rf"^`response` token ids must be integers, got float: .* at position {position}$"
    with pytest.raises(TypeError, match=message):
        tok.parse_response(bad, prefix=prompt)
    assert tok.parse_response(response, prefix=prompt) == plain_parse(tok, response, prompt)


@pytest.mark.parametrize("token", ["<|endoftext|>", "<|im_end|>", "not-in-the-vocabulary", "a"])
def test_pad_and_eos_ids_from_the_backend_vocabulary(monkeypatch, token: str) -> None:
    """Transformers 5's `TokenizersBackend` classes: `_pad_ids` reads the backend's vocabulary, with no
    `convert_tokens_to_ids` call for a known token, and the tokenizer's own rule (the unknown token) else."""
    tok = byte_level_tokenizer()
    tok.pad_token = token
    tok.eos_token = token
    expected = (tok.pad_token_id, tok.eos_token_id)
    _pad_ids(tok)
    calls = []
    real = type(tok).convert_tokens_to_ids
    monkeypatch.setattr(type(tok), "convert_tokens_to_ids", lambda self, t: calls.append(t) or real(self, t))
    assert _pad_ids(tok) == expected
    backend = hf_tok._SPECIAL_IDS_BY_MAP[type(tok)] == "backend"
    known = tok.backend_tokenizer.token_to_id(token) not in (None, 0)
    assert len(calls) == (0 if backend and known else 2)
