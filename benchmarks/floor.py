#!/usr/bin/env python
"""The CPython floor: the least work that gives the same message as ``parse_response``, per template kind.

For each kind of response format, a hand-written parser specialised to one template's delimiters:
``str.rfind`` for the start anchor, ``str.find`` / ``str.partition`` / ``str.split`` for the regions,
``json.loads`` (or ``JSONDecoder.raw_decode`` where text may follow a value) for JSON bodies (pythonic call
lists and Gemma 4's arguments rewritten to JSON by one ``re.sub`` first), and a compiled ``re`` only where
the template's delimiter is a regex that plain string search cannot read (Gemma 4's calls, Gemma 3's list
end, Llama's `{"name":` lookahead) --
no streaming, no error reporting, no validation, no handling of the edge cases the real templates handle
(a floor is only right on well-formed outputs like the benchmark's). It is what a one-off script for one
model would do, and so the cost below which a general template engine cannot go. Every shipped template
has one (41, of 19 kinds). Every floor is checked to give exactly our message (untyped: no ``tools=``;
generated tool-call ids left out) on every benchmark input of its template, or the script stops.

    python benchmarks/floor.py                   # every template: ours vs floor, one-shot
    python benchmarks/floor.py --templates qwen3,gpt-oss --responses 100

``bench_all.py`` prints the same floor column beside its one-shot rows (``--only floor``: the reused-dict
rows only).

The last two columns are for reading the gap, not the goal: ``check`` is the time of the one thing every
``parse_response`` call on a reused dict must do that no floor does, the deep ``==`` of the dict against the
copy it was compiled from (how an edit made in place is noticed), and ``ours/(floor+check)`` is the ratio with
that added to the floor.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

if __name__ == "__main__":  # measure this checkout's package: a script's sys.path[0] is benchmarks/, not the cwd
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _corpus  # noqa: E402
import _timing  # noqa: E402

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
            calls, after = [], []
            for part in s[a:].split("[TOOL_CALLS]")[1:]:
                name, sep, args = part.partition("[ARGS]")
                if not sep:  # NAME{json}
                    i = part.find("{")
                    name, args = part[:i], part[i:]
                value, end = _decode_json(args, len(args) - len(args.lstrip()))
                after.append(args[end:])  # text after the arguments is the answer's
                calls.append(_call(name.partition("[CALL_ID]")[0], value))
            msg["tool_calls"] = calls
            s = s[:a] + "".join(after)
        return _answer(msg, s)

    return parse


def llama3_json(anchor: str = "<|start_header_id|>assistant<|end_header_id|>\n\n") -> Floor:
    """Llama 3.x: either an answer or `{"name": ..., "parameters": {...}}` objects (`;` between), text after
    them going back to the answer, then `<|eot_id|>`."""

    def parse(text: str, prefix: str) -> dict:
        s = _cut(_after_anchor(prefix, anchor) + text, ("<|eot_id|>", "<|eom_id|>"))
        t = s.lstrip()
        while t.startswith("<|python_tag|>"):
            t = t[14:].lstrip()
        if not _JSON_CALL.match(t):
            return _answer({"role": "assistant"}, s)
        calls, i = [], 0
        while True:
            obj, i = _decode_json(t, i)
            calls.append(_call(obj["name"], obj["parameters"] if "parameters" in obj else obj["arguments"]))
            rest = t[i:].lstrip()
            if not rest.startswith(";"):
                break
            i = len(t) - len(rest[1:].lstrip())
        return _answer({"role": "assistant", "tool_calls": calls}, t[i:])

    return parse


_decode_json = json.JSONDecoder().raw_decode
_JSON_CALL = re.compile(r'\{\s*(?:"type"\s*:\s*"function"\s*,\s*)?"name"\s*:')


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


# --------------------------------------------------------------------------- the other kinds (issue 19: every template)



def _after_any(prefix: str, anchors: tuple[str, ...]) -> str:
    """The prefix after the last of any of `anchors` (a regex alternation of literals, read with rfind)."""
    best, end = -1, 0
    for a in anchors:
        i = prefix.rfind(a)
        if i > best:
            best, end = i, i + len(a)
    return prefix[end:] if best >= 0 else prefix


def _cut_first(s: str, ends: tuple[str, ...]) -> str:
    """`s` up to the earliest of `ends`."""
    cut = len(s)
    for end in ends:
        e = s.find(end, 0, cut)
        if e >= 0:
            cut = e
    return s[:cut]


def _json_calls(body: str) -> list[dict]:
    """A JSON list (or one object) of {"name", "arguments"} calls."""
    obj = loads(body)
    return [_call(c["name"], c["arguments"]) for c in (obj if isinstance(obj, list) else (obj,))]


def tagged_list(
    anchors: tuple[str, ...],
    ends: tuple[str, ...],
    call_open: str | tuple[str, ...],
    call_close: str | None,
    think: tuple[str, str, tuple[str, ...]] | None = None,
    strip_open: tuple[str, ...] = (),
    marker: str | None = None,
) -> Floor:
    """Reasoning `open ... close` (any of several closes), an answer, then one region `call_open [json list]
    call_close` (Apriel, Hunyuan, Granite 3.3, Mistral Small 3.1: `[TOOL_CALLS] [...]`)."""
    opens = (call_open,) if isinstance(call_open, str) else call_open

    def parse(text: str, prefix: str) -> dict:
        s = _after_any(prefix, anchors) + text
        msg: dict[str, Any] = {"role": "assistant"}
        if think is not None:
            key, open_, closes = think
            st = s.lstrip()
            if st.startswith(open_):
                st = st[len(open_) :]
                b, skip = len(st), 0
                for c in closes:
                    i = st.find(c)
                    if 0 <= i < b or (i == b and len(c) > skip):
                        b, skip = i, len(c)
                r = st[:b].strip()
                if r:
                    msg[key] = r
                s = st[b + skip :]
        if marker is not None and s.lstrip().startswith(marker):
            s = s.lstrip()[len(marker) :]
        a, opened = -1, ""
        for o in opens:
            i = s.find(o)
            if i >= 0 and (a < 0 or i < a):
                a, opened = i, o
        if a >= 0:
            e = s.find(call_close, a) if call_close else -1
            body = s[a + len(opened) : e if e >= 0 else len(s)]
            rest = s[:a] + (s[e + len(call_close) :] if e >= 0 else "")
            body = _cut_first(body, ends)
            msg["tool_calls"] = _json_calls(body)
            s = rest
        s = _cut_first(s, ends)
        for w in strip_open:
            s = s.replace(w, "")
        return _answer(msg, s)

    return parse


def reasoning_then(
    anchors: tuple[str, ...],
    think: tuple[str, str, str] | None,
    calls: Callable[[str, dict], str],
    ends: tuple[str, ...],
    calls_start: str | None = None,
    skip_after_anchor: str | None = None,
) -> Floor:
    """The common shape: after the start anchor, a leading reasoning block (which also ends where
    `calls_start` begins), then the answer cut at the first end token, tool calls taken out of it by `calls`
    (which returns the text left)."""

    def parse(text: str, prefix: str) -> dict:
        s = _after_any(prefix, anchors) + text
        if skip_after_anchor is not None and s.startswith(skip_after_anchor):
            s = s[len(skip_after_anchor) :]
        msg: dict[str, Any] = {"role": "assistant"}
        if think is not None:
            s = _reasoning(s, msg, think, calls_start)
        s = calls(s, msg)
        return _answer(msg, _cut_first(s, ends))

    return parse


# DeepSeek V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>
_DS_TOOL = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>")


def _ds31_calls(s: str, msg: dict) -> str:
    section, begin, sep, end = _DS_TOOL
    a = s.find(begin)
    if a < 0:
        return s
    head = s[:a]
    if head.endswith(section):
        head = head[: -len(section)]
    calls = []
    for part in s[a:].split(begin)[1:]:
        name, _, body = part.partition(sep)
        calls.append(_call(name, loads(body[: body.find(end)])))
    msg["tool_calls"] = calls
    return head


# DeepSeek V3.2 / V4 DSML: <｜DSML｜invoke name="N"><｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>
def _dsml_calls(calls_tag: str, typed: bool) -> Callable[[str, dict], str]:
    inv, par, par_end = '<｜DSML｜invoke name="', '<｜DSML｜parameter name="', "</｜DSML｜parameter>"

    def take(s: str, msg: dict) -> str:
        a = s.find(inv)
        if a < 0:
            return s
        head = s[:a].rstrip()
        if head.endswith(calls_tag):
            head = head[: -len(calls_tag)]
        calls = []
        for part in s[a:].split(inv)[1:]:
            name, _, body = part.partition('">')
            args: dict[str, Any] = {}
            for p in body[: body.find("</｜DSML｜invoke>")].split(par)[1:]:
                attrs, _, v = p.partition(">")
                v = v[: v.find(par_end)]
                key, _, string = attrs.partition('" string="')
                if typed and string == 'false"':
                    try:
                        v = loads(v)
                    except ValueError:
                        pass
                args[key.rstrip('"')] = v
            calls.append(_call(name, args))
        msg["tool_calls"] = calls
        return head

    return take


# MiniMax M2: <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter></invoke></minimax:tool_call>
def _minimax_calls(s: str, msg: dict) -> str:
    a = s.find('<invoke name="')
    if a < 0:
        return s
    head = s[:a].rstrip()
    if head.endswith("<minimax:tool_call>"):
        head = head[:-19]
    calls = []
    for part in s[a:].split('<invoke name="')[1:]:
        name, _, body = part.partition('">')
        body = body[: body.find("</invoke>")]
        args = {}
        for p in body.split('<parameter name="')[1:]:
            k, _, v = p.partition('">')
            args[k] = v[: v.find("</parameter>")]
        calls.append(_call(name, args))
    msg["tool_calls"] = calls
    return head


# GLM-4.7: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>
def _glm47_calls(s: str, msg: dict) -> str:
    a = s.find("<tool_call>")
    if a < 0:
        return s
    calls = []
    for part in s[a:].split("<tool_call>")[1:]:
        part = part[: part.find("</tool_call>")]
        name, _, rest = part.partition("<arg_key>")
        args = {}
        for kv in rest.split("<arg_key>") if rest else ():
            k, _, v = kv.partition("</arg_key>")
            args[k] = v[v.find("<arg_value>") + 11 : v.find("</arg_value>")]
        calls.append(_call(name.strip(), args))
    msg["tool_calls"] = calls
    return s[:a]


# Kimi K2 Thinking: <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{json}<|tool_call_end|>
def _kimi_thinking_calls(s: str, msg: dict) -> str:
    begin = "<|tool_call_begin|>"
    a = s.find(begin)
    if a < 0:
        return s
    head = s[:a].rstrip()
    if head.endswith("<|tool_calls_section_begin|>"):
        head = head[:-28]
    calls = []
    for part in s[a:].split(begin)[1:]:
        cid, _, body = part.partition("<|tool_call_argument_begin|>")
        cid = cid.strip()
        name = cid.removeprefix("functions.").rsplit(":", 1)[0]
        c = _call(name, loads(body[: body.find("<|tool_call_end|>")]))
        c["id"] = cid
        calls.append(c)
    msg["tool_calls"] = calls
    return head


def _kimi_k3() -> Floor:
    """Kimi K3: <|open|>think<|sep|>...<|close|>think<|sep|>, <|open|>response<|sep|>...<|close|>response<|sep|>,
    <|open|>tools<|sep|> <|open|>call tool="N"<|sep|><|open|>argument key="K" ...<|sep|>V<|close|>argument<|sep|>..."""
    anchor = '<|open|>message role="assistant"<|sep|>'
    arg = '<|open|>argument key="'

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        msg: dict[str, Any] = {"role": "assistant"}
        for key, name in (("reasoning_content", "think"), ("content", "response")):
            o, c = f"<|open|>{name}<|sep|>", f"<|close|>{name}<|sep|>"
            a = s.find(o)
            if a >= 0:
                b = s.find(c, a)
                v = s[a + len(o) : b if b >= 0 else len(s)].strip()
                if v:
                    msg[key] = v
        a = s.find('<|open|>call tool="')
        if a >= 0:
            calls = []
            for part in s[a:].split('<|open|>call tool="')[1:]:
                name, _, body = part.partition('"')
                body = body[: body.find("<|close|>call<|sep|>")]
                args = {}
                for p in body.split(arg)[1:]:
                    k, _, v = p.partition('"')
                    v = v[v.find("<|sep|>") + 7 :]
                    args[k] = v[: v.find("<|close|>argument<|sep|>")]
                calls.append(_call(name, args))
            msg["tool_calls"] = calls
        return msg

    return parse


#: One token of a pythonic call list that JSON writes differently: a string, `name(`, `key=`, a Python
#: constant, a closing parenthesis. Everything else (numbers, `[`, `{`, `,`, `:`) is already JSON.
_PY_TOKEN = re.compile(
    r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|([A-Za-z_][\w.-]*)\s*\(|([A-Za-z_]\w*)\s*=|(None|True|False)\b|\)"""
)
_PY_CONST = {"None": "null", "True": "true", "False": "false"}


