"""The token-id path, counted: decode calls, tokens decoded and Python opcodes per `tokenizer.parse_response(ids,
prefix=ids)`, for this checkout and another (deterministic, unlike time on a shared machine).

    python benchmarks/ops_tokenizer.py --base /path/to/other/checkout [--templates lfm2,qwen3] [--long]

Per template, the benchmark's case of `bench_all.py --only tokenizer` (a ~300-token response, the prompt's last 40
tokens, or 2,300 with `--long`): the lengths of the id sequences the path decodes (`_decoder`'s calls), their sum
against the one joint decode of prompt + response the benchmark's floor makes, and the Python opcodes of the
call, all frames and the token-id glue alone (frames of `tokenizer.py`, `joint_decode.py`, `joint_context.py`,
`anchor_lead.py` and `byte_level_pair.py`). Each checkout is
imported in turn (its modules dropped from `sys.modules` and imported again from its directory).
"""

from __future__ import annotations

import argparse
import copy
import importlib
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _corpus  # noqa: E402

#: the modules of the token-id glue (the frames counted as "glue")
_GLUE = ("tokenizer.py", "joint_decode.py", "joint_context.py", "anchor_lead.py", "byte_level_pair.py")


def _load(root: Path) -> Any:
    """`hf_response_templates.tokenizer` of the checkout at `root`."""
    for name in [m for m in sys.modules if m == "hf_response_templates" or m.startswith("hf_response_templates.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("hf_response_templates.tokenizer")
        module._engine()  # its lazy engine import resolves `hf_response_templates` now, to this checkout
    finally:
        sys.path.remove(str(root))
    assert module.__file__.startswith(str(root)), module.__file__
    return module


def _count(module: Any, tok: Any, ids: list[int], pids: list[int]) -> tuple[list[int], int, int]:
    """(decoded lengths, opcodes of the call, opcodes of the glue) of one `parse_response` call."""
    method = module.ResponseTemplateMixin.parse_response
    method(tok, ids, prefix=pids)  # warm (caches, lazy imports)
    seen: list[int] = []
    real = module._decoder
    rust = tok.__dict__.get("_tokenizer")

    class Counted:  # the backend, its `decode` counted (the path still takes it for the backend's own)
        def __getattr__(self, name: str) -> Any:
            return getattr(rust, name)

        def decode(self, x: list[int], skip: bool = False) -> str:
            seen.append(len(x))
            return rust.decode(x, skip)

    def counting(tokenizer: Any) -> Any:
        decode = real(tokenizer)

        def counted(x: list[int]) -> str:
            seen.append(len(x))
            return decode(x)

        return counted

    if rust is not None and module._backend_decoder(tok) is not None:
        tok.__dict__["_tokenizer"] = Counted()
    else:
        module._decoder = counting
    try:
        method(tok, ids, prefix=pids)
    finally:
        module._decoder = real
        if rust is not None:
            tok.__dict__["_tokenizer"] = rust
    method(tok, ids, prefix=pids)  # warm again: the caches keyed by the backend (`_control_tokens`) saw `Counted`
    counts = {"all": 0, "glue": 0}

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == __file__:
            return None
        frame.f_trace_opcodes = True
        glue = frame.f_code.co_filename.endswith(_GLUE)

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                counts["all"] += 1
                counts["glue"] += glue
            return local

        return local

    sys.settrace(tracer)
    try:
        method(tok, ids, prefix=pids)
    finally:
        sys.settrace(None)
    return seen, counts["all"], counts["glue"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other checkout (a directory holding hf_response_templates/)")
    ap.add_argument("--templates", default="", help="comma-separated template names (default: all shipped)")
    ap.add_argument("--long", action="store_true", help="the 2,300-token prompt (default: the 40-token one)")
    args = ap.parse_args(argv)
    from transformers import PreTrainedTokenizerFast

    names = _corpus.template_names([t.strip() for t in args.templates.split(",") if t.strip()] or None)
    corpus_texts = [c.prefix + c.text for n in _corpus.template_names() for c in _corpus.short_cases(n, 10)]
    backend = _corpus.train_tokenizer(corpus_texts)
    long_system = _corpus.filler(12000, random.Random(5))
    sides = {"base": _load(Path(args.base).resolve()), "ours": _load(HERE.parent)}
    toks = {side: PreTrainedTokenizerFast(tokenizer_object=copy.deepcopy(backend)) for side in sides}
    from hf_response_templates.library import get_template

    print(f"tokens decoded (floor: prompt + response once) and Python opcodes per call ({'long' if args.long else 'short'} prompt)")
    print(f"{'template':20s} {'prompt':>6s} {'resp':>5s} {'floor':>6s} | {'base: decodes':>26s} {'tokens':>6s} {'ops':>5s} "
          f"{'glue':>5s} | {'ours: decodes':>26s} {'tokens':>6s} {'ops':>5s} {'glue':>5s}")
    totals = {side: [0, 0, 0] for side in sides}
    for name in names:
        tpl = get_template(name)
        case = _corpus.stream_case(name, 1000)
        tok0 = toks["ours"]
        ids = tok0.encode(case.text, add_special_tokens=False)
        prompt_text, keep = (long_system + case.prefix, 2300) if args.long else (case.prefix, 40)
        pids = tok0.encode(prompt_text, add_special_tokens=False)[-keep:]
        row = f"{name:20s} {len(pids):6d} {len(ids):5d} {len(pids) + len(ids):6d}"
        for side, module in sides.items():
            module._set_response_template(toks[side], tpl)
            seen, ops, glue = _count(module, toks[side], ids, pids)
            totals[side][0] += sum(seen)
            totals[side][1] += ops
            totals[side][2] += glue
            row += f" | {str(seen):>26s} {sum(seen):6d} {ops:5d} {glue:5d}"
        print(row, flush=True)
    print(" | ".join(f"{side}: tokens {t[0]}, opcodes {t[1]}, glue {t[2]}" for side, t in totals.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
