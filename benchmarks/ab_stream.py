#!/usr/bin/env python
"""Streaming, this checkout against another one, alternating in one process (and native beside them).

On a loaded machine, figures from two separate runs move by 30-50%; running both codes in turn, in one
process, over the same token chunks, keeps a slow spell from weighing on one side only::

    python benchmarks/ab_stream.py --base /path/to/other/checkout --templates gpt-oss,kimi-k3 --sizes 1000

The other checkout's package is copied to a temporary directory under another name (`hfrt_base`, its
imports rewritten), so both import side by side. Chunks are the token chunks of `bench_all.py` (the same
corpus and BPE). CPU µs per chunk (`time.process_time`), best of `--repeats`; "x" columns are base / ours
and native / ours. No result is asserted: this measures.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _corpus  # noqa: E402

import hf_response_templates as ours  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402


def _import_base(checkout: Path):
    tmp = Path(tempfile.mkdtemp(prefix="ab_stream_"))
    shutil.copytree(checkout / "hf_response_templates", tmp / "hfrt_base")
    for path in (tmp / "hfrt_base").rglob("*.py"):
        path.write_text(path.read_text(encoding="utf-8").replace("hf_response_templates", "hfrt_base"), encoding="utf-8")
    sys.path.insert(0, str(tmp))
    import hfrt_base

    return hfrt_base


def _stream(make, chunks) -> None:
    p = make()
    feed = p.feed
    for c in chunks:
        feed(c)
    p.finalize()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, type=Path, help="root of the checkout to compare with")
    ap.add_argument("--templates", default="", help="comma-separated (default: all shipped)")
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--repeats", type=int, default=40)
    args = ap.parse_args()
    base = _import_base(args.base)
    try:
        from transformers.utils.chat_parsing import ResponseParser as Native
        from transformers.utils.chat_parsing.response_templates import load_response_template as native_load
    except ImportError:
        Native = native_load = None
    names = _corpus.template_names([t for t in args.templates.split(",") if t] or None)
    texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    tok = _corpus.train_tokenizer(texts)
    print(f"{'template':22s} {'chars':>7s} | {'base':>6s} {'ours':>6s} {'native':>7s} | base/ours native/ours (base)")
    for name in names:
        tpl = get_template(name)
        for size in (int(s) for s in args.sizes.split(",")):
            case = _corpus.stream_case(name, size)
            chunks = _corpus.token_chunks(tok, case.text)
            makers = {
                "base": functools.partial(base.ResponseParser, base.load_template(tpl), case.prefix),
                "ours": functools.partial(ours.ResponseParser, ours.load_template(tpl), case.prefix),
            }
            if Native is not None:
                try:
                    make = functools.partial(Native, native_load(tpl), case.prefix)
                    _stream(make, chunks)
                    makers["native"] = make
                except Exception:  # noqa: BLE001 - a stream native cannot parse is left out
                    pass
            best = {k: float("inf") for k in makers}
            for _ in range(args.repeats):
                for k, make in makers.items():
                    t0 = time.process_time_ns()
                    _stream(make, chunks)
                    best[k] = min(best[k], time.process_time_ns() - t0)
            us = {k: v / len(chunks) / 1000 for k, v in best.items()}
            nat = us.get("native")
            native_cols = f"{nat:7.2f} | {us['base'] / us['ours']:8.2f}x {nat / us['ours']:6.1f}x ({nat / us['base']:.1f}x)" \
                if nat else f"{'-':>7s} | {us['base'] / us['ours']:8.2f}x"
            print(f"{name:22s} {len(case.text):7,d} | {us['base']:6.2f} {us['ours']:6.2f} {native_cols}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
