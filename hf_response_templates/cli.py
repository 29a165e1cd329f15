"""The ``hf-response-templates`` command line (also ``python -m hf_response_templates``).

Commands::

    demo                      parse and stream a realistic SmolLM3 output (no model, no network)
    list [--json]             the shipped templates
    show NAME [--info]        one template as JSON
    detect PATH_OR_REPO       which shipped template fits a tokenizer, and why
    parse ...                 parse raw model output (file or stdin) into a message, or stream events
    verify PATH_OR_REPO       round-trip a response template through the tokenizer's own chat template
    upgrade PATH_OR_REPO      add a verified response_template to tokenizer_config.json (one key, nothing else)
    upgrade-hub REPOS_FILE    the same for many Hub repos, one pull request each (``bulk.py``; resumable)
    derive PATH_OR_REPO       derive a response template from the chat template, with its proof
    serve MODEL_PATH          an OpenAI / Anthropic compatible server for a local model (``serve/``)

Exit codes: 0 success; 1 a check failed or the command refused (verification failed, a different
template is already there, no template fits, output that does not parse); 2 bad input (a missing
file or folder, unreadable JSON, no chat template, unknown template, the Hub offline, a missing
dependency, ...), always
reported as one line ``hf-response-templates: error: <path or repo>: <cause>`` without a traceback
(``--debug`` shows it). Nothing is written when the exit code is not 0.

Theory of operation: this module only parses arguments and prints. Reading tokenizers, choosing,
verifying and writing templates live in ``upgrade.py`` (shared with
``bulk.py``, the bulk Hub upgrade), byte-preserving JSON edits in ``jsonedit.py``. Transformers is
imported only by the commands that need it (``verify``, ``upgrade``, ``parse --tokenizer``, ``serve``), so
``demo``, ``list``, ``show``, ``detect`` and ``parse --template`` start fast and run without it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from .upgrade import InputError

PROG = "hf-response-templates"

__all__ = ["main", "token_like_pieces"]


# --------------------------------------------------------------------------- output helpers


def _out() -> TextIO:
    return sys.stdout


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


# --------------------------------------------------------------------------- token-sized pieces

# Approximates a byte-level BPE pre-tokenizer: special tokens whole, words with their leading space,
# numbers, punctuation runs, newlines.
_PIECE_PATTERN = (
    r"<\|[^|<>\s]{1,40}\|>|</?[A-Za-z_]{1,20}>|'(?:s|t|re|ve|m|ll|d)| ?\p{L}+| ?\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]{1,2}|\s*\n|\s+(?!\S)|\s+"
)


def token_like_pieces(text: str) -> list[str]:
    """Split ``text`` into pieces shaped like a chat model's tokens (no tokenizer needed).

    Example:
        >>> token_like_pieces("<think>\\nHi there</think>")
        ['<think>', '\\n', 'Hi', ' there', '</think>']
    """
    import regex

    pieces = regex.findall(_PIECE_PATTERN, text)
    assert "".join(pieces) == text
    return pieces


def fixed_pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def tokenizer_pieces(tokenizer: Any, text: str) -> list[str]:
    """Split ``text`` at the tokenizer's token boundaries (pieces concatenate back to ``text``)."""
    try:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        ends = sorted({int(end) for _start, end in offsets if 0 < int(end) <= len(text)})
        pieces, previous = [], 0
        for end in ends:
            if end > previous:
                pieces.append(text[previous:end])
                previous = end
        if previous < len(text):
            pieces.append(text[previous:])
        return pieces
    except (NotImplementedError, TypeError, ValueError, KeyError):
        pass
    # No offsets (a slow tokenizer): decode incrementally, the way streamers do. Each step decodes only the
    # tokens since the last emitted piece plus one token of context before them (`ids[context:i + 1]`), so the
    # work is linear in the number of tokens; the context keeps a leading space or a merged byte right.
    ids = list(tokenizer.encode(text, add_special_tokens=False))

    def decode(part: list[int]) -> str:
        return tokenizer.decode(part, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    pieces: list[str] = []
    context, done = 0, 0  # ids[context:done]: the context; ids[:done] is what `pieces` holds
    seen = ""  # decode(ids[context:done])
    for i in range(len(ids)):
        now = decode(ids[context : i + 1])
        if now.startswith(seen) and len(now) > len(seen) and not now.endswith("\ufffd"):
            pieces.append(now[len(seen) :])
            context, done = done, i + 1
            seen = decode(ids[context:done])
    decoded = "".join(pieces)
    if decoded != text:  # the decode did not reproduce the text: fall back to its pieces plus the rest
        return pieces + [text[len(decoded) :]] if text.startswith(decoded) else fixed_pieces(text, 4)
    return pieces


# --------------------------------------------------------------------------- demo

DEMO_PROMPT = (
    "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nToday Date: 12 May 2026\n"
    "Reasoning Mode: /think\n\n## Custom Instructions\n\nYou are a concise travel assistant.\n\n"
    "### Tools\n\nYou may call one or more functions to assist with the user query.\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n\n<tools>\n"
    '{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", '
    '"parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", '
    '"enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}\n</tools>\n\n'
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> "
    'XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\nHi! Can you help me plan a weekend trip?<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\nOf course! Where would you like to go?<|im_end|>\n"
    "<|im_start|>user\nParis or Tokyo. What's the weather like in both right now?<|im_end|>\n"
    "<|im_start|>assistant\n"
)
DEMO_OUTPUT = (
    "<think>\nThe user is choosing between Paris and Tokyo and wants the current weather in both. "
    "I'll call get_weather once per city, in celsius.\n</think>\n"
    "Let me check the weather in both cities.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}\n</tool_call>'
    "<|im_end|>\n"
)
def _demo_template() -> tuple[dict, str]:
    from .library import get_template

    return get_template("smollm3"), 'the shipped "smollm3" template'


def cmd_demo(args: argparse.Namespace) -> int:
    from . import ResponseParser, parse_response

    template, where = _demo_template()
    out = _out()
    pieces = token_like_pieces(DEMO_OUTPUT)
    tail = DEMO_PROMPT[DEMO_PROMPT.rfind("<|im_start|>user") :]
    print(f"# hf-response-templates demo: SmolLM3 output parsed with {where}.", file=out)
    print("# The prompt (prefix=) is a multi-turn chat with a tools system prompt; it ends with:", file=out)
    for line in tail.splitlines(keepends=True):
        print("#   " + repr(line)[1:-1], file=out)
    print("# The model's raw output (note the trailing newline after <|im_end|>):", file=out)
    for line in DEMO_OUTPUT.splitlines(keepends=True):
        print("#   " + repr(line)[1:-1], file=out)
    print(f"#\n# 1. Streaming: ResponseParser(template, prefix=prompt), feed() with {len(pieces)} "
          "token-sized chunks; one event per line:", file=out)
    parser = ResponseParser(template, DEMO_PROMPT)
    for event in parser.initial_events:
        print(_line(event), file=out)
    for piece in pieces:
        for event in parser.feed(piece):
            print(_line(event), file=out)
    message, final_events = parser.finalize()
    for event in final_events:
        print(_line(event), file=out)
    print("#\n# 2. The final message from parser.finalize():", file=out)
    print(_dump(message), file=out)
    same = parse_response(DEMO_OUTPUT, template, prefix=DEMO_PROMPT) == message
    print(f"#\n# 3. parse_response(output, template, prefix=prompt) in one call gives the same message: {same}",
          file=out)
    return 0 if same else 1


# --------------------------------------------------------------------------- list / show


def cmd_list(args: argparse.Namespace) -> int:
    from .library import get_template, list_templates, template_info

    rows = []
    for name in list_templates():
        template = get_template(name)
        info = template_info(name)
        rows.append({
            "name": name,
            "fields": list(template.get("fields", {})),
            "models": info.get("models", []),
            "chat_template": info.get("chat_template"),
            "doc": info.get("doc", ""),
        })
    if args.json:
        print(_dump(rows), file=_out())
        return 0
    table = [(r["name"], ", ".join(r["fields"]), ", ".join(r["models"])) for r in rows]
    print(_table(table, ("NAME", "FIELDS", "MODELS")), file=_out())
    return 0


def _shipped(name: str) -> dict:
    from .library import get_template, list_templates

    if name not in list_templates():
        raise InputError(name, f"unknown response template; available: {', '.join(list_templates())}")
    return get_template(name)


def cmd_show(args: argparse.Namespace) -> int:
    template = _shipped(args.name)
    if args.info:
        from .library import template_info

        print(_dump({"name": args.name, **template_info(args.name), "template": template}), file=_out())
    else:
        print(_dump(template), file=_out())
    return 0


# --------------------------------------------------------------------------- detect


def cmd_detect(args: argparse.Namespace) -> int:
    from .upgrade import explain_detection, load_tokenizer_files

    files = load_tokenizer_files(args.target, revision=args.revision)
    files.require_chat_template()
    name, reasons = explain_detection(files.detection_subject())
    if args.json:
        print(_dump({"target": args.target, "template": name, "reasons": reasons,
                     "chat_template_from": files.chat_template_origin}), file=_out())
        return 0 if name else 1
    if name is None:
        print(f"{args.target}: no shipped template fits ({'; '.join(reasons)})", file=_out())
        return 1
    print(name, file=_out())
    print(f"  tokenizer: {args.target} (chat template from {files.chat_template_origin})", file=_out())
    for i, reason in enumerate(reasons):
        print(f"  {'why:' if i == 0 else '':<10} {reason}", file=_out())
    return 0


# --------------------------------------------------------------------------- parse


def _read_input(path: str | None) -> tuple[str, str]:
    """The text of ``path`` (``None`` or ``-``: stdin) and a label for messages."""
    from .upgrade import _read_text, decode_text

    if path is None or path == "-":
        if sys.stdin is None or (hasattr(sys.stdin, "isatty") and sys.stdin.isatty()):
            raise InputError("stdin", "no input: pass a file with the model output, or pipe it in")
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        return (decode_text(data, "stdin") if isinstance(data, bytes) else data), "stdin"
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(path, "no such file")
    if p.is_dir():
        raise InputError(path, "is a folder, expected a file with the model output")
    return _read_text(p, path), path


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def unescape(text: str) -> str:
    r"""Interpret ``\n``, ``\t``, ``\r`` and ``\\`` in a command-line argument (nothing else).

    Example:
        >>> unescape(r"<|im_start|>assistant\n")
        '<|im_start|>assistant\n'
    """
    import re

    return re.sub(r"\\([ntr\\])", lambda m: _ESCAPES[m.group(1)], text)


def _read_tools(path: str | None) -> list | None:
    if path is None:
        return None
    from .upgrade import read_json_file

    data = read_json_file(path, "tools")
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if isinstance(data, dict) and ("function" in data or "name" in data):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise InputError(path, "expected a JSON list of tool schemas (as apply_chat_template takes them)")
    return data


def _load_tokenizer(path: str) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise InputError(path, f"--tokenizer needs Transformers ({exc})") from None
    try:
        return AutoTokenizer.from_pretrained(path)
    except Exception as exc:  # noqa: BLE001 - one line for the user
        text = " ".join(str(exc).split())[:200]
        raise InputError(path, f"cannot load the tokenizer: {type(exc).__name__}: {text}") from None


def _parse_template(args: argparse.Namespace) -> tuple[dict, Any]:
    """The template for ``parse``: --template, else the tokenizer's own, else detected."""
    from .upgrade import KEY, explain_detection, load_local_files, load_template_arg, validate_template

    files = None
    if args.tokenizer:
        files = load_local_files(args.tokenizer)
    if args.template:
        return load_template_arg(args.template)[1], files
    assert files is not None
    own = files.config.get(KEY)
    if own is not None:
        return validate_template(own, files.config_label), files
    name, reasons = explain_detection(files.detection_subject())
    if name is None:
        raise InputError(args.tokenizer, f"has no response_template and no shipped template fits ({'; '.join(reasons)}); "
                         "pass --template")
    from .library import get_template

    _err(f"note: {args.tokenizer} has no response_template; using the detected shipped template {name!r}")
    return get_template(name), files


def cmd_parse(args: argparse.Namespace) -> int:
    from . import ResponseParser, parse_response
    from .errors import ResponseParseError, TemplateError

    if not args.template and not args.tokenizer:
        raise InputError("parse", "pass --template NAME|FILE or --tokenizer PATH")
    if args.chunk_size < 1:
        raise InputError("--chunk-size", f"must be at least 1, got {args.chunk_size}")
    template, files = _parse_template(args)
    tools = _read_tools(args.tools)
    if args.prefix_file is not None:
        prefix, _ = _read_input(args.prefix_file)
    elif args.prefix is not None:
        prefix = unescape(args.prefix)
    else:
        prefix = None
    text, label = _read_input(args.input)
    if prefix is None:
        prefix = ""
        _err('note: no --prefix/--prefix-file given: parsing without the prompt (prefix=""); a chat template that '
             "pre-writes part of the answer (an opening <think>) needs the prompt")
    out = _out()
    strict = not args.no_strict
    try:
        if not args.stream:
            message = parse_response(text, template, prefix=prefix, tools=tools, strict=strict)
            print(_dump(message), file=out)
            return 0
        if args.tokenizer:
            pieces = tokenizer_pieces(_load_tokenizer(args.tokenizer), text)
        else:
            pieces = fixed_pieces(text, args.chunk_size)
        parser = ResponseParser(template, prefix, tools=tools)
    except TemplateError as exc:
        raise InputError(args.template or args.tokenizer, f"invalid response template: {exc}") from None
    except ResponseParseError as exc:
        _err(f"{PROG}: {label}: could not parse the output: {' '.join(str(exc).split())} "
             "(--no-strict returns the message with the failed region under 'unparsed')")
        return 1

    def emit(events: Iterable[dict]) -> None:
        for event in events:
            out.write(_line(event) + "\n")
        out.flush()

    emit(parser.initial_events)
    for piece in pieces:
        emit(parser.feed(piece))
    message, final_events = parser.finalize()
    emit(final_events)
    emit([{"type": "message", "message": message}])
    errors = parser.strict_errors
    if strict and errors:
        _err(f"{PROG}: {label}: could not parse the output: {' '.join(str(errors[0]).split())} "
             "(--no-strict accepts it)")
        return 1
    return 0


# --------------------------------------------------------------------------- verify


def _verification_table(verification: Any) -> str:
    rows = []
    for case in verification.cases:
        detail = case.detail if case.status != "pass" else ""
        detail = "; ".join([d for d in [detail, *case.notes] if d])
        if len(detail) > 200:
            detail = detail[:197] + "..."
        rows.append((case.name, case.status, detail))
    return _table(rows, ("CASE", "RESULT", "DETAIL"))


def _template_for_verify(files: Any, spec: str | None) -> tuple[str, dict, list[str]]:
    from .upgrade import KEY, resolve_template, validate_template

    if spec is None and files.config.get(KEY) is not None:
        return "the tokenizer's own response_template", validate_template(files.config[KEY], files.config_label), []
    name, template, label, reasons = resolve_template(files, spec or "auto")
    if not template:
        raise _Refusal(f"{files.where}: no shipped template fits ({'; '.join(reasons)}); pass --template NAME|FILE")
    return (f'"{label}"' if name else label), template, reasons


class _Refusal(Exception):
    """The command refuses (exit 1); the message is printed to stderr."""


def cmd_verify(args: argparse.Namespace) -> int:
    from .upgrade import load_tokenizer_files, verify_files

    files = load_tokenizer_files(args.target, revision=args.revision)
    files.require_chat_template()
    label, template, reasons = _template_for_verify(files, args.template)
    verification = verify_files(files, template, label)
    if args.json:
        print(_dump({"target": args.target, **verification.as_dict()}), file=_out())
        return 0 if verification.passed else 1
    out = _out()
    why = " (detected; `detect` says why)" if reasons and args.template in (None, "auto") else ""
    print(f"Verifying response template {label}{why}", file=out)
    print(f"against the chat template of {args.target} ({files.chat_template_origin}):\n", file=out)
    print(_verification_table(verification), file=out)
    verdict = "PASS" if verification.passed else "FAIL"
    print(f"\n{verdict}: {verification.summary}", file=out)
    if verification.caution:
        print(f"note: {verification.caution}", file=out)
    return 0 if verification.passed else 1


# --------------------------------------------------------------------------- upgrade


def cmd_upgrade(args: argparse.Namespace) -> int:
    from .upgrade import load_tokenizer_files, plan_upgrade, push_to_hub, write_local

    files = load_tokenizer_files(args.target, revision=args.revision)
    if args.push_to_hub and files.kind != "hub":
        raise InputError(args.target, "--push-to-hub needs a Hub repo id, not a local folder")
    if args.output is not None:
        out_dir = Path(args.output).expanduser()
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise InputError(args.output, "output folder exists and is not empty; nothing written")
    plan = plan_upgrade(files, args.template, force=args.force)
    where = files.config_label
    if plan.status == "no_template":
        _err(f"{PROG}: {args.target}: no shipped template fits ({'; '.join(plan.reasons)}); pass --template "
             "NAME|FILE. Nothing written.")
        return 1
    if plan.status == "already":
        print(f"{where}: already has this response_template ({plan.template_label}); nothing written", file=_out())
        return 0
    if plan.status == "conflict":
        _err(f"{PROG}: {where}: already has a different response_template; not overwriting it (--force "
             f"replaces it). Differences: {'; '.join(plan.differences)}. Nothing written.")
        return 1
    verification = plan.verification
    if plan.status == "verification_failed":
        assert verification is not None
        _err(_verification_table(verification))
        _err(f"{PROG}: {args.target}: response template {plan.template_label!r} does not round-trip this "
             f"tokenizer's chat template ({verification.summary}); refusing to write (--force writes anyway). "
             "Nothing written.")
        return 1
    summary = f"verified: {verification.summary}" if verification else "not verified"
    if verification and verification.caution:
        summary += f" (note: {verification.caution})"
    if plan.forced:
        summary += " (forced with --force" + (f"; replacing: {'; '.join(plan.differences)}" if plan.differences else "") + ")"
    hub_without_target = files.kind == "hub" and not args.push_to_hub and args.output is None
    if args.dry_run or hub_without_target:
        sys.stdout.write(plan.diff)
        note = "dry run" if args.dry_run else "not pushed: add --push-to-hub (opens a pull request) or --output DIR"
        _err(f"{where}: would add response_template ({plan.template_label}); {summary}; {note}; nothing written")
        return 0
    if args.push_to_hub and args.output is None:
        info = push_to_hub(plan, create_pr=args.create_pr, revision=args.hub_revision)
        url = getattr(info, "pr_url", None) or getattr(info, "commit_url", None) or ""
        what = "opened a pull request" if args.create_pr else "committed"
        print(f"{args.target}: {what} adding response_template ({plan.template_label}); {summary}"
              + (f": {url}" if url else ""), file=_out())
        return 0
    written = write_local(plan, args.output)
    print(f"{written}: added response_template ({plan.template_label}); {summary}", file=_out())
    if args.push_to_hub:  # --output together with --push-to-hub: save a copy, then push
        info = push_to_hub(plan, create_pr=args.create_pr, revision=args.hub_revision)
        url = getattr(info, "pr_url", None) or getattr(info, "commit_url", None) or ""
        print(f"{args.target}: pushed" + (f": {url}" if url else ""), file=_out())
    return 0


def cmd_upgrade_hub(args: argparse.Namespace) -> int:
    from .bulk import execute

    return execute(args)


# --------------------------------------------------------------------------- main


_TARGET_HELP = "a local tokenizer folder, or a Hub repo id (org/name) when no such path exists"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Response templates for Hugging Face tokenizers: parse model output, verify and add templates.",
        epilog="Exit codes: 0 ok, 1 check failed / refused, 2 bad input or a missing dependency. --debug shows "
        "tracebacks.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("demo", help="parse and stream a realistic SmolLM3 output (no model needed)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("list", help="list the shipped response templates")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="print a shipped response template as JSON")
    p.add_argument("name", metavar="NAME", help="a shipped template name (see `list`)")
    p.add_argument("--info", action="store_true", help="include the models and notes, not just the template")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("detect", help="which shipped template fits a tokenizer, and why")
    p.add_argument("target", metavar="PATH_OR_REPO", help=_TARGET_HELP)
    p.add_argument("--revision", help="Hub revision (branch, tag or commit)")
    p.add_argument("--json", action="store_true", help="print JSON (template, reasons) instead of text")
    p.set_defaults(func=cmd_detect)

    p = sub.add_parser("parse", help="parse raw model output (a file or stdin) into a message")
    p.add_argument("input", nargs="?", metavar="FILE", help="the raw model output (default: stdin)")
    p.add_argument("--template", metavar="NAME|FILE", help="a shipped template name or a template .json file")
    p.add_argument("--tokenizer", metavar="PATH",
                   help="a tokenizer folder: its response_template (else the detected one); with --stream, real tokens")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--prefix", metavar="TEXT",
                   help="the prompt the model was given (\\n, \\t, \\r and \\\\ escapes are interpreted)")
    g.add_argument("--prefix-file", metavar="FILE", help="a file holding the prompt")
    p.add_argument("--stream", action="store_true", help="feed token-sized pieces; print one JSON event per line")
    p.add_argument("--chunk-size", type=int, default=4, metavar="N",
                   help="piece size in characters for --stream without --tokenizer (default 4)")
    p.add_argument("--tools", metavar="FILE", help="JSON list of tool schemas (types tool-call arguments)")
    p.add_argument("--no-strict", action="store_true",
                   help="return the message even if a region fails to parse (see 'unparsed')")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("verify", help="check a response template against a tokenizer's own chat template")
    p.add_argument("target", metavar="PATH_OR_REPO", help=_TARGET_HELP)
    p.add_argument("--template", metavar="NAME|FILE|auto",
                   help="default: the tokenizer's own response_template, else the detected one")
    p.add_argument("--revision", help="Hub revision (branch, tag or commit)")
    p.add_argument("--json", action="store_true", help="print the cases as JSON instead of a table")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("upgrade", help="add a verified response_template to tokenizer_config.json")
    p.add_argument("target", metavar="PATH_OR_REPO", help=_TARGET_HELP)
    p.add_argument("--template", default="auto", metavar="NAME|FILE|auto", help="default: auto (detect)")
    p.add_argument("--output", metavar="DIR", help="write into a copy of the folder instead of in place")
    p.add_argument("--push-to-hub", action="store_true", help="commit to the Hub repo (a pull request by default)")
    p.add_argument("--create-pr", action=argparse.BooleanOptionalAction, default=True,
                   help="with --push-to-hub: open a pull request (default) or commit directly (--no-create-pr)")
    p.add_argument("--dry-run", action="store_true", help="print the unified diff; write nothing")
    p.add_argument("--force", action="store_true",
                   help="write even if verification fails or a different template is there")
    p.add_argument("--revision", help="Hub revision to read (branch, tag or commit)")
    p.add_argument("--hub-revision", help="Hub branch to commit to / open the pull request against")
    p.set_defaults(func=cmd_upgrade)

    from .bulk import add_arguments

    p = sub.add_parser("upgrade-hub", help="upgrade many Hub repos at once (one pull request each; resumable)",
                       description="Add verified response templates to many Hub tokenizer repos, one pull request "
                       "per repo; a summary table ends the run, and finished repos are recorded so a new run resumes.")
    add_arguments(p)
    p.set_defaults(func=cmd_upgrade_hub)
    _add_derive_parser(sub)
    _add_serve_parser(sub)
    return parser


