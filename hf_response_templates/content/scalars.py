"""The `int`, `float` and `bool` content parsers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def parse_int(text: str, args: Mapping[str, Any]) -> int:
    raw = text.strip()
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"not an integer: {raw!r}") from None


def parse_float(text: str, args: Mapping[str, Any]) -> float:
    raw = text.strip()
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"not a number: {raw!r}") from None


_TRUE = frozenset({"true", "1"})


_FALSE = frozenset({"false", "0"})


def parse_bool(text: str, args: Mapping[str, Any]) -> bool:
    raw = text.strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"not a boolean (expected true/false/1/0): {text.strip()!r}")
