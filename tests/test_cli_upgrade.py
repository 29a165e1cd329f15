"""`hf-response-templates upgrade`: verified, byte-preserving, loadable by AutoTokenizer; and the Hub path
through the pure functions that build the commit (no network: HfApi and hf_hub_download are fakes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_helpers import (  # noqa: F401  (offline: an autouse fixture)
    PLAIN_CHATML,
    FakeApi,
    chat_template,
    dump_config,
    fake_download,
    make_tokenizer_folder,
    offline,
    snapshot,
)
from _cli_helpers import run_cli as run
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hf_response_templates import jsonedit
from hf_response_templates.library import get_template
from hf_response_templates.upgrade import (
    build_commit_message,
    build_commit_operations,
    build_hub_commit,
    fetch_hub_files,
    load_local_files,
    plan_upgrade,
)
from hf_response_templates.verify import render_chat


def assert_only_key_added(old: bytes, new: bytes, key: str = "response_template") -> str:
    """`new` is `old` with one insertion (a pure insertion: no byte of `old` removed or changed);
    returns the inserted text. The result parses to the old object plus `key`, last."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    assert prefix + suffix == len(old), "bytes of the original file were changed, not just added to"
    inserted = new[prefix : len(new) - suffix].decode("utf-8")
    before = json.loads(old.decode("utf-8"))
    after = json.loads(new.decode("utf-8"))
    assert list(after) == list(before) + [key]
    assert {k: v for k, v in after.items() if k != key} == before
    return inserted


# --------------------------------------------------------------------------- local upgrade


@pytest.fixture
def mixin():
    """The issue-3 tokenizer integration, installed for this test (Transformers' native parse_response
    differs from this package's on purpose, e.g. text after <|im_end|>)."""
    try:
        from hf_response_templates import tokenizer as integration
    except ImportError:  # pragma: no cover - integration not there: parse with the engine only
        yield False
        return
    was_installed = integration.is_installed()
    integration.install()
    yield True
    if not was_installed:
        integration.uninstall()


