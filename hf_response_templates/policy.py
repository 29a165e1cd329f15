"""Parse policies: what to do where real parsers of the same model disagree.

Peers (vLLM, SGLang, Ollama, the vendors' own servers) read the same model output differently in four
places, and neither reading is a bug:

* ``tool_calls_in_reasoning``: a tool call the model writes before it closes its reasoning (Qwen3,
  GLM-4.5+, DeepSeek, Gemma 4 ... open a call inside an unclosed ``<think>``). ``"extract"``: the call
  ends the reasoning and is a tool call (what the template's reasoning close says, e.g.
  ``</think>|(?=<tool_call>)``); ``"reasoning"``: the call is text of the reasoning, which runs to its
  real close (or to the end of the stream).
* ``unknown_tools``: a call to a function that is not in ``tools=``. ``"keep"``: a tool call like any
  other; ``"unparsed"``: not a tool call: it goes to ``message["unparsed"]`` (field ``tool_calls``, the
  call as JSON text, the error naming the function, the position of its region). Applies only when
  ``tools`` are given (without them there is nothing to check against).
* ``text_after_tool_calls``: content the model writes after its last tool call. ``"content"``: content,
  joined to the text before the calls; ``"unparsed"``: not content: it goes to ``message["unparsed"]``
  (field ``content``). Content between two calls is not after the last one and stays content.
* ``malformed_tool_calls``: a tool-call region whose body does not parse (invalid JSON, a call cut off
  mid-arguments, a transform that finds no arguments). ``"unparsed"``: a failed call: its body goes to
  ``message["unparsed"]`` with the error, and ``parse_response(strict=True)`` raises; ``"content"``: the
  region's raw text, as the model wrote it (its open and close delimiters included), is content at its
  place in the message (what vLLM's hermes and llama3_json parsers return), and strict parsing does not
  raise for it. ``text_after_tool_calls`` does not move it (it is a call the model wrote, not text after
  one). A region whose content regex timed out stays in ``unparsed`` either way.

Nothing is silently dropped: where a peer drops text, the policy value that matches it is
``"unparsed"``. Neither ``unparsed`` choice of the first three keys makes ``parse_response(strict=True)``
raise (the text is a policy decision, not a region that failed to parse).

A template may carry its own defaults as the top-level key ``"policy"`` (the shipped templates do where
the vendor's server differs from the neutral values, with the source in ``library.POLICY_SOURCES``); the
``policy=`` argument of `parse_response` / `ResponseParser` / the tokenizer methods overrides them key by
key.

The helpers of the parser's small policy hooks live here (`resolve_policy`, `template_for`, `check_calls`);
`ResponseParser` runs its hooks only when a non-default policy is in effect (one ``is None`` test per
region otherwise), so the default costs nothing per chunk.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Protocol, TypeVar, get_args

__all__ = [
    "ParsePolicy",
    "DEFAULT_POLICY",
    "ToolCallsInReasoning",
    "UnknownTools",
    "TextAfterToolCalls",
    "MalformedToolCalls",
    "resolve_policy",
    "policy_from_template",
]

ToolCallsInReasoning = Literal["extract", "reasoning"]
UnknownTools = Literal["keep", "unparsed"]
TextAfterToolCalls = Literal["content", "unparsed"]
MalformedToolCalls = Literal["unparsed", "content"]

#: The `error` of `message["unparsed"]` records the policy writes (field ``tool_calls`` / ``content``).
UNKNOWN_TOOL = "calls {names}, not in tools (policy unknown_tools='unparsed')"
AFTER_CALLS = "text after the last tool call (policy text_after_tool_calls='unparsed')"

#: The field whose values are tool calls, and the field that is the message's content (the OpenAI keys
#: every shipped template uses).
TOOL_FIELD = "tool_calls"
CONTENT_FIELD = "content"

#: Returned by the parser's policy hook for a value it has dealt with (held back or kept in `unparsed`).
HANDLED = object()


@dataclass(frozen=True)
class ParsePolicy:
    """How to read the cases where peers disagree (see the module docstring for each key).

    Build it with keyword arguments, or pass a plain dict with some of the keys wherever a policy is
    accepted (``policy={"unknown_tools": "unparsed"}``): keys not given keep the template's default.

    Example:
        >>> ParsePolicy(unknown_tools="unparsed").as_dict()  # doctest: +NORMALIZE_WHITESPACE
        {'tool_calls_in_reasoning': 'extract', 'unknown_tools': 'unparsed', 'text_after_tool_calls': 'content',
         'malformed_tool_calls': 'unparsed'}
        >>> ParsePolicy(unknown_tools="drop")
        Traceback (most recent call last):
          ...
        ValueError: policy key 'unknown_tools' must be one of ['keep', 'unparsed'], got 'drop' (nothing is dropped silently: 'unparsed' keeps the text in message['unparsed'])
    """

    tool_calls_in_reasoning: ToolCallsInReasoning = "extract"
    unknown_tools: UnknownTools = "keep"
    text_after_tool_calls: TextAfterToolCalls = "content"
    malformed_tool_calls: MalformedToolCalls = "unparsed"

    def __post_init__(self) -> None:
        for f in fields(self):
            allowed = list(get_args(f.type)) if not isinstance(f.type, str) else list(_ALLOWED[f.name])
            value = getattr(self, f.name)
            if value not in allowed or not isinstance(value, str):
                hint = ""
                if value in ("drop", "dropped", "ignore"):
                    hint = " (nothing is dropped silently: 'unparsed' keeps the text in message['unparsed'])"
                raise ValueError(f"policy key {f.name!r} must be one of {allowed}, got {value!r}{hint}")

    @property
    def is_default(self) -> bool:
        """True for the neutral values (extract, keep, content, unparsed): the parser then runs no policy code."""
        return self == DEFAULT_POLICY

    def as_dict(self) -> dict[str, str]:
        """The keys and values, as a template's ``"policy"`` key spells them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: The allowed values of each key (the `Literal`s, readable with ``from __future__ import annotations``).
