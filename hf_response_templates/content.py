"""Content parsers: turn the raw text of a region into its value.

A content parser is a function `(text: str, args: Mapping) -> value`. Parsers live in a registry
keyed by name; `register_content_parser` adds your own. Each registered parser declares

* `streamable`: its chunks are part of the final value (`region_chunk` events with `dirty=False`);
  structured parsers stream raw text with `dirty=True`;
* `args`: the `content_args` it accepts, as `{name: validator}`, checked when a template is loaded.

Built-in parsers: `text`, `int`, `float`, `bool`, `json`, `xml-inline`, `kv-lines`, `python-call-list`.
None of them ever evaluates model text as code.
"""

from __future__ import annotations

import contextvars
import functools
import json
import re as _stdre
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import regex

try:  # the standard library's regex constants, used only to read the structure of a `tag_pattern`
    from re import _constants as _sre_constants
except ImportError:  # Python < 3.11
    import sre_constants as _sre_constants  # type: ignore[no-redef]

from .errors import RegexTimeoutError, TemplateError

__all__ = [
    "ContentParser",
    "register_content_parser",
    "get_content_parser",
    "content_parsers",
    "DEFAULT_REGEX_TIMEOUT",
    "MAX_NESTING",
]

#: Seconds one regex call may run before it is abandoned (see `RegexTimeoutError`).
DEFAULT_REGEX_TIMEOUT = 1.0
#: The timeout content parsers use for their own regexes (`tag_pattern`): the parser's `regex_timeout`
#: while a region is being parsed, `DEFAULT_REGEX_TIMEOUT` otherwise.
REGEX_TIMEOUT: contextvars.ContextVar[float] = contextvars.ContextVar("hf_response_templates_regex_timeout")
#: Deepest nesting of lists/dicts the `json` parser accepts with dialect options (plain JSON is bounded by
#: the interpreter's recursion limit, about the same depth); deeper input is a clear error, never a crash.
MAX_NESTING = 512

ParseFn = Callable[[str, Mapping[str, Any]], Any]
ArgCheck = Callable[[Any, str, str], Any]  # (value, field, key) -> compiled value


@dataclass(frozen=True)
class ContentParser:
    """A registered content parser.

    `compile_args(args, field)` validates `content_args` once, at template load time, and returns the
    object handed to `parse` for every region (so regexes are compiled once).
    """

    name: str
    parse: ParseFn
    streamable: bool = False
    args: Mapping[str, ArgCheck] | None = None  # None: accept any args unchecked
    #: Built-ins only: adds entries derived from the validated args (how to read a pattern's matches, say)
    #: once per template, so that `parse` does not work them out for every region.
    prepare: Callable[[dict[str, Any], str, str], None] | None = None

    def compile_args(self, args: Any, field: str, key: str = "content_args") -> Mapping[str, Any]:
        """Validate `args`; errors name `field` and `key` (`content_args`, or where a value parser's `args`
        sit: `content_args.value_parser.args`)."""
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise TemplateError(
                f"must be a dict of arguments for the {self.name!r} parser, got {type(args).__name__}",
                field=field,
                key=key,
            )
        if self.args is None:
            out = dict(args)
            if self.prepare is not None:
                self.prepare(out, field, key)
            return out
        unknown = sorted(set(args) - set(self.args))
        if unknown:
            allowed = ", ".join(sorted(self.args)) or "none"
            raise TemplateError(
                f"unknown argument(s) {unknown} for the {self.name!r} parser (accepted: {allowed})",
                field=field,
                key=key,
            )
        out = {k: self.args[k](v, field, f"{key}.{k}") for k, v in args.items()}
        missing = [k for k, check in self.args.items() if getattr(check, "required", False) and k not in out]
        if missing:
            raise TemplateError(
                f"the {self.name!r} parser requires {missing}", field=field, key=f"{key}.{missing[0]}"
            )
        if self.prepare is not None:
            self.prepare(out, field, key)
        return out


_REGISTRY: dict[str, ContentParser] = {}


def register_content_parser(
    name: str,
    parse: ParseFn,
    *,
    streamable: bool = False,
    args: Mapping[str, type | tuple[type, ...]] | None = None,
    overwrite: bool = False,
) -> ContentParser:
    """Register a content parser usable as `"content": name` in templates.

    Args:
        name: the name templates refer to.
        parse: `parse(text, args) -> value`. Raise `ValueError` on bad input: the region is then
            reported as malformed instead of failing the stream.
        streamable: chunks are part of the final value (`dirty=False`), as for `text`.
        args: accepted `content_args` as `{name: type or tuple of types}`; `None` accepts anything.
        overwrite: replace an existing parser of that name (built-ins included).

    Example:
        >>> register_content_parser("upper", lambda text, args: text.strip().upper(), streamable=True)
        ContentParser(name='upper', ...)
    """
    if not isinstance(name, str) or not name:
        raise ValueError("content parser name must be a non-empty string")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"a content parser named {name!r} is already registered (pass overwrite=True)")
    checks = None if args is None else {k: _typed(t) for k, t in args.items()}
    parser = ContentParser(name, parse, streamable, checks)
    _REGISTRY[name] = parser
    return parser


def get_content_parser(name: str, *, field: str = "?", key: str = "content") -> ContentParser:
    """The registered parser called `name`; `TemplateError` naming `field` if there is none."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise TemplateError(
            f"unknown content parser {name!r}; available: {', '.join(sorted(_REGISTRY))} "
            "(register your own with hf_response_templates.register_content_parser)",
            field=field,
            key=key,
        ) from None


def content_parsers() -> dict[str, ContentParser]:
    """A copy of the registry."""
    return dict(_REGISTRY)


# --------------------------------------------------------------------------- argument validators


def _typed(types: type | tuple[type, ...]) -> ArgCheck:
    def check(value: Any, field: str, key: str) -> Any:
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in _as_tuple(types))
        if not ok:
            want = " or ".join(t.__name__ for t in _as_tuple(types))
            raise TemplateError(f"must be {want}, got {type(value).__name__}", field=field, key=key)
        return value

    return check


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _required(check: ArgCheck) -> ArgCheck:
    check.required = True  # type: ignore[attr-defined]
    return check


def _nonempty_str(value: Any, field: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise TemplateError("must be a non-empty string", field=field, key=key)
    return value


def _string_delims(value: Any, field: str, key: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    if not isinstance(value, list):
        raise TemplateError("must be a list of [open, close] string pairs", field=field, key=key)
    for i, pair in enumerate(value):
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(s, str) and s for s in pair)
        ):
            raise TemplateError(
                f"item {i} must be a pair [open, close] of non-empty strings, got {pair!r}", field=field, key=key
            )
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _regex_arg(value: Any, field: str, key: str) -> regex.Pattern:
    """A regex argument (`tag_pattern`, `remove_pattern`), compiled like delimiter patterns."""
    from .delimiters import compile_regex
    from .template import MAX_PATTERN_LENGTH  # local: template imports this module

    if not isinstance(value, str) or not value:
        raise TemplateError("must be a non-empty regex string", field=field, key=key)
    if len(value) > MAX_PATTERN_LENGTH:
        raise TemplateError(f"is longer than {MAX_PATTERN_LENGTH} characters", field=field, key=key)
    try:
        return compile_regex(value)
    except regex.error as e:
        raise TemplateError(f"is not a valid regex ({e}): {value!r}", field=field, key=key) from None


def _tag_pattern(value: Any, field: str, key: str) -> regex.Pattern:
    pattern = _regex_arg(value, field, key)
    missing = {"key", "value"} - set(pattern.groupindex)
    if missing:
        raise TemplateError(
            f"must have the named groups (?P<key>...) and (?P<value>...); missing {sorted(missing)}",
            field=field,
            key=key,
        )
    if pattern.search("") is not None:
        raise TemplateError("matches the empty string, so it would match everywhere", field=field, key=key)
    return pattern


def _remove_pattern(value: Any, field: str, key: str) -> Markup:
    """`text`'s `remove_pattern`: a regex of inline markup; a group named `keep` is the text left in place."""
    pattern = _regex_arg(value, field, key)
    if pattern.search("") is not None:
        raise TemplateError("matches the empty string, so it would match everywhere", field=field, key=key)
    if _looks_around(pattern):
        raise TemplateError(
            "uses an anchor (^, $, \\A, \\Z, \\b) or a lookbehind: a streamed region is cleaned chunk by chunk, "
            "where those would see the start or end of a chunk; write the markup itself (lookaheads are fine)",
            field=field,
            key=key,
        )
    return Markup(pattern)


