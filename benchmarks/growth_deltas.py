#!/usr/bin/env python
"""Does `DeltaStream`'s per-piece cost grow with the length of the stream? Per length, for `DeltaStream` and the
`ResponseParser` it sits on, separately::

    taskset -c 1 python benchmarks/growth_deltas.py                       # json-members, 10k / 100k / 1M
    taskset -c 1 python benchmarks/growth_deltas.py --cases content,json-members --sizes 10000,100000
    taskset -c 1 python benchmarks/growth_deltas.py --kinds --sizes 100000   # per kind of piece, too

Printed per (case, length, parser or stream): CPU µs per piece (`time.process_time`, best of N) with the
garbage collector on and off, the collections each generation made during one run (`gc.get_stats`), and the
memory blocks the object holds per piece once every piece was fed (`sys.getallocatedblocks`, after a
collection: what is kept, not what is allocated and freed). A structure that grows per piece shows in the
last figure; the collector walking more live containers as they accumulate shows as a gap between "gc on"
and "gc off" that widens with the length.

``--kinds`` also times each piece of the stream on its own (`time.perf_counter_ns` around each call, the
median per kind, minus an empty call's), the kind being the Python functions the stream's ``feed`` ran for
it (`sys.setprofile`, in a separate run): where the stream's time per piece goes, next to the parser's median
for the same pieces. Same text and pieces as bench_deltas.py.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

# (measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd)
if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_deltas import SEED, make_case, pieces  # noqa: E402

from hf_response_templates import ResponseParser, get_template
from hf_response_templates.openai import DeltaStream


def _makers(case: str, n: int) -> tuple[list[str], dict[str, Callable[[], Any]]]:
    rng = random.Random(SEED)
    name, prefix, text = make_case(case, n, rng)
    template = get_template(name)
    return pieces(text, rng), {
        "parser": lambda: ResponseParser(template, prefix),
        "stream": lambda: DeltaStream(template, prefix=prefix, id_seed=0),
    }


def growth(case: str, n: int, repeat: int) -> None:
    """One line per (parser, stream): µs per piece with gc on / off, collections per generation, blocks kept."""
    chunks, makers = _makers(case, n)
    for label, make in makers.items():
        best = {True: float("inf"), False: float("inf")}
        collections_made: list[int] = []
        kept = 0
        for _ in range(repeat if n < 1_000_000 else max(2, repeat // 3)):
            for enabled in (True, False):
                gc.collect()
                before = [s["collections"] for s in gc.get_stats()]
                blocks = sys.getallocatedblocks()
                if not enabled:
                    gc.disable()
                t = time.process_time()
                obj = make()
                for c in chunks:
                    obj.feed(c)
                dt = time.process_time() - t
                gc.enable()
                if enabled:
                    collections_made = [
                        s["collections"] - b for s, b in zip(gc.get_stats(), before, strict=True)
                    ]
                gc.collect()
                kept = sys.getallocatedblocks() - blocks
                del obj
                best[enabled] = min(best[enabled], dt)
        print(
            f"{case:14} {n:>8} {label:6} | gc on {best[True] / len(chunks) * 1e6:5.2f} µs"
            f" | gc off {best[False] / len(chunks) * 1e6:5.2f} µs | collections {collections_made}"
            f" | kept {kept / len(chunks):.3f} blocks/piece",
            flush=True,
        )


def _kinds(make: Callable[[], Any], chunks: list[str]) -> list[str]:
    """The kind of each piece: the Python functions (in call order, each once) its ``feed`` ran."""
    obj = make()
    seen: list[str] = []

    def profile(frame, event, arg):  # noqa: ANN001, ANN202 - the sys.setprofile protocol
        if event == "call":
            name = frame.f_code.co_name
            if name not in seen:
                seen.append(name)

    out = []
    for c in chunks:
        seen.clear()
        sys.setprofile(profile)
        obj.feed(c)
        sys.setprofile(None)
        out.append("/".join(seen[:4]) + ("/..." if len(seen) > 4 else ""))
    return out


def kinds(case: str, n: int, repeat: int) -> None:
    """Per kind of piece: its share, the stream's median ns per piece of that kind, the parser's for the same
    pieces, and the kind's part of the stream's mean per piece (median times share)."""
    chunks, makers = _makers(case, n)
    labels = _kinds(makers["stream"], chunks)
    clock = time.perf_counter_ns

    def timed(make: Callable[[], Any]) -> list[int]:
        obj = make()
        out = [0] * len(chunks)
        for i, c in enumerate(chunks):
            t = clock()
            obj.feed(c)
            out[i] = clock() - t
        return out

    def nothing(_c: str) -> None:
        return None

    runs: dict[str, list[int]] = {}
    for _ in range(repeat):
        for label, make in (
            *makers.items(),
            ("empty", lambda: type("E", (), {"feed": staticmethod(nothing)})),
        ):
            gc.collect()
            res = timed(make)
            prev = runs.get(label)
            runs[label] = res if prev is None else [min(a, b) for a, b in zip(prev, res, strict=True)]
    empty = statistics.median(runs["empty"])
    by_kind: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for k, s, p in zip(labels, runs["stream"], runs["parser"], strict=True):
        by_kind[k].append((s - empty, p - empty))
    total = len(chunks)
    print(f"{case} {n}: per kind of piece (ns, median; the empty call's {empty:.0f} ns taken off)")
    rows = sorted(by_kind.items(), key=lambda kv: -statistics.median(x for x, _ in kv[1]) * len(kv[1]))
    for k, vs in rows[:15]:
        med = statistics.median(x for x, _ in vs)
        print(
            f"  {len(vs) / total:6.3f} of pieces | stream {med:7.0f} | parser {statistics.median(y for _, y in vs):5.0f}"
            f" | {med * len(vs) / total:5.0f} ns/piece | {k}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="json-members")
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kinds", action="store_true", help="also time each kind of piece")
    args = ap.parse_args(argv)
    for case in args.cases.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            growth(case, n, args.repeat)
            if args.kinds:
                kinds(case, n, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
