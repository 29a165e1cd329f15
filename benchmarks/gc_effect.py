#!/usr/bin/env python
"""What a forced collection right before a timed run does to the run, and why.

``bench_all.py`` used to call ``gc.collect()`` before every timed run. This script times the same runs
(ours and native, ~1k-character streams in BPE token chunks and one-shot ``parse_response`` on short
responses, template dict reused) right after each of these, in turn, in one process::

    warm       nothing (the run before was another timed run)
    gen1       gc.collect(1): the young generations only
    full       gc.collect(): walks every tracked object of the process and empties CPython's free lists
    freelists  gc.freeze(); gc.collect(); gc.unfreeze(): a full collection of an (almost) empty young heap:
               the free lists are emptied but the process's heap is not walked
    walk       gc.get_objects(): every tracked object's header is walked, the free lists are kept
    evict      a 64 MB memcpy between two buffers made at start: the data caches (L1/L2, 32 MB L3) are
               evicted, the free lists are kept, no Python object is touched
    plain      (the 'loop' workload only) a loop building small dicts and lists, for comparison

``--torch`` imports torch first (a bigger heap for ``full`` and ``walk`` to walk). Each figure is the median
(and min) over ``--samples`` runs of CPU µs per run (``time.process_time``); the conditions rotate and ours
and native alternate. ``minflt`` is the number of minor page faults during the timed runs (none: memory is
not being handed back and forth with the OS). No result is asserted: this measures.

    python benchmarks/gc_effect.py --templates mistral-small-3.2,qwen3,gpt-oss
"""

from __future__ import annotations

import os

os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"

import argparse
import functools
import gc
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _corpus  # noqa: E402

from hf_response_templates import ResponseParser, load_template, parse_response  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402

try:
    from transformers.utils.chat_parsing import ResponseParser as NativeParser
    from transformers.utils.chat_parsing import parse_response as native_parse
    from transformers.utils.chat_parsing.response_templates import load_response_template as native_load
except ImportError:  # Transformers 4.x: ours only
    NativeParser = native_parse = native_load = None  # type: ignore[assignment]

_SRC = bytearray(64 << 20)
_DST = bytearray(64 << 20)


def _evict() -> None:
    _DST[:] = _SRC


def _freelists() -> None:
    gc.freeze()
    gc.collect()
    gc.unfreeze()


def _walk() -> None:
    gc.get_objects()


CONDITIONS: dict[str, Callable[[], Any] | None] = {
    "warm": None,
    "gen1": functools.partial(gc.collect, 1),
    "full": gc.collect,
    "freelists": _freelists,
    "walk": _walk,
    "evict": _evict,
}


def _stream(make, chunks: list[str]) -> None:
    p = make()
    feed = p.feed
    for c in chunks:
        feed(c)
    p.finalize()


def _oneshot(parse, cases, tpl) -> None:
    for c in cases:
        parse(c.text, tpl, prefix=c.prefix)


def _plain() -> None:
    """Small dicts and lists made and dropped: no parser at all."""
    out = []
    for i in range(400):
        d = {"role": "assistant", "content": str(i), "n": i}
        out.append([d, (i, i + 1)])
        if len(out) > 20:
            out.clear()


def workloads(name: str, tok, responses: int) -> list[tuple[str, str, Callable[[], None], int]]:
    """(workload, side, run, units) for one template: units divide the run's time (chunks or responses)."""
    tpl = get_template(name)
    compiled = load_template(tpl)
    native_tpl = native_load(tpl) if native_load else None
    case = _corpus.stream_case(name, 1000)
    chunks = _corpus.token_chunks(tok, case.text)
    cases = _corpus.short_cases(name, responses)
    out = [(f"{name} stream 1k", "ours", functools.partial(_stream, functools.partial(ResponseParser, compiled, case.prefix), chunks), len(chunks))]
    if native_tpl is not None:
        out.append((f"{name} stream 1k", "native", functools.partial(_stream, functools.partial(NativeParser, native_tpl, case.prefix), chunks), len(chunks)))
    out.append((f"{name} one-shot", "ours", functools.partial(_oneshot, parse_response, cases, tpl), len(cases)))
    if native_parse is not None:
        try:
            _oneshot(native_parse, cases, tpl)
            out.append((f"{name} one-shot", "native", functools.partial(_oneshot, native_parse, cases, tpl), len(cases)))
        except Exception:  # noqa: BLE001 - a template native cannot run: ours only
            pass
    return out


