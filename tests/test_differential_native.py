"""Differential fuzzing against Transformers' native parser (`transformers.utils.chat_parsing`, 5.x).

On random templates and random texts (same strategies as tests/test_fuzz.py), fed in the same
chunks to both parsers, the messages and the event streams must be equal, except where the input
hits one of the documented deliberate differences (README "Deliberate differences from Transformers'
native parser"; the parser docstring). Each such input is filtered out below, with the
reason next to the filter. Whenever native raises (a content parser failed, a required field is
missing), our parser must report an error too (`parser.errors`), instead of raising.

Any other divergence is an engine bug.
Skipped when `transformers.utils.chat_parsing` is not importable (Transformers 4.x).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _native_typing import NATIVE_KEEPS_JSON_STRINGS, native_argument
from hypothesis import assume, event, example, given
from hypothesis import strategies as st
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
    # Text outside every region (a template without an implicit field) is kept in `unparsed` with field None
    # and reported by `text_unclaimed` events (README, deliberate differences); native drops it. Compared
    # without those records; `strict=True` does not raise for them, so neither are they errors here.
    kept = [r for r in message.get("unparsed", []) if r["field"] is not None]
    if "unparsed" in message:
        message = {k: v for k, v in message.items() if k != "unparsed"} | ({"unparsed": kept} if kept else {})
    events = [e for e in events + final if e["type"] != "text_unclaimed"]
    return {"initial": [e for e in parser.initial_events if e["type"] != "text_unclaimed"], "events": events,
            "message": message, "errors": parser.strict_errors}


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
    """A region whose body hits a documented content-parser divergence (README table), or None."""
    from transformers.utils.chat_parsing.content_parsers import CONTENT_PARSERS

    from hf_response_templates.content import content_parsers

    body: list[str] = []
    for e in ours["initial"] + ours["events"]:
        if e["type"] == "region_open":
            body = []
        elif e["type"] == "region_chunk":
            body.append(e["text"])
        elif e["type"] in ("region_close", "region_malformed"):
            spec = case.template["fields"][e["field"]]
            content, args = spec.get("content", "text"), spec.get("content_args") or {}
            # json `string_delims`: native rewrites the delimiters inside standard strings too (and rejects
            # its \x01/\x02 sentinels); we read them only where a string starts (a deliberate difference,
            # in the README table). python-call-list and unquoted_keys follow native and are compared.
            if content == "json" and "string_delims" in args:
                parser = content_parsers()[content]
                mine = _outcome(parser.parse, "".join(body), parser.compile_args(args, e["field"]))
                theirs = _outcome(CONTENT_PARSERS[content], "".join(body), args)
                if mine != theirs:
                    return "json string_delims (deliberate difference)"
    return None


def _has_overlong_delimiter(case: Case) -> bool:
    """Whether a regex delimiter matches more than `MAX_DELIMITER_LENGTH` characters somewhere in the stream."""
    from hf_response_templates.delimiters import MAX_DELIMITER_LENGTH

    tpl = load_template(case.template)
    stream = tpl.cut_prefix(case.prefix) + case.text
    for f in tpl.fields:
        for d in (f.open, f.close):
            if d is not None and d.literals is None:
                for m in d.pattern.finditer(stream, overlapped=True):
                    if m.end() - m.start() > MAX_DELIMITER_LENGTH:
                        return True
    return False


def deliberate_difference(case: Case, ours: dict[str, Any]) -> str | None:
    """Why this input is outside the comparison (a documented deliberate difference), or None."""
    # A regex match longer than MAX_DELIMITER_LENGTH is not a delimiter here (so that a delimiter that
    # never completes cannot hold the stream back); native takes it.
    if _has_overlong_delimiter(case):
        return "delimiter match longer than MAX_DELIMITER_LENGTH"
    tpl = load_template(case.template)
    implicit = tpl.implicit_field.name if tpl.implicit_field else None
    all_events = ours["initial"] + ours["events"]
    opens: dict[str, int] = {}
    for e in all_events:
        # Text after the implicit field's close ends the message for us; native reopens the implicit
        # field (and keeps scanning for opens) and overwrites its value.
        if e["type"] == "text_dropped" and e["reason"] == "after_end":
            return "text after the implicit field's close"
        # Whitespace alone between two regions does not open the implicit field here; native opens it and
        # closes it with value "" (streaming consumers would see content "").
        if e["type"] == "text_dropped" and e["reason"] == "whitespace":
            return "whitespace-only implicit region"
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


#: Keys our events carry beyond native's (ENGINE_CONTRACT "Update 2"): captures of the open delimiter on
#: region_open, at_end on what finalize() closes, position on region_malformed.
EXTRA_KEYS = ("captures", "at_end", "position")


def native_shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our events without trace events and without the keys native does not have, chunks merged."""
    out = [{k: v for k, v in e.items() if k not in EXTRA_KEYS} for e in without_trace(events)]
    return merge_chunks(out)


