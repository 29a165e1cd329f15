"""Byte-preserving edits of a JSON file's top-level object (used to add ``response_template`` to
``tokenizer_config.json``).

Theory of operation
-------------------
Re-serialising a config (``json.load`` then ``json.dump``, or ``save_pretrained``) rewrites every byte:
key order, indentation, escapes, number formats and the trailing newline may all change, which makes
a Hub pull request unreadable and can change values (float formatting). This module never re-serialises
the existing content. It scans the top-level object once to find where each member's key and value
start and end (:func:`scan_top_level`), detects the file's formatting style (:func:`detect_style`), and
then splices one new member in (before the closing brace of the top-level object) or replaces one
member's value, rendering only the new value in the detected style. Every other byte of the file stays
exactly as it was; :func:`set_key` checks the result parses to the old object plus the new key.

Example:
    >>> text = '{\\n  "bos_token": "<s>",\\n  "eos_token": "</s>"\\n}\\n'
    >>> print(set_key(text, "response_template", {"fields": {}}), end="")
    {
      "bos_token": "<s>",
      "eos_token": "</s>",
      "response_template": {
        "fields": {}
      }
    }

No dependencies beyond the standard library.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonEditError", "JsonStyle", "Member", "TopLevel", "detect_style", "scan_top_level", "set_key", "unified_diff"]

_WS = " \t\r\n"
_DECODER = json.JSONDecoder()
# a \uXXXX escape (not itself escaped) of a non-ASCII code point: the file was written with ensure_ascii=True
_NON_ASCII_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7][0-9a-fA-F])[0-9a-fA-F]{4}")


class JsonEditError(ValueError):
    """The text is not a JSON object this module can edit (the message says where and why)."""


@dataclass(frozen=True)
class Member:
    """One member of the top-level object: ``text[key_start:key_end]`` is the quoted key,
    ``text[value_start:value_end]`` the value."""

    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class TopLevel:
    """Positions of the top-level object's braces and members."""

    open_pos: int
    close_pos: int
    members: tuple[Member, ...]


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON file is formatted.

    Attributes:
        indent: one level of indentation (``"  "``, ``"    "``, ``"\\t"``), or ``None`` for a
            single-line (compact) file.
        member_indent: the whitespace before each top-level key on its line (indented files).
        key_sep: what separates a key from its value (``": "`` or ``":"``).
        item_sep: what separates members in a single-line file (``", "`` or ``","``).
        newline: ``"\\n"`` or ``"\\r\\n"``.
        ensure_ascii: non-ASCII characters are written as ``\\uXXXX`` escapes.
    """

    indent: str | None = "  "
    member_indent: str = "  "
    key_sep: str = ": "
    item_sep: str = ", "
    newline: str = "\n"
    ensure_ascii: bool = False

    def dumps(self, value: Any, *, base_indent: str | None = None) -> str:
        """Render ``value`` as the value of a top-level member in this style."""
        if self.indent is None:
            return json.dumps(value, ensure_ascii=self.ensure_ascii, separators=(self.item_sep, self.key_sep))
        text = json.dumps(value, ensure_ascii=self.ensure_ascii, indent=self.indent, separators=(",", self.key_sep))
        base = self.member_indent if base_indent is None else base_indent
        # json.dumps indents nested lines for a value at column 0; the member sits at `base`
        return (self.newline + base).join(text.split("\n"))


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {col}"


def scan_top_level(text: str) -> TopLevel:
    """Find the top-level object's braces and the exact span of every member.

    Raises:
        JsonEditError: the text is not a single JSON object.
    """
    pos = 1 if text.startswith("\ufeff") else 0
    pos = _skip_ws(text, pos)
    if pos >= len(text) or text[pos] != "{":
        raise JsonEditError(f"expected a JSON object at {_where(text, pos)}")
    open_pos = pos
    members: list[Member] = []
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "}":
        close_pos = pos
    else:
        while True:
            if pos >= len(text) or text[pos] != '"':
                raise JsonEditError(f"expected a key at {_where(text, pos)}")
            try:
                key, key_end = _DECODER.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise JsonEditError(f"{exc.msg} at {_where(text, exc.pos)}") from None
            colon = _skip_ws(text, key_end)
            if colon >= len(text) or text[colon] != ":":
                raise JsonEditError(f"expected ':' at {_where(text, colon)}")
            value_start = _skip_ws(text, colon + 1)
            try:
                _value, value_end = _DECODER.raw_decode(text, value_start)
            except json.JSONDecodeError as exc:
                raise JsonEditError(f"{exc.msg} at {_where(text, exc.pos)}") from None
            members.append(Member(key, pos, key_end, value_start, value_end))
            pos = _skip_ws(text, value_end)
            if pos < len(text) and text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
                continue
            if pos < len(text) and text[pos] == "}":
                close_pos = pos
                break
            raise JsonEditError(f"expected ',' or '}}' at {_where(text, pos)}")
    rest = _skip_ws(text, close_pos + 1)
    if rest != len(text):
        raise JsonEditError(f"extra data after the top-level object at {_where(text, rest)}")
    return TopLevel(open_pos, close_pos, tuple(members))


def _most_common(values: list[str], default: str) -> str:
    return Counter(values).most_common(1)[0][0] if values else default


def detect_style(text: str, top: TopLevel | None = None) -> JsonStyle:
    """Detect the formatting style of a JSON object file (see :class:`JsonStyle`).

    ``ensure_ascii`` is true when the file escapes non-ASCII characters (``\\u00e9``), false when it
    contains raw non-ASCII text; a pure-ASCII file without such escapes gets ``False``, which is what
    Transformers' ``save_pretrained`` writes.
    """
    top = top or scan_top_level(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    if any(ord(c) > 127 for c in text if c != "\ufeff"):
        ensure_ascii = False
    else:
        ensure_ascii = bool(_NON_ASCII_ESCAPE.search(text))
    members = top.members
    key_sep = _most_common([text[m.key_end : m.value_start] for m in members], ": ")
    # before each key: the text since the previous ',' (or '{')
    lead_ins = []
    previous_end = top.open_pos + 1
    for m in members:
        between = text[previous_end : m.key_start]
        lead_ins.append(between[between.find(",") + 1 :] if "," in between else between)
        previous_end = m.value_end
    multiline = any("\n" in lead for lead in lead_ins) or (not members and "\n" in text[top.open_pos : top.close_pos])
    if not multiline:
        item_seps = [text[members[i].value_end : members[i + 1].key_start] for i in range(len(members) - 1)]
        default_sep = ", " if key_sep.endswith(" ") else ","
        item_sep = _most_common([s for s in item_seps if s.strip() == ","], default_sep)
        if not members:
            return JsonStyle(indent="  ", member_indent="  ", key_sep=key_sep, newline=newline, ensure_ascii=ensure_ascii)
        return JsonStyle(indent=None, member_indent="", key_sep=key_sep, item_sep=item_sep, newline=newline,
                         ensure_ascii=ensure_ascii)
    member_indent = _most_common([lead.rsplit("\n", 1)[-1] for lead in lead_ins if "\n" in lead], "  ")
    member_indent = member_indent.replace("\r", "")
    indent = _nested_indent_unit(text, members, member_indent) or member_indent or "  "
    return JsonStyle(indent=indent, member_indent=member_indent, key_sep=key_sep, newline=newline,
                     ensure_ascii=ensure_ascii)


def _nested_indent_unit(text: str, members: tuple[Member, ...], member_indent: str) -> str | None:
    """The indentation step inside a multi-line container value, when the file has one."""
    for m in members:
        if text[m.value_start] not in "[{":
            continue
        body = text[m.value_start : m.value_end]
        lines = body.split("\n")
        if len(lines) < 3:
            continue
        inner = lines[1].rstrip("\r")
        stripped = inner.lstrip(" \t")
        lead = inner[: len(inner) - len(stripped)]
        if lead.startswith(member_indent) and len(lead) > len(member_indent):
            return lead[len(member_indent) :]
    return None


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    lead = text[line_start:pos]
    return lead if lead.strip() == "" else ""


def set_key(text: str, key: str, value: Any, *, style: JsonStyle | None = None) -> str:
    """Return ``text`` with the top-level ``key`` set to ``value``, every other byte unchanged.

    A new key is inserted as the last member, just before the closing brace; an existing key (the
    last occurrence, which is the one JSON parsers keep) has only its value replaced. The value is
    rendered in the file's style (:func:`detect_style`) unless ``style`` is given.

    Raises:
        JsonEditError: the text is not a JSON object, or the edit would not produce exactly the old
            object plus the new value (a safety check).
    """
    top = scan_top_level(text)
    style = style or detect_style(text, top)
    existing = [m for m in top.members if m.key == key]
    if existing:
        m = existing[-1]
        new_value = style.dumps(value, base_indent=_line_indent(text, m.key_start) if style.indent is not None else None)
        result = text[: m.value_start] + new_value + text[m.value_end :]
    else:
        quoted_key = json.dumps(key, ensure_ascii=style.ensure_ascii)
        if top.members:
            last = top.members[-1]
            if style.indent is None:
                lead = style.item_sep
            else:
                lead = "," + style.newline + style.member_indent
            insertion = lead + quoted_key + style.key_sep + style.dumps(value)
            result = text[: last.value_end] + insertion + text[last.value_end :]
        else:
            ind = style.member_indent or style.indent or "  "
            insertion = style.newline + ind + quoted_key + style.key_sep + style.dumps(value, base_indent=ind) + style.newline
            result = text[: top.open_pos + 1] + insertion + text[top.close_pos :]
    _check(text, result, key, value)
    return result


def _check(old_text: str, new_text: str, key: str, value: Any) -> None:
    old = json.loads(old_text.lstrip("\ufeff"))
    new = json.loads(new_text.lstrip("\ufeff"))
    expected = dict(old)
    expected[key] = value
    # compared as JSON text, so that NaN (which json accepts and != itself) compares equal
    if json.dumps(new, ensure_ascii=False) != json.dumps(expected, ensure_ascii=False):
        raise JsonEditError(f"internal error: editing {key!r} would change other content; nothing written")


def unified_diff(old: str, new: str, path: str) -> str:
    """A unified diff of two versions of a text file (``a/path`` -> ``b/path``)."""
    out = []
    for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
