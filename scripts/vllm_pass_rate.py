"""vLLM's own pass rate on the real-output corpus (tests/fixtures/real_outputs/), beside ours.

Usage (not part of the test suite; vLLM is not a dependency of this package)::

    python3.11 -m venv /tmp/vllm-venv
    /tmp/vllm-venv/bin/pip install torch transformers tokenizers regex partial-json-parser pydantic openai \
        cachetools psutil numpy msgspec pyzmq cloudpickle orjson pybase64 cbor2 ijson blake3 py-cpuinfo \
        sentencepiece protobuf jsonschema fastapi pillow tiktoken "mistral_common[image]" openai-harmony \
        pyyaml einops aiohttp prometheus_client uvloop xgrammar
    PYTHONPATH=. /tmp/vllm-venv/bin/python scripts/vllm_pass_rate.py --vllm-src PATH/TO/vllm-0.33.0 [--failures]

``--vllm-src`` is the unpacked vLLM source distribution (``pip download vllm==0.33.0 --no-deps --no-binary
:all: --no-clean`` leaves it in pip's build directory); its Python modules are imported from there (the
compiled extensions are not needed by the parsers). Each record is run the way vLLM's OpenAI server runs a
finished (non-streamed) generation: ``ParserManager.get_parser(tool_parser, reasoning_parser,
enable_auto_tools=True, is_harmony=...)`` with the parser names vLLM's docs give for the family (`PARSERS`),
the composed parser built with the record's tools, ``set_prompt_token_ids`` with the record's prompt, then
``parse(output, request)`` -> ``(reasoning, content, tool_calls)``. The result is normalised and compared
exactly as ``tests/test_real_outputs.py`` compares ours (`_real_outputs.normalise_expected`, the same text,
JSON-argument and id rules).

vLLM's parsers need a tokenizer (they look their special tokens up in its vocabulary and read token ids).
Nothing is downloaded: each family gets a byte-level BPE built with the ``tokenizers`` library whose added
special tokens are the family's delimiters (the literal delimiters of its shipped template and every
special-token-looking text of its records), like ``tests/_tokenizers.py`` does. Token ids therefore differ
from the real model's, but each special token is one token, which is what the parsers rely on.

A family whose parser cannot be built or run here is reported with the error (``n/a``), and a record
whose parse raises counts as failed with the error kept (``--failures`` prints them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "CRITICAL")  # parsers log the records they reject, with tracebacks
os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"  # leave vLLM's tokenizers as Transformers made them

import regex  # noqa: E402
from _real_outputs import load_corpus, normalise_expected  # noqa: E402

from hf_response_templates.tools import _json_type as json_type  # noqa: E402

#: family -> (tool-call parser, reasoning parser, harmony) as vLLM 0.33's docs (docs/features/tool_calling.md,
#: docs/features/reasoning_outputs.md) name them for the family's models.
PARSERS: dict[str, tuple[str | None, str | None, bool]] = {
    "smollm3": ("hermes", "qwen3", False),  # no SmolLM3 parsers in vLLM: those of the same markup
    "qwen3": ("hermes", "qwen3", False),
    "hermes3": ("hermes", None, False),
    "qwen3-coder": ("qwen3_coder", None, False),
    "qwen3.5": ("qwen3_coder", "qwen3", False),
    "gpt-oss": ("openai", "openai_gptoss", True),
    "cohere-command-r7b": ("cohere_command3", "cohere_command3", False),
    "kimi-k2": ("kimi_k2", None, False),
    "glm-4.6": ("glm45", "glm45", False),
    "deepseek-v3.1": ("deepseek_v31", "deepseek_v3", False),
    "deepseek-r1": ("deepseek_v3", "deepseek_r1", False),
    "llama3": ("llama3_json", None, False),
    "granite-3.3": ("granite", "granite", False),
    "gemma4": ("gemma4", "gemma4", False),
    "mistral-small-3.2": ("mistral", "mistral", False),
}

#: special tokens a family's vLLM parser looks up that neither its template nor its records spell
EXTRA_SPECIALS: dict[str, tuple[str, ...]] = {
    "llama3": ("<|python_tag|>", "<|eom_id|>", "<|eot_id|>"),
}

_SPECIAL = regex.compile(r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|\[/?[A-Z_]{2,20}\]|</?[a-z_:]{1,30}>|<\|[a-z_]{1,30}>"
                         r"|<[a-z_]{1,30}\|>|<\|\"\|>")


def _template_literals(family: str) -> set[str]:
    from hf_response_templates.library import get_template

    template = get_template(family)
    found: set[str] = set()
    for key in ("start_anchor",):
        if isinstance(template.get(key), str):
            found.add(template[key])
    for spec in template["fields"].values():
        for key in ("open", "close"):
            if isinstance(spec.get(key), str):
                found.add(spec[key])
    return {t.strip() for t in found if t.strip()}


def build_tokenizer(family: str, texts: list[str]):
    """A `PreTrainedTokenizerFast` whose added special tokens are the family's delimiters."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = set(_template_literals(family)) | set(EXTRA_SPECIALS.get(family, ()))
    for text in texts:
        specials.update(_SPECIAL.findall(text))
    specials = sorted(s for s in specials if s and len(s) <= 48)
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|pad|>", *specials],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    backend.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<|pad|>", additional_special_tokens=specials)


