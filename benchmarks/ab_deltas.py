#!/usr/bin/env python
"""A/B: `ResponseParser`, a base checkout's `DeltaStream` and this checkout's, run alternately in one process.

The load of a shared machine then hits the three alike. The base package is imported under another name::

    git archive BASE hf_response_templates | tar -x -C /tmp/base
    mv /tmp/base/hf_response_templates /tmp/base/hf_rt_base && ln -s $PWD/templates /tmp/base/templates
    grep -rl hf_response_templates /tmp/base/hf_rt_base | xargs sed -i 's/hf_response_templates/hf_rt_base/g'
    taskset -c 1 python benchmarks/ab_deltas.py /tmp/base content,json-members 1000,100000 15

Prints CPU µs per piece (`time.process_time`, best of N; N // 3 at 1M characters) and the ratios to the parser
(the base's parser: the two packages' parsers are the same code here). Same text and pieces as bench_deltas.py.
"""

from __future__ import annotations

import gc
import importlib
import os
import random
import sys
import time

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_deltas import SEED, make_case, pieces  # noqa: E402

from hf_response_templates import get_template
from hf_response_templates.openai import DeltaStream


def measure(base, base_stream, case: str, n: int, repeat: int) -> None:  # noqa: ANN001 - modules / classes
    """One row: the parser, the base's stream and this checkout's, alternately, best of `repeat`."""
    rng = random.Random(SEED)
    name, prefix, text = make_case(case, n, rng)
    chunks = pieces(text, rng)
    tpl_base, tpl = base.get_template(name), get_template(name)

    def parser() -> None:
        p = base.ResponseParser(tpl_base, prefix)
        for c in chunks:
            p.feed(c)
        p.finalize()

    def stream(cls, template):  # noqa: ANN001, ANN202
        def run() -> None:
            ds = cls(template, prefix=prefix, id_seed=0)
            for c in chunks:
                ds.feed(c)
            ds.finish()
            assert not ds.warnings, ds.warnings

        return run

    runs = [parser, stream(base_stream, tpl_base), stream(DeltaStream, tpl)]
    best = [float("inf")] * 3
    for _ in range(repeat if n < 1_000_000 else max(2, repeat // 3)):
        for k, run in enumerate(runs):
            gc.collect()
            t = time.process_time()
            run()
            best[k] = min(best[k], time.process_time() - t)
    us = [b / len(chunks) * 1e6 for b in best]
    print(f"{case:15} {len(text):>8} | parser {us[0]:5.2f} | base {us[1]:5.2f} ({best[1] / best[0]:4.2f}x)"
          f" | this {us[2]:5.2f} ({best[2] / best[0]:4.2f}x)", flush=True)


def main(argv: list[str]) -> None:
    sys.path.insert(0, argv[0])
    base = importlib.import_module("hf_rt_base")
    base_stream = importlib.import_module("hf_rt_base.openai").DeltaStream
    cases, sizes = argv[1].split(","), [int(x) for x in argv[2].split(",")]
    repeat = int(argv[3]) if len(argv) > 3 else 7
    for case in cases:
        for n in sizes:
            measure(base, base_stream, case, n, repeat)


if __name__ == "__main__":
    main(sys.argv[1:])
