"""The command line on tokenizer folders saved by Transformers 5.x (issue 13, item 4): their
`tokenizer_config.json` has no `added_tokens_decoder`, so the vocabulary evidence detection needs is read
from `tokenizer.json`; and when detection fails, the message says why, truthfully."""

from __future__ import annotations

import json

import pytest
from _cli_helpers import chat_template, fake_download, make_tokenizer_folder, offline  # noqa: F401  (autouse)
from _cli_helpers import run_cli as run
from transformers import AutoTokenizer

from hf_response_templates.upgrade import explain_detection, fetch_hub_files, load_local_files

FAMILIES_WITH_TOKEN_RULES = ["gpt-oss", "cohere-command-r7b", "deepseek-r1"]




@pytest.mark.parametrize("family", FAMILIES_WITH_TOKEN_RULES)
def test_detect_verify_upgrade_on_a_folder_without_added_tokens_decoder(tmp_path, capsys, family):
    folder = make_tokenizer_folder(tmp_path / family, family, added_tokens_in_config=False)
    assert "added_tokens_decoder" not in json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
    code, out, err = run(capsys, "detect", str(folder))
    assert code == 0 and out.splitlines()[0] == family, out + err
    assert "tokenizer has the token(s)" in out
    code, out, err = run(capsys, "verify", str(folder))
    assert code == 0 and "PASS" in out, out + err
    code, out, err = run(capsys, "upgrade", str(folder), "--dry-run")
    assert code == 0 and '+  "response_template"' in out, out + err


@pytest.mark.parametrize("family", FAMILIES_WITH_TOKEN_RULES)
def test_parse_with_tokenizer_detects_the_family(tmp_path, capsys, family):
    folder = make_tokenizer_folder(tmp_path / family, family, added_tokens_in_config=False)
    (tmp_path / "out.txt").write_text("Hello there", encoding="utf-8")
    code, out, err = run(capsys, "parse", "--tokenizer", str(folder), "--prefix", "", str(tmp_path / "out.txt"))
    assert code == 0, err
    assert f"using the detected shipped template {family!r}" in err


def test_a_folder_really_saved_by_the_installed_transformers(tmp_path, capsys):
    source = make_tokenizer_folder(tmp_path / "src", "gpt-oss")
    AutoTokenizer.from_pretrained(str(source)).save_pretrained(tmp_path / "saved")
    code, out, err = run(capsys, "detect", str(tmp_path / "saved"))
    assert code == 0 and out.splitlines()[0] == "gpt-oss", out + err


def test_hub_repo_without_added_tokens_decoder_reads_tokenizer_json(tmp_path):
    folder = make_tokenizer_folder(tmp_path / "repo", "gpt-oss", added_tokens_in_config=False)
    calls: list = []
    files = fetch_hub_files("org/model", download=fake_download({"org/model": folder}, calls))
    assert ("org/model", "tokenizer.json", None) in calls
    assert explain_detection(files.detection_subject())[0] == "gpt-oss"


def test_the_message_says_which_token_is_missing(tmp_path, capsys):
    # gpt-oss's chat template on a tokenizer whose vocabulary has none of harmony's special tokens
    folder = make_tokenizer_folder(tmp_path / "odd", "qwen3", chat_template_text=chat_template("gpt-oss"))
    name, reasons = explain_detection(load_local_files(folder).detection_subject())
    assert name is None
    assert reasons == [
        "the chat template has the markers of gpt-oss, but the tokenizer has none of its token(s) '<|channel|>' "
        "(looked in added_tokens_decoder, the special tokens and tokenizer.json)"
    ]
    code, out, err = run(capsys, "detect", str(folder))
    assert code == 1 and "has the markers of gpt-oss" in out and "none of the shipped families' markers" not in out
