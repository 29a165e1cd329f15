"""`feed()`'s steady-state paths write an open region's text to one `StringIO` (`ResponseParser._acc`, issue 19):
one C call per chunk instead of a list append, a length check for the 512-chunk compaction and the offset and
markup counts. `ResponseParser._settle` moves that text to the region (`_body`, `_consumed`, the markup
stream's `sent`) before anything reads them. Pinned here:

* steady chunks leave `_body` as it is (the old code appended each one: these fail on it), and the text comes
  back whole and in order at the next delimiter, at `finalize`, when pickled or copied, and in `feed_region`;
* positions (`unparsed`, errors) and markup removal after long steady runs, past the compaction, are the
  one-shot parse's;
* a parser built from the template's cached prefix state gets an accumulator of its own;
* streaming equals one-shot for long runs of steady chunks in any chunking, with `<` held and released, copies
  and pickles at any point and `feed_region` mixed in (hypothesis).
"""

from __future__ import annotations

import copy
import json
import pickle
import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled

from hf_response_templates import ResponseParser, get_template, load_template, parse_response
from hf_response_templates.delimiters import MAX_DELIMITER_LENGTH


def _dumps(message):
    return json.dumps(message, sort_keys=True, default=str)


def test_steady_chunks_wait_in_the_accumulator_and_settle_in_order():
    tpl = load_template(get_template("hermes3"))
    parser = ResponseParser(tpl, "")
    parser.feed("Sure")
    parser.feed(" and")
    assert parser._fast is not None
    body = list(parser._body)
    consumed = parser._consumed
    pieces = [" one", " two", " <", "b", " three", "<", "=", " four"]
    events = []
    for piece in pieces:
        events += parser.feed(piece)
    assert parser._body == body and parser._consumed == consumed  # (all of it waits in `_acc`)
    assert "".join(e["text"] for e in events) == "".join(pieces)
    assert all(e == {"type": "region_chunk", "field": "content", "text": e["text"], "dirty": False} for e in events)
    assert len({id(e) for e in events}) == len(events)  # (each event a dict of its own)
    events += parser.feed(" a<|b")  # (no fixed text begins here: the steady state goes on)
    assert parser._body == body and parser._consumed == consumed
    events += parser.feed(" c<|im_e")  # held past the steady paths: the text settles first, in order
    assert parser._buf == "<|im_e"
    assert "".join(parser._body) == "Sure and" + "".join(pieces) + " a<|b c"
    assert parser._consumed == len("Sure and" + "".join(pieces) + " a<|b c")
    parser.feed('x<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    text = "Sure and" + "".join(pieces) + ' a<|b c<|im_ex<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    assert parser.finalize()[0] == parse_response(text, tpl, prefix="")


def _long_run(n: int) -> list[str]:
    words = [" alpha", " b", " <", "=", " c", "\n", " é", " 42", "<", "b"]
    return [words[i % len(words)] for i in range(n)]


def test_positions_and_markup_after_long_steady_runs_are_one_shot_s():
    # hermes3: a malformed call after 1,500 steady chunks (past two compactions): its position is exact
    tpl = load_template(get_template("hermes3"))
    run = _long_run(1500)
    tail = ["<tool_call>", "{bad json", "</tool_call>", " after"]
    parser = ResponseParser(tpl, "")
    for piece in run + tail:
        parser.feed(piece)
    message = parser.finalize()[0]
    expected = parse_response("".join(run + tail), tpl, prefix="", strict=False)
    assert _dumps(message) == _dumps(expected)
    assert message["unparsed"][0]["position"] == expected["unparsed"][0]["position"] is not None
    # cohere: a region with markup (citations removed from the content) after a long steady run
    tpl = load_template(get_template("cohere-command-r7b"))
    run = [p for p in _long_run(1200) if p != "<"]  # (and no citation either: the markup stream stays idle)
    tail = ["<co>", "Paris", "</co: 0:[1]>", " is", " big", "<|END_RESPONSE|>"]
    parser = ResponseParser(tpl, "<|START_RESPONSE|>")
    events = []
    for piece in run + tail:
        events += parser.feed(piece)
    message, final = parser.finalize()
    expected = parse_response("".join(run + tail), tpl, prefix="<|START_RESPONSE|>", strict=False)
    assert _dumps(message) == _dumps(expected)


def test_pickling_copying_and_feed_region_take_the_waiting_text():
    tpl = load_template(get_template("kimi-k3"))
    prefix = "<|open|>think<|sep|>"
    pieces = [" Hm", " so", " <", "x", " ok"]
    text = "".join(pieces) + "<|close|>Done."
    expected = parse_response(text, tpl, prefix=prefix)
    for how in ("pickle", "deepcopy", "copy", "feed_region"):
        parser = ResponseParser(tpl, prefix)
        for piece in pieces:
            parser.feed(piece)
        if how == "pickle":
            parser = pickle.loads(pickle.dumps(parser))
        elif how == "deepcopy":
            parser = copy.deepcopy(parser)
        elif how == "copy":
            parser = copy.copy(parser)
        else:
            assert parser.feed_region(" x<y")  # (not the steady path's: `<` is in it, but no delimiter)
            assert "".join(parser._body).endswith("".join(pieces) + " x<y")
            parser.feed("<|close|>Done.")
            assert parser.finalize()[0] == parse_response("".join(pieces) + " x<y<|close|>Done.", tpl, prefix=prefix)
            continue
        assert "".join(parser._body).endswith("".join(pieces))  # (settled before the state was taken)
        parser.feed("<|close|>")
        parser.feed("Done.")
        assert parser.finalize()[0] == expected


def test_parsers_from_the_cached_prefix_state_have_their_own_accumulator():
    tpl = load_template(get_template("qwen3"))
    prefix = "<|im_start|>assistant\n<think>\n"
    first = ResponseParser(tpl, prefix)  # (runs the cut and records its state)
    second = ResponseParser(tpl, prefix)  # (copies it)
    assert tpl.__dict__.get("_prefix_states")
    assert first._acc is not None and second._acc is not None and first._acc.__self__ is not second._acc.__self__
    for a, b in [(" one", " uno"), (" two", " dos"), (" three", " tres")]:
        first.feed(a)
        second.feed(b)
    first.feed("</think>A")
    second.feed("</think>B")
    assert first.finalize()[0]["reasoning_content"] == "one two three"
    assert second.finalize()[0]["reasoning_content"] == "uno dos tres"


#: Llama 4 JSON's zero-width close after a call: its lookahead reads the whitespace before the next call.
_LONG_LOOKAHEAD = re.compile(r"\}\s{" + str(MAX_DELIMITER_LENGTH - 1) + ",}")
STEADY = ["hermes3", "kimi-k3", "cohere-command-r7b", "gpt-oss", "qwen3", "mistral-small-3.1", "llama4-json"]
PREFIXES = {"kimi-k3": "<|open|>think<|sep|>", "cohere-command-r7b": "<|START_RESPONSE|>", "qwen3": "<think>\n"}
#: Runs of one piece repeated (most of them steady chunks), and delimiters between them.
PLAIN = st.sampled_from([" a", "b", " ", "\n", " é", "<", " <", "x<", "=", "[", "}", "<co>", "</co: 0:[1]>"])
DELIMS = st.sampled_from(["<|im_end|>", "<tool_call>", "</tool_call>", '{"name": "f", "arguments": {}}', "</think>",
                          "<|close|>", "<|END_RESPONSE|>", "<|end|>", "[TOOL_CALLS]", "{bad", "<|eot|>"])


def _events(events):
    return [{k: v for k, v in e.items() if k != "dirty"} for e in merge_chunks(events)]


@settings(max_examples=scaled(60), deadline=None)
@given(data=st.data())
def test_long_steady_runs_stream_as_one_shot_for_any_chunking_copy_and_feed_region(data):
    name = data.draw(st.sampled_from(STEADY))
    prefix = PREFIXES.get(name, "")
    tpl = load_template(get_template(name))
    pieces: list[str] = []
    for plain, times, delim in data.draw(st.lists(st.tuples(PLAIN, st.integers(1, 700), st.none() | DELIMS),
                                                  min_size=1, max_size=4)):
        pieces += [plain] * times
        if delim is not None:
            pieces.append(delim)
    # some pieces merged with the next (a chunk of two), the rest as they are
    merge = data.draw(st.sets(st.integers(0, len(pieces) - 1), max_size=20))
    chunks: list[str] = []
    for i, piece in enumerate(pieces):
        if i - 1 in merge and chunks:
            chunks[-1] += piece
        else:
            chunks.append(piece)
    text = "".join(chunks)
    if name == "llama4-json":  # the README's known limitation: a lookahead reading more than 512 characters after
        # its match's start (`(?<=\})(?=\s*...\{"name"...)` past a run of whitespace) stops the match while streaming
        assume(not _LONG_LOOKAHEAD.search(text))
    expected = parse_response(text, tpl, prefix=prefix, strict=False)
    copy_at = set(data.draw(st.lists(st.integers(0, len(chunks)), max_size=3)))
    use_region = data.draw(st.booleans())
    parser = ResponseParser(tpl, prefix)
    events = list(parser.initial_events)
    for i, chunk in enumerate(chunks):
        if i in copy_at:  # a copy (pickle) of the parser goes on as the parser would
            parser = pickle.loads(pickle.dumps(parser)) if i % 2 else copy.deepcopy(parser)
        if use_region and parser.feed_region(chunk):
            events.append({"type": "region_chunk", "field": parser.current_field, "text": chunk})
        else:
            events += parser.feed(chunk)
    message, final = parser.finalize()
    assert _dumps(message) == _dumps(expected)
    whole = ResponseParser(tpl, prefix)
    reference = list(whole.initial_events) + whole.feed(text) + whole.finalize()[1]
    assert _events(events + final) == _events(reference)
