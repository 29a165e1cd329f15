"""The command line: demo, list/show, detect, parse, verify, and every bad input (exit 2, one line).

Most tests call `cli.main(argv)` in-process (fast); a few run the real console script / `python -m`.
Nothing here contacts the Hub: tokenizer folders are built locally (`_cli_helpers`), and
HF_HUB_OFFLINE=1 is set for the whole module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli_helpers import PLAIN_CHATML, make_tokenizer_folder, offline, snapshot  # noqa: F401  (offline: autouse)
from _cli_helpers import run_cli as run

from hf_response_templates import parse_response
from hf_response_templates.cli import DEMO_OUTPUT, DEMO_PROMPT, token_like_pieces
from hf_response_templates.library import get_template, list_templates


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hf-response-templates: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# --------------------------------------------------------------------------- demo


def test_demo_streams_events_and_prints_the_final_message(capsys):
    code, out, err = run(capsys, "demo")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines() if line.startswith('{"type"')]
    assert events[0] == {"type": "region_open", "field": "reasoning_content"}
    closes = [e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls"]
    assert [c["value"]["function"]["arguments"]["city"] for c in closes] == ["Paris", "Tokyo"]
    # the pretty final message is the block after "# 2."
    block = out.split("# 2.")[1].split("\n", 1)[1].split("\n#")[0]
    message = json.loads(block)
    assert message == parse_response(DEMO_OUTPUT, get_template("smollm3"), prefix=DEMO_PROMPT)
    assert message["content"] == "Let me check the weather in both cities."
    assert message["reasoning_content"].startswith("The user is choosing")
    assert len(message["tool_calls"]) == 2
    assert "gives the same message: True" in out
    # earlier turns of the multi-turn prefix never leak
    assert "Of course!" not in json.dumps(message)


def test_demo_chunks_are_token_sized():
    pieces = token_like_pieces(DEMO_OUTPUT)
    assert "".join(pieces) == DEMO_OUTPUT
    assert "<|im_end|>" in pieces and "<tool_call>" in pieces and "</think>" in pieces
    assert max(len(p) for p in pieces) <= 12
    assert len(pieces) > 50


def test_demo_imports_no_heavy_package():
    # What makes the demo start fast is what it imports: only the standard library, the package and the
    # engine's own C dependencies (counted, not timed: a wall-clock bound fails on a loaded machine).
    code = (
        "import sys; before = set(sys.modules); from hf_response_templates.cli import main; "
        "import io, contextlib; buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf): rc = main(['demo'])\n"
        "assert rc == 0\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(' '.join(sorted(m for m in new if m not in sys.stdlib_module_names)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    third_party = set(proc.stdout.split())
    assert "hf_response_templates" in third_party
    assert third_party <= {"hf_response_templates", "regex", "jiter", "typing_extensions"}, third_party


def test_python_dash_m_and_console_script():
    proc = subprocess.run([sys.executable, "-m", "hf_response_templates", "demo"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert '"region_close", "field": "tool_calls"' in proc.stdout
    script = Path(sys.executable).parent / "hf-response-templates"
    if not script.exists():
        pytest.skip("console script not installed in this environment")
    proc = subprocess.run([str(script), "list"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "smollm3" in proc.stdout


# --------------------------------------------------------------------------- list / show


def test_list_table_and_json(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["NAME", "FIELDS", "MODELS"]
    for name in list_templates():
        assert any(line.startswith(name + " ") for line in out.splitlines())
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    assert [r["name"] for r in rows] == list_templates()
    assert all({"fields", "models", "doc"} <= set(r) for r in rows)


def test_show_prints_the_template_json(capsys):
    code, out, _ = run(capsys, "show", "qwen3")
    assert code == 0 and json.loads(out) == get_template("qwen3")
    code, out, _ = run(capsys, "show", "gpt-oss", "--info")
    info = json.loads(out)
    assert info["template"] == get_template("gpt-oss") and info["models"]


def test_show_unknown_name(capsys):
    code, _, err = run(capsys, "show", "nope")
    assert_one_line_error(code, err, "nope", "unknown response template", "qwen3")


# --------------------------------------------------------------------------- detect


@pytest.mark.parametrize("family", ["smollm3", "qwen3", "gpt-oss"])
def test_detect_local_folder_says_why(tmp_path, capsys, family):
    folder = make_tokenizer_folder(tmp_path / "tok", family)
    code, out, err = run(capsys, "detect", str(folder))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == family
    assert "why:" in out and "chat template contains" in out
    code, out, _ = run(capsys, "detect", str(folder), "--json")
    data = json.loads(out)
    assert data["template"] == family and data["reasons"]


def test_detect_chat_template_jinja_only(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "gpt-oss", chat_template_file=True)
    (folder / "tokenizer_config.json").unlink()  # detection needs only the chat template
    code, out, err = run(capsys, "detect", str(folder))
    assert code == 0, err
    assert out.startswith("gpt-oss\n") and "chat_template.jinja" in out


def test_detect_unknown_chat_template_exits_1(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", chat_template_text=PLAIN_CHATML)
    code, out, _ = run(capsys, "detect", str(folder))
    assert code == 1
    assert "no shipped template fits" in out


# --------------------------------------------------------------------------- parse

RAW = '<think>\nLet me think.\n</think>\nSure! 東京 "quoted"\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call><|im_end|>\n'
PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nOld turn<|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


@pytest.fixture
def raw_files(tmp_path):
    raw = tmp_path / "out.txt"
    raw.write_text(RAW, encoding="utf-8")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    return raw, prompt, tools


def test_parse_file_prints_the_message(capsys, raw_files):
    raw, prompt, tools = raw_files
    code, out, err = run(capsys, "parse", "--template", "smollm3", "--prefix-file", str(prompt), "--tools", str(tools), str(raw))
    assert code == 0, err
    message = json.loads(out)
    assert message == parse_response(RAW, get_template("smollm3"), prefix=PROMPT, tools=TOOLS)
    assert message["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "days": 3}  # typed by --tools
    assert message["content"] == 'Sure! 東京 "quoted"'
    assert err == ""


def test_parse_stdin_and_prefix_escapes(capsys, monkeypatch, raw_files):
    import io

    raw, _, _ = raw_files
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RAW.encode("utf-8")), encoding="utf-8"))
    code, out, err = run(capsys, "parse", "--template", "smollm3", "--prefix", r"<|im_start|>assistant\n")
    assert code == 0, err
    assert json.loads(out)["reasoning_content"] == "Let me think."


def test_parse_without_prefix_notes_it_on_stderr(capsys, raw_files):
    raw, _, _ = raw_files
    code, out, err = run(capsys, "parse", "--template", "smollm3", str(raw))
    assert code == 0
    assert json.loads(out)["content"]
    assert "no --prefix" in err


def test_parse_stream_json_lines(capsys, raw_files):
    raw, prompt, _ = raw_files
    code, out, err = run(capsys, "parse", "--template", "smollm3", "--prefix-file", str(prompt), "--stream",
                         "--chunk-size", "3", str(raw))
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]  # every line is one JSON document
    assert events[-1]["type"] == "message"
    assert events[-1]["message"] == parse_response(RAW, get_template("smollm3"), prefix=PROMPT)
    chunks = [e for e in events if e["type"] == "region_chunk"]
    assert all(len(e["text"]) <= 3 for e in chunks)
    reasoning = "".join(e["text"] for e in chunks if e["field"] == "reasoning_content")
    assert reasoning.strip() == "Let me think."


def test_parse_stream_with_real_tokenizer(tmp_path, capsys, raw_files):
    raw, prompt, _ = raw_files
    folder = make_tokenizer_folder(tmp_path / "tok", "smollm3")
    code, out, err = run(capsys, "parse", "--tokenizer", str(folder), "--template", "smollm3",
                         "--prefix-file", str(prompt), "--stream", str(raw))
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["message"] == parse_response(RAW, get_template("smollm3"), prefix=PROMPT)
    # special tokens arrive whole: the delimiters never show up in a chunk
    assert not any("<think>" in e.get("text", "") or "<|im_end|>" in e.get("text", "") for e in events)


def test_parse_with_tokenizer_uses_its_own_template(tmp_path, capsys, raw_files):
    raw, prompt, _ = raw_files
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3", extra={"response_template": get_template("qwen3")})
    code, out, err = run(capsys, "parse", "--tokenizer", str(folder), "--prefix-file", str(prompt), str(raw))
    assert code == 0, err
    assert json.loads(out)["reasoning_content"] == "Let me think."
    # no response_template in the config: the detected one is used, with a note
    folder2 = make_tokenizer_folder(tmp_path / "tok2", "qwen3")
    code, out, err = run(capsys, "parse", "--tokenizer", str(folder2), "--prefix-file", str(prompt), str(raw))
    assert code == 0 and "detected" in err and "'qwen3'" in err


def test_parse_malformed_output_strict_and_no_strict(capsys, tmp_path):
    raw = tmp_path / "bad.txt"
    raw.write_text("<tool_call>{not json</tool_call><|im_end|>", encoding="utf-8")
    code, out, err = run(capsys, "parse", "--template", "smollm3", "--prefix", "", str(raw))
    assert code == 1 and out == ""
    assert "could not parse" in err and "--no-strict" in err and "Traceback" not in err
    code, out, err = run(capsys, "parse", "--template", "smollm3", "--prefix", "", "--no-strict", str(raw))
    assert code == 0
    assert json.loads(out)["unparsed"][0]["field"] == "tool_calls"


def test_parse_template_file(capsys, tmp_path, raw_files):
    raw, prompt, _ = raw_files
    tpl = tmp_path / "my.json"
    tpl.write_text(json.dumps(get_template("smollm3")), encoding="utf-8")
    code, out, err = run(capsys, "parse", "--template", str(tpl), "--prefix-file", str(prompt), str(raw))
    assert code == 0, err
    assert json.loads(out)["content"] == 'Sure! 東京 "quoted"'


# --------------------------------------------------------------------------- verify


def test_verify_passes_with_a_table(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    code, out, err = run(capsys, "verify", str(folder))
    assert code == 0, out + err
    assert "CASE" in out and "RESULT" in out
    assert "tool_call " in out and "PASS:" in out
    code, out, _ = run(capsys, "verify", str(folder), "--json")
    data = json.loads(out)
    assert data["passed"] and data["template"] == '"qwen3"'
    assert {c["status"] for c in data["cases"]} == {"pass"}


def test_verify_reports_what_the_chat_template_cannot_carry(tmp_path, capsys):
    # SmolLM3's chat template renders neither reasoning nor tool calls in history: n/a, not fail
    folder = make_tokenizer_folder(tmp_path / "tok", "smollm3")
    code, out, _ = run(capsys, "verify", str(folder))
    assert code == 0
    assert "n/a" in out and "not rendered by the chat template" in out


def test_verify_fails_with_the_wrong_template(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3")
    code, out, _ = run(capsys, "verify", str(folder), "--template", "gpt-oss")
    assert code == 1
    assert "fail" in out and "FAIL:" in out


def test_verify_uses_the_tokenizers_own_template_first(tmp_path, capsys):
    broken = get_template("qwen3")
    broken["fields"]["content"]["close"] = "<|eot|>"  # valid, but does not invert this chat template
    folder = make_tokenizer_folder(tmp_path / "tok", "qwen3", extra={"response_template": broken})
    code, out, _ = run(capsys, "verify", str(folder))
    assert code == 1 and "own response_template" in out


# --------------------------------------------------------------------------- bad input: exit 2, one line


def test_missing_folder(tmp_path, capsys):
    for command in ("detect", "verify", "upgrade"):
        code, _, err = run(capsys, command, str(tmp_path / "nope"))
        assert_one_line_error(code, err, str(tmp_path / "nope"), "no such file or folder")


def test_folder_without_tokenizer_config(tmp_path, capsys):
    folder = tmp_path / "tok"
    folder.mkdir()
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    before = snapshot(folder)
    for command in ("detect", "verify", "upgrade"):
        code, _, err = run(capsys, command, str(folder))
        assert_one_line_error(code, err, str(folder), "tokenizer_config.json")
    assert snapshot(folder) == before


def test_unreadable_json(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok")
    (folder / "tokenizer_config.json").write_text('{"chat_template": "x",', encoding="utf-8")
    before = snapshot(folder)
    for command in ("detect", "verify", "upgrade"):
        code, _, err = run(capsys, command, str(folder))
        assert_one_line_error(code, err, "tokenizer_config.json", "unreadable JSON", "line 1")
    assert snapshot(folder) == before


def test_not_utf8(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok")
    (folder / "tokenizer_config.json").write_bytes(b'{"a": "\xff"}')
    code, _, err = run(capsys, "upgrade", str(folder))
    assert_one_line_error(code, err, "tokenizer_config.json", "not UTF-8")


def test_no_chat_template(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    del config["chat_template"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    before = snapshot(folder)
    for argv in (["detect", str(folder)], ["verify", str(folder)], ["upgrade", str(folder)],
                 ["upgrade", str(folder), "--template", "qwen3"]):
        code, _, err = run(capsys, *argv)
        assert_one_line_error(code, err, str(folder), "no chat template")
    assert snapshot(folder) == before


def test_hub_repo_while_offline(capsys):
    for command in ("detect", "verify", "upgrade"):
        code, _, err = run(capsys, command, "some-org/some-model")
        assert_one_line_error(code, err, "some-org/some-model", "offline", "HF_HUB_OFFLINE")


def test_hub_repo_without_network(capsys, monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE")

    def no_network(**kwargs):
        raise ConnectionError("Failed to establish a new connection: [Errno 101] Network is unreachable")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_network)
    code, _, err = run(capsys, "detect", "some-org/some-model")
    assert_one_line_error(code, err, "some-org/some-model", "cannot reach the Hugging Face Hub")


def test_unknown_template_name(tmp_path, capsys):
    folder = make_tokenizer_folder(tmp_path / "tok")
    before = snapshot(folder)
    for command in ("verify", "upgrade"):
        code, _, err = run(capsys, command, str(folder), "--template", "nope")
        assert_one_line_error(code, err, "--template", "unknown response template 'nope'", "smollm3")
    code, _, err = run(capsys, "parse", "--template", "nope", str(folder / "tokenizer.json"))
    assert_one_line_error(code, err, "unknown response template")
    assert snapshot(folder) == before


@pytest.mark.parametrize(
    "content, cause",
    [
        ('{"fields": {"content": {"close": "<|im_end|>"}}}', "start_anchor"),
        ('{"start_anchor": "x", "fields": {"a": {"open": "<a>", "content": "nope"}}}', "invalid response template"),
        ("[1, 2]", "must be a JSON object"),
        ("{nope", "unreadable JSON"),
    ],
)
def test_template_file_failing_validation(tmp_path, capsys, content, cause):
    folder = make_tokenizer_folder(tmp_path / "tok")
    tpl = tmp_path / "bad.json"
    tpl.write_text(content, encoding="utf-8")
    before = snapshot(folder)
    for command in ("verify", "upgrade"):
        code, _, err = run(capsys, command, str(folder), "--template", str(tpl))
        assert_one_line_error(code, err, str(tpl), cause)
    assert snapshot(folder) == before


def test_missing_input_and_tools_files(tmp_path, capsys):
    code, _, err = run(capsys, "parse", "--template", "smollm3", str(tmp_path / "none.txt"))
    assert_one_line_error(code, err, "none.txt", "no such file")
    raw = tmp_path / "out.txt"
    raw.write_text("hi", encoding="utf-8")
    code, _, err = run(capsys, "parse", "--template", "smollm3", "--tools", str(tmp_path / "t.json"), str(raw))
    assert_one_line_error(code, err, "t.json", "no such file")
    (tmp_path / "t.json").write_text('{"x": 1}', encoding="utf-8")
    code, _, err = run(capsys, "parse", "--template", "smollm3", "--tools", str(tmp_path / "t.json"), str(raw))
    assert_one_line_error(code, err, "t.json", "tool schemas")


def test_debug_shows_the_traceback(tmp_path, capsys):
    code, _, err = run(capsys, "--debug", "detect", str(tmp_path / "nope"))
    assert code == 2
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("hf-response-templates: error: ")
    code, _, err = run(capsys, "detect", str(tmp_path / "nope"), "--debug")
    assert code == 2 and "Traceback" in err


def test_bad_input_in_a_real_subprocess(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "hf_response_templates", "upgrade", str(tmp_path / "nope")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_tokenizer_pieces_without_offsets_decode_in_linear_work(tmp_path):
    """A tokenizer without offset mappings (a slow one) is split by incremental decoding: the pieces are
    the text, split at token boundaries, and each decode call sees a couple of tokens, not a prefix."""
    from transformers import AutoTokenizer

    from hf_response_templates.cli import tokenizer_pieces

    fast = AutoTokenizer.from_pretrained(make_tokenizer_folder(tmp_path / "tok", "smollm3"))
    decoded_lengths: list[int] = []

    class NoOffsets:
        def __call__(self, *args, **kwargs):
            raise NotImplementedError("return_offsets_mapping is not available for this tokenizer")

        def encode(self, *args, **kwargs):
            return fast.encode(*args, **kwargs)

        def decode(self, ids, **kwargs):
            decoded_lengths.append(len(ids))
            return fast.decode(ids, **kwargs)

    text = RAW * 20
    pieces = tokenizer_pieces(NoOffsets(), text)
    ids = fast.encode(text, add_special_tokens=False)
    assert "".join(pieces) == text
    assert len(pieces) >= len(ids) // 2  # token-sized pieces, not a few big ones
    assert "<think>" in pieces and "<|im_end|>" in pieces  # special tokens arrive whole
    assert max(decoded_lengths) <= 8 and sum(decoded_lengths) <= 6 * len(ids)