def _looks_around(pattern: regex.Pattern) -> bool:
    """Whether `pattern` has an anchor or a lookbehind anywhere (False if the standard library cannot
    read it: `regex`-only syntax is not checked)."""
    from .delimiters import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

    parsed = stdlib_parse(pattern.pattern)
    return parsed is not None and any(
        op is _sre_constants.AT or (op in _LOOKAROUNDS and av[0] < 0) for op, av in _every_item(parsed))


def _prepare_text(args: dict[str, Any], field: str, key: str) -> None:
    """`report_as` needs `remove_pattern` (it names where that pattern's matches are reported)."""
    if "report_as" in args and "remove_pattern" not in args:
        raise TemplateError(
            "needs remove_pattern: report_as names the message key that lists remove_pattern's matches",
            field=field,
            key=f"{key}.report_as",
        )


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


# --------------------------------------------------------------------------- basic types


def parse_text(text: str, args: Mapping[str, Any]) -> str:
    markup = args.get("remove_pattern")
    if markup is not None:
        text = markup.sub(text)
    return text.strip() if args.get("strip", True) else text


#: While a possible markup match is held back in a stream (`MarkupStream`), it is searched again on every
#: chunk up to this many held characters; past that, only each time the held text has doubled (so a `<co>`
#: that never closes costs linear time, not quadratic).
_MARKUP_RESEARCH = 256


class Markup:
    """The compiled `remove_pattern` of a `text` field: inline markup taken out of the text.

    Each match of `pattern` is replaced by the text of its `keep` group (removed whole if the pattern has
    no such group, or the group did not take part). `marks` reports the matches: for Cohere's citations
    `<co>Paris</co: 0:[1]>` with a pattern like `<co>(?P<keep>.*?)</co:\\s*(?P<sources>[^>]*)>` (the shipped
    one is stricter), the cited text `Paris` stays in the text and
    `{"start", "end", "text": "Paris", "sources": "0:[1]"}` is reported.
    """

    __slots__ = ("pattern", "keep", "groups", "first", "first_char", "leads", "trigger", "next_chars")

    def __init__(self, pattern: regex.Pattern):
        # local: structural helpers shared with the delimiter prefilters
        from .delimiters import _first_chars, _lead_trigger, _literal_leads, _partial_leads

        self.pattern = pattern
        self.keep = pattern.groupindex.get("keep")
        self.groups = tuple(name for name in pattern.groupindex if name != "keep")
        chars = _first_chars(pattern.pattern) if isinstance(pattern.pattern, str) else None
        #: the characters a match can start with, as one string (None if unknown): a chunk without any of
        #: them, with nothing held, is clean as it is (no regex search)
        self.first = "".join(sorted(chars)) if chars else None
        #: `first` when it is one character (the parser's `feed()` tests it inline), else None
        self.first_char = self.first if self.first is not None and len(self.first) == 1 else None
        #: fixed texts every match starts with (None if unknown): a text holding none of them has no match, so
        #: `sub` returns it without a regex search (a timed `regex` search costs ~2 µs even when it finds nothing)
        self.leads = _literal_leads(pattern.pattern) if isinstance(pattern.pattern, str) else None
        #: for a chunk that has one of them: a search for the fixed texts every match starts with, or a
        #: beginning of one at the end of the chunk (None if unknown); no find: the chunk is clean too
        partial = _partial_leads(pattern.pattern) if chars else None
        self.trigger = _lead_trigger(partial) if chars else None
        #: With `first_char`: the characters that follow it in those fixed texts, when all are longer than it
        #: (a text whose only `first_char` is its first, followed by none of them, is `plain`), else None
        self.next_chars = (
            "".join(sorted({t[1] for t in partial}))
            if self.first_char is not None and partial and self.trigger is not None
            and all(len(t) > 1 and t[0] == self.first_char for t in partial) else None
        )

    def plain(self, text: str) -> bool:
        """Whether no match (nor the beginning of one) can start in `text` (a chunk with nothing held)."""
        first = self.first
        if first is None:
            return False
        if text.find(first) < 0 if len(first) == 1 else not any(c in text for c in first):
            return True
        return self.trigger is not None and self.trigger(text) is None

    def kept(self, m: Any) -> str:
        """What a match leaves in the text."""
        return (m.group(self.keep) or "") if self.keep is not None else ""

    def sub(self, text: str) -> str:
        """`text` with every match replaced by its kept text."""
        leads = self.leads
        if leads is not None:
            for lead in leads:
                if lead in text:
                    break
            else:
                return text
        timeout = REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT)
        try:
            if self.pattern.search(text, timeout=timeout) is None:  # the common case: no markup at all
                return text
            return self.pattern.sub(self.kept, text, timeout=timeout)
        except TimeoutError:
            raise RegexTimeoutError(field=None, key="content_args.remove_pattern", pattern=self.pattern.pattern,
                                    timeout=timeout, text=text) from None

    def marks(self, text: str) -> list[dict[str, Any]]:
        """One dict per match of `text`: `start` and `end` of its kept text in `sub(text)`, that `text`,
        and the text of every other named group of the pattern (None if it did not take part)."""
        out: list[dict[str, Any]] = []
        shift = 0  # characters removed before the current match
        for m in self.pattern.finditer(text, timeout=REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT)):
            kept = self.kept(m)
            start = m.start() - shift
            out.append({"start": start, "end": start + len(kept), "text": kept,
                        **{name: m.group(name) for name in self.groups}})
            shift += len(m.group()) - len(kept)
        return out

    def stream(self) -> MarkupStream:
        """A cleaner for one streamed region (see `MarkupStream`)."""
        return MarkupStream()


def _may_grow(pattern: regex.Pattern, text: str, start: int) -> bool:
    """Whether all of `text` from `start` could be the beginning of a longer match (so a match found there
    now may not be the one the whole text gives)."""
    m = pattern.fullmatch(text, start, partial=True, timeout=REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT))
    return m is not None and m.partial


class MarkupStream:
    """`Markup.sub` applied to a region's text as it streams: `feed(chunk)` returns the clean text that is
    now certain, and holds back text from where a match may still be completing (a `regex` partial match).
    It holds no reference to the template (a parser's state pickles without it).

    A complete match is held too while the text from its start could still begin a longer match (an
    optional or repeated part may still grow, `_may_grow`). So the joined output is `Markup.sub` of the
    joined chunks, whatever the chunking, as long as no match can contain the start of another (`regex`
    reports a complete match before an earlier partial one); the usual markup, whose kept text excludes
    its opening tag, cannot. The region's value is always `Markup.sub` of its whole text.
    """

    __slots__ = ("held", "searched", "sent", "off")

    def __init__(self) -> None:
        self.held = ""  # text from where a partial match starts
        self.searched = 0  # len(held) when it was last searched
        self.sent = 0  # characters of clean text returned so far
        self.off = False  # a search timed out: nothing more is returned (the value at close is exact)

    def feed(self, markup: Markup, text: str) -> str:
        """The clean text of `text` (and of what was held before it) that later text cannot change."""
        if self.off:
            return ""
        if not self.held and markup.plain(text):
            self.sent += len(text)
            return text
        held = self.held + text if self.held else text
        if self.held and len(held) > _MARKUP_RESEARCH and len(held) < 2 * self.searched:
            self.held = held
            return ""
        search = markup.pattern.search
        out: list[str] = []
        pos = 0
        try:
            while True:
                m = search(held, pos, partial=True, timeout=REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT))
                if m is None:
                    out.append(held[pos:])
                    held = ""
                    break
                if m.partial or m.end() == len(held) or _may_grow(markup.pattern, held, m.start()):
                    # a match may still be completing, or still growing: an optional or repeated part, as
                    # in `<\|channel>(?:thought)?` on "<|channel>th"
                    out.append(held[pos : m.start()])
                    held = held[m.start() :]
                    break
                out.append(held[pos : m.start()])
                out.append(markup.kept(m))
                if m.end() == pos:  # a zero-width match (e.g. a lone lookahead): no progress is possible
                    out.append(held[pos:])
                    held = ""
                    break
                pos = m.end()
        except TimeoutError:
            self.off = True
            return ""
        self.held, self.searched = held, len(held)
        clean = "".join(out)
        self.sent += len(clean)
        return clean

    def rest(self, value: str) -> str:
        """At the close of the region: the clean text not returned yet, given the region's full clean
        text `value` (`Markup.sub` of all of it)."""
        return value[self.sent :]


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


