"""A tiny randomly initialised Llama whose `generate` writes a scripted answer.

`ScriptedLogitsProcessor` masks every logit but the next token of each row's script, so greedy
`generate` (batched or not, with left padding, with streamers) produces exactly the token sequence
we want -- the realistic output of a chat model -- while running the real decoding loop, caches,
padding and stopping criteria of the installed Transformers.
"""

from __future__ import annotations

import functools

import torch
from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessor, LogitsProcessorList


class ScriptedLogitsProcessor(LogitsProcessor):
    """Force row `i` of the generation to follow `scripts[i]` (token ids), then EOS."""

    def __init__(self, scripts: list[list[int]], prompt_length: int, eos_token_id: int):
        self.scripts = scripts
        self.prompt_length = prompt_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        step = input_ids.shape[1] - self.prompt_length
        forced = torch.full_like(scores, float("-inf"))
        for row in range(scores.shape[0]):
            script = self.scripts[row % len(self.scripts)]
            forced[row, script[step] if step < len(script) else self.eos_token_id] = 0.0
        return forced


@functools.cache
def _model(vocab_size: int, pad_token_id: int, eos_token_id: int) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=pad_token_id,
        eos_token_id=eos_token_id,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(config).eval()
    return model


def tiny_model(tokenizer) -> LlamaForCausalLM:
    """A few-thousand-parameter LlamaForCausalLM sized for `tokenizer` (cached per vocabulary)."""
    return _model(len(tokenizer), tokenizer.pad_token_id, tokenizer.eos_token_id)


def scripted_generate(model, tokenizer, prompts: list[str], responses: list, *, streamer=None, **kwargs):
    """Tokenize `prompts` (left padded), generate `responses[i]` for row i, return (inputs, output ids).

    A response is text (encoded as the model would emit it) or a list of token ids; generation stops
    at the tokenizer's EOS (which the script appends if the response does not already end with it).
    """
    inputs = tokenizer(
        prompts, return_tensors="pt", padding=True, add_special_tokens=False, return_token_type_ids=False
    )
    scripts = []
    for text in responses:
        ids = list(text) if isinstance(text, list) else tokenizer.encode(text, add_special_tokens=False)
        if not ids or ids[-1] != tokenizer.eos_token_id:
            ids.append(tokenizer.eos_token_id)
        scripts.append(ids)
    processor = ScriptedLogitsProcessor(scripts, inputs["input_ids"].shape[1], tokenizer.eos_token_id)
    with torch.no_grad():
        out = model.generate(
            **inputs,
            logits_processor=LogitsProcessorList([processor]),
            do_sample=False,
            max_new_tokens=max(len(s) for s in scripts) + 2,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            streamer=streamer,
            **kwargs,
        )
    return inputs, out
