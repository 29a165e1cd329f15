"""Differential analysis of probe renders: where each value lands, and what surrounds it.

Every function here takes rendered :class:`~.probe.Probe` objects and returns plain findings; none of
them renders anything. The sentinels of :mod:`.probe` are searched for in the generations, and the
text around them gives the delimiters:

* content framing and the end of turn: ``generation = OPEN + CONTENT + END``;
* reasoning: ``generation = R_OPEN + REASONING + R_CLOSE + CONTENT ...``; an empty ``R_OPEN`` means the
  prompt pre-opens the reasoning;
* tool calls: the single-call render locates the call's *core* (the name and the arguments); the
  two-call render, compared with it, splits the text around the core into the container (written once)
  and the per-call markers (written for each call), and gives the separator between calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as _field
from typing import Any

import regex

from ..content import parse_json, parse_python_call_list
from .probe import CONTENT, CONTENT_2, REASONING, TOOL_RESULT, Probe, probe_calls

__all__ = [
    "Content",
    "Finding",
    "Reasoning",
    "ToolFormat",
    "common_prefix",
    "common_suffix",
    "first_marker",
    "ws_regex",
    "find_anchors",
    "find_content",
    "find_reasoning",
    "find_tool_format",
    "find_turn_end_after_calls",
    "find_repeated_headers",
    "find_named_markers",
    "NamedMarkers",
]

#: A special-token-like marker: <...>, <|...|>, <｜...｜>, [UPPER_CASE] (Mistral), <|"|> ...
_MARKER = regex.compile(r"<[^<>\s]{1,64}>|\[/?[A-Z][A-Z_]{1,30}\]")


@dataclass
class Finding:
    """One piece of evidence: what was found, from which probes, and whether it was seen or guessed."""

    field: str
    what: str
    value: Any
    probes: list[str] = _field(default_factory=list)
    guessed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "what": self.what, "value": self.value, "probes": list(self.probes),
                "source": "guessed" if self.guessed else "rendered"}


def common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def common_suffix(a: str, b: str) -> str:
    return common_prefix(a[::-1], b[::-1])[::-1]


# --------------------------------------------------------------------------- named markers


#: a marker, a name and a marker (``<|close|>think<|sep|>``); an open may have attributes after the name
_NAMED = regex.compile(r"(<[^<>\s]{1,64}>)([A-Za-z_][\w.-]{0,30})((?:\s[^<>]{0,200})?)(<[^<>\s]{1,64}>)")


@dataclass
class NamedMarkers:
    """Markers written as MARKER NAME MARKER, each one delimiter (Kimi K3: ``<|open|>think<|sep|>`` ...
    ``<|close|>think<|sep|>``).

    The analysis reads every such marker as a single token: ``hide`` puts a placeholder in its place in
    the renders, ``show`` puts the markers back into what the analysis found (literals and regexes).
    """

    #: marker text -> its placeholder
    tokens: dict[str, str]

    def hide(self, text: str | None) -> str | None:
        if not text:
            return text
        for marker, token in self.tokens.items():
            text = text.replace(marker, token)
        return text

    def hide_probe(self, p: Probe) -> Probe:
        return replace(p, prefix=self.hide(p.prefix), generation=self.hide(p.generation),
                       history_generation=self.hide(p.history_generation),
                       generation_prompt=self.hide(p.generation_prompt))

    def show(self, value: Any) -> Any:
        if isinstance(value, str):
            for marker, token in self.tokens.items():
                value = value.replace(regex.escape(token), regex.escape(marker)).replace(token, marker)
            return value
        if isinstance(value, list):
            return [self.show(v) for v in value]
        if isinstance(value, dict):
            return {self.show(k): self.show(v) for k, v in value.items()}
        return value


def find_named_markers(probes: Sequence[Probe]) -> tuple[NamedMarkers | None, list[Finding]]:
    """Markers written MARKER NAME MARKER, where one name is opened and closed by different leading markers.

    ``<|open|>think<|sep|>`` and ``<|close|>think<|sep|>`` share the name and the trailing marker; when the
    leading markers also frame several names (``<|close|>response<|sep|>``, ...), every such
    ``<|close|>NAME<|sep|>`` (and every open written without attributes) is one delimiter. A role header
    (``<|start|>assistant<|channel|>``) has one leading marker per name, so it stays as it is.
    """
    leads: dict[tuple[str, str], set[str]] = {}
    names: dict[str, set[str]] = {}
    plain: dict[str, list[str]] = {}
    for p in probes:
        for text in (p.prefix, p.generation, p.history_generation, p.generation_prompt or ""):
            for m in _NAMED.finditer(text, overlapped=True):
                lead, name, attrs, tail = m.groups()
                leads.setdefault((name, tail), set()).add(lead)
                names.setdefault(lead, set()).add(name)
                if not attrs:
                    plain.setdefault(m.group(0), [])
                    if p.name not in plain[m.group(0)]:
                        plain[m.group(0)].append(p.name)
    found = {}
    for marker, probe_names in plain.items():
        lead, name, _, tail = _NAMED.fullmatch(marker).groups()
        if len(leads[(name, tail)]) >= 2 and len(names[lead]) >= 2:
            found[marker] = probe_names
    if not found:
        return None, []
    tokens = {m: f"<|zqm{i}|>" for i, m in enumerate(sorted(found, key=len, reverse=True))}
    return NamedMarkers(tokens), [Finding("markers", "MARKER NAME MARKER read as one delimiter", m, found[m][:3])
                                  for m in found]


def first_marker(text: str) -> str:
    """The first delimiter of ``text`` (stripped): a leading special-token-like marker, else the whole text."""
    text = text.strip()
    m = _MARKER.match(text)
    return m.group(0) if m else text


def _ok(probes: Iterable[Probe], prefix: str) -> list[Probe]:
    return [p for p in probes if p.ok and (p.name == prefix or p.name.startswith(prefix + ":"))]


# --------------------------------------------------------------------------- reasoning


@dataclass
class Reasoning:
    """The reasoning field: the message key it is read from and its markers."""

    key: str
    open: str
    close: str
    #: the prompt opens the reasoning block itself (DeepSeek-R1, Qwen3-Thinking)
    pre_opened: bool = False
    only_with_tool_calls: bool = False


def find_reasoning(probes: Sequence[Probe], chat_template: str = "") -> tuple[Reasoning | None, list[Finding]]:
    """Which message key the chat template renders reasoning from, and its open and close markers.

    When several keys render (Transformers 5 maps ``reasoning_content`` and ``thinking`` onto each
    other), a key the chat template names itself is preferred.
    """
    found: list[Finding] = []

    def named_first(group: list[Probe]) -> list[Probe]:
        return sorted(group, key=lambda p: p.name.split(":", 1)[1] not in chat_template)

    plain = named_first([p for p in _ok(probes, "reasoning") if REASONING in p.generation and CONTENT in p.generation])
    with_calls = named_first([p for p in _ok(probes, "tool_call_reasoning") if REASONING in p.generation])
    for group, only_calls in ((plain, False), (with_calls, True)):
        if not group:
            continue
        p = group[0]
        key = p.name.split(":", 1)[1]
        i = p.generation.index(REASONING)
        before, after = p.generation[:i], p.generation[i + len(REASONING) :]
        close = first_marker(after)
        open_ = before.strip()
        pre_opened = False
        if not open_:
            # the prompt opened the block: its last marker is the open
            tail = p.prefix.rstrip()
            m = list(_MARKER.finditer(tail[-200:]))
            open_ = m[-1].group(0) if m else ""
            pre_opened = True
        if not open_ or not close:
            continue
        names = [q.name for q in group]
        found.append(Finding("reasoning", "message key read by the chat template", key, names))
        found.append(Finding("reasoning", "open marker", open_, names, guessed=pre_opened))
        found.append(Finding("reasoning", "close marker", close, names))
        if pre_opened:
            found.append(Finding("reasoning", "the prompt pre-opens the reasoning block", True, names))
        return Reasoning(key, open_, close, pre_opened, only_calls), found
    # Not rendered in history. A prompt that pre-opens a block whose close the template also writes
    # (DeepSeek-R1 strips reasoning from history but prompts with "<think>\n") still tells the markers.
    for p in probes:
        if not p.generation_prompt:
            continue
        m = list(_MARKER.finditer(p.generation_prompt))
        if m and m[-1].end() >= len(p.generation_prompt.rstrip()):
            open_ = m[-1].group(0)
            close = open_[0] + "/" + open_[1:] if not open_.startswith("</") else ""
            if close and close in p.prefix + p.generation + p.history_generation + chat_template:
                found.append(Finding("reasoning", "open marker (the prompt pre-opens it)", open_, [p.name], True))
                found.append(Finding("reasoning", "close marker", close, [p.name], True))
                return Reasoning("reasoning_content", open_, close, True), found
    # A prompt that pre-closes an empty block (thinking off: "<think>\n\n</think>") names the markers too.
    for p in probes:
        m = regex.search(r"(<([^<>\s/|]+)>)\s*(</\2>)\s*$", p.generation_prompt or "")
        if m:
            found.append(Finding("reasoning", "open marker (an empty block the prompt writes)", m.group(1), [p.name],
                                 True))
            found.append(Finding("reasoning", "close marker", m.group(3), [p.name], True))
            return Reasoning("reasoning_content", m.group(1), m.group(3), False), found
    return None, found


def strip_reasoning_block(text: str, reasoning: Reasoning | None) -> str:
    """``text`` without a leading (usually empty) reasoning block or a leading stray close."""
    if reasoning is None:
        return text
    t = text.lstrip()
    if t.startswith(reasoning.open):
        j = t.find(reasoning.close, len(reasoning.open))
        if j >= 0:
            return t[j + len(reasoning.close) :]
    if t.startswith(reasoning.close):
        return t[len(reasoning.close) :]
    return text


# --------------------------------------------------------------------------- content and anchors


@dataclass
class Content:
    """The answer text: its open marker (empty: the implicit field) and every end of turn found."""

    open: str
    closes: list[str]
    #: text some renders write before an implicit answer and others do not (Hunyuan: "助手：" after a tool result)
    optional_opens: list[str] = _field(default_factory=list)


def find_content(probes: Sequence[Probe], reasoning: Reasoning | None) -> tuple[Content | None, list[Finding]]:
    """How the answer text is framed: an explicit open (or none: the implicit field) and the end of turn."""
    opens: dict[str, list[str]] = {}
    closes: dict[str, list[str]] = {}
    trailing: dict[str, list[str]] = {}
    renders = [(p.name, p.generation, "", p.prefix) for p in probes if p.ok and p.name.startswith("content")]
    if not any(CONTENT in g for _, g, _, _ in renders):
        # no answer continues its prompt (MiniMax-M2 writes the turn without the "<think>" its prompt
        # opens): how history writes the answer still shows its framing
        renders = [(p.name + " (history)", p.history_generation, (p.generation_prompt or "").strip(), "")
                   for p in probes if not p.ok and p.name.startswith("content") and p.history_generation]
    unopened: dict[str, str] = {}
    for name, generation, header, prefix in renders:
        if CONTENT not in generation:
            continue
        i = generation.index(CONTENT)
        before = strip_reasoning_block(generation[:i], reasoning).strip()
        if header and before.startswith(header):  # history writes the role header the prompt would give
            before = strip_reasoning_block(before[len(header) :], reasoning).strip()
        opens.setdefault(before, []).append(name)
        if not before:
            unopened[name] = prefix.rstrip()
        after = generation[i + len(CONTENT) :]
        close = first_marker(after)
        if close:
            closes.setdefault(close, []).append(name)
            # the marker after the answer's own close ends the turn (<|END_RESPONSE|><|END_OF_TURN_TOKEN|>)
            turn_end = first_marker(after[after.find(close) + len(close) :])
            if turn_end and _MARKER.fullmatch(turn_end):
                trailing.setdefault(turn_end, []).append(name)
    # an earlier answer in history ends where the next turn starts (GLM: <|user|>, <|observation|>):
    # a model stops there too
    for p in probes:
        if not p.ok or CONTENT_2 not in p.prefix:
            continue
        close = first_marker(p.prefix[p.prefix.index(CONTENT_2) + len(CONTENT_2) :])
        if close and _MARKER.fullmatch(close):
            closes.setdefault(close, []).append(p.name + " (history)")
    # an answer with no open of its own after a prompt that ends with an open other answers write (Kimi K3,
    # thinking off: the prompt writes <|open|>response<|sep|>): the prompt pre-opens it
    pre_opened = []
    for name, prefix in unopened.items():
        k = next((k for k in opens if k and _MARKER.fullmatch(k) and prefix.endswith(k)), None)
        if k is not None:
            opens[""].remove(name)
            opens[k].append(name)
            pre_opened.append(name)
    if "" in opens and not opens[""]:
        del opens[""]
    if not opens:
        return None, []
    open_ = max(opens, key=lambda k: len(opens[k]))
    optional = [k for k in opens if k] if "" in opens else []
    if optional:
        open_ = ""
    found = [Finding("content", "open marker" if open_ else "implicit (no open marker)", open_, opens[open_])]
    if pre_opened and open_:
        found.append(Finding("content", "the prompt pre-opens the answer in some turns", True, pre_opened))
    for k in optional:
        found.append(Finding("content", "written before the answer in some turns only", k, opens[k]))
    if open_:  # an answer with an open of its own: what follows its close ends the turn
        for end, names in trailing.items():
            closes.setdefault(end, names)
    for close, names in closes.items():
        found.append(Finding("content", "end of turn", close, names))
    return Content(open_, list(closes), optional), found


def find_anchors(probes: Sequence[Probe], reasoning: Reasoning | None,
                 content: Content | None = None) -> tuple[list[str], list[Finding]]:
    """Where the assistant message starts in the prompt.

    The generation prompt (what ``add_generation_prompt=True`` appends) when the template has one;
    otherwise the text after the last user or tool message. A reasoning block the prompt opens is cut
    off (the parser must read it as part of the stream); a close the prompt writes alone (thinking
    off: ``</think>``) stays in the anchor. So is an answer open the prompt writes (``content``'s open).
    """
    def cut(a: str | None) -> str | None:
        for opened in (reasoning.open if reasoning else "", content.open if content else ""):
            j = a.find(opened) if a and opened else -1
            if j > 0:
                a = a[:j]
        return a if a and a.strip() else None

    anchors: dict[str, list[str]] = {}
    for p in probes:
        if not p.ok and not p.prefix:  # a prompt is real even when history does not continue it
            continue
        a = cut(p.generation_prompt)
        if a is None:
            # the text after the message the assistant answers (skipped if the template drops it)
            sentinel = str(p.messages[-2].get("content", "")) if len(p.messages) > 1 else ""
            j = p.prefix.rfind(sentinel) if sentinel else -1
            a = p.prefix[j + len(sentinel) :] if j >= 0 else None
            if a is not None:  # from the first marker on: not the rest of a JSON-wrapped tool result
                m = _MARKER.search(a)
                a = a[m.start() :] if m else a
            a = cut(a)
        if a is None:
            continue
        anchors.setdefault(a, []).append(p.name)
    # keep the shortest of anchors that end the same way (a suffix cuts the prompt at the same place)
    keep = [a for a in anchors if not any(b != a and a.endswith(b) and b.strip() for b in anchors)]
    found = [Finding("start_anchor", "start of the assistant message in the prompt", a, anchors[a]) for a in keep]
    return keep, found


def find_repeated_headers(probes: Sequence[Probe], anchors: Sequence[str]) -> tuple[list[str], list[Finding]]:
    """Role headers the chat template writes again between the regions of one assistant turn.

    gpt-oss writes each channel as its own message: ``<|channel|>analysis<|message|>...<|end|>`` then
    ``<|start|>assistant<|channel|>final...``. The header that opened the turn (a start anchor)
    reappearing inside a generation with more of the turn after it is such a header: the fields' opens
    must take it along, or it would be text outside every region.
    """
    found: dict[str, list[str]] = {}
    for anchor in anchors:
        header = anchor.strip()
        if not header:
            continue
        for p in probes:
            j = p.generation.find(header, 1) if p.ok else -1
            # between regions: more of the turn follows (not the next turn's header after the end of turn)
            if j > 0 and p.generation[j + len(header) :].strip():
                found.setdefault(header, []).append(p.name)
    headers = list(found)
    return headers, [Finding("fields", "role header repeated between regions", h, found[h]) for h in headers]


# --------------------------------------------------------------------------- tool calls


@dataclass
class ToolFormat:
    """How tool calls are written.

    ``kind`` is ``json-object`` (``{"name": ..., "arguments": ...}``), ``json-list`` (all calls in one
    JSON array), ``name-json`` (the name outside, the arguments a JSON object), ``name-tagged`` (the name
    outside, one tag per argument), or ``pythonic`` (``[f(a=1)]``).
    """

    kind: str
    container_open: str = ""
    container_close: str = ""
    call_open: str = ""
    call_close: str = ""
    #: regex of the text between the name and the arguments (name-* kinds)
    between: str = ""
    #: dotted paths of the name and the arguments inside the JSON (json-* kinds)
    name_path: str = ""
    args_path: str = ""
    #: the start of the JSON object, for a lookahead open when there is no call marker
    json_head: str = ""
    tag_pattern: str = ""
    json_args: dict[str, Any] = _field(default_factory=dict)
    separator: str = ""
    one_call_only: bool = False


def _path_to(obj: Any, target: Any, path: str = "") -> str | None:
    if obj == target or (isinstance(obj, str) and isinstance(target, dict) and _loads(obj) == target):
        return path
    if isinstance(obj, dict):
        for k, v in obj.items():
            found = _path_to(v, target, f"{path}.{k}" if path else str(k))
            if found is not None:
                return found
    return None


def _name_args_paths(obj: Any, name: str, arguments: dict) -> tuple[str, str] | None:
    """The paths of the call's name and arguments in a JSON call object, or None.

    Either two keys (``{"name": N, "arguments": A}``, nested or not) or a one-key object whose key is the
    name (``{N: A}``, Apertus): then ``$key`` and ``$value``.
    """
    name_path, args_path = _path_to(obj, name), _path_to(obj, arguments)
    if name_path and args_path:
        return name_path, args_path
    if isinstance(obj, dict) and len(obj) == 1 and name in obj and _path_to(obj[name], arguments) == "":
        return "$key", "$value"
    return None


def _loose(value: Any) -> Any:
    """``value`` with every scalar as text: a template that writes 7 as "7" still shows the structure."""
    if isinstance(value, dict):
        return {k: _loose(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_loose(v) for v in value]
    return str(value)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _json_at(text: str, start: int, target_type: type, args: dict | None = None) -> tuple[Any, int] | None:
    """A JSON value starting at ``start`` (standard JSON, or the lax dialect ``args``) and its end."""
    if not args:
        try:
            value, end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            return None
        return (value, end) if isinstance(value, target_type) else None
    close = "}" if target_type is dict else "]"
    j = text.find(close, start)
    while j >= 0:
        try:
            value = parse_json(text[start : j + 1], args)
            if isinstance(value, target_type):
                return value, j + 1
        except ValueError:
            pass
        j = text.find(close, j + 1)
    return None


def _lax_json_args(text: str, name_end: int, arguments: dict) -> dict | None:
    """The json dialect (bare keys, custom string quotes) the arguments are written in, from the first string argument."""
    first = next(((str(k), v) for k, v in arguments.items() if isinstance(v, str)), None)
    if first is None:
        return None
    key, value = first
    k = text.find(key, name_end)
    v = text.find(value, k) if k >= 0 else -1
    if k < 0 or v < 0:
        return None
    out: dict[str, Any] = {}
    if text[k - 1] != '"':
        out["unquoted_keys"] = True
    opener = text[k + len(key) : v].lstrip('"').lstrip(":= ").strip()
    after = text[v + len(value) :]
    m = regex.match(r"[^,}\s]+", after)
    closer = m.group(0) if m else ""
    if opener and opener != '"' and closer:
        out["string_delims"] = [[opener, closer]]
    return out or None


@dataclass
class _Core:
    start: int
    end: int
    between: str = ""


def _tool_region(p: Probe, content: Content | None, reasoning: Reasoning | None) -> str:
    """The generation of a tool-call probe without the reasoning block and an empty answer block before the calls."""
    text = strip_reasoning_block(p.generation, reasoning)
    if reasoning is not None and REASONING in text:
        text = text[text.index(REASONING) + len(REASONING) :]
        text = text[text.find(reasoning.close) + len(reasoning.close) :] if reasoning.close in text else text
    if content is not None and content.open and content.closes:  # <answer></answer><calls>...
        m = regex.match(r"\s*(?:" + regex.escape(content.open) + r")?\s*" + regex.escape(content.closes[0]), text)
        if m:
            text = text[m.end() :]
    return text


def _locate_json_object(text: str, name: str, arguments: dict) -> tuple[int, int, str, str] | None:
    for m in regex.finditer(r"\{", text):
        got = _json_at(text, m.start(), dict)
        if got is None:
            continue
        value, end = got
        paths = _name_args_paths(value, name, arguments)
        if paths:
            return m.start(), end, *paths
    return None


def find_tool_format(probes: Sequence[Probe], content: Content | None,
                     reasoning: Reasoning | None) -> tuple[ToolFormat | None, list[Finding], list[str]]:
    """The tool-call format, with findings and a list of what could not be determined."""
    by_name = {p.name: p for p in probes if p.ok}
    history_form = False
    for p in probes:  # a turn that does not continue the prompt still shows the format in history
        if not p.ok and p.history_generation and p.name not in by_name:
            by_name[p.name] = replace(p, generation=p.history_generation, error="")
            history_form = history_form or p.name == "tool_call"
    calls = probe_calls()
    name1, args1 = calls[0]["function"]["name"], calls[0]["function"]["arguments"]
    name2, args2 = calls[1]["function"]["name"], calls[1]["function"]["arguments"]
    one = by_name.get("tool_call")
    if one is None or name1 not in one.generation:
        reason = next((p.error for p in probes if p.name == "tool_call" and not p.ok), "")
        return None, [], [
            "tool calls: the chat template does not render an assistant tool call"
            + (f" ({reason})" if reason else "")
        ]
    two = by_name.get("tool_calls_two")
    if two is not None and name2 not in two.generation:
        two = None
    t1 = _tool_region(one, content, reasoning)
    t2 = _tool_region(two, content, reasoning) if two else None
    names = ["tool_call"] + (["tool_calls_two"] if two else [])
    found: list[Finding] = []
    if history_form:
        found.append(Finding("tool_calls", "read from history renders (the turn does not continue the prompt)",
                             True, names, True))

    # 1. all calls in one JSON array (Command R7B, Granite)
    for m in regex.finditer(r"\[", t1):
        got = _json_at(t1, m.start(), list)
        if got and got[0] and isinstance(got[0][0], dict):
            paths = _name_args_paths(got[0][0], name1, args1)
            if paths:
                name_path, args_path = paths
                fmt = ToolFormat("json-list", container_open=t1[: m.start()].strip(),
                                 container_close=first_marker(t1[got[1] :]), name_path=name_path,
                                 args_path=args_path)
                found.append(Finding("tool_calls", "format", "all calls in one JSON array" + (
                    ", each {NAME: ARGUMENTS}" if name_path == "$key" else ""), names))
                found.append(Finding("tool_calls", "container open / close",
                                     [fmt.container_open, fmt.container_close], names))
                found.append(Finding("tool_calls", "name / arguments keys", [name_path, args_path], names))
                return fmt, found, []
    # 2. pythonic [f(a=1), g()]
    n = t1.find(name1)
    if n > 0 and t1[n + len(name1) :].lstrip().startswith("("):
        lb = t1.rfind("[", 0, n)
        for rb in [m.start() for m in regex.finditer(r"\]", t1) if m.start() > n]:
            try:
                value = parse_python_call_list(t1[lb : rb + 1], {})
            except ValueError:
                continue
            if value and value[0]["name"] == name1 and _loose(value[0]["arguments"]) == _loose(args1):
                fmt = ToolFormat("pythonic", container_open=t1[:lb].strip(), container_close=first_marker(t1[rb + 1 :]))
                found.append(Finding("tool_calls", "format", "pythonic call list", names))
                return fmt, found, []
            break
    # 3. one JSON object per call holding the name and the arguments (Hermes, Qwen3, Llama 3)
    located = _locate_json_object(t1, name1, args1)
    if located is not None:
        start, end, name_path, args_path = located
        fmt = ToolFormat("json-object", name_path=name_path, args_path=args_path)
        first_key = regex.match(r'\{\s*"[^"]+"\s*:', t1[start:])
        fmt.json_head = first_key.group(0) if first_key else "{"
        pre, post = t1[:start], t1[end:]
        cores2 = None
        if t2 is not None:
            a, b = _locate_json_object(t2, name1, args1), _locate_json_object(t2, name2, args2)
            if a and b and a[1] <= b[0]:
                cores2 = (_Core(a[0], a[1]), _Core(b[0], b[1]))
        _split_markers(fmt, pre, post, t2, cores2, content)
        found.append(Finding("tool_calls", "format", "JSON object {NAME: ARGUMENTS}" if name_path == "$key"
                             else "JSON object with name and arguments", names))
        found.append(Finding("tool_calls", "name / arguments keys", [name_path, args_path], names))
        _marker_findings(fmt, found, names)
        return fmt, found, []
    # 4. the name outside, then the arguments
    if n < 0:
        return None, [], ["tool calls: the call's name is not in the rendered call"]
    core1 = _name_core(t1, name1, args1)
    if core1 is None:
        return None, [], [
            "tool calls: the arguments after the name are neither JSON (standard or bare keys / custom quotes) "
            f"nor one tag per argument: {t1[n: n + 160]!r}"
        ]
    kind, start, end, between, extra = core1
    fmt = ToolFormat(kind, **extra)
    pre, post = t1[:start], t1[end:]
    cores2 = None
    between2 = None
    if t2 is not None:
        key_pre = None
        if kind == "name-tagged":  # the text before each key, as the first call (two arguments) shows it
            key_pre = t1[n + len(name1) + len(between) : t1.find(str(next(iter(args1))), n)]
        na = _name_core(t2, name1, args1, kind)
        nb = _name_core(t2, name2, args2, kind, key_pre)
        if na and nb and na[2] <= nb[1]:
            cores2 = (_Core(na[1], na[2]), _Core(nb[1], nb[2]))
            between2 = (na[3], nb[3])
    fmt.between = _between_regex(between, *(between2 or (between, between)))
    _split_markers(fmt, pre, post, t2, cores2, content)
    found.append(Finding("tool_calls", "format",
                         "name, then JSON arguments" if kind == "name-json" else "name, then one tag per argument",
                         names))
    found.append(Finding("tool_calls", "text between the name and the arguments", fmt.between, names))
    if fmt.tag_pattern:
        found.append(Finding("tool_calls", "argument tag pattern", fmt.tag_pattern, names))
    if fmt.json_args:
        found.append(Finding("tool_calls", "JSON dialect of the arguments", fmt.json_args, names))
    _marker_findings(fmt, found, names)
    return fmt, found, []


def _marker_findings(fmt: ToolFormat, found: list[Finding], names: list[str]) -> None:
    guessed = fmt.one_call_only
    found.append(Finding("tool_calls", "per-call open / close", [fmt.call_open, fmt.call_close], names, guessed))
    if fmt.container_open or fmt.container_close:
        found.append(Finding("tool_calls", "container open / close", [fmt.container_open, fmt.container_close],
                             names, guessed))
    if fmt.separator:
        found.append(Finding("tool_calls", "separator between calls", fmt.separator, names))
    if fmt.one_call_only:
        found.append(Finding("tool_calls", "one call per message (two calls did not render)", True, names, True))


def _name_core(text: str, name: str, arguments: dict, kind: str | None = None, key_pre: str | None = None
               ) -> tuple[str, int, int, str, dict] | None:
    """``(kind, start, end, between, extra)`` of a call written name-first, or None.

    ``kind`` (``name-json`` / ``name-tagged``) reads the call only that way: the second call of a
    two-call render must be read like the first (FunctionGemma's ``{k:<escape>v<escape>}`` reads as a
    lax JSON object when every value is a string, and as tags otherwise). ``key_pre``: the text before
    each key, as the first call showed it (a call with one argument cannot tell it from the text
    between the name and the arguments).
    """
    n = text.find(name)
    if n < 0:
        return None
    name_end = n + len(name)
    brace = text.find("{", name_end)
    if brace >= 0 and kind in (None, "name-json"):
        got = _json_at(text, brace, dict)
        if got and got[0] == arguments:
            return "name-json", n, got[1], text[name_end:brace], {}
        dialect = _lax_json_args(text, name_end, arguments)
        if dialect:
            got = _json_at(text, brace, dict, dialect)
            if got and got[0] == arguments:
                return "name-json", n, got[1], text[name_end:brace], {"json_args": dialect}
    if kind == "name-json":
        return None
    # one tag per argument: name S0 k1 S1 v1 S2 k2 S3 v2 S4
    items = [(str(k), v if isinstance(v, str) else json.dumps(v)) for k, v in arguments.items()]
    pos, spans = name_end, []
    for k, v in items:
        ki = text.find(k, pos)
        vi = text.find(str(v), ki + len(k)) if ki >= 0 else -1
        if ki < 0 or vi < 0:
            return None
        spans.append((ki, ki + len(k), vi, vi + len(str(v))))
        pos = vi + len(str(v))
    if not spans:
        return None
    s0 = text[name_end : spans[0][0]]
    s1 = text[spans[0][1] : spans[0][2]]
    if not s1.strip():
        return None
    rest = text[spans[-1][3] :]
    if len(spans) > 1:
        s2 = text[spans[0][3] : spans[1][0]]
        key_pre = _marker_start(common_suffix(s0, s2))
        val_post = common_prefix(s2, rest)[: max(0, len(s2) - len(key_pre))]
    elif key_pre is not None and s0.endswith(key_pre):
        val_post = first_marker(rest)
        val_post = rest[: rest.find(val_post) + len(val_post)] if val_post else ""
    else:
        key_pre = first_marker(s0) if s0.strip() else ""
        key_pre = s0[s0.find(key_pre) :] if key_pre else ""
        val_post = first_marker(rest)
        val_post = rest[: rest.find(val_post) + len(val_post)] if val_post else ""
    if not val_post.strip() and not key_pre.strip():
        return None
    between = s0[: len(s0) - len(key_pre)]
    mid = ws_regex(s1)
    if len(spans) > 1:  # what sits between a key and its value may depend on the value (string="true"/"false")
        s3 = text[spans[1][1] : spans[1][2]]
        if s3 != s1:
            mid = _between_regex(s1, s1, s3)
    # what separates one argument from the next besides the tags (FunctionGemma's ","): not part of the key
    key_sep = text[spans[0][3] : spans[1][0]][len(val_post) :].strip() if len(spans) > 1 else ""
    key_sep = key_sep[: len(key_sep) - len(key_pre.strip())] if key_pre.strip() and key_sep.endswith(
        key_pre.strip()) else key_sep
    pattern = ((r"(?:" + ws_regex(key_sep) + r"\s*)?" if key_sep else "") + ws_regex(key_pre)
               + r"(?P<key>[^\s<>=\"]+?)" + mid + r"(?P<value>.*?)" + ws_regex(val_post))
    end = spans[-1][3] + len(val_post)
    return "name-tagged", n, end, between, {"tag_pattern": pattern}


def _marker_start(text: str) -> str:
    """``text`` from its first marker opening (``<`` or ``[``) on, so a common suffix never starts mid-marker."""
    m = regex.search(r"[<\[]", text)
    return text[m.start() :] if m and m.start() > 0 and text[: m.start()].strip() else text


def _marker_end(text: str) -> str:
    """``text`` up to its last marker end (``>`` or ``]``), so a common prefix never ends mid-marker."""
    j = max(text.rfind(">"), text.rfind("]"))
    return text[: j + 1] if 0 <= j < len(text.rstrip()) - 1 else text


def ws_regex(literal: str) -> str:
    """A literal as a regex in which every run of whitespace matches any whitespace (or none)."""
    parts = regex.split(r"\s+", literal)
    out = r"\s*".join(regex.escape(p) for p in parts)
    return out


def _between_regex(between: str, a: str, b: str) -> str:
    """The text between name and arguments as a regex; parts that differ between calls (an index, an id) become wildcards."""
    if a == b:
        text = between
        out = ws_regex(text)
        for ident in ("Zq1234567", "Zq7654321", "Zq1112223"):
            if ident in text:
                head, tail = text.split(ident, 1)
                out = ws_regex(head) + r"[^\s]*?" + ws_regex(tail)
        return out
    pre, suf = common_prefix(a, b), common_suffix(a, b)
    # the differing part is a whole token: an id "Zq1234567" vs "Zq7654321" differs after "Zq"
    pre = pre[: len(pre) - len(regex.search(r"\w*$", pre).group(0))]
    suf = suf[len(regex.match(r"\w*", suf).group(0)) :]
    mid_a = a[len(pre) : len(a) - len(suf)]
    mid_b = b[len(pre) : len(b) - len(suf)]
    wildcard = r"\d+" if mid_a.isdigit() and mid_b.isdigit() else r"[^\s<>\[\]]*?"
    return ws_regex(pre) + wildcard + ws_regex(suf)


def _split_markers(fmt: ToolFormat, pre: str, post: str, t2: str | None,
                   cores: tuple[_Core, _Core] | None, content: Content | None) -> None:
    """Split the text around a call into container, per-call markers and separator (see the module doc)."""
    ends = set(content.closes if content else [])
    post_s = post.strip()
    for e in ends:  # the end of turn is not part of the call
        if post_s.endswith(e):
            post_s = post_s[: -len(e)].rstrip()
    if t2 is None or cores is None:
        fmt.one_call_only = True
        fmt.call_open, fmt.call_close = pre.strip(), first_marker(post_s) if post_s else ""
        rest = post_s[len(fmt.call_close) :].strip()
        fmt.container_close = first_marker(rest) if rest else ""
        return
    sep = t2[cores[0].end : cores[1].start]
    call_open = _marker_start(common_suffix(pre, sep))
    call_close = _marker_end(common_prefix(post, sep)[: max(0, len(sep) - len(call_open))])
    fmt.call_open = call_open.strip()
    fmt.container_open = pre[: len(pre) - len(call_open)].strip()
    fmt.call_close = call_close.strip()
    fmt.separator = sep[len(call_close) : len(sep) - len(call_open)].strip()
    tail = t2[cores[1].end :]  # after the last call of the two-call render (the single-call one may be cut short)
    close_len = len(common_prefix(tail, call_close))
    rest = (tail[close_len:] if close_len == len(call_close) else post[len(call_close) :]).strip()
    for e in ends:
        if rest.endswith(e):
            rest = rest[: -len(e)].strip()
    fmt.container_close = first_marker(rest) if rest else ""


def find_turn_end_after_calls(probes: Sequence[Probe], fmt: ToolFormat | None,
                              content: Content | None) -> tuple[str | None, list[Finding]]:
    """The marker that ends an assistant turn with tool calls in history, before the tool results.

    Gemma 4 writes ``<|tool_response>`` and GLM ``<|observation|>`` right after the last call; a model
    stops there too, so it is an end of the message. ``None`` when it is already a known delimiter.
    """
    if fmt is None or content is None:
        return None, []
    probe = next((p for p in probes if p.ok and p.name == "content_after_tool_result"), None)
    last_value = str(list(probe_calls()[0]["function"]["arguments"].values())[-1])
    if probe is None or last_value not in probe.prefix:
        return None, []
    start = probe.prefix.index(last_value) + len(last_value)
    stop = probe.prefix.find(TOOL_RESULT, start)
    region = probe.prefix[start : stop if stop >= 0 else len(probe.prefix)]
    known = [k for k in (fmt.call_close, fmt.container_close, *content.closes) if k]
    # after the last delimiter that closes the call or its container
    ends = [region.rfind(k) + len(k) for k in (fmt.call_close, fmt.container_close) if k and k in region]
    if not ends:
        return None, []
    tail = region[max(ends) :]
    m = _MARKER.match(tail.lstrip())
    if not m or m.group(0) in known:
        return None, []
    return m.group(0), [Finding("content", "end of a tool-call turn in history", m.group(0), [probe.name])]
