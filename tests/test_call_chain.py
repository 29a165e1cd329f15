"""The one-shot loop's XML-like tool calls read one after another across whitespace (`call_chain.py`, issue 19):
Qwen3.5's, Seed-OSS's, GLM's, MiniMax M2's and DeepSeek V3.2 / V4's calls, each found where the last close ends
after whitespace (`[ \\t\\n\\r]`; `str.startswith`, the open's regex, `str.find` of the close). Anything else (text
or other whitespace between calls, no close, a regex that does not match, an open too long) is the loop's usual
path or the plain region. The messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import call_chain as chain_module
from hf_response_templates import load_template, parse_response
from hf_response_templates.plan import OneShotPlan

#: per template: its anchor, a call of name `{n}` with one argument `{k}` = `{v}`, the wrapper's open and close
#: around the calls (or ""), the end token, and the reasoning open / close
_FORMS = {
    "qwen3.5": (
        "<|im_start|>assistant\n",
        "<tool_call>\n<function={n}>\n<parameter={k}>\n{v}\n</parameter>\n</function>\n</tool_call>",
        "",
        "",
        "<|im_end|>",
        "<think>",
        "</think>",
    ),
    "seed-oss": (
        "<seed:bos>assistant",
        "<seed:tool_call>\n<function={n}>\n<parameter={k}>{v}</parameter>\n</function>\n</seed:tool_call>",
        "",
        "",
        "<seed:eos>",
        "<seed:think>",
        "</seed:think>",
    ),
    "glm-4.7": (
        "<|assistant|>",
        "<tool_call>{n}<arg_key>{k}</arg_key><arg_value>{v}</arg_value></tool_call>",
        "",
        "",
        "<|observation|>",
        "<think>",
        "</think>",
    ),
    "glm-4.6": (
        "<|assistant|>",
        "<tool_call>{n}\n<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n</tool_call>",
        "",
        "",
        "<|user|>",
        "<think>",
        "</think>",
    ),
    "minimax-m2": (
        "]~b]ai\n",
        '<invoke name="{n}">\n<parameter name="{k}">{v}</parameter>\n</invoke>',
        "<minimax:tool_call>\n",
        "\n</minimax:tool_call>",
        "[e~[",
        "<think>",
        "</think>",
    ),
    "deepseek-v4": (
        "<｜Assistant｜>",
        '<｜DSML｜invoke name="{n}">\n<｜DSML｜parameter name="{k}" string="true">{v}'
        "</｜DSML｜parameter>\n</｜DSML｜invoke>",
        "<｜DSML｜tool_calls>\n",
        "\n</｜DSML｜tool_calls>",
        "<｜end▁of▁sentence｜>",
        "<think>",
        "</think>",
    ),
    "deepseek-v3.2": (
        "<｜Assistant｜>",
        '<｜DSML｜invoke name="{n}">\n<｜DSML｜parameter name="{k}" string="false">{v}'
        "</｜DSML｜parameter>\n</｜DSML｜invoke>",
        "<｜DSML｜function_calls>\n",
        "\n</｜DSML｜function_calls>",
        "<｜end▁of▁sentence｜>",
        "<think>",
        "</think>",
    ),
}
_FORMS["qwen3-coder"] = _FORMS["qwen3.5"]  # (the same chat format; its call close is searched: `chain_search_run`)
_NAMES = sorted(_FORMS)


def _call(name: str, n: str, k: str = "a", v: str = "1") -> str:
    return _FORMS[name][1].format(n=n, k=k, v=v)


def _calls(name: str, *calls: str, between: str = "\n", end: bool = True) -> str:
    _, _, head, tail, stop, _, _ = _FORMS[name]
    return head + between.join(calls) + tail + (stop if end else "")


def _chained(tpl) -> list:
    fast = oneshot_plan(tpl)._fast
    return (
        []
        if fast is None
        else [
            d.field
            for d, act in fast[3].items()
            if act is not None
            and act[1] == -1
            and act[2].__qualname__.startswith(("chain_run.", "chain_search_run."))
        ]
    )


def test_the_xml_calls_are_read_one_after_another():
    # (fails on the code before `call_chain`: no open of these had close kind -1)
    for name in _NAMES:
        assert _chained(TEMPLATES[name]) == ["tool_calls"], name
    # (calls section_scan reads (Kimi's), JSON calls, no calls)
    for name in ("kimi-k2", "kimi-k3", "hermes3", "mistral-small-3.2", "llama3", "gpt-oss"):
        assert _chained(TEMPLATES[name]) == [], name


@pytest.mark.parametrize("name", _NAMES)
def test_three_calls_take_one_chain_run(name, monkeypatch):
    runs = []

    def counting(real):
        def counted(*a):
            run = real(*a)
            return lambda *b: runs.append(b[1]) or run(*b)

        return counted

    monkeypatch.setattr(chain_module, "chain_run", counting(chain_module.chain_run))
    monkeypatch.setattr(chain_module, "chain_search_run", counting(chain_module.chain_search_run))
    plan = OneShotPlan(load_template(TEMPLATES[name]))  # (a plan made again, with the counting `run`)
    text = "Hi\n" + _calls(name, *(_call(name, f"f{k}", "a", str(k)) for k in range(3)), between="\n \t\r\n")
    message = plan.run(text, _FORMS[name][0], None)
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["f0", "f1", "f2"]
    assert [c["function"]["arguments"]["a"] in (str(k), k) for k, c in enumerate(message["tool_calls"])] == [
        True
    ] * 3
    assert message["content"] == "Hi"
    assert len(runs) == 1
    assert_fast_loop_agrees(TEMPLATES[name], text, _FORMS[name][0])


def _cases(name: str) -> list[str]:
    c = _call(name, "f")
    g = _call(name, "get_weather", "city", "Paris")
    h = _call(name, "h", "b", "x y\nz")
    close = c[c.rfind("</") :]
    opened = c[: c.index("f")]  # (the open's text, before the name)
    return [
        _calls(name, c, g, h),
        _calls(name, c, g, h, between=""),  # (nothing between)
        _calls(name, c, g, between=" \t\r\n\n"),  # (every skipped whitespace)
        _calls(name, c, g, between="\x0b"),  # (whitespace that is not skipped: the loop's)
        _calls(name, c, g, between="\u00a0\n"),
        _calls(name, c, g, between="\nx\n"),  # (text between calls)
        _calls(name, c, g, between="\n", end=False),
        _calls(name, c, g, end=False) + "\n",
        "Hi " + _calls(name, c, g) + " after",
        _calls(name, c, opened + "g" + "\n", end=False),  # (no close)
        _calls(name, c) + "\n" + opened,  # (an open text at the end, no match)
        _calls(name, c, opened + ">" + close),  # (no regex match there)
        _calls(name, c, _call(name, "g" * 600), h),  # (an open longer than a delimiter can be)
        _calls(name, c, _call(name, "g" * 470), h),  # (one just short of it)
        _calls(name, _call(name, "f", "a", close), g),  # (a close inside a value)
        _calls(name, c, close, g),  # (a close alone between calls)
        _calls(name, c, _FORMS[name][4], g),  # (the end token between calls)
        _FORMS[name][5] + "r" + _FORMS[name][6] + _calls(name, c, g),
        _FORMS[name][5] + "r\n" + _calls(name, c, g),  # (reasoning closed by the calls)
        _calls(name, c, _FORMS[name][5] + "r" + _FORMS[name][6], g),  # (reasoning between calls)
        _calls(name, c, "\n\n\n" * 200, g),  # (a long run of whitespace)
        c + "\n" + c[: len(c) // 2],
    ]


@pytest.mark.parametrize("name", _NAMES)
def test_the_chained_reading_equals_the_general_loop(name):
    anchor = _FORMS[name][0]
    for text in _cases(name):
        for prefix in (anchor, "", anchor + _FORMS[name][5]):
            assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


def _pieces(name: str) -> list[str]:
    anchor, call, head, tail, stop, think, unthink = _FORMS[name]
    c = _call(name, "f")
    cut = [
        c[: c.index("f")],
        c[c.index("f") + 1 :],
    ]  # (the open's text, and the rest of a call after the name)
    parts = [p for p in (head.strip(), tail.strip(), c[c.rfind("</") :]) if p]
    return [
        c,
        c,
        _call(name, "get_weather", "city", "x\ny"),
        *cut,
        *parts,
        stop,
        think,
        unthink,
        "g",
        "\n",
        "\n",
        " ",
        "\t",
        "\r",
        "\x0b",
        "x",
        "<",
        '"',
        ">",
    ]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_chained_reading_equals_the_general_loop_and_the_state_machine(data):
    name = data.draw(st.sampled_from(_NAMES))
    text = "".join(data.draw(st.lists(st.sampled_from(_pieces(name)), max_size=14)))
    prefix = data.draw(st.sampled_from([_FORMS[name][0], "", _FORMS[name][0] + _FORMS[name][5]]))
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


@st.composite
def _responses(draw) -> tuple[str, str]:
    """A response of well-formed calls, now and then with text or other whitespace between two of them."""
    name = draw(st.sampled_from(_NAMES))
    calls = [
        _call(
            name,
            draw(st.sampled_from(["f", "get_weather", "a.b"])),
            draw(st.sampled_from(["a", "city"])),
            draw(st.text(alphabet="ab \n<>/=", max_size=6)),
        )
        for _ in range(draw(st.integers(1, 4)))
    ]
    between = draw(st.sampled_from(["\n", "\n", "", " \n", "\r\n", "\n\n", "x", "\x0b", "\u2028"]))
    text = draw(st.sampled_from(["", "Hi", "Hi\n\n"])) + _calls(
        name, *calls, between=between, end=draw(st.booleans())
    )
    return name, text


@settings(max_examples=400, deadline=None)
@given(_responses())
def test_well_formed_calls_equal_the_general_loop_and_the_state_machine(case):
    name, text = case
    assert_fast_loop_agrees(TEMPLATES[name], text, _FORMS[name][0])


def _variant(name: str, content: dict | None) -> dict:
    """Template `name` with its implicit field's content options replaced (`content` None: no implicit field)."""
    import copy

    tpl = copy.deepcopy(TEMPLATES[name])
    if content is None:
        del tpl["fields"]["content"]
    else:
        tpl["fields"]["content"].update(content)
    return tpl


