"""Print the per-family table of the real-output corpus (tests/fixtures/real_outputs/).

Usage: ``python scripts/real_output_report.py [--known]`` from the repository root. ``--known`` also
lists every record we do not match, with its kind and reason (the `KNOWN` list of
tests/test_real_outputs.py, which asserts the same numbers), and the parse policy that gives the peer's
message where one does.

The column "pass with the peer's policy" counts the records that pass by default plus the `KNOWN` entries
whose ``peer_policy`` (a parse policy) gives the peer's message, parsed with it.

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
    total = {c: sum(row[c] for row in rows.values())
             for c in ("records", "in scope", "pass one-shot", "deliberate", "engine", "peer policy")}
    print(f"\n{total['records']} records, {total['in scope']} in scope: {total['pass one-shot']} pass, "
          f"{total['deliberate']} deliberate differences, {total['engine']} need an engine feature; "
          f"{total['peer policy']} pass with the peer's policy ({total['peer policy'] - total['pass one-shot']} "
          "of the deliberate differences by the parse policy of their KNOWN entry's peer_policy).")
    if "--known" in argv:
        for record_id, known in KNOWN.items():
            print(f"\n[{known.kind}] {record_id}\n  source: {BY_ID[record_id].source}\n  {known.reason}")
            if known.peer_policy:
                print(f"  the peer's message with policy={known.peer_policy}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
