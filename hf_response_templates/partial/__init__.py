"""Incremental partial parsers: what is stable so far in a region body that is still being written.

One interface for every content format that streams tool-call arguments (``json``, ``xml-inline``,
``python-call-list``), so that the delta adapters (`hf_response_templates.openai`) need no format knowledge:

* ``feed(text)``: add body text. The cost is proportional to ``len(text)`` (plus, for ``python-call-list``
  and ``xml-inline`` patterns without a known `content.TagShape`, the length of the one parameter or call
  being written when its end may have arrived), never to the length of the body so far. It may return True
  (``json`` and `XmlTagsPartial` do): all of ``text`` was appended, as it is, to the pieces of the open
  string value (`open_string`), and the structure did not change. Until the next ``feed``, the parser then
  only waits for more of that string: a caller may append text without ``"``, ``\\``, control characters or
  the parser's ``sink_stop`` character (if it has that attribute: ``<`` for XML tags) to those pieces itself
  instead of feeding it (what `DeltaStream` does while an argument streams).
* ``value``: the live partial value (containers are updated in place; `MISSING` before anything parsed).
  Strings still being written are not in it (see `open_string`), numbers are added when they end.
* ``complete(path)``: whether the node at ``path`` (keys / indexes from the root) can no longer change.
* ``frame(node)``: for a container still open, its `Frame` (member keys in order, the member being
  written); None for a node that is complete.
* ``open_string(frame)``: the decoded pieces of the string member being written in ``frame``, or None.
* ``version``: grows whenever the structure changes (a member starts or ends); unchanged while only the
  characters of an open string (or whitespace) arrive.
* ``broken``: the text can no longer be a prefix of a valid body (nothing more becomes stable).
* ``snapshot()``: a copy of the partial value, open strings included (for display).
* ``follow(frame)`` (optional; ``json``, its dialect `JsonDialectPartial` and `XmlTagsPartial` have it): write the members of the open object
  ``frame`` out as ``json.dumps`` writes them (``, `` and ``: `` separators, ``ensure_ascii=False``), from
  where the reader stands (False: not from here; None: never, for this parser). While `following` is that
  frame, ``feed`` returns the text those members add (a ``str``, possibly empty; or True as above: then
  ``text`` itself), and ``hold(text)`` keeps text that can neither complete a member nor open its string value, for less than a
  ``feed`` costs (True: kept); ``string_sink()`` is the open string value's pieces when text may be appended
  to them instead of fed. Members whose text is json.dumps's (integers, literals, floats as ``repr``
  writes them, strings, flat lists of scalars, keys without escapes) are read with string operations; at
  anything else (spaces, nested objects, ``1e5``, escaped keys), and at the object's end, `following` becomes
  None, `followed` is how many of its members the text written held whole, and the reader goes on as usual.
  The dialect's reader writes its members out from any spacing (see `JsonDialectPartial`); instead of
  ``string_sink()`` its custom-delimited string value has `sink` (text without its closing delimiter's first
  character, ``sink_stop``, may be appended).

`partial_parser(content, args)` makes the parser for a content format, or None if it has none.

The readers live in one module each: `base` (`MISSING`, `Frame`), `json_reader` (`JsonPartial`),
`json_dialect` (`JsonDialectPartial`), `xml_tags` (`XmlTagsPartial`, `XmlInlinePartial`), `call_list`
(`CallListPartial`); this package holds the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hf_response_templates.partial.base import MISSING, Frame
from hf_response_templates.partial.call_list import CallListPartial
from hf_response_templates.partial.json_dialect import JsonDialectPartial
from hf_response_templates.partial.json_reader import JsonPartial
from hf_response_templates.partial.xml_tags import XmlInlinePartial, XmlTagsPartial, _xml_inline

__all__ = [
    "MISSING",
    "Frame",
    "JsonPartial",
    "JsonDialectPartial",
    "XmlInlinePartial",
    "XmlTagsPartial",
    "CallListPartial",
    "partial_parser",
    "register_partial_parser",
    "has_partial_parser",
]


_FACTORIES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "json": lambda args: (
        JsonDialectPartial if args.get("unquoted_keys") or args.get("string_delims") else JsonPartial
    )(bool(args.get("unquoted_keys")), tuple(args.get("string_delims") or ())),
    "xml-inline": _xml_inline,
    "python-call-list": lambda args: CallListPartial(),
}


def register_partial_parser(content: str, factory: Callable[[Mapping[str, Any]], Any]) -> None:
    """Let a content format (e.g. one added with `register_content_parser`) stream tool-call arguments.

    ``factory(compiled_content_args)`` returns a new object with this package's interface (``feed``,
    ``value``, ``complete``, ``frame``, ``open_string``, ``version``, ``broken``, ``snapshot``).
    """
    _FACTORIES[content] = factory


def has_partial_parser(content: str) -> bool:
    """Whether `partial_parser` knows the content format."""
    return content in _FACTORIES


def partial_parser(content: str, args: Mapping[str, Any] | None = None) -> Any:
    """A new partial parser for a content format (``json``, ``xml-inline``, ``python-call-list``), or None.

    ``args``: the field's compiled ``content_args`` (`ContentParser.compile_args`).
    """
    factory = _FACTORIES.get(content)
    return None if factory is None else factory(args or {})
