"""Worker functions for the multiprocessing tests (spawned interpreters import this module by name).

It deliberately does not import `hf_response_templates`: unpickling a tokenizer that carries a response
template must import (and install) the package by itself.
"""

from __future__ import annotations


def parse_rows(args):
    """`tokenizer.parse_response` of one (tokenizer, responses, prefix) job, in a worker process."""
    tokenizer, responses, prefix = args
    return tokenizer.parse_response(responses, prefix=prefix)


def continue_parser(args):
    """Feed the rest of a stream to a parser pickled mid-stream; return (events, message)."""
    parser, rest = args
    events = parser.feed(rest)
    message, final = parser.finalize()
    return events + final, message
