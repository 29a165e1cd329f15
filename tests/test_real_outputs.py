"""The shipped templates on real model outputs (``tests/fixtures/real_outputs/``, rules in its README).

Every record is parsed one-shot and streamed in token-sized chunks (and, by a property test, in random
chunkings), with the family's shipped template. A record must give its expected message, unless it is
in `KNOWN`, the documented list of records we do not match, each with its kind and reason:

* ``policy``: the peer's expectation is a policy we reject; `Known.ours` is what we give instead, and
  the test asserts exactly that (so the difference stays deliberate and visible);
* ``engine``: matching it needs a feature the template language lacks (named in the reason);
* ``scope``: the output is another model's format than the family's template inverts (none today:
  such records are filed under the family whose template does invert it).

Entries of every kind are asserted to still differ from the peer's expectation, so the list cannot go
stale: a fix that makes one pass fails here until its entry is removed. Non-whitespace text that ends
up in no field (see `_real_outputs.unclaimed_text`) must be listed in `UNCLAIMED`.

Run ``pytest tests/test_real_outputs.py -s -k table`` (or ``scripts/real_output_report.py``) for the
per-family table.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from _real_outputs import (
    DEFAULT_PREFIX,
    load_corpus,
    normalise_expected,
    normalise_message,
    parse_one_shot,
    parse_streamed,
    run,
    table,
    token_chunks,
    unclaimed_text,
)
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates.library import list_templates

RECORDS = load_corpus()
BY_ID = {r.id: r for r in RECORDS}


@dataclass(frozen=True)
class Known:
    """A record we do not match, and why (see the module docstring for the kinds)."""

    kind: str
    reason: str
    #: for ``policy``: our message, in the record's ``expected`` form, plus ``unparsed``: the fields
    #: (``None`` for text outside every region) whose raw text is kept in ``message["unparsed"]``
    ours: dict[str, Any] = field(default_factory=dict)
    #: for ``policy``: the parse policy (`hf_response_templates.ParsePolicy` keys) that gives the peer's
    #: message, when one does; the test asserts that it does
    peer_policy: dict[str, str] | None = None


_BAD_CALL = (
    "a tool call whose body is not valid is reported in `unparsed` with the error (and raised by strict "
    "parsing), not passed off as prose: the user sees a failed call, not a message that quotes one. policy "
    "malformed_tool_calls='content' gives vLLM's message (the raw text, delimiters included, as content)"
)
_AS_CONTENT = {"malformed_tool_calls": "content"}
_MID_TEXT = (
    "a Llama 3 tool call is the whole turn, recognised only at the start of the generation; a JSON object "
    "after prose is content (searching anywhere turns quoted JSON into calls and deletes the prose around it)"
)
_TEXT_AFTER_CALL = (
    "text after a complete tool call is kept as content (the `json` body ends where its value ends, "
    "`\"trailing\": \"stream\"`, and the rest goes back to the stream); vLLM drops it (gh#48975): nothing the "
    "model wrote is lost. policy text_after_tool_calls='unparsed' gives vLLM's message (the text in `unparsed`)"
)

KNOWN: dict[str, Known] = {
    # ---------------------------------------------------------------- policies we reject
    "qwen3/test_hermes_parser_non_streaming_tool_call_invalid_json": Known(
        "policy", _BAD_CALL, {"unparsed": ["tool_calls"]}, peer_policy=_AS_CONTENT),
    "hermes3/test_hermes_parser_non_streaming_tool_call_invalid_json": Known(
        "policy", _BAD_CALL, {"unparsed": ["tool_calls"]}, peer_policy=_AS_CONTENT),
    "llama3/test_extract_tool_calls_invalid_json": Known(
        "policy", _BAD_CALL, {"unparsed": ["tool_calls"]}, peer_policy=_AS_CONTENT),
    "llama3/test_extract_tool_calls_missing_parameters_and_arguments_key": Known(
        "policy", "a call with neither `parameters` nor `arguments` cannot become a tool call (the transform names the missing keys); "
        + _BAD_CALL, {"unparsed": ["tool_calls"]}, peer_policy=_AS_CONTENT),
    "gemma4/TestExtractToolCalls/test_incomplete_tool_call": Known(
        "policy", "a call cut off mid-arguments (max_tokens) is a failed call, not a call with the arguments written so "
        "far (vLLM's Gemma 4 parser closes the truncated value and makes the call; no policy gives that): " + _BAD_CALL,
        {"unparsed": ["tool_calls"]}),
    "kimi-k2/TestStreamingEdgeCases/test_truncated_tool_call_no_end_marker": Known(
        "policy", "truncated arguments are not returned as if they were a call's arguments (vLLM returns the "
        "truncated text as the call's arguments; no policy gives that): " + _BAD_CALL,
        {"content": "I'll check.", "unparsed": ["tool_calls"]}),
    "qwen3/TestNonStreaming/test_duplicate_think_end_absorbed": Known(
        "policy", "a second `</think>` after reasoning ended is text the model wrote in its answer; nothing is deleted",
        {"reasoning": "Reasoning here.", "content": "Content here.</think>More content."}),
    "deepseek-v3.1/test_extract_tool_calls_with_multiple_tools": Known(
        "policy", "text after `<｜tool▁calls▁end｜>` is kept as content (vLLM's DeepSeek-V3 parser keeps it too, "
        "its V3.1 parser drops it); nothing the model wrote is lost. policy text_after_tool_calls='unparsed' gives "
        "vLLM's V3.1 message (the text in `unparsed`)",
        {"content": "some prefix text\nsome suffix text",
         "tool_calls": [{"name": "foo", "arguments": {"x": 1}}, {"name": "bar", "arguments": {"y": 2}}]},
        peer_policy={"text_after_tool_calls": "unparsed"}),
    "llama3/test_extract_tool_calls_simple": Known(
        "policy", _MID_TEXT, {"content": 'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} '
                                         "Would you like to know more?"}),
    "llama3/test_extract_tool_calls_multiple_json_with_surrounding_text": Known(
        "policy", _MID_TEXT, {"content": BY_ID["llama3/test_extract_tool_calls_multiple_json_with_surrounding_text"].output}),
    "mistral-small-3.2/test_malformed_matrix[malformed_single]": Known(
        "policy", "`[TOOL_CALLS]` directly followed by `{` names no function; a call without a name is not made up, "
        "the text stays content", {"content": 'bash[TOOL_CALLS]{"command": "cat file.py"}'}),
    "qwen3-coder/test_none_tool_calls_filtered": Known(
        "policy", "a `<function=NAME` header without `>` is no call; its text stays content instead of being dropped",
        {"content": "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>",
         "tool_calls": [{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"}}]}),
    "gpt-oss/TestParse/test_malformed_msgs_recovers_raw_content": Known(
        "policy", "a header without `<|message|>` opens no channel; its text is not mixed into the answer: it is "
        "outside every region (reported in `unparsed` with `field: None` by the engine's no-silent-loss rule)",
        {"reasoning": "thinking", "content": "thinking"}),
    **{
        f"mistral-small-3.2/test_extract_tool_calls[{case}]": Known(
            "policy", _TEXT_AFTER_CALL,
            {"content": "Estimating the weather...",
             "tool_calls": [{"name": "get_current_weather", "arguments": {"city": "San Francisco"}}]},
            peer_policy={"text_after_tool_calls": "unparsed"})
        for case in ("trailing_text_after_json", "trailing_text_after_args_json")
    },
    "gemma4/TestBareThoughtWithoutChannelOpener/test_bare_thought_reasoning_then_tool_call": Known(
        "policy", "a bare `thought` line with no channel opened (by the model or the prompt) is content: only the "
        "later `<channel|>` would say it was reasoning, and text is not taken back from content once streamed (a "
        "Gemma 4 model that writes the label with thinking off, then its answer, would lose the answer to "
        "reasoning); the stray `<channel|>` itself is removed",
        {"content": "thought\n" + BY_ID["gemma4/TestBareThoughtWithoutChannelOpener/test_bare_thought_reasoning_then_tool_call"]
         .expected["reasoning"], "tool_calls": [{"name": "get_current_weather", "arguments": {"city": "Dallas"}}]}),
}

#: Non-whitespace text a record leaves in no field, by record id (compared without whitespace).
UNCLAIMED: dict[str, str] = {
    # a stray <|return|> between two harmony messages is no channel
    "gpt-oss/TestProcessChunk/test_malformed_token_does_not_raise": "<|return|>",
    "gpt-oss/TestParse/test_malformed_msgs_recovers_raw_content": '<|start|>assistant<|channel|>final {"answer": "hi"}<|return|>',
}

IDS = [r.id for r in RECORDS]


def _squeeze(text: str) -> str:
    return "".join(text.split())


def test_corpus_covers_every_shipped_family_with_attributed_records() -> None:
    assert len(RECORDS) >= 200
    assert set(DEFAULT_PREFIX) == {r.family for r in RECORDS}
    assert set(DEFAULT_PREFIX) <= set(list_templates())
    for record in RECORDS:
        assert record.id.startswith(record.family + "/"), record.id
        assert {"project", "file", "test"} <= set(record.source), record.id
        assert set(record.expected) <= {"content", "reasoning", "tool_calls"}, record.id
    assert set(KNOWN) <= set(BY_ID), set(KNOWN) - set(BY_ID)
    assert set(UNCLAIMED) <= set(BY_ID), set(UNCLAIMED) - set(BY_ID)
    assert {k.kind for k in KNOWN.values()} <= {"policy", "engine", "scope"}


@pytest.mark.parametrize("record_id", IDS)
def test_record_one_shot(record_id: str) -> None:
    record = BY_ID[record_id]
    message = parse_one_shot(record)
    got = normalise_message(record.family, message)
    expected = normalise_expected(record)
    known = KNOWN.get(record_id)
    if known is None:
        assert got == expected, f"{record_id}: {message}"
        return
    assert got != expected, f"{record_id} now matches the peer's expectation: remove it from KNOWN"
    if known.kind == "policy":
        ours = dict(known.ours)
        unparsed = ours.pop("unparsed", [])
        ours_record = type(record)(**{**record.__dict__, "expected": ours})
        assert got == normalise_expected(ours_record), f"{record_id}: {message}"
        assert sorted(map(str, (u["field"] for u in message.get("unparsed") or [] if u["field"] is not None))) == sorted(
            map(str, (f for f in unparsed if f is not None)))


@pytest.mark.parametrize("record_id", sorted(k for k, v in KNOWN.items() if v.peer_policy))
def test_known_policy_entries_match_the_peer_with_the_non_default_policy(record_id: str) -> None:
    record = BY_ID[record_id]
    policy = KNOWN[record_id].peer_policy
    message = parse_one_shot(record, policy=policy)
    assert normalise_message(record.family, message) == normalise_expected(record), message
    if "unparsed" in policy.values():
        assert any(u["field"] is not None for u in message["unparsed"])  # what the peer drops is kept there
    else:  # malformed_tool_calls='content': the call's raw text, as the model wrote it, is content
        assert "unparsed" not in message
        assert _squeeze(message["content"]) == _squeeze(record.output)
    streamed, _ = parse_streamed(record, token_chunks(record.output), policy=policy)
    assert streamed == message


@pytest.mark.parametrize("record_id", IDS)
def test_record_streamed_in_token_chunks_equals_one_shot(record_id: str) -> None:
    outcome = run(BY_ID[record_id])
    assert outcome.streamed == outcome.message
    assert _squeeze("".join(outcome.unclaimed)) == _squeeze(UNCLAIMED.get(record_id, "")), outcome.unclaimed


@given(data=st.data())
def test_streaming_equals_one_shot_for_random_chunkings(data: st.DataObject) -> None:
    record = data.draw(st.sampled_from(RECORDS), label="record")
    text = record.output
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12), label="cuts")))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    streamed, events = parse_streamed(record, chunks)
    assert streamed == parse_one_shot(record), record.id
    assert _squeeze("".join(unclaimed_text(streamed, events))) == _squeeze(UNCLAIMED.get(record.id, ""))


def peer_policy_passes(record_id: str) -> bool:
    """Whether the record's `KNOWN` entry has a `peer_policy` that gives the peer's message (parsed here)."""
    known = KNOWN.get(record_id)
    if known is None or not known.peer_policy:
        return False
    record = BY_ID[record_id]
    return normalise_message(record.family, parse_one_shot(record, policy=known.peer_policy)) == normalise_expected(record)


def family_table() -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Per family: records, in scope, passing one-shot and streamed, deliberate differences, open failures,
    and passing with the peer's policy (by default, or by the `peer_policy` of the record's `KNOWN` entry)."""
    rows: dict[str, dict[str, Any]] = {}
    for record in RECORDS:
        outcome = run(record)
        row = rows.setdefault(record.family, Counter())
        kind = KNOWN[record.id].kind if record.id in KNOWN else None
        row["records"] += 1
        row["in scope"] += kind != "scope"
        row["pass one-shot"] += outcome.passed
        row["pass streamed"] += outcome.passed_streamed
        row["peer policy"] += outcome.passed or peer_policy_passes(record.id)
        row["deliberate"] += kind == "policy"
        row["engine"] += kind == "engine"
    for row in rows.values():
        row["pass rate (in scope)"] = f"{row['pass one-shot'] / row['in scope']:.0%}"
        row["pass or deliberate"] = f"{(row['pass one-shot'] + row['deliberate']) / row['in scope']:.0%}"
        row["pass with the peer's policy"] = f"{row['peer policy']} ({row['peer policy'] / row['in scope']:.0%})"
    columns = ["records", "in scope", "pass one-shot", "pass streamed", "deliberate", "engine",
               "pass rate (in scope)", "pass or deliberate", "pass with the peer's policy"]
    return dict(sorted(rows.items())), columns


def test_per_family_table() -> None:
    rows, columns = family_table()
    print("\n" + table(rows, columns))
    for family, row in rows.items():
        assert row["pass one-shot"] == row["pass streamed"], family
        assert row["pass one-shot"] + row["deliberate"] + row["engine"] + (row["records"] - row["in scope"]) == row[
            "records"], family
        assert row["pass one-shot"] <= row["peer policy"] <= row["pass one-shot"] + row["deliberate"], family
    with_policy = sum(row["peer policy"] - row["pass one-shot"] for row in rows.values())
    assert with_policy == sum(1 for v in KNOWN.values() if v.peer_policy)  # every peer_policy entry counted
