"""The incremental partial parsers (hf_response_templates.partial): any chunking, the same result."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates.content import get_content_parser
from hf_response_templates.partial import MISSING, JsonPartial, partial_parser

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(
        st.characters(codec="utf-16", exclude_categories=("Cs",)) | st.sampled_from('"\\\n\t/'), max_size=12
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def _cuts(data: st.DataObject, text: str) -> list[str]:
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12))))
    out, last = [], 0
    for c in [*cuts, len(text)]:
        out.append(text[last:c])
        last = c
    return out


def _complete_nodes(p: JsonPartial, node: Any, path: tuple, final: Any, out: list) -> None:
    """Every node `complete` says is final must equal the final value at its path."""
    if p.complete(path):
        out.append((path, node))
        return
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        _complete_nodes(p, child, (*path, key), final, out)


def _at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


@settings(max_examples=300, deadline=None)
@given(value=json_values, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]), data=st.data())
def test_json_any_chunking_gives_json_loads_and_final_nodes_never_change(
    value, ascii_only, indent, data
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    p = JsonPartial()
    for piece in _cuts(data, text):
        p.feed(piece)
        assert not p.broken, text
        if p.value is not MISSING:
            done: list = []
            _complete_nodes(p, p.value, (), value, done)
            for path, node in done:
                assert node == _at(value, path), (text, path)
        snap = p.snapshot()
        assert snap is None or isinstance(snap, type(value)) or not isinstance(value, (dict, list))
    p.feed(" ")  # a number at the root ends at the next character
    assert p.value == value and p.done


@settings(max_examples=200, deadline=None)
@given(
    value=st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True),
        st.integers(0, 99)
        | st.text(st.characters(exclude_categories=("Cs",), exclude_characters="<"), max_size=8),
        max_size=5,
    ),
    data=st.data(),
)
def test_json_dialect_bare_keys_and_custom_string_delimiters(value, data) -> None:
    body = (
        "{"
        + ",".join(f"{k}:" + (f'<|"|>{v}<|"|>' if isinstance(v, str) else str(v)) for k, v in value.items())
        + "}"
    )
    args = {"unquoted_keys": True, "string_delims": (('<|"|>', '<|"|>'),)}
    assert get_content_parser("json").parse(body, args) == value
    p = partial_parser("json", args)
    for piece in _cuts(data, body):
        p.feed(piece)
        assert not p.broken, body
    assert p.value == value and p.done


def test_json_broken_cases() -> None:
    for text in [
        '{"a": 1, "a": 2}',
        '{"a" 1}',
        "[1 2]",
        '{"a": "\\x"}',
        '{"a": "b\nc"}',
        "1 2",
        '{"a": 012}',
    ]:
        p = JsonPartial()
        for ch in text:
            p.feed(ch)
        p.feed(" ")
        assert p.broken, text


def test_json_surrogate_pair_split_across_pieces_is_one_character() -> None:
    p = JsonPartial()
    for ch in '{"a": "x\\ud83d\\ude00y"}':
        p.feed(ch)
    assert p.value == {"a": "x\U0001f600y"}
    p = JsonPartial()
    p.feed('["\\ud83d')
    p.feed('"]')
    assert p.value == ["\ud83d"]  # a lone surrogate stays what json.loads gives


def test_open_string_is_exposed_and_the_structure_version_stays_while_it_grows() -> None:
    p = JsonPartial()
    p.feed('{"name": "f", "arguments": {"q": "Par')
    args = p.value["arguments"]
    frame = p.frame(args)
    assert frame is not None and frame.open_key == "q" and frame.keys == ["q"]
    version = p.version
    p.feed("is and more")
    assert p.version == version
    assert "".join(p.open_string(frame)) == "Paris and more"
    assert p.snapshot() == {"name": "f", "arguments": {"q": "Paris and more"}}
    assert p.complete(("name",)) and not p.complete(("arguments",)) and not p.complete(("arguments", "q"))
    p.feed('"}}')
    assert p.complete(("arguments",)) and p.frame(args) is None and p.done


def test_xml_inline_parameters_only_once_complete() -> None:
    args = get_content_parser("xml-inline").compile_args(
        {"tag_pattern": "<parameter=(?P<key>[^>\\s]+)>\\n?(?P<value>.*?)\\n?</parameter>"}, "tool_calls"
    )
    text = "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
    for step in (1, 2, 5, len(text)):
        p = partial_parser("xml-inline", args)
        for i in range(0, len(text), step):
            p.feed(text[i : i + step])
            assert all(p.complete((k,)) for k in p.value)
            assert list(p.value.items()) == list({"city": "Paris", "days": "3"}.items())[: len(p.value)]
        assert p.value == {"city": "Paris", "days": "3"}
        assert p.stack[0].keys == ["city", "days"]


def test_python_call_list_calls_once_their_parenthesis_closes() -> None:
    text = '[f(a="x)y", b=2), g(c=[1, 2])]'
    want = get_content_parser("python-call-list").parse(text, {})
    p = partial_parser("python-call-list")
    seen = []
    for ch in text:
        p.feed(ch)
        seen.append(len(p.value))
    assert p.value == want
    assert seen[text.index("2)") + 1] == 1 and seen[text.index("x)y") + 1] == 0


class _CountingPattern:
    """A compiled pattern that counts its searches."""

    def __init__(self, pattern: Any) -> None:
        self.inner, self.pattern, self.flags, self.searches = pattern, pattern.pattern, pattern.flags, 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return self.inner.search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # findall ... for the content parser
        return getattr(self.inner, name)


def test_xml_inline_searches_only_when_the_literal_end_of_the_tag_arrives() -> None:
    """``>`` ends ``</parameter>`` but also ``<parameter=city>`` and may be in a value: only the pattern's whole
    literal end (here ``</parameter>``, even cut between pieces) starts a search. Same parameters either way."""
    args = dict(
        get_content_parser("xml-inline").compile_args(
            {"tag_pattern": "<parameter=(?P<key>[^>\\s]+)>\\n?(?P<value>.*?)\\n?</parameter>"}, "tool_calls"
        )
    )
    args["_shape"] = None  # the reader that searches the pattern (patterns the tag reader does not know)
    counting = args["tag_pattern"] = _CountingPattern(args["tag_pattern"])
    value = "a > b >> c " * 20
    text = "".join(f"<parameter=p{i}>\n{value}\n</parameter>\n" for i in range(10))
    p = partial_parser("xml-inline", args)
    for ch in text:
        p.feed(ch)
    assert p.value == {f"p{i}": value for i in range(10)}
    # per parameter: the search when "</parameter>" arrives and the two probing the match (could more text
    # change it?); none after it (no "</parameter>" is left); a search on every ">" would be 40 more each
    assert counting.searches <= 10 * 3, counting.searches


def test_xml_inline_pattern_ending_in_alternatives_searches_when_one_of_them_arrives() -> None:
    """A tag pattern that ends in ``(?:</parameter>|(?=<parameter=)|\\Z)`` (a closing tag the model may leave
    out): a search when ``</parameter>`` or ``<parameter=`` arrives, not on every piece; the same parameters,
    the one without its closing tag included once the next one starts."""
    args = dict(
        get_content_parser("xml-inline").compile_args(
            {"tag_pattern": "<parameter=(?P<key>[^>\\s]+)>\\n?(?P<value>.*?)\\n?(?:</parameter>|(?=<parameter=)|\\Z)"},
            "tool_calls",
        )
    )
    args["_shape"] = None  # the reader that searches the pattern (patterns the tag reader does not know)
    counting = args["tag_pattern"] = _CountingPattern(args["tag_pattern"])
    value = "a > b = c " * 20
    text = "".join(f"<parameter=p{i}>\n{value}\n" + ("</parameter>\n" if i % 2 else "") for i in range(10))
    p = partial_parser("xml-inline", args)
    seen = []
    for ch in text:
        p.feed(ch)
        seen.append(len(p.value))
    assert p.value == {f"p{i}": value for i in range(10)}
    assert seen[text.index("<parameter=p1>") + len("<parameter=")] == 1  # p0 once p1 starts
    assert counting.searches <= 10 * 6, counting.searches  # a search per piece would be ~2,500