def measure(loads, samples: int) -> dict[tuple[str, str, str], list[float]]:
    """{(workload, side, condition): [µs per run]}; conditions rotate, sides alternate."""
    res: dict[tuple[str, str, str], list[float]] = {}
    faults: dict[str, int] = dict.fromkeys(CONDITIONS, 0)
    conds = list(CONDITIONS)
    for fn in [w[2] for w in loads]:  # one untimed run of each
        fn()
    for i in range(samples):
        rot = conds[i % len(conds):] + conds[: i % len(conds)]
        order = loads if i % 2 == 0 else loads[::-1]
        for cond in rot:
            pre = CONDITIONS[cond]
            for wl, side, fn, _units in order:
                if pre is not None:
                    pre()
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.process_time_ns()
                fn()
                dt = time.process_time_ns() - t0
                faults[cond] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
                res.setdefault((wl, side, cond), []).append(dt / 1e3)
    res[("minflt", "", "")] = [faults[c] for c in conds]  # type: ignore[list-item]
    return res


def _q1(values: list[float]) -> float:
    return sorted(values)[len(values) // 4]


def _callgrind_child(template: str, condition: str, runs: int, responses: int) -> int:
    """Under callgrind (instrumentation off): set up, switch the instrumentation on, then `runs` times:
    the condition, and one run inside `operator.call` (the only calls counted, see --callgrind)."""
    import operator
    import subprocess

    tpl = get_template(template)
    compiled = load_template(tpl)
    native_tpl = native_load(tpl) if native_load else None
    case = _corpus.stream_case(template, 1000)
    chunks = [case.text[i : i + 4] for i in range(0, len(case.text), 4)]  # no BPE under valgrind: 4 chars
    cases = _corpus.short_cases(template, responses)
    loads = {
        "stream ours": functools.partial(_stream, functools.partial(ResponseParser, compiled, case.prefix), chunks),
        "one-shot ours": functools.partial(_oneshot, parse_response, cases, tpl),
    }
    if native_tpl is not None:
        loads["stream native"] = functools.partial(_stream, functools.partial(NativeParser, native_tpl, case.prefix), chunks)
        loads["one-shot native"] = functools.partial(_oneshot, native_parse, cases, tpl)
    load = loads[os.environ["GC_EFFECT_LOAD"]]
    gc.collect()
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    pre = CONDITIONS[condition]
    for _ in range(2):  # warm the simulated caches
        load()
    for _ in range(runs):
        if pre is not None:
            pre()
        operator.call(load)
    return 0


# the machine's (AMD EPYC Milan, per core): L1d 32 KB 8-way, L2 512 KB 8-way; simulated as D1 and LL, as
# callgrind has two levels and the shared 32 MB L3 holds this process's whole heap
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=524288,8,64"]


def callgrind(template: str, loads: list[str], conditions: list[str], runs: int, responses: int) -> None:
    """Simulated cache misses and instructions of the timed runs after each condition (deterministic)."""
    import subprocess
    import tempfile

    events = None
    print(f"\ncallgrind --cache-sim=yes {' '.join(CACHES)} (LL = the L2), {template}, per run (mean of {runs}; "
          "streams in 4-character chunks):")
    for load in loads:
        for cond in conditions:
            with tempfile.NamedTemporaryFile(suffix=".cg") as out:
                cmd = [
                    "valgrind", "--tool=callgrind", "--cache-sim=yes", *CACHES, "--instr-atstart=no", "--collect-atstart=no",
                    "--toggle-collect=_operator_call", f"--callgrind-out-file={out.name}",
                    sys.executable, __file__, "--callgrind-child", template, cond, str(runs), str(responses),
                ]
                subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "GC_EFFECT_LOAD": load})
                text = Path(out.name).read_text()
            names = next(line for line in text.splitlines() if line.startswith("events:")).split()[1:]
            totals = next(line for line in text.splitlines() if line.startswith(("summary:", "totals:"))).split()[1:]
            got = dict(zip(names, (int(t) / runs for t in totals), strict=False))
            if events is None:
                events = names
                print(f"{'workload':18s} {'condition':10s} | " + " ".join(f"{e:>10s}" for e in names))
            print(f"{load:18s} {cond:10s} | " + " ".join(f"{got[e]:10.0f}" for e in names), flush=True)


