"""A `^` under MULTILINE (`(?m)`) matches after every newline, not only at stream offset 0: streaming must not
drop such a delimiter once the stream has moved past its start (it used to, while one-shot found it)."""

from __future__ import annotations

import pytest

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.regex_leads import ANCHOR_ALL, ANCHOR_NONE, _start_chars


def _template(open_pattern: str) -> dict:
    return {
        "version": 1,
        "start_anchor": "<s>",
        "fields": {"a": {"open_pattern": open_pattern, "close": "</x>"}, "content": {"content": "text"}},
    }


def _streamed(tpl: dict, text: str, size: int) -> dict:
    p = ResponseParser(load_template(tpl), "<s>")
    for i in range(0, len(text), size):
        p.feed(text[i : i + size])
    return p.finalize()[0]


@pytest.mark.parametrize("pattern", ["(?m)^<x>", "(?m:^)<x>", "(?m)(?:^|<y>)<x>", "(?m)(?=^<x>)<x>"])
@pytest.mark.parametrize("size", [1, 2, 3, 1000])
def test_a_multiline_caret_delimiter_past_the_start_is_found_streamed_as_one_shot(pattern: str, size: int) -> None:
    tpl = _template(pattern)
    text = "hi\n<x>A</x>"
    expected = {"content": "hi", "a": "A"}
    assert parse_response(text, tpl, prefix="<s>") == expected
    assert _streamed(tpl, text, size) == expected


@pytest.mark.parametrize("size", [1, 2, 1000])
def test_a_plain_caret_delimiter_still_matches_only_at_the_start(size: int) -> None:
    tpl = _template("^<x>")
    text = "hi\n<x>A</x>"
    one_shot = parse_response(text, tpl, prefix="<s>", strict=False)
    assert "a" not in one_shot
    assert _streamed(tpl, text, size) == one_shot
    assert _streamed(tpl, "<x>A</x>", size) == parse_response("<x>A</x>", tpl, prefix="<s>") == {"a": "A"}


def test_the_anchor_analysis_reads_multiline() -> None:
    assert _start_chars("^<x>")[1] == ANCHOR_ALL
    assert _start_chars(r"\A<x>")[1] == ANCHOR_ALL
    assert _start_chars(r"(?m)\A<x>")[1] == ANCHOR_ALL  # (\A is the start of the text under any flags)
    for pattern in ("(?m)^<x>", "(?m:^)<x>", "(?m)(?:^|<y>)<x>"):
        assert _start_chars(pattern)[1] == ANCHOR_NONE, pattern
