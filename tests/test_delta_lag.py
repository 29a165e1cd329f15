"""`DeltaStream._take` (issue 18, item 1): a stream that made its own parser hands it the pieces that cannot end
the open region (`ResponseParser.region_char`) joined, with the next piece that may, instead of one
`feed_region` call per piece. What the parser ends with, and every delta, are as if each piece was fed alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, check_text, chunkings

from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates.openai import DeltaStream

GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"
# texts full of what the batching must get right: a delimiter's first character that starts no delimiter, one
# that does, pieces of delimiters, whitespace held back by the text path, characters to escape
WORDS = st.sampled_from(["a", "é", " ", "\n", "<", "<|", "|>", "x < y", '"', "\\", "🌧", ", ", "1"])
CASES = [
    ("smollm3", CHATML, "<think>\n{0}\n</think>\n{1}<|im_end|>"),
    (
        "hermes3",
        CHATML,
        '{1}<tool_call>\n{{"name": "f", "arguments": {{"s": "{0}", "n": 1}}}}\n</tool_call><|im_end|>',
    ),
    ("gemma4", GEMMA, '<|tool_call>call:f{{s:<|"|>{0}<|"|>,n:[1, 2],t:<|"|>{1}<|"|>}}<tool_call|><turn|>'),
]


def _clean(name: str, words: list[str]) -> str:
    text = "".join(words)
    if name == "hermes3":  # (inside a JSON string: no quote, no backslash)
        text = text.replace('"', "").replace("\\", "")
    if name == "gemma4":  # (never the string's closing delimiter)
        text = text.replace("<|", "")
    return text


@settings(max_examples=120, **SETTINGS)
@given(
    case=st.sampled_from(CASES),
    a=st.lists(WORDS, max_size=25),
    b=st.lists(WORDS, max_size=25),
    data=st.data(),
)
def test_any_chunking_with_pieces_handed_on_joined_equals_parse_response(case, a, b, data) -> None:
    """Reasoning and content text, a JSON string argument, Gemma 4's dialect: cut anywhere, the deltas
    reassemble into parse_response's message, and the stream's parser ends with the same message."""
    name, prefix, shape = case
    text = shape.format(_clean(name, a), _clean(name, b))
    check_text(get_template(name), prefix, text, data.draw(chunkings(text)), tools=None)


def test_the_parser_is_handed_the_pieces_joined_and_all_of_them_before_it_finishes(monkeypatch) -> None:  # noqa: ANN001
    template = get_template("smollm3")
    text = "<think>\nplan it\n</think>\n" + "word " * 300 + "x < y " + "end" + "<|im_end|>"
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    taken: list[str] = []
    region_take = ResponseParser.feed_region
    monkeypatch.setattr(
        ResponseParser, "feed_region", lambda self, t: taken.append(t) or region_take(self, t)
    )
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    for piece in pieces[:-4]:
        ds.feed(piece)
    assert len(taken) < len(pieces) // 10  # (one call for many pieces)
    assert max(len(t) for t in taken) > 100
    assert ds._lag  # (pieces not handed on yet)
    for piece in pieces[-4:]:
        ds.feed(piece)
    ds.finish()
    assert ds._lag == [] and ds.message == parse_response(text, template, prefix=CHATML)


def test_a_stream_on_the_callers_parser_hands_it_every_piece_at_once(monkeypatch) -> None:  # noqa: ANN001
    """The caller may look at its own parser between pieces: it is never behind."""
    template = get_template("smollm3")
    parser = ResponseParser(template, CHATML)
    ds = DeltaStream(parser, id_seed=0)
    fed = "<think>\nplan"
    ds.feed(fed)
    for piece in [" it", " now", " and", " then"]:
        ds.feed(piece)
        fed += piece
        # (`_consumed` counts what the parser's state machine has read; text its steady-state path took waits in
        # its `_acc` until then)
        waiting = parser._acc.__self__.tell() if parser._acc is not None else 0
        assert ds._lag == [] and parser._consumed + waiting == len(fed)


def test_region_char_is_the_delimiters_one_first_character_while_a_region_is_open() -> None:
    parser = ResponseParser(get_template("smollm3"), CHATML)
    assert parser.region_char() is None  # (no region open: the next delimiter is sought)
    parser.feed("<think>\nplan")
    assert parser.region_char() == "<"  # (`</think>`, `<|im_end|>`, ...: all start with it)
    parser.feed(" <")  # (held: it may start `</think>`)
    assert parser.region_char() is None
    parser.feed("x")
    assert parser.region_char() == "<"
