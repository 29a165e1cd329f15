#!/usr/bin/env python
"""Every shipped template against Transformers' native parser, on every path users take.

Run it from a checkout with the test extras and Transformers >= 5 installed::

    python benchmarks/bench_all.py                      # full run (~15 min on 2 cores)
    python benchmarks/bench_all.py --quick              # 1k / 10k streams, fewer responses (~3 min)
    python benchmarks/bench_all.py --only oneshot,tokenizer --templates qwen3,gpt-oss --json out.json

Inputs (``benchmarks/_corpus.py``): for each of the templates in ``templates/*.json``, what the family's
model writes -- its chat template's rendering of assistant turns (reasoning, answer, one or parallel tool
calls, as far as that chat template renders them) and the hand-written raw model outputs of the tests,
their texts resized. Streams are cut at the token boundaries of a byte-level BPE trained at start on
that text (offline, with ``tokenizers``), the families' delimiters as special tokens.

Sections (``--only``, comma-separated):

* ``stream``: ``ResponseParser(template, prefix).feed(chunk)`` per token, then ``finalize()``, at about
  1k / 10k / 100k / 1M characters: CPU µs per chunk. Native runs that would exceed ``--native-budget``
  seconds are sampled (``~``: windows of token chunks spread over the stream, see bench_parsing.py).
* ``oneshot``: ``parse_response`` over responses of 200-2,000 characters with the template dict reused,
  a fresh dict per call, and each side's precompiled template (native's best case); ``tools=`` off and on
  (reused dict). With ``floor``: the CPython floor of ``floor.py`` (the least work giving the same message;
  every template has one). ``floor`` without ``oneshot``: the reused-dict rows only, ours / native / floor.
* ``tokenizer``: ``tokenizer.parse_response(ids, prefix=ids)`` with a ~40-token and a ~2,300-token prompt
  and a ~300-token response, this package's method against Transformers' own (same tokenizer); ``decode``
  is what decoding prompt + response once in the ``tokenizers`` backend costs, ``parse`` parsing the text,
  ``both`` the two in one call (the floor of this path: what a caller decoding the ids itself does).

All figures are CPU time (``time.process_time``), best of ``--repeats`` (5), ours and native run
alternately so that a slow spell on a shared machine weighs on both, under one rule for every side
(``_timing.py``; ``--timing``): by default, as ``timeit`` and ``pyperf`` do, one untimed run of each first,
the cyclic collector off during each timed run and no full collection right before one, the order of the
sides rotated by one every round. ``--cold`` is the rule of earlier runs: a full ``gc.collect()`` right
before every timed run (which evicts the CPU caches and costs the next run a fixed ~100-400 µs, see
``gc_effect.py``). ``same`` says whether the two parsers
give the same messages on those inputs (a differing row compares different work; see the README's
deliberate differences). No result is asserted: this measures, it does not test.
"""

from __future__ import annotations

# ruff: noqa: B023  (the timed closures are run in the loop iteration that makes them)
import os

os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"  # keep Transformers' own parse_response reachable

import argparse
import copy
import datetime
import functools
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _corpus  # noqa: E402
import _timing  # noqa: E402
from bench_parsing import native_sampled  # noqa: E402

from hf_response_templates import ResponseParser, load_template, parse_response  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402

try:
    import transformers
    from transformers.utils.chat_parsing import ResponseParser as NativeParser
    from transformers.utils.chat_parsing import parse_response as native_parse
    from transformers.utils.chat_parsing.response_templates import load_response_template as native_load

    NATIVE_VERSION: str | None = transformers.__version__
except ImportError:  # Transformers 4.x: our figures only
    NativeParser = native_parse = native_load = None  # type: ignore[assignment]
    NATIVE_VERSION = None

cpu = time.process_time_ns

try:
    import floor as _floor
except ImportError:  # pragma: no cover - floor.py not there
    _floor = None


# --------------------------------------------------------------------------- helpers


def _best_alternating(runs: list[tuple[str, Any]], repeats: int, warmup: bool = True) -> dict[str, float]:
    """{name: best CPU seconds} of `repeats` runs of each callable in turn, under ``_timing``'s rule."""
    return _timing.best_alternating(runs, repeats, warmup=warmup)


