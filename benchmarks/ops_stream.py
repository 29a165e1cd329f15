#!/usr/bin/env python
"""Python opcodes per token chunk of `bench_all.py`'s streams: a figure that a loaded machine does not move.

    python benchmarks/ops_stream.py --templates kimi-k3,cohere-command-r7b --sizes 100000
    PYTHONPATH=/path/to/other/checkout python /this/checkout/benchmarks/ops_stream.py ...   # the other code

The chunks are those of `bench_all.py` (the same corpus and BPE); each stream is fed to
`ResponseParser(template, prefix).feed` and finalized under ``sys.settrace`` with ``f_trace_opcodes`` (a call
into C counts as the opcodes that make it, whatever it costs). No result is asserted: this measures.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ["HF_RESPONSE_TEMPLATES_NO_PATCH"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpus  # noqa: E402

from hf_response_templates import ResponseParser, load_template  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402


def opcodes(template, prefix: str, chunks: list[str]) -> int:
    """Opcodes run by feeding `chunks` and finalizing."""
    ops = 0

    def trace(frame, event, arg):  # noqa: ANN001, ANN202 - the sys.settrace protocol
        nonlocal ops
        frame.f_trace_opcodes = True
        if event == "opcode":
            ops += 1
        return trace

    parser = ResponseParser(template, prefix)
    feed = parser.feed
    sys.settrace(trace)
    try:
        for c in chunks:
            feed(c)
        parser.finalize()
    finally:
        sys.settrace(None)
    return ops


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--templates", default="", help="comma-separated (default: all shipped)")
    ap.add_argument("--sizes", default="1000,100000")
    args = ap.parse_args()
    names = _corpus.template_names([t for t in args.templates.split(",") if t] or None)
    texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    tok = _corpus.train_tokenizer(texts)
    print(f"{'template':22s} {'chars':>8s} {'chunks':>7s} | opcodes per chunk")
    for name in names:
        tpl = load_template(get_template(name))
        for size in (int(s) for s in args.sizes.split(",")):
            case = _corpus.stream_case(name, size)
            chunks = _corpus.token_chunks(tok, case.text)
            print(f"{name:22s} {len(case.text):8,} {len(chunks):7,} | {opcodes(tpl, case.prefix, chunks) / len(chunks):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
