"""Run a counting script once per checkout, each in a child process (so both import as `hf_response_templates`):
the shared driver of `ops_stream.py` and `ops_oneshot.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def counts_by_checkout(script: str, names: list[str], base: Path | None, extra: list[str]) -> dict[str, Any]:
    """{"ours": ..., "base": ...}: what `script --child --templates NAMES *extra` prints (JSON) when run with this
    checkout and with `base` (if given) first on ``PYTHONPATH``."""
    roots = {"ours": HERE.parent, **({"base": base.resolve()} if base else {})}
    got = {}
    for label, root in roots.items():
        env = {**os.environ, "PYTHONPATH": str(root)}
        cmd = [sys.executable, str(Path(script).resolve()), "--child", "--templates", ",".join(names), *extra]
        got[label] = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    return got