def request_tools(record) -> list[dict[str, Any]]:
    """The request's tools: the record's (typed) ones, else one untyped tool per function the record expects
    called, as vLLM's own tests pass them: the server parses tool calls only when the request has tools."""
    if record.tools:
        return [t if "function" in t else {"type": "function", "function": t} for t in record.tools]
    schemas: dict[str, dict[str, Any]] = {}
    for call in record.expected.get("tool_calls") or []:
        args = call["arguments"] if isinstance(call["arguments"], dict) else {}
        props = schemas.setdefault(call["name"], {})
        for key, value in args.items():  # the expected values' JSON types, as the tests' requests declare them
            props.setdefault(key, {"type": json_type(value)})
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
            for n, p in (schemas or {"unused_tool": {}}).items()]


def _request(record):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hello"}],
                                 tools=request_tools(record), chat_template_kwargs=_thinking(record))


def _thinking(record) -> dict[str, Any] | None:
    """Thinking mode on, as the request would ask for it, when the record's model thinks (`<think>` in its
    prompt or output): DeepSeek-V3.1 and Granite reasoning parsers read ``chat_template_kwargs``."""
    if "<think>" in record.effective_prefix or "<think>" in record.output:
        return {"thinking": True, "enable_thinking": True}
    return None


def parsers_for(record, as_tested: bool) -> tuple[str | None, str | None, bool]:
    """The parser names for one record: the family's (`PARSERS`), as a server runs them; with `as_tested`,
    only the tool parser for records from vLLM's tool-parser tests (which run it alone)."""
    tool, reasoning, harmony = PARSERS[record.family]
    if record.family == "cohere-command-r7b" and "cohere_command4" in record.id:
        tool = reasoning = "cohere_command4"  # Command A's <|START_TEXT|> framing: vLLM's v4 parser
    source = str(record.source.get("file", ""))
    if as_tested and source.startswith("tests/tool_parsers/"):
        reasoning = None
    if as_tested and "granite_thinking" in source:
        reasoning = "granite_thinking_parser"  # Granite's <think> outputs: the parser of that test
    return tool, reasoning, harmony


def _message(reasoning: str | None, content: str | None, calls: list | None) -> dict[str, Any]:
    """vLLM's (reasoning, content, tool_calls) in the shape `_real_outputs.normalise_message` reads."""
    out: dict[str, Any] = {"content": content, "reasoning_content": reasoning, "tool_calls": []}
    for call in calls or []:
        fn = getattr(call, "function", call)
        out["tool_calls"].append({"function": {"name": fn.name, "arguments": fn.arguments}})
    return out


def _encoder(family: str, tokenizer):
    """Text -> token ids: harmony's own encoding for gpt-oss (its parser reads the ids), else `tokenizer`."""
    if PARSERS[family][2]:
        from openai_harmony import HarmonyEncodingName, load_harmony_encoding

        encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
        return lambda text: encoding.encode(text, allowed_special="all")
    return lambda text: tokenizer.encode(text, add_special_tokens=False)


