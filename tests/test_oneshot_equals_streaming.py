"""One-shot `parse_response` (the cut prefix scanned with the text at the end of the stream, lookaround
regexes tried only where their leading texts are, `remove_pattern` skipped where none of its leading texts
is) gives exactly what the streaming parser gives, on every shipped template (issue 19).

Texts are made of each template's own delimiters (literals and the fixed texts its regexes start with),
bodies its content parsers read (JSON calls, XML-inline parameters, Gemma 4's dialect, pythonic calls) and
noise made of delimiter characters, so partial delimiters, lookahead closes, repeated and malformed regions
and text outside every region all occur. Compared: the message (with `strict=False`: `unparsed` records,
positions), whether `strict=True` raises and with what, and the same under a non-default policy.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.errors import ResponseParseError
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.regex_leads import _literal_leads, _partial_leads
from hf_response_templates.template import _anchor_texts

BODIES = [
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '{"city": "Paris", "n": 2}',
    "get_weather",
    "get_weather>",
    'get_weather">',
    "get_weather[ARGS]",
    "functions.get_weather:0",
    "<parameter=city>\nParis\n</parameter>",
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>',
    "<arg_key>city</arg_key><arg_value>Paris</arg_value>",
    'call:get_weather{city:<|"|>Paris<|"|>}',
    '[get_weather(city="Paris")]',
    "Hello world.",
    "\n",
    " ",
    "{",
    "}",
]
NOISE = st.text(alphabet=st.sampled_from(list('ab <>/|{}[]":,=\n_')), max_size=5)


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _pieces(tpl: dict) -> list[str]:
    """Every template's delimiter texts: its literals and the fixed texts its regex delimiters start with."""
    out: set[str] = set()
    anchor = tpl.get("start_anchor")
    out.update(_texts(anchor))
    for field in tpl["fields"].values():
        for key in ("open", "close"):
            out.update(_texts(field.get(key)))
        for key in ("open_pattern", "close_pattern", "start_anchor_pattern"):
            source = field.get(key)
            if isinstance(source, str):
                for leads in (_literal_leads(source), _partial_leads(source)):
                    out.update(leads or ())
    for leads in (_literal_leads(tpl["start_anchor_pattern"]),) if "start_anchor_pattern" in tpl else ():
        out.update(leads or ())
    return sorted(t for t in out if t)


NAMES = list_templates()
TEMPLATES = {name: get_template(name) for name in NAMES}
PIECES = {name: _pieces(tpl) for name, tpl in TEMPLATES.items()}


@st.composite
def case(draw):
    name = draw(st.sampled_from(NAMES))
    parts = draw(st.lists(st.one_of(st.sampled_from(PIECES[name]), st.sampled_from(BODIES), NOISE), max_size=16))
    text = "".join(parts)
    # the prompt: nothing, or the end of `text` moved into it (a pre-written `<think>`, a prefill)
    cut = draw(st.integers(0, len(text)))
    prefix = draw(st.sampled_from(["", "<prompt>"])) + text[:cut] if draw(st.booleans()) else ""
    generation = text[cut:] if prefix else text
    cuts = sorted(draw(st.lists(st.integers(0, len(generation)), max_size=6)))
    chunks, last = [], 0
    for c in [*cuts, len(generation)]:
        chunks.append(generation[last:c])
        last = c
    return name, prefix, generation, chunks


def _streamed(tpl: dict, prefix: str, chunks: list[str], **kwargs) -> tuple[dict, list[ResponseParseError]]:
    parser = ResponseParser(tpl, prefix, **kwargs)
    for chunk in chunks:
        parser.feed(chunk)
    message, _ = parser.finalize()
    return message, parser.strict_errors


def _strict(text: str, tpl: dict, prefix: str, **kwargs) -> tuple[str, object, object] | None:
    try:
        parse_response(text, tpl, prefix=prefix, **kwargs)
    except ResponseParseError as e:
        return type(e).__name__, e.field, e.position
    return None


