"""Shared hypothesis strategies: random response templates and texts that exercise them.

A random template is built from small pools of literal and regex delimiters (each regex comes
with example strings it matches, so that generated texts really contain the delimiters), random
content parsers with bodies that suit them (and bodies that do not), `repeats` / `join` /
`optional`, transforms, defaults, and at most one implicit field.

Texts are sequences of pieces drawn from the template's own delimiters, suitable bodies, noise
built from delimiter characters (so partial delimiters occur), and hostile model output
(NUL and control characters, lone surrogates, huge numbers, deep nesting).

`Case` bundles what the properties need: the template dict, the prefix, the generation and a
chunking of the generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# --------------------------------------------------------------------------- delimiters

#: Literal delimiters; they overlap on purpose (shared prefixes, one a prefix of another).
LITERALS = [
    "<a>", "</a>", "<b>", "</b>", "<t>", "</t>", "<|e|>", "<|end|>", "<|endoftext|>",
    "[", "]", "<<", ">>", "ab", "END", "<", "|", "\n\n",
]
#: Characters random literals and noise are made of: the delimiters' own characters.
DELIM_CHARS = "<>/|abte[]END\n"


@dataclass(frozen=True)
class Rx:
    """A regex delimiter with strings it matches; `groups`: its named groups."""

    pattern: str
    examples: tuple[str, ...]
    groups: tuple[str, ...] = ()
    zero_width: bool = False  # matches without consuming text (lookaround only)
    edge: bool = False  # uses `$` / `\Z`: depends on what follows


REGEXES = [
    Rx(r"<r\d>", ("<r1>", "<r7>")),
    Rx(r"<c(?P<n>[a-z]+)>", ("<cx>", "<cab>"), groups=("n",)),
    Rx(r"</?q>", ("<q>", "</q>")),
    Rx(r"<b+>", ("<b>", "<bbb>")),
    Rx(r"x+", ("x", "xxx")),
    Rx(r"ab|abc", ("ab", "abc")),
    Rx(r"\[\[", ("[[",)),
    Rx(r"<(?P<tag>[ab])/>", ("<a/>", "<b/>"), groups=("tag",)),
    Rx(r"(?<=\n)#", ("\n#",)),
    Rx(r"#{2,3}", ("##", "###")),
    Rx(r"(?=<z>)", ("<z>",), zero_width=True),
    Rx(r"(?<=>)(?=!)", (">!",), zero_width=True),
    Rx(r"END$", ("END",), edge=True),
    Rx(r"\n\Z", ("\n",), edge=True),
    Rx(r"(?i)<up>", ("<UP>", "<up>")),
    # Empty-matching delimiters (issue 12): `^` / `\A` fire at offset 0 of the cut stream, `$` / `\Z` / `\z`
    # at its end, and an alternation opens at the start or at a tag (a pre-opened reasoning block).
    Rx(r"(?:^|<t>\s*)", ("<t>", "<t>\n", ""), zero_width=True),
    Rx(r"^", ("",), zero_width=True),
    Rx(r"\A<s>", ("<s>",)),
    Rx(r"$", ("",), zero_width=True, edge=True),
    Rx(r"\Z", ("",), zero_width=True, edge=True),
    Rx(r"\z", ("",), zero_width=True, edge=True),
    Rx(r"(?=<z>)|$", ("<z>", ""), zero_width=True, edge=True),
    Rx(r"(?=[\s\S])", ("",), zero_width=True),  # fires before any character (Hunyuan's answer marker close)
    # A delimiter that may run long: with HOSTILE's long runs it starts and never completes, or completes
    # past `MAX_DELIMITER_LENGTH` (then it is not a delimiter, streamed and one-shot alike).
    Rx(r"<w>\s*<v>", ("<w><v>", "<w>\n<v>", "<w>")),
]

#: Patterns that backtrack exponentially in the `regex` module (it defuses `(a+)+$`), with a killer input.
CATASTROPHIC = [
    ("(a|aa)+$", "a" * 40 + "b"),
    ("(a|a?)+$", "a" * 40 + "b"),
    ("(x+x+)+y", "x" * 40),
]

# --------------------------------------------------------------------------- content

#: content parser -> (args strategies, example bodies).
XML_TAG = r"<(?P<key>\w+)=(?P<value>[^<>]*)>"
CONTENT = {
    "text": ([None, {"strip": True}, {"strip": False}], ["hello", "  spaced  ", "", "\n", "multi\nline"]),
    "int": ([None], ["42", " -7 ", "x", "1_000", "9" * 30]),
    "float": ([None], ["1.5", "1e400", "nan", "-0.0", "abc"]),
    "bool": ([None], ["true", "false", "1", "0", " True "]),
    "json": (
        [None, {"unquoted_keys": True}, {"string_delims": [["<<", ">>"]]}, {"allow_non_json": True}],
        ['{"a": 1}', "[1, 2]", '{"a": {"b": [true, null]}}', '"s"', "1e999", "{a: 1}", "<<x>>", "{", "[]",
         '{"name": "f", "arguments": {"x": 1}}'],
    ),
    "python-call-list": ([None], ['[f(a=1)]', '[g(x="y", z=[1, 2])]', "[]", "[f(1)]", "f(a=1)"]),
    "kv-lines": ([None, {"kv_sep": "="}, {"line_sep": ";"}, {"strip": False}], ["a: 1\nb: 2", "k=v;x=y", "noline", ""]),
    "xml-inline": (
        [{"tag_pattern": XML_TAG}, {"tag_pattern": XML_TAG, "merge_duplicates": True},
         {"tag_pattern": XML_TAG, "value_parser": {"name": "int"}}],
        ["<k=v><n=2>", "<k=1><k=2>", "none"],
    ),
}
STRING_PARSERS = {"text"}  # parse to str: usable with `join`

#: Hostile model output: controls, surrogates, deep nesting, huge numbers.
HOSTILE = [
    "\x00", "\x01\x02", "\x1b[31m", "\ud800", "\udfff", "\ufffd", "\u2028", "\r\n", "\t",
    "[" * 300, "{" * 300, "1" * 5000, "1e999999", "-1e-999999", '{"a": ' * 200, "(" * 300,
    '"\\ud800"', '"\\x"', "\\", "'", '"', "\n" * 600, " " * 520,
]
#: Very large hostile pieces, for the targeted never-raises tests (too slow for every example).
HUGE = ["[" * 100_000, "{" * 100_000, "9" * 100_000, '[f(a=' * 20_000, "<" * 50_000]


@dataclass
class FieldInfo:
    name: str
    spec: dict[str, Any]
    tokens: list[str] = field(default_factory=list)  # strings that open/close it
    bodies: list[str] = field(default_factory=list)
    opens: list[str] = field(default_factory=list)
    closes: list[str] = field(default_factory=list)
    good: list[str] = field(default_factory=list)  # bodies its content parser accepts


@dataclass
class Case:
    template: dict[str, Any]
    prefix: str
    text: str
    chunks: list[str]
    info: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        return (f"Case(template={self.template!r},\n     prefix={self.prefix!r},\n     text={self.text!r},\n"
                f"     chunks={self.chunks!r})")


def _accepts(content: str, args: Any, body: str) -> bool:
    from hf_response_templates.content import content_parsers

    parser = content_parsers()[content]
    try:
        parser.parse(body, parser.compile_args(args, "f"))
        return True
    except Exception:
        return False


def _random_literal() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(LITERALS), st.text(alphabet=DELIM_CHARS, min_size=1, max_size=4))


def _delimiter(draw: Any, kind: str, allow_regex: bool, allow_zero_width: bool, allow_edge: bool,
               used_groups: set[str]) -> tuple[dict[str, Any], list[str], tuple[str, ...]]:
    """Draw one delimiter: returns ({key: value}, example strings, named groups)."""
    choice = draw(st.sampled_from(["literal", "literal", "list", "regex"] if allow_regex else ["literal", "list"]))
    if choice == "literal":
        lit = draw(_random_literal())
        return {kind: lit}, [lit], ()
    if choice == "list":
        lits = draw(st.lists(_random_literal(), min_size=1, max_size=3, unique=True))
        return {kind: lits}, list(lits), ()
    pool = [r for r in REGEXES if (allow_zero_width or not r.zero_width) and (allow_edge or not r.edge)
            and not (set(r.groups) & used_groups)]
    rx = draw(st.sampled_from(pool))
    return {kind + "_pattern": rx.pattern}, list(rx.examples), rx.groups


@st.composite
def templates(
    draw: Any,
    *,
    max_fields: int = 4,
    allow_regex: bool = True,
    allow_zero_width: bool = True,
    allow_edge: bool = True,
    sorted_names: bool = False,
    content_names: list[str] | None = None,
    defaults_may_collide: bool = True,
) -> tuple[dict[str, Any], list[FieldInfo]]:
    """A random valid template and, per field, the strings that open/close it and sample bodies.

    `sorted_names`: field names sort in declaration order (native breaks delimiter ties by field name,
    we by declaration order; with sorted names both agree).
    """
    n = draw(st.integers(1, max_fields))
    implicit_at = draw(st.one_of(st.none(), st.integers(0, n - 1)))
    infos: list[FieldInfo] = []
    parsers = content_names or list(CONTENT)
    for i in range(n):
        name = f"f{i}" if sorted_names else draw(st.sampled_from([f"f{i}", f"x{i}", f"content{i}", f"z{i}"]))
        spec: dict[str, Any] = {}
        tokens: list[str] = []
        groups: set[str] = set()
        opens: list[str] = []
        closes: list[str] = []
        if i != implicit_at:
            d, opens, g = _delimiter(draw, "open", allow_regex, allow_zero_width, allow_edge, groups)
            spec.update(d)
            groups |= set(g)
        if draw(st.booleans()) or (i == implicit_at and draw(st.booleans())):
            d, closes, g = _delimiter(draw, "close", allow_regex, allow_zero_width, allow_edge, groups)
            spec.update(d)
            groups |= set(g)
        tokens = opens + closes
        content = draw(st.sampled_from(parsers))
        args_options, bodies = CONTENT[content]
        args = draw(st.sampled_from(args_options))
        if content != "text" or draw(st.booleans()):
            spec["content"] = content
        if args is not None:
            spec["content_args"] = args
        if draw(st.integers(0, 3)) == 0:
            spec["repeats"] = True
            if content in STRING_PARSERS and draw(st.booleans()):
                spec["join"] = draw(st.sampled_from(["", "\n", ", "]))
        if draw(st.integers(0, 5)) == 0:
            spec["optional"] = False
        transform = None
        if groups:
            transform = {g: "{" + g + "}" for g in sorted(groups)} | {"body": "{content}"}
        elif content == "python-call-list" and draw(st.booleans()):
            transform = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
            spec["transform_each"] = True
        elif content == "json" and draw(st.integers(0, 2)) == 0:
            transform = draw(st.sampled_from([{"type": "function", "function": "{content}"}, {"a": "{content.a}"},
                                              ["{content}", 1, None, True]]))
        elif draw(st.integers(0, 4)) == 0:
            transform = {"value": "{content}", "kind": "fixed"}
        if transform is not None:
            spec["transform"] = transform
            spec.pop("join", None)  # a transform makes the value a dict
        good = [b for b in bodies if _accepts(content, spec.get("content_args"), b)]
        infos.append(FieldInfo(name, spec, tokens, list(bodies), opens, closes, good or [""]))
    names = {f.name for f in infos}
    defaults = draw(st.sampled_from([
        {}, {"role": "assistant"}, {"role": "assistant", "meta": {"a": [1]}}, {"role": "assistant", "content": ""},
    ]))
    if not defaults_may_collide:
        defaults = {k: v for k, v in defaults.items() if k not in names}
    template: dict[str, Any] = {"fields": {f.name: f.spec for f in infos}}
    if defaults or draw(st.booleans()):
        template["defaults"] = defaults
    if draw(st.booleans()):
        template["start_anchor"] = "<|im_start|>assistant\n"
    else:
        template["start_anchor_pattern"] = r"<\|im_start\|>(?:assistant|bot)\n"
    return template, infos


def noise(hostile: bool = True) -> st.SearchStrategy[str]:
    base = [st.text(alphabet=DELIM_CHARS + " xyz09\"{}:,=;", max_size=8), st.text(max_size=6)]
    if hostile:
        base.append(st.sampled_from(HOSTILE))
    return st.one_of(*base)


@st.composite
def texts_for(draw: Any, infos: list[FieldInfo], *, hostile: bool = True, max_pieces: int = 12) -> str:
    """A text built from the template's delimiters, bodies that suit its fields, and noise."""
    tokens = [t for f in infos for t in f.tokens] or ["<none>"]
    bodies = [b for f in infos for b in f.bodies]
    regions = [
        st.tuples(st.sampled_from(f.opens or [""]), st.sampled_from(f.good), st.sampled_from(f.closes or [""])).map("".join)
        for f in infos
    ]
    piece = st.one_of(
        *regions,
        st.sampled_from(tokens),
        st.sampled_from(tokens),
        st.sampled_from(bodies),
        noise(hostile),
        # a delimiter cut short: a prefix of a delimiter (hold-back that must be released)
        st.sampled_from(tokens).flatmap(lambda t: st.integers(0, max(0, len(t) - 1)).map(lambda k: t[:k])),
    )
    return "".join(draw(st.lists(piece, max_size=max_pieces)))


