"""`delta_json_hot.json_hot_feed`'s per-state feeds (issue 18, item 1): `sink_feed` while the stream sinks a string
argument, `held_feed` while a member is held back, installed as the stream's ``feed`` where that state is known and
put back before any other step; the sunk string's end (with the next member cut after it) and its json.dumps-style
escapes read in place; a sunk piece in which the region's end delimiter may start handed to the parser directly.
The oracles: the generic region feed (`delta_hot._hot_feed`, `test_delta_json_hot.generic_hot_feed`) and the old
paths (no region feed, `test_delta_hot_feed.old_paths`), piece by piece, for random arguments and chunkings."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from test_delta_hot_feed import _deltas_per_piece, old_paths
from test_delta_json_hot import generic_hot_feed
from test_openai_deltas import CHATML, SETTINGS, chunkings

from hf_response_templates import get_template, parse_response
from hf_response_templates.deltas import DeltaStream
from hf_response_templates.partial.json_reader import JsonPartial

# words the benchmark writes (a "<" that may start the region's end, accents, a line break: an escape) and a few
# that the fast paths must leave to the general ones (a quote, a backslash, control and non-printable characters,
# a lone surrogate, "</" and the end delimiter itself inside a string)
WORDS = st.sampled_from(
    ["the", "model", "x", "<", "y", "é", "déjà,", "42", "3.14", "\n", "\t", '"', "\\", "\x01", "\u2028", "\ud800",
     "</", "</tool_call>", "[1]", "}", ",", ": "]
)
PROSE = st.lists(WORDS, max_size=10).map(" ".join)
VALUES = st.one_of(
    PROSE,
    st.integers(-(10**6), 10**6),
    st.sampled_from([True, False, None, 0.5, [1, 2, 3], [], ["a", 1, None], {"a": 1}]),
    st.lists(st.one_of(PROSE, st.integers(0, 9)), max_size=3),
)
KEYS = st.one_of(st.sampled_from(["k", "a b", "é", "x<y", 'q"', "n\\", "k"]), st.from_regex(r"k[0-9]{1,3}", fullmatch=True))


def _text(members: list[tuple[str, object]], spaced: bool) -> str:
    sep, colon = (", ", ": ") if spaced else (",", ":")
    body = "{" + sep.join(json.dumps(k, ensure_ascii=False) + colon + json.dumps(v, ensure_ascii=False) for k, v in members) + "}"
    return f'<tool_call>\n{{"name": "f", "arguments": {body}}}\n</tool_call><|im_end|>'


def _token_pieces(text: str, rng: random.Random) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        k = rng.randint(1, 7)
        pieces.append(text[i : i + k])
        i += k
    return pieces


@settings(max_examples=150, **SETTINGS)
@given(members=st.lists(st.tuples(KEYS, VALUES), max_size=8), spaced=st.booleans(), data=st.data())
def test_every_piece_gives_the_deltas_of_the_generic_and_the_old_paths(members, spaced, data) -> None:
    """Fails if a per-state feed, the string's end read in place, an escape read in place or a piece handed to
    the parser directly changes any delta: per piece, the stream gives what the generic region feed and the old
    paths give; its message is `parse_response`'s."""
    template = get_template("hermes3")
    text = _text(members, spaced)
    if data.draw(st.booleans()):
        pieces = data.draw(chunkings(text))
    else:  # (token-sized, as the benchmark cuts it)
        pieces = _token_pieces(text, data.draw(st.randoms(use_true_random=False)))
    new, ds = _deltas_per_piece(template, pieces)
    with generic_hot_feed():
        generic, _ = _deltas_per_piece(template, pieces)
    with old_paths():
        old, _ = _deltas_per_piece(template, pieces)
    assert new == generic == old
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)


def _bench_text(n: int, rng: random.Random) -> str:
    """The benchmark's json-members shape: strings of prose (with "x < y" and line breaks), integers, lists."""
    words = "the model writes a long answer with numbers 42 and 3.14, accents é déjà, and a few x < y".split()

    def prose() -> str:
        return "".join(rng.choice(words) + (" " if rng.random() < 0.9 else "\n") for _ in range(6)).strip()

    args = {f"k{i}": [prose(), rng.randint(0, 10**6), [1, 2, 3]][i % 3] for i in range(n)}
    return f'<tool_call>\n{{"name": "f", "arguments": {json.dumps(args, ensure_ascii=False)}}}\n</tool_call><|im_end|>'


