"""Derive a response template from a chat template, and prove it by round trip.

A chat template turns messages into text; a response template reads the text back. ``derive`` works
the second out of the first: it renders probe conversations with the chat template (Transformers'
own renderer, the tokenizer's special tokens), finds by differential analysis where each value of the
message lands and what surrounds it, assembles a response template from those parts, and proves it
with :func:`~hf_response_templates.verify.verify_round_trip` on every thinking setting the template
reads::

    from hf_response_templates.derive import derive

    result = derive("path/to/tokenizer")          # a folder, a Hub id, a tokenizer or a Jinja string
    result.ok                                     # the proof passed
    result.template                               # the response template (plain JSON data)
    print(result.report())                        # per-field evidence, proof per case, what is unknown

If the chat template is one the library ships a template for, that template is returned (and still
proven); pass ``use_library=False`` to derive it anyway. A template that cannot be proven is never
returned silently: ``ok`` is false and ``problems`` says what failed or could not be determined.

The steps live in submodules: :mod:`.probe` (rendering), :mod:`.analyze` (the differential
analysis), :mod:`.assemble` (building the template). This package never imports Transformers unless
it is given a folder or Hub id to load a tokenizer from.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..verify import sample_conversations, sample_tools, verify_round_trip
from .analyze import (
    Finding,
    find_anchors,
    find_content,
    find_named_markers,
    find_reasoning,
    find_repeated_headers,
    find_tool_format,
    find_turn_end_after_calls,
)
from .assemble import assemble
from .probe import Probe, Prober, arguments_as_text, content_none, thinking_flags

__all__ = ["DeriveResult", "ProofCase", "derive", "load_chat_template"]


@dataclass
class ProofCase:
    """One round-trip case of the proof: ``status`` is ``pass``, ``fail`` or ``n/a``.

    ``n/a`` means no response template could pass the case: the chat template does not continue its own
    prompt for it, or does not render a value of the message at all (reasoning it drops, say).
    """

    name: str
    setting: dict[str, Any]
    status: str
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "setting": dict(self.setting), "status": self.status, "detail": self.detail}


@dataclass
class DeriveResult:
    """What :func:`derive` found.

    Attributes:
        template: the response template (``None`` when not even the content could be found).
        ok: the proof passed (no failing case and at least one passing case).
        source: ``"library:<name>"`` for a shipped template, ``"derived"`` otherwise.
        confidence: ``high`` (proven, every part seen in renders), ``medium`` (proven, some part
            guessed), ``low`` (not proven).
        evidence: one record per finding (field, what, value, probes, ``rendered`` or ``guessed``).
        proof: the round-trip cases.
        problems: what failed or could not be determined, in words.
        probes: every probe rendered (with its error if it raised).
    """

    template: dict | None
    ok: bool
    source: str
    confidence: str
    evidence: list[Finding] = field(default_factory=list)
    proof: list[ProofCase] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list, repr=False)
    #: what the chat template does not show, so the template has no field for it (informational)
    undetermined: list[str] = field(default_factory=list)

    @property
    def derived_fields(self) -> list[str]:
        """The template's fields, in order."""
        return list((self.template or {}).get("fields", {}))

    def summary(self) -> dict[str, int]:
        """How many proof cases passed, failed and were not applicable."""
        out = {"pass": 0, "fail": 0, "n/a": 0}
        for case in self.proof:
            out[case.status] += 1
        return out

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``--json`` output of the CLI)."""
        return {
            "ok": self.ok,
            "source": self.source,
            "confidence": self.confidence,
            "template": self.template,
            "fields": self.derived_fields,
            "proof": [c.as_dict() for c in self.proof],
            "proof_summary": self.summary(),
            "evidence": [e.as_dict() for e in self.evidence],
            "problems": list(self.problems),
            "undetermined": list(self.undetermined),
        }

    def report(self) -> str:
        """A human-readable report."""
        s = self.summary()
        lines = [
            f"derive: {'PROVEN' if self.ok else 'NOT PROVEN'} ({self.source}, confidence {self.confidence}); "
            f"proof: {s['pass']} pass, {s['fail']} fail, {s['n/a']} n/a",
            "fields: " + (", ".join(self.derived_fields) or "none"),
        ]
        for e in self.evidence:
            tag = " (guessed)" if e.guessed else ""
            lines.append(f"  {e.field}: {e.what}: {e.value!r}{tag}")
        for c in self.proof:
            setting = ", ".join(f"{k}={v!r}" for k, v in c.setting.items()) or "default"
            lines.append(f"  [{c.status}] {c.name} ({setting}){': ' + c.detail if c.detail else ''}")
        for p in self.problems:
            lines.append(f"  problem: {p}")
        for u in self.undetermined:
            lines.append(f"  not determined: {u}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- inputs


def load_chat_template(source: Any) -> tuple[str, dict[str, str], Any]:
    """``(chat_template, special_tokens, tokenizer_or_None)`` from a Jinja string, a tokenizer, or a path / Hub id.

    A folder is read without Transformers when it holds ``chat_template.jinja`` or a
    ``tokenizer_config.json`` with a ``chat_template``; a Hub id is loaded with ``AutoTokenizer``.
    """
    if isinstance(source, str) and ("{%" in source or "{{" in source):
        return source, {}, None
    if isinstance(source, (str, Path)) and Path(source).exists():
        folder = Path(source)
        if folder.is_file():
            return folder.read_text(encoding="utf-8"), {}, None
        config: dict[str, Any] = {}
        if (folder / "tokenizer_config.json").exists():
            config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        specials = {k: _token_text(config[k]) for k in ("bos_token", "eos_token", "unk_token", "pad_token")
                    if config.get(k)}
        if (folder / "chat_template.jinja").exists():
            return (folder / "chat_template.jinja").read_text(encoding="utf-8"), specials, None
        template = config.get("chat_template")
        if isinstance(template, list):
            named = {t.get("name"): t.get("template") for t in template if isinstance(t, Mapping)}
            template = named.get("tool_use") or named.get("default")
        if isinstance(template, str):
            return template, specials, None
    if isinstance(source, (str, Path)):
        from transformers import AutoTokenizer

        source = AutoTokenizer.from_pretrained(str(source))
    template = getattr(source, "chat_template", None)
    if isinstance(template, Mapping):
        template = template.get("tool_use") or template.get("default")
    if not isinstance(template, str):
        raise ValueError(f"{source!r} has no chat template to derive a response template from")
    specials = {k: str(v) for k, v in (getattr(source, "special_tokens_map", None) or {}).items()
                if isinstance(v, str)}
    return template, specials, source


def _token_text(value: Any) -> str:
    return value.get("content", "") if isinstance(value, Mapping) else str(value)


# --------------------------------------------------------------------------- proof


def _proof_conversations(template: dict, prober: Prober, max_calls: int | None) -> dict[str, list[dict]]:
    cases = sample_conversations(template, max_tool_calls=max_calls)
    ids = iter(f"Ab{n:07d}" for n in range(1, 1000))
    for name, messages in list(cases.items()):
        for message in messages:
            for call in message.get("tool_calls") or []:
                call.setdefault("id", next(ids))
        for i, message in enumerate(messages):
            if message.get("role") == "tool":
                previous = next(m for m in reversed(messages[:i]) if m.get("tool_calls"))
                message.setdefault("tool_call_id", previous["tool_calls"][0]["id"])
        if prober.tool_call_content_none:
            messages = cases[name] = content_none(messages)
        if prober.arguments_as_text:
            cases[name] = arguments_as_text(messages)
    return cases


def _values(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, Mapping):
        return [v for k, x in obj.items() if k not in ("type", "role", "id") for v in _values(x)]
    if isinstance(obj, list):
        return [v for x in obj for v in _values(x)]
    return []


def _prove(chat_template: str, template: dict, prober: Prober, settings: list[dict], max_calls: int | None,
           tools: Sequence[Any] | None) -> list[ProofCase]:
    cases: list[ProofCase] = []
    conversations = _proof_conversations(template, prober, max_calls)
    for setting in settings:
        results = verify_round_trip(
            chat_template,
            template,
            conversations,
            tools=tools if tools is not None else sample_tools(),
            special_tokens=prober.special_tokens,
            **{**prober.kwargs, **setting},
        )
        for r in results:
            if prober.clock_dependent and r.detail.startswith("render failed: RoundTripRenderError"):
                # the clock ticked between the two renders: try this case again (see Prober.clock_dependent)
                for _attempt in range(3):
                    [r] = verify_round_trip(chat_template, template, {r.name: conversations[r.name]},
                                            tools=tools if tools is not None else sample_tools(),
                                            special_tokens=prober.special_tokens, **{**prober.kwargs, **setting})
                    if not r.detail.startswith("render failed: RoundTripRenderError"):
                        break
            if r.passed:
                cases.append(ProofCase(r.name, setting, "pass"))
                continue
            if r.detail.startswith("render failed"):
                cases.append(ProofCase(r.name, setting, "n/a", r.detail[:300]))
                continue
            rendered = r.prefix[-200:] + r.generation
            missing = [v for v in _values(r.expected or {}) if v not in rendered and v != "assistant"
                       and json.dumps(v)[1:-1] not in rendered]
            if missing:
                cases.append(ProofCase(r.name, setting, "n/a",
                                       f"the chat template does not render {missing[0]!r} in this turn"))
            else:
                cases.append(ProofCase(r.name, setting, "fail", r.detail[:300]))
    return cases


# --------------------------------------------------------------------------- derive


def derive(
    source: Any,
    *,
    special_tokens: Mapping[str, str] | None = None,
    use_library: bool = True,
    tools: Sequence[Any] | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
) -> DeriveResult:
    """Derive (or recognise) the response template of a chat template and prove it.

    Args:
        source: a Jinja chat template string, a tokenizer (or any object with ``chat_template``), a
            tokenizer folder, a ``.jinja`` file, or a Hub repo id (loaded with ``AutoTokenizer``).
        special_tokens: ``bos_token`` / ``eos_token`` ... the chat template reads (default: the
            tokenizer's, or those in the folder's ``tokenizer_config.json``).
        use_library: return the shipped template when the chat template is a known family (still proven).
        tools: tools for the proof (default: :func:`~hf_response_templates.verify.sample_tools`).
        template_kwargs: extra chat-template variables for every render.

    Returns:
        A :class:`DeriveResult`; never raises for a chat template that raises on some probes.
    """
    chat_template, specials, tokenizer = load_chat_template(source)
    if special_tokens is not None:
        specials = dict(special_tokens)
    prober = Prober(chat_template, specials, template_kwargs)
    flags = thinking_flags(chat_template)[:2]
    settings: list[dict] = [{}] + [{f: v} for f in flags for v in (True, False)]
    probes: list[Probe] = []
    seen: list[list[tuple[str, str, str]]] = []
    kept: list[dict] = []
    for setting in settings:
        batch = prober.standard_probes(*next(iter(setting.items()), (None, None)))
        renders = [(prober.without_clock(p.prefix), prober.without_clock(p.generation), p.error) for p in batch]
        # a setting the template rejects entirely, or that renders exactly like another, adds nothing
        if setting and (not any(p.ok for p in batch) or renders in seen):
            continue
        seen.append(renders)
        kept.append(setting)
        probes.extend(batch)
    settings = kept
    if not any(p.ok for p in probes):
        errors = sorted({p.error for p in probes})
        return DeriveResult(None, False, "derived", "low", problems=[
            "no probe conversation could be rendered: " + "; ".join(e[:200] for e in errors[:3])], probes=probes)

    if use_library:
        from ..library import detect_template, get_template

        name = detect_template(tokenizer if tokenizer is not None else chat_template)
        if name is not None:
            template = get_template(name)
            proof = _prove(chat_template, template, prober, settings, None, tools)
            return _result(template, f"library:{name}", [Finding("template", "shipped family", name)], proof,
                           [], probes)

    rendered = probes
    named, found = find_named_markers(probes)
    if named is not None:  # the analysis reads each MARKER NAME MARKER as one token
        probes = [named.hide_probe(p) for p in probes]
    reasoning, reasoning_found = find_reasoning(probes, named.hide(chat_template) if named else chat_template)
    found += reasoning_found
    content, content_found = find_content(probes, reasoning)
    found += content_found
    problems: list[str] = []
    undetermined: list[str] = []
    if content is None:
        problems.append("content: no probe rendered the assistant's answer text")
    anchors, anchor_found = find_anchors(probes, reasoning, content)
    found += anchor_found
    if not anchors:
        problems.append("start_anchor: the prompt has no recognisable assistant header")
    if reasoning is None:
        undetermined.append("reasoning: the chat template renders no reasoning (no reasoning field)")
    tool_probes = [p for p in probes if p.name.startswith("tool_call")]
    fmt, tool_found, tool_problems = find_tool_format(
        [p for p in tool_probes if p.kwargs == next((q.kwargs for q in tool_probes if q.ok), {})],
        content, reasoning)
    found += tool_found
    undetermined += tool_problems
    turn_end, turn_found = find_turn_end_after_calls(probes, fmt, content)
    if turn_end is not None and content is not None:
        content.closes.append(turn_end)
        found += turn_found
    if named is not None:
        found = [replace(f, value=named.show(f.value)) for f in found]
        problems, undetermined = named.show(problems), named.show(undetermined)
    if content is None or not anchors:
        return DeriveResult(None, False, "derived", "low", found, [], problems + undetermined, rendered)
    headers, header_found = find_repeated_headers(probes, anchors)
    template = assemble(anchors, content, reasoning, fmt, headers)
    if named is not None:
        template = named.show(template)
        header_found = [replace(f, value=named.show(f.value)) for f in header_found]
    found += header_found
    probes = rendered
    try:
        from ..template import load_template

        load_template(template)
    except Exception as exc:  # noqa: BLE001 - a derived template the engine rejects is reported, not raised
        problems.append(f"the derived template is invalid: {exc}")
        return DeriveResult(template, False, "derived", "low", found, [], problems, probes, undetermined)
    max_calls = 1 if fmt is not None and fmt.one_call_only else None
    proof = _prove(chat_template, template, prober, settings, max_calls, tools)
    found += _typing_findings(template, probes)
    result = _result(template, "derived", found, proof, problems, probes)
    result.undetermined = undetermined
    if result.confidence == "high" and "tool_calls" not in template["fields"] and "tool_calls" in chat_template:
        result.confidence = "medium"  # the chat template mentions tool calls the template cannot read
    return result


def _typing_findings(template: dict, probes: list[Probe]) -> list[Finding]:
    """How argument values are typed: from the text itself, or from the ``tools=`` schema."""
    from .. import parse_response
    from .probe import TYPE_ARGUMENTS, probe_tools

    probe = next((p for p in probes if p.ok and p.name == "tool_call_types"), None)
    if probe is None or "tool_calls" not in template["fields"]:
        return []

    def args(tools: Any) -> Any:
        try:
            message = parse_response(probe.generation, template, prefix=probe.prefix, tools=tools, strict=False)
            arguments = message["tool_calls"][0]["function"]["arguments"]
            return json.loads(arguments) if isinstance(arguments, str) else arguments
        except Exception:  # noqa: BLE001
            return None

    if args(None) == TYPE_ARGUMENTS:
        return [Finding("tool_calls", "argument types", "read from the text (strings, numbers and booleans "
                        "render distinctly)", [probe.name])]
    if args(probe_tools()) == TYPE_ARGUMENTS:
        return [Finding("tool_calls", "argument types", "from the tools= schema (the chat template renders "
                        "'61' and 61 alike): pass tools= to parse_response", [probe.name])]
    return [Finding("tool_calls", "argument types", "not recovered even with the tools= schema", [probe.name],
                    True)]


def _result(template: dict, source: str, found: list[Finding], proof: list[ProofCase], problems: list[str],
            probes: list[Probe]) -> DeriveResult:
    failing = [c for c in proof if c.status == "fail"]
    ok = bool(proof) and not failing and any(c.status == "pass" for c in proof)
    problems = list(problems)
    for c in failing:
        setting = " (" + ", ".join(f"{k}={v!r}" for k, v in c.setting.items()) + ")" if c.setting else ""
        problems.append(f"proof case {c.name}{setting} fails: {c.detail}")
    if not any(c.status in ("pass", "fail") for c in proof):
        problems.append("no proof case could be checked: the chat template never continues its own prompt")
    guessed = any(f.guessed for f in found)
    confidence = "low" if not ok else ("medium" if guessed else "high")
    return DeriveResult(copy.deepcopy(template), ok, source, confidence, found, proof, problems, probes)
