"""The token-id path, this checkout against another, alternating in one process: `tokenizer.parse_response(ids,
prefix=ids)` of each, and the floor of `bench_all.py --only tokenizer` ("both": one backend decode of prompt +
response and `parse_response` of the text, the split point known beforehand).

    python benchmarks/ab_tokenizer.py --base /path/to/other/checkout [--templates lfm2,qwen3] [--long] [--rounds 21]

Per template, the benchmark's case (a ~300-token response; the prompt's last 40 tokens, or 2,300 with `--long`):
CPU µs per call, best of `--rounds` rounds of 40 calls, the three run in turn (the order rotated every round,
the collector off during a run), each side on its own tokenizer with the template set by its own module;
then each side minus the floor, and the medians over the templates. Both sides' messages are checked equal (tool
call ids aside). Each checkout is imported in turn (its modules dropped from `sys.modules` and imported again from
its directory).
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _corpus  # noqa: E402


def _load(root: Path) -> tuple[Any, Any]:
    """(the package, its `tokenizer` module) of the checkout at `root`."""
    for name in [m for m in sys.modules if m == "hf_response_templates" or m.startswith("hf_response_templates.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module("hf_response_templates")
        module = importlib.import_module("hf_response_templates.tokenizer")
        module._engine()  # its lazy engine import resolves `hf_response_templates` now, to this checkout
    finally:
        sys.path.remove(str(root))
    assert module.__file__.startswith(str(root)), module.__file__
    return package, module


def _alternating(runs: dict[str, Any], rounds: int, calls: int = 40) -> dict[str, float]:
    """{name: best CPU µs per call} of `rounds` rounds in which each callable runs `calls` times in turn.

    The order rotates by one every round (A B C, B C A, C A B, ...): over a multiple of len(runs) rounds every
    callable takes every place equally often, and with three or more none runs twice in a row (a round's end
    and the next one's start, the warm-up's end and the first round's start). (Reversing it every other
    round, as before, ran the first and the last callables twice in a row, on caches they had just warmed,
    and never the middle one: with base / ours / floor, ours read ~1-2 µs slower than base, the same code.)"""
    best = {name: float("inf") for name in runs}
    items = list(runs.items())
    for fn in runs.values():
        fn()
    for r in range(rounds):
        k = r % len(items)
        for name, fn in items[k:] + items[:k]:
            gc.disable()
            t0 = time.process_time_ns()
            for _ in range(calls):
                fn()
            dt = (time.process_time_ns() - t0) / calls / 1e3
            gc.enable()
            gc.collect(1)
            best[name] = min(best[name], dt)
    return best


def _without_ids(message: dict) -> dict:
    calls = message.get("tool_calls")
    if not calls:
        return message
    return {**message, "tool_calls": [{k: v for k, v in c.items() if k != "id"} for c in calls]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other checkout (a directory holding hf_response_templates/)")
    ap.add_argument("--templates", default="", help="comma-separated template names (default: all shipped)")
    ap.add_argument("--long", action="store_true", help="the 2,300-token prompt (default: the 40-token one)")
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args(argv)
    from transformers import PreTrainedTokenizerFast

    names = _corpus.template_names([t.strip() for t in args.templates.split(",") if t.strip()] or None)
    corpus_texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    trained = _corpus.train_tokenizer(corpus_texts)
    long_system = _corpus.filler(12000, random.Random(5))
    (_, base), (ours_pkg, ours) = _load(Path(args.base).resolve()), _load(HERE.parent)
    tok_base = PreTrainedTokenizerFast(tokenizer_object=copy.deepcopy(trained))
    tok_ours = PreTrainedTokenizerFast(tokenizer_object=copy.deepcopy(trained))
    backend = tok_ours.backend_tokenizer
    parse = ours_pkg.parse_response
    from hf_response_templates.library import get_template

    print(f"CPU µs per call, best of {args.rounds} rounds, base ({args.base}) / ours / floor alternately "
          f"({'long' if args.long else 'short'} prompt)")
    print(f"{'template':20s} {'prompt':>6s} | {'base':>7s} {'ours':>7s} {'floor':>7s} | {'base-floor':>10s} {'ours-floor':>10s}")
    over: dict[str, list[float]] = {"base": [], "ours": []}
    base_method, ours_method = base.ResponseTemplateMixin.parse_response, ours.ResponseTemplateMixin.parse_response
    for name in names:
        tpl = get_template(name)
        base._set_response_template(tok_base, tpl)
        ours._set_response_template(tok_ours, tpl)
        case = _corpus.stream_case(name, 1000)
        ids = tok_ours.encode(case.text, add_special_tokens=False)
        prompt_text, keep = (long_system + case.prefix, 2300) if args.long else (case.prefix, 40)
        pids = tok_ours.encode(prompt_text, add_special_tokens=False)[-keep:]
        if _without_ids(base_method(tok_base, ids, prefix=pids)) != _without_ids(ours_method(tok_ours, ids, prefix=pids)):
            raise AssertionError(f"{name}: base and ours give different messages")
        cut = len(backend.decode(pids, skip_special_tokens=False))

        def floor(ids: list[int] = ids, pids: list[int] = pids, cut: int = cut, tpl: dict = tpl) -> None:
            joint = backend.decode(pids + ids, skip_special_tokens=False)
            parse(joint[cut:], tpl, prefix=joint[:cut])

        best = _alternating({
            "base": lambda ids=ids, pids=pids: base_method(tok_base, ids, prefix=pids),
            "ours": lambda ids=ids, pids=pids: ours_method(tok_ours, ids, prefix=pids),
            "floor": floor,
        }, args.rounds)
        for side in over:
            over[side].append(best[side] - best["floor"])
        print(f"{name:20s} {len(pids):6d} | {best['base']:7.1f} {best['ours']:7.1f} {best['floor']:7.1f} | "
              f"{best['base'] - best['floor']:+10.1f} {best['ours'] - best['floor']:+10.1f}", flush=True)
    for side, values in over.items():
        values.sort()
        print(f"{side} minus floor: median {values[len(values) // 2]:+.1f} µs, max {values[-1]:+.1f} µs, "
              f"<= +15 µs on {sum(v <= 15 for v in values)} of {len(values)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