def test_the_state_feeds_take_the_pieces_and_the_general_reader_is_not_called(monkeypatch) -> None:
    """Fails on the old code (one region feed for every state; a string's end with a cut member after it read by
    `JsonPartial.end_string`, an escape by `JsonPartial.feed`, a piece ending in "<" routed by `DeltaStream._route`
    and `_follow_chunk`): in the benchmark's shape, most pieces go to `sink_feed` or `held_feed`, and neither the
    partial parser's general reader nor the stream's router is called while the arguments stream."""
    calls = {"feed": 0, "end_string": 0, "route": 0, "follow_chunk": 0}
    originals = {
        "feed": (JsonPartial, JsonPartial.feed),
        "end_string": (JsonPartial, JsonPartial.end_string),
        "route": (DeltaStream, DeltaStream._route),
        "follow_chunk": (DeltaStream, DeltaStream._follow_chunk),
    }
    for name, (cls, fn) in originals.items():

        def counted(*args, _name=name, _fn=fn):  # noqa: ANN002, ANN202
            calls[_name] += 1
            return _fn(*args)

        monkeypatch.setattr(cls, fn.__name__, counted)
    rng = random.Random(7)
    text = _bench_text(90, rng)
    assert " < " in text and "\\n" in text
    start = text.index('"k0"')
    end = text.index("}}\n</tool_call>")
    pieces = _token_pieces(text, rng)
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    feeds: dict[str, int] = {}
    i = 0
    during = dict.fromkeys(calls, 0)
    for piece in pieces:
        before = dict(calls)
        name = getattr(ds.feed, "__qualname__", "").rsplit(".", 1)[-1]
        ds.feed(piece)
        if start + 60 < i and i + len(piece) < end:  # (the arguments stream: their start and end left out)
            feeds[name] = feeds.get(name, 0) + 1
            for k in calls:
                during[k] += calls[k] - before[k]
        i += len(piece)
    ds.finish()
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)
    assert not ds.warnings
    n = sum(feeds.values())
    assert feeds.get("sink_feed", 0) + feeds.get("held_feed", 0) >= 0.8 * n, feeds
    # (the general paths stay for what the fast ones leave: an escape cut by a piece's end, an escape and the string's
    # end in one piece, a string opening with "<")
    assert during["end_string"] == 0 and during["feed"] <= n // 40 and during["route"] + during["follow_chunk"] <= n // 100, (
        during, n
    )


def test_an_escape_in_a_sunk_string_is_read_in_place_and_the_string_sunk_again() -> None:
    """A piece of escapes as json.dumps writes them (\\n, \\", \\\\, \\t) is its own fragment and the string stays
    sunk; other escapes (\\u, \\/) and a cut escape take the partial parser's reader, with the same deltas."""
    template = get_template("hermes3")
    for middle in ("a\\nb", '\\"q\\"', "\\\\", "\\t\\r\\b\\f", "\\u00e9", "\\/", "a\\", "\\u12"):
        head = '<tool_call>\n{"name": "f", "arguments": {"a": 1, "s": "xy'
        pieces = [head, "z", "w", middle, "v", "u", '"}}\n</tool_call>', "<|im_end|>"]
        new, ds = _deltas_per_piece(template, pieces)
        with generic_hot_feed():
            generic, _ = _deltas_per_piece(template, pieces)
        assert new == generic, middle
        assert new[3] == [{"tool_calls": [{"index": 0, "function": {"arguments": middle}}]}] or middle in (
            "\\u00e9", "\\/", "a\\", "\\u12"
        )


def test_the_state_feeds_test_a_piece_by_one_character_searches_with_few_cells() -> None:
    """Fails on the old code (`frozenset.isdisjoint` of the piece, which iterates it and hashes each character;
    11 and 12 cells copied into every call's frame): `sink_feed` and `held_feed` tell their common pieces by `in`
    tests, `sink_feed` appends a sunk piece with the call's cached `append`, and they close over at most 7 and 9
    cells; what they leave goes to `sink_exit` / `held_exit`."""
    rng = random.Random(3)
    text = _bench_text(30, rng)
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    seen = {}
    for piece in _token_pieces(text, rng):
        f = ds.feed
        seen[getattr(f, "__qualname__", "").rsplit(".", 1)[-1]] = f
        ds.feed(piece)
    ds.finish()
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)
    for name, exit_name in (("sink_feed", "sink_exit"), ("held_feed", "held_exit")):
        code = seen[name].__code__
        assert "isdisjoint" not in code.co_names and "str_chunks" not in code.co_names, (name, code.co_names)
        assert len(code.co_freevars) <= (7 if name == "sink_feed" else 9), (name, code.co_freevars)
        assert exit_name in code.co_freevars


