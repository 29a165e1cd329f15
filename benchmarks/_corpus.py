"""Benchmark inputs for every shipped template: what each family's model writes, rendered by its own chat template.

Used by ``bench_all.py`` and ``floor.py``. For each template of ``templates/*.json`` the family's real chat
template (the round-trip fixtures in ``tests/fixtures/chat_templates/``, with the limits written down in
``tests/_chat_render.py``) renders a conversation whose last assistant turn has the wanted shape:

* ``content``: an answer only;
* ``reasoning``: reasoning, then the answer (families whose chat template renders reasoning);
* ``tool``: reasoning (if any), an answer (if the family writes one next to calls) and one tool call;
* ``tools``: the same with parallel tool calls (2 or 3, the family's limit).

The prompt rendered with ``add_generation_prompt=True`` is the prefix, what the assistant turn adds is
the generation (``verify.split_assistant_turn``); only cases that round-trip (our parser gives back the
message the chat template rendered) are kept, so every input is one the template really parses. Text is
prose with the characters models write in reasoning and code (``<``, ``|``, braces, accents).

Token-sized chunks: a byte-level BPE (``tokenizers``, trained offline at start on the generated text, the
families' delimiters as added special tokens) cuts each text at its token boundaries.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the chat-template fixtures and their per-family limits

from _chat_render import FAMILIES, TOOLS, Family, chat_template  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_parsing  # noqa: E402

from hf_response_templates import parse_response  # noqa: E402
from hf_response_templates.library import get_template, list_templates  # noqa: E402
from hf_response_templates.verify import verify_round_trip  # noqa: E402

SEED = 20261
SHAPES = ("content", "reasoning", "tool", "tools")

_WORDS = (
    "the model thinks about a plan so we need to check whether value returns true and then answer "
    "carefully because x < y holds while a<b may not for every case é déjà vu 42 3.14 (see above) "
    "first second finally: ok; let's compute f(x) = x**2 + 1, i.e. a | b & c -> result {k: v} [1, 2]"
).split()
_WORDS = tuple(_WORDS)


def filler(n: int, rng: random.Random) -> str:
    """About `n` characters of prose (never empty, stripped)."""
    return bench_parsing.filler(n, rng, _WORDS).strip() or "ok"


@dataclass(frozen=True)
class Case:
    """One generation of one template: parse `text` with `prefix` (and `tools`) to get `message`."""

    template: str
    shape: str
    prefix: str
    text: str
    message: dict
    tools: list | None


def _arguments(family: Family, i: int, rng: random.Random) -> tuple[str, dict]:
    city = rng.choice(["Paris", "Lisbon", "Tokyo", "São Paulo", "New York"])
    if i % 2 == 0 or family.scalar_arguments or family.arguments_ok is not None:
        args: dict[str, Any] = {"city": city, "days": rng.randint(1, 9)}
        if family.arguments_ok is not None and not family.arguments_ok(args):
            args = {"city": city}
        return "get_weather", args
    return "search", {"query": f"weather in {city}", "tags": ["news", "today"]}


def _calls(family: Family, count: int, rng: random.Random) -> list[dict]:
    calls = []
    for i in range(count):
        name, args = _arguments(family, i, rng)
        calls.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": json.dumps(args, ensure_ascii=False) if family.arguments_as_json_text else args,
                },
            }
        )
    if family.call_id_format is not None:
        return [{**c, "id": family.call_id_format.format(name=c["function"]["name"], index=i)} for i, c in enumerate(calls)]
    return [{**c, "id": f"call{i:05d}"} for i, c in enumerate(calls)]


def _conversation(family: Family, shape: str, size: int, thinking: Any, rng: random.Random) -> list[dict] | None:
    """Messages ending with an assistant turn of about `size` characters of text, or None if the family
    cannot render that shape."""
    reasoning = shape != "content" and family.reasoning_key is not None and thinking is not False
    if shape == "reasoning" and not reasoning:
        return None
    if shape == "reasoning" and family.reasoning_only_with_tool_calls:
        return None
    ncalls = {"content": 0, "reasoning": 0, "tool": 1, "tools": min(3, family.max_tool_calls or 3)}[shape]
    if ncalls and not family.tool_calls:
        return None
    if shape == "tools" and ncalls < 2:
        return None
    if reasoning and family.reasoning_only_with_tool_calls and not ncalls:
        reasoning = False
    if family.final_tool_calls_only and not ncalls:
        return None
    body = max(20, size - 90 * ncalls)
    msg: dict[str, Any] = {"role": "assistant"}
    if reasoning:
        share = 0.6 if not ncalls or family.content_with_tool_calls else 1.0
        msg[family.reasoning_key] = filler(int(body * share), rng)
        body -= len(msg[family.reasoning_key])
    if ncalls:
        msg["tool_calls"] = _calls(family, ncalls, rng)
        msg["content"] = filler(max(20, body), rng) if family.content_with_tool_calls else ""
    else:
        msg["content"] = filler(max(20, body), rng)
    messages: list[dict] = []
    if family.system_prompt is not None:
        messages.append({"role": "system", "content": family.system_prompt})
    messages.append({"role": "user", "content": "What is the weather in Paris?"})
    if thinking in family.final_after_tool_results:
        [call] = _calls(family, 1, random.Random(7))
        call = {**call, "id": "call00007"} if family.call_id_format is None else call
        loop = {"role": "assistant", "content": family.tool_call_content, "tool_calls": [call]}
        if family.reasoning_key and family.reasoning_only_with_tool_calls and family.tool_loop_reasoning:
            loop[family.reasoning_key] = "plan"
        messages += [
            loop,
            {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": '{"temp": 21}'},
        ]
    messages.append(msg)
    return messages


def _thinking_order(family: Family, shape: str) -> list[Any]:
    values = list(family.thinking_values)
    # reasoning shapes first with thinking on; content with thinking off where the family has it
    key = (lambda v: v is not True) if shape != "content" else (lambda v: v is not False)
    return sorted(values, key=key)


def render(name: str, shape: str, size: int, rng: random.Random) -> Case | None:
    """One case of about `size` characters, or None when the family's chat template cannot render the shape."""
    family = FAMILIES[name]
    template = get_template(name)
    tools = family.tools_for(TOOLS)
    for thinking in _thinking_order(family, shape):
        messages = _conversation(family, shape, size, thinking, rng)
        if messages is None:
            continue
        kwargs = {} if family.thinking_kwarg is None or thinking is None else {family.thinking_kwarg: thinking}
        [result] = verify_round_trip(
            _chat(family.fixture), template, [messages], tools=tools, special_tokens=family.special_tokens, **kwargs
        )
        if result.passed:
            message = parse_response(result.generation, template, prefix=result.prefix, tools=tools)
            return Case(name, shape, result.prefix, result.generation, message, tools)
    return None