# --------------------------------------------------------------------------- derive


def _add_derive_parser(sub: Any) -> None:
    p = sub.add_parser("derive", help="derive a response template from a tokenizer's chat template, with its proof")
    p.add_argument("target", metavar="PATH_OR_REPO", help=_TARGET_HELP)
    p.add_argument("--json", action="store_true", help="print the result (template, evidence, proof) as JSON")
    p.add_argument("--output", metavar="FILE", help="write the template as JSON (only when its proof passes)")
    p.add_argument("--no-library", action="store_true",
                   help="derive even when the chat template is a shipped family (default: return that template)")
    p.add_argument("--revision", help="Hub revision (branch, tag or commit)")
    p.set_defaults(func=cmd_derive)


def cmd_derive(args: argparse.Namespace) -> int:
    """Derive, print the report (or JSON), write ``--output`` if proven; exit 1 when not proven."""
    from .derive import derive
    from .upgrade import load_tokenizer_files

    files = load_tokenizer_files(args.target, revision=args.revision)
    result = derive(files.chat_template_text(), special_tokens=files.special_tokens(),
                    use_library=not args.no_library)
    if args.json:
        print(_dump({"target": args.target, **result.as_dict()}), file=_out())
    else:
        print(result.report(), file=_out())
        if result.ok and not args.output:
            print(_dump(result.template), file=_out())
    if not result.ok:
        if args.output:
            _err(f"{PROG}: {args.target}: the derived template is not proven; {args.output} not written")
        return 1
    if args.output:
        Path(args.output).write_text(_dump(result.template) + "\n", encoding="utf-8")
    return 0


