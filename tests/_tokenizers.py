"""Real tokenizers for the tests, built offline with the `tokenizers` library (nothing from the Hub).

* `byte_level_tokenizer()`: a GPT-2/Qwen-style byte-level BPE whose chat delimiters (`<|im_start|>`,
  `<think>`, `<tool_call>`, harmony's `<|channel|>`, ...) are added special tokens. Characters the
  tiny training corpus never saw (emoji) fall apart into several byte tokens, so one character can be
  split across tokens -- and across the prompt/generation boundary.
* `metaspace_tokenizer()`: a SentencePiece/Llama-style BPE (Metaspace `▁`), whose decoder drops the
  leading space of the *first* token of whatever it decodes: decoding a generation without its prompt
  loses a space that decoding them together keeps.
* `char_slow_tokenizer()`: a pure-Python ("slow") `PreTrainedTokenizer`, to show the API is on every
  tokenizer class.

Every builder returns a fresh `PreTrainedTokenizerFast` / `PreTrainedTokenizer` (the trained
`tokenizers.Tokenizer` is cached), so tests can mutate what they get.
"""

from __future__ import annotations

import copy
import functools
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the tests build everything locally; never touch the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

CHATML_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
]
HARMONY_SPECIALS = [
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|constrain|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
]
SPECIALS = CHATML_SPECIALS + HARMONY_SPECIALS

CORPUS = [
    "system\nYou are a helpful assistant.",
    "user\nWhat is the weather in Paris?",
    "assistant\nLet me check the weather for you.",
    "The user wants the weather. I should call get_weather.",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    "It is sunny and 21 degrees in Paris today.",
    "Hello! How can I help you today?",
    "analysis final commentary to=functions.get_weather json",
    "Olá! Café com açúcar, por favor. Ça va très bien.",
    "Think step by step. The answer is 42.",
] * 3

from engine_helpers import SMOLLM3 as QWEN3_TEMPLATE  # noqa: E402  (the seed's ChatML template)

HARMONY_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor_pattern": r"<\|start\|>assistant",
    "fields": {
        # the model re-emits "<|start|>assistant" before each channel: part of the opens (as in gpt-oss.json)
        "reasoning_content": {"open": ["<|channel|>analysis<|message|>",
                                       "<|start|>assistant<|channel|>analysis<|message|>"], "close": "<|end|>"},
        "content": {"open": ["<|channel|>final<|message|>", "<|start|>assistant<|channel|>final<|message|>"],
                    "close": ["<|return|>", "<|end|>"]},
        "tool_calls": {
            "open_pattern": r"(?:<\|start\|>assistant)?<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}

# Text content kept verbatim (no strip): shows exactly which spaces the decoding produced.
VERBATIM_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {"content": {"close": "<|im_end|>", "content": "text", "content_args": {"strip": False}}},
}


def qwen3_template() -> dict:
    return copy.deepcopy(QWEN3_TEMPLATE)


def harmony_template() -> dict:
    return copy.deepcopy(HARMONY_TEMPLATE)


def verbatim_template() -> dict:
    return copy.deepcopy(VERBATIM_TEMPLATE)


@functools.cache
def _byte_level_backend() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=420,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


@functools.cache
def _metaspace_backend() -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first")
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<unk>", *CHATML_SPECIALS], show_progress=False
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def _wrap(backend: Tokenizer, **kwargs):
    from transformers import PreTrainedTokenizerFast

    settings = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "padding_side": "left", **kwargs}
    named = {settings["eos_token"], settings["pad_token"]}
    extra = [t for t in SPECIALS if t in backend.get_vocab() and t not in named]
    return PreTrainedTokenizerFast(
        tokenizer_object=copy.deepcopy(backend), additional_special_tokens=extra, **settings
    )


def byte_level_tokenizer(**kwargs):
    """Byte-level BPE with ChatML + harmony delimiters as special tokens (eos `<|im_end|>`, pad
    `<|endoftext|>`, left padding)."""
    return _wrap(_byte_level_backend(), **kwargs)


def metaspace_tokenizer(**kwargs):
    """SentencePiece-style (Metaspace) BPE with the ChatML delimiters as special tokens."""
    return _wrap(_metaspace_backend(), **kwargs)


def char_slow_tokenizer():
    """A pure-Python tokenizer (one token per character, the delimiters as special tokens)."""
    from transformers import PreTrainedTokenizer

    class CharTokenizer(PreTrainedTokenizer):
        model_input_names = ["input_ids", "attention_mask"]

        def __init__(self, **kwargs):
            chars = sorted(set("".join(CORPUS)) | set(" \n"))
            self._vocab = {c: i for i, c in enumerate(chars)}
            self._inv = {i: c for c, i in self._vocab.items()}
            super().__init__(**kwargs)

        @property
        def vocab_size(self):
            return len(self._vocab)

        def get_vocab(self):
            return {**self._vocab, **self.added_tokens_encoder}

        def _tokenize(self, text, **kwargs):
            return list(text)

        def _convert_token_to_id(self, token):
            return self._vocab.get(token, 0)

        def _convert_id_to_token(self, index):
            return self._inv.get(index, "?")

        def convert_tokens_to_string(self, tokens):
            return "".join(tokens)

        def save_vocabulary(self, save_directory, filename_prefix=None):
            return ()

    return CharTokenizer(
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[t for t in CHATML_SPECIALS if t not in ("<|im_end|>", "<|endoftext|>")],
    )


# --------------------------------------------------------------------------- token-id path helpers


def enc(tok, text: str) -> list[int]:
    """The ids of `text`, without the tokenizer's own special tokens."""
    return tok.encode(text, add_special_tokens=False)


def whole(tok, prompt: list[int], response: list[int]) -> tuple[str, str]:
    """The reference of the token-id path: decode prompt + response in one piece, split where the prompt's own text
    ends."""
    from hf_response_templates.tokenizer import _DECODE_KWARGS, _split_point

    full = tok.decode(prompt + response, **_DECODE_KWARGS)
    cut = _split_point(full, tok.decode(prompt, **_DECODE_KWARGS))
    return full[:cut], full[cut:]


class CountedBackend:
    """A `tokenizers.Tokenizer` whose `decode` calls are counted (everything else forwarded)."""

    def __init__(self, backend) -> None:
        self.backend = backend
        self.seen: list[int] = []

    def __getattr__(self, name: str):
        return getattr(self.backend, name)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        self.seen.append(len(ids))
        return self.backend.decode(ids, skip_special_tokens)


def counted(tok) -> CountedBackend:
    """Wrap `tok`'s backend in a `CountedBackend` (the token-id path still takes the backend's own decode)."""
    from hf_response_templates import tokenizer as hf_tok

    wrapper = CountedBackend(tok.__dict__["_tokenizer"])
    tok.__dict__["_tokenizer"] = wrapper
    assert hf_tok._backend_decoder(tok) is not None  # still the backend's own decode
    return wrapper
