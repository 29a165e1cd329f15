"""Zero configuration for the shipped families (issue 13): a tokenizer whose chat template is *exactly* one
the library was proven against parses without `response_template`; anything less is never guessed.

The table of fingerprints lives in the package (`hf_response_templates/fingerprints.json`), generated from
`tests/fixtures/chat_templates/` by `scripts/make_fingerprints.py`; a test checks it is current."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from _chat_render import ALL_FAMILIES
from _tokenizers import byte_level_tokenizer

from hf_response_templates import (
    NoResponseTemplateError,
    ResponseParser,
    TemplateError,
    detect_template,
    get_template,
    list_templates,
    parse_response,
)
from hf_response_templates import tokenizer as integration
from hf_response_templates.library import (
    FINGERPRINTS_FILE,
    build_fingerprint_table,
    chat_template_fingerprint,
    fingerprint_match,
)
from hf_response_templates.tokenizer import ResponseStreamer, install

install()

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "chat_templates"

#: the four seed families: (fixture, a raw output the model writes)
SEEDS = {
    "qwen3": ("Qwen-Qwen3-0.6B.jinja", '<think>Hm.</think>Hi!<tool_call>{"name": "f", "arguments": {}}</tool_call><|im_end|>'),
    "smollm3": ("HuggingFaceTB-SmolLM3-3B.jinja", "<think>Hm.</think>Hi!<|im_end|>"),
    "gpt-oss": ("openai-gpt-oss-120b.jinja", "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>"),
    "cohere-command-r7b": ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "<|START_RESPONSE|>Hi!<|END_RESPONSE|>"),
}


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


COHERE_TOKENS = ["<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
                 "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|CHATBOT_TOKEN|>"]


def stock_tokenizer(chat_template: str):
    """The test tokenizer (ChatML and harmony delimiters as special tokens, plus Command R7B's) with a chat
    template and no response_template: what `from_pretrained` gives for a stock model folder."""
    tok = byte_level_tokenizer()
    tok.add_tokens(COHERE_TOKENS, special_tokens=True)
    tok.chat_template = chat_template
    return tok


@pytest.fixture(autouse=True)
def _fresh_announcements(monkeypatch):
    monkeypatch.delenv("HF_RESPONSE_TEMPLATES_NO_AUTO", raising=False)
    monkeypatch.setattr(integration, "_announced", set())


def test_the_table_is_current():
    table = json.loads(FINGERPRINTS_FILE.read_text(encoding="utf-8"))
    proven = {family.fixture: family.name for family in ALL_FAMILIES}
    assert table == build_fingerprint_table(FIXTURES, proven), "run python scripts/make_fingerprints.py"
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_fingerprints.py"), "--check"])
    assert check.returncode == 0


def test_every_fixture_and_every_shipped_family_is_in_the_table():
    table = json.loads(FINGERPRINTS_FILE.read_text(encoding="utf-8"))["fingerprints"]
    # every fixture proven by the round-trip matrix, except byte-identical copies of another one
    proven = {family.fixture for family in ALL_FAMILIES}
    distinct = {chat_template_fingerprint(read(name)): name for name in sorted(proven, reverse=True)}
    assert {row["chat_template"] for row in table.values()} == set(distinct.values())
    assert {row["template"] for row in table.values()} == set(list_templates())


def test_the_fingerprint_ignores_line_endings_and_surrounding_whitespace_only():
    text = read("Qwen-Qwen3-0.6B.jinja")
    assert fingerprint_match(text) == "qwen3"
    assert fingerprint_match("\n" + text.replace("\n", "\r\n") + "\n\n") == "qwen3"
    assert fingerprint_match(text.replace("<think>", "<think> ", 1)) is None
    assert chat_template_fingerprint(text) != chat_template_fingerprint(text + "{# #}")


@pytest.mark.parametrize("family", sorted(SEEDS))
def test_a_stock_tokenizer_parses_with_zero_config(family, caplog):
    fixture, output = SEEDS[family]
    tok = stock_tokenizer(read(fixture))
    assert tok.response_template is None
    expected = parse_response(output, get_template(family), prefix="")
    with caplog.at_level(logging.WARNING, logger="hf_response_templates"):
        assert tok.parse_response(output, prefix="") == expected
        assert tok.parse_response([output, output], prefix="") == [expected, expected]
        parser = tok.get_response_parser(prefix="")
    events = parser.feed(output)
    assert parser.finalize()[0] == expected and events
    notes = [r for r in caplog.records if "proven against" in r.getMessage()]
    assert len(notes) == 1 and repr(family) in notes[0].getMessage()  # logged once
    assert tok.response_template is None  # nothing stored: save_pretrained writes what it wrote before


def test_a_stock_tokenizer_streams_with_zero_config():
    tok = stock_tokenizer(read("Qwen-Qwen3-0.6B.jinja"))
    streamer = ResponseStreamer(tok)
    streamer.put([tok.encode("<|im_start|>assistant\n", add_special_tokens=False)])
    for token in tok.encode(SEEDS["qwen3"][1], add_special_tokens=False):
        streamer.put([token])
    streamer.end()
    list(streamer)
    assert streamer.message == parse_response(SEEDS["qwen3"][1], get_template("qwen3"), prefix="")


def test_the_environment_variable_turns_zero_config_off(monkeypatch):
    monkeypatch.setenv("HF_RESPONSE_TEMPLATES_NO_AUTO", "1")
    tok = stock_tokenizer(read("Qwen-Qwen3-0.6B.jinja"))
    with pytest.raises(NoResponseTemplateError):
        tok.parse_response("Hi<|im_end|>", prefix="")


def test_a_vocabulary_without_the_familys_tokens_is_not_zero_config():
    tok = byte_level_tokenizer()  # no Command R7B tokens
    tok.chat_template = read(SEEDS["cohere-command-r7b"][0])
    with pytest.raises(NoResponseTemplateError):
        tok.parse_response("<|START_RESPONSE|>Hi!<|END_RESPONSE|>", prefix="")


def test_markers_only_is_not_guessed_and_the_error_says_how():
    tok = stock_tokenizer(read("Qwen-Qwen3-0.6B.jinja") + "\n{#- a local edit -#}")
    with pytest.raises(NoResponseTemplateError) as info:
        tok.parse_response("Hi<|im_end|>", prefix="")
    message = str(info.value)
    assert "'qwen3'" in message and "hf_response_templates.attach(tokenizer)" in message


def test_an_unknown_chat_template_error_names_no_family():
    tok = stock_tokenizer("{{ messages }}")
    with pytest.raises(NoResponseTemplateError) as info:
        tok.parse_response("Hi", prefix="")
    assert "family" not in str(info.value)


class FakeTokenizer:
    def __init__(self, chat_template, vocab):
        self.chat_template = chat_template
        self._vocab = vocab

    def get_vocab(self):
        return dict(self._vocab)


def test_detect_uses_the_fingerprint_first_and_markers_second():
    text = read("openai-gpt-oss-120b.jinja")
    harmony = {"<|channel|>": 1, "<|start|>": 2}
    assert detect_template(FakeTokenizer(text, harmony)) == "gpt-oss"
    assert detect_template(FakeTokenizer(text + "\r\n", harmony)) == "gpt-oss"  # exact after normalisation
    assert detect_template(FakeTokenizer(text, {"a": 1})) is None  # the vocabulary contradicts it
    # the fingerprint decides before the markers: an exact template is its family even where markers of
    # another family also appear (here: a Qwen3-Coder default beside the exact gpt-oss tool_use template)
    coder_marker_only = "{# <|im_start|> <tool_call> <function= <parameter= #}"
    named = {"default": text, "tool_use": coder_marker_only}
    assert detect_template(named) == "gpt-oss"
    assert detect_template({"default": text + "{# edit #}", "tool_use": coder_marker_only}) is None  # two fit


def test_a_template_name_works_wherever_a_template_does():
    output = SEEDS["qwen3"][1]
    expected = parse_response(output, get_template("qwen3"), prefix="")
    assert parse_response(output, "qwen3", prefix="") == expected
    assert ResponseParser("qwen3", "").feed(output) == ResponseParser(get_template("qwen3"), "").feed(output)
    assert byte_level_tokenizer().parse_response(output, "qwen3", prefix="") == expected
    with pytest.raises(TemplateError) as info:
        parse_response(output, "qwen-3", prefix="")
    assert "qwen3" in str(info.value) and "'qwen-3'" in str(info.value)


def test_module_level_parse_response_given_a_batch_says_what_to_use():
    with pytest.raises(TypeError, match=r"tokenizer\.parse_response"):
        parse_response(["Hi<|im_end|>", "Yo<|im_end|>"], "qwen3", prefix="")
    with pytest.raises(TypeError, match=r"tokenizer\.parse_response"):
        parse_response([1, 2, 3], "qwen3", prefix="")