# --------------------------------------------------------------------------- serve


def _add_serve_parser(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve a local model through the OpenAI and Anthropic APIs (needs the [serve] extra: uvicorn)",
        description="Serve a local causal LM on /v1/chat/completions, /v1/responses, /v1/messages and /v1/models, "
        "its reasoning and tool calls parsed by its response template. Nothing is downloaded.",
    )
    p.add_argument("model", metavar="MODEL_PATH", help="a local model folder (weights, tokenizer, chat template)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--template", default="auto", metavar="NAME|FILE|auto|derive",
                   help="the response template: auto (the tokenizer's, else the detected family; default), "
                   "derive (from the chat template, if proven), a shipped name or a .json file")
    p.add_argument("--device", default="cpu", help="torch device (default cpu)")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"],
                   help="weights dtype (default auto: the checkpoint's)")
    p.add_argument("--max-new-tokens", type=int, default=512, metavar="N",
                   help="token budget of a request that sets none, and the most one may ask (default 512)")
    p.add_argument("--model-name", metavar="NAME", help="the model id clients see (default: the folder name)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="the server's log level (uvicorn's access and error logs; default: info)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Load the model and serve it until interrupted (``hf_response_templates.serve.serve``)."""
    if not Path(args.model).expanduser().is_dir():
        raise InputError(args.model, "no such model folder (serve loads local folders only)")
    if args.max_new_tokens < 1:
        raise InputError("--max-new-tokens", f"must be at least 1, got {args.max_new_tokens}")
    try:  # fail early, before loading the model, if the [serve] extra is missing
        import torch  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise InputError("serve", f"needs {exc.name or 'uvicorn'}, which is not installed: pip install "
                         '"hf-response-templates[serve]"') from exc

    from .serve import serve

    try:
        serve(args.model, host=args.host, port=args.port, template=args.template, device=args.device,
              dtype=args.dtype, max_new_tokens=args.max_new_tokens, model_name=args.model_name,
              log_level=args.log_level)
    except (ValueError, KeyError, OSError) as exc:  # no template fits, an unknown template, unreadable files
        raise InputError(args.model, str(exc).strip("'\"")) from exc
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        if debug:
            traceback.print_exc()
        _err(f"{PROG}: error: {exc}")
        return 2
    except _Refusal as exc:
        if debug:
            traceback.print_exc()
        _err(f"{PROG}: {exc}")
        return 1
    except ImportError as exc:  # a dependency the command needs is missing: one line, exit 2
        if debug:
            traceback.print_exc()
        from .upgrade import missing_dependency

        _err(f"{PROG}: error: {missing_dependency(args.command, exc)}")
        return 2
    except BrokenPipeError:  # `... | head`: the reader went away
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        _err(f"{PROG}: interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - unexpected: one line unless --debug
        if debug:
            traceback.print_exc()
        text = " ".join(str(exc).split())
        _err(f"{PROG}: error: unexpected {type(exc).__name__}: {text} (run with --debug for the traceback)")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