# --------------------------------------------------------------------------- json


_NUMBER = _stdre.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")  # JSON digits are ASCII only
_BARE_KEY = _stdre.compile(r"\w+")  # a bare key (unquoted_keys); the partial JSON dialect reader reads keys with it too
_WS = _stdre.compile(r"[ \t\n\r]*")
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
#: The C scanner behind `json.loads` (one value from a position): `_loads` calls it directly.
_SCAN_ONCE = json.JSONDecoder().scan_once
_JSON_SPACE = " \t\n\r"


def _loads(text: str) -> Any:
    """`json.loads(text)`: the same value, or the same error (the failing cases are handed to `json.loads`),
    ~1 µs cheaper per call (`json.loads` reaches the C scanner through three Python-level calls)."""
    try:
        start = _WS.match(text).end() if text[:1] in _JSON_SPACE else 0
        value, end = _SCAN_ONCE(text, start)
        if end == len(text) or _WS.match(text, end).end() == len(text):
            return value
    except (StopIteration, ValueError, RecursionError):
        pass
    return json.loads(text)  # not one JSON value: json.loads raises its own error


def parse_json(text: str, args: Mapping[str, Any]) -> Any:
    """JSON, optionally with bare keys (`unquoted_keys`) or custom string delimiters (`string_delims`); a
    separated sequence of values read into a list (`separator`); an empty body read as `empty`.
    (`trailing` is applied by the parser, which cuts the region where the value ends; see `jsonscan`.)"""
    if not args:  # the common case: plain JSON, no options
        try:
            return _loads(text)
        except RecursionError:
            raise ValueError("invalid JSON: nested too deeply (lists and objects inside each other)") from None
        except ValueError as e:
            raise ValueError(f"invalid JSON: {e}") from None
    translate = args.get("_translate")
    if translate is not None:  # the dialect options alone (Gemma 4): the rewrite to JSON, worked out once
        try:
            standard = translate(text)
            if text.count("{") + text.count("[") <= MAX_NESTING or not _too_deep(standard):
                return _loads(standard)
        except (ValueError, RecursionError):
            pass  # the general path below decides, and words the error
    if "_empty" in args and (not text or text.isspace()):
        return json.loads(args["_empty"])  # a fresh copy for every region
    lax = bool(args.get("unquoted_keys") or args.get("string_delims"))
    try:
        try:
            separator = args.get("separator")
            if separator is not None:
                return _read_sequence(text, separator, args, lax)
            if not lax:
                return _loads(text)
            unquoted, delims = bool(args.get("unquoted_keys")), args.get("string_delims") or ()
            if delims.__class__ is not tuple:  # args not from a compiled template (JSON lists): the cache needs tuples
                delims = tuple(map(tuple, delims))
            translate = _to_json(unquoted, delims)
            if translate is not None:
                try:  # ~2x cheaper than the reader below; where it fails, the reader decides (and words the error)
                    standard = translate(text)
                    if text.count("{") + text.count("[") <= MAX_NESTING or not _too_deep(standard):
                        return _loads(standard)
                except (ValueError, RecursionError):
                    pass
            return _LaxJSON(text, unquoted, delims).parse()
        except RecursionError:
            raise ValueError("nested too deeply (lists and objects inside each other)") from None
    except ValueError as e:
        if args.get("allow_non_json"):
            return text.strip()
        raise ValueError(f"invalid JSON: {e}") from None


_DECODER = json.JSONDecoder()


def _read_sequence(text: str, separator: str, args: Mapping[str, Any], lax: bool) -> list[Any]:
    """`separator`: values with the separator (and any whitespace) between them, read into a list; a
    separator after the last value is allowed (the `trailing: stream` scanner keeps it in the region)."""
    if lax:
        reader = _LaxJSON(text, bool(args.get("unquoted_keys")), args.get("string_delims") or ())
        read: Callable[[int], tuple[Any, int]] = lambda pos: reader.value(pos, 0)  # noqa: E731
    else:
        read = lambda pos: _DECODER.raw_decode(text, pos)  # noqa: E731
    n = len(text)
    out: list[Any] = []
    pos = _WS.match(text, 0).end()
    while True:
        if pos == n:
            raise ValueError(f"expected a value at character {pos}, got the end of the text")
        value, pos = read(pos)
        out.append(value)
        pos = _WS.match(text, pos).end()
        if pos == n:
            return out
        if not text.startswith(separator, pos):
            raise ValueError(f"expected {separator!r} or the end of the text after a value, at character {pos}")
        pos = _WS.match(text, pos + len(separator)).end()
        if pos == n:
            return out


_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]
_KEY_CHARS = _stdre.compile(r"[\w\s{}\[\],:\"]")


@functools.lru_cache(maxsize=64)
def _to_json(unquoted_keys: bool, string_delims: tuple[tuple[str, str], ...]) -> Callable[[str], str] | None:
    """A function rewriting the lax dialect into standard JSON (custom-delimited strings become JSON
    strings, bare keys quoted), for `json.loads` to read; None where that could read some text differently
    from `_LaxJSON` (a string delimiter starting with a word character, a space or JSON punctuation).

    Sound because it only rewrites tokens into JSON strings: if `json.loads` accepts the result, the
    skeleton of brackets, commas and colons is the text's own, and `_LaxJSON` reads each rewritten token at
    the same place the same way (custom delimiters are tried first there, as below). Text the rewrite
    cannot make valid falls back to `_LaxJSON`, so errors are worded as before."""
    if any(not o or _KEY_CHARS.match(o) for o, _c in string_delims):
        return None
    parts = [f"{_stdre.escape(o)}(.*?){_stdre.escape(c)}" for o, c in string_delims]
    parts.append(r'"(?:[^"\\]|\\.)*"')  # a standard string, copied as it is
    key = len(string_delims) + 1  # the group of a bare key's lead (`{` or `,` and spaces)
    if unquoted_keys:
        parts.append(r"([{,][ \t\n\r]*)(\w+)(?=[ \t\n\r]*:)")
    tokens = _stdre.compile("|".join(parts), _stdre.DOTALL)

    def rewrite(m: Any) -> str:
        i = m.lastindex
        if i is None:
            return m.group()
        if i > key:
            return m.group(key) + '"' + m.group(i) + '"'
        return _encode_string(m.group(i))

    return functools.partial(tokens.sub, rewrite)


_JSON_STRING = _stdre.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = _stdre.compile(r"[^\[\]{}]+")
_INNERMOST = _stdre.compile(r"\[\]|\{\}")


