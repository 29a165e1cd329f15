#!/usr/bin/env bash
# Fresh-install check (CI): build the wheel, install it into an empty virtual environment (PyPI only, no
# torch, nothing from this checkout on the path) and run the command line a new user runs first:
# `--version`, `list`, `detect`, `verify` and `upgrade --dry-run` on a local tokenizer folder, plus
# zero-config `tokenizer.parse_response`. Any missing dependency fails here (verify must pass all cases
# it can check, with no "n/a (ImportError ...)").
#
#   bash scripts/check_wheel.sh            # uses python3; PYTHON=python3.12 to choose another
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONDONTWRITEBYTECODE=1

echo "== building the wheel"
"$PYTHON" -m pip wheel -q --no-deps -w "$WORK/dist" "$ROOT"
WHEEL="$(ls "$WORK"/dist/hf_response_templates-*.whl)"
"$PYTHON" - "$WHEEL" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = {"hf_response_templates/fingerprints.json", "hf_response_templates/templates/qwen3.json",
        "hf_response_templates/py.typed"}
missing = need - names
assert not missing, f"missing from the wheel: {sorted(missing)}"
assert any(n.endswith("licenses/LICENSE") for n in names), "no LICENSE in the wheel"
print(f"   {sys.argv[1].rsplit('/', 1)[-1]}: {len(names)} files")
PY

echo "== installing it into an empty virtual environment"
"$PYTHON" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
CLI="$WORK/venv/bin/hf-response-templates"
HF_HUB_OFFLINE=0 "$VPY" -m pip install -q "$WHEEL"

cd "$WORK"  # nothing of the checkout is importable from here
echo "== a tokenizer folder (Qwen3's real chat template, a tiny byte-level BPE)"
"$VPY" - "$ROOT/tests" "$WORK/qwen3-tok" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])  # tests/_cli_helpers.py only (it needs `tokenizers`, a Transformers dependency)
from _cli_helpers import make_tokenizer_folder
make_tokenizer_folder(sys.argv[2], "qwen3")
PY

set -x
"$CLI" --version
"$CLI" list
"$CLI" detect "$WORK/qwen3-tok"
"$CLI" verify "$WORK/qwen3-tok" | tee "$WORK/verify.txt"
if grep -q "ImportError" "$WORK/verify.txt"; then echo "!! verify met a missing dependency" >&2; exit 1; fi
"$CLI" upgrade "$WORK/qwen3-tok" --dry-run | grep -q '"response_template"'
"$VPY" -m hf_response_templates demo >/dev/null
"$VPY" - "$WORK/qwen3-tok" <<'PY'
import sys
import hf_response_templates  # noqa: F401
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1])
assert tok.response_template is None
message = tok.parse_response("<think>ok</think>Hi!<|im_end|>", prefix="<|im_start|>assistant\n")
assert message == {"role": "assistant", "reasoning_content": "ok", "content": "Hi!"}, message
print("zero-config parse_response:", message)
PY
set +x
echo "== the installed wheel works"