def main(argv: list[str] | None = None) -> int:
    if sys.argv[1:2] == ["--callgrind-child"]:
        t, c, r, n = sys.argv[2:6]
        return _callgrind_child(t, c, int(r), int(n))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--templates", default="mistral-small-3.2,qwen3,gpt-oss")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--responses", type=int, default=40)
    ap.add_argument("--torch", action="store_true", help="import torch first (a bigger heap)")
    ap.add_argument("--callgrind", metavar="TEMPLATE", help="count simulated cache misses instead (valgrind)")
    ap.add_argument("--loads", default="stream ours,stream native", help="with --callgrind: workloads")
    ap.add_argument("--conditions", default="warm,gen1,full,freelists,walk,evict", help="with --callgrind")
    args = ap.parse_args(argv)
    if args.callgrind:
        callgrind(args.callgrind, args.loads.split(","), args.conditions.split(","), 3, args.responses)
        return 0
    if args.torch:
        import torch  # noqa: F401
    names = _corpus.template_names([t for t in args.templates.split(",") if t])
    corpus_texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    tok = _corpus.train_tokenizer(corpus_texts)
    gc.collect()
    print(f"tracked objects: {len(gc.get_objects()):,}; torch imported: {'torch' in sys.modules}")
    t0 = time.process_time()
    gc.collect()
    print(f"one full collection: {(time.process_time() - t0) * 1e3:.1f} ms; one 64 MB copy: ", end="")
    t0 = time.process_time()
    _evict()
    print(f"{(time.process_time() - t0) * 1e3:.1f} ms")
    loads = [("plain loop", "-", _plain, 1)]
    for name in names:
        loads += workloads(name, tok, args.responses)
    res = measure(loads, args.samples)
    conds = list(CONDITIONS)
    for label, stat in (("median", statistics.median), ("lowest quartile", _q1), ("min", min)):
        print(f"\nCPU µs per run, {label} of {args.samples} runs; in brackets the excess over 'warm'")
        print(f"{'workload':28s} {'side':6s} | " + " | ".join(f"{c:>13s}" for c in conds))
        for wl, side, _fn, _u in loads:
            warm = stat(res[(wl, side, "warm")])
            cells = [f"{stat(res[(wl, side, c)]):6.0f}" + (f" ({stat(res[(wl, side, c)]) - warm:+5.0f})" if c != "warm" else " " * 8) for c in conds]
            print(f"{wl:28s} {side:6s} | " + " | ".join(cells))
    print("\nnative / ours, min of the runs, per condition:")
    for wl in dict.fromkeys(w[0] for w in loads):
        if (wl, "native", "warm") in res:
            print(f"{wl:28s}        | " + " | ".join(
                f"{c} {min(res[(wl, 'native', c)]) / min(res[(wl, 'ours', c)]):4.1f}x" for c in conds))
    print("minor page faults during the timed runs, per condition: "
          + ", ".join(f"{c} {n}" for c, n in zip(conds, res[("minflt", "", "")], strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