def run_family(family: str, records: list, failures: list, as_tested: bool) -> dict[str, Any]:
    from _real_outputs import normalise_message
    from vllm.parser.parser_manager import ParserManager

    texts = [r.output for r in records] + [r.effective_prefix for r in records]
    tokenizer = build_tokenizer(family, texts)
    encode = _encoder(family, tokenizer)
    classes: dict[tuple, Any] = {}
    row: Counter = Counter()
    for record in records:
        row["records"] += 1
        names = parsers_for(record, as_tested)
        if names not in classes:
            tool_name, reasoning_name, harmony = names
            classes[names] = ParserManager.get_parser(
                tool_parser_name=tool_name, reasoning_parser_name=reasoning_name, enable_auto_tools=True,
                is_harmony=harmony, tokenizer=tokenizer)
        try:
            request = _request(record)
            parser = classes[names](tokenizer, request.tools, chat_template_kwargs=request.chat_template_kwargs)
            if hasattr(parser, "set_prompt_token_ids"):
                parser.set_prompt_token_ids(encode(record.effective_prefix))
            if hasattr(parser, "adjust_request"):
                request = parser.adjust_request(request) or request
            output_ids = encode(record.output)
            reasoning, content, calls = parser.parse(record.output, request, enable_auto_tools=True,
                                                     model_output_token_ids=output_ids)
            got = normalise_message("vllm", _message(reasoning, content, calls))
        except Exception as e:  # a parser that raises on a record fails it
            row["errors"] += 1
            failures.append((record.id, f"raised {type(e).__name__}: {e}"))
            continue
        if got == normalise_expected(record):
            row["pass"] += 1
        else:
            failures.append((record.id, f"got {got}"))
    return dict(row)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vllm-src", required=True, type=Path, help="the unpacked vLLM source distribution")
    ap.add_argument("--failures", action="store_true", help="print every record vLLM does not match")
    ap.add_argument("--json", type=Path, help="also write the per-family figures here")
    args = ap.parse_args(argv)
    if not (args.vllm_src / "vllm" / "parser" / "parser_manager.py").is_file():
        ap.error(f"{args.vllm_src} does not hold vLLM's source (vllm/parser/parser_manager.py)")
    sys.path.insert(0, str(args.vllm_src.resolve()))
    import logging

    import vllm.version

    logging.disable(logging.ERROR)  # the parsers log every record they reject, with a traceback

    by_family: dict[str, list] = {}
    for record in load_corpus():
        by_family.setdefault(record.family, []).append(record)
    rows: dict[str, dict[str, Any]] = {}
    failures: dict[bool, list[tuple[str, str]]] = {False: [], True: []}
    t0 = time.process_time()
    for family in sorted(by_family):
        row: dict[str, Any] = {"records": len(by_family[family])}
        for as_tested, key in ((False, "served"), (True, "tested")):
            try:
                row[key] = run_family(family, by_family[family], failures[as_tested], as_tested).get("pass", 0)
            except Exception as e:  # the parser cannot be built here: say why
                row["n/a"] = f"{type(e).__name__}: {e}".splitlines()[0]
                if os.environ.get("VLLM_PASS_RATE_DEBUG"):
                    traceback.print_exc()
                break
        rows[family] = row
    print(f"vLLM {vllm.version.__version__} from {args.vllm_src}, {time.process_time() - t0:.1f} s CPU\n")
    print("| family | vLLM parsers (tool / reasoning) | records | vLLM as served | vLLM as tested |")
    print("|---|---|---|---|---|")
    for family, row in rows.items():
        tool, reasoning, _ = PARSERS[family]
        names = f"`{tool}` / `{reasoning or '-'}`"
        if "n/a" in row:
            print(f"| `{family}` | {names} | {row['records']} | n/a ({row['n/a'][:120]}) | n/a |")
        else:
            n = row["records"]
            print(f"| `{family}` | {names} | {n} | {row['served']} ({row['served'] / n:.0%}) | "
                  f"{row['tested']} ({row['tested'] / n:.0%}) |")
    measured = [r for r in rows.values() if "n/a" not in r]
    total = sum(r["records"] for r in measured)
    for key in ("served", "tested"):
        passed = sum(r[key] for r in measured)
        print(f"\nas {key}: {passed} of {total} records of the measured families pass ({passed / max(total, 1):.0%}).")
    if args.failures:
        for as_tested in (False, True):
            print(f"\n## failures, as {'tested' if as_tested else 'served'}")
            for record_id, why in failures[as_tested]:
                print(f"\n{record_id}\n  {why[:400]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