@pytest.mark.parametrize("family", ["smollm3", "qwen3", "gpt-oss"])
def test_upgrade_then_autotokenizer_loads_and_parses(tmp_path, capsys, family, mixin):
    from transformers import AutoTokenizer

    from hf_response_templates import parse_response

    folder = make_tokenizer_folder(tmp_path / "tok", family)
    before = snapshot(folder)
    code, out, err = run(capsys, "upgrade", str(folder))
    assert code == 0, err
    assert "added response_template" in out and "verified:" in out
    after = snapshot(folder)
    assert set(after) == set(before)
    assert all(after[name] == before[name] for name in before if name != "tokenizer_config.json")
    assert_only_key_added(before["tokenizer_config.json"], after["tokenizer_config.json"])

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    assert tokenizer.response_template == get_template(family)
    # the loaded tokenizer parses what its own chat template renders for an assistant turn
    messages = [{"role": "user", "content": "Hi"}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    generation = {
        "smollm3": "<think>\nShort.\n</think>\nHello there!<|im_end|>\n",
        "qwen3": "<think>\nShort.\n</think>\n\nHello there!<|im_end|>\n",
        "gpt-oss": "<|channel|>analysis<|message|>Short.<|end|><|start|>assistant<|channel|>final<|message|>Hello there!<|return|>",
    }[family]
    parsed = parse_response(generation, tokenizer.response_template, prefix=prompt)
    assert parsed["content"] == "Hello there!"
    assert parsed.get("reasoning_content", parsed.get("thinking")) == "Short."
    if mixin:
        assert tokenizer.parse_response(generation, prefix=prompt) == parsed
        # and token ids work too (prefix as ids, generation as ids)
        ids = tokenizer(prompt + generation, add_special_tokens=False)["input_ids"]
        n = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        assert tokenizer.parse_response(ids[n:], prefix=ids[:n]) == parsed


@pytest.mark.parametrize("style", ["indent2", "indent4", "compact", "ascii", "tabs-crlf"])
def test_upgrade_keeps_every_other_byte_in_each_json_style(tmp_path, capsys, style):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3", style=style)
    before = snapshot(folder)
    code, _, err = run(capsys, "upgrade", str(folder))
    assert code == 0, err
    after = snapshot(folder)
    inserted = assert_only_key_added(before["tokenizer_config.json"], after["tokenizer_config.json"])
    assert json.loads(after["tokenizer_config.json"])["response_template"] == get_template("qwen3")
    old_text = before["tokenizer_config.json"].decode("utf-8")
    if style == "indent2":
        assert inserted.startswith(',\n  "response_template": {\n    "version": 1,')
        assert after["tokenizer_config.json"].endswith(b"\n}\n")
    elif style == "indent4":
        assert inserted.startswith(',\n    "response_template": {\n        "version": 1,')
        assert not after["tokenizer_config.json"].endswith(b"\n")
    elif style == "compact":
        assert "\n" not in inserted and inserted.startswith(',"response_template":{"version":1,')
    elif style == "ascii":
        assert inserted.isascii() and "\\u" in old_text
    elif style == "tabs-crlf":
        assert inserted.startswith(',\r\n\t"response_template": {\r\n\t\t"version": 1,')
        assert "\n" not in inserted.replace("\r\n", "")
    # the whole upgraded file equals what json.dumps would have written in that style
    config = json.loads(old_text)
    config["response_template"] = get_template("qwen3")
    assert after["tokenizer_config.json"].decode("utf-8") == dump_config(config, style)


@settings(max_examples=60, deadline=None)
@given(
    config=st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                     max_leaves=6),
        max_size=5,
    ).filter(lambda d: "response_template" not in d),
    style=st.sampled_from(["indent2", "indent4", "compact", "ascii", "tabs-crlf"]),
    value=st.sampled_from([get_template("qwen3"), get_template("deepseek-v3.1"), {"ü": ["東京", 1.5, None]}]),
)
@example(config={"\x1f": None}, style="ascii", value={"ü": ["東京", 1.5, None]})  # a control-character key
def test_jsonedit_set_key_matches_json_dumps_in_every_style(config, style, value):
    old = dump_config(config, style)
    new = jsonedit.set_key(old, "response_template", value)
    expected = dump_config({**config, "response_template": value}, style)
    # an "ascii"-style file shows that non-ASCII text was escaped only if it holds some (a control
    # character such as "\x1f" is escaped as \u001f in every style, so it is no evidence)
    if config and (style != "ascii" or not json.dumps(config, ensure_ascii=False).isascii()):
        assert new == expected
    else:
        # An empty object gets the key on its own line(s). An all-ASCII "ascii"-style file shows no escape of
        # non-ASCII text, so nothing says it was escaped: the new key follows save_pretrained's default (raw
        # UTF-8).
        assert json.loads(new) == {**config, "response_template": value}
    assert_only_key_added(old.encode(), new.encode()) if config else None


def test_jsonedit_replace_keeps_the_rest():
    old = '{\n  "a": 1,\n  "response_template": {"old": true},\n  "z": [1,2]\n}\n'
    new = jsonedit.set_key(old, "response_template", {"new": 1})
    assert new == '{\n  "a": 1,\n  "response_template": {\n    "new": 1\n  },\n  "z": [1,2]\n}\n'


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    before = snapshot(folder)
    code, out, err = run(capsys, "upgrade", str(folder), "--dry-run")
    assert code == 0, err
    assert out.startswith("--- a/tokenizer_config.json\n+++ b/tokenizer_config.json\n")
    assert '+  "response_template": {' in out
    assert "dry run" in err and "nothing written" in err
    assert snapshot(folder) == before
    # the diff is exact: applying it gives the file upgrade writes
    added = [line[1:] for line in out.splitlines(keepends=True) if line.startswith("+") and not line.startswith("+++")]
    assert "".join(added).rstrip("\n").endswith("}")


