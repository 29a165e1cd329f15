"""`byte_level_pair`: with a byte-level BPE backend (decoder `ByteLevel` alone) the one-sequence token-id path decodes
the response alone, then a window of the prompt holding the start anchor (or the whole prompt): [response, window]
where `joint_decode.decode_one_pair` decoded [window, window + response] or [window, tail, tail + response]. A
response whose decode starts with U+FFFD (its first bytes may finish a character the prompt began) falls back to
`decode_one_pair`; any other decoder never takes this path.

The decodes are counted through the backend itself (its `decode` wrapped, so the path still takes the backend's own
decode), and the texts are compared with decoding prompt + response in one piece and splitting where the prompt's
text ends, and with the previous plan (`decode_one_pair` with the byte-level context), on generated id sequences
cut anywhere (inside a UTF-8 character split over byte tokens, inside the anchor, mid-word)."""

from __future__ import annotations

import pytest
from _tokenizers import byte_level_tokenizer, counted, enc, metaspace_tokenizer, verbatim_template, whole
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import decoders

from hf_response_templates import parse_response
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.byte_level_pair import byte_level_texts
from hf_response_templates.joint_context import BYTE_LEVEL, BYTE_LEVEL_TOKENS
from hf_response_templates.joint_decode import decode_one_pair
from hf_response_templates.tokenizer import _DECODE_KWARGS, install

install()

ANCHOR = "<|im_start|>assistant\n"
WORDS = ["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "ok", "\n", "\u2615", "a", "<think>",
         "</think>", "caf\u00e9", " \u00e7a", "\U0001f9ea\U0001f9ea", ANCHOR]


def regex_template() -> dict:
    """The verbatim template with a regex start anchor of bounded width (an alternation)."""
    template = verbatim_template()
    del template["start_anchor"]
    template["start_anchor_pattern"] = r"<\|im_start\|>assistant\n|</think>"
    return template


def test_the_response_is_decoded_alone_then_the_anchor_window() -> None:
    """A 40-token prompt ending with the anchor: two decodes, [response, window from the anchor's lead token],
    fewer tokens than the previous plan's [window, window + response]."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    ids = enc(tok, "Hello there caf\u00e9 ok " * 20 + ANCHOR + "<think>\n")[-40:]
    response = enc(tok, "Hi \N{GRINNING FACE} there<|im_end|>")
    backend = counted(tok)
    message = tok.parse_response(response, prefix=ids)
    window = len(enc(tok, ANCHOR + "<think>\n"))
    assert backend.seen == [len(response), window]
    whole_prefix, whole_text = whole(tok, ids, response)
    assert message == parse_response(whole_text, verbatim_template(), prefix=whole_prefix)


def test_a_regex_anchor_takes_the_smallest_window_and_no_tail() -> None:
    """A regex anchor (no lead-token hint) on a 64-token prompt: the smallest window cannot show that the match it
    finds is the prompt's last (fewer than the pattern's width of characters before it), the next one does:
    [response, 16, 24] where the previous plan decoded [16, 24, 4, 4 + response]."""
    tok = byte_level_tokenizer()
    tok.response_template = regex_template()
    ids = enc(tok, "Hello there caf\u00e9 ok " * 20 + ANCHOR)[-64:]
    response = enc(tok, "Hi there<|im_end|>")
    backend = counted(tok)
    message = tok.parse_response(response, prefix=ids)
    assert backend.seen == [len(response), 16, 24]
    whole_prefix, whole_text = whole(tok, ids, response)
    assert message == parse_response(whole_text, regex_template(), prefix=whole_prefix)


def test_a_short_prompt_is_decoded_whole_once() -> None:
    """A 9-token prompt (no anchor in it): [response, prompt] (the previous plan: [prompt, prompt + response])."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    ids = enc(tok, "Hello there caf\u00e9 ok " * 5)[-9:]
    assert len(ids) == 9
    response = enc(tok, "Hi there<|im_end|>")
    backend = counted(tok)
    tok.parse_response(response, prefix=ids)
    assert backend.seen == [len(response), len(ids)]


