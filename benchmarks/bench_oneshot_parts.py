#!/usr/bin/env python
"""The content-parsing, transform and `tools=` typing part of one-shot `parse_response`, with the fast paths
of issue 19 on and off, alternately in one process.

    python benchmarks/bench_oneshot_parts.py                       # every shipped template with structured content
    python benchmarks/bench_oneshot_parts.py --templates gemma4,qwen3-coder --repeats 9

Inputs: the one-shot responses of ``bench_all.py`` (``_corpus.short_cases``, 40 per template). For each
template, the bodies its structured fields (json, xml-inline, python-call-list, ...) receive are recorded
once; then, CPU µs per response (``time.process_time``, best of ``--repeats``), each figure taken with the
fast paths off ("before") and on ("after") in turn:

* ``content``: the fields' ``parse`` (content parser + transform) over those bodies;
* ``typing``: ``tools=`` typing of the values they give (``ToolSchemas.type_tool_calls``);
* ``parse_response`` and ``parse_response, tools=``: the whole call, template dict reused.

"Off" restores the exact readers the fast paths short-cut (they are kept as the reference: see
``tests/test_content_fast_paths.py``): the ``python-call-list`` reader for every body, ``json.loads``
instead of the C scanner called directly, the ``regex`` tag pattern instead of its ``re`` twin, the JSON
dialect's rewrite looked up per body, and every argument that has a schema cast (plain-string parameters,
numbers and booleans included). The transform's one-key fast path stays on in both (it has no switch).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _corpus  # noqa: E402

from hf_response_templates import load_template, parse_response  # noqa: E402
from hf_response_templates import tools as _tools  # noqa: E402
from hf_response_templates.content import json_values as _json_values  # noqa: E402
from hf_response_templates.content import python_calls as _python_calls  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402

_FAST_ARGS = ("_stdlib", "_translate", "_plain_small")  # compiled-args entries that select a fast path


class Switch:
    """Turns the fast paths off (the reference readers) and on again."""

    def __init__(self, arg_dicts: list[dict], schemas: list[_tools.ToolSchemas]):
        self.saved_args = [(a, {k: a[k] for k in _FAST_ARGS if k in a}) for a in arg_dicts]
        self.schemas = [(s, s._props, self._all_props(s)) for s in schemas]
        self.simple, self.loads, self.kept = _python_calls._simple_call_list, _json_values._loads, _tools._KEPT_AS_IS

    @staticmethod
    def _all_props(schemas: _tools.ToolSchemas) -> dict:
        out = {}
        for name, params in schemas.by_name.items():
            props = params.get("properties") if params else None
            if isinstance(props, dict):
                out[name] = {k: (v, _tools._schema_types(v)) for k, v in props.items() if isinstance(v, dict)}
        return out

    def off(self) -> None:
        _python_calls._simple_call_list = lambda text: None
        _json_values._loads = json.loads
        _tools._KEPT_AS_IS = frozenset()
        for args, fast in self.saved_args:
            for k in fast:
                del args[k]
        for s, _fast, every in self.schemas:
            s._props = every

    def on(self) -> None:
        _python_calls._simple_call_list, _json_values._loads, _tools._KEPT_AS_IS = self.simple, self.loads, self.kept
        for args, fast in self.saved_args:
            args.update(fast)
        for s, fast, _every in self.schemas:
            s._props = fast


def _compiled_args(parse) -> list[dict]:
    """The compiled content-args dicts a field's `parse` closure holds (to switch their fast-path entries)."""
    out = []
    for cell in parse.__closure__ or ():
        v = cell.cell_contents
        if isinstance(v, dict) and any(k.startswith("_") for k in v):
            out.append(v)
    return out


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def bench(name: str, repeats: int, inner: int) -> dict | None:
    cases = _corpus.short_cases(name, 40)
    tpl = get_template(name)
    compiled = load_template(tpl)
    bodies = []
    fields = [f for f in compiled.fields if f.content != "text"]
    if not fields:
        return None
    originals = {f.name: f.parse for f in fields}
    for f in fields:
        def record(body, captures, parse=originals[f.name]):
            bodies.append((parse, body, captures))
            return parse(body, captures)
        object.__setattr__(f, "parse", record)
    try:
        for c in cases:
            parse_response(c.text, tpl, prefix=c.prefix, tools=c.tools)
    finally:
        for f in fields:
            object.__setattr__(f, "parse", originals[f.name])
    tools = [c.tools for c in cases if c.tools]
    schemas = [_tools.tool_schemas(t) for t in tools]
    values = []
    for parse, body, captures in bodies:
        try:
            values.append(parse(body, captures))
        except Exception:  # a malformed region: timed as it is (the error path), not typed
            pass
    switch = Switch([a for f in fields for a in _compiled_args(originals[f.name])], schemas)
    n = len(cases)

    def content() -> None:
        for _ in range(inner):
            for parse, body, captures in bodies:
                try:
                    parse(body, captures)
                except Exception:
                    pass

    typed_copies: list = []

    def typing() -> None:
        for vs in typed_copies:
            for v in vs:
                schemas[0].type_tool_calls(v)

    def whole(with_tools: bool):
        def run() -> None:
            for _ in range(inner):
                for c in cases:
                    parse_response(c.text, tpl, prefix=c.prefix, tools=c.tools if with_tools else None)
        return run

    parts = {"content": content, "typing": typing, "parse_response": whole(False), "parse_response, tools=": whole(True)}
    row: dict = {"template": name, "bodies": len(bodies), "responses": n}
    for label, fn in parts.items():
        best = {"before": float("inf"), "after": float("inf")}
        for _ in range(repeats):
            for side in ("before", "after"):
                (switch.off if side == "before" else switch.on)()
                try:
                    if label == "typing":
                        if not schemas:
                            continue
                        typed_copies[:] = [copy.deepcopy(values) for _ in range(inner)]
                    gc.collect()
                    best[side] = min(best[side], _best(fn, 1))
                finally:
                    switch.on()
        if best["after"] != float("inf"):
            row[label] = {side: t / (n * inner) * 1e6 for side, t in best.items()}
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--templates", default="", help="comma-separated template names (default: all with structured content)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--inner", type=int, default=5, help="passes over the responses per timing")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    names = args.templates.split(",") if args.templates else _corpus.template_names()
    labels = ("content", "typing", "parse_response", "parse_response, tools=")
    print("CPU µs per response, best of", args.repeats, "(before = fast paths off, after = on, alternately)")
    print(f"{'template':20s} " + " ".join(f"{label:>24s}" for label in labels))
    rows = []
    for name in names:
        row = bench(name, args.repeats, args.inner)
        if row is None:
            continue
        rows.append(row)
        cells = []
        for label in labels:
            r = row.get(label)
            cells.append(f"{r['before']:7.2f} -> {r['after']:6.2f} ({r['before'] / r['after']:4.2f}x)" if r else " " * 24)
        print(f"{name:20s} " + " ".join(f"{c:>24s}" for c in cells), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