def _too_deep(standard: str) -> bool:
    """Whether standard JSON text nests lists and objects more than `MAX_NESTING` deep (or is unbalanced):
    a few C-level passes, each removing one level of the brackets left once strings are dropped."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", standard))
    for _ in range(MAX_NESTING):
        if not brackets:
            return False
        inner = _INNERMOST.sub("", brackets)
        if inner == brackets:
            return True  # unbalanced: let the reader report it
        brackets = inner
    return bool(brackets)


class _LaxJSON:
    """A small recursive-descent JSON reader with the two dialect knobs of the `json` parser.

    Standard strings are decoded by the standard library's `scanstring`; custom-delimited strings
    are taken verbatim between their delimiters. Nesting is limited to `MAX_NESTING`.
    """

    def __init__(self, text: str, unquoted_keys: bool, string_delims: tuple[tuple[str, str], ...]):
        self.s = text
        self.unquoted = unquoted_keys
        self.delims = string_delims

    def fail(self, what: str, pos: int) -> None:
        raise ValueError(f"{what} at character {pos}")

    def ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()

    def parse(self) -> Any:
        value, pos = self.value(self.ws(0), 0)
        pos = self.ws(pos)
        if pos != len(self.s):
            self.fail("extra data after the JSON value", pos)
        return value

    def custom_string(self, pos: int) -> tuple[str, int] | None:
        for open_, close in self.delims:
            if self.s.startswith(open_, pos):
                start = pos + len(open_)
                end = self.s.find(close, start)
                if end < 0:
                    self.fail(f"unterminated string opened by {open_!r}", pos)
                return self.s[start:end], end + len(close)
        return None

    def string(self, pos: int) -> tuple[str, int] | None:
        custom = self.custom_string(pos) if self.delims else None
        if custom is not None:
            return custom
        if pos < len(self.s) and self.s[pos] == '"':
            return _scanstring(self.s, pos + 1, True)
        return None

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        if pos >= len(s):
            self.fail("expected a value, got end of text", pos)
        got = self.string(pos)
        if got is not None:
            return got
        c = s[pos]
        if c == "{" or c == "[":
            if depth >= MAX_NESTING:
                self.fail(f"nested more than {MAX_NESTING} levels deep", pos)
            return (self.obj if c == "{" else self.arr)(pos + 1, depth + 1)
        m = _NUMBER.match(s, pos)
        if m:
            num = m.group()
            return (int(num) if num.lstrip("-").isdigit() else float(num)), m.end()
        for word, val in (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
                          ("Infinity", float("inf")), ("-Infinity", float("-inf"))):
            if s.startswith(word, pos):
                return val, pos + len(word)
        self.fail(f"unexpected character {c!r}", pos)
        raise AssertionError  # unreachable

    def key(self, pos: int) -> tuple[str, int]:
        got = self.string(pos)
        if got is not None:
            return got
        if self.unquoted:
            m = _BARE_KEY.match(self.s, pos)
            if m:
                return m.group(), m.end()
        self.fail("expected a key", pos)
        raise AssertionError

    def obj(self, pos: int, depth: int) -> tuple[dict, int]:
        out: dict[str, Any] = {}
        pos = self.ws(pos)
        if self.s.startswith("}", pos):
            return out, pos + 1
        while True:
            k, pos = self.key(self.ws(pos))
            pos = self.ws(pos)
            if not self.s.startswith(":", pos):
                self.fail("expected ':'", pos)
            v, pos = self.value(self.ws(pos + 1), depth)
            out[k] = v
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
            elif self.s.startswith("}", pos):
                return out, pos + 1
            else:
                self.fail("expected ',' or '}'", pos)

    def arr(self, pos: int, depth: int) -> tuple[list, int]:
        out: list[Any] = []
        pos = self.ws(pos)
        if self.s.startswith("]", pos):
            return out, pos + 1
        while True:
            v, pos = self.value(self.ws(pos), depth)
            out.append(v)
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
            elif self.s.startswith("]", pos):
                return out, pos + 1
            else:
                self.fail("expected ',' or ']'", pos)


# --------------------------------------------------------------------------- xml-inline, kv-lines


def _key_value_columns(pattern: regex.Pattern) -> tuple[int, int] | None:
    """Where `key` and `value` are in the tuples of `pattern.findall`, if both groups take part in
    every match (so neither can be None); None if they may not, or if that is unknown.

    Read from the standard library's parse of the pattern: a group written at the top level of the
    pattern (not inside an alternative, an optional or repeated part, or a lookaround) always takes
    part. `findall` is ~2x cheaper than `finditer` plus `Match.group`.
    """
    from .delimiters import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

    parsed = stdlib_parse(pattern.pattern)
    if parsed is None:  # `regex`-only syntax, duplicate group names, or unsure: use finditer
        return None
    top: set[int] = set()
    stack = [parsed]
    while stack:
        for op, av in stack.pop():
            if op is _sre_constants.SUBPATTERN:
                if av[0] is not None:
                    top.add(av[0])
                stack.append(av[3])
    key, value = pattern.groupindex["key"], pattern.groupindex["value"]
    if key not in top or value not in top or parsed.state.groups != pattern.groups + 1:
        return None
    return key - 1, value - 1


_ASSERTIONS = (_sre_constants.AT, _sre_constants.ASSERT, _sre_constants.ASSERT_NOT)
_REPEATS = tuple(getattr(_sre_constants, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                 if hasattr(_sre_constants, n))
_ATOMIC = getattr(_sre_constants, "ATOMIC_GROUP", object())
_LOOKAROUNDS = (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT)


def _every_item(items: Any) -> Any:
    """Every `(op, av)` of a pattern parsed by the standard library, at every depth (inside groups,
    repeats, alternatives, conditionals and lookarounds)."""
    stack = [items]
    while stack:
        for op, av in stack.pop():
            yield op, av
            if op is _sre_constants.SUBPATTERN:
                stack.append(av[3])
            elif op in _REPEATS:
                stack.append(av[2])
            elif op is _sre_constants.BRANCH:
                stack.extend(av[1])
            elif op is _ATOMIC:
                stack.append(av)
            elif op is _sre_constants.GROUPREF_EXISTS:
                stack.extend(sub for sub in av[1:] if sub is not None)
            elif op in _LOOKAROUNDS:
                stack.append(av[1])


def _is_literals(items: Any) -> bool:
    return bool(items) and all(op is _sre_constants.LITERAL for op, _ in items)


def _is_terminator(op: Any, av: Any) -> bool:
    r"""Whether a top-level item is an alternation of ends only: fixed texts, lookaheads at a fixed text and
    the end of the text, e.g. `(?:</parameter>|(?=<parameter=)|\Z)` (a value that ends at its close tag,
    or where the next tag or the text begins and ends, when the model left the close tag out)."""
    if op is not _sre_constants.BRANCH:
        return False
    for alternative in av[1]:
        if _is_literals(alternative):
            continue
        if len(alternative) != 1:
            return False
        aop, aav = alternative[0]
        if aop is _sre_constants.ASSERT and aav[0] == 1 and _is_literals(aav[1]):  # (?=fixed text)
            continue
        if aop is _sre_constants.AT and aav is _sre_constants.AT_END_STRING:  # \Z
            continue
        return False
    return True


Chain = tuple[tuple[str, ...], bool, "bool | tuple[str, ...]"]


def _literal_chain(pattern: regex.Pattern) -> Chain | None:
    r"""The fixed texts every match of `pattern` contains, in order, read from its top level: for
    `<parameter=(?P<key>[^>]+)>(?P<value>.*?)</parameter>`, `("<parameter=", ">", "</parameter>")`.
    Also whether a match starts with the first one, and how it ends: True if with the last one, a tuple
    of fixed texts if at or just before one of them (a `_is_terminator` tail without `\Z`), else False.
    None when unknown or unusable: no fixed text, `regex`-only syntax, case folding, or an assertion (`^`,
    `$`, `\b`, lookarounds may look past where a match ends, so the search bounds of `_bounded_matches`
    would change what matches), except in a last item that only says where a match ends (`_is_terminator`, e.g.
    `(?:</parameter>|(?=<parameter=)|\Z)`): such a match is searched up to the end of the last of those
    fixed texts (or of the text, with `\Z`), so its lookahead and `\Z` see what they would see without
    bounds. Each start stops at the first end the alternation accepts (with `\Z` there always is one), so
    an unclosed tag costs the distance to the next tag, not to the end of the text.
    """
    from .delimiters import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

    parsed = stdlib_parse(pattern.pattern)
    if parsed is None:
        return None
    items = list(parsed)
    tail = items[-1:] if items and _is_terminator(*items[-1]) else []
    if any(op in _ASSERTIONS for op, _ in _every_item(items[: len(items) - len(tail)])):
        return None  # an assertion, at any depth
    chain: list[str] = []
    run: list[str] = []
    for op, av in items:
        if op is _sre_constants.LITERAL:
            run.append(chr(av))
            continue
        if run:
            chain.append("".join(run))
            run = []
    if run:
        chain.append("".join(run))
    if not chain:
        return None
    starts = bool(items) and items[0][0] is _sre_constants.LITERAL
    ends: bool | tuple[str, ...] = bool(items) and items[-1][0] is _sre_constants.LITERAL
    if tail:
        texts: list[str] = []
        for alternative in tail[0][1][1]:
            if alternative[0][0] is _sre_constants.AT:  # \Z: a match may end anywhere
                texts = []
                break
            body = alternative if alternative[0][0] is _sre_constants.LITERAL else alternative[0][1][1]
            texts.append("".join(chr(av) for _, av in body))
        ends = tuple(texts) or False
    return tuple(chain), starts, ends


def _search_bounds(text: str, chain: Chain) -> tuple[int, int] | None:
    """Where matches of a pattern with this `_literal_chain` can be in `text`: `(last_start, end)`, or None
    if there can be none.

    Every match contains the chain's fixed texts in order, so a backward pass (`rfind` each text before
    the last possible place of the next one) gives the last place a match can start (`last_start`, when
    matches start with the first text; else `end`) and end (`end`, when they end with the last text;
    else `len(text)`; when they end at or before one of several fixed texts, the end of the last of
    those, and the fixed texts of the chain come before its start). Starts past `last_start` need not be
    tried: each would scan to `end` and fail (a tool call full of unclosed `<parameter=x>` tags made that
    quadratic).
    """
    literals, starts, ends = chain
    limit = end = len(text)
    if ends.__class__ is tuple:
        limit, end = -1, 0
        for term in ends:  # type: ignore[union-attr]
            at = text.rfind(term)
            if at >= 0:
                limit, end = max(limit, at), max(end, at + len(term))
        if limit < 0:
            return None  # no match can end: none of its end texts is there
    for i in range(len(literals) - 1, -1, -1):
        at = text.rfind(literals[i], 0, limit)
        if at < 0:
            return None  # a fixed text every match needs is not there
        if ends is True and i == len(literals) - 1:
            end = at + len(literals[i])
        limit = at
    return (limit if starts else end), end


def _bounded_matches(pattern: regex.Pattern, text: str, first: str, last_start: int, end: int,
                     timeout: float | None) -> list[Any]:
    """The matches of `pattern.finditer(text, 0, end)`, trying only starts at `first` up to `last_start`
    (every match starts with `first`; see `_search_bounds`)."""
    out = []
    stop = last_start + len(first)
    pos = text.find(first, 0, stop)
    while pos >= 0:
        m = pattern.match(text, pos, end, timeout=timeout)
        if m is not None:
            out.append(m)
            pos = text.find(first, m.end(), stop)
        else:
            pos = text.find(first, pos + 1, stop)
    return out


class TagShape(NamedTuple):
    r"""How a `tag_pattern` written as HEAD ``(?P<value>.*?)`` TAIL reads one value, for readers that take the
    text piece by piece (`hf_response_templates.partial`): a match starts with the fixed text `opener`, where
    `head` (the pattern up to the value group) matches; its value is the text from there up to the first place
    where TAIL matches: an optional newline (`newline`: ``\n?``, not part of the value), then one of `ends`
    (fixed texts, part of the match), one of `looks` (fixed texts in lookaheads, not part of it) or, with
    `at_end`, the end of the text (``\Z``). With `at_end` a match at an `opener` where `head` matches always
    exists, whatever follows, which is what lets a reader stream its value before it ends."""

    opener: str
    head: regex.Pattern
    ends: tuple[str, ...]
    looks: tuple[str, ...]
    at_end: bool
    newline: bool
    #: the last fixed character of the head (``>``), if it ends with one (then ``\n?`` at most): a head cut by
    #: the end of the text can only complete with text holding it, or one more character after it
    head_last: str | None
    #: the head ends with ``\n?`` after `head_last`: a match that ends at the end of the text is final only
    #: when it took the newline (a head ending with `head_last` is final at once)
    head_nl: bool
    #: `head` compiled by the standard library when it matches the same (no timeout needed: it is proven
    #: bounded), else None; faster, but without partial matches
    head_fast: Any
    #: matches, at the end of a text, the longest suffix that may be the start of what ends a value: a cut
    #: end text (``</par``), with the ``\n`` before it when `newline`, or that ``\n`` alone
    cut_end: Any
    #: matches, at the end of a text, the longest suffix that may be the start of `opener` (a cut ``<param``)
    cut_opener: Any
    #: a search of it finds where a value ends (before the end of the text): the optional newline and an end
    #: text or a lookahead's text (``\n?(?:</parameter>|(?=<parameter=))``); the match is what follows the value
    value_end: Any


def _tag_shape(pattern: regex.Pattern) -> TagShape | None:
    r"""The `TagShape` of `pattern`, or None when it is not of that form (or it is unsure): the value group is
    ``(?P<value>.*?)`` at the top level with ``.`` matching newlines, the head starts with a fixed text and has
    no anchor or lookaround, the tail is ``\n?`` (optional) then fixed text or an alternation of fixed texts,
    lookaheads of fixed texts and ``\Z`` (see `_is_terminator`)."""
    from .delimiters import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

    source = pattern.pattern
    marker = "(?P<value>.*?)"
    at = source.find(marker)
    if (
        at <= 0
        or source.find(marker, at + 1) >= 0
        or not pattern.flags & regex.DOTALL
        or pattern.flags & (regex.IGNORECASE | regex.VERBOSE)
    ):
        return None
    parsed = stdlib_parse(source)
    if parsed is None:
        return None
    items = list(parsed)
    group = pattern.groupindex["value"]

    def lazy_any(body: Any) -> bool:  # `.*?`
        body = list(body)
        if len(body) != 1 or body[0][0] is not _sre_constants.MIN_REPEAT:
            return False
        low, high, inner = body[0][1]
        return low == 0 and high == _sre_constants.MAXREPEAT and list(inner) == [(_sre_constants.ANY, None)]

    idx = next(
        (i for i, (op, av) in enumerate(items)
         if op is _sre_constants.SUBPATTERN and av[0] == group and lazy_any(av[3])),
        None,
    )
    if idx is None:
        return None
    head_items, tail = items[:idx], items[idx + 1 :]
    if not head_items or head_items[0][0] is not _sre_constants.LITERAL:
        return None
    if any(op in _ASSERTIONS for op, _ in _every_item(head_items)):
        return None
    opener = []
    for op, av in head_items:
        if op is not _sre_constants.LITERAL:
            break
        opener.append(chr(av))
    newline = False
    if tail and tail[0][0] is _sre_constants.MAX_REPEAT and tail[0][1][:2] == (0, 1):
        if list(tail[0][1][2]) != [(_sre_constants.LITERAL, 10)]:  # (`\n?` only)
            return None
        newline, tail = True, tail[1:]
    ends: list[str] = []
    looks: list[str] = []
    order: list[str] = []  # the end's alternatives, in the pattern's order (it decides between two at a place)
    at_end = False
    if _is_literals(tail):
        ends.append("".join(chr(av) for _, av in tail))
        order.append(_stdre.escape(ends[-1]))
    elif len(tail) == 1 and _is_terminator(*tail[0]):
        for alternative in tail[0][1][1]:
            op, av = alternative[0]
            if op is _sre_constants.AT:
                at_end = True
            elif op is _sre_constants.ASSERT:
                looks.append("".join(chr(c) for _, c in av[1]))
                order.append(f"(?={_stdre.escape(looks[-1])})")
            else:
                ends.append("".join(chr(c) for _, c in alternative))
                order.append(_stdre.escape(ends[-1]))
    else:
        return None
    if not order or newline and any(t.startswith("\n") for t in ends + looks):
        return None
    try:
        head = regex.compile(source[:at], pattern.flags, cache_pattern=False)  # (not in `regex`'s cache: see `compile_regex`)
    except regex.error:
        return None
    if "key" not in head.groupindex:
        return None
    last = head_items[-1]
    newline_item = [(_sre_constants.LITERAL, 10)]
    if last[0] is _sre_constants.MAX_REPEAT and last[1][:2] == (0, 1) and list(last[1][2]) == newline_item:
        last = head_items[-2] if len(head_items) > 1 else last  # `>\n?`: the `>`
    head_nl = last is not head_items[-1]
    head_last = chr(last[1]) if last[0] is _sre_constants.LITERAL else None
    from .delimiters import (  # local: delimiters imports this module's neighbours
        stdlib_equivalent,
        untimed_spans,
    )

    head_fast = stdlib_equivalent(source[:at]) if untimed_spans(source[:at])[0] >= 0 else None
    cuts = sorted({t[:k] for t in ends + looks for k in range(1, len(t))}, key=len, reverse=True)
    alts = "|".join(_stdre.escape(c) for c in cuts)
    if newline:
        cut_end = _stdre.compile(f"\n?(?:{alts})\\Z|\n\\Z" if alts else "\n\\Z")
    else:
        cut_end = _stdre.compile(f"(?:{alts})\\Z" if alts else "(?!)")
    # the first place the value can end before the end of the text: where the optional newline and one of
    # the alternatives match (a search finds the first such place, as the lazy value stops at the first)
    value_end = _stdre.compile(("\n?" if newline else "") + "(?:" + "|".join(order) + ")")
    opener_text = "".join(opener)
    cut_opener = _stdre.compile(
        "(?:" + "|".join(_stdre.escape(opener_text[:k]) for k in range(len(opener_text) - 1, 0, -1)) + ")\\Z"
        if len(opener_text) > 1 else "(?!)"
    )
    return TagShape(
        opener_text, head, tuple(ends), tuple(looks), at_end, newline, head_last, head_nl, head_fast, cut_end,
        cut_opener, value_end,
    )


def _prepare_xml_inline(args: dict[str, Any], field: str, key: str) -> None:
    """Check `value_parser_group` / `value_parsers` against `tag_pattern`, then work out how
    `parse_xml_inline` reads matches: `_columns` (see `_key_value_columns`), `_chain` (see
    `_literal_chain`), `_select` (`(group, {text: value parser}, the group's column in findall's tuples
    or None)` when a group picks each value's parser) and `_plain` (the result is just `dict(findall(...))`: key and value are the only groups,
    nothing else is asked)."""
    pattern = args["tag_pattern"]
    group, parsers = args.get("value_parser_group"), args.get("value_parsers")
    if (group is None) != (parsers is None):
        given, other = ("value_parser_group", "value_parsers") if parsers is None else ("value_parsers",
                                                                                       "value_parser_group")
        raise TemplateError(
            f"needs {other} too: value_parser_group names the tag_pattern group whose text picks a parser "
            "from value_parsers",
            field=field,
            key=f"{key}.{given}",
        )
    if group is not None:
        if group in ("key", "value") or group not in pattern.groupindex:
            others = sorted(set(pattern.groupindex) - {"key", "value"})
            raise TemplateError(
                f"must name a named group of tag_pattern other than key and value, got {group!r} "
                f"(tag_pattern's other groups: {others or 'none'})",
                field=field,
                key=f"{key}.value_parser_group",
            )
    columns = _key_value_columns(pattern)
    if group is not None:
        # with `columns`, findall's tuples hold the group too ("" when it did not take part, which picks
        # the default, as None does, unless "" is a key of value_parsers)
        column = pattern.groupindex[group] - 1 if columns is not None and "" not in parsers else None
        args["_select"] = (group, parsers, column)
    args["_columns"] = columns
    args["_chain"] = _literal_chain(pattern)
    args["_shape"] = _tag_shape(pattern)
    from .delimiters import (  # local: delimiters imports this module's neighbours
        stdlib_equivalent,
        untimed_spans,
    )

    # bodies up to this long are searched without the timeout (the pattern is proven bounded on them), by
    # the standard library's `re` where it matches exactly what `regex` does (2-3x cheaper per call)
    args["_untimed"] = untimed_spans(pattern.pattern)[1]
    args["_stdlib"] = stdlib_equivalent(pattern.pattern) if args["_untimed"] >= 0 else None
    args["_plain"] = (
        columns == (0, 1)
        and pattern.groups == 2
        and not args.get("merge_duplicates", False)
        and not args.get("value_parser")
        and group is None
    )


#: Bodies up to this long are searched without `_search_bounds` (~2.5 µs saved on DeepSeek's 135-character
#: two-parameter call: its four `rfind`s of non-ASCII tags): a quadratic search of so little text stays small,
#: at worst ~25 µs (256 characters of unclosed tags, every start scanning to the end; bounded: ~1 µs).
_BOUND_FROM = 256


def parse_xml_inline(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A flat sequence of tags matched by `tag_pattern` (groups `key` and `value`) -> dict.

    Linear in the length of `text` for patterns made of fixed texts around lazy or bounded parts (the
    usual tag patterns; see `_search_bounds`). A match in which the `key` group does not take part is
    an error (as in Transformers' native parser), never skipped silently. With `value_parser_group`, the
    text of that group picks each value's parser from `value_parsers` (see `_select_values`).
    """
    pattern: regex.Pattern = args["tag_pattern"]
    timeout: float | None = REGEX_TIMEOUT.get(DEFAULT_REGEX_TIMEOUT)
    stdlib: Any = None
    if len(text) <= args.get("_untimed", -1):
        timeout = None  # proven bounded on this little text: no clock system calls (`regex_safety`)
        stdlib = args.get("_stdlib")
    try:
        end: int | None = None
        matches: list[Any] | None = None
        chain = args["_chain"]
        if chain is not None and len(text) > _BOUND_FROM:
            bounds = _search_bounds(text, chain)
            if bounds is None:
                return {}
            last_start, end = bounds
            first = chain[0][0]
            if chain[1] and text.find(first, last_start + 1, end) >= 0:
                # starts that cannot lead to a match lie before `end`: try only the possible ones
                matches = _bounded_matches(pattern, text, first, last_start, end, timeout)
        if matches is None and args["_plain"]:
            # (key, value) tuples; a repeated key keeps its last value, as below.
            if stdlib is not None:
                return dict(stdlib.findall(text, 0, len(text) if end is None else end))
            # (string, pos, endpos, overlapped, concurrent, timeout) passed positionally: ~0.3 µs cheaper
            return dict(pattern.findall(text, 0, end, False, None, timeout))
        findall, finditer = _xml_searches(pattern, stdlib, text, end, timeout)
        value_parser = args.get("value_parser")
        merge = args.get("merge_duplicates", False)
        columns = args["_columns"]
        select = args.get("_select")
        if select is not None:
            group, parsers, column = select
            if matches is None and column is not None:
                k, v = columns
                found: Any = [(t[k], t[v], t[column] or None) for t in findall()]
            else:
                if matches is None:
                    matches = list(finditer())
                found = [m.group("key", "value", group) for m in matches]
            return _select_values(found, matches, parsers, value_parser, merge)
        out: dict[str, Any] = {}
        merged: set[str] = set()
        if matches is not None:
            pairs: Any = (m.group("key", "value") for m in matches)
        elif columns is not None:
            k, v = columns
            pairs = ((t[k], t[v]) for t in findall())
        else:
            matches = list(finditer())
            pairs = (m.group("key", "value") for m in matches)
        for i, (key, raw) in enumerate(pairs):
            if key is None:
                at = f" at character {matches[i].start()}" if matches is not None else ""
                raise ValueError(f"xml-inline: a tag_pattern match{at} has no 'key' (the group did not take part)")
            value = value_parser(raw if raw is not None else "") if value_parser else (raw or "")
            if merge and key in out:
                _merge_value(out, merged, key, value)
            else:
                out[key] = value
    except TimeoutError:
        raise RegexTimeoutError(
            field=None,
            key="content_args.tag_pattern",
            pattern=pattern.pattern,
            timeout=timeout or 0.0,
            text=text,
        ) from None
    return out


