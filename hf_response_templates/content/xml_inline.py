"""The `xml-inline` content parser: `key -> value` pairs found by a tag pattern, searched in bounded
windows so unclosed tags stay linear, and `TagShape`, the tag's shape the partial XML reader streams with."""

from __future__ import annotations

import re as _stdre
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import regex

try:  # the standard library's regex constants, used only to read the structure of a `tag_pattern`
    from re import _constants as _sre_constants
except ImportError:  # Python < 3.11
    import sre_constants as _sre_constants  # type: ignore[no-redef]
from ..errors import RegexTimeoutError, TemplateError
from .base import DEFAULT_REGEX_TIMEOUT, REGEX_TIMEOUT, _regex_arg
from .patterns import _ASSERTIONS, _every_item, _is_literals, _is_terminator
from .value_parsers import _as_is, _json_or_text


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


# --------------------------------------------------------------------------- xml-inline, kv-lines


def _key_value_columns(pattern: regex.Pattern) -> tuple[int, int] | None:
    """Where `key` and `value` are in the tuples of `pattern.findall`, if both groups take part in
    every match (so neither can be None); None if they may not, or if that is unknown.

    Read from the standard library's parse of the pattern: a group written at the top level of the
    pattern (not inside an alternative, an optional or repeated part, or a lookaround) always takes
    part. `findall` is ~2x cheaper than `finditer` plus `Match.group`.
    """
    from ..regex_leads import always_groups  # local: a structural helper shared with the delimiter prefilters

    always = always_groups(pattern)  # (none for `regex`-only syntax, duplicate group names, or unsure: finditer)
    if "key" not in always or "value" not in always:
        return None
    return pattern.groupindex["key"] - 1, pattern.groupindex["value"] - 1


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
    from ..regex_leads import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

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
    from ..regex_leads import stdlib_parse  # local: a structural helper shared with the delimiter prefilters

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
    from ..delimiters import untimed_spans  # local: delimiters imports this module's neighbours
    from ..regex_leads import stdlib_equivalent

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
    """Check `value_parser_by` (or its older spelling `value_parser_group` / `value_parsers`) against
    `tag_pattern`, then work out how `parse_xml_inline` reads matches: `_columns` (see `_key_value_columns`),
    `_chain` (see `_literal_chain`), `_select` (`(group, {text: value parser}, the group's column in findall's
    tuples or None)` when a group picks each value's parser) and `_plain` (the result is just `dict(findall(...))`:
    key and value are the only groups, nothing else is asked).

    Either spelling leaves the same compiled arguments: `value_parser_by` as `(group, {text: value parser})` (the
    older keys are taken out), so every reader of them (`_select`, `_select_small`, the partial reader) sees one
    thing whichever was written. (`args` is the compiled copy: the template dict the user gave is not changed.)"""
    pattern = args["tag_pattern"]
    by = args.pop("value_parser_by", None)
    group, parsers = args.pop("value_parser_group", None), args.pop("value_parsers", None)
    if by is not None and (group is not None or parsers is not None):
        raise TemplateError(
            "is given together with value_parser_group / value_parsers, this package's older spelling of the same "
            "option: give only one of them (value_parser_by, as Transformers writes it)",
            field=field,
            key=f"{key}.value_parser_by",
        )
    if by is not None:
        group, parsers = by
        if group not in pattern.groupindex:
            raise TemplateError(
                f"names group {group!r}, which tag_pattern does not define (its named groups: "
                f"{sorted(pattern.groupindex)})",
                field=field,
                key=f"{key}.value_parser_by.group",
            )
    elif (group is None) != (parsers is None):
        given, other = ("value_parser_group", "value_parsers") if parsers is None else ("value_parsers",
                                                                                       "value_parser_group")
        raise TemplateError(
            f"needs {other} too: value_parser_group names the tag_pattern group whose text picks a parser "
            "from value_parsers (or write both as value_parser_by: {\"group\": ..., \"parsers\": {...}})",
            field=field,
            key=f"{key}.{given}",
        )
    elif group is not None:
        if group in ("key", "value") or group not in pattern.groupindex:
            others = sorted(set(pattern.groupindex) - {"key", "value"})
            raise TemplateError(
                f"must name a named group of tag_pattern other than key and value, got {group!r} "
                f"(tag_pattern's other groups: {others or 'none'})",
                field=field,
                key=f"{key}.value_parser_group",
            )
    if group is not None:
        args["value_parser_by"] = (group, parsers)
    columns = _key_value_columns(pattern)
    if group is not None:
        # with `columns`, findall's tuples hold the group too ("" when it did not take part, which picks
        # the default, as None does, unless "" is a key of value_parsers)
        column = pattern.groupindex[group] - 1 if columns is not None and "" not in parsers else None
        args["_select"] = (group, parsers, column)
    args["_columns"] = columns
    args["_chain"] = _literal_chain(pattern)
    args["_shape"] = _tag_shape(pattern)
    from ..delimiters import untimed_spans  # local: delimiters imports this module's neighbours
    from ..regex_leads import stdlib_equivalent

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
    #: With `_plain` and the `re` twin: `(length, findall)`, the bodies up to `length` that `parse_xml_inline`
    #: reads as `dict(findall(text))` whatever else (untimed, and too short for `_search_bounds`), read so
    #: before any other lookup (the usual tool call's arguments); by the twin with its value written out where it
    #: has one (`_unrolled`: Qwen3.5's, Qwen3-Coder's)
    if args["_plain"] and args["_stdlib"] is not None:
        limit = args["_untimed"] if args["_chain"] is None else min(args["_untimed"], _BOUND_FROM)
        shape = args["_shape"]
        twin = (_unrolled(pattern.pattern, shape) if shape is not None else None) or args["_stdlib"]
        args["_plain_small"] = (limit, twin.findall)
    #: With `_select` (its group's column known), the `re` twin, no `merge_duplicates` and value parsers that raise
    #: no `TimeoutError` (`_SURE_PARSERS`): `(length, read)`, the bodies up to `length` that `parse_xml_inline`
    #: reads as `_select_rows(findall(text), ...)` whatever else, read by `read` (`_select_reader`) so; a field's
    #: parse takes `dict(read(text))` (`template._compile_field`: the same test as `_plain_small`'s)
    select = args.get("_select")
    if (select is not None and select[2] is not None and args["_stdlib"] is not None
            and not args.get("merge_duplicates", False)
            and all(p in _SURE_PARSERS for p in (*select[1].values(), args.get("value_parser")))):
        limit = args["_untimed"] if args["_chain"] is None else min(args["_untimed"], _BOUND_FROM)
        args["_select_small"] = (limit, _select_reader(args["_stdlib"].findall, columns, select[2], select[1],
                                                       args.get("value_parser")))


