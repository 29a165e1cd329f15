"""``python-call-list``: `CallListPartial`, each call once its ``)`` is there."""

from __future__ import annotations

import re

from hf_response_templates.content import get_content_parser
from hf_response_templates.partial.base import _OpenRoot

_CALL_SEP = re.compile(r"\s*,")


class CallListPartial(_OpenRoot):
    """``python-call-list``: each call once its ``)`` is there and the call parses on its own."""

    __slots__ = ("_pieces", "_started", "_need_comma", "_closed")

    def __init__(self) -> None:
        super().__init__([], True)
        self._pieces: list[str] = []
        self._started = False  # the opening '[' was seen
        self._need_comma = False
        self._closed = False

    def feed(self, text: str) -> None:
        if self.broken or self._closed:
            return
        if not self._started:
            self._pieces.append(text)
            head = "".join(self._pieces).lstrip()
            if not head:
                self._pieces = []
                return
            if head[0] != "[":
                self.broken = True
                return
            self._started = True
            self._pieces = [head[1:]]
            text = head[1:]
        else:
            self._pieces.append(text)
        if ")" not in text:
            return
        tail = "".join(self._pieces)
        parse = get_content_parser("python-call-list").parse
        start = 0
        i = tail.find(")")
        while i >= 0:
            seg = tail[start : i + 1]
            if self._need_comma:
                m = _CALL_SEP.match(seg)
                if m is None:
                    if seg.strip():
                        self.broken = True
                        return
                    i = tail.find(")", i + 1)
                    continue
                seg = seg[m.end() :]
            try:
                calls = parse("[" + seg + "]", {})
            except ValueError:
                calls = None
            if calls:
                self.value.extend(calls)
                self.version += 1
                self._frame.version += 1
                self._need_comma = True
                start = i + 1
            i = tail.find(")", i + 1)
        self._pieces = [tail[start:]]