def _xml_searches(pattern: regex.Pattern, stdlib: Any, text: str, end: int | None,
                  timeout: float | None) -> tuple[Callable[[], list[Any]], Callable[[], Any]]:
    """`findall` and `finditer` of `text` up to `end`: by `stdlib` (the pattern's `re` twin) when given, else by
    `pattern` with `timeout`."""
    if stdlib is not None:  # `re` takes (string, pos, endpos)
        stop = len(text) if end is None else end
        return (lambda: stdlib.findall(text, 0, stop)), (lambda: stdlib.finditer(text, 0, stop))
    return (lambda: pattern.findall(text, 0, end, False, None, timeout)), (
        lambda: pattern.finditer(text, 0, end, timeout=timeout))


def _select_values(found: list[tuple[Any, Any, Any]], matches: list[Any] | None,
                   parsers: Mapping[str, Callable[[str], Any]], default: Callable[[str], Any] | None,
                   merge: bool) -> dict[str, Any]:
    """`parse_xml_inline` with `value_parser_group`: `found` holds each match's (key, value, group text);
    the value is read by the parser the group's text names in `parsers` (`value_parsers`), or by
    `default` (`value_parser`, else kept as raw text) when the group did not take part or its text is not
    a key there. `matches`: the Match objects, when `found` came from them (for error positions)."""
    out: dict[str, Any] = {}
    merged: set[str] = set()
    for i, (key, raw, picked) in enumerate(found):
        if key is None:
            at = f" at character {matches[i].start()}" if matches is not None else ""
            raise ValueError(f"xml-inline: a tag_pattern match{at} has no 'key' (the group did not take part)")
        parse = default if picked is None else parsers.get(picked, default)
        value = parse(raw or "") if parse is not None else (raw or "")
        if merge and key in out:
            _merge_value(out, merged, key, value)
        else:
            out[key] = value
    return out