@pytest.mark.parametrize("name", ["qwen3.5", "minimax-m2", "glm-4.6"])
def test_whitespace_that_opens_the_implicit_field_is_not_skipped(name):
    # (an implicit field that keeps whitespace: the newline between two calls is its text, so the calls are not
    # chained; without an implicit field the whitespace is outside every region)
    keeps = _variant(name, {"content_args": {"strip": False}})
    assert _chained(keeps) == []
    c, g = _call(name, "f"), _call(name, "g")
    for tpl in (keeps, _variant(name, None)):
        for text in (
            _calls(name, c, g),
            _calls(name, c, g, between=" \n"),
            "Hi" + _calls(name, c, g, between=""),
        ):
            assert_fast_loop_agrees(tpl, text, _FORMS[name][0])
    message = oneshot_plan(load_template(keeps))._fast_run(_calls(name, c, g), _FORMS[name][0], None)
    assert len(message["tool_calls"]) == 2


def test_an_idle_text_that_starts_with_whitespace_stops_the_chaining():
    # (a content close made of newlines: the idle search would find it in the whitespace between two calls, so
    # the message ends there; calls are not chained across whitespace in such a template)
    tpl = _variant("qwen3.5", {"close": ["<|im_end|>", "\n\n\n"]})
    assert _chained(tpl) == []
    c, g = _call("qwen3.5", "f"), _call("qwen3.5", "g")
    for between in ("\n\n\n", "\n", " \n\n\n\n", ""):
        text = _calls("qwen3.5", c, g, between=between)
        assert_fast_loop_agrees(tpl, text, _FORMS["qwen3.5"][0])


