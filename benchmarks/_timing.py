"""How the benchmarks time a callable: one rule, the same for every side (ours, native, the floor, a decode).

``warm`` (the default), as ``timeit`` and ``pyperf`` do: one full collection and one untimed run of every
callable first, then ``repeats`` rounds in which each callable runs once, the order rotated by one every
round (A B C, B C A, C A B: each callable in each place equally often, none timed right after its own run; with
two, the order reversed every other round); the cyclic collector is off during each timed run (``timeit``'s default) and the young generations
are collected right after it (what the run left), so no run follows a full collection.

``cold`` (the rule of ``bench_all.py`` before 2026-12-02): a full ``gc.collect()`` right before every timed
run, the collector on during it, the same order every round. A full collection walks every tracked object of
the process, which evicts this core's L2 cache (and the L1s): the next run then pays a fixed cost to reload
its working set (measured by ``gc_effect.py``: ~100-400 µs on this machine, for either parser), which weighs
on a ~300 µs run far more than on a ~2,000 µs one, and compresses the ratios of short runs.

``warm-gc``: ``warm`` with the collector left on during the timed runs (its own young collections are then
part of each side's time, as in a long-running process).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

MODES = ("warm", "cold", "warm-gc")
MODE = "warm"  # set by the scripts' --timing / --cold

cpu = time.process_time_ns


def set_mode(mode: str) -> None:
    """Select the rule every later `best_alternating` call uses."""
    global MODE
    if mode not in MODES:
        raise ValueError(f"timing mode {mode!r}: one of {', '.join(MODES)}")
    MODE = mode


def timed(fn: Callable[[], Any]) -> int:
    """CPU ns of one run of `fn` under the current rule (nothing is run before or after it but the rule's)."""
    if MODE == "cold":
        gc.collect()
        t0 = cpu()
        fn()
        return cpu() - t0
    was_on = gc.isenabled()
    if MODE == "warm":
        gc.disable()
    try:
        t0 = cpu()
        fn()
        dt = cpu() - t0
    finally:
        if was_on:
            gc.enable()
    gc.collect(1)  # what the run left (cycles made while the collector was off); never the old generation
    return dt


def best_alternating(runs: list[tuple[str, Callable[[], Any]]], repeats: int, warmup: bool = True) -> dict[str, float]:
    """{name: best CPU seconds} of `repeats` runs of each callable, taken in turn under the current rule.

    `warmup=False` skips the untimed first run (for callables too long to run once more, e.g. a native
    stream of a million characters; the best of several runs then still leaves out a cold first one)."""
    best = {name: float("inf") for name, _ in runs}
    if MODE != "cold":
        gc.collect()
        if warmup:
            for _, fn in runs:
                fn()
            gc.collect(1)
    for r in range(repeats):
        # rotated by one each round: reversing every other round, the rule before 2026-12-03, timed the first and
        # the last callable twice in a row, on caches they had just warmed, and never the middle ones (native,
        # the decode) so; with two callables both orders are the same
        k = 0 if MODE == "cold" else r % len(runs)
        for name, fn in runs[k:] + runs[:k]:
            best[name] = min(best[name], timed(fn) / 1e9)
    return best
