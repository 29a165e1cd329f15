"""Coverage-guided fuzzing of `parse_response` / `ResponseParser` with atheris (issue 7).

The fuzzer's bytes pick a template (one of the shipped templates in templates/*.json, or a small
random template built from the same bytes), a text (decoded leniently, so NUL, control characters and
lone surrogates occur) and a chunking. It checks what hypothesis checks in tests/test_fuzz.py, on
inputs guided by coverage instead:

* `feed()` / `finalize()` never raise; `parse_response(strict=False)` never raises and equals the
  streamed message; `strict=True` raises only `ResponseParseError`;
* chunking invariance (streamed == one-shot) and accounting (with `trace=True` and no prefix, the
  chunk / delimiter / dropped texts are exactly the generation).

Anything else is reported by atheris as a crash, with the input saved as `crash-<sha1>`.

How to run (atheris needs a CPython it has wheels for, 3.8-3.11 at the time of writing; it does not
have to be the project's interpreter):

    python -m venv /tmp/atheris-venv
    /tmp/atheris-venv/bin/pip install atheris regex         # the engine needs only `regex`; the script
                                                            # imports it from this checkout
    /tmp/atheris-venv/bin/python scripts/fuzz_atheris.py -atheris_runs=200000
    /tmp/atheris-venv/bin/python scripts/fuzz_atheris.py corpus_dir/ -max_total_time=600  # keep a corpus
    /tmp/atheris-venv/bin/python scripts/fuzz_atheris.py crash-<sha1>                     # replay a crash

Any libFuzzer flag works (-max_len=4096, -jobs=4, -dict=...). The regex timeout is set low (0.05 s)
so a catastrophic pattern costs little; `-timeout=10` makes libFuzzer report real hangs.
Without atheris installed, `python scripts/fuzz_atheris.py --smoke N` runs N random inputs through the
same target with `random` bytes (a quick check that the target itself works).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing

try:  # instrument the engine for coverage feedback when atheris is there
    import atheris
except ImportError:  # `--smoke` still works
    atheris = None
if atheris is not None:
    with atheris.instrument_imports(include=["hf_response_templates"]):
        import hf_response_templates  # noqa: F401

from hf_response_templates import (  # noqa: E402
    ResponseParseError,
    ResponseParser,
    TemplateError,
    load_template,
    parse_response,
)

TEMPLATES_DIR = HERE.parent / "templates"
SHIPPED = []
for path in sorted(TEMPLATES_DIR.glob("*.json")) if TEMPLATES_DIR.is_dir() else []:
    try:
        data = json.loads(path.read_text())
        SHIPPED.append(load_template(data.get("response_template", data)))
    except (ValueError, TemplateError, OSError):
        pass

LITERALS = ["<a>", "</a>", "<b>", "</b>", "<|e|>", "[", "]", "<<", ">>", "ab", "\n"]
REGEXES = [r"<r\d>", r"</?q>", r"<b+>", r"x+", r"(?=<z>)", r"END$", r"(?<=\n)#", r"(?:^|<t>\s*)", r"^", r"$", r"\Z"]
CONTENTS = [
    ("text", None), ("int", None), ("float", None), ("bool", None), ("json", None),
    ("json", {"unquoted_keys": True}), ("json", {"string_delims": [["<<", ">>"]]}),
    ("python-call-list", None), ("kv-lines", None),
    ("xml-inline", {"tag_pattern": r"<(?P<key>\w+)=(?P<value>[^<>]*)>"}),
]
TIMEOUT = 0.05


def build_template(fdp) -> dict:
    """A small random template from the fuzzer's bytes."""
    n = fdp.ConsumeIntInRange(1, 4)
    implicit = fdp.ConsumeIntInRange(-1, n - 1)
    fields = {}
    for i in range(n):
        spec: dict = {}
        if i != implicit:
            if fdp.ConsumeBool():
                spec["open_pattern"] = REGEXES[fdp.ConsumeIntInRange(0, len(REGEXES) - 1)]
            else:
                spec["open"] = LITERALS[fdp.ConsumeIntInRange(0, len(LITERALS) - 1)]
        if fdp.ConsumeBool():
            if fdp.ConsumeBool():
                spec["close_pattern"] = REGEXES[fdp.ConsumeIntInRange(0, len(REGEXES) - 1)]
            else:
                spec["close"] = LITERALS[fdp.ConsumeIntInRange(0, len(LITERALS) - 1)]
        content, args = CONTENTS[fdp.ConsumeIntInRange(0, len(CONTENTS) - 1)]
        spec["content"] = content
        if args:
            spec["content_args"] = args
        spec["repeats"] = fdp.ConsumeBool()
        fields[f"f{i}"] = spec
    return {"start_anchor": "<s>", "defaults": {"role": "assistant"}, "fields": fields}