def test_a_response_starting_inside_a_character_falls_back() -> None:
    """The prompt ends with the first bytes of a character the response finishes: the response's own decode starts
    with U+FFFD, so the previous plan runs after it (the window, then the last 4 tokens alone and with the
    response), and the texts are the whole decode's."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    ids = enc(tok, "Hello there caf\u00e9 ok " * 20 + ANCHOR + "\u2615\u2615 hot \U0001f9ea")
    cuts = [i for i in range(len(ids) - 30, len(ids)) if tok.decode(ids[i:], **_DECODE_KWARGS)[:1] == "\ufffd"]
    assert cuts, "the byte-level test tokenizer splits these characters over byte tokens"
    i = cuts[0]
    prompt, response = ids[:i], ids[i:]
    backend = counted(tok)
    texts = hf_tok._decode_one(tok, response, prompt, hf_tok._resolve_template(tok, None).start_anchor)
    assert backend.seen[0] == len(response) and len(backend.seen) > 2
    assert backend.seen[-2:] == [BYTE_LEVEL_TOKENS, BYTE_LEVEL_TOKENS + len(response)] or \
        backend.seen[-1] > len(response)  # (the window, or the prompt, decoded again with the response)
    whole_prefix, whole_text = whole(tok, prompt, response)
    assert texts is not None and texts[1] == whole_text
    assert whole_prefix.endswith(texts[0])


def test_other_decoders_never_take_it() -> None:
    """Metaspace, and a byte-level decoder inside a `Sequence`: None (the decoder is read at every call: a decoder
    replaced later is seen at once)."""
    meta = metaspace_tokenizer().backend_tokenizer
    ids = [1, 2, 3]
    assert byte_level_texts(meta.decode, meta, ids, ids, ANCHOR) is None
    tok = byte_level_tokenizer()
    backend = tok.backend_tokenizer
    ids = enc(tok, "Hello " + ANCHOR)
    assert byte_level_texts(backend.decode, backend, ids, ids, ANCHOR) is not None
    backend.decoder = decoders.Sequence([decoders.ByteLevel()])
    assert byte_level_texts(backend.decode, backend, ids, ids, ANCHOR) is None
    backend.decoder = decoders.ByteLevel()
    assert byte_level_texts(backend.decode, backend, ids, ids, ANCHOR) is not None


_TOK = byte_level_tokenizer()


@pytest.mark.parametrize("anchor_kind", ["literal", "regex", "none"])
@settings(max_examples=60, deadline=None, database=None)
@given(
    before=st.lists(st.sampled_from(WORDS), min_size=0, max_size=60),
    prefill=st.lists(st.sampled_from([w for w in WORDS if w != ANCHOR]), max_size=6),
    generated=st.lists(st.sampled_from(WORDS), min_size=1, max_size=20),
    shift=st.integers(-6, 6),
)
def test_the_texts_equal_the_whole_decode_and_the_previous_plan(
    anchor_kind: str, before: list[str], prefill: list[str], generated: list[str], shift: int
) -> None:
    """The response's text is exactly the whole decode's and the previous plan's (`decode_one_pair`, byte-level
    context); the prefix text is an end of the whole prompt's holding its last anchor (what the engine reads);
    the messages parse the same."""
    tok = _TOK
    template = {"literal": verbatim_template, "regex": regex_template}.get(anchor_kind, verbatim_template)()
    tok.response_template = template
    ids = enc(tok, "".join(before) + ANCHOR + "".join(prefill) + "".join(generated))
    end = len(enc(tok, "".join(before) + ANCHOR + "".join(prefill)))
    i = min(max(end + shift, 1), len(ids) - 1)
    prompt, response = ids[:i], ids[i:]
    backend = tok.backend_tokenizer
    anchor = None if anchor_kind == "none" else hf_tok._resolve_template(tok, None).start_anchor
    # (a trailing run of EOS ids is one EOS to both paths: `generate`'s padding)
    kept = hf_tok._strip_response_padding(response, *hf_tok._pad_ids(tok))
    whole_prefix, whole_text = whole(tok, prompt, kept)
    old = decode_one_pair(lambda x: backend.decode(x, False), prompt, kept, anchor, backend, *BYTE_LEVEL)
    texts = hf_tok._decode_one(tok, response, prompt, anchor)
    assert texts is not None
    prefix_text, text = texts
    assert text == whole_text == old[1]
    assert whole_prefix.endswith(prefix_text)
    at = whole_prefix.rfind(ANCHOR)
    if anchor_kind == "literal" and at >= 0:
        assert prefix_text[prefix_text.rfind(ANCHOR):] == whole_prefix[at:] == old[0][old[0].rfind(ANCHOR):]
    elif anchor_kind == "none":
        assert prefix_text == whole_prefix == old[0]
    expected = parse_response(whole_text, template, prefix=whole_prefix)
    assert parse_response(text, template, prefix=prefix_text) == expected
    if anchor_kind != "none":
        assert tok.parse_response(response, prefix=prompt) == expected


def test_lead_window_is_the_last_anchor_among_the_last_ids() -> None:
    """`anchor_lead.lead_window`: the window from the last occurrence of the anchor's lead token followed by the rest
    of the anchor's ids, among the prompt's last ids; a lead token followed by other ids, or none at all: None."""
    from hf_response_templates.anchor_lead import _LEADS, lead_window

    _LEADS.clear()  # (hints are cached by `id(backend)`: one of a backend freed earlier may stand at this id)
    tok = byte_level_tokenizer()
    backend = tok.backend_tokenizer
    turn = "<|im_start|>user\nHi<|im_end|>\n"
    ids = enc(tok, "Hello there " * 30 + ANCHOR + "ok" + turn + ANCHOR + "<think>\n")
    assert lead_window(backend, ANCHOR, ids) == len(enc(tok, ANCHOR + "<think>\n"))
    assert lead_window(backend, ANCHOR, enc(tok, "Hello there " * 30 + turn)) is None  # the lead, not the anchor
    assert lead_window(backend, ANCHOR, enc(tok, "Hello there " * 30)) is None
    far = enc(tok, ANCHOR + "Hello there " * 40)  # only before the last ids a window can use
    assert lead_window(backend, ANCHOR, far) is None