def test_the_lag_stays_bounded_while_members_are_held() -> None:
    """`held_feed` leaves the lag's length to `member_end` (once per member): fails if nothing checks it there (the
    lag then holds every piece of a body of numbers until the object ends)."""
    from hf_response_templates.delta_hot import _LAG_AT

    body = ", ".join(f'"k{i}": {i * 7919}' for i in range(400))
    text = f'<tool_call>\n{{"name": "f", "arguments": {{{body}}}}}\n</tool_call><|im_end|>'
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    longest = 0
    for i in range(0, len(text), 2):
        ds.feed(text[i : i + 2])
        longest = max(longest, len(ds._lag))
    ds.finish()
    assert longest <= _LAG_AT + 16
    assert ds.message == parse_response(text, template, prefix=CHATML) and not ds.warnings


def test_a_held_member_end_leaves_held_feed_installed_for_its_call() -> None:
    """`member_end` installs `held_feed` (for its call) only where it is not the stream's ``feed`` already: fails if
    it skips the install where another feed is installed (the next member's pieces then go to `feed`), or installs
    it for the wrong call (other deltas). Numbers, lists, strings and literals, pieces of 1-7 characters, two calls;
    the deltas piece by piece as the generic region feed's."""
    from hf_response_templates.partial.json_reader import _WAIT_MEMBER

    template = get_template("hermes3")
    rng = random.Random(5)
    checked = 0
    for _ in range(60):
        values = ([rng.randint(0, 10**6), [1, 2], "s" * rng.randint(0, 9), True][i % 4] for i in range(16))
        args = {f"k{i}": v for i, v in enumerate(values)}
        one = f'<tool_call>\n{{"name": "f", "arguments": {json.dumps(args)}}}\n</tool_call>'
        text = f"{one}\n{one.replace('k', 'q')}<|im_end|>"
        pieces = []
        while sum(map(len, pieces)) < len(text):
            i = sum(map(len, pieces))
            pieces.append(text[i : i + rng.randint(1, 7)])
        ds = DeltaStream(template, prefix=CHATML, id_seed=0)
        new = []
        i = 0
        for piece in pieces:
            before = getattr(ds.feed, "__qualname__", "").rsplit(".", 1)[-1]
            new.append(ds.feed(piece))
            i += len(piece)
            r = ds._open
            if new[-1] and r is not None and r.follow is not None and r.sink is None and before == "held_feed":
                if r.partial.wait is _WAIT_MEMBER and text[i - 1] in "0123456789]e":
                    # (a number, list or literal member ended by this piece, read by `member_end`)
                    assert getattr(ds.feed, "__qualname__", "").endswith(".held_feed"), (ds.feed, text[:i])
                    checked += 1
        new.append(ds.finish())
        with generic_hot_feed():
            generic, _ = _deltas_per_piece(template, pieces)
        assert new == generic
        assert ds.message == parse_response(text, template, prefix=CHATML) and not ds.warnings
    assert checked > 100, checked
    # a member read by `member_end` from `feed` (installed after a string's end and more than a cut member)
    head = '<tool_call>\n{"name": "f", "arguments": {"a": "xy'
    pieces = [head, "z", 'w", "b": 1, "c', '": 3, "d', '": [1]', "}}\n</tool_call>"]
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    new = []
    for piece, feed in zip(pieces, ("", "", "", "feed", "held_feed", ""), strict=True):
        if feed:
            assert getattr(ds.feed, "__qualname__", "").endswith("." + feed), (piece, ds.feed)
        new.append(ds.feed(piece))
    new.append(ds.finish())
    assert new[3] == [{"tool_calls": [{"index": 0, "function": {"arguments": ', "c": 3'}}]}]
    with generic_hot_feed():
        generic, _ = _deltas_per_piece(template, pieces)
    assert new == generic and not ds.warnings


@settings(max_examples=60, **SETTINGS)
@given(members=st.lists(st.tuples(KEYS, VALUES), max_size=8), spaced=st.booleans(), data=st.data())
def test_an_empty_piece_in_any_state_gives_the_deltas_of_the_old_paths(members, spaced, data) -> None:
    """`held_feed` takes an empty piece as a held one (no test for it: it holds none of the characters it
    looks for), `sink_feed` hands it on: fails if an empty piece changes any delta in any state (a sunk
    string, a member held back, the quotes still to come counted), e.g. with `sink_feed` taking it as a sunk
    piece (an empty fragment). An empty piece before every piece, per piece as the generic region feed and
    the old paths."""
    template = get_template("hermes3")
    text = _text(members, spaced)
    rng = data.draw(st.randoms(use_true_random=False))
    pieces = [p for piece in _token_pieces(text, rng) for p in ("", piece)]
    new, ds = _deltas_per_piece(template, pieces)
    with generic_hot_feed():
        generic, _ = _deltas_per_piece(template, pieces)
    with old_paths():
        old, _ = _deltas_per_piece(template, pieces)
    assert new == generic == old
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)


