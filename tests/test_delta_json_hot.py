"""`delta_json_hot.json_hot_feed` (the region's ``feed`` for a plain `JsonPartial`: a followed member's end read in
the same call) and `JsonPartial.end_string`'s read of the next member cut before its value (issue 18, item 1). The
oracles: the old paths (no region feed, the old whole-member pattern: `test_delta_hot_feed.old_paths`) and the
generic region feed (`delta_hot.hot_feed` without the JSON one), piece by piece, for any arguments and chunking."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from test_delta_hot_feed import KEYS, VALUES, _body, _deltas_per_piece, old_paths
from test_openai_deltas import CHATML, SETTINGS, chunkings

import hf_response_templates.delta_hot as delta_hot
import hf_response_templates.delta_json_hot as delta_json_hot
import hf_response_templates.deltas as deltas_module
import hf_response_templates.partial.json_reader as json_reader
from hf_response_templates import get_template, parse_response
from hf_response_templates.delta_hot import hot_feed
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial.json_reader import JsonPartial


@contextlib.contextmanager
def generic_hot_feed() -> Iterator[None]:
    """Within the block: `delta_hot.hot_feed`'s own branches for a `JsonPartial` (no `json_hot_feed`), and
    `JsonPartial.end_string` reading what follows the string by `_follow_members` (no cut-member shortcut)."""
    real_json, real_end = delta_json_hot.json_hot_feed, JsonPartial.end_string
    real_deltas_json = deltas_module.json_hot_feed  # (`deltas` calls it by the name it imported)

    def end_string(self: JsonPartial, text: str, q: int) -> str:  # the step-by-step path: `_follow_feed`
        return self.feed(text) or ""

    delta_json_hot.json_hot_feed = delta_hot._hot_feed  # type: ignore[assignment]
    deltas_module.json_hot_feed = delta_hot._hot_feed  # type: ignore[assignment]
    JsonPartial.end_string = end_string  # type: ignore[method-assign]
    try:
        yield
    finally:
        delta_json_hot.json_hot_feed = real_json
        deltas_module.json_hot_feed = real_deltas_json
        JsonPartial.end_string = real_end  # type: ignore[method-assign]


# (keys and texts the member patterns take or refuse: escapes, a repeated key, json.dumps' spacing or not, a cut
# right after a value, the object's end glued to a member)
ODD_KEYS = st.sampled_from(["k", "k", "a b", "é", 'q"', "n\\", "}", "]", ",", ":"])


def _args(members: list[tuple[str, object]], spaced: bool) -> str:
    return f'<tool_call>\n{{"name": "f", "arguments": {_body(members, spaced)}}}\n</tool_call><|im_end|>'


@settings(max_examples=250, **SETTINGS)
@given(
    members=st.lists(st.tuples(st.one_of(KEYS, ODD_KEYS), VALUES), max_size=8),
    spaced=st.booleans(),
    data=st.data(),
)
def test_every_piece_gives_the_deltas_of_the_old_and_the_generic_paths(members, spaced, data) -> None:
    """Fails if the member read in place changes any delta: per piece, the stream gives what the old paths (no
    region feed) and the generic region feed gave; its message is `parse_response`'s."""
    template = get_template("hermes3")
    text = _args(members, spaced)
    pieces = data.draw(chunkings(text))
    new, ds = _deltas_per_piece(template, pieces)
    with generic_hot_feed():
        generic, _ = _deltas_per_piece(template, pieces)
    with old_paths():
        old, _ = _deltas_per_piece(template, pieces)
    assert new == generic == old
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)


