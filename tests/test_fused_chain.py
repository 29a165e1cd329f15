"""The one-shot loop's fused calls read back to back (`fused_chain.py`, issue 19): after Mistral Small 3.2's call
read whole (kind 5) or Ministral 3's region to a zero-width close (kind 6), each next call whose open's text is
right there is read by the chain, not by another loop turn; a call it cannot read whole goes back to the loop
untouched. Ministral 3's plain JSON arguments are decoded in the loop (`dinfo`). The messages are the general
loop's and the streaming parser's, with and without `tools=`.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import fused_chain as chain_module
from hf_response_templates import load_template, parse_response
from hf_response_templates.plan import OneShotPlan

_ANCHOR = "[/INST]"


def _fused(tpl) -> list[tuple]:
    ik, scan = oneshot_plan(tpl)._fast[:2]
    return [t[5] for t in scan.only if ik == 8 and t[1] == 0]


def test_the_mistral_family_chains_its_calls():
    # (fails on the code before `fused_chain`: the fused tries carried no chain, nor Ministral's `dinfo`)
    (small,) = _fused(TEMPLATES["mistral-small-3.2"])
    (mini,) = _fused(TEMPLATES["ministral-3"])
    assert small[0] == 5 and small[8] is None and callable(small[9])
    assert mini[0] == 6 and mini[8] is not None and callable(mini[9])


def _calls(k: int, args: str = '{{"a": {k}}}', sep: str = "") -> str:
    return sep.join(f"[TOOL_CALLS]f{i}[ARGS]" + args.format(k=i) for i in range(k))


@pytest.mark.parametrize("name", ["mistral-small-3.2", "ministral-3"])
@pytest.mark.parametrize("calls", [1, 2, 3, 5])
def test_calls_back_to_back_take_one_chain(name, calls, monkeypatch):
    runs = []
    real = chain_module.fused_chain

    def counted(*a):
        run = real(*a)
        return None if run is None else (lambda *b: runs.append(b[1]) or run(*b))

    monkeypatch.setattr(chain_module, "fused_chain", counted)
    import hf_response_templates.plan_shape as shape

    monkeypatch.setattr(shape, "fused_chain", counted)
    plan = OneShotPlan(load_template(TEMPLATES[name]))  # (a plan made again, with the counting chain)
    text = "Hi " + _calls(calls) + "</s>"
    message = plan.run(text, _ANCHOR, None)
    assert [c["function"] for c in message["tool_calls"]] == [
        {"name": f"f{k}", "arguments": {"a": k}} for k in range(calls)
    ]
    assert message["content"] == "Hi"
    assert len(runs) == (calls > 1)  # (one chain reads every call after the first)
    assert message == plan._general(text, _ANCHOR, None)


@pytest.mark.parametrize("name", ["mistral-small-3.2", "ministral-3"])
@pytest.mark.parametrize(
    "text",
    [
        _calls(3) + "</s>",
        _calls(3) + " tail</s>",
        '[TOOL_CALLS]f[ARGS]{"a": 1} x</s>',  # (text after the first value: the plain region, read by its parse)
        '[TOOL_CALLS]f[ARGS]{"a": 1}x[TOOL_CALLS]g[ARGS]{}</s>',
        '[TOOL_CALLS]f[ARGS] {"a": 1}\n[TOOL_CALLS]g[ARGS]{}</s>',
        _calls(3, sep=" ") + "</s>",
        _calls(3, sep="\n") + "</s>",
        _calls(3),  # (no close at the end)
        _calls(2) + '[TOOL_CALLS]f2[ARGS]{"a": 2</s>',  # (a value that does not end)
        _calls(2) + '[TOOL_CALLS]f2[ARGS]{"a": 2',
        _calls(2) + "[TOOL_CALLS]f2[ARGS]3</s>",  # (not a container)
        _calls(2) + '[TOOL_CALLS]f2[ARGS] {"a": 2} </s>',  # (whitespace around the value)
        _calls(2) + '[TOOL_CALLS]f2[ARGS]{"a": 2} x</s>',  # (text after the value)
        _calls(2) + '[TOOL_CALLS]f2[ARGS]{"a": 2}}</s>',
        _calls(2) + "[TOOL_CALLS][ARGS]{}</s>",  # (no name: the regex does not match)
        _calls(2) + '[TOOL_CALLS]f2{"a": 2}</s>',  # (Mistral Small 3.2's NAME{json})
        _calls(2) + '[TOOL_CALLS]f2[CALL_ID]c1[ARGS]{"a": 2}</s>',
        _calls(2) + '[TOOL_CALLS]f2[CALL_ID]c</s>x[ARGS]{"a": 2}</s>',  # (a close text inside the open)
        _calls(2) + '[TOOL_CALLS]f2[ARGS]{"a": "[TOOL_CALLS]x"}</s>',  # (the open's text inside the value)
        _calls(2) + '[TOOL_CALLS]f2[ARGS]{"a": "</s>"}</s>',
        _calls(2) + "[TOOL_CALLS]f2[ARGS]</s>",  # (an empty body)
        _calls(2) + "</s>[TOOL_CALLS]f2[ARGS]{}</s>",
        _calls(2) + "[TOOL_CALLS]",
        _calls(2) + "[TOOL_CALLS]f2[ARGS]",
        "[THINK]r[/THINK]" + _calls(3) + "</s>",
        "[THINK]r" + _calls(3) + "</s>",
        "x" * 20 + _calls(4, args='{{"a": [{k}, "{{"], "b": {{}}}}') + "</s>",
    ],
)
def test_chained_calls_equal_the_general_loop(name, text):
    for prefix in (_ANCHOR, "", "[/INST] "):
        assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"f{k}",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
    for k in range(3)
]


@pytest.mark.parametrize("name", ["mistral-small-3.2", "ministral-3"])
def test_chained_calls_with_tools_equal_the_state_machine(name):
    from hf_response_templates import ResponseParser

    text = "Hi " + _calls(3) + "</s>"
    parser = ResponseParser(TEMPLATES[name], _ANCHOR, tools=_TOOLS)
    parser.feed(text)
    streamed, _ = parser.finalize()
    assert parse_response(text, TEMPLATES[name], prefix=_ANCHOR, tools=_TOOLS) == streamed


#: Pieces that put calls back to back more often than `test_oneshot_fused_close`'s, malformed ones among them.
_PIECES = [
    '[TOOL_CALLS]f[ARGS]{"a": 1}',
    '[TOOL_CALLS]g[ARGS]{"b": [1, 2]}',
    "[TOOL_CALLS]h[CALL_ID]c1[ARGS]{}",
    '[TOOL_CALLS]k{"c": "d"}',
    "[TOOL_CALLS]",
    "[TOOL_CALLS]f[ARGS]",
    "[ARGS]",
    '{"a": 1}',
    "[1]",
    '"s"',
    "3",
    "{",
    "}",
    "</s>",
    "[THINK]",
    "[/THINK]",
    "x",
    " ",
    "\n",
    '"[TOOL_CALLS]"',
    "[CALL_ID]",
]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(["mistral-small-3.2", "ministral-3"]),
    st.lists(st.sampled_from(_PIECES), max_size=10).map("".join),
    st.sampled_from([_ANCHOR, "", "[/INST] "]),
)
def test_the_chain_equals_the_general_loop_and_the_state_machine(name, text, prefix):
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


#: Synthetic: a JSON call read whole (`j`, kind 5) and a region of kind 6, plain JSON (`p`, decoded in the loop) or
#: text with a group that may not take part (`t`), each closed by a zero-width close of its own open's text or `<e>`.
_J = {
    "open_pattern": r"\[J\](?P<name>[a-z]+)(?:@(?P<n>[0-9]+))?\|",
    "close_pattern": r"(?=\[J\])|<e>",
    "repeats": True,
    "content": "json",
    "content_args": {"trailing": "stream", "empty": {}},
    "transform": {"name": "{name}", "n": "{n}", "args": "{content}"},
}
_P = {
    "open_pattern": r"\[P\](?P<tag>[a-z]*):",
    "close_pattern": r"(?=\[P\])|<e>",
    "repeats": True,
    "content": "json",
    "transform": {"type": "function", "function": {"name": "{tag}", "arguments": "{content}"}},
}
_T = {
    "open_pattern": r"\[T\](?P<tag>[a-z]*)(?::(?P<x>[0-9]))?:",
    "close_pattern": r"(?=\[T\])|<e>",
    "repeats": True,
    "transform": {"tag": "{tag}", "body": "{content}"},
}
_SYNTHETIC = {
    "p": {"start_anchor": "<s>", "fields": {"j": _J, "p": _P, "content": {"close": "<e>"}}},
    "t": {"start_anchor": "<s>", "fields": {"j": _J, "t": _T, "content": {"close": "<e>"}}},
}

_SYNTHETIC_PIECES = [
    "[J]f|",
    "[J]g@12|",
    '{"a": 1}',
    "[1, 2]",
    '"s"',
    "3",
    "{",
    "}",
    "[P]x:",
    "[P]:",
    "[T]y:",
    "[T]y:4:",
    "[T]:",
    "<e>",
    "x",
    " ",
    "\n",
    "[J]",
    "[P]",
    "[T]",
]


@pytest.mark.parametrize("kind, decoded", [("p", True), ("t", False)])
def test_the_synthetic_templates_are_chained(kind, decoded):
    kinds = sorted((t[0], t[8] is not None, callable(t[9])) for t in _fused(_SYNTHETIC[kind]))
    assert kinds == [(5, False, True), (6, decoded, True)]


@pytest.mark.parametrize("kind", ["p", "t"])
@pytest.mark.parametrize(
    "text",
    [
        '[J]g@1|{}[J]h@2|{"a": 1}[J]k@3|[1]<e>',
        "[J]g@1|{}[J]h|{}<e>",
        "[J]f|{}[J]g@1|{}<e>",
        '[J]g@1|{}[J]h@2|{"a"<e>',
        '[P]x:{}[P]y:[1][P]:"s"<e>',
        "[P]x:{}[P]y: [1] [P]:3<e>",
        "[P]x:{}[P]y:[1] z[P]:{}",
        "[P]x:{}[P]y:{<e>",
        "[T]y:a[T]y:4:b[T]:c<e>",
        "[T]y:4:a[T]y:b[T]<e>",
        "[T]y:4:a[T]y:4:b",
        "[J]g@1|{}[T]y:4:a[T]y:b[J]h@2|{}<e>",
    ],
)
def test_synthetic_chains_equal_the_general_loop(kind, text):
    for prefix in ("", "<s>"):
        assert_fast_loop_agrees(_SYNTHETIC[kind], text, prefix)


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(["p", "t"]),
    st.lists(st.sampled_from(_SYNTHETIC_PIECES), max_size=12).map("".join),
    st.sampled_from(["", "<s>", "<s>x"]),
)
def test_the_synthetic_chain_equals_the_general_loop_and_the_state_machine(kind, text, prefix):
    assert_fast_loop_agrees(_SYNTHETIC[kind], text, prefix)


def test_the_corpus_equals_the_general_loop():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import _corpus

    for name in ("mistral-small-3.2", "ministral-3"):
        plan = oneshot_plan(TEMPLATES[name])
        for case in _corpus.short_cases(name, 80):
            got = plan._fast_run(case.text, case.prefix, None)
            assert got is not None and got == plan._general(case.text, case.prefix, None), case.text
