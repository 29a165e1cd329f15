#!/usr/bin/env python
"""Benchmark `DeltaStream` (OpenAI-style deltas) next to the `ResponseParser` it sits on.

Run it from a checkout after ``pip install -e ".[test]"``::

    python benchmarks/bench_deltas.py            # 1k, 100k and 1M characters (about a minute)
    python benchmarks/bench_deltas.py --quick    # 1k and 100k only
    python benchmarks/bench_deltas.py --json out.json
    python benchmarks/bench_deltas.py --opcodes      # Python opcodes per piece (deterministic), 1k and 10k

What is measured: the same generated text, cut into the same token-sized pieces (1-7 characters, random
with a fixed seed), is fed (1) to ``ResponseParser(template, prefix).feed`` then ``finalize()``, and (2) to
``DeltaStream(template, prefix=...).feed`` then ``finish()`` (which runs its own parser, so (2) includes
(1)). Figures are CPU time (``time.process_time``) per piece, best of 5 runs (3 at 1M characters), (1) and
(2) run alternately so that a load spike on a shared machine hits both; "ratio" is (2) / (1).
The cases put all the length into one region, where a re-parsing adapter would be quadratic:

* ``content``: SmolLM3, reasoning then content text, each about half of the characters;
* ``json-string``: Hermes 3, one tool call whose one string argument holds all the characters
  (streamed character by character);
* ``json-members``: Hermes 3, one tool call with many small arguments (strings, numbers, lists);
* ``xml-params``: Qwen3-Coder, one tool call with many ``<parameter=...>`` tags;
* ``gemma4-dialect``: Gemma 4's JSON dialect (bare keys, ``<|"|>`` strings), many small arguments.

No result is asserted: tests/test_delta_scaling.py checks the scaling by counting work, not time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hf_response_templates import ResponseParser, get_template
from hf_response_templates.openai import DeltaStream

SEED = 20261
CHATML = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"
_WORDS = "the model writes a long answer with numbers 42 and 3.14, accents é déjà, and a few x < y".split()


def _prose(n: int, rng: random.Random) -> str:
    out: list[str] = []
    size = 0
    while size < n:
        w = rng.choice(_WORDS) + (" " if rng.random() < 0.95 else "\n")
        out.append(w)
        size += len(w)
    return "".join(out)[:n].strip() or "x"


def _members(n: int, rng: random.Random, key_fmt: Callable[[str], str], str_fmt: Callable[[str], str]) -> str:
    parts: list[str] = []
    size = i = 0
    while size < n:
        kind = i % 3
        value = (
            str_fmt(_prose(30, rng))
            if kind == 0
            else str(rng.randint(0, 10**6))
            if kind == 1
            else "[1, 2, 3]"
        )
        part = f"{key_fmt(f'k{i}')}: {value}"
        parts.append(part)
        size += len(part) + 2
        i += 1
    return "{" + ", ".join(parts) + "}"


def make_case(case: str, n: int, rng: random.Random) -> tuple[str, str, str]:
    """(template name, prefix, generated text) of about `n` characters."""
    if case == "content":
        return "smollm3", CHATML, f"<think>\n{_prose(n // 2, rng)}\n</think>\n{_prose(n // 2, rng)}<|im_end|>"
    if case == "json-string":
        value = json.dumps(_prose(n, rng), ensure_ascii=False)
        return (
            "hermes3",
            CHATML,
            f'<tool_call>\n{{"name": "write", "arguments": {{"text": {value}}}}}\n</tool_call><|im_end|>',
        )
    if case == "json-members":
        args = _members(n, rng, json.dumps, lambda s: json.dumps(s, ensure_ascii=False))
        return "hermes3", CHATML, f'<tool_call>\n{{"name": "f", "arguments": {args}}}\n</tool_call><|im_end|>'
    if case == "xml-params":
        params: list[str] = []
        size = i = 0
        while size < n:
            p = f"<parameter=p{i}>\n{_prose(40, rng)}\n</parameter>\n"
            params.append(p)
            size += len(p)
            i += 1
        body = "".join(params)
        return "qwen3-coder", CHATML, f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call><|im_end|>"
    if case == "gemma4-dialect":
        args = _members(n, rng, lambda k: k, lambda s: '<|"|>' + s + '<|"|>')
        return "gemma4", GEMMA, f"<|tool_call>call:f{args}<tool_call|><turn|>"
    raise ValueError(case)


CASES = ("content", "json-string", "json-members", "xml-params", "gemma4-dialect")


def pieces(text: str, rng: random.Random) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        k = rng.randint(1, 7)
        out.append(text[i : i + k])
        i += k
    return out


def _time(run: Callable[[], None]) -> float:
    gc.collect()
    t = time.process_time()
    run()
    return time.process_time() - t


def measure(case: str, n: int, repeat: int = 5) -> dict:
    rng = random.Random(SEED)
    name, prefix, text = make_case(case, n, rng)
    template = get_template(name)
    chunks = pieces(text, rng)

    def parser_only() -> None:
        p = ResponseParser(template, prefix)
        for c in chunks:
            p.feed(c)
        p.finalize()

    def deltas() -> None:  # (as `parser_only`: nothing per piece but the call, as a server makes it)
        ds = DeltaStream(template, prefix=prefix, id_seed=0)
        for c in chunks:
            ds.feed(c)
        ds.finish()
        if ds.warnings:
            raise AssertionError(ds.warnings)

    # The deltas are counted in a run of their own, untimed: counting them in the timed runs added a `len` call
    # and an addition per piece to the stream's side only
    ds = DeltaStream(template, prefix=prefix, id_seed=0)
    n_deltas = sum(len(ds.feed(c)) for c in chunks) + len(ds.finish())
    del ds
    a = b = float("inf")
    for _ in range(repeat):  # alternately
        a = min(a, _time(parser_only))
        b = min(b, _time(deltas))
    return {
        "case": case,
        "template": name,
        "chars": len(text),
        "pieces": len(chunks),
        "deltas": n_deltas,
        "parser_us": a / len(chunks) * 1e6,
        "deltas_us": b / len(chunks) * 1e6,
        "ratio": b / a,
    }


def count_opcodes(case: str, n: int) -> dict:
    """Python opcodes executed per piece by `ResponseParser.feed` and by `DeltaStream.feed` (which includes its
    parser's), the same text and pieces as `measure`: deterministic, unlike CPU time on a loaded machine
    (``sys.settrace`` with ``f_trace_opcodes``; a call into C counts as the opcodes that make it). Each is run
    once untraced first, as the CPU figures' best of N are: what is compiled once per process (a regex) is not
    counted."""
    rng = random.Random(SEED)
    name, prefix, text = make_case(case, n, rng)
    template = get_template(name)
    chunks = pieces(text, rng)
    counts = []
    # (``obj.feed(c)`` per piece, as `measure` and a server call it: a `DeltaStream` may replace its ``feed``)
    for make in (lambda: ResponseParser(template, prefix), lambda: DeltaStream(template, prefix=prefix, id_seed=0)):
        obj = make()
        for c in chunks:
            obj.feed(c)
        obj = make()
        ops = 0

        def trace(frame, event, arg):  # noqa: ANN001, ANN202 - the sys.settrace protocol
            nonlocal ops
            frame.f_trace_opcodes = True
            if event == "opcode":
                ops += 1
            return trace

        sys.settrace(trace)
        try:
            for c in chunks:
                obj.feed(c)
        finally:
            sys.settrace(None)
        counts.append(ops / len(chunks))
    return {"case": case, "chars": len(text), "pieces": len(chunks), "parser_ops": counts[0],
            "deltas_ops": counts[1], "ratio": counts[1] / counts[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1k and 100k characters only")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=CASES)
    ap.add_argument("--opcodes", action="store_true", help="count Python opcodes per piece instead (1k and 10k)")
    args = ap.parse_args(argv)
    if args.opcodes:
        print(f"# Python opcodes per 1-7 character piece (Python {platform.python_version()})")
        print(f"{'case':15} {'chars':>9} {'pieces':>8} | {'parser':>7} {'deltas':>7} {'ratio':>6}")
        for case in args.cases:
            for n in (1_000, 10_000):
                row = count_opcodes(case, n)
                print(f"{case:15} {row['chars']:>9} {row['pieces']:>8} | "
                      f"{row['parser_ops']:7.1f} {row['deltas_ops']:7.1f} {row['ratio']:6.2f}", flush=True)
        return 0
    sizes = (1_000, 100_000) if args.quick else (1_000, 100_000, 1_000_000)
    print(
        f"# DeltaStream vs ResponseParser, CPU µs per 1-7 character piece, best of 5 (1M: 3), run alternately "
        f"(Python {platform.python_version()})"
    )
    print(f"{'case':15} {'chars':>9} {'pieces':>8} {'deltas':>8} | {'parser':>7} {'deltas':>7} {'ratio':>6}")
    rows = []
    for case in args.cases:
        for n in sizes:
            row = measure(case, n, repeat=5 if n < 1_000_000 else 3)
            rows.append(row)
            print(
                f"{case:15} {row['chars']:>9} {row['pieces']:>8} {row['deltas']:>8} | "
                f"{row['parser_us']:7.2f} {row['deltas_us']:7.2f} {row['ratio']:6.2f}",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