@settings(max_examples=80, **SETTINGS)
@given(n=st.integers(1, 60), data=st.data())
def test_token_sized_pieces_of_many_members_as_the_generic_path(n, data) -> None:
    """The benchmark's shape (strings with and without escapes, integers, literals, lists), 1-7 characters a
    piece, sometimes glued to the object's end or malformed at the end."""
    rng = data.draw(st.randoms(use_true_random=False))
    kinds = [lambda: "word " * rng.randint(0, 5), lambda: rng.randint(-(10**6), 10**6), lambda: [1, "x", None],
             lambda: rng.choice([True, False, None]), lambda: "a\nb\"c" * rng.randint(0, 2)]
    members = [(f"k{i}", kinds[rng.randrange(len(kinds))]()) for i in range(n)]
    text = _args(members, True)
    tail = data.draw(st.sampled_from(["", "broken", "dup"]))
    if tail == "broken":
        text = text.replace("}}\n</tool_call>", ", 01}}\n</tool_call>")
    elif tail == "dup":
        text = text.replace("}}\n</tool_call>", ', "k0": 1}}\n</tool_call>')
    pieces, i = [], 0
    while i < len(text):
        k = rng.randint(1, 7)
        pieces.append(text[i : i + k])
        i += k
    template = get_template("hermes3")
    new, _ = _deltas_per_piece(template, pieces)
    with generic_hot_feed():
        generic, _ = _deltas_per_piece(template, pieces)
    assert new == generic


def test_the_stream_feeds_through_json_hot_feed_and_reads_members_in_place(monkeypatch) -> None:
    """Fails on the old code (no `json_hot_feed`; every member's end went through `JsonPartial._follow_held` and
    `_follow_members`): the benchmark's shape, in token-sized pieces, calls neither before the object's end."""
    calls = {"held": 0, "members": 0}
    held, members = JsonPartial._follow_held, JsonPartial._follow_members

    def count_held(self, text):  # noqa: ANN001, ANN202
        calls["held"] += 1
        return held(self, text)

    def count_members(self, s, i, out):  # noqa: ANN001, ANN202
        calls["members"] += 1
        return members(self, s, i, out)

    monkeypatch.setattr(JsonPartial, "_follow_held", count_held)
    monkeypatch.setattr(JsonPartial, "_follow_members", count_members)
    rng = random.Random(5)
    args = {f"k{i}": ["the words", rng.randint(0, 10**6), [1, 2, 3]][i % 3] for i in range(60)}
    text = f'<tool_call>\n{{"name": "f", "arguments": {json.dumps(args)}}}\n</tool_call><|im_end|>'
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    hot = None
    i = 0
    while i < len(text):
        k = rng.randint(1, 7)
        ds.feed(text[i : i + k])
        if ds._open is not None and ds.feed is ds._open.hot:
            hot = ds.feed
        i += k
    ds.finish()
    assert hot is not None and hot.__qualname__.startswith("json_hot_feed")
    assert calls["held"] <= 1 and calls["members"] <= 1  # (the object's end: `_follow_held` reads it, unfollows)
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)
    assert not ds.warnings


def test_end_string_holds_the_next_member_cut_before_its_value_as_follow_members_does() -> None:
    """`JsonPartial.end_string` with the text after the closing quote a cut member (`,`, `, "k`, `, "k": `, ...):
    the same fragment and state as `_follow_members` leaves (the step-by-step path)."""
    for rest in ("", ",", ", ", ', "', ', "k', ', "k"', ', "k":', ', "k": ', ', "a\\', ', "}', ', "k" ', ', "k":x', "}"):
        states = []
        for shortcut in (True, False):
            p = JsonPartial()
            p.feed('{"a": 1, "s": "')
            frame = p.stack[-1]
            assert p.follow(frame)
            assert p.feed("xy") is True
            text = 'z"' + rest
            if shortcut:
                res = p.end_string(text, 1)
            else:
                saved = json_reader._CUT_MEMBER
                json_reader._CUT_MEMBER = _NEVER  # (`end_string` then reads on by `_follow_members`)
                try:
                    res = p.end_string(text, 1)
                finally:
                    json_reader._CUT_MEMBER = saved
            states.append((res, list(p.pending), p.wait, p.quotes, p.following is None, dict(frame.node), p.version))
        assert states[0] == states[1], rest