_ALLOWED: dict[str, tuple[str, ...]] = {
    "tool_calls_in_reasoning": get_args(ToolCallsInReasoning),
    "unknown_tools": get_args(UnknownTools),
    "text_after_tool_calls": get_args(TextAfterToolCalls),
    "malformed_tool_calls": get_args(MalformedToolCalls),
}
_KEYS = tuple(_ALLOWED)

DEFAULT_POLICY = ParsePolicy()


class CompiledTemplate(Protocol):
    """What the policy reads of a compiled template (`template.ResponseTemplate`, which imports this module)."""

    @property
    def policy(self) -> ParsePolicy | None: ...

    @property
    def source(self) -> dict[str, Any]: ...


_Template = TypeVar("_Template", bound=CompiledTemplate)

#: Guards the caches of `resolve_policy` and `template_for`.
_variants_lock = threading.Lock()


def _check_mapping(policy: Mapping[str, Any]) -> None:
    unknown = sorted(str(k) for k in policy if k not in _ALLOWED)
    if unknown:
        raise ValueError(f"unknown policy key(s) {unknown}; allowed: {list(_KEYS)}")


def policy_from_template(raw: Any) -> ParsePolicy | None:
    """Validate a template's ``"policy"`` key; the compiled template keeps None for the neutral values.

    Raises:
        TemplateError: naming the key (``policy.unknown_tools``) and the allowed values.
    """
    from .errors import TemplateError

    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise TemplateError(f"must be a dict of policy keys ({', '.join(_KEYS)}), got {type(raw).__name__}",
                            key="policy")
    for k in raw:
        if k not in _ALLOWED:
            raise TemplateError(f"unknown policy key {k!r}; allowed: {list(_KEYS)}", key=f"policy.{k}")
    try:
        policy = ParsePolicy(**raw)
    except ValueError as e:
        key = next((k for k in raw if f"{k!r}" in str(e)), None)
        raise TemplateError(str(e), key=f"policy.{key}" if key else "policy") from None
    return None if policy.is_default else policy


