#!/usr/bin/env python3
"""Derive a response template from every chat template in tests/fixtures/chat_templates/ and write the
table into docs/derive.md (between the ``derive-table`` markers).

The shipped-template shortcut is turned off (``use_library=False``): every row is derived from the chat
template alone, then proven by round trip. Run from the repository root::

    python scripts/derive_table.py            # rewrite docs/derive.md
    python scripts/derive_table.py --check    # exit 1 if docs/derive.md is out of date

Nothing is downloaded. ``tests/test_derive.py`` checks the same numbers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "chat_templates"
DOC = ROOT / "docs" / "derive.md"
BEGIN, END = "<!-- derive-table:begin -->", "<!-- derive-table:end -->"
#: special tokens the fixtures' chat templates read (bos/eos of the family; a neutral pair otherwise)
DEFAULT_SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}
SPECIAL_TOKENS = {
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": {"bos_token": "<BOS_TOKEN>"},
    "deepseek-ai-DeepSeek-V3.1.jinja": {"bos_token": "<｜begin▁of▁sentence｜>"},
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": {"bos_token": "<｜begin▁of▁sentence｜>"},
    "meta-llama-Llama-3.3-70B-Instruct.jinja": {"bos_token": "<|begin_of_text|>"},
    "google-gemma-4-31B-it.jinja": {"bos_token": "<bos>"},
    "gemma4.jinja": {"bos_token": "<bos>"},
    "google-gemma-3-it.jinja": {"bos_token": "<bos>"},
}


def fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.jinja"), key=lambda p: p.name.lower())


def derive_fixture(path: Path):
    """``(shipped family or None, DeriveResult)`` for one fixture, derived without the shipped template."""
    from hf_response_templates.derive import derive
    from hf_response_templates.library import detect_template

    chat_template = path.read_text(encoding="utf-8")
    specials = SPECIAL_TOKENS.get(path.name, DEFAULT_SPECIAL_TOKENS)
    return detect_template(chat_template), derive(chat_template, special_tokens=specials, use_library=False)


def _tool_format(result) -> str:
    found = [e.value for e in result.evidence if e.field == "tool_calls" and e.what == "format"]
    return found[0] if found else "—"


def _why(result) -> str:
    if result.ok:
        return ""
    first = result.problems[0] if result.problems else ""
    return first.replace("|", "\\|").replace("\n", " ")[:140]


def table(rows) -> str:
    """The markdown table for ``[(fixture name, family, result), ...]``."""
    lines = [
        "| chat template | detected family | derived fields | tool-call format | proof (pass / fail / n/a) | result |",
        "|---|---|---|---|---|---|",
    ]
    for name, family, result in rows:
        s = result.summary()
        verdict = f"proven ({result.confidence})" if result.ok else "NOT proven: " + _why(result)
        lines.append(
            f"| `{name}` | {family or '— (none)'} | {', '.join(result.derived_fields) or '—'} | "
            f"{_tool_format(result)} | {s['pass']} / {s['fail']} / {s['n/a']} | {verdict} |"
        )
    shipped = [r for _, f, r in rows if f]
    others = [r for _, f, r in rows if not f]
    lines.append("")
    lines.append(
        f"Chat templates of a shipped family: {sum(r.ok for r in shipped)} of {len(shipped)} proven without the "
        f"shipped template. Other chat templates: {sum(r.ok for r in others)} of {len(others)} proven; the "
        "others say what failed. (*detected family*: what `detect_template` recognises, not used by the derivation.)"
    )
    return "\n".join(lines)


def render_doc(current: str, rows) -> str:
    head, _, rest = current.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{table(rows)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/derive.md is out of date")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    rows = [(p.name, *derive_fixture(p)) for p in fixtures()]
    current = DOC.read_text(encoding="utf-8")
    updated = render_doc(current, rows)
    if args.check:
        if updated != current:
            print("docs/derive.md is out of date: run python scripts/derive_table.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(updated, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)} ({len(rows)} chat templates)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