class _Never:
    def match(self, s: str, i: int = 0) -> None:
        return None


_NEVER = _Never()


def test_hot_feed_dispatches_plain_json_only() -> None:
    """`hot_feed` gives a plain `JsonPartial`'s region `json_hot_feed`'s feed, a dialect's (Gemma 4) its own."""
    for name, prefix, head, qual in (
        ("hermes3", CHATML, '<tool_call>\n{"name": "f", "arguments": {"a": "x', "json_hot_feed"),
        ("gemma4", "<|turn>user\nHi<turn|>\n<|turn>model\n", '<|tool_call>call:f{a:<|"|>x', "_hot_feed"),
    ):
        ds = DeltaStream(get_template(name), prefix=prefix, id_seed=0)
        ds.feed(head)
        r = ds._open
        assert r is not None and r.hot is not None
        assert r.hot.__qualname__.split(".")[0] == qual
        assert hot_feed(ds, r).__qualname__.split(".")[0] == qual


# --------------------------------------------------------------------------- the held-member patterns (possessive)

# The patterns as they were written before (`json_reader._MEMBER`, nested optional groups for the cut): the oracle
_PLAIN_AHEAD = r'(?=(?:,(?: (?:"[^"]*(?:"(?::(?: )?)?)?)?)?)?\Z)'
_PLAIN = {
    "_FIRST_HELD": f"(?:{json_reader._MEMBER}){_PLAIN_AHEAD}",
    "_NEXT_HELD": f", (?:{json_reader._MEMBER}){_PLAIN_AHEAD}",
    "_STRING_ENDS": r'([^"\\\x00-\x1f]*)"(?:,(?: (?:"[^"]*(?:"(?::(?: )?)?)?)?)?)?\Z',
}
# (the characters the patterns tell apart, and a few others)
_PATTERN_TEXT = st.text(st.sampled_from('"\\:, {}[]-0123456789truefalsnk\x01é'), max_size=40)
_MEMBER_PARTS = st.lists(
    st.sampled_from(['"', '"k"', '"k0": ', ": ", ", ", ",", '"ab c', "12", "-3", "0", "01", "true", "nul", "null",
                     "[1, 2, 3]", '["a", 1, true]', "[", "]", "}", "\\n", "\x01", "é", '"k', '": "', " "]),
    max_size=9,
).map("".join)


def _same_match(a, b) -> bool:  # noqa: ANN001 - re.Match | None
    if a is None or b is None:
        return a is b
    return a.span() == b.span() and a.groups() == b.groups() and a.lastindex == b.lastindex and all(
        a.span(g) == b.span(g) for g in range(1, (a.re.groups or 0) + 1)
    )


@settings(max_examples=600, **SETTINGS)
@given(text=st.one_of(_PATTERN_TEXT, _MEMBER_PARTS, _MEMBER_PARTS.map(lambda t: ", " + t)))
def test_held_patterns_match_as_the_plain_patterns(text) -> None:
    import re

    for name, plain in _PLAIN.items():
        new = getattr(delta_json_hot, name)
        assert _same_match(new.match(text), re.compile(plain).match(text)), (name, text)


def test_held_patterns_match_as_the_plain_patterns_on_the_common_members() -> None:
    import re

    rng = random.Random(7)
    values = ['"the model writes"', '"a lon', "123456", "0", "-12", "true", "null", "[1, 2, 3]", '["x", 2]', "01", "1.5", "[]", "[1, 2,", "[1, 2, 3"]
    cuts = ["", ",", ", ", ', "', ', "k1', ', "k1"', ', "k1":', ', "k1": ', ', "k1": 1', "}", ', "k1": "a']
    for _ in range(3000):
        text = rng.choice(["", ", "]) + f'"k{rng.randint(0, 99)}": ' + rng.choice(values) + rng.choice(cuts)
        text = text[: rng.randint(0, len(text))] if rng.random() < 0.3 else text
        for name, plain in _PLAIN.items():
            new = getattr(delta_json_hot, name)
            assert _same_match(new.match(text), re.compile(plain).match(text)), (name, text)
            if text.startswith(", "):
                assert _same_match(new.match(text, 2), re.compile(plain).match(text, 2)), (name, text)


