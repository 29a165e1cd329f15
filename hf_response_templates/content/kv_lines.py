"""The `kv-lines` content parser: one `key<kv_sep>value` pair per line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def parse_kv_lines(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """`key<kv_sep>value` lines -> dict; empty lines and lines without the separator are skipped."""
    line_sep = args.get("line_sep", "\n")
    kv_sep = args.get("kv_sep", ":")
    strip = args.get("strip", True)
    value_parser = args.get("value_parser")
    out: dict[str, Any] = {}
    for line in text.split(line_sep):
        if strip:
            line = line.strip()
        if not line or kv_sep not in line:
            continue
        key, value = line.split(kv_sep, 1)
        if strip:
            key, value = key.strip(), value.strip()
        out[key] = value_parser(value) if value_parser else value
    return out
