"""DeltaStream's cost per piece does not grow with the length of the region (issue 18, item 1).

Two checks per case, neither a timed unit test in the flaky sense:

* the number of function calls (Python and C, counted with `sys.setprofile`) per fed piece is the same at
  1k, 10k and 100k characters, within 10% (deterministic: the same text shape, the same chunking);
* the characters it encodes into JSON fragments, plus the text its partial parsers hold back for a
  search, summed over every feed, grow linearly: per character, at most 2x between 1k and 100k.

A re-parsing adapter fails the second (it encodes the whole arguments again on every feed: 100x more
per character at 100k than at 1k), a re-scanning one the first.
"""

from __future__ import annotations

import json
import random
import sys

import pytest
from test_openai_deltas import PCL_TEMPLATE

from hf_response_templates import get_template
from hf_response_templates.openai import DeltaStream

CHATML = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"


def _prose(n: int, rng: random.Random) -> str:
    words = "alpha beta gamma 42 3.14 déjà x < y".split()
    return " ".join(rng.choice(words) for _ in range(n // 5 + 1))[:n].strip() or "x"


def _members(n: int, rng: random.Random, bare: bool) -> str:
    parts, size, i = [], 0, 0
    while size < n:
        key = f"k{i}" if bare else f'"k{i}"'
        if i % 3 == 0:
            s = _prose(30, rng)
            value = f'<|"|>{s}<|"|>' if bare else json.dumps(s, ensure_ascii=False)
        else:
            value = str(rng.randint(0, 999)) if i % 3 == 1 else "[1, 2, 3]"
        parts.append(f"{key}: {value}")
        size += len(parts[-1]) + 2
        i += 1
    return "{" + ", ".join(parts) + "}"


def make_case(case: str, n: int) -> tuple[str, str, str]:
    rng = random.Random(7)
    if case == "content":
        return "smollm3", CHATML, f"<think>\n{_prose(n // 2, rng)}\n</think>\n{_prose(n // 2, rng)}<|im_end|>"
    if case == "json-string":
        value = json.dumps(_prose(n, rng), ensure_ascii=False)
        return (
            "hermes3",
            CHATML,
            f'<tool_call>\n{{"name": "w", "arguments": {{"text": {value}}}}}\n</tool_call><|im_end|>',
        )
    if case == "json-members":
        return (
            "hermes3",
            CHATML,
            f'<tool_call>\n{{"name": "f", "arguments": {_members(n, rng, False)}}}\n</tool_call><|im_end|>',
        )
    if case == "xml-params":
        body = "".join(f"<parameter=p{i}>\n{_prose(40, rng)}\n</parameter>\n" for i in range(n // 60 + 1))
        return "qwen3-coder", CHATML, f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call><|im_end|>"
    if case == "gemma4-dialect":
        return "gemma4", GEMMA, f"<|tool_call>call:f{_members(n, rng, True)}<tool_call|><turn|>"
    if case == "python-call-list":
        calls = ", ".join(f'f{i}(a="{_prose(20, rng)}", b={i})' for i in range(n // 40 + 1))
        return "pcl", "", f"<calls>[{calls}]</calls><eos>"
    raise ValueError(case)


CASES = ["content", "json-string", "json-members", "xml-params", "gemma4-dialect", "python-call-list"]


def _pieces(text: str) -> list[str]:
    rng = random.Random(3)
    out, i = [], 0
    while i < len(text):
        k = rng.randint(1, 7)
        out.append(text[i : i + k])
        i += k
    return out


def _run(case: str, n: int) -> float:
    """Function calls (Python and C) per fed piece."""
    name, prefix, text = make_case(case, n)
    template = PCL_TEMPLATE if name == "pcl" else get_template(name)
    pieces = _pieces(text)
    ds = DeltaStream(template, prefix=prefix, id_seed=0)
    calls = 0

    def prof(frame, event, arg):  # noqa: ANN001, ANN202
        nonlocal calls
        if event == "call" or event == "c_call":
            calls += 1

    sys.setprofile(prof)
    try:
        for piece in pieces:
            ds.feed(piece)
    finally:
        sys.setprofile(None)
    ds.finish()
    assert ds.warnings == []
    return calls / len(pieces)


@pytest.mark.parametrize("case", CASES)
def test_function_calls_per_piece_do_not_grow_with_the_region(case: str) -> None:
    small, mid, big = _run(case, 1_000), _run(case, 10_000), _run(case, 100_000)
    assert big <= 1.1 * mid + 1 and mid <= 1.25 * small + 2, (small, mid, big)


def _copied_chars(case: str, n: int) -> int:
    """Characters DeltaStream encodes (JSON fragments) plus the text its partial parsers hold, summed over
    every feed: both stay proportional to the region's length when nothing is parsed twice."""
    import hf_response_templates.delta_tools as tools_mod
    import hf_response_templates.deltas as deltas_mod

    name, prefix, text = make_case(case, n)
    template = PCL_TEMPLATE if name == "pcl" else get_template(name)
    total = 0
    real_encode = deltas_mod._encode_string
    real_dumps = tools_mod._dumps

    def encode(s: str) -> str:
        nonlocal total
        total += len(s)
        return real_encode(s)

    def dumps(v):  # noqa: ANN001, ANN202
        nonlocal total
        out = real_dumps(v)
        total += len(out)
        return out

    patched = [
        (deltas_mod, "_encode_string", encode),
        (tools_mod, "_encode_string", encode),
        (tools_mod, "_dumps", dumps),
    ]
    saved = [(m, k, getattr(m, k)) for m, k, _ in patched]
    for m, k, v in patched:
        setattr(m, k, v)
    try:
        ds = DeltaStream(template, prefix=prefix, id_seed=0)
        for piece in _pieces(text):
            ds.feed(piece)
            r = ds._open
            if r is not None and r.partial is not None:
                pieces = getattr(r.partial, "_pieces", None)
                if pieces:
                    total += sum(len(p) for p in pieces)  # what an xml/pcl search would join again
        ds.finish()
    finally:
        for m, k, v in saved:
            setattr(m, k, v)
    return total


@pytest.mark.parametrize("case", CASES)
def test_characters_copied_grow_linearly(case: str) -> None:
    small = _copied_chars(case, 1_000) / 1_000
    big = _copied_chars(case, 100_000) / 100_000
    assert big <= 2 * small + 1, (small, big)


def test_a_long_streamed_string_argument_is_sent_whole_across_compactions() -> None:
    """About 20,000 pieces of one string argument (past the 4,096-piece compactions of what was sent and of the
    string's pieces): the fragments join into the parsed arguments, and the message has the whole string."""
    name, prefix, text = make_case("json-string", 100_000)
    ds = DeltaStream(get_template(name), prefix=prefix, id_seed=0)
    args = []
    for piece in _pieces(text):
        for d in ds.feed(piece):
            args += [e["function"]["arguments"] for e in d.get("tool_calls", []) if "function" in e]
    for d in ds.finish():
        args += [e["function"]["arguments"] for e in d.get("tool_calls", []) if "function" in e]
    assert ds.warnings == []
    parsed = ds.message["tool_calls"][0]["function"]["arguments"]
    assert len(parsed["text"]) > 70_000 and len(args) > 15_000
    assert "".join(args) == json.dumps(parsed, ensure_ascii=False)