def _py_token(m: re.Match) -> str:
    tok = m.group()
    if m.group(1) is not None:
        return f'["{m.group(1)}", {{'
    if m.group(2) is not None:
        return f'"{m.group(2)}":'
    if m.group(3) is not None:
        return _PY_CONST[tok]
    if tok == ")":
        return "}]"
    if tok[0] == "'":
        return json.dumps(tok[1:-1], ensure_ascii=False)
    return tok


def _python_calls(src: str) -> list[dict]:
    """`[f(a=1), g.h(b='x')]` rewritten to JSON (`[["f", {"a": 1}], ...]`) by one `re.sub`, then `json.loads`."""
    return [_call(name, args) for name, args in loads(_PY_TOKEN.sub(_py_token, src))]


_LIST_END = re.compile(r"\)\s*\]")


def pythonic(anchor: str, ends: tuple[str, ...], lead: str | None = None, region: tuple[str, str] | None = None,
             think: tuple[str, str, str] | None = None, call_ends: tuple[str, ...] | None = None) -> Floor:
    """Pythonic call lists: at the start of the answer (after optional whitespace and a `lead` tag), up to
    the end token, or up to the list's end (`)]`, Gemma 3: text may follow); or in a `region` tag pair (LFM2)."""

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        msg: dict[str, Any] = {"role": "assistant"}
        if think is not None:
            s = _reasoning(s, msg, think, region[0] if region else None)
        if region is not None:
            a = s.find(region[0])
            if a >= 0:
                b = s.find(region[1], a)
                msg["tool_calls"] = _python_calls(s[a + len(region[0]) : b])
                s = s[:a] + s[b + len(region[1]) :]
            return _answer(msg, _cut_first(s, ends))
        t = s.lstrip()
        if lead is not None and t.startswith(lead):
            t = t[len(lead) :].lstrip()
        if t.startswith("[") and t[1:].lstrip()[:1].isidentifier():
            if lead is None and ends == ("<end_of_turn>",):  # Gemma 3: the list ends at `)]`
                m = _LIST_END.search(t)
                if m:
                    msg["tool_calls"] = _python_calls(t[: m.end()])
                    return _answer(msg, _cut_first(t[m.end() :], ends))
            t = _cut_first(t, call_ends or ends)
            msg["tool_calls"] = _python_calls(t)
            return msg
        return _answer(msg, _cut_first(s, ends))

    return parse


