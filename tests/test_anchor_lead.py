"""`anchor_lead`: the one-sequence token-id path reads from the prompt's ids where its start anchor begins (the anchor's
leading added token followed by the ids of the rest of the anchor) and tries the smallest window holding it. Only a
choice of windows: the texts are those of the whole decode whatever the prompt, the cut and a wrong hint; the decodes
are counted (not timed)."""

from __future__ import annotations

import pytest
from _tokenizers import byte_level_tokenizer, enc, metaspace_tokenizer, verbatim_template, whole
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import anchor_lead, joint_decode, parse_response
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.joint_decode import _JOINT_TOKENS, _PAIR_WINDOWS, decode_one_pair
from hf_response_templates.tokenizer import install

install()

ANCHOR = "<|im_start|>assistant\n"
PROMPT = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n" + ANCHOR
FILLER = "<|im_start|>user\n" + "Olá, café! ok " * 20 + "<|im_end|>\n"
WORDS = ["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "ok", "\n", "a", "<think>", "</think>",
         "<|im_start|>", "<|im_start|>user\n", "<|im_start|>assist", ANCHOR]


def after_anchor(text: str) -> str | None:
    at = text.rfind(ANCHOR)
    return None if at < 0 else text[at:]


def counted(tok) -> tuple[list[int], object]:
    seen: list[int] = []
    decode = hf_tok._decoder(tok)

    def run(ids: list[int]) -> str:
        seen.append(len(ids))
        return decode(ids)

    return seen, run


def anchor_of(tok):
    return hf_tok._resolve_template(tok, verbatim_template()).start_anchor


@pytest.mark.parametrize("prefill", ["", "<think>\n", "<|im_start|><think>"])
@pytest.mark.parametrize("size", [21, 40, 400])
def test_the_window_is_the_smallest_holding_the_anchor(prefill: str, size: int) -> None:
    """The anchor's last k tokens (anchor + prefill) give a window of k + `_JOINT_TOKENS` + 1 tokens: its decode, its
    head's, then the window again with the response (the window is at most `2 * _JOINT_TOKENS` here). A prefill
    starting with the anchor's own added token (Kimi K3's ``<|open|>think``) is skipped: its next ids are not the
    anchor's. Fails on the code before (16-token windows; a prompt of at most `_SHORT_PROMPT` tokens decoded whole)."""
    tok = byte_level_tokenizer()
    tail = enc(tok, ANCHOR + prefill)
    prompt = (enc(tok, FILLER) * 40)[: size - len(tail)] + tail
    response = enc(tok, "Hi there \N{GRINNING FACE}<|im_end|>")
    window = len(tail) + _JOINT_TOKENS + 1
    assert window <= 2 * _JOINT_TOKENS
    seen, decode = counted(tok)
    prefix_text, text = decode_one_pair(decode, prompt, response, anchor_of(tok), tok.backend_tokenizer)
    assert seen == [window, _JOINT_TOKENS, window + len(response)]
    whole_prefix, whole_text = whole(tok, prompt, response)
    assert text == whole_text and after_anchor(prefix_text) == after_anchor(whole_prefix)
    # and through the tokenizer (which passes its backend): the message of the whole decode, the same decodes
    tok.response_template = verbatim_template()
    assert tok.parse_response(response, prefix=prompt) == parse_response(whole_text, verbatim_template(),
                                                                          prefix=whole_prefix)


def test_a_far_anchor_is_read_from_the_window_holding_it_and_the_prompts_tail() -> None:
    """An anchor 20 tokens from the end: one window of 29 tokens (not 16, 24, then 64), its head, then the prompt's
    last `_JOINT_TOKENS` tokens alone and with the response (`_joint_split`)."""
    tok = byte_level_tokenizer()
    prefill = enc(tok, "Sure, " * 30)[:20]
    prompt = (enc(tok, FILLER) * 40)[:400] + enc(tok, ANCHOR) + prefill
    response = enc(tok, "ok<|im_end|>")
    seen, decode = counted(tok)
    prefix_text, text = decode_one_pair(decode, prompt, response, anchor_of(tok), tok.backend_tokenizer)
    window = len(enc(tok, ANCHOR)) + len(prefill) + _JOINT_TOKENS + 1
    assert window not in _PAIR_WINDOWS
    assert seen == [window, _JOINT_TOKENS, _JOINT_TOKENS, _JOINT_TOKENS + len(response)]
    whole_prefix, whole_text = whole(tok, prompt, response)
    assert text == whole_text and after_anchor(prefix_text) == after_anchor(whole_prefix)


