#!/usr/bin/env python
"""One-shot `parse_response`, counted: Python opcodes and C calls per response, for this checkout and another.

Deterministic where CPU time on a loaded machine is not (`ab_oneshot.py` rows move by 10-40% between runs):
`bench_all.py`'s one-shot responses (`_corpus.short_cases`, 40 per template), template dict reused, each
parsed once untimed (caches filled on first use are not counted) and then once counted with `sys.settrace`
(opcodes of every Python frame) and `sys.setprofile` (C calls)::

    python benchmarks/ops_oneshot.py --base /path/to/other/checkout --templates mistral-small-3.2,ministral-3
    python benchmarks/ops_oneshot.py --templates minimax-m2 --functions      # where the opcodes are
    python benchmarks/ops_oneshot.py --trivial --base /path/to/other/checkout   # the fixed cost per call

`--trivial`: one response per template, the family's content-only answer with its text replaced by "Hi" (the
rendered generation with the prompt it came with, so its anchor and end token are the real ones): what every
call pays whatever its response (entry, plan prologue and epilogue).

Each checkout is counted in a child process (so both import as `hf_response_templates`). No result is
asserted: this measures.
"""

from __future__ import annotations

# ruff: noqa: B023  (the counting closures run in the loop iteration that makes them)
import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _trivial(name: str) -> list:
    """One content-only response of `name` whose answer is "Hi" (see the module docstring)."""
    import random

    import _corpus

    case = _corpus.render(name, "content", 300, random.Random(_corpus.SEED))
    if case is None:  # (a family that writes only tool calls at the end: its first short case)
        return _corpus.short_cases(name, 1)
    text = case.text.replace(case.message["content"], "Hi", 1)
    return [_corpus.Case(name, "trivial", case.prefix, text, {**case.message, "content": "Hi"}, None)]


def _count(names: list[str], count: int, trivial: bool = False) -> dict[str, tuple[int, int, int, dict[str, int]]]:
    os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"
    sys.path.insert(0, str(HERE))
    import _corpus

    from hf_response_templates import parse_response
    from hf_response_templates.library import get_template

    out = {}
    for name in names:
        cases = _trivial(name) if trivial else _corpus.short_cases(name, count)
        tpl = get_template(name)
        for c in cases:
            parse_response(c.text, tpl, prefix=c.prefix)
        counts = [0, 0]
        by_function: Counter[str] = Counter()

        def tracer(frame, event, arg):
            frame.f_trace_opcodes = True
            if event == "opcode":
                counts[0] += 1
                code = frame.f_code
                by_function[f"{code.co_name} ({Path(code.co_filename).name}:{code.co_firstlineno})"] += 1
            return tracer

        def profiler(frame, event, arg):
            if event == "c_call":
                counts[1] += 1

        sys.setprofile(profiler)
        sys.settrace(tracer)
        for c in cases:
            parse_response(c.text, tpl, prefix=c.prefix)
        sys.settrace(None)
        sys.setprofile(None)
        out[name] = (counts[0], counts[1], len(cases), dict(by_function.most_common(8)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, help="root of the checkout to compare with")
    ap.add_argument("--templates", default="", help="comma-separated (default: all shipped)")
    ap.add_argument("--responses", type=int, default=40, help="responses per template (default 40)")
    ap.add_argument("--functions", action="store_true", help="also list this checkout's costliest functions")
    ap.add_argument("--trivial", action="store_true", help='one content-only "Hi" response per template (fixed cost)')
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_count(args.templates.split(","), args.responses, args.trivial)))
        return 0
    sys.path.insert(0, str(HERE))
    import _corpus

    names = _corpus.template_names([t for t in args.templates.split(",") if t] or None)
    import _checkouts

    got = _checkouts.counts_by_checkout(__file__, names, args.base, ["--responses", str(args.responses), *(["--trivial"] if args.trivial else [])])
    print(f"{'template':22s} | {'opcodes':>8s} {'C calls':>8s} per response"
          + (" | base opcodes, C calls, ours/base" if args.base else ""))
    for name in names:
        ops, calls, n, functions = got["ours"][name]
        line = f"{name:22s} | {ops / n:8.0f} {calls / n:8.1f}"
        if args.base:
            bops, bcalls, bn, _ = got["base"][name]
            line += f"              | {bops / bn:8.0f} {bcalls / bn:8.1f} {ops / bops:6.3f}"
        print(line)
        if args.functions:
            for function, k in functions.items():
                print(f"    {k / n:8.0f}  {function}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
