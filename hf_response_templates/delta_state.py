"""Per-stream state, template analysis and small helpers shared by the delta adapters (`deltas.py`,
`delta_tools.py`): where a tool-call field's transform takes names and arguments from, what a region and a
call have sent so far, and how deltas are merged."""

from __future__ import annotations

import json
import marshal
import random
import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from hf_response_templates.partial import MISSING as _MISSING
from hf_response_templates.transform import _PLACEHOLDER  # "{content.args}": the same syntax as transforms

_ID_CHARS = string.ascii_letters + string.digits
_REASONING_NAMES = ("reasoning_content", "reasoning", "thinking")
_FINISH_REASONS = (None, "stop", "length", "tool_calls", "content_filter")


def _dumps(value: Any) -> str:
    t = type(value)
    if t is str:
        return _encode_string(value)
    if t is int:
        return int.__repr__(value)
    if t is list and len(value) < 64:  # a short list of integers and strings, as json.dumps writes it
        parts = []
        for item in value:
            ti = type(item)
            if ti is int:
                parts.append(int.__repr__(item))
            elif ti is str:
                parts.append(_encode_string(item))
            else:
                return _encode(value)
        return "[" + ", ".join(parts) + "]"
    return _encode(value)


_encode = json.JSONEncoder(ensure_ascii=False).encode  # == json.dumps(value, ensure_ascii=False), made once


_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # == _dumps for a str, faster
_SURROGATE = re.compile("[\ud800-\udfff]")
_COMPACT_AT = 4096  # pieces of sent text kept before they are joined (memory; amortized linear)
_LENGTH_PREFIX = "generation stopped at the token limit inside this tool call: "

#: Call ids that formats write in the open delimiter of a call (kept instead of generated ones):
#: Mistral ``[TOOL_CALLS]name[CALL_ID]id[ARGS]``, Kimi K2 ``<|tool_call_begin|>functions.name:0``.
_MODEL_ID_PATTERNS = (
    re.compile(r"\[CALL_ID\](?P<id>[^\[\]]+)\[ARGS\]"),
    re.compile(r"<\|tool_call_begin\|>\s*(?P<id>functions\.[^\s:<]+:\d+)"),
)


