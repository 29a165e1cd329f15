#!/usr/bin/env python
"""One-shot `parse_response`, this checkout against another one, alternating in one process.

On a loaded machine two separate runs move by 30-50%; running both codes in turn, in one process, over the
same responses keeps a slow spell from weighing on one side only::

    git archive <commit> | tar -x -C /tmp/base          # the other checkout
    python benchmarks/ab_oneshot.py --base /path/to/other/checkout --templates gemma3-pythonic,llama4-json

Inputs: `bench_all.py`'s one-shot responses (`_corpus.short_cases`, 40 per template), template dict reused.
Two figures per template, CPU µs per response (`time.process_time`), best of `--repeats`, base and ours run
alternately: ``whole``, the `parse_response` call; ``bodies``, the structured fields' own parse (content parser
and transform) over the bodies this checkout's one-shot reading hands them (a region the plan reads while
finding its end, `jsonscan.whole_value_end`, has no body call, so it is not in this figure). Each package is
imported in turn (its modules dropped from `sys.modules` and imported again from its directory; the functions
kept keep their own module globals). No result is asserted: this measures.
"""

from __future__ import annotations

# ruff: noqa: B023  (the recording closures are run in the loop iteration that makes them)
import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"
HERE = Path(__file__).resolve().parent


def _load(root: Path) -> tuple[Any, Any, Any, Any]:
    """`parse_response`, `load_template`, `get_template` and `_corpus` of the checkout at `root`."""
    for name in [m for m in sys.modules if m.startswith("hf_response_templates") or m == "_corpus"]:
        del sys.modules[name]
    added = [str(root), str(root / "benchmarks")]
    sys.path[:0] = added
    import _corpus

    from hf_response_templates import load_template, parse_response
    from hf_response_templates.library import get_template
    for path in added:  # (`_corpus` puts its own `tests/` first: that one stays, the raw outputs are read late)
        sys.path.remove(path)
    return parse_response, load_template, get_template, _corpus


def _best(runs: dict[str, Any], repeats: int, per: int) -> dict[str, float]:
    best = {k: float("inf") for k in runs}
    for _ in range(repeats):
        for k, run in runs.items():
            gc.collect()
            t = time.process_time()
            run()
            best[k] = min(best[k], (time.process_time() - t) / per * 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other checkout (a directory holding hf_response_templates/)")
    ap.add_argument("--templates", default="", help="comma-separated template names (default: all shipped)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--inner", type=int, default=10, help="passes over the responses per timing")
    args = ap.parse_args(argv)
    sides = {"base": _load(Path(args.base).resolve()), "ours": _load(HERE.parent)}
    names = args.templates.split(",") if args.templates else sides["ours"][3].template_names()
    print(f"CPU µs per response, best of {args.repeats}, base ({args.base}) and ours alternately")
    print(f"{'template':20s} {'whole: base':>12s} {'ours':>7s} {'x':>6s} | {'bodies: base':>12s} {'ours':>7s} {'x':>6s}")
    for name in names:
        parse_response, load_template, get_template, corpus = sides["ours"]
        cases = corpus.short_cases(name, 40)
        tpl = get_template(name)
        compiled = load_template(tpl)
        fields = [f for f in compiled.fields if f.content != "text"]
        bodies: list[tuple[str, str, Any]] = []
        originals = {f.name: f.parse for f in fields}
        for f in fields:
            def record(body: str, caps: Any, parse: Any = originals[f.name], field: str = f.name) -> Any:
                bodies.append((field, body, caps))
                return parse(body, caps)
            object.__setattr__(f, "parse", record)
        try:
            for c in cases:
                parse_response(c.text, tpl, prefix=c.prefix)
        finally:
            for f in fields:
                object.__setattr__(f, "parse", originals[f.name])
        whole, parts = {}, {}
        for side, (pr, lt, gt, cp) in sides.items():
            side_cases, side_tpl = cp.short_cases(name, 40), gt(name)
            items = [(lt(side_tpl).by_name[field].parse, body, caps) for field, body, caps in bodies]

            def run_whole(pr: Any = pr, side_cases: Any = side_cases, side_tpl: Any = side_tpl) -> None:
                for _ in range(args.inner):
                    for c in side_cases:
                        pr(c.text, side_tpl, prefix=c.prefix)

            def run_parts(items: Any = items) -> None:
                for _ in range(args.inner):
                    for parse, body, caps in items:
                        try:
                            parse(body, caps)
                        except Exception:  # a malformed region: timed as it is (the error path)
                            pass

            run_whole()
            whole[side], parts[side] = run_whole, run_parts
        per = args.inner * len(cases)
        w, p = _best(whole, args.repeats, per), _best(parts, args.repeats, per)
        print(f"{name:20s} {w['base']:12.2f} {w['ours']:7.2f} {w['base'] / w['ours']:5.2f}x | "
              f"{p['base']:12.2f} {p['ours']:7.2f} {p['base'] / max(p['ours'], 1e-9):5.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