@settings(max_examples=120, **SETTINGS)
@given(n=st.integers(1, 40), data=st.data())
def test_token_sized_pieces_give_the_deltas_of_the_plain_patterns(n, data) -> None:
    import re

    rng = random.Random(data.draw(st.integers(0, 10**6)))
    parts = []
    for i in range(n):
        kind = rng.randrange(4)
        value = (json.dumps("the x < y é \n"[: rng.randint(0, 13)], ensure_ascii=False) if kind == 0
                 else str(rng.randint(-10**6, 10**6)) if kind == 1 else "[1, 2, 3]" if kind == 2
                 else rng.choice(["true", "null", '["a", 1]', "{}", "1.5"]))
        parts.append(f'"k{i}": {value}')
    text = '<tool_call>\n{"name": "f", "arguments": {' + ", ".join(parts) + "}}\n</tool_call><|im_end|>"
    chunks = []
    i = 0
    while i < len(text):
        k = rng.randint(1, 7)
        chunks.append(text[i : i + k])
        i += k
    tpl = get_template("hermes3")

    def run() -> list:
        ds = DeltaStream(tpl, prefix=CHATML, id_seed=0)
        out = [ds.feed(c) for c in chunks]
        out.append(ds.finish())
        return out

    new = run()
    saved = {name: getattr(delta_json_hot, name) for name in _PLAIN}
    try:
        for name, plain in _PLAIN.items():
            setattr(delta_json_hot, name, re.compile(plain))
        old = run()
    finally:
        for name, pattern in saved.items():
            setattr(delta_json_hot, name, pattern)
    assert new == old


# --------------------------------------------------------------------------- the quotes a cut member leaves to come


def test_the_quotes_to_come_after_a_member_read_in_place_are_those_the_cut_leaves() -> None:
    """A member's end read in place (`member_end`: an integer, a list; `unsink`: a string's end) followed by the next
    member cut before its value: the reader waits for the quotes the cut does not hold (`JsonPartial.quotes`), the
    same state and deltas as the generic path, for every cut, and a piece at a time after it. (It failed with either
    count of 5416734 (without `str.count`, since reverted) made wrong.)"""
    tpl = get_template("hermes3")
    head = '<tool_call>\n{"name": "f", "arguments": {"a": 1, "b": '
    tail = ', "k": 5}}\n</tool_call><|im_end|>'
    for opening, value in (("", "123"), ("", "0"), ("", "[1, 2, 3]"), ('"xy', 'z"')):
        for n in range(1, 8):  # (",", ", ", ', "', ', "k', ', "k"', ', "k":', ', "k": ')
            cut = tail[:n]
            # (the head in pieces: the stream installs its region feed once the region is open)
            heads = [head[i : i + 5] for i in range(0, len(head), 5)]
            pieces = [*heads, *([opening] if opening else []), value + cut, *tail[n:]]
            runs = []
            for generic in (False, True):
                with generic_hot_feed() if generic else contextlib.nullcontext():
                    ds = DeltaStream(tpl, prefix=CHATML, id_seed=0)
                    out = []
                    for piece in pieces:
                        out.append(ds.feed(piece))
                        r = ds._open
                        p = r.partial if r is not None else None
                        out.append(None if p is None else (p.quotes, "".join(p.pending), p.wait))
                    out.append(ds.finish())
                    assert not ds.warnings
                runs.append(out)
            assert runs[0] == runs[1], (value, cut)
