"""What a Transformers user expects of the package (issue 13, "Conventions"): logging obeys Transformers'
verbosity, type hints resolve at run time, mypy accepts this package's signatures on 5.x (the shipped
plugin), batch errors name their row, the prompt passed as the response is warned about, a missing
dependency is one line with exit 2, and the packaging metadata is complete."""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import pkgutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import tomllib
import transformers
from _tokenizers import byte_level_tokenizer, qwen3_template
from transformers.utils import logging as hf_logging

import hf_response_templates
from hf_response_templates import ResponseParseError, cli
from hf_response_templates import tokenizer as integration
from hf_response_templates.tokenizer import install

install()

ROOT = Path(__file__).resolve().parents[1]
QWEN3 = (ROOT / "tests" / "fixtures" / "chat_templates" / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------ logging


def test_our_warnings_obey_transformers_verbosity(caplog, monkeypatch):
    monkeypatch.setattr(integration, "_announced", set())
    tok = byte_level_tokenizer()
    tok.chat_template = QWEN3  # zero config: logs which template it uses, once
    previous = hf_logging.get_verbosity()
    try:
        hf_logging.set_verbosity_error()
        with caplog.at_level(logging.WARNING, logger="hf_response_templates"):
            tok.parse_response("Hi<|im_end|>", prefix="")
        assert not [r for r in caplog.records if r.name.startswith("hf_response_templates")]
        monkeypatch.setattr(integration, "_announced", set())
        hf_logging.set_verbosity_warning()
        with caplog.at_level(logging.WARNING, logger="hf_response_templates"):
            tok.parse_response("Hi<|im_end|>", prefix="")
        assert [r for r in caplog.records if "proven against" in r.getMessage()]
    finally:
        hf_logging.set_verbosity(previous)


# ------------------------------------------------------------------------------------------------ typing


def public_callables():
    modules = ["hf_response_templates"] + [
        f"hf_response_templates.{m.name}"
        for m in pkgutil.iter_modules(hf_response_templates.__path__)
        if not m.name.startswith("_") and m.name != "mypy_plugin"  # the plugin needs mypy itself
    ]
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")]):
            obj = getattr(module, name)
            if inspect.isclass(obj) and obj.__module__.startswith("hf_response_templates"):
                yield f"{module_name}.{name}", obj
                for attr, value in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    value = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                    if callable(value):
                        yield f"{module_name}.{name}.{attr}", value
            elif inspect.isfunction(obj) and obj.__module__.startswith("hf_response_templates"):
                yield f"{module_name}.{name}", obj


def test_get_type_hints_works_on_every_public_function_and_method():
    checked, failures = 0, []
    for name, obj in public_callables():
        checked += 1
        try:
            typing.get_type_hints(obj)
        except Exception as exc:  # noqa: BLE001 - collected
            failures.append(f"{name}: {exc!r}")
    assert checked > 100 and not failures, failures


def test_response_streamer_is_a_real_class_for_type_checkers():
    source = (ROOT / "hf_response_templates" / "__init__.py").read_text(encoding="utf-8")
    assert "if TYPE_CHECKING:" in source and "from .tokenizer import ResponseStreamer" in source
    from transformers.generation.streamers import BaseStreamer

    assert issubclass(hf_response_templates.ResponseStreamer, BaseStreamer)
    assert typing.get_type_hints(hf_response_templates.ResponseStreamer.__init__)["strict"] is bool


MYPY_CONFIG = """
[mypy]
{plugins}
[mypy-transformers.*]
follow_imports = skip
ignore_missing_imports = True
[mypy-transformers.tokenization_utils_base]
follow_imports = normal
[mypy-torch.*,numpy.*,regex.*,jiter.*,huggingface_hub.*,tokenizers.*]
follow_imports = skip
"""
USER_SCRIPT = """
import hf_response_templates
from transformers.tokenization_utils_base import PreTrainedTokenizerBase


def parse(tok: PreTrainedTokenizerBase, ids: list[int]) -> dict | list[dict]:
    message = tok.parse_response(ids, prefix="", strict=False)
    parser = tok.get_response_parser(prefix="", tools=[])
    parser.feed("text")
    streamer = hf_response_templates.ResponseStreamer(tok, strict=False)
    return message
"""


def run_mypy(tmp_path, plugin: bool) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    (tmp_path / "user.py").write_text(USER_SCRIPT, encoding="utf-8")
    plugins = "plugins = hf_response_templates.mypy_plugin" if plugin else ""
    (tmp_path / "mypy.ini").write_text(MYPY_CONFIG.format(plugins=plugins), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", "user.py"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600,
    )


def test_mypy_accepts_strict_on_a_tokenizer_with_the_shipped_plugin(tmp_path):
    result = run_mypy(tmp_path, plugin=True)
    assert result.returncode == 0, result.stdout + result.stderr
    if int(transformers.__version__.split(".")[0]) >= 5:  # 5.x is typed: without the plugin mypy refuses it
        (tmp_path / "no-plugin").mkdir()
        without = run_mypy(tmp_path / "no-plugin", plugin=False)
        assert 'Unexpected keyword argument "strict"' in without.stdout


# ------------------------------------------------------------------------------------------------ batches


def test_a_strict_batch_error_names_the_row():
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    batch = ["fine<|im_end|>", "fine too<|im_end|>", "<tool_call>{not json</tool_call><|im_end|>"]
    with pytest.raises(ResponseParseError) as info:
        tok.parse_response(batch, prefix="")
    assert str(info.value).startswith("batch row 2: ") and info.value.row == 2
    assert info.value.field == "tool_calls"
    with pytest.raises(ResponseParseError) as single:
        tok.parse_response(batch[2], prefix="")
    assert not str(single.value).startswith("batch row")


def test_the_prompt_passed_as_the_response_is_warned_about(caplog):
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    prompt = tok.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
    answer = tok.encode("Hello!<|im_end|>", add_special_tokens=False)
    with caplog.at_level(logging.WARNING, logger="hf_response_templates"):
        tok.parse_response([answer], prefix=[prompt])
    assert not caplog.records
    with caplog.at_level(logging.WARNING, logger="hf_response_templates"):
        tok.parse_response([prompt + answer], prefix=[prompt])  # forgot out[:, prompt_len:]
    assert len(caplog.records) == 1 and "starts with the whole prompt" in caplog.records[0].getMessage()


# ------------------------------------------------------------------------------------------------ missing pieces


def test_a_missing_dependency_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    from _cli_helpers import make_tokenizer_folder

    from hf_response_templates import verify

    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")

    def no_jinja(*args, **kwargs):
        raise ImportError("apply_chat_template requires jinja2 to be installed.")

    monkeypatch.setattr(verify, "render_chat", no_jinja)
    for argv in (["verify", str(folder)], ["upgrade", str(folder), "--dry-run"]):
        code = cli.main(argv)
        out, err = capsys.readouterr()
        assert code == 2, out + err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "jinja2" in lines[0] and "pip install jinja2" in lines[0], err
        assert "n/a" not in out


# ------------------------------------------------------------------------------------------------ packaging


def test_packaging_metadata():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and (ROOT / "LICENSE").is_file()
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    versions = {c.rsplit(" ", 1)[-1] for c in project["classifiers"] if c.startswith("Programming Language :: Python :: 3.")}
    assert {"3.10", "3.11", "3.12", "3.13"} <= versions
    assert project["urls"]
    deps = {d.split(">")[0].split("<")[0].split("=")[0].strip().lower(): d for d in project["dependencies"]}
    assert "<6" in deps["transformers"]  # the package patches PreTrainedTokenizerBase: an untested major is not allowed
    assert "jinja2" in deps  # verify / upgrade render chat templates
    imported = set()
    for path in (ROOT / "hf_response_templates").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        imported |= {name for name in deps if f"import {name}" in text or f"from {name}" in text}
    # every declared dependency is used (jinja2 by Transformers' renderer, which verify calls)
    assert set(deps) - imported <= {"jinja2"}, set(deps) - imported


def test_version_and_help_on_every_option(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"hf-response-templates {hf_response_templates.__version__}"
    import argparse

    missing = []

    def walk(parser, where):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{where} {name}")
            elif not action.help:
                missing.append(f"{where}: {action.option_strings or action.dest}")

    walk(cli.build_parser(), "hf-response-templates")
    assert not missing, missing


def test_the_bulk_hub_upgrade_is_a_subcommand(capsys):
    assert cli.main(["upgrade-hub", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--author" in out and "--state" in out and "REPOS_FILE" in out
    code = cli.main(["upgrade-hub", "/no/such/repos.txt", "--no-progress"])  # the tests are offline
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "upgrade-hub: error:" in err