@st.composite
def chunkings(draw: Any, text: str) -> list[str]:
    """A random split of `text` into chunks (empty chunks included sometimes)."""
    if not text:
        return draw(st.sampled_from([[], [""]]))
    mode = draw(st.sampled_from(["random", "random", "chars", "one"]))
    if mode == "chars":
        return list(text)
    if mode == "one":
        return [text]
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    out, last = [], 0
    for c in cuts:
        out.append(text[last:c])
        last = c
    out.append(text[last:])
    return out


@st.composite
def cases(draw: Any, *, with_prefix: bool = True, hostile: bool = True, **template_kw: Any) -> Case:
    template, infos = draw(templates(**template_kw))
    text = draw(texts_for(infos, hostile=hostile))
    prefix = ""
    if with_prefix and draw(st.booleans()):
        earlier = draw(texts_for(infos, hostile=False, max_pieces=4))
        prefill = draw(texts_for(infos, hostile=False, max_pieces=3))
        anchor = "<|im_start|>assistant\n"
        prefix = draw(st.sampled_from(["", "<|im_start|>user\nhi<|im_end|>\n"])) + (
            anchor + earlier + "<|im_end|>\n" if draw(st.booleans()) else ""
        ) + draw(st.sampled_from([anchor, "", "junk"])) + prefill
    chunks = draw(chunkings(text))
    return Case(template, prefix, text, chunks, {"fields": infos})


# --------------------------------------------------------------------------- helpers for the properties

TRACE_ONLY = {"delimiter", "text_dropped"}


def merge_chunks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge adjacent `region_chunk` events of one region (and adjacent `text_dropped` of one reason),
    so event streams from different chunkings of the same text can be compared."""
    out: list[dict[str, Any]] = []
    for e in events:
        if out and e["type"] == out[-1]["type"] == "region_chunk" and e["field"] == out[-1]["field"]:
            out[-1] = {**out[-1], "text": out[-1]["text"] + e["text"]}
        elif out and e["type"] == out[-1]["type"] == "text_dropped" and e["reason"] == out[-1]["reason"]:
            out[-1] = {**out[-1], "text": out[-1]["text"] + e["text"]}
        else:
            out.append(dict(e))
    return out


def without_trace(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] not in TRACE_ONLY]


def scaled(n: int) -> int:
    """`n` examples under the default profile (100), scaled like the loaded profile (at least 5)."""
    from hypothesis import settings

    return max(5, n * settings().max_examples // 100)


def canon(value: Any) -> str:
    """A canonical JSON string, so that values with NaN compare equal to themselves."""
    import json

    return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True, default=repr)
