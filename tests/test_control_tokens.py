"""Control tokens in token ids (Transformers 5.25's rule): a control token is a delimiter only where the model
generated its id; spelled out with ordinary tokens (`<`, `|im_end`, `|>`) it is text, unchanged in the message.

Checked on every token-id path (`parse_response` one sequence and batch, `get_response_parser(token_ids=True)`,
`ResponseStreamer`) against a straightforward reference (split the ids at the control ids, decode each run in
context, defuse the spellings in the ordinary runs: `reference_text`), on hand-written cases and on hypothesis-made
id sequences, with byte-level and SentencePiece-style (Metaspace) decoders and contrived overlapping control tokens;
and against Transformers 5.25's own `TokenIdDecoder` and `parse_response` where installed (skipped on 4.x).
"""

from __future__ import annotations

import copy
import functools
import re

import pytest
from _tokenizers import CHATML_SPECIALS, CORPUS, _byte_level_backend, byte_level_tokenizer
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

from hf_response_templates import parse_response as text_parse
from hf_response_templates import tokenizer as hf_tok
from hf_response_templates.control_tokens import (
    MARKER,
    ControlTokens,
    IdTextStream,
    defused_text,
    strip_markers,
)
from hf_response_templates.tokenizer import ResponseStreamer, install

install()

TEMPLATE = {  # text fields only, kept verbatim: the message shows exactly the text each field got
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text",
                              "content_args": {"strip": False}},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "text",
                       "content_args": {"strip": False}},
        "content": {"close": "<|im_end|>", "content": "text", "content_args": {"strip": False}},
    },
}
JSON_TOOLS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json"},
        "content": {"close": "<|im_end|>"},
    },
}
PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"

SPELLED_CORPUS = [*CORPUS, "<|im_end|> </think> <think> <tool_call> </tool_call> <|im_start|> a|b <x> {\"k\": 1}"] * 2