def _merge_value(out: dict[str, Any], merged: set[str], key: str, value: Any) -> None:
    """`merge_duplicates`: `key` seen again; its values become a list (`merged`: keys already lists)."""
    if key not in merged:
        out[key] = [out[key]]
        merged.add(key)
    out[key].append(value)


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


# --------------------------------------------------------------------------- python-call-list

_CALL_NAME = _stdre.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
_KWARG = _stdre.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL_NUMBER = _stdre.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_CALL_STRING = _stdre.compile(r"'((?:[^'\\\n\r]|\\.)*)'|\"((?:[^\"\\\n\r]|\\.)*)\"")
_CALL_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_CALL_CONSTANTS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
_CALL_MAX_INT = 2**53 - 1  # integers a JSON consumer in any language can hold exactly
_CALL_MAX_DEPTH = 100


class _CallListReader:
    r"""A strict reader for pythonic tool calls, e.g. `[get_weather(city="Paris", days=3)]`.

    Grammar (JSON whitespace allowed between tokens), kept strict so that other implementations can
    match it exactly:

        calls   := '[' [call (',' call)*] ']'
        call    := NAME '(' [kwarg (',' kwarg)*] ')'     NAME: identifier, parts joined by '.' or '-'
        kwarg   := NAME '=' value                        (no positional arguments, no repeated names)
        value   := string | number | True | False | None | true | false | null
                 | '[' [value (',' value)*] ']' | '{' [string ':' value (',' ...)*] '}'
        string  := '...' or "..." on one line; escapes \\ \' \" \/ \b \f \n \r \t \uXXXX
        number  := a JSON number; integers within +-(2**53 - 1), floats finite

    Lists and dicts nest at most 100 deep. Nothing is evaluated: model text never reaches `eval` or `ast`.
    """

    def __init__(self, text: str):
        self.s = text

    def fail(self, what: str, pos: int) -> None:
        raise ValueError(f"python-call-list: {what} at character {pos}")

    def ws(self, pos: int) -> int:
        return _WS.match(self.s, pos).end()

    def parse(self) -> list[dict[str, Any]]:
        pos = self.ws(0)
        if not self.s.startswith("[", pos):
            self.fail("expected '[' (a list of calls)", pos)
        calls, pos = self.seq(pos + 1, "]", self.call)
        pos = self.ws(pos)
        if pos != len(self.s):
            self.fail("unexpected text after the closing ']'", pos)
        return calls

    def seq(self, pos: int, close: str, item: Callable[[int], tuple[Any, int]]) -> tuple[list, int]:
        out: list[Any] = []
        pos = self.ws(pos)
        if self.s.startswith(close, pos):
            return out, pos + 1
        while True:
            value, pos = item(self.ws(pos))
            out.append(value)
            pos = self.ws(pos)
            if self.s.startswith(close, pos):
                return out, pos + 1
            if not self.s.startswith(",", pos):
                self.fail(f"expected ',' or {close!r}", pos)
            pos += 1

    def call(self, pos: int) -> tuple[dict[str, Any], int]:
        m = _CALL_NAME.match(self.s, pos)
        if not m:
            self.fail("expected a function name", pos)
        name, pos = m.group(), self.ws(m.end())
        if not self.s.startswith("(", pos):
            self.fail(f"expected '(' after {name!r}", pos)
        pairs, end = self.seq(pos + 1, ")", self.kwarg)
        arguments: dict[str, Any] = {}
        for key, value in pairs:
            if key in arguments:
                self.fail(f"argument {key!r} repeated in the call to {name!r}", pos)
            arguments[key] = value
        return {"name": name, "arguments": arguments}, end

    def kwarg(self, pos: int) -> tuple[tuple[str, Any], int]:
        m = _CALL_NAME.match(self.s, pos)  # as native: `a.b=1` and `a-b=1` are keyword names too
        if not m:
            self.fail("expected a keyword argument (name=value; positional arguments are not supported)", pos)
        pos = self.ws(m.end())
        if not self.s.startswith("=", pos):
            self.fail(f"expected '=' after argument name {m.group()!r} (positional arguments are not supported)", pos)
        value, end = self.value(self.ws(pos + 1), 0)
        return (m.group(), value), end

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        c = s[pos : pos + 1]
        if c in ("'", '"'):
            result = self.string(pos)
        elif c in ("[", "{"):
            if depth >= _CALL_MAX_DEPTH:
                self.fail(f"lists and dicts nested more than {_CALL_MAX_DEPTH} deep", pos)
            if c == "[":
                result = self.seq(pos + 1, "]", lambda p: self.value(p, depth + 1))
            else:
                pairs, end = self.seq(pos + 1, "}", lambda p: self.pair(p, depth + 1))
                out: dict[str, Any] = {}
                for key, value in pairs:
                    if key in out:
                        self.fail(f"dict key {key!r} repeated", pos)
                    out[key] = value
                result = (out, end)
        elif (m := _CALL_NUMBER.match(s, pos)) is not None:
            num = m.group()
            if m.group(1) is None and m.group(2) is None:
                if len(num) > 17 or abs(int(num)) > _CALL_MAX_INT:
                    self.fail("integer outside the range -(2**53 - 1) to 2**53 - 1", pos)
                result = (int(num), m.end())
            else:
                number = float(num)
                if number in (float("inf"), float("-inf")):
                    self.fail("number too large", pos)
                result = (number, m.end())
        elif (m := _KWARG.match(s, pos)) is not None and m.group() in _CALL_CONSTANTS:
            result = (_CALL_CONSTANTS[m.group()], m.end())
        else:
            self.fail("expected a value (a string, number, list, dict, True, False or None)", pos)
        return result

    def pair(self, pos: int, depth: int) -> tuple[tuple[str, Any], int]:
        if self.s[pos : pos + 1] not in ("'", '"'):
            self.fail("dict keys must be strings", pos)
        key, pos = self.string(pos)
        pos = self.ws(pos)
        if not self.s.startswith(":", pos):
            self.fail("expected ':'", pos)
        value, end = self.value(self.ws(pos + 1), depth)
        return (key, value), end

    def string(self, pos: int) -> tuple[str, int]:
        m = _CALL_STRING.match(self.s, pos)
        if not m:
            self.fail("invalid or unterminated string (strings stay on one line)", pos)
        body = m.group(1) if m.group(1) is not None else m.group(2)
        out: list[str] = []
        i = 0
        while (j := body.find("\\", i)) >= 0:
            out.append(body[i:j])
            esc = body[j + 1]
            if esc in _CALL_ESCAPES:
                out.append(_CALL_ESCAPES[esc])
                i = j + 2
                continue
            hexa = body[j + 2 : j + 6]
            if esc != "u" or not _stdre.fullmatch(r"[0-9a-fA-F]{4}", hexa):
                self.fail(f"unsupported escape '\\{esc}' in string", pos + 1 + j)
            code, i = int(hexa, 16), j + 6
            if 0xD800 <= code <= 0xDBFF and body[i : i + 2] == "\\u":
                low = body[i + 2 : i + 6]
                if _stdre.fullmatch(r"[dD][c-fC-F][0-9a-fA-F]{2}", low):
                    code, i = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00), i + 6
            if 0xD800 <= code <= 0xDFFF:
                self.fail("lone surrogate escape in string", pos + 1 + j)
            out.append(chr(code))
        out.append(body[i:])
        text = "".join(out)
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in body):
            self.fail("lone surrogate in string", pos)
        return text, m.end()