def _try_native(case: Case) -> dict[str, Any] | Exception:
    try:
        return run_native(case)
    except Exception as e:  # native raises where we report a malformed region / missing field
        return e


def _native_key(result: dict[str, Any] | Exception) -> str:
    if isinstance(result, Exception):
        return "raised"
    return canon([result["message"], merge_chunks(result["initial"] + result["events"])])


def compare(case: Case) -> None:
    ours = run_ours(case)
    reason = deliberate_difference(case, ours) or known_parser_divergence(case, ours)
    event(f"filtered: {reason}" if reason else "compared")
    assume(reason is None)
    theirs = _try_native(case)
    exact = True
    if len(case.chunks) > 1:
        one_shot = _try_native(Case(case.template, case.prefix, case.text, [case.text]))
        if _native_key(one_shot) != _native_key(theirs):
            # Native is not chunking-invariant on this input (e.g. open literals ["[", "<[<"] on "<[<0" fed one
            # character at a time: native commits "[" and fails on "<0"; or ["<a>", "<", "<<<"]: it commits
            # "<"). Its one-shot result is the reference: ours is chunking-invariant (tests/test_fuzz.py).
            event("native streaming differs from native one-shot: compared with one-shot")
            theirs, exact = one_shot, False
    if isinstance(theirs, Exception):
        # Native bug: a JSON body with more digits than int() converts (Python's 4300-digit limit) raises
        # ValueError past `allow_non_json` (native only catches JSONDecodeError); ours honours
        # allow_non_json and returns the text (and without it, reports a malformed region).
        assume("integer string conversion" not in str(theirs) or ours["errors"])
        event("native raised")
        assert ours["errors"], f"native raised {type(theirs).__name__}: {theirs}\nbut our parser reported no error"
        return
    # Failed regions: native raised above; we must not report errors where native parsed fine.
    assert not ours["errors"], f"we reported {ours['errors']!r} where native parsed: {theirs['message']!r}"
    assert canon(ours["message"]) == canon(theirs["message"])
    if not exact:
        assert canon(native_shape(ours["initial"] + ours["events"])) == canon(
            merge_chunks(theirs["initial"] + theirs["events"]))
        return
    # Same chunks fed to both. Adjacent chunks are merged before comparing: we hold leading whitespace of
    # the implicit field back until its first non-space character (a deliberate difference, see
    # `deliberate_difference`), so chunk boundaries may differ there; the text per region must not.
    # Compared as one sequence: when a delimiter ends exactly where the prefix ends, native holds it back
    # if any literal of that field is a prefix of another (["<", "</a>"]), even when the longer one already
    # matched; we commit it. Its events then come in `initial_events` for us and at the first feed or
    # finalize for native: the same events, one call apart.
    assert canon(native_shape(ours["initial"] + ours["events"])) == canon(
        merge_chunks(theirs["initial"] + theirs["events"]))


# Ties between delimiters at the same position and length go to the field NAME in both parsers (opens
# first), so field names are random. Defaults never share a name with a field: native `.append`s to /
# joins onto the default value, we start the field fresh.
SETTINGS = dict(sorted_names=False, defaults_may_collide=False)


@example(Case({"start_anchor": "<|im_start|>assistant\n", "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>"},
    "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                   "transform": {"type": "function", "function": "{content}"}},
    "content": {"close": "<|im_end|>"}}, "defaults": {"role": "assistant"}},
    "<|im_start|>assistant\n", '<think>Hm</think>Sure.<tool_call>{"name": "f", "arguments": {}}</tool_call><|im_end|>',
    ["<think>H", "m</th", "ink>Sure.<tool", '_call>{"name": "f", "arguments": {}}</tool_call><|im_', "end|>"]))
# Found by CI runs: a delimiter that ends where the prefix ends (committed one call earlier than native),
# and a JSON body longer than Python's int() digit limit with allow_non_json (native raises).
@example(Case({"start_anchor_pattern": "<\\|im_start\\|>(?:assistant|bot)\n",
               "fields": {"f0": {"open": "<a>"}, "f1": {"open": ["<", "</a>"], "optional": False}}},
              "<|im_start|>assistant\n</a>", "", []))
@example(Case({"start_anchor": "S", "fields": {"f0": {"open": "<a>", "repeats": True},
                                               "f1": {"content": "json", "content_args": {"allow_non_json": True}}}},
              "", "1" * 5000 + "<a>", ["1" * 5000 + "<a>"]))
