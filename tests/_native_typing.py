"""Transformers' native tool-argument typing, where it changed between 5.x releases.

Transformers 5.25 (`chat_parsing.content_parsers.TYPED_STRUCTURED_PARSERS`) stopped casting the arguments of a
`json` or `python-call-list` body wherever the parameter's schema admits a string: the body's own syntax already
tells `"8"` from `8`, so native leaves the argument exactly as the model wrote it. This package follows 5.25
(`hf_response_templates.tools`, `TYPED_BODY`). Transformers 5.24 casts such an argument by the rule both keep for
text bodies (`xml-inline`, `kv-lines`): `"8"` is `8` for `["integer", "string"]`, `"null"` is None where null is
admitted. The tests that use native as an oracle compare with what the installed native version does:
`native_argument` is the argument native gives, told apart by what native exports, not by its version number.

One difference is deliberate, on every native version: native (>= 5.25) types nothing in a field with
`value_parser_by`, where this package types the calls as a JSON body's (`TYPED_BODY`): the values the model's tag
chose a parser for stay as that parser gave them where the schema admits a string, but a string for a parameter
that admits no string is cast (DeepSeek V3.2's `string="true"` `"42"` is `42` for `integer`, as vLLM gives; a
strict tool would reject `"42"`). `native_value_parser_by_argument` models exactly that difference.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from hf_response_templates.tools import _schema_types, cast_value

try:
    from transformers.utils.chat_parsing import content_parsers as _native_parsers
except ImportError:  # Transformers 4.x (no native parser) or a 5.x without the package
    _native_parsers = None

#: Whether the installed native parser leaves the arguments of a JSON body alone where a string is admitted
#: (Transformers >= 5.25), read from what it exports rather than from its version number.
NATIVE_KEEPS_JSON_STRINGS = _native_parsers is not None and "json" in getattr(
    _native_parsers, "TYPED_STRUCTURED_PARSERS", ()
)


def native_argument(ours: Any, written: Any, schema: Any) -> Any:
    """The argument native gives for a JSON body's argument `written` under parameter `schema`, where ours (the
    5.25 rule) gives `ours`: `ours` on Transformers >= 5.25; on 5.24, where the schema admits a string, a string
    argument cast by the text-body rule (`cast_value`: what 5.24 does, apart from its lenient casts of text that
    is not JSON, which the tests that call this filter out), else `ours`."""
    if NATIVE_KEEPS_JSON_STRINGS or not isinstance(written, str) or "string" not in _schema_types(schema):
        return ours
    return cast_value(written, schema)


def _holds_string(value: Any) -> bool:
    """Whether `value` is a string or a list / dict holding one at any depth (what typing could cast)."""
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return any(_holds_string(v) for v in value)
    return isinstance(value, dict) and any(_holds_string(v) for v in value.values())


def casts_in_value_parser_by(written: Any, schema: Any) -> bool:
    """Whether this package's typing of a `value_parser_by` field may change the argument `written` (what the
    tag's parser gave) under parameter `schema`: a string (or one held in a list or dict) for a parameter whose
    schema admits no string. Everywhere else it stays `written`, as in native."""
    return isinstance(schema, Mapping) and "string" not in _schema_types(schema) and _holds_string(written)


def ours_value_parser_by_argument(written: Any, schema: Any) -> Any:
    """The argument this package gives with `tools=` for a `value_parser_by` field's argument `written` (what both
    give without `tools=`): cast as a typed body's where `casts_in_value_parser_by`, else `written`."""
    if not casts_in_value_parser_by(written, schema):
        return written
    return cast_value(copy.deepcopy(written), schema, True)


def native_value_parser_by_argument(ours: Any, written: Any, schema: Any) -> Any:
    """The argument native (>= 5.25, which types nothing in a `value_parser_by` field) gives with `tools=`, where
    this package gives `ours` and both give `written` without `tools=`: `written` where ours may have cast it
    (`casts_in_value_parser_by`: the one deliberate difference), else `ours` (which is `written` there)."""
    return written if casts_in_value_parser_by(written, schema) else ours