#: The value parsers `_select_reader` reads with (`value_parsers._fast_value_parser`'s, and none): they raise no
#: `TimeoutError` (which `parse_xml_inline` turns into a `RegexTimeoutError` of the tag pattern)
_SURE_PARSERS = (None, str.strip, _as_is, _json_or_text)


def _select_reader(findall: Callable[[str], list[tuple[str, ...]]], columns: tuple[int, int], column: int,
                   parsers: Mapping[str, Callable[[str], Any]], default: Callable[[str], Any] | None,
                   ) -> Callable[[str], dict[str, Any]]:
    """`read(text)`: `_select_rows(findall(text), columns, column, parsers, default, False)` for `findall` of the
    `re` twin (whose tuples hold "" for a group that did not take part, never None: no key is None, and "" picks
    `default` as it is not a key of `parsers` where `column` is known), with `_as_is` read as no parser (no call
    per value kept as it is: DeepSeek V3.2's `string="true"` values)."""
    k, v = columns
    get = {text: None if p is _as_is else p for text, p in parsers.items()}.get
    fallback = None if default is _as_is else default

    def read(text: str) -> dict[str, Any]:
        out = {}
        for t in findall(text):
            parse = get(t[column], fallback)
            out[t[k]] = t[v] if parse is None else parse(t[v])
        return out

    return read