# The fast path of `python-call-list`: a list of calls whose arguments are scalars written without escapes, or
# flat lists and dicts of them (the usual tool call) is recognised by one C-level `fullmatch` of that subset of
# the grammar and read by `findall`s of its tokens, ~4x cheaper than the reader; anything else (deeper nesting,
# escapes, a repeated name or dict key, an integer out of range, an error) is left to `_CallListReader`, which
# decides and words the error. Every loop below is followed by a character it cannot take, so a failing match
# backtracks linearly.
_F_WS = r"[ \t\n\r]*"
_F_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*"
_F_STRING = r"\"[^\"\\\n\r\ud800-\udfff]*\"|'[^'\\\n\r\ud800-\udfff]*'"  # no escape, no surrogate
_F_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_F_CONSTANT = "True|False|None|true|false|null"
_F_SCALAR = f"{_F_STRING}|{_F_NUMBER}|{_F_CONSTANT}"
_F_PAIR = f"(?:{_F_STRING}){_F_WS}:{_F_WS}(?:{_F_SCALAR})"
#: a list or a dict of scalars (one level: deeper nesting is the reader's)
_F_FLAT = (f"\\[{_F_WS}(?:(?:{_F_SCALAR})(?:{_F_WS},{_F_WS}(?:{_F_SCALAR}))*{_F_WS})?\\]"
           f"|\\{{{_F_WS}(?:{_F_PAIR}(?:{_F_WS},{_F_WS}{_F_PAIR})*{_F_WS})?\\}}")
