"""The token-id path decodes the prompt once and only its last tokens again with the response: the texts
are exactly those of decoding prompt + response in one piece and splitting where the prompt's text ends
(the rule the README states), for prompts of every length, batches with shared and distinct prompts,
SentencePiece leading spaces and UTF-8 characters split over byte tokens at the boundary."""

from __future__ import annotations

import numpy as np
import pytest
from _tokenizers import (
    byte_level_tokenizer,
    char_slow_tokenizer,
    metaspace_tokenizer,
    qwen3_template,
    verbatim_template,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import joint_decode, parse_response
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.tokenizer import (
    _ANCHOR_WINDOW,
    _ANCHOR_WINDOWS,
    _JOINT_TOKENS,
    _PAIR_WINDOWS,
    _SHORT_PROMPT,
    _decode_pairs,
    _ids,
    _pad_ids,
    _split_point,
    _strip_prefix_padding,
    _strip_response_padding,
    install,
)

install()

PROMPT = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
TEXT = (
    PROMPT
    + "<think>caf\u00e9 \N{GRINNING FACE} ok</think> Hello there \N{HOT BEVERAGE}\u00e7a va \N{GRINNING FACE}"
    + "<|im_end|>"
)
TOKENIZERS = {"byte_level": byte_level_tokenizer, "metaspace": metaspace_tokenizer, "slow": char_slow_tokenizer}


def whole_split(tok, prompt: list[int], response: list[int]) -> tuple[str, str]:
    """The reference: decode prompt + response in one piece, split where the prompt's own text ends (after
    removing a batch's padding, as parse_response does)."""
    kwargs = hf_tok._DECODE_KWARGS  # special tokens kept, no clean-up (what parse_response decodes with)
    pad, eos = _pad_ids(tok)
    prompt, response = _strip_prefix_padding(prompt, pad), _strip_response_padding(response, pad, eos)
    if not prompt:
        return "", tok.decode(response, **kwargs)
    full = tok.decode(prompt + response, **kwargs)
    cut = _split_point(full, tok.decode(prompt, **kwargs))
    return full[:cut], full[cut:]


def enc(tok, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False)


def decoded_lengths(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the length of every id sequence the token-id path decodes, through the general plan
    (`joint_decode.decode_one_pair` with `_JOINT_TOKENS` of context): the one-sequence path's own lookup of the
    backend's decode is turned off (`_backend_decoder` None, the class cache empty), so `_decode_one` takes its
    decode from `_decoder`, counted here, which still decodes with the backend (or the slow tokenizer)."""
    seen: list[int] = []
    real = hf_tok._decoder
    backend_of = hf_tok._backend_decoder

    def counting(tokenizer):
        backend = backend_of(tokenizer)
        decode = real(tokenizer) if backend is None else (lambda ids: backend(ids, False))

        def counted(ids):
            seen.append(len(ids))
            return decode(ids)

        return counted

    monkeypatch.setattr(hf_tok, "_decoder", counting)
    monkeypatch.setattr(hf_tok, "_backend_decoder", lambda tokenizer: None)
    monkeypatch.setattr(hf_tok, "_PLAIN_FAST_DECODE", {})
    return seen


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_every_split_point_gives_the_texts_of_the_whole_sequence(kind: str) -> None:
    tok = TOKENIZERS[kind]()
    ids = enc(tok, TEXT)
    assert len(ids) > 3 * _JOINT_TOKENS  # both the short-prompt and the tail path are exercised
    for i in range(len(ids) + 1):
        prompt, response = ids[:i], ids[i:]
        assert _decode_pairs(tok, [response], [prompt]) == [whole_split(tok, prompt, response)], i


@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
@settings(max_examples=40, deadline=None, database=None)
@given(
    words=st.lists(
        st.sampled_from(["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "ok", "\n", "\u2615", "a"]),
        min_size=1,
        max_size=30,
    ),
    cut=st.integers(0, 10_000),
)
def test_any_text_any_cut(kind: str, words: list[str], cut: int) -> None:
    tok = TOKENIZERS[kind]()
    ids = enc(tok, PROMPT + "".join(words))
    i = cut % (len(ids) + 1)
    assert _decode_pairs(tok, [ids[i:]], [ids[:i]]) == [whole_split(tok, ids[:i], ids[i:])]


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_parse_response_at_every_prompt_length_matches_parsing_the_decoded_texts(kind: str) -> None:
    tok = TOKENIZERS[kind]()
    tok.response_template = verbatim_template()
    ids = enc(tok, TEXT)
    start = len(enc(tok, PROMPT))
    for i in range(start - 2 * _JOINT_TOKENS, len(ids) + 1):
        prefix_text, text = whole_split(tok, ids[:i], ids[i:])
        expected = parse_response(text, verbatim_template(), prefix=prefix_text)
        assert tok.parse_response(ids[i:], prefix=ids[:i]) == expected, i


def test_prompt_whose_last_token_merges_with_the_response() -> None:
    """A long prompt (the tail path) ending inside a UTF-8 character, and one ending right before a token
    whose SentencePiece leading space only decoding in context gives."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    emoji = enc(tok, "\N{GRINNING FACE}")
    prompt = enc(tok, PROMPT * 3) + emoji[:3]
    assert len(prompt) > _JOINT_TOKENS
    message = tok.parse_response(emoji[3:] + enc(tok, " ok<|im_end|>"), prefix=prompt)
    assert message["content"] == "\N{GRINNING FACE} ok"

    sp = metaspace_tokenizer()
    sp.response_template = verbatim_template()
    response = sp.convert_tokens_to_ids(["\u2581Hello", "\u2581the", "re", "<|im_end|>"])
    prompt = enc(sp, PROMPT * 3)
    assert len(prompt) > _JOINT_TOKENS
    assert sp.parse_response(response, prefix=prompt)["content"] == " Hello there"


def test_batches_with_shared_and_distinct_prompts() -> None:
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    prompts = [enc(tok, PROMPT), enc(tok, PROMPT.replace("Hi", "Ol\u00e1")), enc(tok, "x" * 40 + PROMPT)]
    outputs = [
        "<think>caf\u00e9</think>Yes \N{GRINNING FACE}<|im_end|>",
        "Bom dia!<|im_end|>",
        "<think>plan</think>Done.<|im_end|>",
    ]
    responses = [enc(tok, o) for o in outputs]
    one_by_one = [[tok.parse_response(r, prefix=p) for r in responses] for p in prompts]
    # one prompt broadcast over the batch (decoded once)
    for j, p in enumerate(prompts):
        assert tok.parse_response(responses, prefix=p) == one_by_one[j]
    # one prompt per row: distinct, and equal rows given as distinct lists
    assert tok.parse_response(responses, prefix=prompts) == [one_by_one[k][k] for k in range(3)]
    same = [list(prompts[1]) for _ in range(3)]
    assert tok.parse_response(responses, prefix=same) == one_by_one[1]
    # 2-D arrays, left-padded prompts
    pad = tok.pad_token_id
    width = max(map(len, prompts))
    padded = np.array([[pad] * (width - len(p)) + p for p in prompts])
    assert tok.parse_response(responses, prefix=padded) == [one_by_one[k][k] for k in range(3)]


def test_prompts_are_decoded_once_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    prompt = enc(tok, PROMPT * 4)
    responses = [enc(tok, "Hi!<|im_end|>")] * 5
    seen = decoded_lengths(monkeypatch)
    assert len(tok.parse_response(responses, prefix=prompt)) == 5
    # the prompt (or its last _ANCHOR_WINDOW tokens, which hold the start anchor) once for the batch; per
    # row only its last tokens (alone, and with the response)
    per_row = _JOINT_TOKENS + len(responses[0])
    assert len([n for n in seen if n > per_row]) == 1
    assert len([n for n in seen if n <= per_row]) <= 2 * len(responses) + 1


def test_fast_tokenizers_decode_through_the_backend_unless_their_class_changes_decoding() -> None:
    from transformers import PreTrainedTokenizerFast

    tok = byte_level_tokenizer()
    assert hf_tok._backend_decoder(tok) is not None

    class Shouting(PreTrainedTokenizerFast):
        def _decode(self, token_ids, **kwargs):
            return super()._decode(token_ids, **kwargs).upper()

    loud = Shouting(tokenizer_object=tok.backend_tokenizer)
    assert hf_tok._backend_decoder(loud) is None
    template = verbatim_template()
    template["start_anchor"] = template["start_anchor"].upper()
    template["fields"]["content"]["close"] = "<|IM_END|>"
    loud.response_template = template
    ids = enc(tok, "hello<|im_end|>")
    assert loud.parse_response(ids, prefix=enc(tok, PROMPT))["content"] == "HELLO"


def test_id_validation() -> None:
    ids = [3, 1, 4, 1, 5]
    assert _ids(ids, "x") is ids  # plain ints: checked in C, not copied
    assert _ids(tuple(ids), "x") == ids
    converted = _ids([np.int64(3), np.int32(1)], "x")
    assert converted == [3, 1] and all(type(i) is int for i in converted)
    for bad in ([1, 2.5], [1, "a"], [1, None], [np.float32(1.0)]):
        with pytest.raises(TypeError, match="token ids must be integers"):
            _ids(bad, "response")
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    with pytest.raises(TypeError, match=r"`prefix` token ids must be integers, got float: 2\.5 at position 1$"):
        tok.parse_response([1, 2], prefix=[1, 2.5])


def test_bad_ids_are_named_with_their_position_on_every_path() -> None:
    """The one-sequence fast path checks ids in C; a bad id anywhere (also far back in a long prompt, whose
    start is never decoded) still raises the error naming the argument, the batch row and the position."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    prompt = enc(tok, LONG_SYSTEM + PROMPT)
    response = enc(tok, "Hi<|im_end|>")
    assert len(prompt) > 2 * _ANCHOR_WINDOW
    assert tok.parse_response(response, prefix=prompt)["content"] == "Hi"
    # (the first item says what the argument is: a float there makes it a batch of something else)
    for where in (1, 3, len(prompt) // 2, len(prompt) - 1):
        bad = list(prompt)
        bad[where] = float(bad[where])
        with pytest.raises(TypeError, match=rf"^`prefix` token ids must be integers, got float: .* at position {where}$"):
            tok.parse_response(response, prefix=bad)
    for where in (1, len(response) - 1):
        bad = list(response)
        bad[where] = None
        with pytest.raises(TypeError, match=rf"^`response` token ids must be integers, got NoneType: None at position {where}$"):
            tok.parse_response(bad, prefix=prompt)
    with pytest.raises(TypeError, match=r"^`response\[1\]` token ids must be integers, got str: 'x' at position 2$"):
        tok.parse_response([response, response[:2] + ["x"]], prefix=prompt)
    with pytest.raises(TypeError, match=r"^`prefix\[0\]` token ids must be integers, got float: 1\.5 at position 0$"):
        tok.parse_response([response, response], prefix=[[1.5] + prompt, prompt])


def test_the_token_path_follows_template_and_vocabulary_changes() -> None:
    """Nothing the one-sequence path looks up goes stale: a new template, a pad token added to the vocabulary
    after the first call, and an EOS changed to another token are all used by the next call."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    prompt = enc(tok, LONG_SYSTEM + PROMPT)
    response = enc(tok, "Hi there<|im_end|>")
    assert tok.parse_response(response, prefix=prompt)["content"] == "Hi there"
    other = verbatim_template()
    other["fields"]["content"]["close"] = " there"
    tok.response_template = other  # the next call parses with it
    assert tok.parse_response(response, prefix=prompt)["content"] == "Hi"
    tok.response_template = verbatim_template()
    # a pad token that is not in the vocabulary yet: right padding with it is only stripped once it is
    assert tok.add_special_tokens({"pad_token": "<|pad_new|>"}) == 1
    pad = tok.convert_tokens_to_ids("<|pad_new|>")
    assert tok.parse_response(response + [pad] * 3, prefix=prompt)["content"] == "Hi there"
    assert tok.parse_response(response, prefix=[pad] * 2 + prompt)["content"] == "Hi there"
    # an EOS changed after a call: its trailing run collapses to the one the model wrote
    bang = tok.convert_tokens_to_ids("!")
    shouted = enc(tok, "Hi") + [bang] * 4
    assert tok.parse_response(shouted, prefix=prompt)["content"] == "Hi!!!!"
    tok.eos_token = "!"
    assert tok.parse_response(shouted, prefix=prompt)["content"] == "Hi!"
    tok.eos_token = "<|endoftext|>"
    assert tok.parse_response(shouted, prefix=prompt)["content"] == "Hi!!!!"


LONG_SYSTEM = "<|im_start|>system\n" + "Follow the rules. Olá, café! \N{GRINNING FACE} " * 30 + "<|im_end|>\n"


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_long_prompts_decoded_from_the_start_anchor_parse_the_same(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt whose last tokens hold the start anchor is decoded from its last tokens only (the engine keeps
    the text after the anchor): the same messages at every split point, and the whole prompt is never
    decoded when the anchor is in the window."""
    tok = TOKENIZERS[kind]()
    tok.response_template = verbatim_template()
    ids = enc(tok, LONG_SYSTEM + TEXT)
    start = len(enc(tok, LONG_SYSTEM + PROMPT))
    assert start > 2 * _ANCHOR_WINDOW
    for i in range(start - _ANCHOR_WINDOW - 4, len(ids) + 1):
        prefix_text, text = whole_split(tok, ids[:i], ids[i:])
        expected = parse_response(text, verbatim_template(), prefix=prefix_text)
        assert tok.parse_response(ids[i:], prefix=ids[:i]) == expected, i
    seen = decoded_lengths(monkeypatch)
    tok.parse_response(ids[start:], prefix=ids[:start])
    assert max(seen) <= max(_ANCHOR_WINDOW, _JOINT_TOKENS + len(ids) - start)


def test_anchor_far_back_or_missing_falls_back_to_the_whole_prompt() -> None:
    """A prefilled assistant text longer than the window after the anchor, or no anchor at all: the whole
    prompt is decoded, and the message is that of the whole decode."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    prefill = "Sure. " * 80
    for prompt_text in (LONG_SYSTEM + PROMPT + prefill, LONG_SYSTEM + prefill):
        prompt = enc(tok, prompt_text)
        response = enc(tok, "more text<|im_end|>")
        prefix_text, text = whole_split(tok, prompt, response)
        assert tok.parse_response(response, prefix=prompt) == parse_response(text, verbatim_template(), prefix=prefix_text)


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_pad_and_eos_ids_are_the_tokenizers_own(kind: str) -> None:
    """`_pad_ids` reads Transformers 5's special-token map directly: the same ids as the attributes, also after
    they change, when unset, and when a class defines the attributes itself."""
    from transformers import PreTrainedTokenizerFast

    tok = TOKENIZERS[kind]()
    assert _pad_ids(tok) == (tok.pad_token_id, tok.eos_token_id)
    tok.pad_token = "<|im_start|>"
    tok.eos_token = "<|endoftext|>"
    assert _pad_ids(tok) == (tok.pad_token_id, tok.eos_token_id)
    assert _pad_ids(tok)[0] == tok.convert_tokens_to_ids("<|im_start|>")
    tok.pad_token = None
    assert _pad_ids(tok) == (None, tok.eos_token_id)

    class Fixed(PreTrainedTokenizerFast):
        pad_token_id = 7  # a class that decides the ids itself

        @property
        def eos_token_id(self):
            return 3

    fixed = Fixed(tokenizer_object=byte_level_tokenizer().backend_tokenizer, pad_token="<|endoftext|>")
    assert _pad_ids(fixed) == (7, 3)


def regex_anchor_template(pattern: str) -> dict:
    template = verbatim_template()
    del template["start_anchor"]
    template["start_anchor_pattern"] = pattern
    return template


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_long_prompts_with_a_bounded_regex_anchor_are_decoded_from_their_last_tokens(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `start_anchor_pattern` whose matches have a bounded length (DeepSeek's, Mistral's alternations) is
    looked for in the decode of the prompt's last tokens like a literal anchor: the same messages as the
    whole decode at every split point, and the whole prompt is not decoded when the anchor is there."""
    tok = TOKENIZERS[kind]()
    template = regex_anchor_template(r"<\|im_start\|>assistant\n|<\|im_start\|>tool\n")
    tok.response_template = template
    ids = enc(tok, LONG_SYSTEM + TEXT)
    start = len(enc(tok, LONG_SYSTEM + PROMPT))
    assert start > 2 * _ANCHOR_WINDOW
    for i in range(start - _ANCHOR_WINDOW - 4, len(ids) + 1):
        prefix_text, text = whole_split(tok, ids[:i], ids[i:])
        assert tok.parse_response(ids[i:], prefix=ids[:i]) == parse_response(text, template, prefix=prefix_text), i
    seen = decoded_lengths(monkeypatch)
    tok.parse_response(ids[start:], prefix=ids[:start])
    assert max(seen) <= max(_ANCHOR_WINDOW, _JOINT_TOKENS + len(ids) - start)


@pytest.mark.parametrize(
    "pattern",
    [
        r"<\|im_start\|>assistant[^<]*",  # unbounded; no `<` after the lead
        r"<\|im_start\|>user[^<]*<\|im_end\|>\n<\|im_start\|>assistant\n",  # `<`s the lead cannot go on from
    ],
)
@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_long_prompts_with_an_unbounded_regex_anchor_no_match_can_span_are_decoded_from_their_last_tokens(
    kind: str, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An anchor of unbounded length whose matches cannot span the start of its leading text (Granite 3.3's
    `<|start_of_role|>assistant[^<]*<|end_of_role|>`) is looked for in the last tokens' decode too: the same
    messages as the whole decode at every split point (also with the prefill after it), and the whole prompt
    is not decoded when the anchor is there."""
    tok = TOKENIZERS[kind]()
    template = regex_anchor_template(pattern)
    tok.response_template = template
    # an earlier assistant header inside the user turn (a match before the last one), where the pattern
    # allows it; the user-turn pattern's `[^<]*` must see a turn without `<` to match at all
    user_text = "Hi <|im_start|>assistant no" if "assistant[" in pattern else "Hi there, no tags"
    prompt_text = LONG_SYSTEM + PROMPT.replace("Hi", user_text) + "Sure, "
    ids = enc(tok, prompt_text + "fine<|im_end|>")
    start = len(enc(tok, LONG_SYSTEM + PROMPT))
    assert start > 2 * _ANCHOR_WINDOW
    for i in range(start - _ANCHOR_WINDOW - 4, len(ids) + 1):
        prefix_text, text = whole_split(tok, ids[:i], ids[i:])
        expected = parse_response(text, template, prefix=prefix_text)
        assert tok.parse_response(ids[i:], prefix=ids[:i]) == expected, i
    end = len(enc(tok, prompt_text))
    prefix_text, text = whole_split(tok, ids[:end], ids[end:])
    seen = decoded_lengths(monkeypatch)
    message = tok.parse_response(ids[end:], prefix=ids[:end])
    assert message == parse_response(text, template, prefix=prefix_text)
    assert max(seen) <= max(_ANCHOR_WINDOW, _JOINT_TOKENS + len(ids) - end)


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_a_regex_anchor_match_that_may_start_before_the_decoded_tail_falls_back_to_the_whole_prompt(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`(?:café! ){3}` over a run of "café! ": which matches the scan finds depends on where it starts, so the
    last match (and the prefilled text after it) in the window's decode is not the whole prompt's at two
    split points of three. Every match in the window starts within the match length of the window's start,
    so the whole prompt is decoded, and the message is the whole decode's at every split point."""
    tok = TOKENIZERS[kind]()
    template = regex_anchor_template(r"(?:café! ){3}")
    tok.response_template = template
    prompt_text = LONG_SYSTEM + PROMPT + "café! " * 60
    ids = enc(tok, prompt_text + "fine<|im_end|>")
    start = len(enc(tok, prompt_text))
    assert start > 2 * _ANCHOR_WINDOW
    contents = set()
    for i in range(start - 6, start + 1):
        prefix_text, text = whole_split(tok, ids[:i], ids[i:])
        expected = parse_response(text, template, prefix=prefix_text)
        got = tok.parse_response(ids[i:], prefix=ids[:i])
        assert got == expected, i
        contents.add(got["content"])
    assert len(contents) > 1  # the split points do give different leftovers: the rule is tested
    seen = decoded_lengths(monkeypatch)
    tok.parse_response(ids[start:], prefix=ids[:start])
    assert max(seen) >= start  # the whole prompt


def test_regex_anchors_read_from_the_tail_only_when_provably_the_same() -> None:
    from hf_response_templates.tokenizer import _anchor_search

    assert _anchor_search(r"\[/INST\]|\[/TOOL_RESULTS\]", 1 << 24) is not None
    assert _anchor_search(r"<｜Assistant｜>(?:</think>)?", 1 << 24) is not None
    # unbounded, but no match can span the start of its leading text (Granite 3.3's anchor): the `<` inside
    # is followed by `|end_of_role|>`, not by the lead's `|start_of_role|>assistant`
    assert _anchor_search(r"<\|start_of_role\|>assistant[^<]*<\|end_of_role\|>", 1 << 24) is not None
    assert _anchor_search(r"<ab>[^<\s]*<ac>[0-9]+", 1 << 24) is not None
    for declined in (
        r"<ab>[^<]*<a",  # a match may end where the text goes on as the lead `<ab>` does
        r"<ab>[^<]*<",
        r"<ab>.*<cd>",  # `.` and sets that hold the lead's first character may consume it
        r"<ab>\S*",
        r"<ab>[^x]*",
        r"<ab>(?:<cd>)*",  # groups, alternations: not read
        r"(?i)<ab>[^<]*",  # case-insensitive
        r"<[^<]*",  # a lead of one character
        r"(?<=\n)<\|assistant\|>",  # lookbehind
        r"(?<!x)<\|assistant\|>",
        r"(<\|a\|>)x\1",  # back reference
        r"(?P<t><\|a\|>)(?P=t)",
        r"(?:x)?",  # may match empty text
        r"(?:x)*",
        r"\bassistant\b",  # \b: `re` and `regex` read it differently
        r"\p{L}+:",  # `regex`-only syntax
    ):
        assert _anchor_search(declined, 1 << 24) is None, declined
    assert _anchor_search(r"\[/INST\]", -1) is None  # not proven cheap: never searched untimed


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_short_prompts_are_decoded_whole_with_the_response_longer_ones_by_their_tail(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to `_SHORT_PROMPT` tokens, the prompt and prompt + response are the only decodes (two calls, the
    prompt's text reused for the split); past it, the prompt's last `_JOINT_TOKENS` tokens are decoded again
    (alone and with the response). Both give the texts of the whole decode. (The windows the prompt's ids point to,
    `anchor_lead`, are off here: this is the plan without them; `test_anchor_lead.py` counts them on these prompts.)"""
    tok = TOKENIZERS[kind]()
    tok.response_template = verbatim_template()
    monkeypatch.setattr(joint_decode, "lead_windows", lambda *args: None)
    ids = enc(tok, PROMPT * 3 + TEXT)
    response = enc(tok, "Hello there<|im_end|>")
    for n in (1, _JOINT_TOKENS, _JOINT_TOKENS + 1, _SHORT_PROMPT, _SHORT_PROMPT + 1, _SHORT_PROMPT + 9):
        prompt = ids[:n]
        prefix_text, text = whole_split(tok, prompt, response)
        seen = decoded_lengths(monkeypatch)
        assert tok.parse_response(response, prefix=prompt) == parse_response(text, verbatim_template(), prefix=prefix_text), n
        if n <= _SHORT_PROMPT:
            assert seen == [n, n + len(response)], n
        else:
            assert seen == [n, _JOINT_TOKENS, _JOINT_TOKENS + len(response)], n
        monkeypatch.undo()
        monkeypatch.setattr(joint_decode, "lead_windows", lambda *args: None)


@pytest.mark.parametrize("kind", sorted(TOKENIZERS))
def test_an_anchor_in_the_last_tokens_of_a_long_prompt_is_read_from_the_smallest_window(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The windows of `_PAIR_WINDOWS` (the one-sequence path) are tried from the smallest: a generation prompt's
    anchor within its last tokens costs the decode of the smallest window (and its head), never a larger one's,
    and the smallest window is the response's decoding context (decoded again with it); an anchor only the
    largest window holds is still read from it. (The windows the prompt's ids point to, `anchor_lead`, are off
    here: `test_anchor_lead.py` counts them on this prompt.)"""
    tok = TOKENIZERS[kind]()
    tok.response_template = verbatim_template()
    monkeypatch.setattr(joint_decode, "lead_windows", lambda *args: None)
    small, large = _PAIR_WINDOWS[0], _PAIR_WINDOWS[-1]
    assert small <= 2 * _JOINT_TOKENS < large
    prompt = enc(tok, LONG_SYSTEM + PROMPT)
    response = enc(tok, "Hi there<|im_end|>")
    seen = decoded_lengths(monkeypatch)
    prefix_text, text = whole_split(tok, prompt, response)
    expected = parse_response(text, verbatim_template(), prefix=prefix_text)
    assert tok.parse_response(response, prefix=prompt) == expected
    if kind == "slow":  # one token per character: the anchor's 11 tokens do not fit after the smallest window's head
        middle = _PAIR_WINDOWS[1]  # read from the next window, whose last tokens are decoded with the response
        assert seen == [small, _JOINT_TOKENS, middle, _JOINT_TOKENS, _JOINT_TOKENS, _JOINT_TOKENS + len(response)]
    else:
        assert seen == [small, _JOINT_TOKENS, small + len(response)]  # window, its head, window + response
    monkeypatch.undo()
    seen = decoded_lengths(monkeypatch)  # a batch: the prompt's text once (`_ANCHOR_WINDOWS`), its tail per row
    assert tok.parse_response([response, response], prefix=prompt) == [expected, expected]
    assert _ANCHOR_WINDOWS[0] in seen and _ANCHOR_WINDOWS[1] not in seen and max(seen) < len(prompt)
    monkeypatch.undo()
    monkeypatch.setattr(joint_decode, "lead_windows", lambda *args: None)
    prefill = enc(tok, "Sure, " * 30)[: (small + large) // 2]  # the anchor is past the small window
    seen = decoded_lengths(monkeypatch)
    prefix_text, text = whole_split(tok, prompt + prefill, response)
    expected = parse_response(text, verbatim_template(), prefix=prefix_text)
    assert tok.parse_response(response, prefix=prompt + prefill) == expected
    assert small in seen and large in seen and max(seen) < len(prompt)


@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
@settings(max_examples=60, deadline=None, database=None)
@given(
    words=st.lists(
        st.sampled_from(["Hello", " there", "\N{GRINNING FACE}", "\u00e9", " ", "<|im_end|>", "<|im_start|>assistant\n",
                         "ok", "\n", "\u2615", "a", "<think>", "</think>"]),
        min_size=1,
        max_size=60,
    ),
    system=st.booleans(),
    cut=st.integers(0, 10_000),
    numpy_ids=st.booleans(),
)
def test_the_one_sequence_path_equals_decode_then_parse(
    kind: str, words: list[str], system: bool, cut: int, numpy_ids: bool
) -> None:
    """`tokenizer.parse_response(ids, prefix=ids)` (the one-sequence path: short prompts decoded whole, long
    ones by their tail, windows holding the anchor, ids checked by the backend) gives the message of parsing
    the texts of the whole decode split where the prompt's text ends, at any cut, also with the response's
    ids as NumPy integers (which the backend converts as `_ids` does)."""
    tok = TOKENIZERS[kind]()
    tok.response_template = verbatim_template()
    ids = enc(tok, (LONG_SYSTEM if system else "") + PROMPT + "".join(words))
    i = cut % (len(ids) + 1)
    prompt, response = ids[:i], ids[i:]
    prefix_text, text = whole_split(tok, prompt, response)
    expected = parse_response(text, verbatim_template(), prefix=prefix_text)
    given_response = [np.int64(t) for t in response] if numpy_ids else response
    assert tok.parse_response(given_response, prefix=prompt) == expected


def test_bad_ids_in_the_stripped_padding_of_one_sequence_are_named() -> None:
    """The one-sequence path lets the backend check the response's ids as it decodes them; trailing padding
    is stripped before decoding, so a non-integer there (equal to the EOS id, `5.0 == 5`) is checked apart
    and still named with its position."""
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    _, eos = _pad_ids(tok)
    assert eos is not None
    prompt = enc(tok, PROMPT)
    response = enc(tok, "Hi")
    assert tok.parse_response(response + [eos, eos], prefix=prompt) == tok.parse_response(response + [eos], prefix=prompt)
    for tail, where in (([float(eos)], 0), ([eos, float(eos)], 1), ([float(eos), eos], 0)):
        with pytest.raises(TypeError, match=rf"^`response` token ids must be integers, got float: .* at position {len(response) + where}$"):
            tok.parse_response(response + tail, prefix=prompt)
