"""Validate a response template and compile it once into an immutable `ResponseTemplate`.

`load_template(dict)` checks every key of the SPEC's tables and raises `TemplateError` naming the
field and key, then compiles delimiters, content parsers and transforms. The result is immutable and
cached by the template's content, so passing the same dict again costs one `marshal.dumps` (or one
`json.dumps` for data marshal cannot encode).
Untrusted templates are data only: nothing in them is evaluated or imported, and their size is
bounded (`MAX_FIELDS`, `MAX_PATTERN_LENGTH`, `MAX_LITERAL_LENGTH`, transform depth and size).
"""

from __future__ import annotations

import json
import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as _dc_field
from types import MappingProxyType
from typing import Any

import regex

from .anchor_cut import anchor_lead, last_cut
from .content import get_content_parser, parse_json, parse_text, parse_xml_inline
from .delimiters import CLOSE, OPEN, Delimiter, Watch, compile_regex, regex_expansion
from .errors import RegexTimeoutError, TemplateError
from .policy import ParsePolicy, policy_from_template, without_reasoning_rules
from .regex_leads import ANCHOR_ALL
from .transform import ONE_KEY_STEPS, compile_transform, placeholder_roots

__all__ = ["FieldSpec", "ResponseTemplate", "load_template", "MAX_FIELDS", "MAX_PATTERN_LENGTH", "RESERVED_KEYS"]

MAX_FIELDS = 64
#: Message keys the parser writes itself (`unparsed`: the regions that failed to parse); no field or
#: default may use them.
RESERVED_KEYS = frozenset({"unparsed"})
MAX_PATTERN_LENGTH = 4096
MAX_LITERAL_LENGTH = 1024
MAX_LITERALS = 64
#: Deepest nesting of dicts and lists anywhere in a template, and the most values it may hold.
MAX_DEPTH = 64
MAX_NODES = 100_000
#: All literal delimiters of a template together (start anchor, opens and closes): at most this many
#: literals and characters; all its regexes (delimiter patterns, `tag_pattern`s): at most this many
#: characters, and this many with their counted repeats written out (`delimiters.regex_expansion`; one
#: regex: `delimiters.MAX_REGEX_EXPANSION`). Checked before anything is compiled, they keep loading any
#: template under about a second (the largest shipped template has 10 delimiters, 350 characters).
MAX_DELIMITER_TEXT = 8_192
MAX_DELIMITER_LITERALS = 512
MAX_REGEX_TEXT = 16_384
MAX_REGEX_EXPANSION_TOTAL = 200_000
_CACHE_SIZE = 256

