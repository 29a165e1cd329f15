"""Print the per-family table of the real-output corpus (tests/fixtures/real_outputs/).

Usage: ``python scripts/real_output_report.py [--known]`` from the repository root. ``--known`` also
lists every record we do not match, with its kind and reason (the `KNOWN` list of
tests/test_real_outputs.py, which asserts the same numbers).

vLLM 0.33's own pass rate on the same records is measured by ``scripts/vllm_pass_rate.py`` (it needs
vLLM's unpacked source and a virtual environment with its parser dependencies; see its docstring).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from _real_outputs import table  # noqa: E402
from test_real_outputs import BY_ID, KNOWN, family_table  # noqa: E402


def main(argv: list[str]) -> int:
    rows, columns = family_table()
    print(table(rows, columns))
    total = {c: sum(row[c] for row in rows.values()) for c in ("records", "in scope", "pass one-shot", "deliberate", "engine")}
    print(f"\n{total['records']} records, {total['in scope']} in scope: {total['pass one-shot']} pass, "
          f"{total['deliberate']} deliberate differences, {total['engine']} need an engine feature.")
    if "--known" in argv:
        for record_id, known in KNOWN.items():
            print(f"\n[{known.kind}] {record_id}\n  source: {BY_ID[record_id].source}\n  {known.reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
