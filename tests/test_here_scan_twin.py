"""`here_scan._twin`: the `re` twin of a regex delimiter that `re` declines only because a group name is used twice
(gpt-oss's tool-call open), with its captures read back as `regex` has them (`_twin_groups`): the same match end
and the same captures as the `regex` pattern at every position, on harmony-like texts and on made-up patterns
where both groups of one name take part (then `regex`'s last capture, asked of `regex` itself)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_here_scan import _FRAGS

from hf_response_templates import load_template
from hf_response_templates.delimiters import _groups
from hf_response_templates.here_scan import _try, _twin, here_scan
from hf_response_templates.library import get_template

#: Made-up opens whose name is used twice: in two alternatives, and in a row (both may take part).
_MADE = {
    "version": 1,
    "start_anchor": "<s>",
    "fields": {
        "a": {
            "open_pattern": "\\s*(?:<a (?P<n>[a-z0-9]+)>|<b\\s+(?P<n>[^>]*)>)",
            "close": "</x>",
            "content": "text",
            "transform": {"n": "{n}", "c": "{content}"},
        },
        "b": {
            "open_pattern": "<c(?P<n>[xy])(?P<n>z)?(?P<m>q)?>",
            "close": "</x>",
            "content": "text",
            "transform": {"n": "{n}", "c": "{content}"},
        },
    },
}


def _regex_delimiters() -> list:
    out = [d for d in load_template(get_template("gpt-oss")).idle_watch.regexes if d.field == "tool_calls"]
    out += list(load_template(_MADE).idle_watch.regexes)
    return out


DELIMITERS = _regex_delimiters()


def test_the_twin_is_made_where_a_name_is_used_twice():
    for d in DELIMITERS:
        assert d.fast is d.pattern and _twin(d) is not None, d.source
    tpl = load_template(get_template("gpt-oss"))
    tries = here_scan(tpl.idle_watch).tries
    assert [t[1].__self__.__class__.__module__ for t in tries] == ["re"] * 3  # (every try a stdlib match)
    for d in tpl.idle_watch.regexes:
        if d.field != "tool_calls":
            assert _twin(d) is None  # (no named group: its `fast` is `re` already)


@pytest.mark.parametrize(
    "text, want",
    [
        ("<cx>", {"n": "x"}),
        ("<cyz>", {"n": "z"}),
        ("<cxzq>", {"n": "z", "m": "q"}),
        (" <a f1>", {"n": "f1"}),
        ("<b  g h>", {"n": "g h"}),
    ],
)
def test_captures_as_regex_has_them(text, want):
    d = next(d for d in DELIMITERS if d.source.startswith("<c") == text.startswith("<c") and d.field in "ab")
    t = _try(d)
    m = t[1](text, 0)
    assert m is not None and m.end() == len(text)
    assert t[2](m) == want == _groups(d, d.pattern.match(text, 0))


_MORE = ["<a ", "<b", " ", "f", ">", "<c", "x", "y", "z", "q", "\t"]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(range(len(DELIMITERS))),
    st.lists(st.sampled_from(_FRAGS + _MORE), max_size=10),
    st.integers(0, 60),
)
def test_the_twin_matches_as_regex_does(k, parts, pos):
    d = DELIMITERS[k]
    text = "".join(parts)
    pos = min(pos, len(text))
    _, match, caps = _try(d)
    want = d.pattern.match(text, pos)
    got = match(text, pos)
    assert (got is None) == (want is None), (d.source, text, pos)
    if got is not None:
        assert got.end() == want.end()
        assert caps(got) == _groups(d, want)