def json_list_at_start(anchor: str, ends: tuple[str, ...], lead: str | None = None) -> Floor:
    """xLAM: the whole answer is `[{"name", "arguments"}, ...]` when it starts with one; Phi-4-mini:
    `functools[...]` after the answer (`lead`)."""

    def parse(text: str, prefix: str) -> dict:
        s = _cut_first(_after_anchor(prefix, anchor) + text, ends)
        if lead is not None:
            a = s.find(lead)
            if a >= 0 and s[a + len(lead) :].lstrip().startswith("["):
                msg = {"role": "assistant", "tool_calls": _json_calls(s[a + len(lead) :])}
                return _answer(msg, s[:a])
            return _answer({"role": "assistant"}, s)
        t = s.lstrip()
        if t.startswith("[") and t[1:].lstrip().startswith("{"):
            return {"role": "assistant", "tool_calls": _json_calls(t)}
        return _answer({"role": "assistant"}, s)

    return parse


def _llama4_json() -> Floor:
    """Llama 4 JSON: `{"name": ..., "parameters": ...}` objects (`;` or whitespace between) at the start."""
    anchor, ends = "<|header_start|>assistant<|header_end|>\n\n", ("<|eot|>", "<|eom|>")

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, anchor) + text
        t = s.lstrip()
        if t.startswith("<|python_start|>"):
            t = t[16:].lstrip()
        if not _JSON_CALL.match(t):
            return _answer({"role": "assistant"}, _cut_first(s, ends))
        calls, i = [], 0
        while True:
            obj, i = _decode_json(t, i)
            calls.append(_call(obj["name"], obj["parameters"] if "parameters" in obj else obj["arguments"]))
            rest = t[i:].lstrip()
            if rest.startswith(";"):
                rest = rest[1:].lstrip()
            if not _JSON_CALL.match(rest):
                break
            i = len(t) - len(rest)
        msg = {"role": "assistant", "tool_calls": calls}
        rest = t[i:].lstrip()
        if rest.startswith("<|python_end|>"):
            rest = rest[14:]
        return _answer(msg, _cut_first(rest, ends))

    return parse


