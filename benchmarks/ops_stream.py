#!/usr/bin/env python
"""Streaming, counted: Python opcodes and C calls per stream and per chunk, for this checkout and another.

Deterministic where CPU time on a loaded machine is not (two runs of `ab_stream.py` move a row by 10-30%): one
stream of each template in the token chunks of `bench_all.py` (the same corpus and BPE), building the parser,
feeding every chunk and `finalize()`, counted with `sys.settrace` (opcodes of every Python frame) and
`sys.setprofile` (C calls: `regex` and `re` searches, `str` methods, ...)::

    python benchmarks/ops_stream.py --base /path/to/other/checkout --templates gpt-oss,kimi-k3
    python benchmarks/ops_stream.py --templates kimi-k3,cohere-command-r7b --size 100000

Each checkout is counted in a child process (so both import as `hf_response_templates`). No result is
asserted: this measures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _counted(tpl, prefix: str, chunks: list[str]) -> tuple[int, int]:
    """(Python opcodes, C calls) of one stream: build the parser, feed every chunk, `finalize()`."""
    from hf_response_templates import ResponseParser

    def run() -> None:
        p = ResponseParser(tpl, prefix)
        for c in chunks:
            p.feed(c)
        p.finalize()

    run()  # (warm: caches filled on first use are not counted)
    counts = [0, 0]

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            counts[0] += 1
        return tracer

    def profiler(frame, event, arg):
        if event == "c_call":
            counts[1] += 1

    sys.setprofile(profiler)
    sys.settrace(tracer)
    run()
    sys.settrace(None)
    sys.setprofile(None)
    return counts[0], counts[1]


def _count(names: list[str], size: int) -> dict[str, tuple[int, int, int]]:
    os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"
    sys.path.insert(0, str(HERE))
    import _corpus

    from hf_response_templates import load_template
    from hf_response_templates.library import get_template

    texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    tok = _corpus.train_tokenizer(texts)
    out = {}
    for name in names:
        case = _corpus.stream_case(name, size)
        chunks = _corpus.token_chunks(tok, case.text)
        out[name] = (*_counted(load_template(get_template(name)), case.prefix, chunks), len(chunks))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, help="root of the checkout to compare with")
    ap.add_argument("--templates", default="", help="comma-separated (default: all shipped)")
    ap.add_argument("--size", "--sizes", type=int, default=1000, help="characters per stream (default 1000)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_count(args.templates.split(","), args.size)))
        return 0
    sys.path.insert(0, str(HERE))
    import _corpus

    names = _corpus.template_names([t for t in args.templates.split(",") if t] or None)
    import _checkouts

    got = _checkouts.counts_by_checkout(__file__, names, args.base, ["--size", str(args.size)])
    print(f"{'template':22s} | {'opcodes':>10s} {'C calls':>9s} {'per chunk':>9s}"
          + (" | base opcodes, C calls, per chunk, ours/base" if args.base else ""))
    for name in names:
        ops, calls, n = got["ours"][name]
        line = f"{name:22s} | {ops:10,d} {calls:9,d} {ops / n:9.1f}"
        if args.base:
            bops, bcalls, bn = got["base"][name]
            line += f" | {bops:10,d} {bcalls:9,d} {bops / bn:9.1f} {ops / bops:6.3f}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
