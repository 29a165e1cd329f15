"""Shared checks of the per-group raw-output test modules (tests/test_templates_raw_outputs_*.py).

Each module holds `CASES` of `(case_id, template name, prefix, output, expected message)` and the fixtures it
proves with `verify --template auto`; these helpers run the same checks over them: one-shot, streamed in given
pieces, and the CLI verification of a local tokenizer folder built from a fixture chat template.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _cli_helpers import make_tokenizer_folder

from hf_response_templates import ResponseParser, get_template
from hf_response_templates.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "chat_templates"


def streamed(name: str, prefix: str, pieces: list[str], tools: Any) -> dict:
    """The message `ResponseParser` gives for the output fed in `pieces`."""
    parser = ResponseParser(get_template(name), prefix, tools=tools)
    for piece in pieces:
        parser.feed(piece)
    message, _events = parser.finalize()
    return message


def cut(output: str, cuts: list[int]) -> list[str]:
    """`output` cut at the sorted offsets `cuts`."""
    return [output[a:b] for a, b in zip([0, *cuts], [*cuts, len(output)], strict=True)]


def tokenizer_folder(folder: Path, fixture: str, specials: tuple[str, ...], bos: str | None, eos: str | None) -> Path:
    """A local tokenizer folder (tiny BPE with the family's special tokens) holding the fixture chat template."""
    return make_tokenizer_folder(
        folder,
        chat_template_text=(FIXTURES / fixture).read_text(encoding="utf-8"),
        special_tokens=specials,
        bos_token=bos,
        eos_token=eos,
    )


def assert_verify_auto_passes(folder: Path, name: str, capsys: Any) -> None:
    """`hf-response-templates verify FOLDER --template auto` detects `name` and passes (no case fails)."""
    code = main(["verify", str(folder), "--template", "auto", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    data = json.loads(out)
    assert data["passed"] and data["template"] == json.dumps(name)
    assert not [c for c in data["cases"] if c["status"] == "fail"]
    assert any(c["status"] == "pass" for c in data["cases"])
