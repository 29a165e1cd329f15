"""Content parsers: turn the raw text of a region into its value.

A content parser is a function `(text: str, args: Mapping) -> value`. Parsers live in a registry
keyed by name; `register_content_parser` adds your own. Each registered parser declares

* `streamable`: its chunks are part of the final value (`region_chunk` events with `dirty=False`);
  structured parsers stream raw text with `dirty=True`;
* `args`: the `content_args` it accepts, as `{name: validator}`, checked when a template is loaded.

Built-in parsers: `text`, `int`, `float`, `bool`, `json`, `xml-inline`, `kv-lines`, `python-call-list`.
None of them ever evaluates model text as code.

One module per job: `base` (the registry, `ContentParser`, shared argument checks), `patterns` (what a
regex's structure proves), `text` (`text` and its `Markup`), `scalars` (`int`, `float`, `bool`),
`json_values` (`json` and its dialects), `value_parsers` (the parser of each value), `xml_inline` (`xml-inline` and `TagShape`), `kv_lines`, and
`python_calls` (`python-call-list`).
"""

from __future__ import annotations

from .base import (  # noqa: F401 (the package's names, kept importable from `content`)
    _REGISTRY,
    DEFAULT_REGEX_TIMEOUT,
    MAX_NESTING,
    REGEX_TIMEOUT,
    ArgCheck,
    ContentParser,
    ParseFn,
    _nonempty_str,
    _required,
    _typed,
    content_parsers,
    get_content_parser,
    register_content_parser,
)
from .json_values import (  # noqa: F401 (the package's names, kept importable from `content`)
    _json_value,
    _prepare_json,
    _separator,
    _string_delims,
    _trailing,
    parse_json,
)
from .kv_lines import (  # noqa: F401 (the package's names, kept importable from `content`)
    parse_kv_lines,
)
from .python_calls import (  # noqa: F401 (the package's names, kept importable from `content`)
    parse_python_call_list,
    parse_python_literal,
)
from .scalars import (  # noqa: F401 (the package's names, kept importable from `content`)
    parse_bool,
    parse_float,
    parse_int,
)
from .text import (  # noqa: F401 (the package's names, kept importable from `content`)
    Markup,
    MarkupStream,
    _prepare_text,
    _remove_pattern,
    parse_text,
)
from .value_parsers import _value_parser, _value_parser_by, _value_parsers
from .xml_inline import (  # noqa: F401 (the package's names, kept importable from `content`)
    Chain,
    TagShape,
    _prepare_xml_inline,
    _tag_pattern,
    parse_xml_inline,
)

__all__ = [
    "ContentParser",
    "register_content_parser",
    "get_content_parser",
    "content_parsers",
    "DEFAULT_REGEX_TIMEOUT",
    "MAX_NESTING",
]

# --------------------------------------------------------------------------- registration


def _register_builtins() -> None:
    strip = _typed(bool)
    _REGISTRY["text"] = ContentParser(
        "text",
        parse_text,
        True,
        {"strip": strip, "remove_pattern": _remove_pattern, "report_as": _nonempty_str},
        prepare=_prepare_text,
    )
    _REGISTRY["int"] = ContentParser("int", parse_int, True, {})
    _REGISTRY["float"] = ContentParser("float", parse_float, True, {})
    _REGISTRY["bool"] = ContentParser("bool", parse_bool, True, {})
    _REGISTRY["json"] = ContentParser(
        "json",
        parse_json,
        False,
        {
            "unquoted_keys": _typed(bool),
            "string_delims": _string_delims,
            "allow_non_json": _typed(bool),
            "trailing": _trailing,
            "separator": _separator,
            "empty": _json_value,
        },
        prepare=_prepare_json,
    )
    _REGISTRY["xml-inline"] = ContentParser(
        "xml-inline",
        parse_xml_inline,
        False,
        {
            "tag_pattern": _required(_tag_pattern),
            "value_parser": _value_parser,
            "value_parser_by": _value_parser_by,
            "value_parser_group": _nonempty_str,
            "value_parsers": _value_parsers,
            "merge_duplicates": _typed(bool),
        },
        prepare=_prepare_xml_inline,
    )
    _REGISTRY["kv-lines"] = ContentParser(
        "kv-lines",
        parse_kv_lines,
        False,
        {"line_sep": _nonempty_str, "kv_sep": _nonempty_str, "strip": strip, "value_parser": _value_parser},
    )
    _REGISTRY["python-call-list"] = ContentParser("python-call-list", parse_python_call_list, False, {})


_register_builtins()
