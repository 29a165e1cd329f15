"""Build a response template (plain JSON data) from the parts the analysis found."""

from __future__ import annotations

from typing import Any

import regex

from .analyze import Content, Reasoning, ToolFormat, ws_regex

__all__ = ["assemble"]

#: what a function name may be made of where the template writes it outside JSON
NAME_CLASS = r"[^\s<>{}\[\]()\"',:|=]+"


def _literal_or_list(values: list[str]) -> str | list[str]:
    values = list(dict.fromkeys(v for v in values if v))
    return values[0] if len(values) == 1 else values


def _alternation(literals: list[str]) -> str:
    return "|".join(regex.escape(x) for x in sorted(set(literals), key=len, reverse=True))


def _tool_field(fmt: ToolFormat, ends: list[str]) -> dict[str, Any]:
    call_fn = {"name": "{name}", "arguments": "{content}"}
    if fmt.kind in ("json-list", "pythonic"):
        spec: dict[str, Any] = {
            "open": fmt.container_open,
            "content": "json" if fmt.kind == "json-list" else "python-call-list",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": (
                    {"name": "{" + fmt.name_path + "}", "arguments": "{" + fmt.args_path + "}"}
                    if fmt.kind == "json-list"
                    else {"name": "{name}", "arguments": "{arguments}"}
                ),
            },
        }
        if fmt.container_close:
            spec["close"] = fmt.container_close
        elif ends:
            spec["close"] = _literal_or_list(ends)
        if not fmt.container_open:
            spec.pop("open")
            spec["open_pattern"] = r"^\s*(?=\[)"
        return spec
    container = (r"(?:" + ws_regex(fmt.container_open) + r"\s*)?") if fmt.container_open else ""
    spec = {"repeats": True}
    if fmt.kind == "json-object":
        if fmt.call_open:
            if container:
                spec["open_pattern"] = container + ws_regex(fmt.call_open)
            else:
                spec["open"] = fmt.call_open
        else:  # a bare JSON object is the whole call: recognise it only at the start of the message
            head = r"(?=" + ws_regex(fmt.json_head) + ")"
            spec["open_pattern"] = r"^\s*" + head
            if not fmt.one_call_only:  # or right after the previous call's closing brace (Llama 4: {...}{...})
                sep = r"\s*" + (ws_regex(fmt.separator) + r"\s*" if fmt.separator else "")
                spec["open_pattern"] += r"|(?<=\})" + sep + head
                spec["close_pattern"] = r"(?<=\})(?=" + sep + ws_regex(fmt.json_head) + ")" + (
                    r"|\s*(?:" + _alternation(ends) + ")" if ends else "")
        spec["content"] = "json"
        spec["transform"] = {
            "type": "function",
            "function": {"name": "{content." + fmt.name_path + "}", "arguments": "{content." + fmt.args_path + "}"},
        }
    else:
        spec["open_pattern"] = (
            container + ws_regex(fmt.call_open) + r"\s*(?P<name>" + NAME_CLASS + ")" + fmt.between
        )
        if fmt.kind == "name-json":
            spec["content"] = "json"
            if fmt.json_args:
                spec["content_args"] = dict(fmt.json_args)
        else:
            spec["content"] = "xml-inline"
            spec["content_args"] = {"tag_pattern": fmt.tag_pattern}
        spec["transform"] = {"type": "function", "function": call_fn}
    if "close_pattern" in spec:  # set above: bare JSON calls back to back
        return spec
    if fmt.call_close and fmt.separator:
        # the separator between calls belongs to no field: the close takes it along when it is there
        spec["close_pattern"] = ws_regex(fmt.call_close) + r"(?:\s*" + ws_regex(fmt.separator) + ")?"
    elif fmt.call_close:
        spec["close"] = fmt.call_close
    elif fmt.call_open and not fmt.one_call_only:
        # calls follow each other with no close of their own: a call ends where the next begins
        spec["close_pattern"] = r"(?=" + ws_regex(fmt.call_open) + ")" + ("|" + _alternation(ends) if ends else "")
    elif ends:
        spec["close"] = _literal_or_list(ends)
    return spec


#: the implicit field added when the answer text has an open of its own: its close ends the message
END_FIELD = "unmarked_text"
#: the field that takes a marker only some turns write before an implicit answer (it stays empty)
MARKER_FIELD = "answer_marker"


def _with_headers(spec: dict[str, Any], headers: list[str]) -> None:
    """Let a field's open take along a role header written again before it (see ``find_repeated_headers``)."""
    if not headers or ("open" not in spec and "open_pattern" not in spec):
        return
    opens = spec.pop("open", None)
    if opens is not None:
        literals = opens if isinstance(opens, list) else [opens]
        pattern = "|".join(ws_regex(o) for o in literals)
    elif spec["open_pattern"].startswith("^"):  # an open at the start of the message follows no header
        return
    else:
        pattern = spec.pop("open_pattern")
    head = "(?:(?:" + "|".join(ws_regex(h) for h in headers) + r")\s*)?"
    spec["open_pattern"] = head + "(?:" + pattern + ")"


def assemble(anchors: list[str], content: Content | None, reasoning: Reasoning | None,
             tools: ToolFormat | None, headers: list[str] | None = None) -> dict[str, Any]:
    """The response template for the parts found (see :mod:`.analyze`).

    ``headers`` are role headers the chat template writes again between regions: every field's open
    takes one along. When the answer text has an open marker of its own (so no field is implicit), an
    implicit ``unmarked_text`` field is added whose close, the end of turn, ends the message: what the
    chat template writes after the turn (the next turn's header) is then not part of the message.
    """
    template: dict[str, Any] = {"version": 1, "defaults": {"role": "assistant"}}
    if len(anchors) == 1:
        template["start_anchor"] = anchors[0]
    else:
        template["start_anchor"] = list(anchors)
    fields: dict[str, Any] = {}
    ends = list(content.closes) if content else []
    if reasoning is not None:
        fields[reasoning.key] = {"open": reasoning.open, "close": reasoning.close, "content": "text"}
    if tools is not None:
        fields["tool_calls"] = _tool_field(tools, ends)
    if content is not None and content.optional_opens and not content.open:
        # a marker some turns write before the answer: an empty region that takes it (and closes at once)
        markers = "|".join(ws_regex(o) for o in content.optional_opens)
        fields[MARKER_FIELD] = {"open_pattern": r"^\s*(?:" + markers + ")", "close_pattern": r"(?=[\s\S])",
                                "content": "text"}
    if content is not None:
        spec: dict[str, Any] = {"content": "text"}
        if content.open:
            spec["open"] = content.open
        closes = list(ends)
        if tools is not None and tools.container_close and tools.kind not in ("json-list", "pythonic"):
            closes.append(tools.container_close)  # text after the last call's container close ends the message
        if closes:
            spec["close"] = _literal_or_list(closes)
        fields["content"] = spec
        # the first close is the answer's own (<|END_RESPONSE|>); the others end the turn (<|END_OF_TURN_TOKEN|>)
        turn_ends = ends[1:]
        if content.open and turn_ends and END_FIELD not in fields:
            if tools is not None and tools.container_close and tools.kind not in ("json-list", "pythonic"):
                turn_ends.append(tools.container_close)  # as for the content: after the last call's container
            fields[END_FIELD] = {"close": _literal_or_list(turn_ends), "content": "text"}
    for spec in fields.values():
        _with_headers(spec, list(headers or []))
    template["fields"] = fields
    return template
