"""What every partial reader shares: `MISSING`, `Frame`, and the open root of the xml-inline and
python-call-list readers (see the package docs for the interface)."""

from __future__ import annotations

import copy
from typing import Any


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: No value (yet) at a path.
MISSING: Any = _Missing()


class Frame:
    """An open container: its node, member keys in order (dicts), and the member being written."""

    __slots__ = ("node", "is_dict", "keys", "open_key", "pending_key", "version")

    def __init__(self, node: Any, is_dict: bool):
        self.node = node
        self.is_dict = is_dict
        self.keys: list = []  # dict member keys, in order, as their values start
        self.open_key: Any = None  # the key (dict) or index (list) whose value is being written
        self.pending_key: Any = None  # a dict key read, its value not started yet
        self.version = 0  # grows when one of its own members starts or ends (not deeper changes)



class _OpenRoot:
    """Shared by the formats whose root (a dict of parameters, a list of calls) stays open to the end."""

    __slots__ = ("value", "broken", "version", "stack", "_frame", "_final")

    def __init__(self, root: Any, members_final: bool):
        self.value = root
        self.broken = False
        self.version = 0
        self._frame = Frame(root, isinstance(root, dict))
        self.stack = [self._frame]  # as JsonPartial's: the open containers (here the root, to the end)
        self._final = members_final

    def complete(self, path: tuple) -> bool:
        return bool(path) and self._final

    def frame(self, node: Any) -> Frame | None:
        return self._frame if node is self.value else None

    def open_string(self, frame: Frame) -> list[str] | None:
        return None

    def snapshot(self) -> Any:
        return copy.deepcopy(self.value)