_GEMMA_KEY = re.compile(r"([{,])([^\s{}\[\]:,\"]+):")


def _gemma4_args(body: str) -> Any:
    """Gemma 4's argument syntax: bare keys, `<|"|>` string quotes -> JSON (keys quoted outside strings)."""
    parts = body.split('<|"|>')
    for i in range(0, len(parts), 2):
        parts[i] = _GEMMA_KEY.sub(r'\1"\2":', parts[i])
    for i in range(1, len(parts), 2):
        parts[i] = json.dumps(parts[i], ensure_ascii=False)
    return loads("".join(parts))


_GEMMA4_OPEN = re.compile(r"<\|tool_call>(?:call)?:([^{<]+)(?=\{)|<channel\|>\s{0,2}call:([^{<\s]+)(?=\{)")


class _Gemma4Call:
    """The call-open regex, tried only where `str.find` sees `<|tool_call>` or `<channel|>` (a search of the
    regex itself would try its lookbehind at every character); `start()` leaves `<channel|>` to the text."""

    @staticmethod
    def search(s: str, pos: int = 0) -> re.Match | None:
        while True:
            a, b = s.find("<|tool_call>", pos), s.find("<channel|>", pos)
            at = min(a, b) if a >= 0 and b >= 0 else max(a, b)
            if at < 0:
                return None
            m = _GEMMA4_OPEN.match(s, at)
            if m is not None:
                return _Gemma4Match(m, at + 10 if m.group(2) is not None else at)
            pos = at + 1


