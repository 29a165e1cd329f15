"""Differential fuzzing against Transformers' native parser (`transformers.utils.chat_parsing`, 5.x).

On random templates and random texts (same strategies as tests/test_fuzz.py), fed in the same
chunks to both parsers, the messages and the event streams must be equal, except where the input
hits one of the documented deliberate differences (README "Differences from Transformers"; the
parser docstring; /work/notes/ENGINE_CONTRACT.md). Each such input is filtered out below, with the
reason next to the filter. Whenever native raises (a content parser failed, a required field is
missing), our parser must report an error too (`parser.errors`), instead of raising.

Any other divergence is an engine bug: see /work/notes/engine-bugs.md ("issue-7-...").
Skipped when `transformers.utils.chat_parsing` is not importable (Transformers 4.x).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, event, example, given
from strategies import Case, canon, cases, merge_chunks, without_trace

native = pytest.importorskip(
    "transformers.utils.chat_parsing",
    reason="transformers.utils.chat_parsing (the native response parser, Transformers >= 5) is not installed",
)

from hf_response_templates import ResponseParser, load_template  # noqa: E402

#: Structured content parsers whose dialect rules differ from native by design or by known bug;
#: used in a separate, narrower property below.
TEXTLIKE = ["text", "int", "float", "bool", "json", "kv-lines", "xml-inline", "python-call-list"]


def run_ours(case: Case) -> dict[str, Any]:
    parser = ResponseParser(case.template, case.prefix, trace=True)
    events: list[dict[str, Any]] = []
    for c in case.chunks:
        events += parser.feed(c)
    message, final = parser.finalize()
    return {"initial": parser.initial_events, "events": events + final, "message": message, "errors": parser.errors}


def run_native(case: Case) -> dict[str, Any]:
    parser = native.ResponseParser(case.template, case.prefix)
    events: list[dict[str, Any]] = []
    for c in case.chunks:
        events += parser.feed(c)
    message, final = parser.finalize()
    return {"initial": parser.initial_events, "events": events + final, "message": message}


def _outcome(parse: Any, body: str, args: Any) -> tuple[str, str]:
    try:
        return "ok", canon(parse(body, args))
    except Exception:
        return "raise", ""


def known_parser_divergence(case: Case, ours: dict[str, Any]) -> str | None:
    """A region whose body hits a known, reported content-parser divergence (engine-bugs.md)."""
    from hf_response_templates.content import content_parsers

    from transformers.utils.chat_parsing.content_parsers import CONTENT_PARSERS

    body: list[str] = []
    for e in ours["initial"] + ours["events"]:
        if e["type"] == "region_open":
            body = []
        elif e["type"] == "region_chunk":
            body.append(e["text"])
        elif e["type"] in ("region_close", "region_malformed"):
            spec = case.template["fields"][e["field"]]
            content, args = spec.get("content", "text"), spec.get("content_args") or {}
            # issue-7-2: python-call-list grammar is laxer than native's (bare calls, trailing commas, ...)
            # issue-7-3: json with unquoted_keys / string_delims follows different dialect rules
            if content == "python-call-list" or (content == "json" and ("unquoted_keys" in args or "string_delims" in args)):
                parser = content_parsers()[content]
                mine = _outcome(parser.parse, "".join(body), parser.compile_args(args, e["field"]))
                theirs = _outcome(CONTENT_PARSERS[content], "".join(body), args)
                if mine != theirs:
                    return "issue-7-2" if content == "python-call-list" else "issue-7-3"
    return None


def deliberate_difference(case: Case, ours: dict[str, Any]) -> str | None:
    """Why this input is outside the comparison (a documented deliberate difference), or None."""
    tpl = load_template(case.template)
    implicit = tpl.implicit_field.name if tpl.implicit_field else None
    all_events = ours["initial"] + ours["events"]
    opens: dict[str, int] = {}
    for e in all_events:
        # Text after the implicit field's close ends the message for us; native reopens the implicit
        # field (and keeps scanning for opens) and overwrites its value.
        if e["type"] == "text_dropped" and e["reason"] == "after_end":
            return "text after the implicit field's close"
        if e["type"] == "region_open":
            opens[e["field"]] = opens.get(e["field"], 0) + 1
        # bool content accepts only true/false/1/0; native maps any other text to False.
        if e["type"] == "region_malformed" and tpl.by_name[e["field"]].content == "bool":
            return "bool content that is not true/false/1/0"
    # An implicit field that reopens is not overwritten (whitespace ignored, text appended with "\n").
    if implicit is not None and opens.get(implicit, 0) > 1:
        return "implicit field reopened"
    # A non-repeating field matching twice keeps the first value and reports the second as malformed;
    # native overwrites.
    for name, n in opens.items():
        if n > 1 and name != implicit and not tpl.by_name[name].repeats:
            return "non-repeating field matched twice"
    return None


def compare(case: Case) -> None:
    ours = run_ours(case)
    reason = deliberate_difference(case, ours) or known_parser_divergence(case, ours)
    event(f"filtered: {reason}" if reason else "compared")
    assume(reason is None)
    try:
        theirs = run_native(case)
    except Exception as e:  # native raises where we report a malformed region / missing field
        event("native raised")
        assert ours["errors"], f"native raised {type(e).__name__}: {e}\nbut our parser reported no error"
        return
    # Failed regions: native raised above; we must not report errors where native parsed fine.
    assert not ours["errors"], f"we reported {ours['errors']!r} where native parsed: {theirs['message']!r}"
    assert canon(ours["message"]) == canon(theirs["message"])
    assert canon(without_trace(ours["initial"])) == canon(theirs["initial"])
    # Same chunks fed to both: the event streams are equal event by event (no merging needed).
    assert canon(without_trace(ours["events"])) == canon(theirs["events"])


# Templates: names sort in declaration order, because ties between delimiters at the same position and
# length are broken by declaration order here and by field name natively. Defaults never share a
# name with a field: native `.append`s to / joins onto the default value, we start the field fresh.
SETTINGS = dict(sorted_names=True, defaults_may_collide=False)


@example(Case({"start_anchor": "<|im_start|>assistant\n", "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>"},
    "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                   "transform": {"type": "function", "function": "{content}"}},
    "content": {"close": "<|im_end|>"}}, "defaults": {"role": "assistant"}},
    "<|im_start|>assistant\n", '<think>Hm</think>Sure.<tool_call>{"name": "f", "arguments": {}}</tool_call><|im_end|>',
    ["<think>H", "m</th", "ink>Sure.<tool", '_call>{"name": "f", "arguments": {}}</tool_call><|im_', "end|>"]))
@given(cases(**SETTINGS))
def test_same_messages_and_events_as_native(case: Case) -> None:
    compare(case)


@given(cases(allow_regex=False, **SETTINGS))
def test_same_as_native_with_literal_delimiters(case: Case) -> None:
    compare(case)


@given(cases(hostile=False, content_names=["text", "int", "float", "json"], **SETTINGS))
def test_same_as_native_on_common_parsers(case: Case) -> None:
    compare(case)