def _unrolled(source: str, shape: TagShape) -> Any | None:
    r"""The `re` twin of a tag pattern of `shape` (HEAD ``(?P<value>.*?)`` TAIL, `_tag_shape`) whose TAIL does not start
    with one fixed text (an optional newline, lookaheads or several ends: Qwen3.5's ``\n?(?:</parameter>|(?=
    <parameter=)|(?=</function>)|\Z)``), with the lazy value written out: ``[^S]*(?:(?!TAIL)[S][^S]*)*``, `S` the
    characters TAIL can start with (the first characters of its ends and lookaheads, and the newline). TAIL cannot
    match at a position whose character is not in `S` (nor at the end, where ``[^S]*`` stops anyway), so the written
    out value stops where the lazy one stops, at the first position where TAIL matches (it goes on only over a
    character of `S` where TAIL does not match), and is the same text; `re` reads it ~2.5x faster (the lazy one tries
    TAIL after each character). TAIL holds no group (`_is_terminator`), so its copy in the lookahead adds none. None
    for other shapes (a single fixed end: `re` skips to its first character already), or where `re` would not match
    what `regex` does (`regex_leads.stdlib_equivalent`)."""
    from ..regex_leads import stdlib_equivalent  # local: as in `_prepare_xml_inline`

    if not shape.newline and not shape.looks and len(shape.ends) == 1:
        return None
    marker = "(?P<value>.*?)"
    at = source.find(marker)
    tail = source[at + len(marker) :]
    starts = {t[0] for t in (*shape.ends, *shape.looks)} | ({"\n"} if shape.newline else set())
    chars = "".join("\\n" if c == "\n" else _stdre.escape(c) for c in sorted(starts))
    return stdlib_equivalent(f"{source[:at]}(?P<value>[^{chars}]*(?:(?!{tail})[{chars}][^{chars}]*)*){tail}")


#: Bodies up to this long are searched without `_search_bounds` (~2.5 µs saved on DeepSeek's 135-character
#: two-parameter call: its four `rfind`s of non-ASCII tags): a quadratic search of so little text stays small,
#: at worst ~25 µs (256 characters of unclosed tags, every start scanning to the end; bounded: ~1 µs).
_BOUND_FROM = 256


def parse_xml_inline(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A flat sequence of tags matched by `tag_pattern` (groups `key` and `value`) -> dict.

    Linear in the length of `text` for patterns made of fixed texts around lazy or bounded parts (the
    usual tag patterns; see `_search_bounds`). A match in which the `key` group does not take part is
    an error (as in Transformers' native parser), never skipped silently. With `value_parser_by` (or its older
    spelling `value_parser_group` / `value_parsers`), the text of that group picks each value's parser (see
    `_select_values`).
    """
    small = args.get("_plain_small")
    if small is not None and len(text) <= small[0]:  # (the general path below gives the same, later)
        return dict(small[1](text))
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
        value_parser = args.get("value_parser")
        merge = args.get("merge_duplicates", False)
        columns = args["_columns"]
        select = args.get("_select")
        if select is not None:
            group, parsers, column = select
            if matches is None and column is not None:  # (findall's tuples read in place: `_select_rows`)
                if stdlib is not None:
                    rows = stdlib.findall(text, 0, len(text) if end is None else end)
                else:
                    rows = pattern.findall(text, 0, end, False, None, timeout)
                return _select_rows(rows, columns, column, parsers, value_parser, merge)
            if matches is None:
                matches = list(_xml_searches(pattern, stdlib, text, end, timeout)[1]())
            found = [m.group("key", "value", group) for m in matches]
            return _select_values(found, matches, parsers, value_parser, merge)
        findall, finditer = _xml_searches(pattern, stdlib, text, end, timeout)
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
    """`parse_xml_inline` with `value_parser_by`: `found` holds each match's (key, value, group text);
    the value is read by the parser the group's text names in `parsers` (`value_parser_by`'s), or by
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


def _select_rows(rows: list[tuple[Any, ...]], columns: tuple[int, int], column: int,
                 parsers: Mapping[str, Callable[[str], Any]], default: Callable[[str], Any] | None,
                 merge: bool) -> dict[str, Any]:
    """`_select_values` of findall's tuples `rows`, read in place (no `found` list built first): the key, value and
    group text at `columns` and `column`. (The usual DSML tool call's arguments: ~100 Python opcodes fewer.)"""
    k, v = columns
    out: dict[str, Any] = {}
    merged: set[str] | None = None
    for t in rows:
        key = t[k]
        if key is None:
            raise ValueError("xml-inline: a tag_pattern match has no 'key' (the group did not take part)")
        picked = t[column]
        parse = parsers.get(picked, default) if picked else default
        raw = t[v]
        value = parse(raw or "") if parse is not None else (raw or "")
        if merge and key in out:
            if merged is None:
                merged = set()
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