class _Gemma4Match:
    def __init__(self, m: re.Match, start: int) -> None:
        self._m, self._start = m, start
        self.group = m.group

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._m.end()


_GEMMA4_CALL = _Gemma4Call


def _gemma4() -> Floor:
    def parse(text: str, prefix: str) -> dict:
        s = _after_any(prefix, ("<|turn>model\n", "<tool_response|>")) + text
        msg: dict[str, Any] = {"role": "assistant"}
        st = s.lstrip()
        for open_ in ("<|channel>thought", "<|channel>"):
            if st.startswith(open_):
                st = st[len(open_) :]
                b = st.find("<channel|>")
                m = _GEMMA4_CALL.search(st)
                if m and (b < 0 or m.start() < b):
                    r, s = st[: m.start()], st[m.start() :]
                elif b >= 0:
                    r, s = st[:b], st[b + 10 :]
                else:
                    r, s = st, ""
                r = r.replace("<|channel>thought", "").replace("<|channel>", "").strip()
                if r:
                    msg["reasoning_content"] = r
                if b >= 0 and (m is None or m.start() > b):
                    s = "<channel|>" + s  # a call right after the close may be written `call:NAME{`
                break
        calls, out, pos = [], [], 0
        while True:
            m = _GEMMA4_CALL.search(s, pos)
            if m is None:
                break
            out.append(s[pos : m.start()])
            name = m.group(1) or m.group(2)
            body_end = _gemma4_end(s, m.end())
            calls.append(_call(name, _gemma4_args(s[m.end() : body_end[0]])))
            pos = body_end[1]
        out.append(s[pos:])
        rest = "".join(out)
        if calls:
            msg["tool_calls"] = calls
        return _answer(msg, _cut_first(rest, ("<turn|>", "<|tool_response>")).replace("<channel|>", ""))

    return parse


