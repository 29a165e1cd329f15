"""Properties of the streaming engine (issue 2), on the seed's templates and texts built from their
delimiters: chunking invariance and character accounting."""

from __future__ import annotations

from engine_helpers import COHERE, GPT_OSS, QWEN_XML, SMOLLM3, chunk_text_by_field, merge_chunks, stream
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import ResponseParser

LOOKAHEAD = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": ["<think>", "<thinking>"], "close_pattern": r"</think(?:ing)?>"},
        "tool_calls": {"open": "[TOOL_CALLS]", "close_pattern": r"(?=\[TOOL_CALLS\])|</s>", "repeats": True,
                       "content": "json", "content_args": {"allow_non_json": True}},
        "content": {"close_pattern": r"(?=\[TOOL_CALLS\])|</s>"},
    },
}

TEMPLATES = {"smollm3": SMOLLM3, "qwen_xml": QWEN_XML, "gpt_oss": GPT_OSS, "cohere": COHERE, "lookahead": LOOKAHEAD}

PIECES = {
    "smollm3": ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", "<|im_", "<th", "</"],
    "qwen_xml": ["<think>", "</think>", "<tool_call>", "<function=f>", "<function=get_w>", "<parameter=a>",
                 "</parameter>", "</function>", "</tool_call>", "<|im_end|>", "\n", "<func"],
    "gpt_oss": ["<|channel|>analysis<|message|>", "<|end|>", "<|start|>assistant", "<|channel|>final<|message|>",
                "<|channel|>commentary to=functions.f <|constrain|>json<|message|>", "<|call|>", "<|return|>",
                "<|channel|>", "<|message|>"],
    "cohere": ["<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>",
               "<|START_ACTION|>", "<|END_ACTION|>", "<|END_OF_TURN_TOKEN|>", "<|START_"],
    "lookahead": ["<think>", "<thinking>", "</think>", "</thinking>", "[TOOL_CALLS]", "</s>", "[TOOL", "</"],
}

FILLER = st.text(alphabet=st.sampled_from(list('ab <>/|{}[]":,\n\té1_=')), max_size=6)


@st.composite
def case(draw):
    name = draw(st.sampled_from(sorted(TEMPLATES)))
    parts = draw(st.lists(st.one_of(st.sampled_from(PIECES[name]), FILLER,
                                    st.just('{"name": "f", "arguments": {"x": 1}}')), max_size=14))
    text = "".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks, last = [], 0
    for c in cuts + [len(text)]:
        chunks.append(text[last:c])
        last = c
    return name, text, chunks


@settings(max_examples=400, deadline=None)
@given(case())
def test_any_chunking_gives_the_same_message_and_chunk_text(c):
    name, text, chunks = c
    tpl = TEMPLATES[name]
    whole_msg, whole_events = stream(tpl, [text])
    split_msg, split_events = stream(tpl, chunks)
    assert split_msg == whole_msg
    assert chunk_text_by_field(split_events) == chunk_text_by_field(whole_events)
    assert merge_chunks(split_events) == merge_chunks(whole_events)


@settings(max_examples=400, deadline=None)
@given(case())
def test_every_character_is_accounted_for(c):
    name, text, chunks = c
    parser = ResponseParser(TEMPLATES[name], "", trace=True)
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.finalize()[1]
    pieces = [e["text"] for e in events if e["type"] in ("region_chunk", "delimiter", "text_dropped")]
    assert "".join(pieces) == text
    tpl = parser.template
    for e in events:
        if e["type"] == "text_dropped":
            # dropped text only where the template says so: no implicit field, or after the message ended
            assert (
                (e["reason"] == "outside_regions" and tpl.implicit_field is None)
                or (e["reason"] == "whitespace" and tpl.implicit_field is not None and e["text"].isspace())
                or e["reason"] == "after_end"
            )


@settings(max_examples=200, deadline=None)
@given(case(), st.text(max_size=20))
def test_the_prefix_is_processed_like_the_start_of_the_generation(c, before):
    name, text, _ = c
    tpl = TEMPLATES[name]
    anchor = tpl["start_anchor"]
    if anchor in text or anchor in before:
        return
    prefix = before + anchor + text[: len(text) // 2]
    with_prefix, _ = stream(tpl, [text[len(text) // 2 :]], prefix=prefix)
    without, _ = stream(tpl, [text])
    for message in (with_prefix, without):  # positions count from the start of the generation: they differ
        for record in message.get("unparsed", []):
            record.pop("position")
        # text outside every region is recorded only where the model wrote it, not in the prompt
        message["unparsed"] = [r for r in message.get("unparsed", []) if r["field"] is not None]
        if not message["unparsed"]:
            del message["unparsed"]
    assert with_prefix == without
