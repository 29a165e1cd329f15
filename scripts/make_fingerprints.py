#!/usr/bin/env python
"""Regenerate ``hf_response_templates/fingerprints.json``: the normalised hash of every real chat template
in ``tests/fixtures/chat_templates/`` that a shipped template is proven against (the round-trip matrix of
``tests/_chat_render.py``), with that template's name.

Run it after adding a fixture (a new family, or a new revision of a model's chat template)::

    python scripts/make_fingerprints.py            # writes the table
    python scripts/make_fingerprints.py --check    # exit 1 if the table is out of date

A tokenizer whose chat template is exactly one of these works with zero configuration:
``tokenizer.parse_response`` uses the family's template without ``response_template`` being set.
``tests/test_zero_config.py`` fails when the table is not current.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from hf_response_templates.library import FINGERPRINTS_FILE, build_fingerprint_table  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "chat_templates"


def proven_pairs() -> dict[str, str]:
    """fixture file -> shipped template, for every pair the round-trip tests prove."""
    from _chat_render import ALL_FAMILIES

    return {family.fixture: family.name for family in ALL_FAMILIES}


def render(table: dict) -> str:
    return json.dumps(table, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the table is current")
    args = parser.parse_args(argv)
    text = render(build_fingerprint_table(FIXTURES, proven_pairs()))
    current = FINGERPRINTS_FILE.read_text(encoding="utf-8") if FINGERPRINTS_FILE.exists() else ""
    if args.check:
        if text != current:
            print(f"{FINGERPRINTS_FILE} is out of date: run python scripts/make_fingerprints.py", file=sys.stderr)
            return 1
        return 0
    FINGERPRINTS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {FINGERPRINTS_FILE} ({len(json.loads(text)['fingerprints'])} chat templates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