def _gemma4_end(s: str, start: int) -> tuple[int, int]:
    """(end of a call's body, where the text after it starts): `<tool_call|>`, or before `<|tool_response>` /
    `<turn|>`."""
    a = s.find("<tool_call|>", start)
    b = _cut_first(s[start:], ("<|tool_response>", "<turn|>"))
    if a >= 0 and a - start <= len(b):
        return a, a + 12
    return start + len(b), start + len(b)


def _functiongemma() -> Floor:
    """FunctionGemma: `<start_function_call>call:NAME{k:<escape>V<escape>,...}<end_function_call>`."""
    begin = "<start_function_call>"

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, "<start_of_turn>model") + text
        msg: dict[str, Any] = {"role": "assistant"}
        a = s.find(begin)
        if a >= 0:
            calls = []
            pieces = s[a:].split(begin)
            for part in pieces[1:]:
                head, _, body = part.partition("{")
                body = body[: body.rfind("}", 0, body.find("<end_function_call>"))]
                bits = body.split("<escape>")
                args = {bits[i].lstrip(",").rstrip(":"): bits[i + 1] for i in range(0, len(bits) - 1, 2)}
                calls.append(_call(head.strip().removeprefix("call:"), args))
            msg["tool_calls"] = calls
            tail = pieces[-1][pieces[-1].find("<end_function_call>") + 19 :]
            s = s[:a] + tail
        return _answer(msg, _cut_first(s, ("<end_of_turn>",)))

    return parse


def _gigachat3() -> Floor:
    """GigaChat 3: the answer, then `<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name", "arguments"}`."""
    call = "function call<|role_sep|>"

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, "assistant<|role_sep|>\n") + text
        msg: dict[str, Any] = {"role": "assistant"}
        a = s.find(call)
        if a >= 0:
            head = s[:a].rstrip()
            if head.endswith("<|message_sep|>"):
                head = head[:-15]
            body = _cut_first(s[a + len(call) :], ("<|message_sep|>", "</s>"))
            msg["tool_calls"] = [{"type": "function", "function": loads(body)}]
            s = head
        return _answer(msg, _cut_first(s, ("<|message_sep|>", "</s>")))

    return parse


def _internlm2() -> Floor:
    """InternLM2: `<|action_start|><|plugin|>{"name": N, "parameters"|"arguments": {...}}<|action_end|>`."""
    begin, end = "<|action_start|><|plugin|>", "<|action_end|>"

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, "<|im_start|>assistant\n") + text
        msg: dict[str, Any] = {"role": "assistant"}
        out, calls, pos = [], [], 0
        while True:
            a = s.find(begin, pos)
            e = s.find("<|im_end|>", pos)
            if a < 0 or 0 <= e < a:
                out.append(s[pos : e if e >= 0 else len(s)])
                break
            out.append(s[pos:a])
            b = s.find(end, a)
            obj = loads(s[a + len(begin) : b])
            calls.append(_call(obj["name"], obj["parameters"] if "parameters" in obj else obj["arguments"]))
            pos = b + len(end)
        if calls:
            msg["tool_calls"] = calls
        return _answer(msg, "".join(out))

    return parse