def test_no_hint_without_the_anchors_ids() -> None:
    """No occurrence of the anchor's ids (a prompt cut inside the anchor, or without it), an anchor that does not
    start with an added token, an object that is not a `tokenizers.Tokenizer`: no hint (the usual windows)."""
    tok = byte_level_tokenizer()
    backend = tok.backend_tokenizer
    cut = enc(tok, FILLER) + enc(tok, "<|im_start|>assistant")
    assert anchor_lead.lead_windows(backend, ANCHOR, cut, 10_000) is None
    assert anchor_lead.lead_windows(backend, ANCHOR, enc(tok, FILLER), 10_000) is None
    assert anchor_lead.lead_windows(backend, "assistant\n", enc(tok, PROMPT), 10_000) is None
    assert anchor_lead.lead_windows(object(), ANCHOR, enc(tok, PROMPT), 10_000) is None
    whole_ids = enc(tok, PROMPT)
    lead, rest = anchor_lead._LEADS[id(backend), ANCHOR]
    assert lead == tok.convert_tokens_to_ids("<|im_start|>") and rest[::-1] == enc(tok, "assistant\n")
    assert anchor_lead.lead_windows(backend, ANCHOR, whole_ids, 10_000) == (
        len(rest) + 1 + _JOINT_TOKENS + 1, *_PAIR_WINDOWS)
    # a window that would not save tokens over the plan without one is not tried
    assert anchor_lead.lead_windows(backend, ANCHOR, whole_ids, 2 * len(rest) + 3 * _JOINT_TOKENS) == ()


@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
@settings(max_examples=60, deadline=None, database=None)
@given(
    before=st.lists(st.sampled_from(WORDS), max_size=40),
    prefill=st.lists(st.sampled_from(WORDS[:-1]), max_size=8),
    generated=st.lists(st.sampled_from(WORDS), min_size=1, max_size=20),
    shift=st.integers(-6, 6),
    wrong=st.booleans(),
)
def test_the_texts_are_the_whole_decodes_whatever_the_hint(kind, before, prefill, generated, shift, wrong) -> None:
    """Equality with decode-then-split on generated prompts holding the anchor's added token in other turns, partial
    anchors, prefills starting with it, cut anywhere near the end; also with a wrong hint (another token's id)."""
    tok = byte_level_tokenizer() if kind == "byte_level" else metaspace_tokenizer()
    backend = tok.backend_tokenizer
    ids = enc(tok, "".join(before) + ANCHOR + "".join(prefill) + "".join(generated))
    end = len(enc(tok, "".join(before) + ANCHOR + "".join(prefill)))
    i = min(max(end + shift, 1), len(ids))
    prompt, response = ids[:i], ids[i:]
    if wrong:
        anchor_lead._LEADS[id(backend), ANCHOR] = (tok.convert_tokens_to_ids("<|im_end|>"), None)
    try:
        seen, decode = counted(tok)
        prefix_text, text = decode_one_pair(decode, prompt, response, anchor_of(tok), backend)
    finally:
        anchor_lead._LEADS.pop((id(backend), ANCHOR), None)
    whole_prefix, whole_text = whole(tok, prompt, response)
    assert text == whole_text
    assert after_anchor(prefix_text) == after_anchor(whole_prefix)
    if after_anchor(whole_prefix) is None:
        assert prefix_text == whole_prefix
    assert sum(seen) <= 2 * len(prompt) + len(response) + 4 * sum(_PAIR_WINDOWS)  # bounded
    tok.response_template = verbatim_template()
    assert tok.parse_response(response, prefix=prompt) == parse_response(whole_text, verbatim_template(),
                                                                          prefix=whole_prefix)


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """One entry per (backend, anchor); cleared when full."""
    monkeypatch.setattr(anchor_lead, "_LEADS", {})
    tok = byte_level_tokenizer()
    ids = enc(tok, PROMPT)
    for n in range(anchor_lead._MAX_ENTRIES + 5):
        anchor_lead.lead_windows(tok.backend_tokenizer, f"<|im_start|>x{n}", ids, 10_000)
        assert len(anchor_lead._LEADS) <= anchor_lead._MAX_ENTRIES
    assert joint_decode.lead_windows is anchor_lead.lead_windows