@functools.cache
def _metaspace_backend() -> Tokenizer:
    """SentencePiece style (Metaspace: the first token's leading space is dropped), with `<`, `|`, `>` ... in its
    vocabulary (so control tokens can be spelled out) and the ChatML delimiters as special tokens."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<unk>", *CHATML_SPECIALS], show_progress=False)
    tok.train_from_iterator(SPELLED_CORPUS, trainer)
    return tok


def metaspace_tokenizer():
    from transformers import PreTrainedTokenizerFast

    extra = [t for t in CHATML_SPECIALS if t not in ("<|im_end|>", "<|endoftext|>")]
    return PreTrainedTokenizerFast(tokenizer_object=copy.deepcopy(_metaspace_backend()), eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", unk_token="<unk>", additional_special_tokens=extra)


#: contrived control tokens overlapping each other and ordinary text: a token that is a prefix of another, one
#: that starts inside another, one ending in another's start
OVERLAPS = ["<a>", "<a><", "><", "a>b", "<a><a>", "b<"]


def overlap_tokenizer():
    from transformers import PreTrainedTokenizerFast

    backend = copy.deepcopy(_byte_level_backend())
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in OVERLAPS])
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>")


TOKENIZERS = {"byte_level": byte_level_tokenizer, "metaspace": metaspace_tokenizer, "overlaps": overlap_tokenizer}


@functools.cache
def tokenizer(name: str):
    return TOKENIZERS[name]()


def ids_of(tok, text: str) -> list[int]:
    """`text` encoded with its control tokens as their ids."""
    return tok.encode(text, add_special_tokens=False)


def spelled(tok, text: str) -> list[int]:
    """`text` encoded with ordinary tokens only (control tokens spelled out)."""
    return tok.encode(text, add_special_tokens=False, split_special_tokens=True)


# ---------------------------------------------------------------------------------------------- the reference


def control_of(tok) -> dict[int, str]:
    """The control tokens by the definition (these tokenizers have no chat template: the special added tokens)."""
    return {i: t.content for i, t in tok.backend_tokenizer.get_added_tokens_decoder().items() if t.special}


def reference_text(tok, ids: list[int], context: list[int] = ()) -> str:
    """The rule, straightforwardly: split `ids` at the control ids; the text of each piece is what it adds to the
    decode of everything before it (from the start of `context`); every spelling in an ordinary piece defused
    (`re.sub` with the control tokens longest first, as Transformers does)."""
    control = control_of(tok)
    alternation = re.compile("|".join(map(re.escape, sorted(set(control.values()), key=len, reverse=True))))

    def decode(seq):
        return tok.backend_tokenizer.decode(list(seq), skip_special_tokens=False)

    pieces, start = [], 0
    for i, token in enumerate(ids):
        if token in control:
            if i > start:
                pieces.append((ids[start:i], False))
            pieces.append(([token], True))
            start = i + 1
    if start < len(ids):
        pieces.append((ids[start:], False))
    out, done = [], list(context)
    for piece, is_control in pieces:
        before, after = decode(done), decode(done + piece)
        text = after[hf_tok._split_point(after, before):]
        out.append(text if is_control else alternation.sub(lambda m: MARKER.join(m.group()), text))
        done += piece
    return "".join(out)


def reference_message(tok, template, response: list[int], prompt: list[int]) -> dict:
    response = hf_tok._strip_response_padding(response, tok.pad_token_id, tok.eos_token_id)  # (as parsing does)
    prefix_text = reference_text(tok, prompt)
    text = reference_text(tok, response, prompt)
    if prefix_text.endswith("\ufffd") and not text.startswith("\ufffd"):
        prefix_text = prefix_text.rstrip("\ufffd")
    return strip_markers(text_parse(text, template, prefix=prefix_text, strict=False))


def our_texts(tok, response: list[int], prompt: list[int]) -> tuple[str, str]:
    """Our (prefix text, response text) with the markers: the one-sequence decoding, then the rule."""
    used: list = []
    texts = hf_tok._decode_one(tok, response, prompt, hf_tok._resolve_template(tok, TEMPLATE).start_anchor, used)
    control = hf_tok._control_tokens(tok)
    prefix_text, text, _ = hf_tok._control_texts(tok, control, *used[:2], *texts, window=used[2])
    return prefix_text, text


def streamed_message(tok, template, response: list[int], prompt: list[int], chunks: list[int]) -> dict:
    parser = tok.get_response_parser(template, prefix=prompt, token_ids=True)
    events = list(parser.initial_events)
    at = 0
    for size in chunks:
        events += parser.feed(response[at : at + size])
        at += size
    events += parser.feed(response[at:])
    message, final = parser.finalize()
    events += final
    assert all(MARKER not in repr(e) for e in events)
    return message


def streamer_message(tok, template, response: list[int], prompt: list[int]) -> dict:
    tok = copy.copy(tok)
    tok.response_template = template
    streamer = ResponseStreamer(tok, strict=False)
    streamer.put([prompt])
    for token in response:
        streamer.put([token])
    streamer.end()
    events = list(streamer)
    assert all(MARKER not in repr(e) for e in events)
    return streamer.message


def all_paths(tok, template, response, prompt) -> list[dict]:
    one = tok.parse_response(response, template, prefix=prompt, strict=False)
    batch = tok.parse_response([response, response + [tok.pad_token_id] * 2], template,
                               prefix=[[tok.pad_token_id] + prompt, prompt], strict=False)
    return [one, *batch, streamed_message(tok, template, response, prompt, [1, 2, 3]),
            streamed_message(tok, template, response, prompt, [len(response)]),
            streamer_message(tok, template, response, prompt)]


# ---------------------------------------------------------------------------------------------- hand-written


@pytest.mark.parametrize("name", ["byte_level", "metaspace"])
def test_spelled_out_control_tokens_stay_text_in_content_reasoning_and_arguments(name):
    tok = tokenizer(name)
    prompt = ids_of(tok, PROMPT)
    response = (ids_of(tok, "<think>\nwhy ") + spelled(tok, "</think> and <|im_end|>") + ids_of(tok, " ok</think>")
                + ids_of(tok, "Say ") + spelled(tok, "<tool_call>x</tool_call>") + ids_of(tok, " then")
                + ids_of(tok, "<tool_call>") + ids_of(tok, "call ") + spelled(tok, "<|im_end|>")
                + ids_of(tok, "</tool_call><|im_end|>"))
    expected = reference_message(tok, TEMPLATE, response, prompt)
    assert "</think> and <|im_end|>" in expected["reasoning_content"]
    assert "<tool_call>x</tool_call>" in expected["content"]
    assert len(expected["tool_calls"]) == 1 and expected["tool_calls"][0].endswith("<|im_end|>")
    for message in all_paths(tok, TEMPLATE, response, prompt):
        assert message == expected


def test_a_marker_character_the_model_wrote_is_kept_where_nothing_was_defused():
    # U+FDD2 marks defused spellings while parsing; with none in the response, the model's own U+FDD2 stays (the
    # README's differences table: Transformers removes it from every string when parsing ids)
    tok = tokenizer("byte_level")
    prompt = ids_of(tok, PROMPT)
    response = ids_of(tok, "a" + MARKER + "b<|im_end|>")
    for message in all_paths(tok, TEMPLATE, response, prompt):
        assert message["content"] == "a" + MARKER + "b"
    # and where a spelling was defused, the markers go and the text is the model's
    response = ids_of(tok, "x ") + spelled(tok, "<|im_end|>") + ids_of(tok, " y<|im_end|>")
    for message in all_paths(tok, TEMPLATE, response, prompt):
        assert message["content"] == "x <|im_end|> y"


def test_json_tool_arguments_keep_a_spelled_out_delimiter():
    tok = tokenizer("byte_level")
    response = (ids_of(tok, "<tool_call>") + ids_of(tok, '{"name": "say", "arguments": {"text": "a ')
                + spelled(tok, "</tool_call><|im_end|>") + ids_of(tok, ' b"}}') + ids_of(tok, "</tool_call><|im_end|>"))
    message = tok.parse_response(response, JSON_TOOLS, prefix=ids_of(tok, PROMPT))
    assert message["tool_calls"] == [{"name": "say", "arguments": {"text": "a </tool_call><|im_end|> b"}}]
    # as text, the same characters are delimiters (the JSON is cut: a parse error)
    with pytest.raises(ValueError):
        tok.parse_response(tok.decode(response), JSON_TOOLS, prefix=PROMPT)


def test_a_spelled_out_anchor_in_the_prompt_is_not_an_anchor():
    tok = tokenizer("byte_level")
    # the prefill after the real anchor spells out another anchor and a <think>: the real anchor stays the last
    prompt = ids_of(tok, PROMPT) + spelled(tok, "<|im_start|>assistant\n<think>")
    message = tok.parse_response(ids_of(tok, " more<|im_end|>"), TEMPLATE, prefix=prompt)
    assert message == {"role": "assistant", "content": "<|im_start|>assistant\n<think> more"}
    assert message == reference_message(tok, TEMPLATE, ids_of(tok, " more<|im_end|>"), prompt)
    assert message == streamer_message(tok, TEMPLATE, ids_of(tok, " more<|im_end|>"), prompt)
    # as text it is the anchor and an open <think>
    assert tok.parse_response(" more<|im_end|>", TEMPLATE, prefix=tok.decode(prompt)) == {
        "role": "assistant", "reasoning_content": " more<|im_end|>"}


def test_spellings_straddling_decode_and_feed_boundaries():
    tok = tokenizer("byte_level")
    prompt = ids_of(tok, PROMPT)
    # one character per token: every spelling straddles token (and feed) boundaries
    chars = [t for ch in "a<|im_end|>b</think><|im_e" for t in spelled(tok, ch)]
    response = chars + ids_of(tok, "<|im_end|>")
    expected = reference_message(tok, TEMPLATE, response, prompt)
    assert expected["content"] == "a<|im_end|>b</think><|im_e"
    for sizes in ([1] * len(response), [2, 3, 1, 5], [7, 7]):
        assert streamed_message(tok, TEMPLATE, response, prompt, sizes) == expected
    # a prefix of a control token right before the control token's id: only the id is a delimiter
    response = spelled(tok, "x<|im_") + ids_of(tok, "<|im_end|>")
    assert tok.parse_response(response, TEMPLATE, prefix=prompt)["content"] == "x<|im_"


def test_a_character_split_over_byte_tokens_next_to_a_spelling():
    tok = tokenizer("byte_level")
    emoji = spelled(tok, "\N{GRINNING FACE}")
    assert len(emoji) > 1
    response = emoji[:2] + ids_of(tok, "<|im_end|>")  # half a character, then the real end
    prompt = ids_of(tok, PROMPT)
    response = emoji + spelled(tok, "<|im_end|>") + emoji[:2] + emoji[2:] + ids_of(tok, "<|im_end|>")
    expected = reference_message(tok, TEMPLATE, response, prompt)
    assert expected["content"] == "\N{GRINNING FACE}<|im_end|>\N{GRINNING FACE}"
    for message in all_paths(tok, TEMPLATE, response, prompt):
        assert message == expected


def test_texts_without_spellings_are_left_alone_and_nothing_is_decoded_again(monkeypatch):
    tok = tokenizer("byte_level")
    prompt, response = ids_of(tok, PROMPT), ids_of(tok, "<think>a</think>b<|im_end|>")
    calls = []
    monkeypatch.setattr(hf_tok, "defused_text", lambda *a, **k: calls.append(a) or defused_text(*a, **k))
    assert tok.parse_response(response, TEMPLATE, prefix=prompt) == {
        "role": "assistant", "reasoning_content": "a", "content": "b"}
    assert calls == []


def test_slow_tokenizers_decode_ids_as_text():
    from _tokenizers import char_slow_tokenizer

    tok = char_slow_tokenizer()
    assert hf_tok._control_tokens(tok) is None


def test_control_tokens_follow_the_definition_and_its_changes():
    tok = copy.deepcopy(tokenizer("byte_level"))
    control = hf_tok._control_tokens(tok)
    assert set(control.tokens) == set(control_of(tok).values())
    assert hf_tok._control_tokens(tok) is control  # cached
    tok.add_tokens(["<plain>"])  # not special, not in a chat template: ordinary
    assert "<plain>" not in hf_tok._control_tokens(tok).tokens
    tok.chat_template = "{% for m in messages %}<plain>{{ m['content'] }}{{ '<q>' }}{% endfor %}"
    assert "<plain>" in hf_tok._control_tokens(tok).tokens
    tok.add_tokens(["<q>", " "])
    control = hf_tok._control_tokens(tok)
    assert "<q>" in control.tokens and " " not in control.tokens  # a string constant counts; whitespace never
    tok.chat_template = "{# <plain> #}{{ messages }}"  # a comment is not literal text
    assert "<plain>" not in hf_tok._control_tokens(tok).tokens
    if hasattr(tok, "chat_control_tokens"):  # Transformers 5.25: the list replaces the template's literal text
        tok.chat_control_tokens = ["<q>"]
        control = hf_tok._control_tokens(tok)
        assert "<q>" in control.tokens and "<plain>" not in control.tokens


def test_the_literal_text_is_transformers_own():
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    if not hasattr(utils, "_get_template_literal_text"):
        pytest.skip("Transformers before 5.25")
    template = ("{%- for m in messages %}<|im_start|>{{ m['role'] + '\\n' }}{{ m['content'] | trim }}"
                "{% if m.tool_calls %}{{ '<tool_call>' }}{% endif %}{# <hidden> #}<|im_end|>\n{% endfor %}"
                "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
    assert set(hf_tok._template_literal_text(template).split("\0")) == set(
        utils._get_template_literal_text(template).split("\0"))


# ---------------------------------------------------------------------------------------------- hypothesis

PIECES = ["<|im_end|>", "</think>", "<think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_", "</", "<",
          "|>", "im_end", "think>", "\n", " a", "b", "|", ">", "<|im_end|", "\N{GRINNING FACE}"]


@st.composite
def id_sequences(draw, tok, pieces=PIECES, size=12):
    """Ids made of pieces, each as its ids (a control token) or spelled out, or single ordinary ids."""
    control_ids = sorted(control_of(tok))
    out: list[int] = []
    for _ in range(draw(st.integers(0, size))):
        kind = draw(st.sampled_from(["as ids", "spelled", "spelled", "control id", "one id"]))
        if kind == "control id":
            out.append(draw(st.sampled_from(control_ids)))
        elif kind == "one id":
            out.append(draw(st.integers(0, tok.backend_tokenizer.get_vocab_size(False) - 1)))
        else:
            piece = draw(st.sampled_from(pieces))
            out += ids_of(tok, piece) if kind == "as ids" else spelled(tok, piece)
    return out


def _sequences(name, pieces=PIECES):
    tok = tokenizer(name)
    return st.tuples(id_sequences(tok, pieces), id_sequences(tok, pieces, 6))


@pytest.mark.parametrize("name", ["byte_level", "metaspace", "overlaps"])
@settings(deadline=None)
@given(data=st.data())
def test_texts_equal_the_reference(name, data):
    tok = tokenizer(name)
    pieces = PIECES + OVERLAPS + ["<a", "a>", "b", "<"] if name == "overlaps" else PIECES
    response, prompt_tail = data.draw(_sequences(name, pieces))
    response = hf_tok._strip_response_padding(response, tok.pad_token_id, tok.eos_token_id)  # (as parsing does)
    if not response:
        return
    prompt = ids_of(tok, PROMPT) + prompt_tail
    prefix_text, text = our_texts(tok, response, prompt)
    assert text == reference_text(tok, response, prompt)
    expected_prefix = reference_text(tok, prompt)
    if expected_prefix.endswith("\ufffd") and not prefix_text.endswith("\ufffd"):
        expected_prefix = expected_prefix.rstrip("\ufffd")
    assert expected_prefix.endswith(prefix_text)  # (a window of the prompt's end, or all of it)
    assert text_parse(text, TEMPLATE, prefix=prefix_text, strict=False) == text_parse(
        text, TEMPLATE, prefix=expected_prefix, strict=False)
    # the incremental decoder, fed in pieces, gives the same text
    stream = IdTextStream(lambda seqs: hf_tok._decode_many(tok, seqs), hf_tok._control_tokens(tok), prompt[-4:])
    cut = data.draw(st.integers(0, len(response)))
    assert stream.feed(response[:cut]) + stream.feed(response[cut:]) + stream.flush() == text


@pytest.mark.parametrize("name", ["byte_level", "metaspace"])
@settings(deadline=None, max_examples=30)
@given(data=st.data())
def test_messages_equal_the_reference_on_every_path(name, data):
    tok = tokenizer(name)
    response, prompt_tail = data.draw(_sequences(name))
    # (streaming never strips padding: give every path the ids without it)
    response = hf_tok._strip_response_padding(response, tok.pad_token_id, tok.eos_token_id)
    prompt = ids_of(tok, PROMPT) + prompt_tail
    if not response or tok.decode(prompt).endswith("\ufffd"):
        return  # (a prompt ending inside a character: one-shot and streaming differ there, before this rule)
    expected = reference_message(tok, TEMPLATE, response, prompt)
    for message in all_paths(tok, TEMPLATE, response, prompt):
        assert message == expected


@settings(deadline=None)
@given(text=st.text(st.sampled_from("<a>b|x"), max_size=20), final=st.booleans(), cut=st.integers(0, 20))
def test_the_incremental_defusing_equals_defusing_the_whole_run(text, final, cut):
    control = ControlTokens({i: t for i, t in enumerate(OVERLAPS)})
    stream = IdTextStream(lambda seqs: ["" for _ in seqs], control)
    out = stream._push(text[:cut], False) + stream._push(text[cut:], False) + stream._push("", True)
    assert out == control.defuse(text) == re.sub(
        "|".join(map(re.escape, sorted(OVERLAPS, key=len, reverse=True))), lambda m: MARKER.join(m.group()), text)


#: control-token sets for the cheap test alone (`ControlTokens.is_clean`): two first characters (one scan each); a
#: token that is a prefix of another (a match longer than the id's own text); one text that two ids have; more first
#: characters than `_FIRST_CHAR_SCANS` (one scan of them all); the overlapping ones (`inner`: one scan, its test)
CLEAN_SETS = {
    "two firsts": ["<|im_end|>", "<think>", "</think>", "[INST]", "[/INST]", "[TOOL_CALLS]"],
    "prefix of another": ["<a>", "<a>x", "[b]"],
    "shared text": ["<t>", "<t>", "[u]"],
    "many firsts": ["<a>", "[b]", "{c}", "(d)", "|e|", "#f#"],
    "overlaps": OVERLAPS,
}
ORDINARY = ["<", "[", "a", "x", ">", "]", "|", "INST", "/", "t", "b", "<a", "[/", "think", "im_end|>", " ", "e", "f"]


@pytest.mark.parametrize("name", list(CLEAN_SETS))
@settings(deadline=None, max_examples=300)
@given(data=st.data())
def test_the_cheap_test_says_clean_exactly_where_the_rule_changes_nothing(name, data):
    """`is_clean` on a decoder that writes each id's text (verbatim, no context; the ids: ordinary pieces, control
    ids, control tokens spelled out one character per id): clean only where the rule (split at the control ids,
    every spelling in the runs defused) leaves the text as it is, and, where no occurrence can start inside another,
    everywhere it does (the exact path is not taken for nothing)."""
    tokens = CLEAN_SETS[name]
    control = ControlTokens({1000 + i: t for i, t in enumerate(tokens)})
    texts = {**dict(enumerate(ORDINARY)), **control.by_id}
    chars = {c: 100 + k for k, c in enumerate(sorted({c for t in tokens for c in t} - set(ORDINARY)))}
    texts.update({i: c for c, i in chars.items()})
    spell = {t: [ORDINARY.index(c) if c in ORDINARY else chars[c] for c in t] for t in tokens}
    pieces = st.one_of(st.sampled_from(sorted(texts)).map(lambda i: [i]), st.sampled_from(tokens).map(spell.get))
    ids = [i for piece in data.draw(st.lists(pieces, max_size=10)) for i in piece]
    text = "".join(texts[i] for i in ids)
    alternation = re.compile("|".join(map(re.escape, sorted(set(tokens), key=len, reverse=True))))
    runs, run = [], ""
    for i in ids:
        if i in control.by_id:
            runs += [alternation.sub(lambda m: MARKER.join(m.group()), run), texts[i]]
            run = ""
        else:
            run += texts[i]
    unchanged = "".join([*runs, alternation.sub(lambda m: MARKER.join(m.group()), run)]) == text
    clean = control.is_clean(text, ids)
    assert not clean or unchanged
    if not control.inner:
        assert clean == unchanged
    assert ControlTokens(control.by_id, verbatim=False).is_clean(text, ids) == (
        unchanged and not any(t[0] in text for t in tokens))


# ---------------------------------------------------------------------------------------------- native 5.25


def _native_token_ids():
    return pytest.importorskip("transformers.utils.chat_parsing.token_ids",
                               reason="Transformers' token-id parsing is 5.25+")


@settings(deadline=None)
@given(data=st.data())
def test_the_response_text_equals_native_token_id_decoding(data):
    """(Not with the contrived `OVERLAPS`: there Transformers 5.25's hold-back can cut through a spelling, e.g.
    `<|im_end|><|im_end|>` spelled out, with `><` a control token, keeps the second one live.)"""
    native = _native_token_ids()
    name = "byte_level"
    tok = tokenizer(name)
    response, _ = data.draw(_sequences(name))
    response = hf_tok._strip_response_padding(response, tok.pad_token_id, tok.eos_token_id)  # (as parsing does)
    if not response:
        return
    decoder = native.TokenIdDecoder(tok)
    cut = data.draw(st.integers(0, len(response)))
    expected = decoder.feed(response[:cut]) + decoder.feed(response[cut:]) + decoder.flush()
    assert reference_text(tok, response) == expected
    _, text = our_texts(tok, response, ids_of(tok, PROMPT))
    assert text == expected


@settings(deadline=None, max_examples=50)
@given(data=st.data())
def test_messages_equal_native_parse_response(data):
    native = _native_token_ids()  # noqa: F841 - skips before 5.25
    from transformers.utils.chat_parsing import parse_response as native_parse

    tok = tokenizer("byte_level")
    response, _ = data.draw(_sequences("byte_level", [p for p in PIECES if p != "\N{GRINNING FACE}"]))
    # the end only at the end (ours ends the message there, native reopens the content: a known difference)
    response = [i for i in response if i not in (tok.eos_token_id, tok.pad_token_id)] + ids_of(tok, "<|im_end|>")
    prompt = ids_of(tok, PROMPT)
    template = {  # no field whose close is followed by text: the known differences are about that
        "defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
        "fields": {"content": {"close": "<|im_end|>", "content": "text", "content_args": {"strip": False}}}}
    try:
        expected = native_parse(response, template, prefix=prompt, tokenizer=tok)
    except ValueError:
        return
    expected = {k: v for k, v in expected.items() if v != ""}
    ours = tok.parse_response(response, template, prefix=prompt, strict=False)
    assert {k: v for k, v in ours.items() if v != ""} == expected


@pytest.mark.parametrize("name", ["byte_level", "metaspace"])
def test_a_token_id_parser_pickles_and_copies_mid_stream(name):
    # (README: a ResponseParser pickles mid-stream; so does one fed ids, with its held text and its tokenizer)
    import pickle

    tok = tokenizer(name)
    prompt = ids_of(tok, PROMPT)
    response = (ids_of(tok, "<think>\nwhy ") + spelled(tok, "</think> and <|im_end|>") + ids_of(tok, " ok</think>")
                + ids_of(tok, "Say ") + spelled(tok, "<tool_call>x</tool_call>") + ids_of(tok, "<|im_end|>"))
    expected = reference_message(tok, TEMPLATE, response, prompt)
    for cut in range(len(response) + 1):
        parser = tok.get_response_parser(TEMPLATE, prefix=prompt, token_ids=True)
        events = list(parser.initial_events) + parser.feed(response[:cut])
        for clone in (pickle.loads(pickle.dumps(parser)), copy.deepcopy(parser)):
            tail = clone.feed(response[cut:])
            message, final = clone.finalize()
            assert message == expected
            assert all(MARKER not in repr(e) for e in events + tail + final)
        # the original goes on unchanged by its copies
        parser.feed(response[cut:])
        assert parser.finalize()[0] == expected