def resolve_policy(policy: ParsePolicy | Mapping[str, Any] | None, template: CompiledTemplate) -> ParsePolicy | None:
    """The policy of one parse: the template's defaults, overridden key by key by `policy`.

    Returns None when the result is the neutral policy (the parser's fast default).

    Raises:
        ValueError: an unknown key or value, named.
        TypeError: `policy` is neither a `ParsePolicy` nor a mapping.
    """
    try:
        key = (id(template), policy if isinstance(policy, ParsePolicy) or policy is None
               else tuple(policy.items()))  # type: ignore[union-attr]
        hit = _resolved.get(key)
    except (AttributeError, TypeError):  # not a mapping, or unhashable values: resolved (and rejected) below
        key, hit = None, None
    if hit is not None and hit[0] is template:
        return hit[1]
    base = template.policy or DEFAULT_POLICY
    if policy is None:
        result = base
    elif isinstance(policy, ParsePolicy):
        result = policy
    elif isinstance(policy, Mapping):
        _check_mapping(policy)
        result = replace(base, **policy) if policy else base
    else:
        raise TypeError(f"policy must be a ParsePolicy or a dict of policy keys, got {type(policy).__name__}")
    resolved = None if result.is_default else result
    if key is not None:
        with _variants_lock:
            _resolved[key] = (template, resolved)
            if len(_resolved) > 256:
                del _resolved[next(iter(_resolved))]
    return resolved


#: `resolve_policy` results: (id(template), the policy or its items) -> (template, result). A hit needs the very
#: same compiled template (kept alive by the entry, so its id is not reused).
_resolved: dict[tuple, tuple[Any, ParsePolicy | None]] = {}


# ---------------------------------------------------------------------------------------------- reasoning


