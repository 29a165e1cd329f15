"""``hf-response-templates serve MODEL_PATH``: a local model behind the OpenAI and Anthropic APIs.

The server answers ``/v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` (streamed or not) and
``/v1/models``, with the model's reasoning, text and tool calls parsed by its response template as it
generates. It is a plain ASGI application (`ServeApp`) run on uvicorn (``pip install
"hf-response-templates[serve]"``)::

    hf-response-templates serve ./my-model --port 8000

    from openai import OpenAI
    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="unused")
    client.chat.completions.create(model="my-model", messages=[...], tools=[...])

From Python: ``create_app(model, tokenizer)`` gives the ASGI application for a model already loaded (any
ASGI server runs it); `serve` loads a folder and runs uvicorn.

Modules: `protocol` (request validation and conversion, no Transformers), `generate` (``generate`` in a
worker thread with a `ResponseStreamer`, one generation at a time, cancellation), `apis` (each API's
stream and response from the package's stream objects), `app` (the ASGI application). Transformers and
torch are imported by this subpackage only, never by the engine.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["create_app", "load_model", "load_tokenizer", "resolve_template", "serve"]

logger = logging.getLogger("hf_response_templates.serve")


def resolve_template(tokenizer: Any, choice: str | None = "auto") -> tuple[Any, str]:
    """The response template to serve with, and a label saying where it came from.

    ``choice``: ``"auto"`` (or None): the tokenizer's own ``response_template``, else the shipped template its
    chat template exactly is, else the shipped family detected from its markers (logged as a warning);
    ``"derive"``: derived from the chat template (`hf_response_templates.derive`), only if its proof passes;
    a shipped template name; or a path to a template ``.json`` file.

    Raises:
        ValueError: no template fits (the message says what to pass instead).
    """
    from hf_response_templates.library import detect_template, get_template, list_templates
    from hf_response_templates.tokenizer import (
        NoResponseTemplateError,
        _resolve_template,
        _underlying_tokenizer,
    )

    base = _underlying_tokenizer(tokenizer)
    if choice in (None, "auto"):
        try:
            template = _resolve_template(base, None)
            own = getattr(base, "response_template", None) is not None
            return template, "the tokenizer's response_template" if own else "the shipped template of its chat template"
        except NoResponseTemplateError:
            family = detect_template(base)
            if family is None:
                raise ValueError(
                    "the tokenizer has no response_template and its chat template matches no shipped family; pass "
                    f"--template NAME (one of: {', '.join(list_templates())}), --template FILE.json or "
                    "--template derive"
                ) from None
            logger.warning(
                "the chat template looks like the %r family's but is not exactly one the library was proven "
                "against; serving with the shipped %r template (check with `hf-response-templates verify`)",
                family,
                family,
            )
            return get_template(family), f"the shipped {family!r} template (detected)"
    if choice == "derive":
        from hf_response_templates.derive import derive

        result = derive(base)
        if not result.ok:
            raise ValueError(
                "the template derived from the chat template is not proven: " + "; ".join(result.problems[:3])
            )
        return result.template, "derived from the chat template"
    if choice.endswith(".json") or os.path.sep in choice:
        import json

        path = Path(choice).expanduser()
        try:
            return json.loads(path.read_text(encoding="utf-8")), str(path)
        except (OSError, ValueError) as e:
            raise ValueError(f"{choice}: cannot read the template: {e}") from None
    return get_template(choice), f"the shipped {choice!r} template"


def _check_folder(path: str | os.PathLike[str]) -> Path:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"{path}: no such model folder")
    return folder


def load_tokenizer(path: str | os.PathLike[str]) -> Any:
    """The tokenizer of a local model folder (nothing is downloaded)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(_check_folder(path), local_files_only=True)


def load_model(path: str | os.PathLike[str], *, device: str = "cpu", dtype: str = "auto") -> Any:
    """A causal LM from a local folder (nothing is downloaded: a missing folder is an error), in eval mode on
    ``device``. ``dtype``: "auto" (the checkpoint's), "float32", "bfloat16", "float16"."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    folder = _check_folder(path)
    if dtype != "auto" and not isinstance(getattr(torch, dtype, None), torch.dtype):
        raise ValueError(f"--dtype: unknown dtype {dtype!r} (auto, float32, bfloat16, float16)")
    torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype)
    key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, **{key: torch_dtype})
    return model.to(torch.device(device)).eval()


def create_app(
    model: Any,
    tokenizer: Any,
    *,
    model_name: str | None = None,
    template: Any = "auto",
    max_new_tokens: int = 512,
    logits_processor: Any = None,
    generate_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """The ASGI application serving ``model`` (a `ServeApp`; run it with uvicorn or any ASGI server).

    Args:
        model, tokenizer: a causal LM and its tokenizer (with a chat template).
        model_name: the model id clients see (default: the model's ``name_or_path``).
        template: a response template (dict or compiled), or a choice for `resolve_template`
            ("auto", "derive", a shipped name, a ``.json`` path).
        max_new_tokens: the token budget of a request that sets none, and the most a request may ask.
        logits_processor: ``f(prompt_ids) -> LogitsProcessor | list``, called for every generation (a hook
            for tests and constrained decoding; not a command line option).
        generate_kwargs: more ``generate`` arguments for every request.
    """
    from hf_response_templates.serve.app import ServeApp
    from hf_response_templates.serve.generate import ModelWorker

    if template is None or isinstance(template, str):
        template, label = resolve_template(tokenizer, template)
        logger.info("response template: %s", label)
    name = model_name or str(getattr(model, "name_or_path", "") or "model")
    worker = ModelWorker(
        model,
        tokenizer,
        template,
        max_new_tokens=max_new_tokens,
        logits_processor=logits_processor,
        generate_kwargs=generate_kwargs,
    )
    return ServeApp(worker, model_name=name)


def serve(
    model_path: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    template: str = "auto",
    device: str = "cpu",
    dtype: str = "auto",
    max_new_tokens: int = 512,
    model_name: str | None = None,
    log_level: str = "info",
) -> None:
    """Load ``model_path`` and serve it on ``host:port`` with uvicorn until interrupted."""
    import uvicorn

    tokenizer = load_tokenizer(model_path)
    response_template, label = resolve_template(tokenizer, template)  # before the weights: fail fast
    logger.warning("response template: %s", label)
    model = load_model(model_path, device=device, dtype=dtype)
    name = model_name or Path(model_path).expanduser().resolve().name
    app = create_app(model, tokenizer, model_name=name, template=response_template, max_new_tokens=max_new_tokens)
    uvicorn.run(app, host=host, port=port, log_level=log_level)
