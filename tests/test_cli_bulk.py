"""scripts/upgrade_hub_tokenizers.py over fake Hub repos (local folders behind a fake hf_hub_download and
a fake HfApi): every outcome category, one failure never stopping the rest, resuming from the state file."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from _cli_helpers import (  # noqa: F401  (offline: an autouse fixture)
    PLAIN_CHATML,
    FakeApi,
    chat_template,
    fake_download,
    make_tokenizer_folder,
    offline,
    snapshot,
)

from hf_response_templates.library import get_template

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "upgrade_hub_tokenizers.py"


@pytest.fixture(scope="module")
def bulk():
    spec = importlib.util.spec_from_file_location("upgrade_hub_tokenizers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module



class FlakyApi(FakeApi):
    """Fails for one repo, works for the others."""

    def __init__(self, failing: str):
        super().__init__()
        self.failing = failing

    def create_commit(self, **kwargs):
        if kwargs["repo_id"] == self.failing:
            raise RuntimeError("502 Bad Gateway")
        return super().create_commit(**kwargs)


@pytest.fixture
def hub(tmp_path):
    """Fake repos, one per outcome."""
    # SmolLM3's chat template with its end-of-turn changed: detected as smollm3, but does not round-trip
    broken = chat_template("smollm3").replace('content.lstrip("\\n") + "<|im_end|>\\n" }}',
                                              'content.lstrip("\\n") + "<|eot|>\\n" }}')
    assert broken != chat_template("smollm3")
    repos = {
        "org/smol": make_tokenizer_folder(tmp_path / "smol", "smollm3"),
        "org/qwen": make_tokenizer_folder(tmp_path / "qwen", "qwen3", style="compact"),
        "org/has-one": make_tokenizer_folder(tmp_path / "has", "qwen3", extra={"response_template": get_template("qwen3")}),
        "org/has-other": make_tokenizer_folder(tmp_path / "other", "qwen3",
                                               extra={"response_template": get_template("hermes3")}),
        "org/plain": make_tokenizer_folder(tmp_path / "plain", chat_template_text=PLAIN_CHATML),
        "org/broken": make_tokenizer_folder(tmp_path / "broken", "smollm3", chat_template_text=broken),
        "org/flaky": make_tokenizer_folder(tmp_path / "flaky", "gpt-oss"),
    }
    return repos


def test_bulk_run_every_category_and_resume(bulk, hub, tmp_path, capsys):
    order = ["org/smol", "org/missing", "org/qwen", "org/has-one", "org/has-other", "org/plain", "org/broken",
             "org/flaky"]
    repos_file = tmp_path / "repos.txt"
    repos_file.write_text("# repos to upgrade\n" + "\n".join(order) + "\n\norg/smol  # duplicate\n", encoding="utf-8")
    state = tmp_path / "state.jsonl"
    before = {name: snapshot(folder) for name, folder in hub.items()}
    api = FlakyApi(failing="org/flaky")

    code = bulk.main([str(repos_file), "--state", str(state), "--no-progress"], download=fake_download(hub), api=api)
    out = capsys.readouterr().out
    assert code == 1  # an error happened (and was reported), the others went on
    statuses = {r["repo"]: r["status"] for r in map(json.loads, state.read_text().splitlines())}
    assert statuses == {
        "org/smol": "upgraded",
        "org/missing": "error",
        "org/qwen": "upgraded",
        "org/has-one": "already had one",
        "org/has-other": "has a different one",
        "org/plain": "no template fits",
        "org/broken": "verification failed",
        "org/flaky": "error",
    }
    assert sorted(c["repo_id"] for c in api.commits) == ["org/qwen", "org/smol"]
    assert all(c["create_pr"] is True for c in api.commits)
    for commit in api.commits:
        [op] = commit["operations"]
        assert op.path_in_repo == "tokenizer_config.json"
        expected = {"org/smol": "smollm3", "org/qwen": "qwen3"}[commit["repo_id"]]
        assert json.loads(op.path_or_fileobj)["response_template"] == get_template(expected)
    # the summary table
    lines = out.splitlines()
    assert lines[0].split() == ["STATUS", "COUNT"]
    counts = {line[:20].strip(): int(line[20:].strip()) for line in lines[1:8]}
    assert counts == {"upgraded": 2, "already had one": 1, "has a different one": 1, "no template fits": 1,
                      "verification failed": 1, "error": 2, "total": 8}
    details = {r["repo"]: r["detail"] for r in map(json.loads, state.read_text().splitlines())}
    assert "a different template is there" in details["org/has-other"] and "--force" in details["org/has-other"]
    assert "discussions/1" in out and "502 Bad Gateway" in out and "no such repo" in out
    # the fake repos themselves were never written to
    assert {name: snapshot(folder) for name, folder in hub.items()} == before

    # resume: only the two errors are tried again
    api2 = FakeApi()
    hub["org/missing"] = make_tokenizer_folder(tmp_path / "missing", "qwen3")
    calls: list = []
    code = bulk.main([str(repos_file), "--state", str(state), "--no-progress"], download=fake_download(hub, calls),
                     api=api2)
    capsys.readouterr()
    assert code == 0
    assert sorted(c["repo_id"] for c in api2.commits) == ["org/flaky", "org/missing"]
    assert {repo for repo, _, _ in calls} == {"org/flaky", "org/missing"}
    last = {}
    for record in map(json.loads, state.read_text().splitlines()):
        last[record["repo"]] = record["status"]
    assert last["org/flaky"] == "upgraded" and last["org/missing"] == "upgraded"

    # --redo ignores the state file; a dry run commits nothing and records nothing
    api3 = FakeApi()
    size = state.stat().st_size
    code = bulk.main([str(repos_file), "--state", str(state), "--no-progress", "--redo", "--dry-run"],
                     download=fake_download(hub), api=api3)
    out = capsys.readouterr().out
    assert api3.commits == [] and state.stat().st_size == size
    assert "dry run" in out


def test_bulk_author_listing_and_progress_bar(bulk, hub, tmp_path, capsys):
    api = FakeApi()
    listed = []

    def list_repos(author):
        listed.append(author)
        return ["org/smol", "org/plain"]

    code = bulk.main(["--author", "org", "--state", str(tmp_path / "s.jsonl")], download=fake_download(hub), api=api,
                     list_repos=list_repos)
    captured = capsys.readouterr()
    assert code == 0 and listed == ["org"]
    assert [c["repo_id"] for c in api.commits] == ["org/smol"]
    assert "repo" in captured.err  # tqdm's bar (unit="repo") goes to stderr


def test_bulk_bad_input_and_offline(bulk, tmp_path, capsys):
    code = bulk.main([str(tmp_path / "nope.txt")], download=fake_download({}), api=FakeApi())
    err = capsys.readouterr().err
    assert code == 2 and "nope.txt: no such file" in err and len(err.strip().splitlines()) == 1
    repos_file = tmp_path / "r.txt"
    repos_file.write_text("org/x\n", encoding="utf-8")
    code = bulk.main([str(repos_file)])  # the real Hub layers, but HF_HUB_OFFLINE=1
    err = capsys.readouterr().err
    assert code == 2 and "offline" in err
    code = bulk.main([str(repos_file), "--template", "nope"], download=fake_download({}), api=FakeApi())
    err = capsys.readouterr().err
    assert code == 2 and "unknown response template 'nope'" in err


def test_upgrade_one_never_raises(bulk):
    def exploding_download(**kwargs):
        raise ValueError("weird")

    outcome = bulk.upgrade_one("org/x", download=exploding_download, api=FakeApi())
    assert outcome.status == "error" and "weird" in outcome.detail