def _top_level_alternatives(pattern: str) -> list[str]:
    """Split a regex at its top-level ``|`` (outside groups and character classes)."""
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def _leading_literal(pattern: str) -> str:
    """The literal text a regex starts with (escapes undone), up to its first metacharacter."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in ".^$*+?{}[]()|\\":
            if c in "*+?{" and out:
                out.pop()  # the last character is repeated: not a fixed part
            break
        out.append(c)
        i += 1
    return "".join(out)


def _lookahead_body(alternative: str) -> str | None:
    """``X`` if `alternative` is exactly one lookahead ``(?=X)``, else None."""
    if alternative.startswith("(?=") and _skip_group(alternative) == len(alternative):
        return alternative[3:-1]
    return None


def _tool_openers(spec: Mapping[str, Any]) -> list[str]:
    """The literal texts a tool-call region can start with (from its `open` or `open_pattern`): each
    top-level alternative's leading text, looking into a leading group (``(?:<calls>\\s*)?<call>`` gives
    ``<calls>`` and, the group being optional, ``<call>``)."""
    tool = spec.get("fields", {}).get(TOOL_FIELD)
    if not isinstance(tool, Mapping):
        return []
    if isinstance(tool.get("open"), str):
        return [tool["open"]]
    pattern = tool.get("open_pattern")
    if not isinstance(pattern, str):
        return []
    openers = []
    for alt in _top_level_alternatives(pattern):
        openers.append(_leading_literal(alt))
        if alt.startswith("(?:"):
            end = _skip_group(alt)
            if end is not None:
                openers.extend(_leading_literal(a) for a in _top_level_alternatives(alt[3 : end - 1]))
                if alt[end : end + 1] == "?":
                    openers.append(_leading_literal(alt[end + 1 :]))
    return [o for o in openers if o]


def _skip_group(text: str) -> int | None:
    """The index just after the group that starts `text` (at ``(``), or None."""
    depth, i, in_class = 0, 0, False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def reasoning_rules(spec: Mapping[str, Any]) -> dict[str, list[str]]:
    """The close alternatives that end a reasoning region where a tool call starts, by field:
    top-level lookaheads ``(?=X)`` of a field's ``close_pattern`` whose text ``X`` starts with what a
    tool call starts with (``</think>|(?=<tool_call>)`` -> ``{"reasoning_content": ["(?=<tool_call>)"]}``)."""
    openers = _tool_openers(spec)
    if not openers:
        return {}
    rules: dict[str, list[str]] = {}
    for name, raw in spec.get("fields", {}).items():
        if name == TOOL_FIELD or not isinstance(raw, Mapping) or not isinstance(raw.get("close_pattern"), str):
            continue
        if "open" not in raw and "open_pattern" not in raw:
            continue  # the implicit field (content)
        for alt in _top_level_alternatives(raw["close_pattern"]):
            body = _lookahead_body(alt)
            if body is None:
                continue
            heads = [_leading_literal(b) for b in _top_level_alternatives(body)]
            if all(any(h.startswith(o) for o in openers) for h in heads):
                rules.setdefault(name, []).append(alt)
    return rules


def without_reasoning_rules(spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` (a private copy, edited in place) with the `reasoning_rules` alternatives removed, so that a
    tool call written inside reasoning stays reasoning text."""
    for name, alts in reasoning_rules(spec).items():
        raw = spec["fields"][name]
        kept = [a for a in _top_level_alternatives(raw["close_pattern"]) if a not in alts]
        if not kept:  # the rule was the only close: the region runs to the end of the stream
            del raw["close_pattern"]
            continue
        literal = kept[0] if len(kept) == 1 else None
        if literal is not None and _leading_literal(literal) == literal.replace("\\", ""):
            del raw["close_pattern"]
            raw["close"] = _leading_literal(literal)
        else:
            raw["close_pattern"] = "|".join(kept)
    return spec


_variants: dict[tuple[int, str], tuple[Any, Any]] = {}


def template_for(template: _Template, policy: ParsePolicy | None) -> _Template:
    """The template to parse with under `policy`: `template` itself, or (for a ``tool_calls_in_reasoning``
    other than the template's own) its variant, compiled once. The variant is the template's source (which
    always keeps the reasoning rules: `template._compile` removes them from a copy) with the policy key
    changed."""
    own = (template.policy or DEFAULT_POLICY).tool_calls_in_reasoning
    wanted = (policy or DEFAULT_POLICY).tool_calls_in_reasoning
    if wanted == own:
        return template
    key = (id(template), wanted)
    hit = _variants.get(key)
    if hit is not None and hit[0] is template:
        return hit[1]
    from .template import load_template

    source = template.source
    source["policy"] = {**(source.get("policy") or {}), "tool_calls_in_reasoning": wanted}
    variant: Any = load_template(source)
    with _variants_lock:
        _variants[key] = (template, variant)
        if len(_variants) > 256:
            del _variants[next(iter(_variants))]
    return variant


# ---------------------------------------------------------------------------------------------- parser hooks


def _call_names(value: Any) -> list[Any]:
    calls = value if isinstance(value, list) else [value]
    names = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else call
        names.append(fn.get("name") if isinstance(fn, dict) else None)
    return names


def check_calls(value: Any, known: Mapping[str, Any]) -> tuple[Any, list[Any]]:
    """Split a tool-call region's value into the calls to functions in `known` and the others.

    Returns ``(kept, rejected)``: `kept` is `value` itself when nothing is rejected, None when everything is.
    """
    names = _call_names(value)
    if all(isinstance(n, str) and n in known for n in names):
        return value, []
    if not isinstance(value, list):
        return None, [value]
    kept = [c for c, n in zip(value, names, strict=True) if isinstance(n, str) and n in known]
    rejected = [c for c, n in zip(value, names, strict=True) if not (isinstance(n, str) and n in known)]
    return (kept or None), rejected


def unknown_error(rejected: list[Any]) -> str:
    names = ", ".join(repr(n) for n in _call_names(rejected))
    return UNKNOWN_TOOL.format(names=f"function {names}" if len(rejected) == 1 else f"functions {names}")


def call_text(rejected: list[Any]) -> str:
    """The text kept in `unparsed` for rejected calls: the call (or the list of them) as JSON, with its name
    and arguments (the raw region may not hold the name: it is often in the open delimiter)."""
    return json.dumps(rejected if len(rejected) > 1 else rejected[0], ensure_ascii=False)