def _ratio(native: float | None, ours: float) -> str:
    return f"{native / ours:6.1f}x" if native else "     -"


def _fmt(v: float | None, width: int = 9, digits: int = 2) -> str:
    return f"{v:{width}.{digits}f}" if v is not None else " " * (width - 1) + "-"


def _native_ok(fn, *args, **kwargs) -> tuple[Any, str | None]:
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - a template native cannot run is reported, not fatal
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:60] if str(exc) else ''}"


def _strip_ids(message: Any) -> Any:
    """Tool-call ids are generated (random) by both parsers where the output has none: not compared."""
    if isinstance(message, dict) and message.get("tool_calls"):
        message = dict(message)
        message["tool_calls"] = [
            {k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c for c in message["tool_calls"]
        ]
    return message


# --------------------------------------------------------------------------- streaming


def _stream(make, chunks: list[str]) -> None:
    p = make()
    feed = p.feed
    for c in chunks:
        feed(c)
    p.finalize()


def bench_stream(names, sizes, tok, repeats, budget, log) -> list[dict]:
    rows = []
    log(f"\n## Streaming (CPU µs per token chunk, best of {repeats}; ~ = native sampled)")
    log(f"{'template':20s} {'chars':>9s} {'chunks':>7s} | {'ours':>7s} {'native':>9s}  {'ratio':>6s} | same")
    for name in names:
        tpl = get_template(name)
        compiled = load_template(tpl)
        native_tpl, err = _native_ok(native_load, tpl) if native_load else (None, "no native")
        for size in sizes:
            case = _corpus.stream_case(name, size)
            chunks = _corpus.token_chunks(tok, case.text)
            ours = functools.partial(ResponseParser, compiled, case.prefix)
            row: dict[str, Any] = {"template": name, "chars": len(case.text), "chunks": len(chunks)}
            runs = [("ours", lambda: _stream(ours, chunks))]
            nat = None
            same = "-"
            if native_tpl is not None:
                nat = functools.partial(NativeParser, native_tpl, case.prefix)
                p, err = _native_ok(nat)
                if p is not None:
                    try:  # native may raise mid-stream (a region it cannot parse, e.g. text after a JSON value)
                        for c in chunks[: min(len(chunks), 20000)]:
                            p.feed(c)
                    except Exception as e:  # noqa: BLE001 - reported in the row, native is not timed
                        p, err = None, f"{type(e).__name__}: {str(e).splitlines()[0]}"
                    if p is not None and len(chunks) <= 20000:
                        got, err = _native_ok(p.finalize)
                        mine = parse_response(case.text, tpl, prefix=case.prefix)  # untyped, as streamed here
                        same = "yes" if err is None and _strip_ids(got[0]) == _strip_ids(mine) else "NO"
            # native's cost per chunk grows with the stream: estimate it first, run it fully if affordable
            sampled = False
            if nat is not None and err is None:
                try:  # (past the 20,000 chunks checked above, native may still raise)
                    est, _ = native_sampled(nat, case.text, chunks, windows=8,
                                            per_window=min(1500, max(1, len(chunks) // 8)))
                except Exception as e:  # noqa: BLE001 - reported in the row, native is not timed
                    nat, err = None, f"{type(e).__name__}: {str(e).splitlines()[0]}"
            if nat is not None and err is None:
                if est * len(chunks) * (repeats + (_timing.MODE != "cold")) <= budget:  # timed runs and a warm-up
                    runs.append(("native", lambda: _stream(nat, chunks)))
                else:
                    sampled = True
            best = _best_alternating(runs, repeats)
            row["ours_us"] = best["ours"] / len(chunks) * 1e6
            if "native" in best:
                row["native_us"] = best["native"] / len(chunks) * 1e6
            elif sampled:  # best of the estimate and one more sampled run (a sampled run of 1M chars takes long)
                row["native_us"] = min(est, native_sampled(nat, case.text, chunks)[0]) * 1e6
                row["native_sampled"] = True
            if err:
                row["native_error"] = err
            row["same"] = same
            log(
                f"{name:20s} {row['chars']:>9,} {row['chunks']:>7,} | {row['ours_us']:7.2f} "
                f"{'~' if sampled else ' '}{_fmt(row.get('native_us'), 8)}  {_ratio(row.get('native_us'), row['ours_us'])} | "
                f"{same}{'  ' + err if err else ''}"
            )
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- one-shot


def _oneshot(parse, cases, tpls, with_tools: bool) -> None:
    for case, tpl in zip(cases, tpls, strict=True):
        parse(case.text, tpl, prefix=case.prefix, tools=case.tools if with_tools else None)


def bench_oneshot(names, count, repeats, log, with_floor: bool, only_reused: bool = False) -> list[dict]:
    """One-shot rows per template; `only_reused`: the template-dict-reused variant only (``--only floor``)."""
    rows = []
    log(
        f"\n## One-shot parse_response, {count} responses of 200-2,000 characters per template "
        f"(CPU µs per response, best of {repeats})"
    )
    log(
        f"{'template':20s} {'template passed':17s} | {'ours':>7s} {'native':>8s}  {'ratio':>6s}"
        + (f" | {'floor':>7s} {'ours/floor':>10s}" if with_floor else "")
        + " | same"
    )
    for name in names:
        cases = _corpus.short_cases(name, count)
        tpl = get_template(name)
        compiled = load_template(tpl)
        native_compiled, err = _native_ok(native_load, tpl) if native_load else (None, "no native")
        # what each parser gives (tools on, as the cases' messages were made); responses native cannot
        # parse are left out of both sides' timing (and counted)
        same, note = "-", None
        if native_parse is not None and err is None:
            kept, agree, first_err = [], 0, None
            for c in cases:
                m, e = _native_ok(native_parse, c.text, tpl, prefix=c.prefix, tools=c.tools)
                if e:
                    first_err = first_err or e
                    continue
                kept.append(c)
                agree += _strip_ids(m) == _strip_ids(c.message)
            if not kept:
                err = first_err
            else:
                if len(kept) < len(cases):
                    note = f"native fails on {len(cases) - len(kept)} of {len(cases)} (left out): {first_err}"
                cases = kept
                same = "yes" if agree == len(kept) else f"NO ({len(kept) - agree} of {len(kept)} differ)"
        n = len(cases)
        fresh = [] if only_reused else [copy.deepcopy(tpl) for _ in range(n * (repeats + 1))]  # and the warm-up
        floor_fn = _floor.floor_for(name) if (with_floor and _floor is not None) else None
        if floor_fn is not None:
            for c in cases:
                fm = floor_fn(c.text, c.prefix)
                assert _strip_ids(fm) == _strip_ids(_floor.untyped(c)), (name, c.text[:80], fm)
        fresh_iter = iter(fresh)
        variants = [
            ("reused dict", [tpl] * n, [tpl] * n, False),
            ("fresh dict", None, None, False),
            ("precompiled", [compiled] * n, [native_compiled] * n, False),
            ("reused, tools=", [tpl] * n, [tpl] * n, True),
        ]
        if only_reused:
            variants = variants[:1]
        for label, ours_tpls, nat_tpls, with_tools in variants:
            if label == "fresh dict":  # a new copy for every call of every repeat, built before timing
                def ours_run():
                    _oneshot(parse_response, cases, [next(fresh_iter) for _ in range(n)], False)

                nat_fresh = [copy.deepcopy(tpl) for _ in range(n * (repeats + 1))]  # and the warm-up
                nat_iter = iter(nat_fresh)

                def nat_run():
                    _oneshot(native_parse, cases, [next(nat_iter) for _ in range(n)], False)
            else:
                ours_run = functools.partial(_oneshot, parse_response, cases, ours_tpls, with_tools)
                nat_run = functools.partial(_oneshot, native_parse, cases, nat_tpls, with_tools)
            runs = [("ours", ours_run)]
            if native_parse is not None and err is None:
                runs.append(("native", nat_run))
            if floor_fn is not None and label == "reused dict":
                runs.append(("floor", lambda: [floor_fn(c.text, c.prefix) for c in cases]))
            best = _best_alternating(runs, repeats)
            row: dict[str, Any] = {"template": name, "variant": label, "responses": n, "same": same}
            row["ours_us"] = best["ours"] / n * 1e6
            if "native" in best:
                row["native_us"] = best["native"] / n * 1e6
            if "floor" in best:
                row["floor_us"] = best["floor"] / n * 1e6
            if err or note:
                row["native_error"] = err or note
            floor_txt = ""
            if with_floor:
                fl = row.get("floor_us")
                floor_txt = f" | {_fmt(fl, 7)} {(row['ours_us'] / fl) if fl else 0:9.2f}x" if fl else " |       -          -"
            log(
                f"{name:20s} {label:17s} | {row['ours_us']:7.1f} {_fmt(row.get('native_us'), 8, 1)}  "
                f"{_ratio(row.get('native_us'), row['ours_us'])}{floor_txt} | {same}{'  ' + row['native_error'] if err or note else ''}"
            )
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- tokenizer path


def _fast_tokenizer(tok):
    from transformers import PreTrainedTokenizerFast

    t = PreTrainedTokenizerFast(tokenizer_object=copy.deepcopy(tok))
    return t


def bench_tokenizer(names, tok, repeats, log) -> list[dict]:
    """`tokenizer.parse_response(ids, prefix=ids)`: ours (the patched method) and Transformers' own."""
    import transformers

    from hf_response_templates import tokenizer as hf_tok

    base = transformers.PreTrainedTokenizerBase
    native_method = getattr(base, "parse_response", None) if NATIVE_VERSION else None
    hf_tok.install()
    ours_method = base.parse_response
    fast = _fast_tokenizer(tok)
    rows = []
    log(f"\n## Tokenizer path: tokenizer.parse_response(ids, prefix=ids) (CPU µs per call, best of {repeats})")
    log(
        f"{'template':20s} {'prompt':>7s} {'response':>8s} | {'ours':>7s} {'native':>8s}  {'ratio':>6s} | "
        f"{'decode':>7s} {'parse':>6s} {'both':>7s} {'ours-both':>9s} | same"
    )
    long_system = _corpus.filler(12000, random.Random(5))
    for name in names:
        tpl = get_template(name)
        fast.response_template = tpl
        case = _corpus.stream_case(name, 1000)
        ids = fast.encode(case.text, add_special_tokens=False)
        # the last 40 / 2,300 tokens of the prompt: what the model was given ends with the generation prompt
        for prompt_text, keep in ((case.prefix, 40), (long_system + case.prefix, 2300)):
            pids = fast.encode(prompt_text, add_special_tokens=False)[-keep:]
            ours_msg = ours_method(fast, ids, prefix=pids)
            full = fast.decode(pids + ids)
            cut = len(fast.decode(pids))
            if full[:cut] != fast.decode(pids):
                raise AssertionError(f"{name}: the prompt's decode is not a prefix of the joint decode")
            # our tokenizer path gives what parsing the decoded text gives
            expected = parse_response(full[cut:], tpl, prefix=full[:cut])
            if _strip_ids(ours_msg) != _strip_ids(expected):
                raise AssertionError(f"{name}: tokenizer.parse_response differs from parse_response on the decoded text")
            row: dict[str, Any] = {"template": name, "prompt_tokens": len(pids), "response_tokens": len(ids)}
            runs = [("ours", lambda: ours_method(fast, ids, prefix=pids))]
            same = "-"
            if native_method is not None:
                nat_msg, err = _native_ok(native_method, fast, ids, tpl, prefix=pids)
                if err is None:
                    same = "yes" if _strip_ids(nat_msg) == _strip_ids(ours_msg) else "NO"
                    runs.append(("native", lambda: native_method(fast, ids, tpl, prefix=pids)))
                else:
                    row["native_error"] = err
            # the floor of any token-id path: the tokenizers backend decoding prompt + response once
            backend = fast.backend_tokenizer
            runs.append(("decode", lambda: backend.decode(pids + ids, skip_special_tokens=False)))
            # and parsing the decoded texts: ours - decode - parse is what the token-id path adds
            prefix_text, text = full[:cut], full[cut:]
            runs.append(("parse", lambda: parse_response(text, tpl, prefix=prefix_text)))
            # both in one call, as a caller decoding the ids itself would: the floor of this path (run
            # apart, each keeps the CPU caches to itself and their sum is lower than the two together)
            def floor_run():
                joint = backend.decode(pids + ids, skip_special_tokens=False)
                parse_response(joint[cut:], tpl, prefix=joint[:cut])

            runs.append(("floor", floor_run))
            best = _best_alternating([(k, _repeat(fn, 20)) for k, fn in runs], repeats)
            row.update({f"{k}_us": v / 20 * 1e6 for k, v in best.items()})
            row["same"] = same
            log(
                f"{name:20s} {len(pids):>7,} {len(ids):>8,} | {row['ours_us']:7.1f} {_fmt(row.get('native_us'), 8, 1)}  "
                f"{_ratio(row.get('native_us'), row['ours_us'])} | {row['decode_us']:7.1f} {row['parse_us']:6.1f} "
                f"{row['floor_us']:7.1f} {row['ours_us'] - row['floor_us']:+9.1f} | {same}"
            )
            rows.append(row)
    return rows


def _repeat(fn, k: int):
    def run():
        for _ in range(k):
            fn()

    return run


# --------------------------------------------------------------------------- summary


def _farthest(rows: list[dict]) -> str:
    return ", ".join(f"{r['template']} {r['ours_us'] / r['floor_us']:.1f}x" for r in rows)


def summarize(out: dict[str, Any], log, weakest: int = 6) -> None:
    """Per path: the spread of native / ours over the templates and the weakest rows."""
    log("\n## Summary (ratio = native / ours; weakest rows first)")

    def line(label: str, rows: list[dict], name) -> None:
        rated = sorted((r for r in rows if r.get("native_us")), key=lambda r: r["native_us"] / r["ours_us"])
        if not rated:
            return
        ratios = [r["native_us"] / r["ours_us"] for r in rated]
        median = ratios[len(ratios) // 2]
        weak = ", ".join(f"{name(r)} {r['native_us'] / r['ours_us']:.1f}x" for r in rated[:weakest])
        log(f"{label:34s} {len(rated):3d} rows: min {ratios[0]:.1f}x, median {median:.1f}x, max {ratios[-1]:.1f}x; weakest: {weak}")

    for size_label, lo, hi in (("1k", 0, 5_000), ("10k", 5_000, 50_000), ("100k", 50_000, 500_000), ("1M", 500_000, 10**9)):
        rows = [r for r in out.get("stream", []) if lo <= r["chars"] < hi]
        line(f"streaming {size_label} chars, token chunks", rows, lambda r: r["template"])
    for variant in ("reused dict", "fresh dict", "precompiled", "reused, tools="):
        rows = [r for r in out.get("oneshot", []) if r["variant"] == variant]
        line(f"one-shot, {variant}", rows, lambda r: r["template"])
    floors = [r for r in out.get("oneshot", []) if r.get("floor_us")]
    if floors:
        floors.sort(key=lambda r: r["ours_us"] / r["floor_us"], reverse=True)
        spread = [r["ours_us"] / r["floor_us"] for r in floors]
        log(
            f"{'one-shot vs the CPython floor':34s} {len(floors):3d} rows: ours/floor {min(spread):.2f}x-{max(spread):.2f}x; "
            f"farthest: {_farthest(floors[:weakest])}"
        )
    for label, lo, hi in (("tokenizer path, short prompt", 0, 200), ("tokenizer path, long prompt", 200, 10**9)):
        rows = [r for r in out.get("tokenizer", []) if lo <= r["prompt_tokens"] < hi]
        line(label, rows, lambda r: r["template"])
        if rows:
            extra = sorted(r["ours_us"] - r["decode_us"] - r["parse_us"] for r in rows)
            log(
                f"{'':34s} ours minus (one backend decode of prompt + response, parse_response of the text, timed "
                f"apart): median {extra[len(extra) // 2]:.0f} µs, max {extra[-1]:.0f} µs"
            )
            both = sorted(r["ours_us"] - r["floor_us"] for r in rows if "floor_us" in r)
            if both:
                log(f"{'':34s} ours minus the two in one call ('both'): median {both[len(both) // 2]:.0f} µs, "
                    f"max {both[-1]:.0f} µs")


def _latest(rows: list[dict]) -> dict[str, dict]:
    """{template: its last row} (of merged runs, the later file wins)."""
    return {r["template"]: r for r in rows}


def _goal(label: str, rows: dict[str, dict], ok, value, fmt: str, log, high_is_weak: bool = False) -> None:
    """One goal line: how many templates meet it, and the ones that do not (weakest first)."""
    if not rows:
        log(f"{label:58s}  no rows")
        return
    missed = sorted((r for r in rows.values() if not ok(r)), key=value, reverse=high_is_weak)
    below = ", ".join(f"{r['template']} {fmt.format(value(r))}" for r in missed)
    log(f"{label:58s} {len(rows) - len(missed):3d} of {len(rows):3d}" + (f"; not met: {below}" if below else ""))


def goals(out: dict[str, Any], log) -> None:
    """Per goal of issue 19 (ISSUES.md's table and its 'done when'): how many templates meet it.

    A template counts where both parsers ran (rows where native raises or refuses are left out, as in
    the spread); with several saved runs merged, a template's last row counts."""
    log("\n## Goals of issue 19: templates meeting each (native / ours; rows native cannot run left out)")

    def ratio(r: dict) -> float:
        return r["native_us"] / r["ours_us"]

    stream = [r for r in out.get("stream", []) if r.get("native_us")]
    one_k = _latest([r for r in stream if r["chars"] < 5_000])
    hundred_k = _latest([r for r in stream if 50_000 <= r["chars"] < 500_000])
    _goal("streaming ~1k chars >= 5x native", one_k, lambda r: ratio(r) >= 5, ratio, "{:.1f}x", log)
    _goal("streaming ~100k chars >= 10x native", hundred_k, lambda r: ratio(r) >= 10, ratio, "{:.1f}x", log)
    for name in ("llama3", "gemma4"):
        cells = [f"{size} {ratio(rows[name]):.1f}x (goal {goal}x: {'met' if ratio(rows[name]) >= goal else 'not met'})"
                 for size, rows, goal in (("1k", one_k, 5), ("100k", hundred_k, 10)) if name in rows]
        if cells:
            label = f"  {name} streaming (>= 5x at 1k, >= 10x at 100k)"
            log(f"{label:58s} " + "; ".join(cells))
    oneshot = out.get("oneshot", [])
    reused = _latest([r for r in oneshot if r["variant"] == "reused dict" and r.get("native_us")])
    pre = _latest([r for r in oneshot if r["variant"] == "precompiled" and r.get("native_us")])
    _goal("one-shot, template dict reused >= 5x native", reused, lambda r: ratio(r) >= 5, ratio, "{:.1f}x", log)
    _goal("one-shot vs native precompiled >= 3x", pre, lambda r: ratio(r) >= 3, ratio, "{:.1f}x", log)
    floors = _latest([r for r in oneshot if r.get("floor_us")])

    _goal("one-shot (dict reused) within 1.5x of the CPython floor", floors,
          lambda r: r["ours_us"] <= 1.5 * r["floor_us"], lambda r: r["ours_us"] / r["floor_us"], "{:.2f}x", log, True)
    tok = [r for r in out.get("tokenizer", []) if r.get("native_us")]
    short = _latest([r for r in tok if r["prompt_tokens"] < 200])
    long = _latest([r for r in tok if r["prompt_tokens"] >= 200])
    _goal("tokenizer path faster than native, short prompt", short, lambda r: ratio(r) > 1, ratio, "{:.1f}x", log)
    _goal("tokenizer path faster than native, long prompt", long, lambda r: ratio(r) > 1, ratio, "{:.1f}x", log)
    both = {n: r for n, r in short.items() if n in long}
    for n in both:
        both[n] = min(short[n], long[n], key=ratio)
    _goal("tokenizer path faster than native, both prompts", both, lambda r: ratio(r) > 1, ratio, "{:.1f}x", log)
    rows = [r for r in out.get("tokenizer", []) if "decode_us" in r]
    for label, sel in (("short", lambda r: r["prompt_tokens"] < 200), ("long", lambda r: r["prompt_tokens"] >= 200)):

        def extra(r: dict) -> float:  # over the decode and the parse in one call (older runs: timed apart)
            return r["ours_us"] - r.get("floor_us", r["decode_us"] + r["parse_us"])

        _goal(f"tokenizer path <= decode + parse_response + 15 µs, {label}", _latest([r for r in rows if sel(r)]),
              lambda r: extra(r) <= 15, extra, "+{:.0f} µs", log, True)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1k / 10k streams, 40 responses per template")
    ap.add_argument("--only", default="stream,oneshot,tokenizer,floor", help="sections: stream,oneshot,tokenizer,floor")
    ap.add_argument("--templates", default="", help="comma-separated template names (default: all shipped)")
    ap.add_argument("--sizes", default="", help="stream sizes in characters, e.g. 1000,100000")
    ap.add_argument("--responses", type=int, default=0, help="one-shot responses per template (default 200; quick 40)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--native-budget", type=float, default=4.0, help="seconds a full native stream run may take")
    ap.add_argument("--timing", choices=_timing.MODES, default="warm",
                    help="how each run is timed (_timing.py): warm (default), cold (a full gc.collect() before "
                    "every timed run: the rule before 2026-12-02), warm-gc (warm, the collector on during runs)")
    ap.add_argument("--cold", action="store_true", help="the same as --timing cold")
    ap.add_argument("--json", metavar="PATH", help="write all rows as JSON")
    ap.add_argument("--summary", nargs="+", metavar="JSON", help="only print the summary of saved --json runs")
    args = ap.parse_args(argv)
    if args.summary:
        merged: dict[str, Any] = {}
        for path in args.summary:
            for key, value in json.loads(Path(path).read_text(encoding="utf-8")).items():
                if isinstance(value, list):
                    merged.setdefault(key, []).extend(value)
                elif key == "timing":
                    merged.setdefault("timings", []).append(f"{Path(path).name}: {value}")
        print(f"timing rule of the runs: {', '.join(merged.get('timings', [])) or 'cold (runs before --timing)'}")
        summarize(merged, print)
        goals(merged, print)
        return 0
    _timing.set_mode("cold" if args.cold else args.timing)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    names = _corpus.template_names([t.strip() for t in args.templates.split(",") if t.strip()] or None)
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000])
    count = args.responses or (40 if args.quick else 200)
    log = functools.partial(print, flush=True)
    log(f"# hf-response-templates: every shipped template ({datetime.date.today()})")
    log(f"machine: {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}; Python {platform.python_version()}")
    log(f"native parser: {'transformers ' + NATIVE_VERSION if NATIVE_VERSION else 'not installed (ours only)'}")
    log(f"templates: {len(names)}; timing: {_timing.MODE} (_timing.py)")
    t0 = time.time()
    corpus_texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    tok = _corpus.train_tokenizer(corpus_texts)
    log(f"tokenizer: byte-level BPE, {tok.get_vocab_size()} tokens, trained on {sum(map(len, corpus_texts)):,} chars in {time.time() - t0:.1f} s")
    out: dict[str, Any] = {"date": str(datetime.date.today()), "native": NATIVE_VERSION, "python": platform.python_version(),
                           "timing": _timing.MODE}
    if "stream" in only:
        out["stream"] = bench_stream(names, sizes, tok, args.repeats, args.native_budget, log)
    if "oneshot" in only:
        out["oneshot"] = bench_oneshot(names, count, args.repeats, log, "floor" in only)
    elif "floor" in only:  # the floor column alone: one-shot with the template dict reused
        out["oneshot"] = bench_oneshot(names, count, args.repeats, log, True, only_reused=True)
    if "tokenizer" in only:
        out["tokenizer"] = bench_tokenizer(names, tok, args.repeats, log)
    summarize(out, log)
    goals(out, log)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    log(f"\ntotal {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
