"""The benchmarks' timing rule (`benchmarks/_timing.py`) and bench_all's per-goal summary.

What is checked is the rule itself (what runs before and around each timed run, in which order), never a
speed: the collector's callbacks record every collection, the timed callables record whether the collector
was on and in which order they ran.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import _timing  # noqa: E402


@pytest.fixture
def events():
    """A log of ('collect', generation) and ('run', name, collector on?) in the order they happened."""
    log: list[tuple] = []

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            log.append(("collect", info["generation"]))

    gc.callbacks.append(on_gc)
    mode = _timing.MODE
    try:
        yield log
    finally:
        gc.callbacks.remove(on_gc)
        _timing.set_mode(mode)
        gc.enable()


def _runs(log: list[tuple], names=("ours", "native")):
    def make(name):
        def run():
            log.append(("run", name, gc.isenabled()))
            [{"k": [i]} for i in range(50)]  # a little garbage

        return name, run

    return [make(n) for n in names]


def _timed_runs(log: list[tuple]) -> list[tuple]:
    return [e for e in log if e[0] == "run"]


def test_warm_rule_collector_off_no_full_collection_before_a_run_order_alternates(events):
    _timing.set_mode("warm")
    best = _timing.best_alternating(_runs(events), repeats=4)
    assert set(best) == {"ours", "native"} and all(v >= 0 for v in best.values())
    runs = _timed_runs(events)
    # one untimed warm-up of each, collector on (it is not timed), then 4 rounds, the order reversed every other
    assert [r[1] for r in runs] == ["ours", "native"] + ["ours", "native", "native", "ours"] * 2
    assert all(not on for _, _, on in runs[2:]), "the collector must be off during the timed runs"
    # no full collection between the warm-up and any timed run; young ones (gen <= 1) only
    first_timed = events.index(runs[2])
    assert all(e[1] <= 1 for e in events[first_timed:] if e[0] == "collect")
    # and one full collection before the warm-up (a clean heap for both sides alike)
    assert ("collect", 2) in events[: events.index(runs[0])]
    assert gc.isenabled()


def test_warm_rule_without_warmup(events):
    _timing.set_mode("warm")
    _timing.best_alternating(_runs(events), repeats=2, warmup=False)
    assert [r[1] for r in _timed_runs(events)] == ["ours", "native", "native", "ours"]


def test_warm_gc_rule_leaves_the_collector_on(events):
    _timing.set_mode("warm-gc")
    _timing.best_alternating(_runs(events), repeats=2)
    assert all(on for _, _, on in _timed_runs(events))


def test_cold_rule_is_the_old_one_a_full_collection_right_before_every_timed_run(events):
    _timing.set_mode("cold")
    _timing.best_alternating(_runs(events), repeats=3)
    runs = _timed_runs(events)
    assert [r[1] for r in runs] == ["ours", "native"] * 3  # same order every round, no warm-up
    for r in runs:
        i = events.index(r)
        assert events[i - 1] == ("collect", 2), "a full collection right before each timed run"
        assert r[2], "the collector on during the run"


def test_timed_restores_a_disabled_collector(events):
    _timing.set_mode("warm")
    gc.disable()
    try:
        _timing.timed(lambda: None)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="timing mode"):
        _timing.set_mode("hot")


def test_goals_counts_templates_meeting_each_goal_of_issue_19():
    # bench_all sets HF_RESPONSE_TEMPLATES_NO_PATCH for its own process when imported; the test must not leave it
    # set, or the processes other tests spawn later inherit it and run Transformers unpatched
    before = os.environ.get("HF_RESPONSE_TEMPLATES_NO_PATCH")
    try:
        bench_all = pytest.importorskip("bench_all")
    finally:
        if before is None:
            os.environ.pop("HF_RESPONSE_TEMPLATES_NO_PATCH", None)
        else:
            os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = before
    out = {
        "stream": [
            {"template": "a", "chars": 1000, "ours_us": 1.0, "native_us": 6.0},
            {"template": "b", "chars": 1000, "ours_us": 1.0, "native_us": 2.0},
            {"template": "c", "chars": 1000, "ours_us": 1.0},  # native could not run: not counted
            {"template": "a", "chars": 100000, "ours_us": 1.0, "native_us": 12.0},
            {"template": "llama3", "chars": 1000, "ours_us": 1.0, "native_us": 4.0},
        ],
        "oneshot": [
            {"template": "a", "variant": "reused dict", "ours_us": 10.0, "native_us": 60.0, "floor_us": 8.0},
            {"template": "b", "variant": "reused dict", "ours_us": 10.0, "native_us": 40.0, "floor_us": 5.0},
            {"template": "a", "variant": "precompiled", "ours_us": 10.0, "native_us": 20.0},
        ],
        "tokenizer": [
            {"template": "a", "prompt_tokens": 40, "ours_us": 50.0, "native_us": 80.0, "decode_us": 20.0,
             "parse_us": 20.0},
            {"template": "a", "prompt_tokens": 2300, "ours_us": 60.0, "native_us": 50.0, "decode_us": 30.0,
             "parse_us": 20.0, "floor_us": 40.0},  # the decode and the parse in one call: what counts
        ],
    }
    lines: list[str] = []
    bench_all.goals(out, lines.append)
    text = "\n".join(lines)

    def line(start: str) -> str:
        return next(s for s in lines if s.startswith(start))

    assert line("streaming ~1k chars >= 5x native").endswith("1 of   3; not met: b 2.0x, llama3 4.0x")  # weakest first
    assert line("streaming ~100k chars >= 10x native").endswith("1 of   1")
    assert "llama3 streaming" in text and "1k 4.0x (goal 5x: not met)" in text
    assert line("one-shot, template dict reused >= 5x native").endswith("1 of   2; not met: b 4.0x")
    assert line("one-shot vs native precompiled >= 3x").endswith("0 of   1; not met: a 2.0x")
    assert line("one-shot (dict reused) within 1.5x").endswith("1 of   2; not met: b 2.00x")
    assert line("tokenizer path faster than native, short prompt").endswith("1 of   1")
    assert line("tokenizer path faster than native, long prompt").endswith("0 of   1; not met: a 0.8x")
    assert line("tokenizer path faster than native, both prompts").endswith("0 of   1; not met: a 0.8x")
    assert line("tokenizer path <= decode + parse_response + 15 µs, short").endswith("1 of   1")
    assert line("tokenizer path <= decode + parse_response + 15 µs, long").endswith("0 of   1; not met: a +20 µs")


def test_ab_tokenizer_order_rotates_every_place_equally_never_twice_in_a_row():
    """`ab_tokenizer._alternating` (base / ours / floor): each callable in each place equally often, and no
    callable timed right after its own run (the warm-up's last run included), which reversing the order every
    other round did for the first and the last (their best then came from caches they had just warmed)."""
    import ab_tokenizer

    order: list[str] = []

    def make(name):
        return lambda: order.append(name)

    names = ("base", "ours", "floor")
    rounds, calls = 6, 2
    best = ab_tokenizer._alternating({n: make(n) for n in names}, rounds, calls)
    assert set(best) == set(names) and all(v >= 0 for v in best.values())
    runs = order[len(names) :: calls]  # the warm-up's one call each, then `calls` calls per timed run
    assert order[: len(names)] == list(names) and len(runs) == rounds * len(names)
    start = len(names)
    assert all(order[start + i * calls : start + (i + 1) * calls] == [r] * calls for i, r in enumerate(runs))
    places = {n: [0] * len(names) for n in names}
    for i, name in enumerate(runs):
        places[name][i % len(names)] += 1
    assert all(counts == [rounds // len(names)] * len(names) for counts in places.values()), places
    timed_after = [order[len(names) - 1], *runs]  # the warm-up's last, then every timed run
    assert all(a != b for a, b in zip(timed_after, timed_after[1:], strict=False)), timed_after


def test_warm_rule_rotates_three_sides_every_place_equally_never_twice_in_a_row(events):
    """With three or more sides (ours, native, a decode), `best_alternating` rotates the order by one every round:
    each side in each place equally often, none timed right after its own run (the warm-up's last included).
    Reversing the order every other round timed the first and the last twice in a row and never the middle one."""
    _timing.set_mode("warm")
    names = ("ours", "native", "decode")
    _timing.best_alternating(_runs(events, names), repeats=6)
    runs = [r[1] for r in _timed_runs(events)]
    assert runs[:3] == list(names)  # the warm-up, in the given order
    timed = runs[3:]
    assert len(timed) == 18
    places = {n: [0, 0, 0] for n in names}
    for i, name in enumerate(timed):
        places[name][i % 3] += 1
    assert all(counts == [2, 2, 2] for counts in places.values()), places
    assert all(a != b for a, b in zip(runs[2:], runs[3:], strict=False)), runs