_CODER = [
    "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",  # (no <tool_call> before)
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>",  # (no </tool_call> after)
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool>x</tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</foo></tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n</function> x\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>\n<function=f>\n</function></function>\n</tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>",
]


def test_qwen3_coder_calls_closed_every_way_equal_the_general_loop():
    # (the close's texts, with and without the regex matching where they are found: `LeadSearch.end` then)
    name = "qwen3-coder"
    for a in _CODER:
        for b in _CODER:
            for between in ("\n", "", " x "):
                text = "Hi\n" + a + between + b + "<|im_end|>"
                for prefix in (_FORMS[name][0], ""):
                    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*_CODER, *_pieces("qwen3-coder"), "</function>", "<function=", "</tool_call>"]),
        max_size=10,
    )
)
def test_qwen3_coder_pieces_equal_the_general_loop_and_the_state_machine(parts):
    assert_fast_loop_agrees(TEMPLATES["qwen3-coder"], "".join(parts), _FORMS["qwen3-coder"][0])


def test_a_timed_close_search_in_a_chain_sends_the_response_to_the_state_machine(monkeypatch):
    # (`LeadSearch.end` raising `DelimiterTimeout` in `chain_search_run`: the plan answers None, as for its own
    # close kind 3, and `parse_response` gives the state machine's message)
    from hf_response_templates.delimiters import DelimiterTimeout
    from hf_response_templates.lead_scan import LeadSearch

    name = "qwen3-coder"
    text = "Hi\n" + _CODER[2] + "<|im_end|>"  # (`</function>` where the close's regex does not match)
    want = parse_response(text, TEMPLATES[name], prefix=_FORMS[name][0], strict=False)

    def timed(self, *a):
        raise DelimiterTimeout(self.tries[0][0][0], "")

    plan = OneShotPlan(load_template(TEMPLATES[name]))
    monkeypatch.setattr(LeadSearch, "end", timed)
    assert plan._fast_run(text, _FORMS[name][0], None) is None
    assert plan._general(text, _FORMS[name][0], None) is None
    monkeypatch.undo()
    assert parse_response(text, TEMPLATES[name], prefix=_FORMS[name][0], strict=False) == want


