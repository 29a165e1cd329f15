"""The model side of `serve`: Transformers ``generate`` in a worker thread, streamed as parser events.

`ModelWorker` owns one model and its tokenizer. `prepare` renders a conversation with the tokenizer's chat
template (tools and ``tool_choice`` included) into ``generate`` inputs; `stream` runs ``generate`` in a
thread with a `ResponseStreamer` and yields the parser's events as the model writes, then one `Outcome`
(the finish reason, token counts, the parsed message, and the parser's closing events, held back so that the
stream objects see them once the finish reason is known: a tool call cut at the token limit is ``length``,
not ``malformed``).

One generation runs at a time (a lock: concurrent requests wait their turn instead of sharing one model's
caches). A request is cancelled by setting its ``cancel`` event (the server does it when the client
disconnects): a stopping criterion ends ``generate`` at its next token, and a request still waiting for the
lock never starts. Closing the `stream` generator early cancels too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

from hf_response_templates.openai import _eos_ids, _finish_reason, chat_inputs
from hf_response_templates.serve.protocol import GenerationRequest
from hf_response_templates.tokenizer import ResponseStreamer, _underlying_tokenizer

__all__ = ["ModelWorker", "Outcome", "Prepared"]

#: ``f(input_ids) -> LogitsProcessor | list[LogitsProcessor]``, called once per generation with the prompt
#: ids (shape ``(1, prompt_length)``): a hook for tests and for constrained decoding.
LogitsProcessorFactory = Callable[[Any], Any]


@dataclass
class Prepared:
    """A request rendered into ``generate`` inputs."""

    request: GenerationRequest
    inputs: Any
    prompt_tokens: int
    max_new_tokens: int


@dataclass
class Outcome:
    """How one generation ended."""

    #: "length" when the token budget ran out without an EOS id, else None (the stream objects decide)
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    #: the parser's closing events (feed them with the stream's ``finish(..., events=...)``)
    final_events: list[dict[str, Any]]
    #: the parsed message (``strict=False``: regions that failed are under ``unparsed``)
    message: dict[str, Any]


class _Cancelled(StoppingCriteria):
    """Stops ``generate`` once the request's cancel event is set."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        return torch.full((input_ids.shape[0],), self.cancel.is_set(), dtype=torch.bool, device=input_ids.device)


class ModelWorker:
    """Runs generations of one model, one at a time (see the module docs).

    Args:
        model: a causal LM with ``generate``.
        tokenizer: its tokenizer (with a chat template).
        template: the response template that parses the output (dict, compiled or shipped name).
        max_new_tokens: the budget of a request that does not set one; also the most a request may ask.
        logits_processor: `LogitsProcessorFactory`, called with each prompt's ids.
        generate_kwargs: more ``generate`` arguments for every request.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        template: Any,
        *,
        max_new_tokens: int = 512,
        logits_processor: LogitsProcessorFactory | None = None,
        generate_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.template = template
        self.max_new_tokens = max_new_tokens
        self._logits_processor = logits_processor
        self._generate_kwargs = dict(generate_kwargs or {})
        self._lock = threading.Lock()
        base = _underlying_tokenizer(tokenizer)
        self._eos = _eos_ids(model, base, self._generate_kwargs)
        pad = getattr(base, "pad_token_id", None)
        if pad is None and getattr(getattr(model, "generation_config", None), "pad_token_id", None) is None:
            pad = min(self._eos) if self._eos else None
        if pad is not None:
            self._generate_kwargs.setdefault("pad_token_id", pad)

    def prepare(self, request: GenerationRequest) -> Prepared:
        """Render the conversation (raises what the chat template raises, e.g. on an unsupported role).

        Runs under the generation lock: a fast tokenizer must not encode in one thread while another decodes
        (Rust's "Already borrowed")."""
        kwargs = dict(request.chat_template_kwargs)
        tools = request.tools
        if request.tool_choice == "none":
            tools = None
        elif request.tool_choice is not None:
            kwargs.setdefault("tool_choice", request.tool_choice)
        with self._lock:
            inputs = chat_inputs(self.model, self.tokenizer, request.messages, tools=tools, chat_template_kwargs=kwargs)
        budget = request.max_new_tokens if request.max_new_tokens is not None else self.max_new_tokens
        return Prepared(request, inputs, int(inputs["input_ids"].shape[-1]), min(budget, self.max_new_tokens))

    def _generate_arguments(self, prepared: Prepared, cancel: threading.Event) -> dict[str, Any]:
        request = prepared.request
        kwargs: dict[str, Any] = {**self._generate_kwargs, "max_new_tokens": prepared.max_new_tokens}
        if request.temperature is not None or request.top_p is not None:
            greedy = request.temperature == 0
            kwargs["do_sample"] = not greedy
            if not greedy:
                if request.temperature is not None:
                    kwargs["temperature"] = request.temperature
                if request.top_p is not None:
                    kwargs["top_p"] = request.top_p
        kwargs["stopping_criteria"] = StoppingCriteriaList([_Cancelled(cancel)])
        return kwargs

    def _logits_processors(self, prepared: Prepared) -> dict[str, Any]:
        if self._logits_processor is None:
            return {}
        made = self._logits_processor(prepared.inputs["input_ids"])
        return {"logits_processor": LogitsProcessorList(made if isinstance(made, (list, tuple)) else [made])}

    def stream(self, prepared: Prepared, cancel: threading.Event) -> Iterator[list[dict[str, Any]] | Outcome]:
        """Generate; yield lists of parser events as the model writes them, then one `Outcome`.

        A failing ``generate`` raises its exception here. Setting ``cancel`` (or closing this generator) stops
        the generation at its next token.
        """
        request = prepared.request
        # trace=True: the delimiter events carry the call ids a model writes (Mistral [CALL_ID], Kimi K2)
        streamer = ResponseStreamer(
            self.tokenizer, tools=request.tools, response_template=self.template, strict=False, trace=True
        )
        kwargs = self._generate_arguments(prepared, cancel)
        result: dict[str, Any] = {}

        def run() -> None:
            with self._lock:
                try:
                    if not cancel.is_set():  # else the client went away while waiting for its turn
                        kwargs.update(self._logits_processors(prepared))  # (the factory may use the tokenizer)
                        result["output"] = self.model.generate(**prepared.inputs, streamer=streamer, **kwargs)
                except BaseException as e:  # noqa: BLE001 - raised in the consumer's thread, below
                    result["error"] = e
                finally:
                    streamer.end()  # (a no-op after generate's own end())

        thread = threading.Thread(target=run, name="hf-response-templates-serve", daemon=True)
        thread.start()
        final: list[dict[str, Any]] = []
        drained = False
        try:
            for event in streamer:
                if final or event.get("at_end"):
                    final.append(event)
                    continue
                yield [event]
            drained = True
        finally:
            if not drained:
                cancel.set()  # closed early (or generate failed): stop generating
        thread.join()
        if "error" in result:
            raise result["error"]
        output = result.get("output")
        if output is None:  # cancelled before it started
            completion = 0
            reason = None
        else:
            sequences = output.sequences if hasattr(output, "sequences") else output
            completion = int(sequences.shape[-1]) - prepared.prompt_tokens
            reason = _finish_reason(
                output, prepared.prompt_tokens, prepared.max_new_tokens, self._eos, self.model, kwargs
            )
        yield Outcome(reason, prepared.prompt_tokens, completion, final, streamer.message)
