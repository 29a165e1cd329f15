"""The documentation cannot rot: its examples run, its templates load, its links resolve.

* Every ```python block of README.md, docs/*.md and templates/README.md written as a doctest (`>>>`
  lines followed by the expected output) is run, in order, in one namespace per document, and must
  print exactly what the document says (whitespace-insensitive, `...` elides).
* A ```python block right after a `<!-- checked -->` line is run; its last statement is an expression
  whose value must equal the Python literal written in the `# ...` comment lines that end the block
  (the README's main example).
* Every ```json block is valid JSON, and one with a top-level "fields" key loads as a response template.
* Every relative link (`[text](target)`) resolves to a file of the repository and, with `#anchor`, to a
  heading (GitHub's anchor rules) or an `<a id="...">` of that file; no link leaves the repository, and
  no document mentions a file outside it.
* The command table of docs/cli.md names every real subcommand and only options the CLI has.
* The sdist ships docs/.
"""

from __future__ import annotations

import ast
import doctest
import json
import re
from pathlib import Path

import pytest

from hf_response_templates import load_template

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [ROOT / "README.md", ROOT / "templates" / "README.md", *(ROOT / "docs").glob("*.md")],
    key=lambda p: str(p),
)
REFERENCE = ROOT / "docs" / "response-templates.md"

_FENCE = re.compile(r"^```(\w*)\s*$")


def _blocks(path: Path) -> list[tuple[str, int, str, bool]]:
    """(language, line number of the first code line, code, checked) of every fenced block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        j = start
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        out.append((lang, start + 1, "\n".join(lines[start:j]), before == "<!-- checked -->"))
        i = j + 1
    return out


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_documents_exist():
    assert REFERENCE.is_file()
    assert (ROOT / "docs" / "cli.md").is_file()


@pytest.fixture
def registry():
    """The content-parser registry as it was before the test: documents register example parsers."""
    from hf_response_templates import content

    saved = dict(content._REGISTRY)
    yield
    content._REGISTRY.clear()
    content._REGISTRY.update(saved)


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_doctest_examples_print_what_the_document_says(path, registry):
    globs: dict = {"__name__": "docs_example"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    ran = 0
    for lang, lineno, code, _checked in _blocks(path):
        if lang != "python" or ">>>" not in code:
            continue
        test = parser.get_doctest(code, globs, f"{_rel(path)}:{lineno}", str(path), lineno - 1)
        ran += len(test.examples)
        runner.run(test, out=report.append, clear_globs=False)
        globs = test.globs  # a DocTest works on a copy: the next block continues from this one
    assert runner.failures == 0, "".join(report)
    if path == REFERENCE:
        assert ran >= 60, f"the reference lost its examples: only {ran} doctest lines ran"


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_checked_examples_give_the_commented_result(path):
    for lang, lineno, code, checked in _blocks(path):
        if not checked:
            continue
        assert lang == "python", f"{_rel(path)}:{lineno}: <!-- checked --> marks a python block"
        lines = code.splitlines()
        k = len(lines)
        while k and lines[k - 1].lstrip().startswith("#"):
            k -= 1
        expected_text = "\n".join(line.lstrip()[1:] for line in lines[k:])
        assert expected_text.strip(), f"{_rel(path)}:{lineno}: no '# result' comment ends the block"
        expected = ast.literal_eval(expected_text.strip())
        tree = ast.parse("\n".join(lines[:k]), filename=f"{_rel(path)}:{lineno}")
        last = tree.body.pop()
        assert isinstance(last, ast.Expr), f"{_rel(path)}:{lineno}: the block must end with an expression"
        namespace: dict = {"__name__": "docs_example"}
        exec(compile(tree, f"{_rel(path)}:{lineno}", "exec"), namespace)
        got = eval(compile(ast.Expression(last.value), f"{_rel(path)}:{lineno}", "eval"), namespace)
        assert got == expected, f"{_rel(path)}:{lineno}: got {got!r}"


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_json_blocks_are_valid_and_templates_load(path):
    for lang, lineno, code, _checked in _blocks(path):
        if lang != "json":
            continue
        try:
            value = json.loads(code)
        except ValueError as e:
            pytest.fail(f"{_rel(path)}:{lineno}: invalid JSON: {e}")
        if isinstance(value, dict) and "fields" in value:
            load_template(value)


def test_the_checks_above_really_run():
    """The reference is made of doctests and JSON templates, and the README's main example is checked."""
    blocks = _blocks(REFERENCE)
    assert sum(1 for lang, _, code, _ in blocks if lang == "python" and ">>>" in code) >= 20
    assert any(lang == "json" and '"fields"' in code for lang, _, code, _ in blocks)
    assert any(checked for *_, checked in _blocks(ROOT / "README.md"))