def _cohere() -> Floor:
    """Command R7B: `<|START_THINKING|>plan<|END_THINKING|>`, `<|START_ACTION|>[{tool_name, parameters}]<|END_ACTION|>`,
    `<|START_RESPONSE|>answer<|END_RESPONSE|>` (or `_TEXT`), up to `<|END_OF_TURN_TOKEN|>`."""
    regions = (
        ("tool_plan", "<|START_THINKING|>", "<|END_THINKING|>"),
        ("tool_calls", "<|START_ACTION|>", "<|END_ACTION|>"),
        ("content", "<|START_RESPONSE|>", "<|END_RESPONSE|>"),
        ("content", "<|START_TEXT|>", "<|END_TEXT|>"),
    )

    def parse(text: str, prefix: str) -> dict:
        s = _after_anchor(prefix, "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>") + text
        s = _cut_first(s, ("<|END_OF_TURN_TOKEN|>",))
        msg: dict[str, Any] = {"role": "assistant"}
        for key, open_, close in regions:
            a = s.find(open_)
            if a < 0:
                continue
            b = s.find(close, a)
            if b < 0:
                b = s.find("<|END_", a + len(open_))  # a region closed by the other kind's end (`_TEXT` / `_RESPONSE`)
            body = s[a + len(open_) : b if b >= 0 else len(s)]
            if key == "tool_calls":
                msg[key] = [_call(c["tool_name"], c["parameters"]) for c in loads(body)]
            elif body.strip():
                msg[key] = body.strip()
        return msg

    return parse



def _granite33() -> Floor:
    inner = tagged_list(
        ("",),
        ("</response>", "<|end_of_text|>"),
        ("<|tool_call|>", "<tool_call>"),
        "<|end_of_text|>",
        ("reasoning_content", "<think>", ("</think><response>", "</think>\n<response>", "</think>\n\n<response>", "</think>")),
    )

    def parse(text: str, prefix: str) -> dict:
        i = prefix.rfind("<|start_of_role|>assistant")  # the anchor is `...assistant[^<]*<|end_of_role|>`
        if i >= 0:
            prefix = prefix[prefix.find("<|end_of_role|>", i) + 15 :]
        return inner(text, prefix)

    return parse


_LLAMA3 = "<|start_header_id|>assistant<|end_header_id|>\n\n"
_LLAMA4 = "<|header_start|>assistant<|header_end|>\n\n"
_DS_END = ("<｜end▁of▁sentence｜>",)

