"""Every shipped response template inverts its model's real chat template.

For each family: hypothesis builds conversations (unicode, quotes, newlines, braces and tag-like
text, empty content with tool calls, parallel tool calls, nested arguments, thinking on/off,
multi-turn histories with earlier assistant turns and tool results), the real Jinja chat template
renders them through Transformers' own renderer, the prompt rendered with
``add_generation_prompt=True`` is the prefix, the text rendered for the final assistant message is
the generation, and OUR engine must parse back exactly the original message (content, reasoning,
every tool call with arguments typed via ``tools=``).

What a chat template cannot carry is never generated; the reason is written next to each flag in
``tests/_chat_render.py`` (Family) and in templates/README.md. Text that contains the model's own
delimiters is filtered out by ``collides`` (indistinguishable from the real delimiter).
"""

from __future__ import annotations

import pytest
from _chat_render import ALL_FAMILIES, EXAMPLES, FAMILIES, TOOLS, Family, chat_template, conversations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_response_templates.library import get_template, list_templates
from hf_response_templates.verify import sample_conversations, sample_tools, verify_round_trip

ROUND_TRIP = sorted(FAMILIES)
#: (shipped template, chat template) pairs: each family's own fixture plus EXTRA_FIXTURES
MATRIX = sorted(ALL_FAMILIES, key=lambda f: (f.name, f.fixture))
MATRIX_IDS = [f"{f.name}[{f.fixture.removesuffix('.jinja')}]" for f in MATRIX]


def test_every_shipped_template_is_proven_here():
    # a template may only ship when this module proves it against its real chat template
    assert sorted(list_templates()) == ROUND_TRIP


def _check(name: str | Family, messages: list[dict], kwargs: dict) -> None:
    family = name if isinstance(name, Family) else FAMILIES[name]
    name = family.name
    [result] = verify_round_trip(
        chat_template(family.fixture),
        get_template(name),
        {"case": messages},
        tools=family.tools_for(TOOLS),
        special_tokens=family.special_tokens,
        **kwargs,
    )
    assert result.passed, (
        f"{result.detail}\nkwargs={kwargs}\nprefix tail={result.prefix[-200:]!r}\n"
        f"generation={result.generation!r}\nexpected={result.expected!r}\ngot={result.got!r}"
    )


@pytest.mark.parametrize("family", MATRIX, ids=MATRIX_IDS)
def test_round_trip_hypothesis(family: Family) -> None:
    template = get_template(family.name)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        database=None,
    )
    @given(conv=conversations(family, template))
    def run(conv: tuple[list[dict], dict]) -> None:
        messages, kwargs = conv
        _check(family, messages, kwargs)

    run()


