"""Tokenizers that carry a response template copy and pickle like any Transformers object (issue 13,
item 1): `copy.deepcopy`, `pickle`, and `multiprocessing` with the spawn start method (what Ray, Spark
and `datasets.map(num_proc=...)` do too). Compiled templates and parsers mid-stream pickle as well."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import pytest
from _mp_worker import continue_parser, parse_rows
from _tokenizers import byte_level_tokenizer, harmony_template, qwen3_template
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import (
    RegexTimeoutError,
    ResponseParseError,
    ResponseParser,
    TemplateError,
    get_template,
    load_template,
)
from hf_response_templates.tokenizer import install

install()

PREFIX = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
OUTPUTS = [
    '<think>Plan.</think>Hello!<tool_call>{"name": "wave", "arguments": {"n": 2}}</tool_call><|im_end|>',
    "<think></think>Just text.<|im_end|>",
    '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {}}</tool_call>',
]


def tokenizer_with_template():
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    return tok


def test_deepcopy_of_a_tokenizer_with_a_template():
    tok = tokenizer_with_template()
    twin = copy.deepcopy(tok)
    assert twin.response_template == tok.response_template
    assert twin.parse_response(OUTPUTS, prefix=PREFIX) == tok.parse_response(OUTPUTS, prefix=PREFIX)
    twin.response_template = harmony_template()  # the copy is independent
    assert tok.response_template == qwen3_template()


def test_pickle_round_trip_of_a_tokenizer_with_a_template():
    tok = tokenizer_with_template()
    loaded = pickle.loads(pickle.dumps(tok))
    assert loaded.response_template == qwen3_template()
    assert loaded.parse_response(OUTPUTS, prefix=PREFIX) == tok.parse_response(OUTPUTS, prefix=PREFIX)


def test_a_compiled_template_pickles_to_the_cached_object():
    compiled = load_template(get_template("gpt-oss"))
    assert pickle.loads(pickle.dumps(compiled)) is compiled  # recompiled through the cache
    assert copy.deepcopy(compiled) is compiled and copy.copy(compiled) is compiled  # immutable


def test_errors_pickle_with_their_attributes():
    for error in (
        TemplateError("bad key", field="content", key="close"),
        ResponseParseError("bad json", field="tool_calls", text="{", position=7),
        RegexTimeoutError(field="f", key="open_pattern", pattern="(a+)+$", timeout=1.0, text="aaa", position=2),
    ):
        loaded = pickle.loads(pickle.dumps(error))
        assert type(loaded) is type(error) and str(loaded) == str(error)
        assert vars(loaded) == vars(error)


@given(st.sampled_from(OUTPUTS), st.data())
def test_a_parser_pickled_mid_stream_continues_exactly(output, data):
    cut = data.draw(st.integers(0, len(output)))
    reference = ResponseParser(get_template("qwen3"), PREFIX)
    events = reference.feed(output[:cut])
    for clone in (pickle.loads(pickle.dumps(reference)), copy.deepcopy(reference), copy.copy(reference)):
        clone.feed(output[cut:])  # finishing a clone must leave `reference` as it was (checked below)
        clone.finalize()
    rest = reference.feed(output[cut:])
    message, final = reference.finalize()
    for clone_of in (pickle.loads, copy.deepcopy):
        parser = ResponseParser(get_template("qwen3"), PREFIX)
        assert parser.feed(output[:cut]) == events
        clone = clone_of(pickle.dumps(parser)) if clone_of is pickle.loads else clone_of(parser)
        assert clone.feed(output[cut:]) == rest
        assert clone.finalize() == (message, final)
        # the original is untouched by its clone
        assert parser.feed(output[cut:]) == rest and parser.finalize() == (message, final)


def test_a_regex_template_parser_pickled_mid_stream():
    text = '<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary to=functions.f json<|message|>{"a": 1}<|call|>'
    for cut in range(0, len(text), 7):
        parser = ResponseParser(harmony_template(), "<|start|>assistant")
        parser.feed(text[:cut])
        clone = pickle.loads(pickle.dumps(parser))
        expected_events = parser.feed(text[cut:])
        assert clone.feed(text[cut:]) == expected_events
        assert clone.finalize() == parser.finalize()


@pytest.fixture(scope="module")
def spawn_pool():
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        yield pool


def test_spawn_pool_parses_a_batch(spawn_pool):
    tok = tokenizer_with_template()
    ids = [tok.encode(text, add_special_tokens=False) for text in OUTPUTS]
    prefix_ids = tok.encode(PREFIX, add_special_tokens=False)
    jobs = [(tok, [row], prefix_ids) for row in ids] + [(tok, OUTPUTS, PREFIX)]
    results = spawn_pool.map(parse_rows, jobs)
    expected = tok.parse_response(ids, prefix=prefix_ids)
    assert [r[0] for r in results[:-1]] == expected
    assert results[-1] == tok.parse_response(OUTPUTS, prefix=PREFIX) == expected


def test_spawn_pool_continues_a_parser_started_here(spawn_pool):
    output = OUTPUTS[0]
    parsers = []
    for cut in (0, 10, 40, len(output)):
        parser = ResponseParser(get_template("qwen3"), PREFIX)
        parser.feed(output[:cut])
        parsers.append((parser, output[cut:]))
    expected = [continue_parser((copy.deepcopy(p), rest)) for p, rest in parsers]
    assert spawn_pool.map(continue_parser, parsers) == expected
    assert all(message == expected[0][1] for _, message in expected)