def _without_ids(message: dict) -> dict:
    """Tool-call ids the output does not hold are generated (random): not compared."""
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        message = {**message, "tool_calls": [{k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c
                                              for c in calls]}
    return message


@settings(max_examples=600, deadline=None)
@given(case())
def test_parse_response_equals_the_streaming_parser_on_every_shipped_template(c):
    name, prefix, generation, chunks = c
    tpl = TEMPLATES[name]
    streamed, errors = _streamed(tpl, prefix, chunks)
    oneshot = parse_response(generation, tpl, prefix=prefix, strict=False)
    assert _without_ids(oneshot) == _without_ids(streamed)
    raised = _strict(generation, tpl, prefix)
    if errors:
        assert raised == (type(errors[0]).__name__, errors[0].field, errors[0].position)
    else:
        assert raised is None


POLICIES = [
    {"text_after_tool_calls": "unparsed"},
    {"malformed_tool_calls": "content"},
    {"tool_calls_in_reasoning": "reasoning"},
]


@settings(max_examples=200, deadline=None)
@given(case(), st.sampled_from(POLICIES))
def test_the_same_under_a_policy(c, policy):
    name, prefix, generation, chunks = c
    tpl = TEMPLATES[name]
    streamed, _ = _streamed(tpl, prefix, chunks, policy=policy)
    oneshot = parse_response(generation, tpl, prefix=prefix, strict=False, policy=policy)
    assert _without_ids(oneshot) == _without_ids(streamed)


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_template_has_pieces_of_its_own(name):
    # the generated texts do exercise each template's delimiters
    assert len(PIECES[name]) >= 2, PIECES[name]


def test_a_reasoning_region_closed_by_a_lookahead_is_found_past_other_text():
    # `</think>|(?=<tool_call>)|(?=<think>)`: the lookahead alternatives are only tried where their texts are
    text = "a<b </x <tool_ <tool_call>\n" + '{"name": "f", "arguments": {}}' + "\n</tool_call>"
    message = parse_response(text, "qwen3-thinking-2507", prefix="<|im_start|>assistant\n<think>\n")
    assert message["reasoning_content"] == "a<b </x <tool_"
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": {}}


def test_remove_pattern_without_its_text_leaves_the_text_and_with_it_removes_it():
    tpl = {"start_anchor": "<s>", "fields": {"content": {"content": "text", "content_args": {"remove_pattern": r"<\|channel>(?:thought)?"}}}}
    assert parse_response("a <|chan b", tpl, prefix="") == {"content": "a <|chan b"}
    assert parse_response("a <|channel>thought b", tpl, prefix="") == {"content": "a  b"}


ANCHORS = [r"\[/INST\]|\[/TOOL_RESULTS\]", r"<x>|\[/INST\]|<｜Assistant｜>", r"<a>|<a>b", r"<｜Assistant｜>(?:</think>)?|<x>", "aa|b", "ab|ba", r"<x>\s*",
           ["<a>", "[/INST]"], ["<a>b", "<a>"]]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ANCHORS),
       st.lists(st.sampled_from([*"ab<>x[]/INST|", "[/INST]", "<a>b", "<｜Assistant｜>", "</think>"]), max_size=12))
def test_a_start_anchor_of_fixed_texts_is_cut_where_its_last_match_ends(source, parts):
    # `cut_prefix` finds the last match of an alternation of non-overlapping fixed texts with `str.rfind`;
    # it must cut where the last of the pattern's own matches (left to right) ends
    import regex

    prefix = "".join(parts)
    if isinstance(source, list):  # literal anchors: the longest first where two start at one position
        tpl = load_template({"start_anchor": source, "fields": {"content": {}}})
        source = "|".join(regex.escape(t) for t in sorted(source, key=len, reverse=True))
    else:
        tpl = load_template({"start_anchor_pattern": source, "fields": {"content": {}}})
    last = None
    for m in regex.finditer(source, prefix, flags=regex.DOTALL):
        last = m
    assert tpl.cut_prefix(prefix) == (prefix if last is None else prefix[last.end():])


def test_only_alternations_of_fixed_texts_that_cannot_overlap_are_cut_by_rfind():
    assert _anchor_texts(r"\[/INST\]|\[/TOOL_RESULTS\]") == ("[/INST]", "[/TOOL_RESULTS]")
    assert _anchor_texts(r"<｜Assistant｜>(?:</think>)?") == ("<｜Assistant｜>", "<｜Assistant｜></think>")
    for source in ("aa|b", "ab|ba", r"<x>\s*", "^abc", "a(?=b)", "abc|", "(?i)abc", r"<x>[^<]*</x>"):
        assert _anchor_texts(source) is None, source
