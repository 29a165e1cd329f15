"""hf-response-templates: turn what a chat model generates back into a structured message.

Quick start:

    >>> from hf_response_templates import parse_response
    >>> template = {
    ...     "defaults": {"role": "assistant"},
    ...     "start_anchor": "<|im_start|>assistant\\n",
    ...     "fields": {
    ...         "reasoning_content": {"open": "<think>", "close": "</think>"},
    ...         "content": {"close": "<|im_end|>"},
    ...     },
    ... }
    >>> parse_response("<think>Easy.</think>Hi!<|im_end|>", template, prefix="")
    {'role': 'assistant', 'reasoning_content': 'Easy.', 'content': 'Hi!'}

The engine (`load_template`, `ResponseParser`, `parse_response`) does not import Transformers; importing
the package installs `parse_response`, `get_response_parser` and `response_template` on every
Transformers tokenizer lazily (see `hf_response_templates.tokenizer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .content import ContentParser, content_parsers, register_content_parser
from .errors import RegexTimeoutError, ResponseParseError, TemplateError
from .library import attach, detect_template, get_template, list_templates
from .parser import ResponseParser, parse_response
from .policy import ParsePolicy
from .template import ResponseTemplate, load_template
from .tokenizer import (
    NoResponseTemplateError,
    ResponseEventStream,
    ResponseTemplateMixin,
    _autoinstall,
    install,
    is_installed,
    stream_events,
    uninstall,
)

if TYPE_CHECKING:  # a real class for type checkers; at run time it is built when first asked for (below)
    from .tokenizer import ResponseStreamer

__version__ = "0.1.0"

# Give every Transformers tokenizer the response-template API. This imports neither Transformers nor
# torch: if Transformers is not imported yet, a tiny import hook patches it when it is.
_autoinstall()


def __getattr__(name: str) -> type:
    # ResponseStreamer subclasses Transformers' BaseStreamer, so it is only imported when asked for.
    if name == "ResponseStreamer":
        from .tokenizer import ResponseStreamer

        return ResponseStreamer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ContentParser",
    "NoResponseTemplateError",
    "ParsePolicy",
    "ResponseEventStream",
    "ResponseStreamer",
    "ResponseTemplateMixin",
    "RegexTimeoutError",
    "ResponseParseError",
    "ResponseParser",
    "ResponseTemplate",
    "TemplateError",
    "attach",
    "detect_template",
    "get_template",
    "install",
    "is_installed",
    "list_templates",
    "content_parsers",
    "load_template",
    "parse_response",
    "register_content_parser",
    "stream_events",
    "uninstall",
]
