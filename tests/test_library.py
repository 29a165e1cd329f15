"""The ready-template library: list/get/attach, and detection from real chat templates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _chat_render import FIXTURES

from hf_response_templates import load_template
from hf_response_templates.library import (
    TEMPLATE_INFO,
    NoTemplateDetectedError,
    UnknownTemplateError,
    _candidate_dirs,
    attach,
    detect_template,
    get_template,
    list_templates,
    template_info,
    templates_dir,
)

REQUIRED = {"smollm3", "qwen3", "qwen3-coder", "gpt-oss", "cohere-command-r7b"}
#: the SPEC's top-level keys, and "policy": a family's parse-policy defaults (hf_response_templates/policy.py,
#: docs/response-templates.md "Parse policy")
SPEC_TOP_LEVEL = {"version", "defaults", "start_anchor", "start_anchor_pattern", "fields", "policy"}
SPEC_FIELD_KEYS = {
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "repeats",
    "join",
    "optional",
    "content",
    "content_args",
    "transform",
    "transform_each",
}

# every fixture chat template -> the shipped template detection must name (None: not shipped / unknown)
DETECT = {
    "HuggingFaceTB-SmolLM3-3B.jinja": "smollm3",
    "Qwen-Qwen3-0.6B.jinja": "qwen3",
    "Qwen3-Coder.jinja": "qwen3-coder",
    "openai-gpt-oss-120b.jinja": "gpt-oss",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "cohere-command-r7b",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "hermes3",
    "moonshotai-Kimi-K2.jinja": "kimi-k2",
    "GLM-4.6.jinja": "glm-4.6",
    "glm_4_5.jinja": "glm-4.6",  # GLM-4.5 emits the same format (round trip proven on both)
    "deepseek-ai-DeepSeek-V3.1.jinja": "deepseek-v3.1",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": "mistral-small-3.2",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": "deepseek-r1",
    "meta-llama-Llama-3.3-70B-Instruct.jinja": "llama3",
    "ibm-granite-granite-3.3-2B-Instruct.jinja": "granite-3.3",
    "google-gemma-4-31B-it.jinja": "gemma4",
    "gemma4.jinja": "gemma4",  # the first upstream Gemma 4 template (round trip proven on both)
    # group g1 (2025-2026 families)
    "Qwen-Qwen3.5-4B.jinja": "qwen3.5",
    "Qwen-Qwen3.5-0.8B.jinja": "qwen3.5",
    "Qwen-Qwen3.6-35B-A3B.jinja": "qwen3.5",
    "nvidia-NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": "qwen3.5",  # the same format as Qwen3.5
    "Qwen-Qwen3-235B-A22B-Thinking-2507.jinja": "qwen3-thinking-2507",
    "Qwen-Qwen3-235B-A22B-Instruct-2507.jinja": "qwen3",  # the original Qwen3 format
    "Qwen-Qwen3-Next-80B-A3B-Instruct.jinja": "hermes3",  # Hermes-style calls, no reasoning
    "XiaomiMiMo-MiMo-VL.jinja": "qwen3",  # a reasoning model; the chat template renders no <think>
    "zai-org-GLM-4.7-Flash.jinja": "glm-4.7",
    "MiniMaxAI-MiniMax-M2.jinja": "minimax-m2",
    "MiniMaxAI-MiniMax-M2.5.jinja": "minimax-m2",
    "moonshotai-Kimi-K2-Thinking.jinja": "kimi-k2-thinking",
    "moonshotai-Kimi-K2.5.jinja": "kimi-k2-thinking",
    "deepseek-ai-DeepSeek-V3.2.jinja": "deepseek-v3.2",
    "ByteDance-Seed-Seed-OSS-36B-Instruct.jinja": "seed-oss",
    "vllm-tencent-Hunyuan-A13B-Instruct.jinja": "hunyuan-a13b",
    # group g2 (2025-2026 families)
    "vllm-meta-llama-Llama-4-pythonic.jinja": "llama4-pythonic",
    "vllm-meta-llama-Llama-4-json.jinja": "llama4-json",
    "mistralai-Ministral-3-14B-Reasoning-2512.jinja": "ministral-3",
    "unsloth-mistral-Devstral-Small-2507.jinja": "ministral-3",  # same format, no [THINK] (both round-trip)
    "vllm-mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja": "mistral-small-3.1",
    "ibm-granite-granite-4.0.jinja": "granite-4",
    "ibm-granite-granite-4.1.jinja": "granite-4",  # differs from 4.0 only in the default system prompt
    "microsoft-Phi-4-mini-instruct.jinja": "phi-4-mini",
    "LiquidAI-LFM2-8B-A1B.jinja": "lfm2",
    "LiquidAI-LFM2.5-8B-A1B.jinja": "lfm2",
    "LiquidAI-LFM2.5-Instruct.jinja": "lfm2",
    "vllm-Salesforce-Llama-xLAM-2-fc-r.jinja": "xlam-llama",
    "vllm-Salesforce-Qwen-xLAM-fc-r.jinja": "xlam-qwen",
    "unsloth-Apriel-1.5.jinja": "apriel-1.5",
    "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja": "nemotron-nano-v2",
    "ai-sage-GigaChat3-10B-A1.8B.jinja": "gigachat3",
    # group g3
    "vllm-internlm-internlm2_5-7b-chat.jinja": "internlm2",
    "vllm-google-functiongemma-270m-it.jinja": "functiongemma",
    "vllm-meta-llama-Llama-3.2-pythonic.jinja": "llama3.2-pythonic",
    "vllm-meta-llama-Llama-3.2-json.jinja": "llama3",  # the Llama 3.1 JSON format (round trip proven on both)
    "meta-llama-Llama-3.2-3B-Instruct.jinja": "llama3",  # Llama 3.2's own template: the same format
    "stepfun-ai-Step-3.5-Flash.jinja": "qwen3.5",  # the Qwen3.5 format (round trip proven)
    "deepseek-ai-DeepSeek-V4.jinja": "deepseek-v4",
    "moonshotai-Kimi-K3.jinja": "kimi-k3",
    "vllm-google-gemma-3-it-pythonic.jinja": "gemma3-pythonic",
    "swiss-ai-Apertus-8B-Instruct-2509.jinja": "apertus",
    "vllm-swiss-ai-Apertus.jinja": "apertus",
    # Gemma 3 has no tool or reasoning markers: not shipped (derive reads it, see tests/test_derive.py)
    "google-gemma-3-it.jinja": None,
}

PLAIN_CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


class FakeTokenizer:
    def __init__(self, chat_template, vocab=None):
        self.chat_template = chat_template
        self._vocab = vocab

    def get_vocab(self):
        if self._vocab is None:
            raise NotImplementedError
        return dict(self._vocab)


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- list / get


def test_list_templates_sorted_and_has_required():
    names = list_templates()
    assert names == sorted(names)
    assert REQUIRED <= set(names)


@pytest.mark.parametrize("name", list_templates())
def test_shipped_templates_are_pure_spec_json_and_load(name):
    template = get_template(name)
    assert set(template) <= SPEC_TOP_LEVEL
    for spec in template["fields"].values():
        assert set(spec) <= SPEC_FIELD_KEYS
    assert json.loads(json.dumps(template)) == template  # plain JSON data
    assert load_template(template).source == template
    assert template["defaults"] == {"role": "assistant"}
    info = template_info(name)
    assert info["models"] and info["doc"] and info["chat_template"] in DETECT


def test_template_info_documents_every_shipped_template():
    assert set(list_templates()) <= set(TEMPLATE_INFO)


def test_get_template_returns_fresh_deep_copies():
    first = get_template("qwen3")
    first["fields"]["content"]["close"] = "MUTATED"
    first["defaults"]["role"] = "x"
    second = get_template("qwen3")
    assert second["fields"]["content"]["close"] == "<|im_end|>"
    assert second["defaults"] == {"role": "assistant"}
    assert get_template("qwen3") is not get_template("qwen3")


def test_unknown_template_error_lists_available_names():
    with pytest.raises(UnknownTemplateError) as info:
        get_template("no-such-model")
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    message = str(info.value)
    assert "no-such-model" in message
    for name in list_templates():
        assert name in message


def test_templates_dir_prefers_package_data_then_repo_checkout():
    package_dir, repo_dir = _candidate_dirs()
    assert package_dir.parent.name == "hf_response_templates" and package_dir.name == "templates"
    assert repo_dir == package_dir.parent.parent / "templates"
    assert templates_dir() in (package_dir, repo_dir)
    assert {p.stem for p in templates_dir().glob("*.json")} == set(list_templates())


def test_library_does_not_import_transformers():
    code = "import sys, hf_response_templates.library as l; l.list_templates(); print('transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- detection


@pytest.mark.parametrize("fixture,expected", sorted(DETECT.items()))
def test_detect_every_fixture(fixture, expected):
    text = read(fixture)
    assert detect_template(text) == expected
    assert detect_template(FakeTokenizer(text)) == expected


def test_every_fixture_is_covered():
    assert {p.name for p in Path(FIXTURES).glob("*.jinja")} == set(DETECT)


def test_every_shipped_template_is_detected_from_some_fixture():
    assert {v for v in DETECT.values() if v} == set(list_templates())


@pytest.mark.parametrize("template", [PLAIN_CHATML, "", "{{ messages }}"])
def test_detect_unknown_returns_none(template):
    assert detect_template(template) is None
    assert detect_template(FakeTokenizer(template)) is None


def test_detect_no_chat_template():
    assert detect_template(FakeTokenizer(None)) is None
    assert detect_template(object()) is None


def test_detect_named_templates():
    qwen = read("Qwen-Qwen3-0.6B.jinja")
    assert detect_template({"default": PLAIN_CHATML, "tool_use": qwen}) == "qwen3"
    assert detect_template(FakeTokenizer({"default": qwen, "tool_use": qwen})) == "qwen3"
    # two named templates pointing to different families: never guess
    assert detect_template({"default": qwen, "tool_use": read("Qwen3-Coder.jinja")}) is None


def test_detect_checks_vocabulary_when_available():
    text = read("openai-gpt-oss-120b.jinja")
    assert detect_template(FakeTokenizer(text, vocab={"<|channel|>": 1, "<|start|>": 2})) == "gpt-oss"
    # a vocabulary without the family's delimiter tokens contradicts the template
    assert detect_template(FakeTokenizer(text, vocab={"a": 1, "b": 2})) is None
    # a tokenizer whose vocabulary cannot be read gives no evidence either way
    assert detect_template(FakeTokenizer(text, vocab=None)) == "gpt-oss"


def test_detect_never_guesses_between_two_formats():
    # a template carrying the markers of two families (XML and JSON tool calls) is ambiguous
    mixed = read("Qwen3-Coder.jinja") + read("openai-gpt-oss-120b.jinja")
    assert detect_template(mixed) is None


# ----------------------------------------------------------------------------- attach


def test_attach_by_name_and_auto():
    tok = FakeTokenizer(read("Qwen3-Coder.jinja"))
    assert attach(tok) == "qwen3-coder"
    assert tok.response_template == get_template("qwen3-coder")
    assert attach(tok, "gpt-oss") == "gpt-oss"
    assert tok.response_template == get_template("gpt-oss")
    # a fresh copy: editing the attached template does not touch the library
    tok.response_template["defaults"]["role"] = "x"
    assert get_template("gpt-oss")["defaults"]["role"] == "assistant"


def test_attach_auto_fails_clearly():
    tok = FakeTokenizer(PLAIN_CHATML)
    with pytest.raises(NoTemplateDetectedError, match="could not recognise"):
        attach(tok)
    assert not hasattr(tok, "response_template")


def test_attach_unknown_name():
    with pytest.raises(UnknownTemplateError):
        attach(FakeTokenizer(PLAIN_CHATML), "nope")


def test_attached_template_parses():
    from hf_response_templates import parse_response

    tok = FakeTokenizer(read("Qwen-Qwen3-0.6B.jinja"))
    attach(tok)
    out = parse_response("<think>\nhm\n</think>\n\nHi<|im_end|>", tok.response_template, prefix="")
    assert out == {"role": "assistant", "reasoning_content": "hm", "content": "Hi"}


def test_every_shipped_template_loads_in_transformers_native_parser() -> None:
    """A tokenizer upgraded with a shipped template stays readable by plain Transformers: its native parser
    refuses unknown top-level keys (e.g. `policy`), so no shipped template may carry one."""
    native = pytest.importorskip("transformers.utils.chat_parsing.response_templates")
    refused = {}
    for name in list_templates():
        try:
            native.load_response_template(get_template(name))
        except Exception as e:  # noqa: BLE001 - collected, reported together
            refused[name] = str(e).splitlines()[0]
    assert not refused, refused
