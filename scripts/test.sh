#!/usr/bin/env bash
# The project's one test command: runs the test suite on the newest Transformers 5.x and on 4.46.x.
#
#   bash scripts/test.sh                 # both environments
#   bash scripts/test.sh -x -k tokenizer # extra arguments go to pytest
#   HFRT_ENVS=tf5 bash scripts/test.sh   # only one environment (tf5 or tf4)
#   HFRT_REFRESH=1 bash scripts/test.sh  # rebuild the environments (e.g. to pick up a newer 5.x)
#
# It needs nothing installed by hand: it creates two virtual environments inside the repository
# (.venv-tf5, .venv-tf4), installs torch 2.13.0 first (the CPU build; a plain `pip install torch`
# could pull a multi-GB CUDA build), then the project with its test extras and the Transformers pin,
# and reuses them on later runs while pyproject.toml, the pins and the repository path are unchanged.
# Exits non-zero if either environment fails.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
TORCH_SPEC="${HFRT_TORCH_SPEC:-torch==2.13.0}"
TF5_SPEC="${HFRT_TF5_SPEC:-transformers>=5,<6}"
TF4_SPEC="${HFRT_TF4_SPEC:-transformers==4.46.*}"
ENVS="${HFRT_ENVS:-tf5 tf4}"

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

stamp_of() {  # what an environment was built from; a change triggers a reinstall
    {
        echo "root=$ROOT torch=$TORCH_SPEC transformers=$1 python=$("$PYTHON" -c 'import sys; print(sys.version)')"
        cat pyproject.toml
    } | sha256sum | cut -d' ' -f1
}

ensure_env() {  # ensure_env <dir> <transformers spec>
    local dir="$1" spec="$2" stamp
    stamp="$(stamp_of "$spec")"
    if [[ -z "${HFRT_REFRESH:-}" && -f "$dir/.hfrt-stamp" && "$(cat "$dir/.hfrt-stamp")" == "$stamp" ]] &&
        "$dir/bin/python" -c "import torch, transformers, tokenizers, pytest, hf_response_templates" 2>/dev/null; then
        echo "== reusing $dir ($("$dir/bin/python" -c 'import transformers; print("transformers", transformers.__version__)'))"
        return 0
    fi
    echo "== building $dir ($spec)"
    rm -rf "$dir"
    "$PYTHON" -m venv "$dir" || return 1
    "$dir/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    # torch first, pinned, so nothing later resolves it to a CUDA build
    "$dir/bin/python" -m pip install -q "$TORCH_SPEC" || return 1
    "$dir/bin/python" -m pip install -q -e ".[test,torch]" "$TORCH_SPEC" "$spec" || return 1
    echo "$stamp" >"$dir/.hfrt-stamp"
}

declare -A RESULT=()
status=0
for env in $ENVS; do
    case "$env" in
        tf5) dir="$ROOT/.venv-tf5" spec="$TF5_SPEC" ;;
        tf4) dir="$ROOT/.venv-tf4" spec="$TF4_SPEC" ;;
        *) echo "unknown environment '$env' (use tf5 and/or tf4)" >&2; exit 2 ;;
    esac
    if ! ensure_env "$dir" "$spec"; then
        echo "!! could not build $dir" >&2
        RESULT[$env]="setup failed"
        status=1
        continue
    fi
    version="$("$dir/bin/python" -c 'import transformers, torch; print(f"transformers {transformers.__version__}, torch {torch.__version__}")')"
    echo
    echo "================ testing on $env: $version ================"
    if "$dir/bin/python" -m pytest "$@"; then
        RESULT[$env]="passed ($version)"
    else
        RESULT[$env]="FAILED ($version)"
        status=1
    fi
done

echo
echo "================ summary ================"
for env in $ENVS; do
    echo "$env: ${RESULT[$env]:-not run}"
done
exit $status
