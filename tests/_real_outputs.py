"""The real-output corpus (``tests/fixtures/real_outputs/``): loading, normalising, parsing, tallying.

Shared by ``tests/test_real_outputs.py`` and ``scripts/real_output_report.py``. The comparison rules are
written down in ``tests/fixtures/real_outputs/README.md``; `normalise` implements them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from hf_response_templates import ResponseParser, parse_response
from hf_response_templates.library import get_template

CORPUS = Path(__file__).parent / "fixtures" / "real_outputs"

#: The generation prompt of each family, used when a record has no ``prefix`` of its own: the start of
#: the assistant turn as the family's chat template renders it with ``add_generation_prompt=True``
#: (thinking left to the model, i.e. nothing pre-opened).
DEFAULT_PREFIX: dict[str, str] = {
    "smollm3": "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "qwen3": "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "qwen3-coder": "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "hermes3": "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "gpt-oss": "<|start|>user<|message|>Hello<|end|><|start|>assistant",
    "cohere-command-r7b": "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|>"
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "kimi-k2": "<|im_user|>user<|im_middle|>Hello<|im_end|><|im_assistant|>assistant<|im_middle|>",
    "glm-4.6": "[gMASK]<sop><|user|>\nHello<|assistant|>",
    "deepseek-v3.1": "<｜begin▁of▁sentence｜><｜User｜>Hello<｜Assistant｜></think>",
    "deepseek-r1": "<｜begin▁of▁sentence｜><｜User｜>Hello<｜Assistant｜><think>\n",
    "llama3": "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "granite-3.3": "<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>",
    "gemma4": "<bos><|turn>user\nHello<turn|>\n<|turn>model\n",
    "mistral-small-3.2": "<s>[INST]Hello[/INST]",
    "qwen3.5": "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n",
}

#: Where each family's template puts reasoning (the key its chat template reads back).
REASONING_KEY: dict[str, str] = {"gpt-oss": "thinking", "cohere-command-r7b": "tool_plan"}


@dataclass(frozen=True)
class Record:
    """One model output with its expected message (see the corpus README for the fields)."""

    id: str
    family: str
    output: str
    expected: Mapping[str, Any]
    source: Mapping[str, Any]
    prefix: str | None = None
    tools: list | None = None
    note: str | None = None

    @property
    def effective_prefix(self) -> str:
        return DEFAULT_PREFIX[self.family] if self.prefix is None else self.prefix


def load_corpus(directory: Path = CORPUS) -> list[Record]:
    """Every record of every ``*.jsonl`` file, in file and line order; ids must be unique."""
    records: list[Record] = []
    seen: set[str] = set()
    for path in sorted(directory.glob("*.jsonl")):
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            data = json.loads(line)
            if data["id"] in seen:
                raise ValueError(f"{path.name}:{line_no}: duplicate record id {data['id']!r}")
            seen.add(data["id"])
            records.append(Record(**data))
    return records


def _text(value: Any) -> str | None:
    """Whitespace-insensitive text: None, "" and whitespace-only are alike."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True)
    squeezed = "".join(value.split())
    return squeezed or None


def _arguments(value: Any) -> str:
    """Arguments as canonical JSON text (a JSON string is decoded first; other text is kept)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return "text:" + value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def normalise_expected(record: Record) -> dict[str, Any]:
    exp = record.expected
    return {
        "content": _text(exp.get("content")),
        "reasoning": _text(exp.get("reasoning")),
        "tool_calls": [(c["name"], _arguments(c["arguments"])) for c in exp.get("tool_calls") or []],
    }


def normalise_message(family: str, message: Mapping[str, Any]) -> dict[str, Any]:
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, Mapping) else {}
        calls.append((function.get("name"), _arguments(function.get("arguments"))))
    return {
        "content": _text(message.get("content")),
        "reasoning": _text(message.get(REASONING_KEY.get(family, "reasoning_content"))),
        "tool_calls": calls,
    }


_TOKEN = regex.compile(r"<\|[^|<>]{1,40}\|>|<｜[^｜]{1,40}｜>|\[/?[A-Z_]{2,20}\]|</?[a-z_]{1,20}>|\s+|\w+|[^\w\s]")


def token_chunks(text: str) -> list[str]:
    """Split `text` roughly the way a tokenizer does: special tokens whole, words, spaces, punctuation."""
    return _TOKEN.findall(text)


@dataclass
class Outcome:
    """What the parser made of one record."""

    record: Record
    message: dict[str, Any]
    got: dict[str, Any]
    expected: dict[str, Any]
    streamed: dict[str, Any] = field(default_factory=dict)
    unclaimed: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.got == self.expected

    @property
    def passed_streamed(self) -> bool:
        return normalise_message(self.record.family, self.streamed) == self.expected


def parse_one_shot(record: Record, policy: Mapping[str, str] | None = None) -> dict[str, Any]:
    return parse_response(record.output, get_template(record.family), prefix=record.effective_prefix,
                          tools=record.tools, strict=False, policy=policy)


def parse_streamed(record: Record, chunks: Iterable[str], policy: Mapping[str, str] | None = None
                   ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parser = ResponseParser(get_template(record.family), record.effective_prefix, tools=record.tools, trace=True,
                            policy=policy)
    events = list(parser.initial_events)
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    message, final = parser.finalize()
    return message, events + final


def unclaimed_text(message: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> list[str]:
    """Non-whitespace generated text that ended up in no field: ``unparsed`` entries with ``field: None``
    (the engine's no-silent-loss rule) or, where the engine does not report it there, text dropped as
    outside every region (``text_dropped`` with ``trace=True``). Text after the end of the message is
    not counted (it is not part of the message)."""
    kept = [u["text"] for u in message.get("unparsed") or [] if u.get("field") is None and u["text"].strip()]
    if kept:
        return kept
    return [e["text"] for e in events if e.get("type") == "text_dropped" and e.get("reason") == "outside_regions"
            and e["text"].strip()]


def run(record: Record, chunker: Callable[[str], list[str]] = token_chunks) -> Outcome:
    message = parse_one_shot(record)
    streamed, events = parse_streamed(record, chunker(record.output))
    return Outcome(record, message, normalise_message(record.family, message), normalise_expected(record),
                   streamed, unclaimed_text(streamed, events))


def table(rows: Mapping[str, Mapping[str, Any]], columns: list[str]) -> str:
    """A Markdown table: one row per family, `columns` taken from each row dict."""
    lines = ["| family | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for family, row in rows.items():
        lines.append(f"| `{family}` | " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)
