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

The engine (`load_template`, `ResponseParser`, `parse_response`) does not import Transformers.
"""

from __future__ import annotations

from .content import ContentParser, content_parsers, register_content_parser
from .errors import RegexTimeoutError, ResponseParseError, TemplateError
from .library import attach, detect_template, get_template, list_templates
from .parser import ResponseParser, parse_response
from .template import ResponseTemplate, load_template

__version__ = "0.1.0"

__all__ = [
    "ContentParser",
    "RegexTimeoutError",
    "ResponseParseError",
    "ResponseParser",
    "ResponseTemplate",
    "TemplateError",
    "attach",
    "detect_template",
    "get_template",
    "list_templates",
    "content_parsers",
    "load_template",
    "parse_response",
    "register_content_parser",
]