@functools.cache
def _chat(fixture: str) -> str:
    return chat_template(fixture)


def template_names(only: list[str] | None = None) -> list[str]:
    names = sorted(list_templates())
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise SystemExit(f"unknown templates: {', '.join(unknown)} (shipped: {', '.join(names)})")
        names = [n for n in names if n in only]
    return names


# --------------------------------------------------------------------------- raw model outputs

_RAW_MODULES = (
    "test_templates_raw_outputs",
    "test_templates_raw_outputs_e3",
    "test_templates_raw_outputs_g1",
    "test_templates_raw_outputs_g2",
    "test_templates_raw_outputs_g3",
)


@functools.cache
def _raw_outputs() -> dict[str, list[tuple[str, str, dict]]]:
    """template -> [(prefix, output, expected)] from the hand-written raw-output tests (what models generate:
    EOS tokens, newlines between calls, reasoning the chat templates do not render in history)."""
    import importlib

    out: dict[str, list[tuple[str, str, dict]]] = {}
    for module in _RAW_MODULES:
        for _, name, prefix, output, expected in importlib.import_module(module).CASES:
            out.setdefault(name, []).append((prefix, output, expected))
    return out


def _text_keys(name: str) -> tuple[str, ...]:
    family = FAMILIES[name]
    return tuple(dict.fromkeys(k for k in (family.reasoning_key, "reasoning_content", "thinking", "content") if k))


def scale_raw(name: str, prefix: str, output: str, expected: dict, size: int, rng: random.Random) -> Case | None:
    """A raw output with its reasoning and answer replaced by prose so that it is about `size` characters;
    None when they cannot be replaced unambiguously or the result does not parse cleanly."""
    template = get_template(name)
    tools = FAMILIES[name].tools_for(TOOLS)
    keys = [k for k in _text_keys(name) if isinstance(expected.get(k), str) and len(expected[k]) >= 3]
    if not keys or any(output.count(expected[k]) != 1 for k in keys):
        return None
    budget = max(20, size - (len(output) - sum(len(expected[k]) for k in keys)))
    shares = [0.6, 0.4] if len(keys) == 2 else [1.0] * len(keys)
    text = output
    new = {}
    for k, share in zip(keys, shares, strict=True):
        new[k] = filler(max(10, int(budget * share)), rng)
        text = text.replace(expected[k], new[k], 1)
    try:
        message = parse_response(text, template, prefix=prefix, tools=tools)
    except ValueError:
        return None
    if "unparsed" in message or any(message.get(k) != v for k, v in new.items()):
        return None
    return Case(name, "raw", prefix, text, message, tools)