def _scrub(text: str) -> str:
    """Lone surrogates (from JSON escapes such as ``\\ud800``) -> U+FFFD: they cannot be encoded as UTF-8."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def _same_json(a: Any, b: Any) -> bool:
    """Whether json.dumps surely writes `a` and `b` alike: their `marshal` serializations (version 0) are equal,
    which they are only for the same structure, key order, exact types (``1``, ``1.0`` and ``True`` differ; a
    subclass of a JSON type cannot be marshalled) and values (floats to the bit). False when unsure."""
    try:
        return marshal.dumps(a, 0) == marshal.dumps(b, 0)
    except (ValueError, RecursionError):  # (not marshallable: the caller encodes it)
        return False


def _any_strict(tools: Iterable[Any] | None) -> bool:
    """Whether any request tool (OpenAI format) says ``"strict": true``."""
    for tool in tools or ():
        if isinstance(tool, Mapping):
            fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
            if fn.get("strict") is True or tool.get("strict") is True:
                return True
    return False


# --------------------------------------------------------------------------- template analysis


def _ref(node: Any) -> tuple | None:
    """A transform leaf as a source: ("ref", root, keys) | ("lit", value) | ("complex",) | None."""
    if node is None:
        return None
    if isinstance(node, str):
        m = _PLACEHOLDER.fullmatch(node)
        if m is None:
            return ("lit", node)
        if "|" in m.group(1):  # fallbacks ("{content.parameters|content.arguments}"): known when the region closes
            return ("complex",)
        root, *keys = m.group(1).split(".")
        return ("ref", root, tuple(keys))
    if isinstance(node, (int, float, bool)):
        return ("lit", node)
    return ("complex",)


class _Shape:
    """Where a tool-call field's transform takes each call's name, arguments and id from."""

    __slots__ = ("each", "dynamic", "fn_keys", "name", "args", "id", "streamable")

    def __init__(self, spec: Mapping[str, Any]):
        t = spec.get("transform")
        self.each = bool(spec.get("transform_each"))
        self.dynamic = False  # the call node may be {"function": {...}} or the function itself
        self.fn_keys: tuple = ()
        self.name = self.args = self.id = None
        self.streamable = True
        if spec.get("content") == "json" and (spec.get("content_args") or {}).get("allow_non_json"):
            # the body may turn out not to be JSON (the arguments are then its text): nothing streams before
            # the region closes, since fragments of a JSON object could not be taken back
            self.streamable = False
        if t is None or isinstance(t, str):
            ref = ("ref", "content", ()) if t is None else _ref(t)
            if ref is None or ref[0] != "ref" or ref[1] != "content" or self.each:
                self.streamable = False
            else:
                self.dynamic, self.fn_keys = True, ref[2]
            return
        if not isinstance(t, dict):
            self.streamable = False
            return
        self.id = _ref(t.get("id"))
        fn = t["function"] if "function" in t else t
        if isinstance(fn, str):
            ref = _ref(fn)
            if ref is None or ref[0] != "ref":
                self.streamable = False
                return
            self.name = ("ref", ref[1], ref[2] + ("name",))
            self.args = ("ref", ref[1], ref[2] + ("arguments",))
        elif isinstance(fn, dict):
            self.name = _ref(fn.get("name"))
            self.args = _ref(fn.get("arguments"))
        else:
            self.streamable = False


def _get(value: Any, path: tuple) -> Any:
    for key in path:
        if isinstance(value, dict):
            if key not in value:
                return _MISSING
            value = value[key]
        elif isinstance(value, list) and isinstance(key, int):
            if key >= len(value):
                return _MISSING
            value = value[key]
        else:
            return _MISSING
    return value


# --------------------------------------------------------------------------- per-stream state


class _Call:
    __slots__ = (
        "index", "id", "name", "parts", "stuck", "error", "done", "final", "opened", "members",
        "str_key", "str_chunks", "str_idx", "held", "value", "run", "ann",
    )  # fmt: skip

    def __init__(self, index: int, call_id: str, name: str):
        self.index = index
        self.id = call_id
        self.name = name
        self.parts: list[str] = []  # arguments text sent so far, in pieces
        self.stuck = False  # the stable text stopped extending what was sent: wait for the close
        self.error: dict | None = None
        self.done = False
        self.final = False  # the complete arguments were sent (from the partial parse)
        self.opened = False  # "{" sent
        self.members = 0  # members of the arguments object sent whole
        self.str_key: Any = None  # the member whose string value is streaming
        self.str_chunks: list[str] = []  # the partial parser's decoded pieces of that string
        self.str_idx = 0  # how many of them were sent
        self.held: str | None = None  # the complete arguments, while their last "}" waits
        self.value: Any = _MISSING  # what `held` is the scrubbed json.dumps of, if known (`ToolCallDeltas._args_text`)
        # While its region sinks its string (`_Region.sink`): the pieces of `str_chunks` from this index on were
        # sent but are not in `parts` yet (`_fold`); -1: none
        self.run = -1
        self.ann: dict | None = None  # the delta that announced it (`ToolCallDeltas._announce`)

    @property
    def sent(self) -> str:
        if self.run >= 0:
            _fold(self)
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


def _fold(call: _Call) -> None:
    """Put the pieces of a sunk string sent since `_Call.run` into `call.parts`, joined (the sink appends them
    to the string's pieces only: one list instead of two per piece), before anything else reads or extends
    `parts`; the sink goes on. See `_unsink`."""
    k = call.run
    if k >= 0:
        chunks = call.str_chunks
        n = len(chunks)
        call.run = n
        if n > k:
            parts = call.parts
            parts.append(chunks[k] if n == k + 1 else "".join(chunks[k:]))
            if len(parts) >= _COMPACT_AT:
                _join_pieces(parts)


def _unsink(call: _Call) -> None:
    """The region stops sinking `call`'s string (`_Region.sink`): `_fold`, and no run from now on (the partial
    parser, fed again, appends to the string's pieces what is sent otherwise)."""
    k = call.run
    if k >= 0:  # (`_fold`, inlined: a string sunk for a few pieces is common)
        call.run = -1
        chunks = call.str_chunks
        n = len(chunks)
        if n > k:
            parts = call.parts
            parts.append(chunks[k] if n == k + 1 else "".join(chunks[k:]))
            if len(parts) >= _COMPACT_AT:
                _join_pieces(parts)


def _compact(call: _Call) -> None:
    """Join the pieces of a sunk string once there are `_COMPACT_AT` of them (`_join_pieces`), after putting
    those not in `parts` there (`_fold`)."""
    chunks = call.str_chunks
    if len(chunks) >= _COMPACT_AT:
        _fold(call)
        _join_pieces(chunks)  # (all sent: `str_idx` is set when the sink is left)
        call.run = len(chunks)


def _join_pieces(pieces: list[str]) -> None:
    """Join a list of text pieces in place (memory: a piece is a string object), in amortized linear time: the
    pieces after the leading blocks (items of `_COMPACT_AT` characters or more) become one block, and the list
    is joined whole only when its blocks after the first outweigh that one (the text at least doubled since it
    was last joined whole) or are many. Joining it whole every `_COMPACT_AT` pieces would copy the text again
    each time: quadratic in its length."""
    n = len(pieces)
    m = 0
    while m < n and len(pieces[m]) >= _COMPACT_AT:
        m += 1
    if m < n - 1:
        pieces[m:] = ["".join(pieces[m:])]
    if m >= _COMPACT_AT // 2 or m and sum(map(len, pieces[1:])) >= len(pieces[0]):
        pieces[:] = ["".join(pieces)]


class _TextState:
    __slots__ = ("regions", "nonempty")

    def __init__(self) -> None:
        self.regions = 0
        self.nonempty = False


class _Region:
    __slots__ = (
        "name", "kind", "content", "partial", "captures", "calls", "dirty", "started", "held", "sent",
        "length_cut", "key", "strip", "version", "streaming", "first_active", "model_id", "fast", "sink",
        "follow", "followable", "hot_key", "stop", "hot", "srcs",
    )  # fmt: skip

    def __init__(self, name: str, kind: str, content: str, captures: dict | None, partial: Any = None):
        self.name = name
        self.kind = kind  # "text" | "tool" | "value"
        self.content = content
        self.partial = partial  # the content format's partial parser (see `hf_response_templates.partial`), or None
        self.captures = captures  # None: not known yet
        self.calls: list[_Call] = []
        self.dirty = False
        self.started = False
        self.held = ""
        self.sent: list[str] = []  # text sent, in pieces
        self.length_cut = False
        self.key: str | None = None  # text regions: the delta key
        self.strip = True
        self.version = -1  # the partial parser's version at the last update
        self.streaming: _Call | None = None  # the call whose string member is streaming
        self.first_active = 0  # calls before this one have sent their complete arguments
        self.model_id: str | None = None  # a call id the model wrote in the open delimiter
        # (call, arguments node, its open frame, frame version seen, its depth in the partial parser's stack) while
        # that object is open
        self.fast: tuple | None = None
        # The streaming call, while the partial parser's last feed returned True (`JsonPartial.feed`): it sits in
        # that call's open string with nothing held back, so text without '"', '\\' or control characters
        # would only be appended to the string's pieces (`open_string`): the stream appends it itself
        self.sink: _Call | None = None
        # The call whose open arguments object the partial parser writes out itself (`JsonPartial.follow`): its
        # `feed` returns the next fragment of the arguments
        self.follow: _Call | None = None
        # while `sink` is set: a character that text appended by the stream itself must not hold either, besides
        # '"', '\\' and control characters (the partial parser's `sink_stop`, e.g. the "<" that may end an XML
        # value; '"' when it has none)
        self.stop = '"'
        self.followable = True  # False: its partial parser can never follow (see `ToolCallDeltas._try_follow`)
        # A text region's delta key once its text started, if it strips trailing whitespace: the flat path
        # of `DeltaStream._feed` takes its chunks
        self.hot_key: str | None = None
        # A tool region of a stream with its own parser: the stream's ``feed`` while it sinks or follows
        # (`delta_hot.hot_feed`)
        self.hot: Any = None
        # A region of one call whose sources do not depend on the value: `ToolCallDeltas._sources` of it, once the
        # captures are known
        self.srcs: tuple | None = None


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _delta_chars(delta: Mapping) -> int:
    n = 0
    for value in delta.values():
        if isinstance(value, str):
            n += len(value)
        elif isinstance(value, list):
            for item in value:
                fn = item.get("function") if isinstance(item, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    n += len(fn["arguments"])
    return n


# byte -> the id character its top 6 bits pick (`_random_id`), "*" for the values `random.Random.choice` draws again
_ID_TABLE = "".join(_ID_CHARS[b >> 2] if b >> 2 < len(_ID_CHARS) else "*" for b in range(256)).encode()


def _random_id(rng: random.Random) -> str:
    """24 characters of `_ID_CHARS`: ``"".join(rng.choice(_ID_CHARS) for _ in range(24))``, the same characters
    for the same seed, drawn as `random.Random.choice` draws them: 6 random bits (the top of one 32-bit word of
    the generator, ``getrandbits(6)``), again while >= 62. The words come in one call (``getrandbits(32 * n)``
    gives the next n words, the first one lowest), and their top bytes are mapped to characters at once; a word
    drawn again is made up for by as many more words: exactly the words ``choice`` consumes."""
    bits = rng.getrandbits
    out = b""
    need = 24
    while need:
        got = bits(32 * need).to_bytes(4 * need, "little")[3::4].translate(_ID_TABLE).replace(b"*", b"")
        out += got
        need -= len(got)
    return out.decode()


def _call_id(rng: random.Random) -> str:
    return "call_" + _random_id(rng)


def _merge(deltas: list[dict]) -> list[dict]:
    """Join consecutive text pieces of one key and consecutive argument pieces of one call."""
    out: list[dict] = []
    for d in deltas:
        if out:
            last = out[-1]
            if len(d) == 1 and len(last) == 1:
                ((key, value),) = d.items()
                ((lkey, lvalue),) = last.items()
                if key == lkey and isinstance(value, str) and isinstance(lvalue, str):
                    last[key] = lvalue + value
                    continue
                if key == lkey == "tool_calls" and len(value) == 1 and len(lvalue) == 1:
                    entry, lentry = value[0], lvalue[-1]
                    fn = entry.get("function")
                    if (
                        lentry.get("index") == entry.get("index")
                        and set(entry) == {"index", "function"}
                        and isinstance(fn, dict)
                        and set(fn) == {"arguments"}
                        and "error" not in lentry
                        and isinstance(lentry.get("function"), dict)
                    ):
                        lfn = lentry["function"]
                        lfn["arguments"] = lfn.get("arguments", "") + fn["arguments"]
                        continue
        out.append(d)
    return out
