"""Render probe conversations with a chat template, safely.

A probe is one conversation, rendered the way a model sees it: the history with the generation prompt
(the *prefix*) and the text the chat template writes for the final assistant message (the
*generation*). Probes use sentinel strings (``zqc...``, ``zqr...``) that occur nowhere else, so the
analysis can find every value in the rendered text. A chat template that raises on a probe, or that
does not continue its own prompt, gives a probe with ``error`` set; it never stops the other probes.

This module imports Jinja2 (through :mod:`hf_response_templates.verify`), never Transformers directly.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..verify import RoundTripRenderError, render_chat, split_assistant_turn

__all__ = [
    "CONTENT",
    "REASONING",
    "USER",
    "Probe",
    "Prober",
    "probe_calls",
    "probe_tools",
    "thinking_flags",
]

USER = "zqu user question"
USER_2 = "zqu second ask"
SYSTEM = "zqs system text"
CONTENT = "zqc answer text"
CONTENT_2 = "zqc first reply"
REASONING = "zqr reasoning text"
TOOL_RESULT = "zqt tool output"

#: keys a chat template may read reasoning from, the standard one first
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning", "tool_plan")

#: a time of day as `strftime_now` prints it (%H:%M, %H:%M:%S, %X, %T)
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")


def probe_calls() -> list[dict]:
    """The tool calls of the probes: two calls, the first with a string and an integer argument.

    Ids are nine alphanumeric characters (Mistral's chat template insists on that).
    """
    return [
        {
            "id": "Zq1234567",
            "type": "function",
            "function": {"name": "zq_fn_one", "arguments": {"zqka": "zqva text", "zqkb": 48213}},
        },
        {
            "id": "Zq7654321",
            "type": "function",
            "function": {"name": "zq_fn_two", "arguments": {"zqkc": "zqvc text"}},
        },
    ]


#: arguments of the value-type probe: how the chat template writes each JSON type
TYPE_ARGUMENTS: dict[str, Any] = {
    "zqt_str": "61",
    "zqt_int": 62,
    "zqt_bool": True,
    "zqt_float": 6.5,
    "zqt_obj": {"zqt_in": "zqvi"},
}


def probe_tools() -> list[dict]:
    """JSON-schema tools for the probe calls (and the value-type probe)."""

    def tool(name: str, props: dict[str, str]) -> dict:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": f"Probe tool {name}.",
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": t, "description": k} for k, t in props.items()},
                    "required": list(props)[:1],
                },
            },
        }

    return [
        tool("zq_fn_one", {"zqka": "string", "zqkb": "integer"}),
        tool("zq_fn_two", {"zqkc": "string"}),
        tool(
            "zq_fn_types",
            {"zqt_str": "string", "zqt_int": "integer", "zqt_bool": "boolean", "zqt_float": "number",
             "zqt_obj": "object"},
        ),
    ]


def thinking_flags(chat_template: str) -> list[str]:
    """Template variables that look like a thinking switch (``enable_thinking``, ``thinking``, ...).

    Read from the template's undeclared variables (Jinja's own analysis), so only flags the template
    actually reads are returned.
    """
    try:
        import jinja2
        from jinja2 import meta

        env = jinja2.Environment(extensions=["jinja2.ext.loopcontrols"])
        names = meta.find_undeclared_variables(env.parse(chat_template))
    except Exception:  # noqa: BLE001 - a template Jinja cannot analyse just has no known flags
        return []
    # a flag the template defaults itself (`{% if enable_thinking is not defined %}{% set ... %}`) is
    # declared for Jinja's analysis, but still read from the caller
    names = set(names) | set(re.findall(r"(?<![\w.])(\w+)\s+is\s+(?:not\s+)?defined", chat_template))
    skip = {"messages", "tools", "add_generation_prompt"}
    flags = [n for n in names if n not in skip and ("think" in n.lower() or "reason" in n.lower())]
    return sorted(flags, key=lambda n: (n != "enable_thinking", n))


@dataclass
class Probe:
    """One rendered probe conversation.

    Attributes:
        name: what the probe varies (``content``, ``reasoning:thinking``, ``tool_call`` ...).
        messages: the conversation, ending with the assistant message.
        kwargs: template variables it was rendered with (a thinking flag).
        tools: the tools passed to the chat template.
        prefix: the prompt (history with the generation prompt).
        generation: what the chat template writes for the last assistant message.
        generation_prompt: what ``add_generation_prompt=True`` appends to the history (``None`` when
            the template always or never appends it).
        error: why the probe could not be rendered (empty when it was).
    """

    name: str
    messages: list[dict]
    kwargs: dict[str, Any] = field(default_factory=dict)
    tools: list[dict] | None = None
    prefix: str = ""
    generation: str = ""
    generation_prompt: str | None = None
    error: str = ""
    #: when the turn does not continue the prompt: how history writes it (tool-format evidence only)
    history_generation: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def _user(text: str = USER) -> dict:
    return {"role": "user", "content": text}


def _assistant(**fields: Any) -> dict:
    return {"role": "assistant", **fields}


def content_none(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    """A copy of ``messages`` whose tool-call messages have ``content=None``."""
    out = copy.deepcopy([dict(m) for m in messages])
    for message in out:
        if message.get("tool_calls"):
            message["content"] = None
    return out


def _text_arguments(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(isinstance(c.get("function", {}).get("arguments"), str)
               for m in messages for c in m.get("tool_calls") or [])


def arguments_as_text(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    """A copy of ``messages`` whose tool-call arguments are JSON text (DeepSeek's templates concatenate them)."""
    out = copy.deepcopy([dict(m) for m in messages])
    for message in out:
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            if isinstance(fn.get("arguments"), Mapping):
                fn["arguments"] = json.dumps(fn["arguments"], ensure_ascii=False)
    return out


class Prober:
    """Renders probes with one chat template.

    Args:
        chat_template: the Jinja source.
        special_tokens: ``bos_token``, ``eos_token``, ... as ``apply_chat_template`` passes them.
        kwargs: template variables every probe gets (on top of each probe's own).
    """

    def __init__(
        self,
        chat_template: str,
        special_tokens: Mapping[str, str] | None = None,
        kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.chat_template = chat_template
        self.special_tokens = dict(special_tokens or {})
        self.kwargs = dict(kwargs or {})
        #: the template prints the time of day (Hunyuan: seconds), so two renders may differ by a tick:
        #: a render that does not continue its prompt is retried (Transformers 5 does not let a render
        #: replace `strftime_now`, so the clock cannot simply be frozen)
        self.clock_dependent = bool(re.search(r"strftime_now\([^)]*%[HMSIXTcr]", chat_template))
        #: the template needs tool-call arguments as JSON text (set by the first tool probe that shows it)
        self.arguments_as_text = False
        #: the template raises without a tools list (Hermes 3's tool_use template)
        self.needs_tools = False
        #: the template renders tool calls only when the message's content is None (DeepSeek-R1)
        self.tool_call_content_none = False
        #: set by _history_form for the failing probe being rendered
        self._last_generation_prompt: str | None = None
        self._last_prompt = ""

    def render(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool,
               tools: list[dict] | None = None, **kwargs: Any) -> str:
        """One render (exceptions propagate)."""
        return render_chat(
            self.chat_template,
            messages,
            tools=tools,
            add_generation_prompt=add_generation_prompt,
            special_tokens=self.special_tokens,
            **{**self.kwargs, **kwargs},
        )

    def probe(self, name: str, messages: list[dict], *, tools: list[dict] | None = None,
              **kwargs: Any) -> Probe:
        """Render one probe; a failure is recorded in ``Probe.error``, never raised.

        A probe without tools that raises is retried with the probe tools; a tool-call probe that raises
        or loses its arguments is retried with the arguments as JSON text, and with ``content=None`` on
        its tool-call messages. What worked is remembered (``arguments_as_text``, ``needs_tools``,
        ``tool_call_content_none``) and used by later probes and by the proof. A turn that does not
        continue its prompt still records the prompt and how history writes the turn
        (``history_generation``).
        """
        has_calls = any(m.get("tool_calls") for m in messages)
        last_calls = bool(messages[-1].get("tool_calls"))
        if tools is None and self.needs_tools:
            tools = probe_tools()
        attempts: list[tuple[list[dict], list[dict] | None]] = []
        if has_calls and self.arguments_as_text:
            attempts.append((arguments_as_text(messages), tools))
        attempts.append((messages, tools))
        if tools is None:
            attempts.append((messages, probe_tools()))
        if has_calls and not self.arguments_as_text:
            attempts.append((arguments_as_text(messages), tools))
        if has_calls:  # DeepSeek-R1 renders a tool-call turn only when its content is None
            attempts.append((content_none(messages), tools))
            attempts.append((arguments_as_text(content_none(messages)), tools))
        errors: list[str] = []
        history, prompt, prefix = "", None, ""
        as_repr: tuple[Probe, list[dict], list[dict] | None] | None = None

        def accept(result: Probe, msgs: list[dict], tls: list[dict] | None) -> Probe:
            if tls is not None and tools is None:
                self.needs_tools = True
            if has_calls and msgs is not messages:
                self.arguments_as_text = self.arguments_as_text or _text_arguments(msgs)
                self.tool_call_content_none = self.tool_call_content_none or any(
                    m.get("tool_calls") and m.get("content") is None for m in msgs)
            return result

        for msgs, tls in attempts:
            result = self._one(name, msgs, tls, kwargs)
            if result.ok and last_calls and not self._arguments_rendered(messages[-1], result.generation):
                result.error = "the rendered turn does not contain the tool-call arguments"
            if result.ok and last_calls and self._arguments_as_repr(msgs[-1], result.generation):
                # Python's str() of the arguments ({'k': 'v'}: the template prints them with |string): JSON
                # text may render as JSON; the first such render is kept in case no retry works
                as_repr = as_repr or (result, msgs, tls)
                continue
            if result.ok:
                return accept(result, msgs, tls)
            errors.append(result.error)
            prompt = prompt or result.generation_prompt
            prefix = prefix or result.prefix
            if result.history_generation and (not history or ("zq_fn" in result.history_generation
                                                               and "zq_fn" not in history)):
                history = result.history_generation
        if as_repr is not None:
            return accept(*as_repr)
        errors = list(dict.fromkeys(errors))
        return Probe(name, messages, kwargs, tools, prefix=prefix, error="; ".join(errors),
                     history_generation=history, generation_prompt=prompt)

    def _history_form(self, messages: list[dict], tools: list[dict] | None, kwargs: dict) -> str:
        """How the turn is written in history when it does not continue the prompt (e.g. DeepSeek-R1).

        The text the full render adds after the history, less the part it shares with the generation
        prompt (the assistant header). Used only to read the tool-call format, never for the proof.
        """
        try:
            history = self.render(messages[:-1], add_generation_prompt=False, tools=tools, **kwargs)
            prompt = self.render(messages[:-1], add_generation_prompt=True, tools=tools, **kwargs)
            full = self.render(messages, add_generation_prompt=False, tools=tools, **kwargs)
        except Exception:  # noqa: BLE001
            return ""
        if not (full.startswith(history) and prompt.startswith(history)):
            return ""
        turn, header = full[len(history) :], prompt[len(history) :]
        self._last_generation_prompt = header or None
        self._last_prompt = prompt
        n = 0
        while n < min(len(turn), len(header)) and turn[n] == header[n]:
            n += 1
        opened = max(turn.rfind("<", 0, n), turn.rfind("[", 0, n))
        if opened >= 0 and max(turn.rfind(">", opened, n), turn.rfind("]", opened, n)) < 0:
            n = opened  # never cut inside a marker the two share only the start of
        return turn[n:]

    @staticmethod
    def _arguments_as_repr(message: Mapping[str, Any], generation: str) -> bool:
        """Some call's arguments (a mapping with a string value) appear as Python's ``str()`` of the dict."""
        return any(isinstance(arguments, Mapping) and any(isinstance(v, str) for v in arguments.values())
                   and str(dict(arguments)) in generation
                   for arguments in (c.get("function", {}).get("arguments") for c in message.get("tool_calls") or []))

    @staticmethod
    def _arguments_rendered(message: Mapping[str, Any], generation: str) -> bool:
        for call in message.get("tool_calls") or []:
            arguments = call.get("function", {}).get("arguments")
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            if any(str(key) not in generation for key in arguments or {}):
                return False
        return True

    def without_clock(self, text: str) -> str:
        """``text`` with times of day blanked when the template prints the clock, so two renders a tick apart
        compare equal (the derivation drops a thinking setting that renders exactly like another one)."""
        return _CLOCK.sub("hh:mm:ss", text) if self.clock_dependent and text else text

    def _one(self, name: str, messages: list[dict], tools: list[dict] | None, kwargs: dict) -> Probe:
        for _attempt in range(4 if self.clock_dependent else 1):
            probe = self._render_probe(name, messages, tools, kwargs)
            if probe.ok or "RoundTripRenderError" not in probe.error:
                break
        return probe

    def _render_probe(self, name: str, messages: list[dict], tools: list[dict] | None, kwargs: dict) -> Probe:
        probe = Probe(name, messages, dict(kwargs), tools)
        try:
            probe.prefix, probe.generation = split_assistant_turn(
                self.chat_template,
                messages,
                tools=tools,
                special_tokens=self.special_tokens,
                **{**self.kwargs, **kwargs},
            )
        except Exception as exc:  # noqa: BLE001 - recorded: one bad probe never sinks the analysis
            probe.error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, RoundTripRenderError):
                self._last_generation_prompt, self._last_prompt = None, ""
                probe.history_generation = self._history_form(messages, tools, kwargs)
                probe.generation_prompt, probe.prefix = self._last_generation_prompt, self._last_prompt
            return probe
        try:
            history = messages[:-1]
            for _attempt in range(3 if self.clock_dependent else 1):
                plain = self.render(history, add_generation_prompt=False, tools=tools, **kwargs)
                prompt = self.render(history, add_generation_prompt=True, tools=tools, **kwargs)
                if prompt.startswith(plain):
                    if len(prompt) > len(plain):
                        probe.generation_prompt = prompt[len(plain) :]
                    break
        except Exception:  # noqa: BLE001 - the generation prompt is extra evidence only
            pass
        return probe

    # ------------------------------------------------------------------ the standard probe set

    def standard_probes(self, flag: str | None = None, value: Any = None) -> list[Probe]:
        """The probe set for one thinking setting (``flag=value``; no flag: the template's default)."""
        kw = {} if flag is None else {flag: value}
        calls = probe_calls()
        one = [calls[0]]
        tools = probe_tools()
        probes = [
            self.probe("content", [_user(), _assistant(content=CONTENT)], **kw),
            self.probe(
                "content_after_system",
                [{"role": "system", "content": SYSTEM}, _user(), _assistant(content=CONTENT)],
                **kw,
            ),
            self.probe(
                "content_after_history",
                [_user(USER_2), _assistant(content=CONTENT_2), _user(), _assistant(content=CONTENT)],
                **kw,
            ),
        ]
        probes.append(self.probe("content_with_tools", [_user(), _assistant(content=CONTENT)], tools=tools, **kw))
        for key in REASONING_KEYS:
            probes.append(
                self.probe(f"reasoning:{key}", [_user(), _assistant(content=CONTENT, **{key: REASONING})], **kw)
            )
        probes.append(self.probe("tool_call", [_user(), _assistant(content="", tool_calls=one)], tools=tools, **kw))
        probes.append(
            self.probe("tool_calls_two", [_user(), _assistant(content="", tool_calls=calls)], tools=tools, **kw)
        )
        probes.append(
            self.probe(
                "tool_call_second",
                [_user(), _assistant(content="", tool_calls=[calls[1]])],
                tools=tools,
                **kw,
            )
        )
        for key in REASONING_KEYS:
            probes.append(
                self.probe(
                    f"tool_call_reasoning:{key}",
                    [_user(), _assistant(content="", tool_calls=one, **{key: REASONING})],
                    tools=tools,
                    **kw,
                )
            )
        types_call = {"id": "Zq1112223", "type": "function",
                      "function": {"name": "zq_fn_types", "arguments": dict(TYPE_ARGUMENTS)}}
        probes.append(
            self.probe("tool_call_types", [_user(), _assistant(content="", tool_calls=[types_call])],
                       tools=tools, **kw)
        )
        probes.append(
            self.probe(
                "content_after_tool_result",
                [
                    _user(),
                    _assistant(content="", tool_calls=one),
                    {"role": "tool", "name": "zq_fn_one", "tool_call_id": one[0]["id"], "content": TOOL_RESULT},
                    _assistant(content=CONTENT),
                ],
                tools=tools,
                **kw,
            )
        )
        return probes