# Found by a `hunt` run: a zero-width close and a zero-width open at one position (both fire).
@example(Case({"start_anchor": "S", "fields": {
    "f0": {"open_pattern": "(?=<z>)", "repeats": True, "transform": {"value": "{content}"}},
    "f3": {"open_pattern": "<r\\d>", "close_pattern": "(?=<z>)", "content": "int", "repeats": True}}},
    "", "<r1>42<z>", list("<r1>42<z>")))
@given(cases(**SETTINGS))
def test_same_messages_and_events_as_native(case: Case) -> None:
    compare(case)


@example(Case({"start_anchor": "S", "fields": {"f0": {"open": "<a>", "content": "int"},
                                               "f1": {"open": ["[", "<[<"], "content": "int"}}},
              "", "<[<0", ["<", "[", "<", "0"]))  # native streamed commits "[" (see compare)
@example(Case({"start_anchor": "S", "fields": {"f0": {"open": ["<a>", "<", "<<<"], "close": "</a>"}}},
              "", "<<<hello</a>", list("<<<hello</a>")))
@given(cases(allow_regex=False, **SETTINGS))
def test_same_as_native_with_literal_delimiters(case: Case) -> None:
    compare(case)


@given(cases(hostile=False, content_names=["text", "int", "float", "json"], **SETTINGS))
def test_same_as_native_on_common_parsers(case: Case) -> None:
    compare(case)


# --------------------------------------------------------------------------- tool-argument typing

TOOL_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"},
    },
}
PARAM_SCHEMAS = [
    {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}, {"type": "object"},
    {"type": "array"}, {"type": "string"}, {"type": ["integer", "null"]}, {"type": "integer", "nullable": True},
    {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, {"oneOf": [{"type": "number"}, {"type": "null"}]},
    {"type": ["string", "integer"]}, {"anyOf": [{"type": "string"}, {"type": "number"}]}, {"enum": ["a", "b"]},
    {"type": "array", "items": {"type": "integer"}}, {},
]
ARG_VALUES = ["7", "-3", "3.0", "3.5", "1e3", "true", "False", "1", "0", "null", "None", '{"a": 1}', "[1, 2]",
              "x", " 7 ", "nan", "inf", "", "007", "1_000", 7, 2.5, True, None, [1, "2"], {"a": "1"}]


def _lenient_string_union_case(schema: dict[str, Any], value: Any) -> bool:
    """A union admitting "string" and text that is not JSON ("007", "x"): native casts it leniently by the
    first non-string type that reads it, we keep the string (a deliberate difference, README table)."""
    import json

    types = schema.get("type") if isinstance(schema.get("type"), list) else [
        choice.get("type") for choice in schema.get("anyOf", [])
    ]
    if "string" not in types or len(types) < 2 or not isinstance(value, str):
        return False
    try:
        json.loads(value, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except ValueError:
        return True
    return False


@given(st.lists(st.tuples(st.sampled_from(PARAM_SCHEMAS), st.sampled_from(ARG_VALUES)), min_size=1, max_size=4))
def test_tool_argument_typing_matches_native(params: list[tuple[dict[str, Any], Any]]) -> None:
    import json

    # (Transformers >= 5.25 leaves those arguments of a JSON body as written, as we do: no lenient casts to filter)
    assume(NATIVE_KEEPS_JSON_STRINGS or not any(_lenient_string_union_case(schema, value) for schema, value in params))
    # We type nested values through `items` / `properties`; native only casts top-level strings (a
    # deliberate difference, in the README table).
    assume(not any(
        isinstance(value, (list, dict)) and ("items" in schema or "properties" in schema) for schema, value in params
    ))
    properties = {f"p{i}": schema for i, (schema, _) in enumerate(params)}
    arguments = {f"p{i}": value for i, (_, value) in enumerate(params)}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}]
    text = "<tool_call>" + json.dumps({"name": "f", "arguments": arguments}) + "</tool_call><|im_end|>"
    case = Case(TOOL_TEMPLATE, "", text, [text])
    parser = ResponseParser(TOOL_TEMPLATE, "", tools=tools)
    parser.feed(text)
    ours_msg, _ = parser.finalize()
    theirs_msg = native.parse_response(text, TOOL_TEMPLATE, prefix="", tools=tools)
    # (Transformers >= 5.25 leaves a JSON body's argument as written where its schema admits a string, as we do;
    # 5.24 casts it: each argument as native's version types it, `_native_typing.py`)
    want = copy.deepcopy(ours_msg)
    typed = want["tool_calls"][0]["function"]["arguments"]
    for key, value in typed.items():
        typed[key] = native_argument(value, arguments[key], properties[key])
    assert canon(want) == canon(theirs_msg), case