def test_an_empty_piece_goes_to_the_state_feeds_and_gives_nothing() -> None:
    """The benchmark's shape with an empty piece before every piece: `held_feed` and `sink_feed` are the
    stream's ``feed`` for many of them, each gives no delta, `held_feed` stays installed, and the deltas of
    the other pieces are the generic region feed's (fails if an empty piece is taken as a sunk piece, or as
    one that may end the member held back)."""
    rng = random.Random(11)
    text = _bench_text(40, rng)
    pieces = [p for piece in _token_pieces(text, rng) for p in ("", piece)]
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    new, seen = [], {"held_feed": 0, "sink_feed": 0}
    for piece in pieces:
        name = getattr(ds.feed, "__qualname__", "").rsplit(".", 1)[-1]
        new.append(ds.feed(piece))
        if not piece and name in seen:  # (the first empty piece gives the role's delta: `_begin`)
            seen[name] += 1
            assert new[-1] == []
            if name == "held_feed":
                assert getattr(ds.feed, "__qualname__", "").endswith(".held_feed")
    new.append(ds.finish())
    assert not ds.warnings and seen["held_feed"] >= 50 and seen["sink_feed"] >= 50, seen


def _feed_name(ds: DeltaStream) -> str:
    return getattr(ds.feed, "__qualname__", "").rsplit(".", 1)[-1]


def _cell(fn, name: str):  # noqa: ANN001, ANN202
    return fn.__closure__[fn.__code__.co_freevars.index(name)].cell_contents


def _check_installed(ds: DeltaStream, piece: str) -> None:
    """The state feed installed after a piece is the one whose state holds: `sink_feed` while the region's string is
    sunk (for that call), `held_feed` while a member is held back (not sunk), each with the lag character the
    stream has (`lag_c`), and the region's `hot` is the stream's ``feed``."""
    from hf_response_templates.partial.json_reader import _WAIT_MEMBER

    name = _feed_name(ds)
    r = ds._open
    if name not in ("sink_feed", "held_feed"):
        return
    assert r is not None and r.hot is ds.feed, (piece, name)
    assert _cell(ds.feed, "lag_c") is ds._lag_char, (piece, name, ds._lag_char)
    if name == "sink_feed":
        call = r.sink
        assert call is not None and _cell(_cell(ds.feed, "sink_exit"), "scall") is call, (piece, name)
        assert _cell(ds.feed, "sappend").__self__ is call.str_chunks and _cell(ds.feed, "sidx") == call.index
    else:
        assert r.sink is None and r.partial.wait is _WAIT_MEMBER, (piece, name)
        assert _cell(ds.feed, "fcall") is r.follow, (piece, name)


def _check_sent(ds: DeltaStream, deltas: list, sent: dict) -> None:
    """The argument fragments of `deltas` added to `sent` (per call index), and each open call's record of what was
    sent (`_Call.parts`, with the pieces of a sunk string since `_Call.run`, read without folding them) is the same
    text."""
    for delta in deltas:
        for item in delta.get("tool_calls", ()):
            args = item.get("function", {}).get("arguments")
            if args:
                sent[item["index"]] = sent.get(item["index"], "") + args
    r = ds._open
    for call in r.calls if r is not None and r.kind == "tool" else ():
        run = "".join(call.str_chunks[call.run :]) if call.run >= 0 else ""
        assert "".join(call.parts) + run == sent.get(call.index, ""), (call.index, sent)


@settings(max_examples=150, **SETTINGS)
@given(members=st.lists(st.tuples(KEYS, VALUES), max_size=8), spaced=st.booleans(), data=st.data())
def test_the_installed_feed_is_the_one_of_the_state_after_every_piece(members, spaced, data) -> None:
    """Fails if a string's end read from `sink_feed` (`sink_exit` -> `unsink`, which puts `feed` back itself unless it
    installs `held_feed`) leaves `sink_feed` installed after the string ended (an escape, the general reader, a
    piece of a string not followed), or `sink_resume` installs `sink_feed` where the string is not sunk or with
    another lag character, or a call's record of what was sent (`_Call.parts`, which a string's end read in place
    extends by the string's last pieces) is not the text of its deltas; the deltas piece by piece as the generic
    region feed's."""
    template = get_template("hermes3")
    text = _text(members, spaced)
    if data.draw(st.booleans()):
        pieces = data.draw(chunkings(text))
    else:
        pieces = _token_pieces(text, data.draw(st.randoms(use_true_random=False)))
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    new = []
    sent: dict = {}
    for piece in pieces:
        new.append(ds.feed(piece))
        _check_installed(ds, piece)
        _check_sent(ds, new[-1], sent)
    new.append(ds.finish())
    with generic_hot_feed():
        generic, _ = _deltas_per_piece(template, pieces)
    assert new == generic
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)


