"""Transformers' native tool-argument typing, where it changed between 5.x releases.

Transformers 5.25 (`chat_parsing.content_parsers.TYPED_STRUCTURED_PARSERS`) stopped casting the arguments of a
`json` or `python-call-list` body wherever the parameter's schema admits a string: the body's own syntax already
tells `"8"` from `8`, so native leaves the argument exactly as the model wrote it. This package follows 5.25
(`hf_response_templates.tools`, `TYPED_BODY`). Transformers 5.24 casts such an argument by the rule both keep for
text bodies (`xml-inline`, `kv-lines`): `"8"` is `8` for `["integer", "string"]`, `"null"` is None where null is
admitted. The tests that use native as an oracle compare with what the installed native version does:
`native_argument` is the argument native gives, told apart by what native exports, not by its version number.
"""

from __future__ import annotations

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