_F_KWARG = f"{_F_NAME}{_F_WS}={_F_WS}(?:{_F_SCALAR}|{_F_FLAT})"
_F_CALL = f"{_F_NAME}{_F_WS}\\({_F_WS}(?:{_F_KWARG}(?:{_F_WS},{_F_WS}{_F_KWARG})*{_F_WS})?\\)"
_SIMPLE_CALLS = _stdre.compile(f"{_F_WS}\\[{_F_WS}(?:{_F_CALL}(?:{_F_WS},{_F_WS}{_F_CALL})*{_F_WS})?\\]{_F_WS}")
#: In a text `_SIMPLE_CALLS` matches: (call name, "", "", "", "") for each call, (keyword, string with its
#: quotes, number, constant, flat list or dict) for each argument, in order (the name is read once: an
#: alternation of a call and a keyword would read each keyword twice, and try every shorter name in between).
_SIMPLE_TOKENS = _stdre.compile(
    f"({_F_NAME}){_F_WS}(?:\\(|={_F_WS}(?:({_F_STRING})|({_F_NUMBER})|({_F_CONSTANT})|({_F_FLAT})))")
#: In a flat list `_F_FLAT` matches: (string, number, constant) of each item; in a flat dict: (key with its
#: quotes, string, number, constant) of each pair.
_FLAT_ITEMS = _stdre.compile(f"({_F_STRING})|({_F_NUMBER})|({_F_CONSTANT})")
_FLAT_PAIRS = _stdre.compile(f"({_F_STRING}){_F_WS}:{_F_WS}(?:({_F_STRING})|({_F_NUMBER})|({_F_CONSTANT}))")
_INF = float("inf")
_NO_VALUE = object()  # a scalar the reader rejects (an integer out of range, a float too large)


def _simple_scalar(string: str, number: str, constant: str) -> Any:
    """The value of one scalar token of the fast path (one of the three is non-empty), or `_NO_VALUE`."""
    if string:
        return string[1:-1]
    if constant:
        return _CALL_CONSTANTS[constant]
    if "." in number or "e" in number or "E" in number:
        value = float(number)
        return _NO_VALUE if value in (_INF, -_INF) else value
    if len(number) > 17 or abs(value := int(number)) > _CALL_MAX_INT:
        return _NO_VALUE
    return value


def _simple_flat(text: str) -> Any:
    """The value of a flat list or dict that `_F_FLAT` matches, or `_NO_VALUE` (a scalar out of range, a
    repeated dict key: the reader's errors)."""
    if text[0] == "[":
        items = []
        for string, number, constant in _FLAT_ITEMS.findall(text):
            value = _simple_scalar(string, number, constant)
            if value is _NO_VALUE:
                return value
            items.append(value)
        return items
    out: dict[str, Any] = {}
    for key, string, number, constant in _FLAT_PAIRS.findall(text):
        key = key[1:-1]
        value = _simple_scalar(string, number, constant)
        if value is _NO_VALUE or key in out:
            return _NO_VALUE
        out[key] = value
    return out


def _simple_call_list(text: str) -> list[dict[str, Any]] | None:
    """`_CallListReader(text).parse()` for a call list of scalar arguments without escapes, or flat lists and
    dicts of them; None for any other text (also one the reader rejects), which the reader then reads."""
    if _SIMPLE_CALLS.fullmatch(text) is None:
        return None
    calls: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {}
    for key, string, number, constant, flat in _SIMPLE_TOKENS.findall(text):
        if not (string or number or constant or flat):  # (a value's text is never empty: a string has its quotes)
            arguments = {}
            calls.append({"name": key, "arguments": arguments})
            continue
        if key in arguments:
            return None  # repeated: an error, worded by the reader
        if string:
            arguments[key] = string[1:-1]
            continue
        value = _simple_flat(flat) if flat else _simple_scalar(string, number, constant)
        if value is _NO_VALUE:
            return None
        arguments[key] = value
    return calls


def parse_python_call_list(text: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`[get_weather(city="Paris", days=3)]` -> `[{"name": "get_weather", "arguments": {...}}]`."""
    calls = _simple_call_list(text)
    return calls if calls is not None else _CallListReader(text).parse()


def parse_python_literal(text: str) -> Any:
    """One Python literal as `str()` writes it (`{'lang': 'fr', 'safe': True}`, `[1, 'a']`) -> its value.

    The value grammar of `python-call-list` (strings, numbers, lists, dicts with string keys, `True`,
    `False`, `None`), read the same strict way and never evaluated. Raises `ValueError` for anything else,
    or for text after the value. Chat templates that print an object argument with `{{ value }}` or
    `|string` write this form; :mod:`.tools` reads it back for object and array parameters.
    """
    reader = _CallListReader(text)
    value, pos = reader.value(reader.ws(0), 0)
    if reader.ws(pos) != len(text):
        reader.fail("unexpected text after the value", reader.ws(pos))
    return value


# --------------------------------------------------------------------------- json options


_MAX_SEPARATOR = 16


def _trailing(value: Any, field: str, key: str) -> str:
    if value not in ("error", "stream"):
        raise TemplateError(
            f'must be "error" (text after the JSON value is an error) or "stream" (the region ends where the '
            f"value ends and the rest goes back to the stream), got {value!r}",
            field=field,
            key=key,
        )
    return value


def _separator(value: Any, field: str, key: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_SEPARATOR:
        raise TemplateError(f"must be a non-empty string of at most {_MAX_SEPARATOR} characters, got {value!r}",
                            field=field, key=key)
    if value != value.strip(" \t\n\r"):
        raise TemplateError(f"must not start or end with whitespace (whitespace around the separator is always "
                            f"allowed), got {value!r}", field=field, key=key)
    if value[0] in '{["-0123456789tfnNI':
        raise TemplateError(f"must not start with a character that can start a JSON value, got {value!r}",
                            field=field, key=key)
    return value


def _json_value(value: Any, field: str, key: str) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TemplateError(f"must be a JSON value ({e})", field=field, key=key) from None
    return value


def _prepare_json(args: dict[str, Any], field: str, key: str) -> None:
    """Check the options together; `_empty`: the `empty` value as JSON text (each region gets its own
    copy); `_value_end`: for `trailing: stream`, the factory of the scanner the parser runs (`jsonscan`)."""
    if "empty" in args:
        args["_empty"] = json.dumps(args.pop("empty"))
    if args.get("trailing") == "stream":
        if key != "content_args":
            raise TemplateError('"stream" applies to a field\'s own content only (a value parser reads a '
                                "whole value)", field=field, key=f"{key}.trailing")
        if args.get("string_delims"):
            raise TemplateError('"stream" does not work with string_delims (the end of a value is found by '
                                "tracking JSON strings and brackets)", field=field, key=f"{key}.trailing")
        from functools import partial

        from .jsonscan import ValueEnd

        args["_value_end"] = partial(ValueEnd, args.get("separator"), MAX_NESTING)
    if args.get("trailing") == "error" and len(args) == 1:
        del args["trailing"]  # the default: keep the plain fast path
    if (args.get("unquoted_keys") or args.get("string_delims")) and args.get("separator") is None:
        args["_translate"] = _to_json(bool(args.get("unquoted_keys")), args.get("string_delims") or ())


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