def test_a_close_with_captures_gives_them_to_its_call():
    # (a close regex with a named group: `LeadSearch.end` reads it, and its captures join the open's)
    tpl = _variant("qwen3-coder", {})
    f = tpl["fields"]["tool_calls"]
    f["close_pattern"] = "</function>(?P<sep>\\s*)</tool_call>|</tool_call>"
    f["transform"] = {
        "type": "function",
        "function": {"name": "{name}", "arguments": "{content}"},
        "sep": "{sep}",
    }
    assert _chained(tpl) == ["tool_calls"]
    c = _call("qwen3-coder", "f")
    text = "Hi\n" + c + "\n" + c.replace("\n</tool_call>", "  </tool_call>") + "\n" + c + "<|im_end|>"
    message = oneshot_plan(load_template(tpl))._fast_run(text, _FORMS["qwen3-coder"][0], None)
    assert [call["sep"] for call in message["tool_calls"]] == ["\n", "  ", "\n"]
    for other in (
        text,
        c + c.replace("</function>\n", "") + "\n" + c,
    ):  # (a call without the captures: no message)
        assert_fast_loop_agrees(tpl, other, _FORMS["qwen3-coder"][0])


def test_a_close_that_can_be_zero_width_is_not_chained():
    # (a zero-width close changes the loop's `zw` / `fired`, which a chain's run does not keep)
    tpl = _variant("qwen3-coder", {})
    tpl["fields"]["tool_calls"]["close_pattern"] = "</function>\\s*</tool_call>|</tool_call>|(?=<function=)"
    assert _chained(tpl) == []
    c = _call("qwen3-coder", "f")
    for text in (
        c + "\n" + c,
        c.replace("</function>\n</tool_call>", "") + c,
        c + c.replace("<tool_call>\n", ""),
    ):
        assert_fast_loop_agrees(tpl, text, _FORMS["qwen3-coder"][0])
