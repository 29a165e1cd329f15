"""The one-shot two-state loop's regions whose JSON value the scan decoded already (a `"trailing": "stream"`
field read to its value's end, issue 19): stored with the field's info made once per template (`_fast_shape`'s
`dinfo`, the field's `reshape` of the decoded value), not a new info tuple and `functools.partial` per region
(`plan._decoded`, left for a value decoded before its close delimiter only). Same messages as the general loop
and the state machine (`test_oneshot_fast_loop.py`'s value-end shapes, and these)."""

from __future__ import annotations

import pytest
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates import plan as plan_module
from hf_response_templates.plan import plan_for

_CALL = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]f{"a": [1, 2]}</s>'


def test_a_decoded_value_makes_no_info_per_region(monkeypatch):
    # (fails on the code before `dinfo`: `_decoded` ran once per tool call)
    calls = []
    real = plan_module._decoded
    monkeypatch.setattr(plan_module, "_decoded", lambda *a: calls.append(a) or real(*a))
    got = parse_response("Hi" + _CALL, TEMPLATES["mistral-small-3.2"], prefix="")
    assert got["tool_calls"][0]["function"]["name"] == "get_weather" and len(got["tool_calls"]) == 2
    assert calls == []


#: A repeating value-end field whose open has a named group that its transform reads with the decoded value.
_U = {"start_anchor": "<s>", "fields": {
    "u": {"open_pattern": r"<u(?P<k>\d)>", "close": "</u>", "content": "json", "content_args": {"trailing": "stream"},
          "transform": {"v": "{content}", "k": "{k}"}, "repeats": True},
    "content": {"close": "<e>"},
}}


@pytest.mark.parametrize("text", ['<u1>{"a": 1}</u><u2> [1] x</u>', "<u3>1</u><u4>", '<u5>"s" </u>y<e>', "<u6>{"])
def test_decoded_values_keep_their_captures(text):
    plan = plan_for(load_template(_U))
    assert plan._fast is not None
    got = plan._fast_run(text, "", None)
    assert got == plan._general(text, "", None)
    parser = ResponseParser(_U, "")
    parser.feed(text)
    streamed, _ = parser.finalize()
    assert parse_response(text, _U, prefix="", strict=False) == streamed
    if got is not None:
        assert got == streamed


def test_a_decoded_value_and_its_captures():
    got = parse_response('<u1>{"a": 1}</u><u2> [1] x</u>', _U, prefix="")
    assert got == {"u": [{"v": {"a": 1}, "k": "1"}, {"v": [1], "k": "2"}], "content": "</u>\nx</u>"}


def _old_reshape(apply, value, captures):
    """A transformed field's `reshape` before it had a `decoded` twin: the transform of `{**captures,
    "content": value}`."""
    return apply({**captures, "content": value} if captures else {"content": value})


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_transformed_fields_parse_reshape_and_decoded_are_one_transform(name):
    """Every transformed field (not `transform_each`) reshapes in one call, `reshape.decoded(body, (value,
    captures))` (the plan's `dinfo` parse) too: each gives what `reshape` gave, errors (a missing capture) alike."""
    from hf_response_templates.transform import compile_transform

    tpl = load_template(TEMPLATES[name])
    for f in tpl.fields:
        raw = TEMPLATES[name]["fields"][f.name]
        if "transform" not in raw or raw.get("transform_each"):
            assert not hasattr(f.reshape, "decoded")
            continue
        apply = compile_transform(raw["transform"], field=f.name)
        for value in ({"city": "Paris"}, [1, 2], "s", None, {}):
            for caps in (None, {}, {"name": "f"}, {"name": "g", "content": "x"}, {"other": "y"}):
                try:
                    want = _old_reshape(apply, value, caps)
                except Exception as exc:  # noqa: BLE001 - compared
                    want = type(exc)
                for fn, args in ((f.reshape, (value, caps)), (f.reshape.decoded, ("", (value, caps)))):
                    try:
                        got = fn(*args)
                    except Exception as exc:  # noqa: BLE001 - compared
                        got = type(exc)
                    assert got == want, (name, f.name, value, caps)