@pytest.mark.parametrize("family", MATRIX, ids=MATRIX_IDS)
def test_round_trip_sample_conversations(family: Family) -> None:
    """verify.sample_conversations() (what the CLI will run) passes for the cases the chat template can carry."""
    template = get_template(family.name)
    cases = sample_conversations(template, max_tool_calls=family.max_tool_calls)
    thinking = None
    if family.thinking_kwarg:
        if True in family.thinking_values and (
            False in family.final_after_tool_results or False not in family.thinking_values
        ):
            thinking = True  # Gemma 4: the default (off) prompt is continued only after tool results
        elif False in family.thinking_values and True not in family.thinking_values:
            thinking = False
    for case_name, messages in list(cases.items()):
        final = messages[-1]
        drop = (
            (not family.tool_calls and "tool_calls" in final)
            # reasoning the chat template does not render (see Family.reasoning_key)
            or (family.reasoning_key is None and any(k in final for k in ("reasoning_content", "thinking")))
            or (
                family.reasoning_only_with_tool_calls
                and family.reasoning_key in final
                and "tool_calls" not in final
            )
            or (not family.tool_history and any(m["role"] == "tool" for m in messages))
            or (family.arguments_as_json_text and "tool_calls" in final)  # covered by the hypothesis test
            # Mistral needs 9-character call ids, which the hypothesis test generates
            or (family.name == "mistral-small-3.2" and any("tool_calls" in m for m in messages))
            or (family.call_ids_required and any("tool_calls" in m for m in messages))
            or (family.final_tool_calls_only and "tool_calls" not in final)
            # arguments the chat template cannot print readably (see Family.arguments_ok)
            or (
                family.arguments_ok is not None
                and not all(family.arguments_ok(c["function"]["arguments"]) for c in final.get("tool_calls", []))
            )
            or (family.name == "deepseek-v3.1" and any("tool_calls" in m for m in messages))
            # objects/arrays rendered with Python's str() (Seed-OSS): scalar arguments only
            or (
                family.scalar_arguments
                and any(
                    isinstance(v, (dict, list))
                    for c in final.get("tool_calls") or []
                    for v in (c["function"]["arguments"] or {}).values()
                )
            )
            # the chat template renders the call id as the call header (Kimi K2 Thinking): native ids,
            # which the hypothesis test generates
            or (family.call_id_format is not None and any("tool_calls" in m for m in messages))
            # the chat template's generation prompt is continued only right after tool results
            or (thinking in family.final_after_tool_results and messages[-2]["role"] != "tool")
            # the chat template renders a turn without reasoning differently from its thinking prompt
            or (family.reasoning_required and not any(k in final for k in ("reasoning_content", "thinking")))
        )
        if drop:
            del cases[case_name]
    assert cases
    if family.system_prompt is not None:
        cases = {k: [{"role": "system", "content": family.system_prompt}, *v] for k, v in cases.items()}
    kwargs = {} if thinking is None else {family.thinking_kwarg: thinking}
    results = verify_round_trip(
        chat_template(family.fixture),
        template,
        cases,
        tools=family.tools_for(sample_tools()),
        special_tokens=family.special_tokens,
        **kwargs,
    )
    failures = [f"{r.name}: {r.detail}" for r in results if not r.passed]
    assert not failures, failures


@pytest.mark.parametrize("name", ["qwen3", "gpt-oss", "glm-4.6"])
@settings(max_examples=10, deadline=None, database=None)
@given(reasoning=st.sampled_from(["Step 1.\nStep 2.", "a {b} <c>", "東京"]))
def test_earlier_reasoning_never_leaks(name: str, reasoning: str) -> None:
    """The prefix holds an earlier assistant turn with reasoning and tool calls: none of it may appear."""
    family = FAMILIES[name]
    call = {
        "type": "function",
        "id": "call00001",
        "function": {"name": "get_weather", "arguments": {"city": "X"}},
    }
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "", family.reasoning_key: reasoning, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "{}"},
        {"role": "assistant", "content": "Done.", family.reasoning_key: reasoning},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "It is warm."},
    ]
    _check(name, messages, {})


def test_verify_detects_a_wrong_template() -> None:
    """The check is not vacuous: the XML template cannot parse Qwen3's JSON tool calls."""
    results = verify_round_trip(chat_template("Qwen-Qwen3-0.6B.jinja"), get_template("qwen3-coder"))
    failed = {r.name for r in results if not r.passed}
    assert "tool_call" in failed and "parallel_tool_calls" in failed
    assert all(r.detail for r in results if not r.passed)


def test_verify_reports_templates_that_rewrite_the_turn() -> None:
    """DeepSeek-R1 prompts with "<think>" but renders history without reasoning: reported, not guessed."""
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    [result] = verify_round_trip(
        chat_template("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"),
        get_template("deepseek-v3.1"),
        [messages],
    )
    assert not result.passed and "renders this assistant turn differently" in result.detail


def test_verify_defaults_pass_for_qwen3() -> None:
    results = verify_round_trip(chat_template("Qwen-Qwen3-0.6B.jinja"), get_template("qwen3"))
    assert results and all(r.passed for r in results), [r.detail for r in results if not r.passed]
