"""`value_parser` / `value_parser_by` (and its older spelling `value_parsers`): the content parser a structured
parser reads each value with (`xml-inline`, `kv-lines`), with the usual ones (`text`, `json` or text) read without
option lookups."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import TemplateError
from .base import ParseFn, get_content_parser
from .json_values import _loads, parse_json
from .text import parse_text


def _value_parser(value: Any, field: str, key: str) -> Callable[[str], Any]:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise TemplateError(
            'must be a dict like {"name": "json", "args": {...}}', field=field, key=key
        )
    unknown = set(value) - {"name", "args"}
    if unknown:
        raise TemplateError(f"unknown keys {sorted(unknown)} (accepted: name, args)", field=field, key=key)
    parser = get_content_parser(value["name"], field=field, key=f"{key}.name")
    args = parser.compile_args(value.get("args"), field, f"{key}.args")
    parse = parser.parse
    fast = _fast_value_parser(parse, args)
    return fast if fast is not None else lambda text: parse(text, args)


def _json_or_text(text: str) -> Any:
    """`parse_json(text, {"allow_non_json": True})` (a value parser reading JSON, else keeping the text)."""
    try:
        return _loads(text)
    except (ValueError, RecursionError):
        return text.strip()


def _fast_value_parser(parse: ParseFn, args: Mapping[str, Any]) -> Callable[[str], Any] | None:
    """`lambda text: parse(text, args)` without the parser's option lookups, for the usual value parsers
    (`text` as it is or stripped, `json` with `allow_non_json` alone); None for any other."""
    if parse is parse_text and not args.keys() - {"strip"}:
        return str.strip if args.get("strip", True) else _as_is
    if parse is parse_json and args == {"allow_non_json": True}:
        return _json_or_text
    return None


def _as_is(text: str) -> str:
    return text


def _value_parsers(value: Any, field: str, key: str) -> dict[str, Callable[[str], Any]]:
    """`value_parsers`: `{text of the value_parser_group: value parser}`, each entry a parser name or a
    `{"name", "args"}` dict as for `value_parser`."""
    if not isinstance(value, dict) or not value:
        raise TemplateError(
            'must be a non-empty dict like {"true": "text", "false": {"name": "json"}}: the text of the '
            "value_parser_group -> a value parser (a name, or {\"name\", \"args\"})",
            field=field,
            key=key,
        )
    out = {}
    for text, spec in value.items():
        if not isinstance(text, str):
            raise TemplateError(f"keys must be strings (the group's text), got {text!r}", field=field, key=key)
        out[text] = _value_parser({"name": spec} if isinstance(spec, str) else spec, field, f"{key}.{text}")
    return out


def _value_parser_by(value: Any, field: str, key: str) -> tuple[str, dict[str, Callable[[str], Any]]] | None:
    """`value_parser_by` (Transformers' spelling, 5.25): `{"group": a named group of tag_pattern, "parsers": {what
    that group captures: a value parser}}`, each parser a `{"name", "args"}` dict as for `value_parser`. Checked
    as Transformers reads it: `group` a string, `parsers` a dict (empty is allowed: every value then takes
    `value_parser`), each entry a dict (Transformers has no shorthand for a parser's name alone); None counts as
    absent, as there. Returns `(group, {capture: compiled value parser})`, or None; the group is checked against
    `tag_pattern` by `xml_inline._prepare_xml_inline`, which files it as `value_parser_group` / `value_parsers`."""
    if value is None:
        return None
    shape = ('must be a dict like {"group": "string", "parsers": {"true": {"name": "text"}, "false": {"name": '
             '"json"}}}: the named group of tag_pattern whose capture picks each value\'s parser, and a dict from '
             "what that group captures to a value parser")
    if not isinstance(value, dict):
        raise TemplateError(f"{shape}; got {type(value).__name__}", field=field, key=key)
    unknown = set(value) - {"group", "parsers"}
    if unknown:
        raise TemplateError(f"unknown keys {sorted(unknown)} (accepted: group, parsers)", field=field, key=key)
    group, parsers = value.get("group"), value.get("parsers")
    if not isinstance(group, str) or not group:
        raise TemplateError(f"must be a non-empty string (a named group of tag_pattern), got {group!r}",
                            field=field, key=f"{key}.group")
    if not isinstance(parsers, dict):
        raise TemplateError(
            'must be a dict from what the group captures to a value parser ({"name", "args"}), '
            f"got {type(parsers).__name__}", field=field, key=f"{key}.parsers")
    out = {}
    for text, spec in parsers.items():
        if not isinstance(text, str):
            raise TemplateError(f"keys must be strings (what the group captures), got {text!r}", field=field,
                                key=f"{key}.parsers")
        out[text] = _value_parser(spec, field, f"{key}.parsers.{text}")
    return group, out