FLOORS.update(
    {
        "apriel-1.5": tagged_list(
            ("<|assistant|>\n",), ("[END FINAL RESPONSE]", "<|end|>"), "<tool_calls>", "</tool_calls>",
            ("reasoning_content", "Here are my reasoning steps:", ("[BEGIN FINAL RESPONSE]",)),
        ),
        "hunyuan-a13b": tagged_list(
            ("<|extra_0|>",), ("</answer>", "<|eos|>"), "<tool_calls>", "</tool_calls>",
            ("reasoning_content", "<think>", ("</think>\n<answer>\n", "</think>\n<answer>", "</think><answer>\n", "</think><answer>", "</think>")),
            strip_open=("<answer>",), marker="助手：",
        ),
        "granite-3.3": _granite33(),
        "mistral-small-3.1": tagged_list(("[/INST]", "[/TOOL_RESULTS]"), ("</s>",), "[TOOL_CALLS]", None),
        "deepseek-v3.1": reasoning_then(
            ("<｜Assistant｜>", "<｜tool▁output▁end｜>"), _THINK, _ds31_calls, _DS_END, "<｜tool▁call", "</think>"
        ),
        "deepseek-v3.2": reasoning_then(
            ("<｜Assistant｜>", "</function_results>"), _THINK, _dsml_calls("<｜DSML｜function_calls>", True),
            (*_DS_END, "</｜DSML｜function_calls>"), "<｜DSML｜function_calls>",
        ),
        "deepseek-v4": reasoning_then(
            ("<｜Assistant｜>",), _THINK, _dsml_calls("<｜DSML｜tool_calls>", False),
            (*_DS_END, "</｜DSML｜tool_calls>"), "<｜DSML｜tool_calls>", "</think>",
        ),
        "minimax-m2": reasoning_then(
            ("]~b]ai\n",), _THINK, _minimax_calls, ("[e~[", "</minimax:tool_call>"), "<minimax:tool_call>"
        ),
        "glm-4.7": reasoning_then(
            ("<|assistant|>",), _THINK, _glm47_calls, ("<|user|>", "<|observation|>", "<|endoftext|>"), "<tool_call>", "</think>"
        ),
        "kimi-k2-thinking": reasoning_then(
            ("<|im_assistant|>assistant<|im_middle|>",), _THINK, _kimi_thinking_calls,
            ("<|im_end|>", "<|tool_calls_section_end|>"), "<|tool_calls_section_begin|>",
        ),
        "kimi-k3": _kimi_k3(),
        "gemma3-pythonic": pythonic("<start_of_turn>model\n", ("<end_of_turn>",)),
        "llama3.2-pythonic": pythonic(_LLAMA3, ("<|eot_id|>", "<|eom_id|>"), lead="<|python_tag|>"),
        "llama4-pythonic": pythonic(
            _LLAMA4, ("<|eot|>", "<|eom|>"), lead="<|python_start|>", call_ends=("<|python_end|>", "<|eot|>", "<|eom|>")
        ),
        "lfm2": pythonic(
            _CHATML, ("<|im_end|>",), region=("<|tool_call_start|>", "<|tool_call_end|>"), think=("thinking", "<think>", "</think>")
        ),
        "xlam-llama": json_list_at_start(_LLAMA3, ("<|eot_id|>", "<|eom_id|>")),
        "xlam-qwen": json_list_at_start(_CHATML, ("<|im_end|>",)),
        "phi-4-mini": json_list_at_start("<|assistant|>", ("<|end|>", "<|endoftext|>"), lead="functools"),
        "llama4-json": _llama4_json(),
        "gemma4": _gemma4(),
        "functiongemma": _functiongemma(),
        "gigachat3": _gigachat3(),
        "internlm2": _internlm2(),
        "cohere-command-r7b": _cohere(),
    }
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
    ap.add_argument("--timing", choices=_timing.MODES, default="warm", help="how each run is timed (_timing.py)")
    args = ap.parse_args(argv)
    _timing.set_mode(args.timing)
    names = _corpus.template_names([t for t in args.templates.split(",") if t] or None)
    print(f"## CPython floor vs parse_response (template dict reused), CPU µs per response, best of {args.repeats}")
    print(f"{'template':20s} | {'ours':>7s} {'floor':>7s} {'ours/floor':>10s} | {'check':>6s} {'ours/(floor+check)':>18s}")
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

        def ours(cases=cases, tpl=tpl) -> None:
            for c in cases:
                parse_response(c.text, tpl, prefix=c.prefix)

        def floor(cases=cases, fn=fn) -> None:
            for c in cases:
                fn(c.text, c.prefix)

        snapshot = copy.deepcopy(tpl)  # (new containers, the same strings: as the compiled template's snapshot)

        def check_dict(cases=cases, tpl=tpl, snapshot=snapshot) -> None:
            for _ in cases:
                if not tpl == snapshot:
                    raise AssertionError

        runs = [("ours", ours), ("floor", floor), ("check", check_dict)]
        best = {k: v / len(cases) * 1e6 for k, v in _timing.best_alternating(runs, args.repeats).items()}
        print(f"{name:20s} | {best['ours']:7.1f} {best['floor']:7.1f} {best['ours'] / best['floor']:9.2f}x | "
              f"{best['check']:6.2f} {best['ours'] / (best['floor'] + best['check']):17.2f}x")
    if failed:
        print(f"floors that do not give our message: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