def check(template, text: str, cuts: list[int]) -> None:
    # streamed, with a chunking from the fuzzer's bytes
    chunks, last = [], 0
    for c in sorted(cuts):
        chunks.append(text[last:c])
        last = c
    chunks.append(text[last:])
    parser = ResponseParser(template, "", trace=True, regex_timeout=TIMEOUT)
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    events += final
    timed_out = any(e["type"] == "error" for e in events)
    pieces = "".join(e["text"] for e in events if e["type"] in ("region_chunk", "delimiter", "text_dropped"))
    assert pieces == text, "accounting: chunk/delimiter/dropped texts differ from the generation"
    json.dumps(message)
    # nothing the model wrote is lost: text outside every region is in `unparsed` (field None), at its position
    for record in message.get("unparsed", []):
        if record["field"] is None:
            at = record["position"]
            assert text[at : at + len(record["text"])] == record["text"], "unparsed record is not the generation"
    lenient = parse_response(text, template, prefix="", strict=False, regex_timeout=TIMEOUT)
    if not timed_out:  # a timeout may strike at a different moment in the one-shot run
        assert json.dumps(lenient, sort_keys=True) == json.dumps(message, sort_keys=True), "chunking changed the message"
    try:
        parse_response(text, template, prefix="", regex_timeout=TIMEOUT)
    except ResponseParseError:
        pass


def TestOneInput(data: bytes) -> None:  # noqa: N802 (atheris' name)
    fdp = atheris.FuzzedDataProvider(data)
    if SHIPPED and fdp.ConsumeBool():
        template = SHIPPED[fdp.ConsumeIntInRange(0, len(SHIPPED) - 1)]
    else:
        template = build_template(fdp)
    cuts_n = fdp.ConsumeIntInRange(0, 8)
    raw = fdp.ConsumeBytes(max(0, fdp.remaining_bytes() - 4 * cuts_n))
    text = raw.decode("utf-8", "surrogateescape")  # invalid UTF-8 -> lone surrogates, as a careless decode gives
    cuts = [fdp.ConsumeIntInRange(0, len(text)) for _ in range(cuts_n)]
    check(template, text, cuts)


def _smoke(n: int) -> None:
    """Run the target on random bytes, without atheris (a self-test of this script)."""
    import random

    class FDP:  # the subset of atheris.FuzzedDataProvider used above
        def __init__(self, data: bytes):
            self.rng = random.Random(data)
            self.left = len(data)
            self.data = data

        def ConsumeBool(self):  # noqa: N802
            return self.rng.random() < 0.5

        def ConsumeIntInRange(self, lo, hi):  # noqa: N802
            return self.rng.randint(lo, hi) if hi >= lo else lo

        def remaining_bytes(self):
            return self.left

        def ConsumeBytes(self, k):  # noqa: N802
            k = max(0, min(k, self.left))
            self.left -= k
            return self.data[:k]

    rng = random.Random(0)
    pool = [t.encode() for t in LITERALS] + [b"<r1>", b"<q>", b"x", b"END", b"\n#", b'{"a": 1}', b"[f(a=1)]",
                                             b"\x00", b"\xff\xfe", b"[" * 50, b"<s>", b"<|im_end|>", b"<tool_call>",
                                             b"<t>", b"\n" * 600, b" " * 520]  # delimiters that never complete
    for _ in range(n):
        data = b"".join(rng.choice(pool) for _ in range(rng.randint(0, 20)))
        fdp = FDP(data)
        template = SHIPPED[fdp.ConsumeIntInRange(0, len(SHIPPED) - 1)] if SHIPPED and fdp.ConsumeBool() \
            else build_template(fdp)
        text = data.decode("utf-8", "surrogateescape")
        cuts = [fdp.ConsumeIntInRange(0, len(text)) for _ in range(fdp.ConsumeIntInRange(0, 8))]
        check(template, text, cuts)
    print(f"smoke: {n} inputs OK")


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "--smoke":
        _smoke(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
        return
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris (see this file's docstring), or use --smoke N")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
