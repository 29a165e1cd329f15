"""Local tokenizer folders for the CLI tests, built offline (nothing from the Hub).

`make_tokenizer_folder()` writes what a Hub tokenizer repo holds: a tiny byte-level BPE
`tokenizer.json` (trained with the `tokenizers` library on a few sentences, the model's chat
delimiters added as special tokens) and a `tokenizer_config.json` whose `chat_template` is a real
model's chat template from `tests/fixtures/chat_templates/` (see SOURCES.md there), formatted in a
chosen JSON style. `AutoTokenizer.from_pretrained(folder)` loads it.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never touch the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

CHAT_TEMPLATES = Path(__file__).parent / "fixtures" / "chat_templates"

CHATML = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
          "<tool_response>", "</tool_response>")
HARMONY = ("<|endoftext|>", "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>",
           "<|return|>")

#: family -> (chat template fixture, special tokens, eos token)
FAMILIES = {
    "smollm3": ("HuggingFaceTB-SmolLM3-3B.jinja", CHATML, "<|im_end|>"),
    "qwen3": ("Qwen-Qwen3-0.6B.jinja", CHATML, "<|im_end|>"),
    "gpt-oss": ("openai-gpt-oss-120b.jinja", HARMONY, "<|return|>"),
}

#: a ChatML chat template with no reasoning and no tools: no shipped template can be detected for it
PLAIN_CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

CORPUS = [
    "system\nYou are a helpful assistant.",
    "user\nWhat is the weather in Paris?",
    "assistant\nLet me check the weather for you.",
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',
    "It is sunny and 21 degrees in Paris today.",
    "analysis final commentary to=functions.get_weather json",
    "Olá! Café com açúcar. 東京",
] * 3


@functools.cache
def _backend(specials: tuple[str, ...]) -> str:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=list(specials),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok.to_str()


def chat_template(family_or_file: str) -> str:
    name = FAMILIES[family_or_file][0] if family_or_file in FAMILIES else family_or_file
    return (CHAT_TEMPLATES / name).read_text(encoding="utf-8")


def dump_config(config: dict, style: str) -> str:
    """Serialise a config in one of the styles real repos use."""
    if style == "indent2":  # what save_pretrained writes
        return json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    if style == "indent4":
        return json.dumps(config, indent=4, ensure_ascii=False)  # no trailing newline
    if style == "compact":
        return json.dumps(config, separators=(",", ":"), ensure_ascii=False)
    if style == "ascii":  # ensure_ascii=True: non-ASCII escaped
        return json.dumps(config, indent=2) + "\n"
    if style == "tabs-crlf":
        return json.dumps(config, indent="\t", ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    raise ValueError(style)


def make_tokenizer_folder(
    folder: Path,
    family: str = "smollm3",
    *,
    style: str = "indent2",
    chat_template_text: str | None = None,
    chat_template_file: bool = False,
    extra: dict | None = None,
    special_tokens: tuple[str, ...] | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
) -> Path:
    """Write tokenizer.json + tokenizer_config.json (+ chat_template.jinja) into ``folder``.

    ``special_tokens`` / ``bos_token`` / ``eos_token`` override the family's (for a chat template given as
    ``chat_template_text`` whose family is not in ``FAMILIES``)."""
    _fixture, specials, eos = FAMILIES.get(family, (None, (), None))
    specials, eos = special_tokens or specials, eos_token or eos
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    backend = Tokenizer.from_str(_backend(specials))
    backend.save(str(folder / "tokenizer.json"))
    vocab = backend.get_vocab()
    template = chat_template_text if chat_template_text is not None else chat_template(family)
    config: dict = {
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(vocab[t]): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                            "single_word": False, "special": True}
            for t in specials
        },
        "bos_token": bos_token,
        "clean_up_tokenization_spaces": False,
        "description": "Café, 東京 — a tiny test tokenizer",
        "eos_token": eos,
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    if chat_template_file:
        (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    else:
        config["chat_template"] = template
    config.update(extra or {})
    (folder / "tokenizer_config.json").write_bytes(dump_config(config, style).encode("utf-8"))
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- a fake Hub


class EntryNotFoundError(Exception):
    """Stands in for huggingface_hub's (matched by class name)."""


class RepositoryNotFoundError(Exception):
    pass


def fake_download(repos: dict[str, Path], calls: list | None = None):
    """An hf_hub_download stand-in serving files from local folders."""

    def download(*, repo_id: str, filename: str, revision: str | None = None, **kwargs) -> str:
        if calls is not None:
            calls.append((repo_id, filename, revision))
        if repo_id not in repos:
            raise RepositoryNotFoundError(repo_id)
        path = Path(repos[repo_id]) / filename
        if not path.exists():
            raise EntryNotFoundError(filename)
        return str(path)

    return download


class FakeApi:
    def __init__(self, fail: bool = False):
        self.commits: list[dict] = []
        self.fail = fail

    def create_commit(self, **kwargs):
        if self.fail:
            raise RuntimeError("500 Server Error")
        self.commits.append(kwargs)

        class Info:
            pr_url = f"https://huggingface.co/{kwargs['repo_id']}/discussions/1"
            commit_url = "https://huggingface.co/commit/abc"

        return Info()