# --------------------------------------------------------------------------------------------- links

_LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
_HREF = re.compile(r"<a\s+[^>]*href=\"([^\"]+)\"")
_ANCHOR_TAG = re.compile(r"<a\s+[^>]*(?:id|name)=\"([^\"]+)\"")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _without_code(text: str) -> str:
    """The text outside fenced code blocks and inline code spans (links there are not links)."""
    out, in_fence = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lower-cased, punctuation removed, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    found: set[str] = set(_ANCHOR_TAG.findall(text))
    counts: dict[str, int] = {}
    in_fence = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        m = None if in_fence else _HEADING.match(line)
        if m:
            slug = _slug(m.group(2))
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def _links(path: Path) -> list[str]:
    text = _without_code(path.read_text(encoding="utf-8"))
    return _LINK.findall(text) + _IMAGE.findall(text) + _HREF.findall(text)


def test_the_link_checker_knows_github_anchors():
    assert _slug("Tokenizers: `parse_response`, `get_response_parser`") == "tokenizers-parse_response-get_response_parser"
    assert _slug("OpenAI-compatible streaming (server-sent events)") == "openai-compatible-streaming-server-sent-events"
    assert _slug("Content parsers: `xml-inline`") == "content-parsers-xml-inline"
    assert _links(ROOT / "README.md"), "no link found in README.md: the link pattern is broken"


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_every_relative_link_resolves_inside_the_repository(path):
    bad = []
    for target in _links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not a file of this repository
            assert not target.startswith("file:"), f"{_rel(path)}: link to a local file {target!r}"
            continue
        file_part, _, anchor = target.partition("#")
        if file_part.startswith("/"):
            bad.append(f"{target}: absolute path")
            continue
        dest = (path.parent / file_part).resolve() if file_part else path
        if dest != ROOT and ROOT not in dest.parents:
            bad.append(f"{target}: points outside the repository")
            continue
        if not dest.exists():
            bad.append(f"{target}: no such file or folder")
            continue
        if anchor:
            if dest.suffix != ".md" or not dest.is_file():
                bad.append(f"{target}: an anchor into a file that is not Markdown")
            elif anchor not in anchors(dest):
                bad.append(f"{target}: no heading or <a id> {anchor!r} in {_rel(dest)}")
    assert not bad, f"{_rel(path)}: " + "; ".join(bad)


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_documents_stand_alone(path):
    """Nothing outside the repository is referred to: the docs ship in the sdist on their own."""
    text = path.read_text(encoding="utf-8")
    for outside in ("../shared", "/work/", "SPEC.md", "the SPEC"):
        assert outside not in text, f"{_rel(path)} mentions {outside!r}"


def test_the_sdist_ships_the_docs():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject.split("[tool.hatch.build.targets.sdist]", 1)[1]
    include = re.search(r"^include\s*=\s*\[(.*?)\]", section, re.M | re.S)
    assert include is not None
    assert '"docs"' in include.group(1)


# ------------------------------------------------------------------------------------ command line


def _cli_options() -> dict[str, set[str]]:
    """Every option of every subcommand of `hf-response-templates`, from the real argument parser."""
    import argparse

    from hf_response_templates.cli import build_parser

    parser = build_parser()
    top = {s for a in parser._actions for s in a.option_strings}
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, p in sub.choices.items():
        options = top | {s for a in p._actions for s in a.option_strings}
        for a in p._actions:  # --create-pr is a BooleanOptionalAction: --no-create-pr exists too
            if isinstance(a, argparse.BooleanOptionalAction):
                options |= {s.replace("--", "--no-", 1) for s in a.option_strings}
        out[name] = options
    return out


def test_the_cli_guide_lists_real_commands_and_options():
    """Each row of docs/cli.md's command table names a real subcommand and only options it has."""
    options = _cli_options()
    rows = re.findall(r"^\| `(\w+)([^`]*)` \|", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), re.M)
    assert {name for name, _ in rows} == set(options) - {"demo"}, "the table and the CLI list different commands"
    for name, usage in rows:
        for option in re.findall(r"--[a-z][a-z-]*", usage):
            assert option in options[name], f"docs/cli.md: `{name}` has no option {option}"