def test_already_has_the_same_template(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3", extra={"response_template": get_template("qwen3")})
    before = snapshot(folder)
    code, out, _ = run(capsys, "upgrade", str(folder))
    assert code == 0 and "already has" in out
    assert snapshot(folder) == before


def test_a_different_template_is_not_overwritten_without_force(tmp_path, capsys):
    other = get_template("qwen3")
    other["fields"]["content"]["close"] = "<|endoftext|>"
    del other["fields"]["reasoning_content"]
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3", extra={"response_template": other})
    before = snapshot(folder)
    code, out, err = run(capsys, "upgrade", str(folder))
    assert code == 1 and out == ""
    assert "different response_template" in err and "--force" in err
    assert "field 'reasoning_content' only in the new template" in err
    assert "field 'content' differs in close" in err
    assert snapshot(folder) == before

    code, out, err = run(capsys, "upgrade", str(folder), "--force")
    assert code == 0, err
    after = snapshot(folder)
    old_config = json.loads(before["tokenizer_config.json"])
    new_config = json.loads(after["tokenizer_config.json"])
    assert new_config["response_template"] == get_template("qwen3")
    assert list(new_config) == list(old_config)  # replaced in place, same position
    assert {k: v for k, v in new_config.items() if k != "response_template"} == {
        k: v for k, v in old_config.items() if k != "response_template"}
    # only the value's bytes changed
    old_text, new_text = before["tokenizer_config.json"].decode(), after["tokenizer_config.json"].decode()
    start = old_text.index('"response_template": ') + len('"response_template": ')
    assert new_text[:start] == old_text[:start]
    tail = old_text[old_text.index("\n}", start):]  # the closing of the file after the old value
    assert new_text.endswith(tail)


def test_verification_failure_refuses_unless_forced(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    before = snapshot(folder)
    code, out, err = run(capsys, "upgrade", str(folder), "--template", "gpt-oss")
    assert code == 1
    assert "fail" in err and "refusing to write" in err and "content" in err
    assert snapshot(folder) == before
    code, out, err = run(capsys, "upgrade", str(folder), "--template", "gpt-oss", "--force")
    assert code == 0 and "forced" in out
    assert json.loads((folder / "tokenizer_config.json").read_text())["response_template"] == get_template("gpt-oss")


def test_no_template_fits(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", chat_template_text=PLAIN_CHATML)
    before = snapshot(folder)
    code, _, err = run(capsys, "upgrade", str(folder))
    assert code == 1 and "no shipped template fits" in err and "--template" in err
    assert snapshot(folder) == before


def test_template_from_a_file(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    tpl = tmp_path / "mine.json"
    tpl.write_text(json.dumps(get_template("qwen3"), indent=2), encoding="utf-8")
    code, out, err = run(capsys, "upgrade", str(folder), "--template", str(tpl))
    assert code == 0, err
    assert json.loads((folder / "tokenizer_config.json").read_text())["response_template"] == get_template("qwen3")


def test_output_dir_copies_and_leaves_the_original(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "gpt-oss", chat_template_file=True)
    before = snapshot(folder)
    out_dir = tmp_path / "upgraded"
    code, out, err = run(capsys, "upgrade", str(folder), "--output", str(out_dir))
    assert code == 0, err
    assert snapshot(folder) == before
    copied = snapshot(out_dir)
    assert set(copied) == set(before)
    assert all(copied[n] == before[n] for n in before if n != "tokenizer_config.json")
    assert_only_key_added(before["tokenizer_config.json"], copied["tokenizer_config.json"])
    # a non-empty output folder is refused (exit 2, nothing written)
    code, _, err = run(capsys, "upgrade", str(folder), "--output", str(out_dir))
    assert code == 2 and "not empty" in err
    assert snapshot(out_dir) == copied


def test_chat_template_jinja_is_used_and_left_alone(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "smollm3", chat_template_file=True)
    before = snapshot(folder)
    code, _, err = run(capsys, "upgrade", str(folder))
    assert code == 0, err
    assert snapshot(folder)["chat_template.jinja"] == before["chat_template.jinja"]


def test_named_chat_templates_use_tool_use(tmp_path):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = [{"name": "default", "template": PLAIN_CHATML},
                               {"name": "tool_use", "template": chat_template("qwen3")}]
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    files = load_local_files(folder)
    assert files.chat_template_text(tools=True) == chat_template("qwen3")
    plan = plan_upgrade(files)
    assert plan.status == "ready" and plan.template_name == "qwen3"


# --------------------------------------------------------------------------- the Hub (no network)


def test_commit_message_says_which_template_and_which_check(tmp_path):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    files = fetch_hub_files("org/model", download=fake_download({"org/model": folder}))
    assert files.kind == "hub" and files.where == "org/model"
    plan = plan_upgrade(files)
    title, description = build_commit_message(plan.template_label, plan.verification, reasons=plan.reasons)
    assert title == "Add response_template (qwen3) to tokenizer_config.json"
    assert "round trip through this repo's own chat template passed: 9 passed, 0 failed, 0 n/a" in description
    assert "- tool_call: pass" in description
    assert "every other byte" in description
    forced_title, forced = build_commit_message("x", plan.verification.__class__("x", [
        plan.verification.cases[0].__class__("content", "fail", "message differs")]), forced=True)
    assert "FAILED (upgrade forced with --force)" in forced


def test_build_hub_commit_operations_and_pr(tmp_path):
    from huggingface_hub import CommitOperationAdd

    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    files = fetch_hub_files("org/model", download=fake_download({"org/model": folder}))
    plan = plan_upgrade(files)
    kwargs = build_hub_commit(plan)
    assert kwargs["repo_id"] == "org/model" and kwargs["create_pr"] is True
    [op] = kwargs["operations"]
    assert isinstance(op, CommitOperationAdd) and op.path_in_repo == "tokenizer_config.json"
    assert op.path_or_fileobj == plan.new_text.encode("utf-8")
    assert_only_key_added((folder / "tokenizer_config.json").read_bytes(), op.path_or_fileobj)
    assert "qwen3" in kwargs["commit_message"] and "passed" in kwargs["commit_description"]
    assert build_hub_commit(plan, create_pr=False)["create_pr"] is False
    assert build_commit_operations("{}")[0].path_in_repo == "tokenizer_config.json"


def test_parent_commit_is_the_revision_that_was_verified(tmp_path):
    sha = "0123456789abcdef0123456789abcdef01234567"
    snap = tmp_path / "hub" / "models--org--model" / "snapshots" / sha
    make_tokenizer_folder(snap, "qwen3")
    files = fetch_hub_files("org/model", download=fake_download({"org/model": snap}))
    assert files.revision == sha
    assert build_hub_commit(plan_upgrade(files))["parent_commit"] == sha


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    """The CLI's Hub path with hf_hub_download and HfApi replaced (HF_HUB_OFFLINE lifted only here)."""
    import huggingface_hub

    repos: dict[str, Path] = {}
    calls: list = []
    api = FakeApi()
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download(repos, calls))
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda *a, **k: api)
    return repos, calls, api


def test_cli_push_to_hub_opens_a_pr(tmp_path, capsys, fake_hub):
    repos, calls, api = fake_hub
    repos["org/model"] = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    before = snapshot(repos["org/model"])
    code, out, err = run(capsys, "upgrade", "org/model", "--push-to-hub")
    assert code == 0, err
    assert "opened a pull request" in out and "discussions/1" in out
    [commit] = api.commits
    assert commit["create_pr"] is True and commit["repo_id"] == "org/model"
    assert commit["operations"][0].path_in_repo == "tokenizer_config.json"
    assert ("org/model", "tokenizer_config.json", None) in calls
    assert snapshot(repos["org/model"]) == before  # nothing written locally

    code, out, err = run(capsys, "upgrade", "org/model", "--push-to-hub", "--no-create-pr")
    assert code == 0 and api.commits[-1]["create_pr"] is False and "committed" in out


def test_cli_hub_without_push_shows_the_diff_only(tmp_path, capsys, fake_hub):
    repos, _, api = fake_hub
    repos["org/model"] = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    code, out, err = run(capsys, "upgrade", "org/model")
    assert code == 0 and out.startswith("--- a/tokenizer_config.json")
    assert "not pushed" in err and api.commits == []
    code, out, err = run(capsys, "upgrade", "org/model", "--push-to-hub", "--dry-run")
    assert code == 0 and api.commits == []


def test_cli_hub_output_dir(tmp_path, capsys, fake_hub):
    repos, _, api = fake_hub
    repos["org/model"] = make_tokenizer_folder(tmp_path / "tok", "gpt-oss", chat_template_file=True)
    code, out, err = run(capsys, "upgrade", "org/model", "--output", str(tmp_path / "out"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["chat_template.jinja", "tokenizer_config.json"]
    assert api.commits == []


def test_cli_hub_errors_are_one_line(tmp_path, capsys, fake_hub):
    repos, _, _ = fake_hub
    code, _, err = run(capsys, "detect", "org/missing")
    assert code == 2 and "org/missing: no such repo" in err and len(err.strip().splitlines()) == 1
    folder = tmp_path / "empty"
    folder.mkdir()
    repos["org/empty"] = folder
    code, _, err = run(capsys, "upgrade", "org/empty", "--push-to-hub")
    assert code == 2 and "no tokenizer_config.json in this repo" in err
    code, _, err = run(capsys, "upgrade", str(make_tokenizer_folder(tmp_path / "local")), "--push-to-hub")
    assert code == 2 and "needs a Hub repo id" in err


def test_hub_render_of_fixture_is_what_verification_used(tmp_path):
    # sanity: verification renders with the repo's own special tokens (Mistral-style bos)
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3", extra={"bos_token": "<s>"})
    files = load_local_files(folder)
    assert files.special_tokens()["bos_token"] == "<s>"
    assert render_chat("{{ bos_token }}", [], special_tokens=files.special_tokens()) == "<s>"


@pytest.mark.parametrize("name", sorted(__import__("hf_response_templates").list_templates()))
def test_every_shipped_template_passes_the_cli_verification_on_its_own_chat_template(name):
    """`upgrade` must not refuse a shipped template on the chat template it was proven against; what the chat
    template cannot carry is n/a, never a failure."""
    from hf_response_templates.library import template_info
    from hf_response_templates.upgrade import verify_chat_template

    fixture = template_info(name).get("chat_template")
    path = Path(__file__).parent / "fixtures" / "chat_templates" / str(fixture)
    if not fixture or not path.exists():
        pytest.skip(f"no fixture chat template for {name}")
    from _chat_render import FAMILIES

    # the special tokens the round trip renders with (a real tokenizer always passes its own; vLLM's Mistral
    # Small 3.1 template concatenates eos_token and fails without one)
    special_tokens = FAMILIES[name].special_tokens if name in FAMILIES else None
    verification = verify_chat_template(
        path.read_text(encoding="utf-8"), get_template(name), label=name, special_tokens=special_tokens
    )
    assert verification.passed, [(c.name, c.detail) for c in verification.failures()]


def test_commit_message_says_when_an_existing_template_is_replaced():
    from hf_response_templates.upgrade import build_commit_message

    _, added = build_commit_message("smollm3", None)
    _, replaced = build_commit_message("smollm3", None, forced=True, replaced=True)
    assert "is added" in added and "replaced" not in added
    assert "existing `response_template` key is replaced" in replaced