def test_the_feed_after_a_sunk_string_ends_and_after_a_piece_ending_in_a_lag_character() -> None:
    """From `sink_feed`: a string's end with a cut member after it installs `held_feed`; an escape read in place
    keeps the string sunk (`sink_feed`); an escape cut by the piece's end, or a string's end followed by more than
    a cut member, puts `feed` back. After a piece ending in "<" (handed to the parser) and the next one (read by the
    parser), the piece the parser takes as region text installs `sink_feed` again (`sink_resume`). Fails with the
    install of `feed` dropped from `unsink`, or with `sink_resume` not installing `sink_feed` or not setting its lag
    character."""
    template = get_template("hermes3")
    head = '<tool_call>\n{"name": "f", "arguments": {"a": 1, "s": "xy'
    cases = [  # (the first piece after the head goes to `DeltaStream._feed`, which installs `feed`)
        (["z", "q", 'w", "b'], ["feed", "sink_feed", "held_feed"]),
        (["z", "q", "w\\n"], ["feed", "sink_feed", "sink_feed"]),
        (["z", "q", "w\\"], ["feed", "sink_feed", "feed"]),
        (["z", "q", 'w", "b": 1, "c'], ["feed", "sink_feed", "feed"]),
        (["z", "q", "w\\u00e9"], ["feed", "sink_feed", "feed"]),
        # ("<" ends a piece: kept by the stream (`delta_tail.cut_tail`), `joined` installed, then `sink_feed` again)
        (
            ["z", "q", "x <", " y", " zz", "w"],
            ["feed", "sink_feed", "joined", "sink_feed", "sink_feed", "sink_feed"],
        ),
        (["z", "q", "x <", "/", "t", "y"], ["feed", "sink_feed", "joined", "joined", "joined", "sink_feed"]),
        # (a "<" starting no delimiter, in a piece needing no escaping: taken by `sink_exit`, `sink_feed` stays)
        (["z", "q", "x < y", "a<b", "</a", "w"], ["feed", *["sink_feed"] * 5]),
        # (the head ends in "<": the lag character is not known yet when `sink_resume` installs `sink_feed`, which
        # sets `lag_c`)
        ([" y", " zz", "ww"], ["feed", "sink_feed", "sink_feed"]),
    ]
    for n, (body, feeds) in enumerate(cases):
        first = head if n < len(cases) - 1 else head + " <"
        pieces = [first, *body, '"}}\n</tool_call>', "<|im_end|>"]
        ds = DeltaStream(template, prefix=CHATML, id_seed=0)
        new = [ds.feed(first)]
        for piece, feed in zip(body, feeds, strict=True):
            new.append(ds.feed(piece))
            assert _feed_name(ds) == feed, (body, piece, _feed_name(ds))
            _check_installed(ds, piece)
        new.extend(ds.feed(piece) for piece in pieces[len(body) + 1 :])
        new.append(ds.finish())
        with generic_hot_feed():
            generic, _ = _deltas_per_piece(template, pieces)
        assert new == generic, body
        assert not ds.warnings


def test_a_call_records_the_text_of_its_deltas_after_every_piece_in_the_benchmarks_shape() -> None:
    """Fails if a string's end read in place (`unsink`) records in `_Call.parts` other text than it sent (its last
    pieces cut from the string's value, `k` 0 or 1, off by one), or a piece ending in "<" kept by the stream
    (`delta_tail.cut_tail`) changes a delta: the benchmark's shape, pieces of 1-7 characters, several seeds; the
    deltas piece by piece as the generic region feed's."""
    template = get_template("hermes3")
    for seed in range(6):
        rng = random.Random(seed)
        text = _bench_text(40, rng)
        pieces = _token_pieces(text, rng)
        ds = DeltaStream(template, prefix=CHATML, id_seed=0)
        new = []
        sent: dict = {}
        for piece in pieces:
            new.append(ds.feed(piece))
            _check_installed(ds, piece)
            _check_sent(ds, new[-1], sent)
        new.append(ds.finish())
        with generic_hot_feed():
            generic, _ = _deltas_per_piece(template, pieces)
        assert new == generic, seed
        assert ds.message == parse_response(text, template, prefix=CHATML, strict=False) and not ds.warnings
