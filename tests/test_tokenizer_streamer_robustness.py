"""`ResponseStreamer` cannot hang its consumer (issue 13, item 6) nor hold text forever (issue 14, item 4).

* `generate` failing in its thread (here: before its first token, with a bad keyword argument) ends
  `for event in streamer` with that exception instead of blocking forever.
* Tokens decoding to U+FFFD (lone UTF-8 continuation bytes) are held for at most a UTF-8 character's
  worth of tokens, then streamed, so decoding work stays linear in the number of tokens.
"""

from __future__ import annotations

import queue
import threading

import pytest
from _tiny_model import scripted_generate, tiny_model
from _tokenizers import byte_level_tokenizer, qwen3_template

from hf_response_templates.tokenizer import ResponseStreamer, install

install()

PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def tok():
    t = byte_level_tokenizer()
    t.response_template = qwen3_template()
    return t


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_generate_that_fails_before_its_first_token_raises_in_the_consumer(tok):
    model = tiny_model(tok)
    inputs = tok([PROMPT], return_tensors="pt", add_special_tokens=False, return_token_type_ids=False)
    streamer = ResponseStreamer(tok, timeout=60)  # the timeout only turns a regression into a failure
    thread = threading.Thread(
        target=model.generate, kwargs=dict(**inputs, streamer=streamer, max_new_tokens=5, no_such_kwarg=1)
    )
    thread.start()
    with pytest.raises(ValueError, match="no_such_kwarg"):
        for _ in streamer:
            pass
    thread.join(60)
    with pytest.raises(ValueError, match="no_such_kwarg"):
        _ = streamer.message


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_failing_lambda_wrapper_is_found_too(tok):
    model = tiny_model(tok)
    inputs = tok([PROMPT], return_tensors="pt", add_special_tokens=False, return_token_type_ids=False)
    streamer = ResponseStreamer(tok, timeout=60)
    other = ResponseStreamer(tok, timeout=0.5)  # another stream in the same process is left alone
    result = {}
    thread = threading.Thread(
        target=lambda: result.update(out=model.generate(**inputs, streamer=streamer, max_new_tokens="x"))
    )
    thread.start()
    with pytest.raises(Exception) as caught:
        list(streamer)
    assert not isinstance(caught.value, queue.Empty)
    thread.join(60)
    with pytest.raises(queue.Empty):
        next(iter(other))


def test_a_generation_that_succeeds_is_unaffected(tok):
    model = tiny_model(tok)
    streamer = ResponseStreamer(tok, timeout=60)
    scripted_generate(model, tok, [PROMPT], ["<think>x</think>Hello!<|im_end|>"], streamer=streamer)
    events = list(streamer)
    assert streamer.message == {"role": "assistant", "reasoning_content": "x", "content": "Hello!"}
    assert events[-1]["type"] == "region_close"


class CountingDecodes:
    """Wraps `batch_decode` to count how many ids are decoded in total."""

    def __init__(self, tokenizer):
        self.ids = 0
        self.calls = 0
        original = tokenizer.batch_decode

        def batch_decode(sequences, **kwargs):
            self.calls += 1
            self.ids += sum(len(s) for s in sequences)
            return original(sequences, **kwargs)

        tokenizer.batch_decode = batch_decode


def lone_continuation_byte(tok) -> int:
    ids = tok.encode("\N{GRINNING FACE}", add_special_tokens=False)  # never seen: one token per byte
    assert len(ids) == 4
    assert tok.decode(ids[1:2]) == "\ufffd"
    return ids[1]


def stream_garbage(tok, n: int) -> tuple[list[dict], int, CountingDecodes]:
    """Feed `n` lone continuation bytes after some text; return (events before the end, ids decoded)."""
    streamer = ResponseStreamer(tok)
    counter = CountingDecodes(streamer.tokenizer)
    byte = lone_continuation_byte(tok)
    streamer.put([tok.encode(PROMPT, add_special_tokens=False)])
    for token in tok.encode("Hi", add_special_tokens=False) + [byte] * n:
        streamer.put([token])
    before_end = []
    while not streamer._queue.empty():
        before_end.append(streamer._queue.get())
    streamer.end()
    list(streamer)
    return before_end, n, counter


def test_replacement_characters_stream_before_the_end(tok):
    events, n, _ = stream_garbage(tok, 200)
    streamed = "".join(e["text"] for e in events if e["type"] == "region_chunk")
    # at most a UTF-8 character's worth of tokens (3 here) is still held when the stream ends
    assert streamed.startswith("Hi") and streamed.count("\ufffd") >= n - 3


def test_a_character_split_over_tokens_is_still_whole(tok):
    streamer = ResponseStreamer(tok)
    streamer.put([tok.encode(PROMPT, add_special_tokens=False)])
    for token in tok.encode("a \N{GRINNING FACE} b", add_special_tokens=False):
        streamer.put([token])
    events = []
    while not streamer._queue.empty():
        events.append(streamer._queue.get())
    streamer.end()
    events += list(streamer)
    assert "\ufffd" not in "".join(e.get("text", "") for e in events)
    assert streamer.message["content"] == "a \N{GRINNING FACE} b"


def test_decoding_work_is_linear_in_replacement_tokens(tok):
    per_token = []
    for n in (100, 1000, 4000):
        _, _, counter = stream_garbage(tok, n)
        per_token.append(counter.ids / n)
    assert max(per_token) < 30, per_token  # a bounded amount of decoding per token
    assert per_token[-1] < 2 * per_token[0], per_token