_TOP_KEYS = {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern", "policy"}
_FIELD_KEYS = {
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "repeats",
    "join",
    "optional",
    "content",
    "content_args",
    "transform",
    "transform_each",
}


@dataclass(frozen=True, eq=False)
class FieldSpec:
    """One compiled field. `parse(body, captures)` turns a region's raw text into its value."""

    name: str
    index: int
    open: Delimiter | None
    close: Delimiter | None
    content: str
    streamable: bool
    repeats: bool
    join: str | None
    optional: bool
    parse: Callable[[str, dict | None], Any]
    keeps_whitespace: bool = False  # whitespace-only text is a value (`text` with `strip: false`)
    #: `json` with `"trailing": "stream"`: makes the `jsonscan.ValueEnd` that ends the region where its value ends
    value_end: Callable[[], Any] | None = None
    #: `reshape(value, captures)`: the field's transform applied to a value already read (what `parse` does
    #: after its content parser; used when the `value_end` scanner has decoded the whole body already)
    reshape: Callable[[Any, dict | None], Any] | None = None
    #: `text` with `remove_pattern`: the `content.Markup` taken out of the text (chunks are streamed clean)
    markup: Any = None
    #: `text` with `report_as`: the message key that lists the markup's matches
    report: str | None = None
    #: `json` with no options: `parse(body, captures)` is `reshape(json.loads(body), captures)` (the one-shot
    #: plan decodes such a body in its loop: `plan_shape._fused_tails`)
    plain_json: bool = False
    #: How `tools=` schemas type the tool calls this field parses to (`tools.SCHEMA_TYPED`, or `TYPED_BODY` for a
    #: `json` / `python-call-list` body and, unlike native, a field with `value_parser_by` / `value_parser_group`):
    #: `tools` docs
    tool_typing: int = 0

    @property
    def implicit(self) -> bool:
        return self.open is None


@dataclass(frozen=True, eq=False)
class ResponseTemplate:
    """A validated, compiled response template. Create with `load_template`; never mutated.

    Attributes:
        fields: the fields in declaration order.
        implicit_field: the field with no open delimiter (captures leftover text), or None.
        start_anchor: the anchor (literal or compiled regex) that cuts the prefix.
    """

    fields: tuple[FieldSpec, ...]
    by_name: Mapping[str, FieldSpec]
    implicit_field: FieldSpec | None
    start_anchor: Delimiter
    needs_context: bool  # some delimiter regex may look behind its match (see delimiters.LOOKBEHIND_CONTEXT)
    idle_watch: Watch | None  # no explicit region open (implicit or null region)
    close_watches: tuple[Watch | None, ...]  # by field index, while that explicit region is open
    #: The same once the stream has moved past offset 0 (`Watch.late`; the same objects if no delimiter
    #: starts with `^` / `\A`), whether those need context, and whether any differs from its early one.
    late_idle_watch: Watch | None
    late_close_watches: tuple[Watch | None, ...]
    late_needs_context: bool
    has_early: bool
    _defaults_json: str
    _defaults_simple: tuple[tuple[str, Any], ...] | None
    _source_json: str
    #: Per-parser constants, computed once here rather than for every response.
    default_keys: frozenset[str]  # keys of `defaults`: kept in the message even when empty
    required: tuple[str, ...]  # fields with 'optional': false
    hold_whitespace: bool  # whitespace alone does not open the implicit field (see parser.py)
    has_regex: bool  # some delimiter, the start anchor or a content parser runs a regex (timed by the parser)
    policy: ParsePolicy | None  # the template's "policy" key (None: the neutral defaults; see policy.py)
    _snapshot: dict[str, Any]  # a private deep copy of the dict this was compiled from (see load_template)
    #: The texts of a start anchor whose every match is one of a few fixed texts that cannot overlap
    #: (`\[/INST\]|\[/TOOL_RESULTS\]`), or None: `cut_prefix` finds its last match with `str.rfind` (see
    #: `_anchor_texts`) instead of iterating over every match in the prompt.
    anchor_texts: tuple[str, ...] | None = None
    #: No text of `anchor_texts` starts another: at a position, at most one of them can be found.
    anchor_prefix_free: bool = False
    #: The fixed text every match of a regex start anchor (not `anchor_texts`) starts with, when none can start
    #: inside a match (`anchor_cut.anchor_lead`): `cut_prefix` finds the last match from the prompt's end, else None.
    anchor_lead: str | None = None
    #: The template's `plan.OneShotPlan` (False: it has none), built by `plan.plan_for` on first use.
    oneshot_plan: Any = _dc_field(default=None, init=False, repr=False)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def source(self) -> dict[str, Any]:
        """A fresh copy of the template as a plain dict (what `save_pretrained` writes)."""
        return json.loads(self._source_json)

    @property
    def defaults(self) -> dict[str, Any]:
        """A fresh copy of `defaults`."""
        return self.new_message()

    def new_message(self) -> dict[str, Any]:
        """A message pre-filled with `defaults`, sharing nothing mutable with the template."""
        if self._defaults_simple is not None:
            return dict(self._defaults_simple)
        return json.loads(self._defaults_json)

    def cut_prefix(self, prefix: str, timeout: float | None = None) -> str:
        """The part of `prefix` after the last start anchor (the whole prefix if there is none).

        Raises `RegexTimeoutError` if a `start_anchor_pattern` search runs longer than `timeout`
        (the prompt holds user text, so it is as untrusted as model output).
        """
        anchor = self.start_anchor
        if anchor.literals is not None and len(anchor.literals) == 1:
            lit = anchor.literals[0]
            i = prefix.rfind(lit)
            return prefix if i < 0 else prefix[i + len(lit) :]
        texts = self.anchor_texts
        if texts is not None:
            i = -1
            for text in texts:
                j = prefix.rfind(text)
                if j > i:
                    i, found = j, text
            if i < 0:
                return prefix
            # the last match starts at the last text found (no match overlaps another); which of the texts
            # found there is the match is the pattern's to say when one may start another, else it is that one
            # (no regex call: cold, right after a garbage collection, one costs ~20 µs)
            if self.anchor_prefix_free:
                return prefix[i + len(found) :]
            return prefix[anchor.fast.match(prefix, i).end() :]
        if self.anchor_lead is not None and len(prefix) <= anchor.untimed_search:  # (`anchor_cut.py`)
            return last_cut(prefix, self.anchor_lead, anchor.fast.match)
        last = None
        try:
            if len(prefix) <= anchor.untimed_search:  # proven bounded here: no timeout (`regex_safety`)
                for m in anchor.fast.finditer(prefix):
                    last = m
            else:
                for m in anchor.pattern.finditer(prefix, timeout=timeout):
                    last = m
        except TimeoutError:
            raise RegexTimeoutError(
                field=None, key=anchor.key, pattern=anchor.source, timeout=timeout or 0.0, text=prefix
            ) from None
        return prefix if last is None else prefix[last.end() :]

    def __reduce__(self) -> tuple:
        # pickle / multiprocessing: the source dict, recompiled through `load_template`'s cache on load
        return (load_template, (self.source,))

    def __copy__(self) -> ResponseTemplate:
        return self  # immutable

    def __deepcopy__(self, memo: dict) -> ResponseTemplate:
        return self  # immutable

    def __repr__(self) -> str:
        return f"ResponseTemplate(fields={list(self.field_names)}, implicit={getattr(self.implicit_field, 'name', None)!r})"


def _anchor_texts(source: str) -> tuple[str, ...] | None:
    """The fixed texts that are every match of regex `source`, if it is nothing but an alternation of them
    and no two of them overlap (no text starts inside another, or inside an occurrence of itself):
    then its matches found left to right are all the occurrences of the texts, so the last one starts
    where the last of them does. None otherwise, or when the standard library's `re` would read `source`
    differently (see `regex_leads.stdlib_equivalent`)."""
    from .regex_leads import _leads_of, _Unknown, stdlib_equivalent
    from .regex_safety import strict_parse

    parsed = strict_parse(source)
    if parsed is None or stdlib_equivalent(source) is None:
        return None
    try:
        found = _leads_of(parsed)
    except _Unknown:
        return None
    if not found or not all(whole for _, whole in found):
        return None  # some match goes on past fixed text
    texts = tuple(sorted({t for t, _ in found}))
    if not all(texts):
        return None
    for a in texts:
        for b in texts:
            for k in range(1, len(a)):
                if b.startswith(a[k:]) or a[k:].startswith(b):
                    return None  # `b` can start inside `a`
    return texts


_cache: OrderedDict[str, ResponseTemplate] = OrderedDict()
_cache_lock = threading.Lock()
#: A first-level cache keyed by `marshal.dumps(template, 2)`: about 3x cheaper than the JSON key, which
#: matters when `parse_response` is called once per short response (issue 6). marshal only accepts
#: exact built-in types, so equal bytes mean data of identical types and values, hence an identical
#: JSON key; its keys are only added once the JSON path has validated and compiled the template.
_fast_cache: dict[bytes, ResponseTemplate] = {}
#: The cheapest level, for the same dict object passed again (`parse_response(text, TEMPLATE)` in a
#: loop): `id(dict) -> (dict, compiled)`. A hit needs the very same object (the entry keeps it alive, so
#: its id cannot be reused) that still compares equal (`==`) to the compiled template's snapshot:
#: ~0.3 µs instead of ~1.9 µs for the marshal key (benchmarks/RESULTS.md). `==` sees every edit made in
#: place except those that keep the dict equal: `True` -> `1`, `1` -> `1.0`, reordered keys.
_by_id: dict[int, tuple[Mapping[str, Any], ResponseTemplate]] = {}


def load_template(template: Mapping[str, Any] | ResponseTemplate | str) -> ResponseTemplate:
    """Validate and compile a response template (cached by content).

    A dict passed again is recognised cheaply: by identity, if it still compares equal to what was
    compiled (so edits made in place are seen, except edits that keep it equal under `==`, such as
    `True` -> `1` or reordered keys: pass a new dict for those), else by its content. A string names a
    shipped template (`load_template("qwen3")`, see `hf_response_templates.list_templates()`).

    Example:
        >>> tpl = load_template({
        ...     "start_anchor": "<|im_start|>assistant\\n",
        ...     "fields": {"content": {"close": "<|im_end|>"}},
        ... })
        >>> tpl.field_names
        ('content',)

    Raises:
        TemplateError: the template is invalid; the message names the field and key.
    """
    if template.__class__ is dict:
        seen = _by_id.get(id(template))
        if seen is not None and seen[0] is template and template == seen[1]._snapshot:
            return seen[1]
    elif isinstance(template, ResponseTemplate):
        return template
    elif isinstance(template, str):
        return _shipped(template)
    elif not isinstance(template, Mapping):
        raise TemplateError(f"must be a dict, got {type(template).__name__}")
    try:
        fast_key: bytes | None = marshal.dumps(template, 2)  # version 2: no back-references, deterministic
    except (ValueError, RecursionError):  # not plain built-in data, or too deep: use the JSON key (which says so)
        fast_key = None
    else:
        hit = _fast_cache.get(fast_key)
        if hit is not None:
            _remember(template, hit)
            return hit
    # The JSON text is the cache key only for data it spells exactly: `{1: "x"}` and `{"1": "x"}` (or a
    # tuple and a list) are the same JSON but give different messages (or errors).
    exact = _check_shape(template)
    try:
        key = json.dumps(template, sort_keys=exact, ensure_ascii=False, allow_nan=False, default=_mapping_as_dict)
    except (TypeError, ValueError) as e:
        raise TemplateError(f"must be JSON-compatible data (str, number, bool, null, list, dict): {e}") from None
    except RecursionError:
        raise TemplateError("is nested too deeply (dicts and lists inside each other)") from None
    hit = None
    if exact:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
    if hit is None:
        hit = _compile(_plain_copy(template))
        if exact:
            with _cache_lock:
                _cache[key] = hit
                if len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
    if fast_key is not None:
        with _cache_lock:
            _fast_cache[fast_key] = hit
            if len(_fast_cache) > _CACHE_SIZE:
                del _fast_cache[next(iter(_fast_cache))]  # the oldest entry (first in, first out)
        _remember(template, hit)
    return hit


def _check_shape(template: Mapping[str, Any]) -> bool:
    """Reject data nested deeper than `MAX_DEPTH` or larger than `MAX_NODES`, before anything recursive
    (the cache key, the private copy, validation) touches it: a clear `TemplateError` naming where, never
    a `RecursionError`. Iterative, linear in the size of the data.

    Returns whether JSON spells the data exactly: every key a string, no tuples.
    """
    stack: list[tuple[Any, int, str]] = [(template, 0, "")]
    nodes = 0
    exact = True
    while stack:
        obj, depth, where = stack.pop()
        if isinstance(obj, Mapping):
            children: Any = obj.items()
            if exact and not all(k.__class__ is str for k in obj):
                exact = False
        elif isinstance(obj, (list, tuple)):
            children = enumerate(obj)
            if obj.__class__ is not list:
                exact = False
        else:
            continue
        if depth >= MAX_DEPTH:
            parts = where.split(".")
            field = parts[1] if parts[0] == "fields" and len(parts) > 1 else None
            raise TemplateError(
                f"is nested more than {MAX_DEPTH} levels deep (dicts and lists inside each other, under {where!r})",
                field=field,
                key=(parts[2] if len(parts) > 2 else None) if field else parts[0],
            )
        for k, v in children:
            nodes += 1
            if nodes > MAX_NODES:
                raise TemplateError(
                    f"holds more than {MAX_NODES:,} values (dicts, lists and scalars); it cannot be a response "
                    f"template (under {where or str(k)!r})"
                )
            if isinstance(v, (Mapping, list, tuple)):
                stack.append((v, depth + 1, str(k) if depth == 0 else (f"{where}.{k}" if depth < 3 else where)))
    return exact


_by_name: dict[str, ResponseTemplate] = {}


def _shipped(name: str) -> ResponseTemplate:
    """`load_template("qwen3")`: a shipped template by name (`library.list_templates()`), compiled once."""
    hit = _by_name.get(name)
    if hit is not None:
        return hit
    from .library import get_template, list_templates

    if name not in list_templates():
        raise TemplateError(
            f"must be a dict (or the name of a shipped template: {', '.join(list_templates())}), got the "
            f"string {name[:80]!r}; load a template file with json.load first"
        )
    hit = _by_name[name] = load_template(get_template(name))
    return hit


def _mapping_as_dict(obj: Any) -> dict:
    """`json.dumps` hook: any Mapping (a `MappingProxyType`, say) is written as a dict."""
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _plain_copy(obj: Any) -> Any:
    """A deep copy in which every Mapping is a dict (the template was checked to be JSON data)."""
    if isinstance(obj, Mapping):
        return {k: _plain_copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain_copy(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_plain_copy(v) for v in obj)
    return obj


def _remember(template: Mapping[str, Any], compiled: ResponseTemplate) -> None:
    """Add a plain dict that loaded as `compiled` to the identity cache (`_by_id`); it is hit only while
    the dict still equals `compiled`'s snapshot."""
    if template.__class__ is not dict:
        return
    with _cache_lock:
        _by_id[id(template)] = (template, compiled)
        if len(_by_id) > _CACHE_SIZE:
            del _by_id[next(iter(_by_id))]


def _compile(spec: dict[str, Any]) -> ResponseTemplate:
    """Validate and compile `spec`, a private deep copy of the user's template (kept as `_snapshot`)."""
    unknown = sorted(set(spec) - _TOP_KEYS)
    if unknown:
        raise TemplateError(
            f"unknown top-level key(s) {unknown}; allowed: {sorted(_TOP_KEYS)}", key=unknown[0]
        )
    version = spec.get("version", 1)
    if version != 1 or isinstance(version, bool):
        raise TemplateError(f"unsupported version {version!r}; this package reads version 1", key="version")
    defaults = spec.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TemplateError(f"must be a dict, got {type(defaults).__name__}", key="defaults")
    reserved = sorted(k for k in defaults if k in RESERVED_KEYS)
    if reserved:
        raise TemplateError(
            f"sets {reserved[0]!r}, a key reserved for the raw text of regions that failed to parse", key="defaults"
        )
    fields_raw = spec.get("fields")
    if not isinstance(fields_raw, dict) or not fields_raw:
        raise TemplateError('must be a non-empty dict of {field_name: field_spec}', key="fields")
    if len(fields_raw) > MAX_FIELDS:
        raise TemplateError(f"has {len(fields_raw)} fields; at most {MAX_FIELDS} are allowed", key="fields")

    policy = policy_from_template(spec.get("policy"))
    if policy is not None and policy.tool_calls_in_reasoning == "reasoning":
        # a tool call written inside reasoning stays reasoning: compile without the close alternatives that end
        # reasoning where a call starts (the source, `_source_json`, keeps them: see policy.template_for)
        fields_raw = without_reasoning_rules({"fields": _plain_copy(fields_raw)})["fields"]
    _check_delimiter_budget(spec, fields_raw)
    anchor = _delimiter(spec, "start_anchor", "start_anchor_pattern", field=None, kind=OPEN, rank=0)
    if anchor is None:
        raise TemplateError(
            "needs exactly one of 'start_anchor' (a literal such as \"<|im_start|>assistant\\n\") or "
            "'start_anchor_pattern' (a regex): it marks where the assistant message starts in the prompt",
            key="start_anchor",
        )

    fields: list[FieldSpec] = []
    for index, (name, raw) in enumerate(fields_raw.items()):
        fields.append(_compile_field(name, raw, index))

    implicit = [f for f in fields if f.implicit]
    if len(implicit) > 1:
        raise TemplateError(
            f"fields {[f.name for f in implicit]} have no 'open'/'open_pattern'; at most one field may be "
            "implicit (the one that captures text outside every other region). Give the others an 'open'",
            field=implicit[1].name,
            key="open",
        )
    implicit_field = implicit[0] if implicit else None
    for f in fields:
        if f.report is not None and (f.report in fields_raw or f.report in RESERVED_KEYS or f.report in defaults):
            raise TemplateError(
                f"is {f.report!r}, a key the message already has (a field, a default, or reserved); report_as "
                "needs a key of its own, e.g. \"citations\"",
                field=f.name,
                key="content_args.report_as",
            )

    # Priority within a watch, for matches at the same position and of the same length: opens (by field
    # name, so that the order of keys in the JSON, which `save_pretrained` sorts, never matters) before
    # the implicit field's close.
    idle = [f.open for f in sorted(fields, key=lambda f: f.name) if f.open is not None]
    if implicit_field is not None and implicit_field.close is not None:
        idle.append(implicit_field.close)
    idle = [_with_rank(d, r) for r, d in enumerate(idle)]
    # A region that ends where its JSON value ends (`value_end`) has every chunk read by the parser's scanner:
    # its watch has no prefilter, so that no fast path routes a chunk around the scanner.
    close_watches = tuple(
        Watch([f.close], prefilter=f.value_end is None) if (f.close is not None and not f.implicit) else None
        for f in fields
    )
    idle_watch = Watch(idle) if idle else None
    # Earlier text is kept for regexes only when one could look at it (lookbehind, ^, \b, ...).
    needs_context = any(w.needs_context for w in (idle_watch, *close_watches) if w is not None)
    # Once the stream has moved past offset 0, delimiters that only match there (`^\s*...`) are dead:
    # the parser then switches to `late` watches without them (with a prefilter, maybe without context).
    late_idle = _late(idle_watch)
    late_closes = tuple(_late(w) for w in close_watches)
    late_needs_context = any(w.needs_context for w in (late_idle, *late_closes) if w is not None)
    simple = all(v is None or isinstance(v, (str, int, float, bool)) for v in defaults.values())
    texts = _anchor_texts(anchor.pattern.pattern) if anchor.pattern is not None else None
    return ResponseTemplate(
        fields=tuple(fields),
        by_name=MappingProxyType({f.name: f for f in fields}),
        implicit_field=implicit_field,
        start_anchor=anchor,
        needs_context=needs_context,
        idle_watch=idle_watch,
        close_watches=close_watches,
        late_idle_watch=late_idle,
        late_close_watches=late_closes,
        late_needs_context=late_needs_context,
        has_early=late_idle is not idle_watch or late_closes != close_watches,
        _defaults_json=json.dumps(defaults),
        _defaults_simple=tuple(defaults.items()) if simple else None,
        _source_json=json.dumps(spec, ensure_ascii=False),
        default_keys=frozenset(defaults),
        required=tuple(f.name for f in fields if not f.optional),
        hold_whitespace=implicit_field is not None and not implicit_field.keeps_whitespace,
        has_regex=anchor.literals is None
        or any(d is not None and d.literals is None for f in fields for d in (f.open, f.close))
        or any(f.content == "xml-inline" or f.markup is not None for f in fields),
        policy=policy,
        _snapshot=spec,
        anchor_texts=texts,
        anchor_prefix_free=texts is not None and not any(a != b and b.startswith(a) for a in texts for b in texts),
        anchor_lead=anchor_lead(anchor.pattern.pattern) if anchor.literals is None and texts is None else None,
    )


_DELIMITER_KEYS = ("open", "open_pattern", "close", "close_pattern")


def _check_delimiter_budget(spec: Mapping[str, Any], fields_raw: Mapping[str, Any]) -> None:
    """`MAX_DELIMITER_TEXT`, `MAX_DELIMITER_LITERALS` and `MAX_REGEX_TEXT`, checked on the raw data before
    anything is compiled (values of the wrong type are left to the per-key checks)."""
    chars = literals = regex_chars = expanded = 0
    owners: list[tuple[str | None, Mapping[str, Any], tuple[str, ...]]] = [
        (None, spec, ("start_anchor", "start_anchor_pattern"))
    ]
    owners += [(name, raw, _DELIMITER_KEYS) for name, raw in fields_raw.items() if isinstance(raw, Mapping)]
    for field, raw, keys in owners:
        found: list[tuple[str, Any]] = [(key, raw.get(key)) for key in keys]
        stack = [raw.get("content_args")]
        while stack:  # tag patterns, also those of nested value parsers
            node = stack.pop()
            if isinstance(node, Mapping):
                found += [("content_args.tag_pattern", v) for k, v in node.items() if k == "tag_pattern"]
                stack.extend(node.values())
        for key, value in found:
            for v in [value] if isinstance(value, str) else value if isinstance(value, list) else ():
                if not isinstance(v, str):
                    continue
                if key.endswith("pattern"):
                    regex_chars += len(v)
                    expanded += regex_expansion(v)
                else:
                    chars += len(v)
                    literals += 1
            if regex_chars > MAX_REGEX_TEXT:
                raise TemplateError(
                    f"brings the template's regexes to more than {MAX_REGEX_TEXT:,} characters in total "
                    "(patterns and tag patterns of every field)", field=field, key=key,
                )
            if expanded > MAX_REGEX_EXPANSION_TOTAL:
                raise TemplateError(
                    f"brings the template's regexes to more than {MAX_REGEX_EXPANSION_TOTAL:,} characters with "
                    "their counted repeats written out (a{1000} is 1,000; every field's patterns together)",
                    field=field, key=key,
                )
            if chars > MAX_DELIMITER_TEXT or literals > MAX_DELIMITER_LITERALS:
                raise TemplateError(
                    f"brings the template's literal delimiters to more than {MAX_DELIMITER_LITERALS} literals or "
                    f"{MAX_DELIMITER_TEXT:,} characters in total (every field's)", field=field, key=key,
                )


def _late(watch: Watch | None) -> Watch | None:
    """`watch` without the delimiters that can only match at stream offset 0 (and with a prefilter that
    leaves out their anchored alternatives); `watch` itself when it has none (`Watch.late` is set)."""
    if watch is None:
        return None
    if not any(d.anchored for d in watch.delimiters):
        return watch
    kept = [d for d in watch.delimiters if d.anchored != ANCHOR_ALL]
    late = Watch(kept, early=False, prefilter=watch.prefilter) if kept else None
    watch.late = late
    if late is not None:
        late.late = late
    return late


def _with_rank(d: Delimiter, rank: int) -> Delimiter:
    return Delimiter(d.field, d.kind, d.key, d.literals, d.pattern, d.source, rank, d.group_names)


def _delimiter(
    raw: Mapping[str, Any], lit_key: str, pat_key: str, *, field: str | None, kind: int, rank: int
) -> Delimiter | None:
    has_lit, has_pat = lit_key in raw, pat_key in raw
    if has_lit and has_pat:
        raise TemplateError(
            f"has both '{lit_key}' and '{pat_key}'; use one (a literal, or a regex)", field=field, key=pat_key
        )
    if has_lit:
        value = raw[lit_key]
        literals = [value] if isinstance(value, str) else value
        if not isinstance(literals, list) or not literals or not all(isinstance(s, str) for s in literals):
            raise TemplateError(
                f"must be a string or a non-empty list of strings, got {value!r}", field=field, key=lit_key
            )
        if len(literals) > MAX_LITERALS:
            raise TemplateError(f"lists more than {MAX_LITERALS} literals", field=field, key=lit_key)
        for s in literals:
            if not s:
                raise TemplateError("must not be empty (an empty delimiter matches everywhere)", field=field, key=lit_key)
            if len(s) > MAX_LITERAL_LENGTH:
                raise TemplateError(f"is longer than {MAX_LITERAL_LENGTH} characters", field=field, key=lit_key)
        literals = list(dict.fromkeys(literals))
        pattern = regex.compile(
            "|".join(regex.escape(s) for s in sorted(literals, key=len, reverse=True)), cache_pattern=False
        )
        return Delimiter(field or "", kind, lit_key, tuple(literals), pattern, " | ".join(literals), rank)
    if has_pat:
        source = raw[pat_key]
        if not isinstance(source, str) or not source:
            raise TemplateError(f"must be a non-empty regex string, got {source!r}", field=field, key=pat_key)
        if len(source) > MAX_PATTERN_LENGTH:
            raise TemplateError(f"is longer than {MAX_PATTERN_LENGTH} characters", field=field, key=pat_key)
        try:
            pattern = compile_regex(source)
        except (regex.error, OverflowError, RecursionError) as e:
            raise TemplateError(f"is not a valid regex ({e}): {source!r}", field=field, key=pat_key) from None
        if kind == OPEN and field is None:  # the start anchor cuts the prompt: it must consume something
            if _matches_empty(pattern, ("",), 0):
                raise TemplateError(
                    f"{source!r} matches the empty string; a start anchor must match the text that starts "
                    "the assistant message (such as \"<|im_start|>assistant\\n\")",
                    field=field,
                    key=pat_key,
                )
        elif _matches_empty(pattern, ("",), 0) and _matches_empty(pattern, _NEUTRAL_TEXTS, 1):
            raise TemplateError(
                f"{source!r} matches the empty string, so it would fire at every position and never advance; "
                "make it require at least one character"
                + (" (to run a region to the end of the stream, omit 'close')" if kind == CLOSE else ""),
                field=field,
                key=pat_key,
            )
        if "content" in pattern.groupindex:
            raise TemplateError(
                "names a group 'content', which is reserved for the parsed body in transforms; rename it",
                field=field,
                key=pat_key,
            )
        return Delimiter(
            field or "", kind, pat_key, None, pattern, source, rank, frozenset(pattern.groupindex)
        )
    return None


#: Texts of one repeated character that no template looks for. A delimiter regex that matches the empty
#: string both in an empty text and at offset 1 of one of these matches it anywhere (`x*`, `(?:)`, `\s*`,
#: `(?!<)`, `\G`): rejected. Anchored zero-width delimiters (`^`, `$`, `\Z`, `\b`, `(?:^|<think>)`) do not
#: match between two such characters, and lookaheads (`(?=<tool_call>)`, `(?=[\s\S])`) not in an empty
#: text: accepted.
_NEUTRAL_TEXTS = ("\x00\x00\x00", "\U0010fffd\U0010fffd\U0010fffd")


def _matches_empty(pattern: Any, texts: tuple[str, ...], pos: int) -> bool:
    """Whether `pattern` matches the empty string at offset `pos` of one of `texts`."""
    for text in texts:
        try:
            m = pattern.match(text, pos, timeout=1.0)
        except TimeoutError:  # pragma: no cover - three characters cannot backtrack much
            return True
        if m is not None and m.end() == pos:
            return True
    return False


def _flag(raw: Mapping[str, Any], key: str, default: bool, field: str) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise TemplateError(f"must be true or false, got {value!r}", field=field, key=key)
    return value


def _strip_text(body: str, captures: dict | None) -> str:
    return body.strip()


def _keep_text(body: str, captures: dict | None) -> str:
    return body


def _compile_field(name: Any, raw: Any, index: int) -> FieldSpec:
    if not isinstance(name, str) or not name:
        raise TemplateError(f"field names must be non-empty strings, got {name!r}", key="fields")
    if name in RESERVED_KEYS:
        raise TemplateError(
            f"the name {name!r} is reserved: the message keeps the raw text of regions that failed to parse "
            "under it. Rename the field",
            field=name,
        )
    if not isinstance(raw, dict):
        raise TemplateError(f"must be a dict of field keys, got {type(raw).__name__}", field=name)
    unknown = sorted(set(raw) - _FIELD_KEYS)
    if unknown:
        raise TemplateError(
            f"unknown key(s) {unknown}; allowed: {sorted(_FIELD_KEYS)}", field=name, key=unknown[0]
        )
    open_ = _delimiter(raw, "open", "open_pattern", field=name, kind=OPEN, rank=0)
    close = _delimiter(raw, "close", "close_pattern", field=name, kind=CLOSE, rank=0)
    repeats = _flag(raw, "repeats", False, name)
    optional = _flag(raw, "optional", True, name)
    transform_each = _flag(raw, "transform_each", False, name)

    join = raw.get("join")
    if join is not None:
        if not isinstance(join, str):
            raise TemplateError(f"must be a string separator, got {join!r}", field=name, key="join")
        if not repeats:
            raise TemplateError(
                "only works with 'repeats': true (it joins the repeated matches into one string)",
                field=name,
                key="join",
            )

    content = raw.get("content", "text")
    if not isinstance(content, str):
        raise TemplateError(f"must be the name of a content parser, got {content!r}", field=name, key="content")
    parser = get_content_parser(content, field=name)
    args = parser.compile_args(raw.get("content_args"), name)
    parse_content = parser.parse

    groups = (open_.group_names if open_ else frozenset()) | (close.group_names if close else frozenset())
    transform = raw.get("transform")
    if transform_each and transform is None:
        raise TemplateError("is true but the field has no 'transform' to apply to each element", field=name,
                            key="transform_each")
    if transform is None:
        if groups:
            raise TemplateError(
                f"the delimiter patterns capture named group(s) {sorted(groups)}, but the field has no "
                "'transform'; captures only reach the message through a transform such as "
                '{"name": "{name}", "arguments": "{content}"}. Add one, or use unnamed groups (?:...)',
                field=name,
                key="transform",
            )
        apply = None
    else:
        apply = compile_transform(transform, field=name)
        roots = placeholder_roots(transform)
        own = sorted(roots.intersection(ONE_KEY_STEPS))
        if own and not transform_each:
            raise TemplateError(
                f"uses {', '.join('{' + r + '}' for r in own)}: $key and $value at the start of a path read the "
                "transform_each element (a one-key object); without transform_each write {content.$key} / "
                "{content.$value}",
                field=name,
                key="transform",
            )
        if own and groups:
            raise TemplateError(
                f"uses {', '.join('{' + r + '}' for r in own)} with transform_each, but the delimiter patterns "
                f"capture named group(s) {sorted(groups)}, which share the element's scope: the element would "
                "not be a one-key object. Use unnamed groups (?:...)",
                field=name,
                key="transform",
            )
        if not transform_each:
            roots = roots - groups - {"content"}
            if roots:
                raise TemplateError(
                    f"uses placeholder(s) {sorted('{' + r + '}' for r in roots)} that are neither 'content' nor a "
                    f"named group of open_pattern/close_pattern (groups: {sorted(groups) or 'none'})",
                    field=name,
                    key="transform",
                )

    def parse(body: str, captures: dict | None) -> Any:
        value = parse_content(body, args)
        if apply is None:
            return value
        return reshape(value, captures)

    def reshape(value: Any, captures: dict | None) -> Any:
        if apply is None:
            return value
        if transform_each:
            if not isinstance(value, list):
                raise ValueError(
                    f"transform_each needs the parsed content to be a list, got {type(value).__name__}"
                )
            out = []
            for item in value:
                if not isinstance(item, dict):
                    raise ValueError(
                        f"transform_each needs every list element to be a dict, got {type(item).__name__}"
                    )
                out.append(apply({**captures, **item} if captures else item))
            return out
        scope = {**captures, "content": value} if captures else {"content": value}
        return apply(scope)

    if apply is None and parse_content is parse_text and "remove_pattern" not in args:
        # the common `text` field: one call, not three
        parse = _strip_text if args.get("strip", True) else _keep_text
    elif apply is None and parse_content is parse_text and args.get("strip", True):
        # a `text` field with `remove_pattern` (Cohere's, with `report_as`): a body where no match of it can start is
        # its value stripped (`Markup.sub` returns it as it is), which the one-shot plan reads without this call
        # (`plan_shape._fast_shape`'s `lead`)
        parse.unmarked_strip = True  # type: ignore[attr-defined]
    elif apply is not None and not transform_each:
        # the usual transformed field (every tool call's): `parse` and `reshape` as above, one call each (not
        # `parse` calling `reshape`), and `reshape.decoded(body, (value, captures))`, the one-shot plan's
        # parse of a region whose JSON value its scan decoded (`plan_shape`'s `dinfo`), one call too
        def parse(body: str, captures: dict | None) -> Any:
            value = parse_content(body, args)
            return apply({**captures, "content": value} if captures else {"content": value})

        def reshape(value: Any, captures: dict | None) -> Any:
            return apply({**captures, "content": value} if captures else {"content": value})

        def decoded(body: str, pair: tuple[Any, dict | None]) -> Any:
            value, captures = pair
            return apply({**captures, "content": value} if captures else {"content": value})

        parts = getattr(apply, "parts", None)
        if parts is not None and parts[5] == "content" != parts[3]:
            # {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}} (every Mistral call):
            # the scope's two values read where they are, not from a scope dict made per region
            base, k0, a0, m0, a1, _ = parts

            def parse(body: str, captures: dict | None) -> Any:
                value = parse_content(body, args)
                if captures and m0 in captures:
                    out = base.copy()
                    out[k0] = {a0: captures[m0], a1: value}
                    return out
                return apply({**captures, "content": value} if captures else {"content": value})

            small = args.get("_plain_small") or args.get("_select_small") if parse_content is parse_xml_inline else None
            if small is not None:  # (the usual xml-inline arguments: `parse_xml_inline`'s first test, read here; or
                # DeepSeek V3.2's, whose values are typed by their `string` group: `xml_inline._select_reader`)
                limit, findall = small

                def parse(body: str, captures: dict | None) -> Any:
                    value = dict(findall(body)) if len(body) <= limit else parse_content(body, args)
                    if captures and m0 in captures:
                        out = base.copy()
                        out[k0] = {a0: captures[m0], a1: value}
                        return out
                    return apply({**captures, "content": value} if captures else {"content": value})

            def reshape(value: Any, captures: dict | None) -> Any:
                if captures and m0 in captures:
                    out = base.copy()
                    out[k0] = {a0: captures[m0], a1: value}
                    return out
                return apply({**captures, "content": value} if captures else {"content": value})

            def decoded(body: str, pair: tuple[Any, dict | None]) -> Any:
                value, captures = pair
                if captures and m0 in captures:
                    out = base.copy()
                    out[k0] = {a0: captures[m0], a1: value}
                    return out
                return apply({**captures, "content": value} if captures else {"content": value})

        two = getattr(apply, "values2", None)
        keys0 = getattr(two[3], "keys", None) if two is not None else None
        keys1 = getattr(two[5], "keys", None) if two is not None else None
        if keys0 is not None and keys1 is not None and keys0[0] == keys1[0] == "content" and len(keys0[1]) == 1 \
                and len(keys1[1]) == 2:
            # {"type": "function", "function": {"name": "{content.name}", "arguments":
            # "{content.parameters|content.arguments}"}} (Llama 4 JSON's calls): a decoded value's keys read where
            # they are (`transform._level`'s `constants_and_two_values` with `apply_key` and `two_keys_of_one_root`,
            # in one frame; the scope's "content" is the value whatever the captures); anything else (not a plain
            # dict, a key missing) by the transform itself
            base, k0, a0, _, a1, _ = two
            (n0,), (n1, n2) = keys0[1], keys1[1]

            def decoded(body: str, pair: tuple[Any, dict | None]) -> Any:
                value, captures = pair
                if value.__class__ is dict and n0 in value:
                    if n1 in value:
                        out = base.copy()
                        out[k0] = {a0: value[n0], a1: value[n1]}
                        return out
                    if n2 in value:
                        out = base.copy()
                        out[k0] = {a0: value[n0], a1: value[n2]}
                        return out
                return apply({**captures, "content": value} if captures else {"content": value})

        reshape.decoded = decoded  # type: ignore[attr-defined]

    return FieldSpec(
        name=name,
        index=index,
        open=open_,
        close=close,
        content=content,
        streamable=parser.streamable,
        repeats=repeats,
        join=join,
        optional=optional,
        parse=parse,
        keeps_whitespace=content == "text" and args.get("strip", True) is False,
        value_end=args.get("_value_end") if parser.parse is parse_json else None,
        reshape=reshape,
        markup=args.get("remove_pattern") if content == "text" else None,
        report=args.get("report_as") if content == "text" else None,
        plain_json=parser.parse is parse_json and not args,
        tool_typing=_tool_typing(content, raw.get("content_args")),
    )


def _tool_typing(content: str, content_args: Any) -> int:
    """`FieldSpec.tool_typing` of a field: `TYPED_BODY` for a `json` or `python-call-list` body (as Transformers 5.25
    decides it) and for a field whose `content_args` have `value_parser_by` (or this package's older spelling,
    `value_parser_group`), whatever the parser; else `SCHEMA_TYPED`.

    The `value_parser_by` rule is a deliberate difference from 5.25, which leaves such a field's calls untyped: the
    model's tag says how to read each value, so a value whose schema admits a string stays as the tag's parser gave
    it, but a string for a parameter that admits no string (DeepSeek V3.2's `string="true"` `42` for an `integer`)
    is cast, as vLLM's parser does: a strict tool would reject it as written (`tools` docs)."""
    from .tools import SCHEMA_TYPED, TYPED_BODY, TYPED_BODY_PARSERS  # local: tools imports content

    if isinstance(content_args, dict) and ("value_parser_by" in content_args or "value_parser_group" in content_args):
        return TYPED_BODY
    return TYPED_BODY if content in TYPED_BODY_PARSERS else SCHEMA_TYPED
