#!/usr/bin/env python
"""The CPython floor: the least work that gives the same message as ``parse_response``, per template kind.

For each kind of response format, a hand-written parser specialised to one template's delimiters:
``str.rfind`` for the start anchor, ``str.find`` / ``str.partition`` / ``str.split`` for the regions,
``json.loads`` for JSON bodies, nothing else -- no streaming, no error reporting, no validation, no
handling of the edge cases the real templates handle (a floor is only right on well-formed outputs like
the benchmark's). It is what a one-off script for one model would do, and so the cost below which a
general template engine cannot go. Every floor is checked to give exactly our message (untyped: no
``tools=``; generated tool-call ids left out) on every benchmark input of its template, or the script
stops.

    python benchmarks/floor.py                   # all templates with a floor: ours vs floor, one-shot
    python benchmarks/floor.py --templates qwen3,gpt-oss --responses 100

``bench_all.py`` prints the same floor column beside its one-shot rows. Templates whose format needs
regex-level matching to be read correctly (Gemma 4's argument syntax, pythonic call lists, ...) have no
floor here; the table says so.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpus  # noqa: E402

from hf_response_templates import parse_response  # noqa: E402
from hf_response_templates.library import get_template  # noqa: E402

Floor = Callable[[str, str], dict]
loads = json.loads


def _after_anchor(prefix: str, anchor: str) -> str:
    i = prefix.rfind(anchor)
    return prefix[i + len(anchor) :] if i >= 0 else prefix


def _call(name: str, arguments: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _cut(s: str, ends: tuple[str, ...]) -> str:
    """`s` up to the first of the end tokens."""
    for end in ends:
        e = s.find(end)
        if e >= 0:
            s = s[:e]
    return s


def _answer(msg: dict, s: str) -> dict:
    """`msg` with the stripped answer `s` as its content (none if empty)."""
    content = s.strip()
    if content:
        msg["content"] = content
    return msg


def _reasoning(s: str, msg: dict, think: tuple[str, str, str], ends_at: str | None) -> str:
    """Take a leading `open ... close` reasoning block out of `s` into `msg`; the block also ends where
    `ends_at` (the tool-call tag) starts. Returns the rest."""
    key, open_, close = think
    a = s.find(open_)
    if a < 0 or s[:a].strip():
        return s
    a += len(open_)
    b = s.find(close, a)
    skip = len(close)
    if ends_at is not None:
        c = s.find(ends_at, a)
        if c >= 0 and (b < 0 or c < b):
            b, skip = c, 0
    if b < 0:
        b = skip = len(s)
    r = s[a:b].strip()
    if r.startswith(open_):  # the model wrote the tag the prompt had already opened
        r = r[len(open_) :].lstrip()
    if r:
        msg[key] = r
    return s[b + skip :]


# --------------------------------------------------------------------------- kinds


def tagged_json(
    anchor: str,
    end: str,
    think: tuple[str, str, str] | None = None,
    calls: tuple[str, str] | None = None,
    call_list: bool = False,
    answer: tuple[str, str] | None = None,
) -> Floor:
    """Reasoning in a tag pair, then the answer, then tool calls `open {json} close` (each a
    {"name", "arguments"} object, or one JSON list of them with `call_list`), then an end token."""

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        s = _cut(s, (end,))
        msg: dict[str, Any] = {"role": "assistant"}
        if think is not None:
            s = _reasoning(s, msg, think, calls[0] if calls else None)
        if calls is not None:
            open_, close = calls
            a = s.find(open_)
            if a >= 0:
                parts = s[a:].split(open_)
                s = s[:a]
                found = []
                for part in parts[1:]:
                    body = loads(part[: part.find(close)])
                    for c in body if call_list else (body,):
                        found.append(_call(c["name"], c["arguments"]))
                msg["tool_calls"] = found
        if answer is not None:
            s = s.replace(answer[0], "").replace(answer[1], "")
        return _answer(msg, s)

    return parse


def harmony(anchor: str = "<|start|>assistant") -> Floor:
    """gpt-oss: messages `<|start|>assistant[ to=functions.F]<|channel|>NAME[ to=...][<|constrain|>json]
    <|message|>BODY<|end|>` (the first one started by the prompt)."""
    stops = ("<|end|>", "<|call|>", "<|return|>")

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        msg: dict[str, Any] = {"role": "assistant"}
        calls = []
        for part in s.split(anchor):
            header, _, body = part.partition("<|message|>")
            for stop in stops:
                i = body.find(stop)
                if i >= 0:
                    body = body[:i]
            if " to=" in header:
                name = header.split(" to=", 1)[1].split("<", 1)[0].split(None, 1)[0]
                calls.append(_call(name.removeprefix("functions."), loads(body)))
            elif "<|channel|>analysis" in header:
                msg["thinking"] = body.strip()
            elif header:
                msg["content"] = body.strip()
        if calls:
            msg["tool_calls"] = calls
        return msg

    return parse


def xml_calls(
    anchor: str,
    end: str,
    call_open: str,
    call_close: str,
    think: tuple[str, str, str] | None = None,
    head: str = "<function=",
    param: str = "<parameter=",
    param_end: str = "</parameter>",
    strip_values: bool = True,
    wrapper: str | None = None,
) -> Floor:
    """Qwen3-Coder style: `<tool_call><function=NAME><parameter=K>V</parameter>...</function></tool_call>`
    (values kept as text), after optional reasoning and an answer."""

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        s = _cut(s, (end,))
        msg: dict[str, Any] = {"role": "assistant"}
        if think is not None:
            s = _reasoning(s, msg, think, call_open)
        a = s.find(call_open)
        if a >= 0:
            parts = s[a:].split(call_open)
            s = s[:a].rstrip()
            if wrapper and s.endswith(wrapper):  # calls written with or without their <tool_call> wrapper
                s = s[: -len(wrapper)]
            calls = []
            last = parts[-1]
            after = last[last.find(call_close) + len(call_close) :].lstrip()
            if wrapper and after.startswith("</" + wrapper[1:]):
                after = after[len(wrapper) + 1 :]
            if after.strip():  # an answer after the calls
                s = (s.strip() + after.strip()) if s.strip() else after
            for part in parts[1:]:
                part = part[: part.find(call_close)]
                h = part.find(head) + len(head)
                name_end = part.find(">", h)
                name = part[h:name_end]
                if name.endswith('"'):
                    name = name[1:-1] if name.startswith('"') else name[:-1]
                args = {}
                for p in part[name_end:].split(param)[1:]:
                    k, _, v = p.partition(">")
                    v = v[: v.find(param_end)]
                    if k.endswith('"'):
                        k = k[1:-1]
                    args[k] = v.strip("\n") if strip_values else v
                calls.append(_call(name, args))
            msg["tool_calls"] = calls
        return _answer(msg, s)

    return parse


def glm(anchor: str = "<|assistant|>") -> Floor:
    """GLM-4.6: reasoning in <think>, then `<tool_call>NAME\\n<arg_key>K</arg_key><arg_value>V</arg_value>`."""

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        s = _cut(s, ("<|user|>", "<|observation|>", "<|endoftext|>"))
        msg: dict[str, Any] = {"role": "assistant"}
        s = _reasoning(s, msg, ("reasoning_content", "<think>", "</think>"), "<tool_call>")
        a = s.find("<tool_call>")
        if a >= 0:
            parts = s[a:].split("<tool_call>")
            s = s[:a]
            calls = []
            for part in parts[1:]:
                part = part[: part.find("</tool_call>")]
                name, _, rest = part.partition("<arg_key>")
                args = {}
                for kv in ("<arg_key>" + rest).split("<arg_key>")[1:]:
                    k, _, v = kv.partition("</arg_key>")
                    v = v[v.find("<arg_value>") + 11 : v.find("</arg_value>")]
                    args[k] = v
                calls.append(_call(name.strip(), args))
            msg["tool_calls"] = calls
        return _answer(msg, s)

    return parse


def sectioned_calls(
    anchor: str, end: str, section: str, call: str, sep: str, close: str, think=None, anchor2: str | None = None
) -> Floor:
    """Kimi K2 / DeepSeek style: `SECTION CALL header SEP {json} CLOSE ...` after an answer."""

    def parse(text: str, prefix: str) -> dict:
        if anchor2 is not None and prefix.rfind(anchor2) > prefix.rfind(anchor):
            s = _after_anchor(prefix, anchor2) + text
        else:
            s = _after_anchor(prefix, anchor) + text
        msg: dict[str, Any] = {"role": "assistant"}
        if think is not None:
            s = _reasoning(s, msg, think, section)
        a = s.find(section)
        if a >= 0:
            parts = s[a:].split(call)
            s = s[:a]
            calls = []
            for part in parts[1:]:
                header, _, body = part.partition(sep)
                body = body[: body.find(close)]
                calls.append((header, body))
            if calls:
                msg["tool_calls"] = calls
        return _answer(msg, _cut(s, (end,)))

    return parse


def _kimi(header_to_call: Callable[[str, str], dict], **kw) -> Floor:
    inner = sectioned_calls(**kw)

    def parse(text: str, prefix: str) -> dict:
        msg = inner(text, prefix)
        if "tool_calls" in msg:
            msg["tool_calls"] = [header_to_call(h, b) for h, b in msg["tool_calls"]]
        return msg

    return parse


def _kimi_call(header: str, body: str) -> dict:
    return _call(header.strip().removeprefix("functions.").rsplit(":", 1)[0], loads(body))


def mistral(think: bool = False) -> Floor:
    """Mistral Small 3.2 / Ministral 3: an answer, then `[TOOL_CALLS]NAME[ARGS]{json}` per call, `</s>`."""

    def parse(text: str, prefix: str) -> dict:
        i, j = prefix.rfind("[/INST]"), prefix.rfind("[/TOOL_RESULTS]")
        s = (prefix[i + 7 :] if i > j else prefix[j + 15 :] if j >= 0 else prefix) + text
        s = _cut(s, ("</s>",))
        msg: dict[str, Any] = {"role": "assistant"}
        if think:
            s = _reasoning(s, msg, ("reasoning_content", "[THINK]", "[/THINK]"), None)
        a = s.find("[TOOL_CALLS]")
        if a >= 0:
            calls = []
            for part in s[a:].split("[TOOL_CALLS]")[1:]:
                name, sep, args = part.partition("[ARGS]")
                if not sep:  # NAME{json}
                    i = part.find("{")
                    name, args = part[:i], part[i:]
                calls.append(_call(name.partition("[CALL_ID]")[0], loads(args)))
            msg["tool_calls"] = calls
            s = s[:a]
        return _answer(msg, s)

    return parse


def llama3_json(anchor: str = "<|start_header_id|>assistant<|end_header_id|>\n\n") -> Floor:
    """Llama 3.x: either an answer or one `{"name": ..., "parameters": {...}}` object, then `<|eot_id|>`."""

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        s = _cut(s, ("<|eot_id|>", "<|eom_id|>")).strip()
        if s.startswith("{") and s.endswith("}"):
            obj = loads(s)
            return {"role": "assistant", "tool_calls": [_call(obj["name"], obj.get("parameters", obj.get("arguments")))]}
        return {"role": "assistant", "content": s} if s else {"role": "assistant"}

    return parse


# --------------------------------------------------------------------------- the table

_CHATML = "<|im_start|>assistant\n"
_THINK = ("reasoning_content", "<think>", "</think>")

FLOORS: dict[str, Floor] = {
    "smollm3": tagged_json(_CHATML, "<|im_end|>", _THINK, ("<tool_call>", "</tool_call>")),
    "qwen3": tagged_json(_CHATML, "<|im_end|>", _THINK, ("<tool_call>", "</tool_call>")),
    "qwen3-thinking-2507": tagged_json(_CHATML, "<|im_end|>", _THINK, ("<tool_call>", "</tool_call>")),
    "hermes3": tagged_json(_CHATML, "<|im_end|>", None, ("<tool_call>", "</tool_call>")),
    "granite-4": tagged_json(
        "<|start_of_role|>assistant<|end_of_role|>", "<|end_of_text|>", None, ("<tool_call>", "</tool_call>")
    ),
    "nemotron-nano-v2": tagged_json(
        "<SPECIAL_11>Assistant\n", "<SPECIAL_12>", _THINK, ("<TOOLCALL>", "</TOOLCALL>"), call_list=True
    ),
    "gpt-oss": harmony(),
    "qwen3-coder": xml_calls(_CHATML, "<|im_end|>", "<function=", "</function>", head="", wrapper="<tool_call>"),
    "qwen3.5": xml_calls(_CHATML, "<|im_end|>", "<tool_call>", "</tool_call>", _THINK),
    "seed-oss": xml_calls(
        "<seed:bos>assistant",
        "<seed:eos>",
        "<seed:tool_call>",
        "</seed:tool_call>",
        ("reasoning_content", "<seed:think>", "</seed:think>"),
    ),
    "glm-4.6": glm(),
    "kimi-k2": _kimi(
        _kimi_call,
        anchor="<|im_assistant|>assistant<|im_middle|>",
        end="<|im_end|>",
        section="<|tool_calls_section_begin|>",
        call="<|tool_call_begin|>",
        sep="<|tool_call_argument_begin|>",
        close="<|tool_call_end|>",
    ),
    "mistral-small-3.2": mistral(),
    "ministral-3": mistral(think=True),
    "llama3": llama3_json(),
}


def _apertus() -> Floor:
    inner = tagged_json("<|assistant_start|>", "<|assistant_end|>", ("reasoning_content", "<|inner_prefix|>", "<|inner_suffix|>"))

    def parse(text: str, prefix: str) -> dict:
        a = text.find("<|tools_prefix|>")
        if a < 0:
            return inner(text, prefix)
        b = text.find("<|tools_suffix|>", a)
        msg = inner(text[:a] + text[b + 16 :], prefix)
        msg["tool_calls"] = [_call(k, v) for obj in loads(text[a + 16 : b]) for k, v in obj.items()]
        return msg

    return parse


FLOORS["apertus"] = _apertus()


def _deepseek_fix(header: str, body: str) -> dict:
    # header: "function<｜tool▁sep｜>NAME"; body: the JSON, up to the closing fence
    return _call(header.partition("<｜tool▁sep｜>")[2].strip(), loads(body))


FLOORS["deepseek-r1"] = _kimi(
    _deepseek_fix,
    anchor="<｜Assistant｜>",
    end="<｜end▁of▁sentence｜>",
    section="<｜tool▁calls▁begin｜>",
    call="<｜tool▁call▁begin｜>",
    sep="\n```json\n",
    close="\n```<｜tool▁call▁end｜>",
    think=("reasoning_content", "<think>", "</think>"),
    anchor2="<｜tool▁outputs▁end｜>",
)


def floor_for(name: str) -> Floor | None:
    """The floor parser of template `name`, or None when there is none."""
    return FLOORS.get(name)


def untyped(case: _corpus.Case) -> dict:
    """Our message for `case` without `tools=` (the floors do not type arguments)."""
    return parse_response(case.text, get_template(case.template), prefix=case.prefix)


def _strip_ids(message: dict) -> dict:
    if message.get("tool_calls"):
        message = {**message, "tool_calls": [{k: v for k, v in c.items() if k != "id"} for c in message["tool_calls"]]}
    return message


def check(name: str, cases: list[_corpus.Case]) -> str | None:
    """None if the floor gives our message on every case, else what differs first."""
    fn = floor_for(name)
    for c in cases:
        try:
            got = fn(c.text, c.prefix)
        except Exception as exc:  # noqa: BLE001 - reported
            return f"{type(exc).__name__}: {exc} on {c.text[:80]!r}"
        want = untyped(c)
        if _strip_ids(got) != _strip_ids(want):
            return f"differs on {c.shape} {c.text[-120:]!r}:\n  floor {got}\n  ours  {want}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--templates", default="")
    ap.add_argument("--responses", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    names = _corpus.template_names([t for t in args.templates.split(",") if t] or None)
    print(f"## CPython floor vs parse_response (template dict reused), CPU µs per response, best of {args.repeats}")
    print(f"{'template':20s} | {'ours':>7s} {'floor':>7s} {'ours/floor':>10s}")
    failed = []
    for name in names:
        fn = floor_for(name)
        if fn is None:
            print(f"{name:20s} |       -       -          -  (no floor for this kind)")
            continue
        cases = _corpus.short_cases(name, args.responses)
        problem = check(name, cases)
        if problem:
            failed.append(name)
            print(f"{name:20s} | floor differs: {problem}")
            continue
        tpl = get_template(name)
        best = {"ours": float("inf"), "floor": float("inf")}
        for _ in range(args.repeats):
            for label in best:
                gc.collect()
                t0 = time.process_time()
                if label == "ours":
                    for c in cases:
                        parse_response(c.text, tpl, prefix=c.prefix)
                else:
                    for c in cases:
                        fn(c.text, c.prefix)
                best[label] = min(best[label], (time.process_time() - t0) / len(cases) * 1e6)
        print(f"{name:20s} | {best['ours']:7.1f} {best['floor']:7.1f} {best['ours'] / best['floor']:9.2f}x")
    if failed:
        print(f"floors that do not give our message: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