def _fields(case: Case) -> int:
    """How many of reasoning, answer and tool calls the case has (-1: no text to grow it with)."""
    if not any(len(case.message.get(k) or "") >= 3 for k in _text_keys(case.template)):
        return -1
    return sum(1 for k in (*_text_keys(case.template), "tool_calls") if case.message.get(k))


def short_cases(name: str, count: int, seed: int = SEED) -> list[Case]:
    """`count` responses of 200-2,000 characters: the shapes the family's chat template renders, in turn, and
    the raw model outputs of the tests (their texts resized)."""
    rng = random.Random(f"{seed}:{name}")
    raw = _raw_outputs().get(name, [])
    out: list[Case] = []
    attempts = 0
    kinds = [*SHAPES, "raw"] if raw else list(SHAPES)
    while len(out) < count and attempts < count * 4:
        kind = kinds[attempts % len(kinds)]
        attempts += 1
        size = rng.randint(200, 2000)
        if kind == "raw":
            case = scale_raw(name, *raw[(attempts // len(kinds)) % len(raw)], size, rng)
        else:
            case = render(name, kind, size, rng)
        if case is not None:
            out.append(case)
    return out


def stream_case(name: str, size: int, seed: int = SEED) -> Case:
    """A response of about `size` characters with as many of reasoning, answer and tool calls as the family
    writes: the chat template's rendering where it carries them all, else a raw model output resized."""
    rng = random.Random(f"{seed}:{name}:{size}")
    best: Case | None = None
    for shape in ("tool", "reasoning", "content"):
        case = render(name, shape, 400, random.Random(seed))
        if case is not None and (best is None or _fields(case) > _fields(best)):
            best = case
    raw_best = None
    for prefix, output, expected in _raw_outputs().get(name, []):
        case = scale_raw(name, prefix, output, expected, 400, random.Random(seed))
        if case is not None and (raw_best is None or _fields(case) > _fields(raw_best)):
            raw_best = case
    if raw_best is not None and (best is None or _fields(raw_best) > _fields(best)):
        for prefix, output, expected in _raw_outputs()[name]:
            case = scale_raw(name, prefix, output, expected, 400, random.Random(seed))
            if case is not None and case.text == raw_best.text:
                scaled = scale_raw(name, prefix, output, expected, size, rng)
                if scaled is not None:
                    return scaled
    if best is None:
        raise RuntimeError(f"{name}: no shape renders")
    scaled = render(name, best.shape, size, rng)
    if scaled is None:
        raise RuntimeError(f"{name}: {best.shape} does not render at {size} characters")
    return scaled


# --------------------------------------------------------------------------- token-sized chunks

_SPECIAL = r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|\[/?[A-Z_]{3,20}\]|</?[a-z_]{3,20}>|<[a-z_|]{3,20}>|<\|[a-z_\"]{1,20}>|<[a-z_\"]{1,20}\|>"


_CLOCK = re.compile(r"\d{1,2}:\d{2}(:\d{2})?")


def train_tokenizer(texts: list[str]):
    """A byte-level BPE trained on `texts` (offline); tag-like delimiters are added special tokens.

    Training is deterministic and takes ~40 s: the result is kept in the temporary directory, keyed by a
    hash of the texts and of this function's settings, and read back by later runs."""
    import hashlib
    import tempfile

    import regex
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    # (a chat template rendering the time of day, `strftime_now`, makes the texts differ from run to run: the
    # key leaves the clock out, so a run reuses the tokenizer of an earlier run of the same day)
    stable = [_CLOCK.sub("", t) for t in texts]
    key = hashlib.sha256("\x00".join(["bpe-4000-v1", _SPECIAL, *stable]).encode("utf-8", "surrogatepass")).hexdigest()
    cached = Path(tempfile.gettempdir()) / f"hfrt_bench_bpe_{key[:24]}.json"
    if cached.exists():
        try:
            return Tokenizer.from_file(str(cached))
        except Exception:  # noqa: BLE001 - a damaged cache file: train again
            pass
    specials = sorted({m for t in texts for m in regex.findall(_SPECIAL, t)})
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4000, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")
    tok.save(str(tmp))
    os.replace(tmp, cached)
    return tok


def token_chunks(tok, text: str) -> list[str]:
    """`text` cut at the boundaries of its tokens (a character split over byte tokens goes with the last)."""
    enc = tok.encode(text, add_special_tokens=False)
    cuts = sorted({end for _, end in enc.offsets if 0 < end < len(text)})
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
