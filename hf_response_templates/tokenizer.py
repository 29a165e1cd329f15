"""The Transformers integration: `parse_response`, `get_response_parser` and `response_template` on every
tokenizer, plus streaming out of `generate`.

Theory of operation
-------------------
This is the only module of the package that talks to Transformers, and it does so lazily: importing it
(and so importing `hf_response_templates`) imports neither `transformers` nor `torch` nor `numpy`.

* `_autoinstall()` (called by the package `__init__`) patches `transformers.PreTrainedTokenizerBase`
  right away if `transformers.tokenization_utils_base` is already imported, and otherwise registers a tiny
  `sys.meta_path` hook that patches it the moment Transformers finishes importing that module. The same
  goes for `transformers.processing_utils.ProcessorMixin` (processors forward to their tokenizer).
* `install()` patches now (importing Transformers); `uninstall()` restores whatever was there before.
  Both are idempotent. Setting the environment variable `HF_RESPONSE_TEMPLATES_NO_PATCH=1` before the
  import turns the automatic patching off.
* Patching copies the members of `ResponseTemplateMixin` onto the class, replacing Transformers' own
  `parse_response` / `get_response_parser` (5.x) or adding them (4.x), and wraps `__init__` so a
  `response_template` key of `tokenizer_config.json` is loaded (and validated) on every version. The
  setter mirrors the template into `init_kwargs`, which is what `save_pretrained` writes back on 4.x and
  5.x alike; 5.x additionally writes `self.response_template` itself, which is the same value. A tokenizer
  created before the patch adopts the template Transformers kept (`_adopt`) on first access. On processors
  the property reads and writes the wrapped tokenizer's template.
* A tokenizer without a template whose chat template is exactly a proven one (`library.exact_match`) parses
  with that family's template (`_zero_config_template`).
* The state is `(source dict, compiled template, error)` in the instance `__dict__`; compiled templates
  pickle as their source (`_pickling.py`), so tokenizers deep-copy and pickle.

Token ids are decoded with special tokens kept (chat delimiters are special tokens) and without
clean-up of tokenization spaces; a control token is a delimiter only where its id is in the ids (a spelled-out
one is text: `control_tokens.py`, `_control_tokens`, `_control_texts`: a cheap exact test on the texts decoded,
the ids decoded again run by run only when it fails), and a prompt given as ids is decoded *together* with the generation,
then split where the prompt's own text ends, so tokenizers whose decoding depends on the previous
token (SentencePiece leading spaces, byte-level tokens splitting one UTF-8 character) give exactly the
text of the whole sequence (the plan is `joint_decode.py`'s; one sequence's prompt whose last 16 tokens hold
the start anchor is decoded from there only, that window jointly with the response: `decode_one_pair`).
Otherwise only the prompt's last `_JOINT_TOKENS` tokens are decoded again with the
generation (decoding depends on a few tokens before, never on the whole prompt; a prompt of at most
`_SHORT_PROMPT` tokens is decoded whole with it, one call fewer); the prompt itself is decoded once per
distinct prompt of a call, and only its last tokens (the smaller of `_ANCHOR_WINDOWS` that holds it) when
they hold the template's start anchor (the engine keeps only the text after the last anchor): a literal, or
a regex whose last match there is provably the whole prompt's (`_anchor_search`: bounded match length, or no
match able to span the start of its leading text). Ids are checked in C, and a fast tokenizer whose class
does not change decoding is decoded by its `tokenizers` backend directly (`_backend_decoder`), looked up once per call
(`_decoder`); one list of ids and its prompt take a path without the batch's bookkeeping
(`_decode_one`), where the backend's own conversion of the ids checks them (an id that is not an integer
raises `TypeError` there, and the checked path then names it).
"""

from __future__ import annotations

import copy
import functools
import importlib.abc
import json
import logging
import numbers
import os
import queue
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .byte_level_pair import byte_level_texts
from .control_tokens import CONTEXT_TOKENS, ControlTokens, IdTextStream, defused_text, strip_markers
from .control_tokens import MARKER as _MARKER
from .joint_context import DEFAULT as _DEFAULT_CONTEXT
from .joint_context import decode_context
from .joint_decode import (  # the decoding plan; re-exported: tests and tools read them here
    _ANCHOR_WINDOW,  # noqa: F401
    _ANCHOR_WINDOWS,  # noqa: F401
    _JOINT_TOKENS,  # noqa: F401
    _PAIR_WINDOWS,  # noqa: F401
    _SHORT_PROMPT,  # noqa: F401
    _anchor_search,  # noqa: F401
    _joint_split,
    _lead_never_inside,  # noqa: F401
    _one_char_excludes,  # noqa: F401
    _prompt_text,
    _split_point,  # noqa: F401
    _window_text,  # noqa: F401
    decode_one_pair,
)
from .parser import ResponseParser  # the engine never imports this module: no cycle
from .parser import parse_response as _engine_parse
from .policy import ParsePolicy
from .template import ResponseTemplate

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import numpy as np
    import torch
    from transformers.generation.streamers import BaseStreamer

    IdsLike = list[int] | np.ndarray | torch.Tensor
    SequenceLike = str | IdsLike | Mapping[str, Any]
    BatchLike = list[str] | list[IdsLike] | np.ndarray | torch.Tensor | Mapping[str, Any]
else:  # at run time (`typing.get_type_hints`) without importing numpy or torch: arrays and tensors are Any
    IdsLike = list[int] | Any
    SequenceLike = str | IdsLike | Mapping[str, Any]
    BatchLike = list[str] | list[IdsLike] | Any | Mapping[str, Any]

__all__ = [
    "NoResponseTemplateError",
    "ResponseEventStream",
    "ResponseStreamer",
    "ResponseTemplateMixin",
    "install",
    "is_installed",
    "stream_events",
    "uninstall",
]

class _TransformersVerbosity(logging.Filter):
    """Our records obey Transformers' verbosity once Transformers is imported (`set_verbosity_error()`,
    `TRANSFORMERS_VERBOSITY`), like its own loggers; the standard `logging` configuration applies as well."""

    def filter(self, record: logging.LogRecord) -> bool:
        hf_logging = sys.modules.get("transformers.utils.logging")
        get_verbosity = getattr(hf_logging, "get_verbosity", None)
        return get_verbosity is None or record.levelno >= get_verbosity()


logger = logging.getLogger(__name__)
logger.addFilter(_TransformersVerbosity())

_TOKENIZER_MODULE = "transformers.tokenization_utils_base"
_PROCESSOR_MODULE = "transformers.processing_utils"
_STATE = (
    "_hf_response_template_state"  # instance __dict__ key: (source dict, compiled or None, error or None)
)
_MISSING = object()
_NO_PATCH_ENV = "HF_RESPONSE_TEMPLATES_NO_PATCH"

_PREFIX_REQUIRED = (
    "`prefix=` is required: pass the prompt the model was given (a string or its token ids). Chat "
    "templates often pre-write part of the assistant message (an opening `<think>`, a prefilled answer), "
    "and without the prompt the parser would silently misread the message. If the generation really "
    'contains the whole message, pass `prefix=""` (or `prefix=[]`) to opt out explicitly.'
)


class NoResponseTemplateError(AttributeError, ValueError):
    """The tokenizer has no `response_template` (and none was passed).

    It is both an `AttributeError` (what Transformers' own `parse_response` raises) and a `ValueError`.
    """


# --------------------------------------------------------------------------------------------------
# The template stored on a tokenizer
# --------------------------------------------------------------------------------------------------


@functools.cache
def _engine():
    """The parsing engine, imported on first use (keeps this module import-cheap and cycle-free)."""
    from . import errors, parser, template

    return template.load_template, parser.ResponseParser, parser.parse_response, errors.TemplateError


def _compile(value: Any) -> tuple[dict, Any]:
    """Validate `value` (a template dict or a `ResponseTemplate`) -> (JSON-plain source dict, compiled)."""
    load_template, _, _, TemplateError = _engine()
    compiled = load_template(value)  # raises TemplateError for a bad template
    source = getattr(compiled, "source", None)
    if isinstance(value, Mapping):
        source = value
    try:
        # What save_pretrained will write is JSON: normalise now (tuples -> lists, ...), so that the value
        # read back from tokenizer_config.json equals the value read from the attribute, exactly.
        plain = json.loads(json.dumps(source, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise TemplateError(
            f"the template must be JSON-serialisable to be saved with the tokenizer ({exc})"
        ) from exc
    return plain, compiled


def _looks_like_legacy_schema(value: Any) -> bool:
    return (
        isinstance(value, Mapping) and "fields" not in value and ("x-regex" in value or "properties" in value)
    )


def _state(tokenizer: Any) -> tuple | None:
    """The tokenizer's (source dict, compiled or None, error or None), or None without a template."""
    state = tokenizer.__dict__.get(_STATE, _MISSING)
    return _adopt(tokenizer) if state is _MISSING else state


def _adopt(tokenizer: Any) -> tuple | None:
    """First access on a tokenizer created before Transformers was patched (loaded before `import
    hf_response_templates`): take the template Transformers kept (5.x: the instance attribute it set;
    4.x: `init_kwargs`, which holds every key of `tokenizer_config.json`)."""
    value = tokenizer.__dict__.pop("response_template", None)
    init_kwargs = tokenizer.__dict__.get("init_kwargs")
    if value is None and isinstance(init_kwargs, dict):
        value = init_kwargs.get("response_template")
    tokenizer.__dict__[_STATE] = None
    if value is not None:
        _load_saved_template(tokenizer, value)
    return tokenizer.__dict__[_STATE]


def _get_response_template(self) -> dict | None:
    try:
        tokenizer = _underlying_tokenizer(self)
    except TypeError:  # a processor without a tokenizer has no template (`getattr(..., None)` must work)
        return None
    state = _state(tokenizer)
    return None if state is None else copy.deepcopy(state[0])


def _set_response_template(self, value: Any) -> None:
    self = _underlying_tokenizer(self)  # a processor stores it on its tokenizer (saved with it)
    init_kwargs = self.__dict__.get("init_kwargs")
    if value is None:
        self.__dict__[_STATE] = None
        if isinstance(init_kwargs, dict):
            init_kwargs.pop("response_template", None)
        return
    if _looks_like_legacy_schema(value):
        _, _, _, TemplateError = _engine()
        raise TemplateError(
            "this looks like a legacy `response_schema` (JSON schema with `x-regex`), which response "
            "templates replace; see the README for the template format"
        )
    source, compiled = _compile(value)
    self.__dict__[_STATE] = (source, compiled, None)
    if isinstance(init_kwargs, dict):
        init_kwargs["response_template"] = copy.deepcopy(source)


def _load_saved_template(self, value: Any) -> None:
    """Set a template that came from `tokenizer_config.json` / init kwargs.

    A template this version cannot load must not make the tokenizer unloadable: it is kept verbatim
    (so `save_pretrained` writes it back untouched), a warning is logged, and the error is raised
    when the template is used.
    """
    _, _, _, TemplateError = _engine()
    try:
        _set_response_template(self, value)
    except TemplateError as exc:
        logger.warning("Ignoring the invalid response_template of %s: %s", type(self).__name__, exc)
        self.__dict__[_STATE] = (copy.deepcopy(value), None, exc)
        init_kwargs = self.__dict__.get("init_kwargs")
        if isinstance(init_kwargs, dict):
            init_kwargs["response_template"] = copy.deepcopy(value)


def _resolve_template(tokenizer: Any, override: Any) -> Any:
    """The compiled template to parse with: `override` if given, else the tokenizer's."""
    load_template, _, _, TemplateError = _engine()
    if override is not None:
        if _looks_like_legacy_schema(override):
            raise TemplateError(
                "`schema` looks like a legacy `response_schema` (JSON schema with `x-regex`); pass a response "
                "template instead"
            )
        return load_template(override)
    state = _state(tokenizer)
    if state is None:
        auto = _zero_config_template(tokenizer)
        if auto is not None:
            return auto
        hint = ""
        if getattr(tokenizer, "response_schema", None) is not None or "response_schema" in (
            tokenizer.__dict__.get("init_kwargs") or {}
        ):
            hint = " It has a legacy `response_schema`, which response templates replace."
        from .library import detect_template

        family = detect_template(tokenizer)
        if family is not None:
            hint += (
                f" Its chat template looks like the {family!r} family's, but is not exactly one the library was "
                f"proven against: check it and call `hf_response_templates.attach(tokenizer)` (or "
                f'`attach(tokenizer, "{family}")`) to use the shipped {family!r} template.'
            )
        raise NoResponseTemplateError(
            f"This tokenizer ({type(tokenizer).__name__}) has no `response_template`.{hint} Set one with "
            "`tokenizer.response_template = template` (see `hf_response_templates.get_template`), or pass "
            "a template (or a shipped template's name) as the second argument."
        )
    source, compiled, error = state
    if compiled is None:
        raise TemplateError(f"the tokenizer's saved response_template is invalid: {error}") from error
    return compiled


_NO_AUTO_ENV = "HF_RESPONSE_TEMPLATES_NO_AUTO"
_AUTO = "_hf_response_template_auto"  # instance __dict__ key: (chat template, exactly matching family or None)
_announced: set[str] = set()


def _zero_config_template(tokenizer: Any) -> Any:
    """The shipped template for a tokenizer without `response_template` whose chat template is *exactly*
    one the library was proven against (`library.exact_match`), or None. Logged once per family;
    `HF_RESPONSE_TEMPLATES_NO_AUTO=1` turns it off. Nothing is stored on the tokenizer (so nothing changes
    what `save_pretrained` writes)."""
    if os.environ.get(_NO_AUTO_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return None
    chat_template = getattr(tokenizer, "chat_template", None)
    if not chat_template:
        return None
    cached = tokenizer.__dict__.get(_AUTO)
    if cached is not None and cached[0] is chat_template:
        name = cached[1]
    else:  # once per chat template: its hash, and the vocabulary must not contradict the family
        from .library import exact_match

        name = exact_match(tokenizer)
        tokenizer.__dict__[_AUTO] = (chat_template, name)
    if name is None:
        return None
    if name not in _announced:
        _announced.add(name)
        logger.warning(
            "%s has no response_template; its chat template is exactly the one the shipped %r template was "
            "proven against, so that template is used (set tokenizer.response_template, or %s=1, to change this)",
            type(tokenizer).__name__,
            name,
            _NO_AUTO_ENV,
        )
    load_template, _, _, _ = _engine()
    return load_template(name)  # a shipped name: compiled once


# --------------------------------------------------------------------------------------------------
# Inputs: strings, token ids, arrays, tensors, batches
# --------------------------------------------------------------------------------------------------

_Item = str | list  # one sequence: decoded text, or a list of int token ids


def _tensor_to_list(value: Any, what: str) -> tuple[Any, int]:
    """A NumPy array / torch tensor (any device) / array-like -> (nested Python list, ndim)."""
    if hasattr(value, "detach"):  # torch: leave autograd and the accelerator
        value = value.detach()
    if hasattr(value, "cpu") and callable(value.cpu):
        value = value.cpu()
    ndim = value.ndim
    if ndim not in (1, 2):
        raise ValueError(
            f"`{what}` as an array/tensor must be 1-D (one sequence) or 2-D (a batch), got {ndim}-D"
        )
    dtype = str(getattr(value, "dtype", ""))
    if "int" not in dtype:
        raise TypeError(
            f"`{what}` array/tensor must hold integer token ids, got dtype {dtype or type(value)}"
        )
    return value.tolist(), ndim


def _is_array(value: Any) -> bool:
    return hasattr(value, "ndim") and hasattr(value, "tolist") and not isinstance(value, (list, tuple, str))


def _ids(seq: Any, what: str) -> list[int]:
    """`seq` as a list of Python ints, or TypeError naming the first id that is not an integer.

    The common case (a list or tuple of plain ints: `tolist()` of a tensor, `generate` output, `encode`) is
    checked in C with no Python-level work per id: `sum` of plain ints is a plain int, while a float, a
    NumPy or torch scalar, `Decimal`, ... anywhere makes it something else (or raises), and those go through
    the per-id check, which converts integer scalars and names the first id that is not one. (`bool` is an
    `int` to `sum`: a `True` inside a list of ids is token 1 there, as Transformers takes it.)"""
    if type(seq) in (list, tuple):
        try:
            plain = type(sum(seq)) is int
        except TypeError:
            plain = False
        if plain:
            return seq if type(seq) is list else list(seq)
    out = []
    for position, token in enumerate(seq):
        if isinstance(token, bool) or not isinstance(token, numbers.Integral):
            raise TypeError(
                f"`{what}` token ids must be integers, got {type(token).__name__}: {token!r} at position {position}"
            )
        out.append(int(token))
    return out


def _plain_ids(seq: list) -> bool:
    """Whether the non-empty list `seq` holds plain Python ints only (checked in C, see `_ids`)."""
    if not seq or type(seq[0]) is not int:
        return False
    try:
        return type(sum(seq)) is int
    except TypeError:
        return False


def _normalize(value: Any, what: str) -> tuple[list[_Item], bool]:
    """One sequence or a batch -> (list of items, batched?). An item is a str or a list of ints."""
    if isinstance(value, str):
        return [value], False
    if isinstance(value, Mapping) or (hasattr(value, "keys") and hasattr(value, "__getitem__")):
        if "input_ids" not in value:
            raise TypeError(
                f"`{what}` given as a mapping must have an 'input_ids' key (e.g. a BatchEncoding)"
            )
        return _normalize(value["input_ids"], what)
    if _is_array(value):
        data, ndim = _tensor_to_list(value, what)
        if ndim == 1:
            return [_ids(data, what)], False
        return [_ids(row, what) for row in data], True
    if isinstance(value, (list, tuple)):
        if not value:
            return [[]], False  # an empty list is one empty sequence (e.g. the `prefix=[]` opt-out)
        first = value[0]
        if isinstance(first, str):
            if not all(isinstance(v, str) for v in value):
                raise TypeError(f"`{what}`: a batch of strings must contain only strings")
            return list(value), True
        if isinstance(first, numbers.Integral) and not isinstance(first, bool):
            return [_ids(value, what)], False
        items: list[_Item] = []
        for index, row in enumerate(value):
            if _is_array(row):
                data, ndim = _tensor_to_list(row, what)
                if ndim != 1:
                    raise ValueError(
                        f"`{what}`: each item of a batch must be one sequence (1-D), got {ndim}-D"
                    )
                items.append(_ids(data, f"{what}[{index}]"))
            elif isinstance(row, (list, tuple)):
                items.append(_ids(row, f"{what}[{index}]"))
            else:
                raise TypeError(
                    f"`{what}`: a batch must be a list of strings or a list of token-id sequences, "
                    f"got an item of type {type(row).__name__}"
                )
        return items, True
    raise TypeError(
        f"`{what}` must be a str, a list of token ids, a 1-D/2-D array or tensor, a list of str or a list of "
        f"token-id lists; got {type(value).__name__}"
    )


def _pair_up(
    responses: list[_Item], response_batched: bool, prefixes: list[_Item], prefix_batched: bool
) -> list[_Item]:
    """One prefix per response: a single prefix (or a one-row batch) is broadcast over the batch."""
    if not prefix_batched or len(prefixes) == 1:
        return prefixes[:1] * len(responses)
    if not response_batched:
        raise ValueError(
            f"Got one response but a batch of {len(prefixes)} prefixes; pass the prefix of that one response "
            "(or a batch of responses)."
        )
    if len(prefixes) != len(responses):
        raise ValueError(
            f"Got {len(responses)} responses but {len(prefixes)} prefixes: `prefix` must be a single sequence "
            "(used for every response) or one prefix per response."
        )
    return prefixes


# --------------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------------

# Keep special tokens (they are the delimiters); no "clean-up" that rewrites " ." / " 's"; and no spaces
# around special tokens (4.x slow tokenizers add them by default, turning "<|im_start|>assistant" into
# "<|im_start|> assistant").
_DECODE_KWARGS = {
    "skip_special_tokens": False,
    "clean_up_tokenization_spaces": False,
    "spaces_between_special_tokens": False,
}


def _decode_many(tokenizer: Any, sequences: list[list[int]]) -> list[str]:
    if not sequences:
        return []
    backend = _backend_decoder(tokenizer)
    if backend is not None:
        return [backend(ids, False) for ids in sequences]
    try:
        return list(tokenizer.batch_decode(sequences, **_DECODE_KWARGS))
    except TypeError:  # a custom tokenizer whose decode takes no extra keyword arguments
        return list(tokenizer.batch_decode(sequences, skip_special_tokens=False))


class _DecodeMany:
    """`_decode_many` bound to one tokenizer, as `IdTextStream` takes it; a class rather than a lambda so that a
    parser holding it pickles (with its tokenizer, as Transformers objects pickle)."""

    __slots__ = ("tokenizer",)

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def __call__(self, sequences: list[list[int]]) -> list[str]:
        return _decode_many(self.tokenizer, sequences)

    def __reduce__(self) -> tuple:
        return (_DecodeMany, (self.tokenizer,))


def _decoder(tokenizer: Any) -> Callable[[list[int]], str]:
    """How one call of `parse_response` / `get_response_parser` decodes one sequence of checked ids, looked up
    once per call: the `tokenizers` backend's `decode` (`_backend_decoder`, through `_backend_call`), else the
    tokenizer's own `batch_decode` with `_DECODE_KWARGS` (`_decode_many`)."""
    backend = _backend_decoder(tokenizer)
    if backend is not None:
        return _backend_call(backend)
    return lambda ids: _decode_many(tokenizer, [ids])[0]


def _backend_call(backend: Callable[[list[int], bool], str]) -> Callable[[list[int]], str]:
    """`backend(ids, False)` (special tokens kept) as a one-argument callable: positional arguments, which the
    backend reads ~0.3 µs faster per call than the keyword a `functools.partial` would pass."""

    def decode(ids: list[int]) -> str:
        return backend(ids, False)

    return decode


#: tokenizer class -> whether its decoding is exactly the `tokenizers` backend's (see `_backend_decoder`)
_PLAIN_FAST_DECODE: dict[type, bool] = {}


def _backend_decoder(tokenizer: Any) -> Callable[[list[int], bool], str] | None:
    """The Rust `tokenizers.Tokenizer.decode` of a fast tokenizer whose class does not change decoding.

    With special tokens kept and no clean-up (`_DECODE_KWARGS`), Transformers' `decode` of a fast tokenizer
    is the backend's `decode` after `to_py_obj`, which walks the ids in Python (tens of µs per thousand ids);
    the ids are already checked Python ints here. A class (or an instance) overriding `decode`,
    `batch_decode` or `_decode` (custom decoding, a wrapper counting calls) keeps going through them."""
    attrs = tokenizer.__dict__
    plain = _PLAIN_FAST_DECODE.get(type(tokenizer))
    if plain and "batch_decode" not in attrs and "decode" not in attrs and "_decode" not in attrs:
        decode = getattr(attrs.get("_tokenizer"), "decode", None)
        return decode if callable(decode) else None
    if plain is not None or "batch_decode" in attrs or "decode" in attrs or "_decode" in attrs:
        return None
    cls = type(tokenizer)  # the class's first lookup
    plain = False
    try:
        from transformers import PreTrainedTokenizerFast
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase

        plain = (
            issubclass(cls, PreTrainedTokenizerFast)
            and cls._decode is PreTrainedTokenizerFast._decode
            and cls.decode is PreTrainedTokenizerBase.decode
            and cls.batch_decode is PreTrainedTokenizerBase.batch_decode
        )
    except ImportError:  # pragma: no cover - Transformers without fast tokenizers
        pass
    _PLAIN_FAST_DECODE[cls] = plain
    return _backend_decoder(tokenizer) if plain else None


#: tokenizer class -> are `pad_token_id` / `eos_token_id` Transformers 5's map lookups ("backend": `_convert_is_backend`)
_SPECIAL_IDS_BY_MAP: dict[type, bool | str] = {}


def _pad_ids(tokenizer: Any) -> tuple[int | None, int | None]:
    """(pad token id, EOS token id), None where unset.

    Transformers 5 has no `pad_token_id` attribute: it is found by `__getattr__` after the normal lookup has
    failed (~5-10 µs each); when the class defines neither attribute, the same value is read here from the
    `_special_tokens_map` that `__getattr__` reads."""
    cls = type(tokenizer)
    by_map = _SPECIAL_IDS_BY_MAP.get(cls)
    if by_map is None:
        by_map = _SPECIAL_IDS_BY_MAP[cls] = not any(hasattr(cls, k) for k in ("pad_token_id", "eos_token_id")) and (
            "backend" if _convert_is_backend(cls) else True)
    special = tokenizer.__dict__.get("_special_tokens_map") if by_map else None
    if isinstance(special, dict):
        pad, eos = special.get("pad_token"), special.get("eos_token")
        # the backend's vocabulary first where the class converts through it (its unknown-token rule else)
        to_id = getattr(tokenizer.__dict__.get("_tokenizer"), "token_to_id", None) if by_map == "backend" else None
        pad = None if pad is None else (to_id and to_id(str(pad))) or tokenizer.convert_tokens_to_ids(str(pad))
        eos = None if eos is None else (to_id and to_id(str(eos))) or tokenizer.convert_tokens_to_ids(str(eos))
    else:
        pad = getattr(tokenizer, "pad_token_id", None)
        eos = getattr(tokenizer, "eos_token_id", None)
    if pad is not None and not isinstance(pad, int):
        pad = None
    if eos is not None and not isinstance(eos, int):
        eos = None
    return pad, eos


def _convert_is_backend(cls: type) -> bool:
    """Whether `cls` converts a token to its id as Transformers 5's `TokenizersBackend` does (the backend's
    `token_to_id`, else the unknown token's id)."""
    base = next((c for c in cls.__mro__ if c.__name__ == "TokenizersBackend"), None)
    return base is not None and cls._convert_token_to_id_with_added_voc is base._convert_token_to_id_with_added_voc \
        and cls.convert_tokens_to_ids is base.convert_tokens_to_ids


def _strip_prefix_padding(ids: list[int], pad: int | None) -> list[int]:
    """Left padding of a batched prompt."""
    if pad is None:
        return ids
    start = 0
    while start < len(ids) and ids[start] == pad:
        start += 1
    return ids[start:] if start else ids


def _strip_response_padding(ids: list[int], pad: int | None, eos: int | None) -> list[int]:
    """Right padding after the end of a batched generation.

    Trailing pad ids are dropped; a trailing run of EOS ids (the pad when `pad_token = eos_token`, or what
    `generate` pads with when there is no pad token) is collapsed to the one EOS the model really wrote. A
    response ending with that one EOS (a plain int) and nothing else of it is returned as it is, not copied.
    """
    end = len(ids)
    if not end or (ids[-1] != pad and ids[-1] != eos):
        return ids
    if ids[-1] == eos and ids[-1] != pad and type(ids[-1]) is int and (end == 1 or (ids[-2] != eos and ids[-2] != pad)):
        return ids  # the usual end of one generation: its EOS
    saw_eos = False
    while end and (ids[end - 1] == pad or ids[end - 1] == eos):
        saw_eos = saw_eos or ids[end - 1] == eos
        end -= 1
    return ids[:end] + [eos] if saw_eos else ids[:end]


def _decode_one(
    tokenizer: Any, response: list[int], prompt: list[int], anchor: Any, used: list | None = None
) -> tuple[str, str] | None:
    """(prefix text, response text) of one non-empty list of ids and its non-empty prompt, with `_decode_pairs`'s
    padding rules and decodes, without the bookkeeping of `_normalize` / `_pair_up` / `_decode_pairs`; None where
    the ids are not all plain ints (the checked path then names the first bad id and its position). The prompt's
    ids are checked in C (`_plain_ids`); the response's by the backend's decode (`_backend_decoder`), which raises
    TypeError for an id that is not an integer (integer scalars of NumPy / torch convert as `_ids` converts
    them), except trailing padding, never decoded, checked here; another decoder gets checked ids. A byte-level
    backend decodes the response alone (`byte_level_pair`), any other through `joint_decode.decode_one_pair`.
    `used` (for the control-token tests, `_control_texts`): a list that gets the prompt's and the response's ids
    without padding, then the number of the prompt's last ids its text was decoded from (none without a prompt)."""
    if type(prompt[0]) is not int:
        return None
    try:
        if type(sum(prompt)) is not int:
            return None
    except TypeError:
        return None
    attrs = tokenizer.__dict__
    rust = attrs.get("_tokenizer")
    # the backend's `decode` (`_backend_decoder`, its cached case read here without the call)
    if _PLAIN_FAST_DECODE.get(type(tokenizer)) and "batch_decode" not in attrs and "decode" not in attrs \
            and "_decode" not in attrs:
        backend = getattr(rust, "decode", None)
        if not callable(backend):
            backend = None
    else:
        backend = _backend_decoder(tokenizer)
    if backend is None and not _plain_ids(response):
        return None
    try:
        # `_pad_ids` is skipped where Transformers 5's special-token map sets neither (nothing to strip)
        special = attrs.get("_special_tokens_map") if _SPECIAL_IDS_BY_MAP.get(type(tokenizer)) else None
        if type(special) is not dict or special.get("pad_token") is not None or special.get("eos_token") is not None:
            pad, eos = _pad_ids(tokenizer)
            if prompt[0] == pad:
                prompt = _strip_prefix_padding(prompt, pad)
            if response[-1] == pad or response[-1] == eos:
                kept = _strip_response_padding(response, pad, eos)
                if backend is not None and not _plain_ids(response[len(kept) - len(response) - 1 :]):
                    return None  # padding ids that are not integers
                response = kept
        if used is not None:
            used += (prompt, response)
        if backend is None:
            decode = _decoder(tokenizer)
            if not prompt:
                return "", decode(response)
            return decode_one_pair(decode, prompt, response, anchor, rust, *_DEFAULT_CONTEXT, used)
        if not prompt:
            return "", backend(response, False)
        # a byte-level decoder: the response decoded alone (`byte_level_pair`), else as few prompt tokens of
        # context as the decoder needs (`joint_context`)
        texts = byte_level_texts(backend, rust, prompt, response, anchor, used)
        if texts is not None:
            return texts
        return decode_one_pair(_backend_call(backend), prompt, response, anchor, rust, *decode_context(rust), used)
    except TypeError:
        if backend is not None:  # an id the backend could not convert
            return None
        raise


def _decode_pairs(
    tokenizer: Any, responses: list[_Item], prefixes: list[_Item], anchor: Any = None, used: list | None = None
) -> list[tuple[str, str]]:
    """(prefix text, response text) per item, decoding token ids jointly where both are ids.

    Each distinct prompt is decoded once (a prefix broadcast over a batch, or equal rows of a batched
    prompt), then only its last tokens again together with each response (`_joint_split`). With the
    template's start `anchor` (literal, or a regex of bounded match length), a prompt whose last tokens hold
    it is decoded from there only (`_window_text`): the prefix text is then the end of the prompt's, which
    parses the same. `used` (for the control-token tests, `_control_texts`): a list that gets per row its prompt's
    and response's ids without padding (None where text) and the number of the prompt's last ids its text is from."""
    decode = _decoder(tokenizer)
    pad, eos = _pad_ids(tokenizer)
    # a prompt's ids (its identity for one row) -> its text, whether it is the whole prompt's, its window
    prompt_texts: dict[Any, tuple[str, bool, int]] = {}
    single = len(responses) == 1

    def prompt_text(ids: list[int]) -> tuple[str, bool, int]:
        key = id(ids) if single else tuple(ids)
        known = prompt_texts.get(key)
        if known is None:
            size: list[int] = []
            known = prompt_texts[key] = (*_prompt_text(decode, ids, anchor, size), size[-1])
        return known

    out = []
    for response, prefix in zip(responses, prefixes, strict=True):
        if isinstance(prefix, list):
            prefix = _strip_prefix_padding(prefix, pad)
        if isinstance(response, list):
            response = _strip_response_padding(response, pad, eos)
        if used is not None:
            used.append([prefix if isinstance(prefix, list) else None, response if isinstance(response, list)
                         else None, None])
        if isinstance(prefix, list) and isinstance(response, list):
            if not prefix:
                out.append(("", decode(response)))
            else:
                text, whole, size = prompt_text(prefix)
                sizes = None if used is None else [size]
                out.append(_joint_split(decode, prefix, text, response, whole, used=sizes))
                if used is not None:
                    used[-1][2] = sizes[-1]
        else:
            if isinstance(prefix, str):
                p = prefix
            else:
                p, _, size = prompt_text(prefix)
                if used is not None:
                    used[-1][2] = size
            r = response if isinstance(response, str) else decode(response)
            out.append((p, r))
    return out


# --------------------------------------------------------------------------------------------------
# Control tokens: a delimiter only where the model generated its id (`control_tokens.py`)
# --------------------------------------------------------------------------------------------------

_CONTROL = "_hf_response_template_control"  # instance __dict__ key: (backend, its size, chat template, list, tokens)
_NO_CONTROL = ControlTokens({})  # a slow tokenizer: ids are decoded as text, as Transformers does


@functools.lru_cache(maxsize=64)
def _template_literal_text(chat_template: str) -> str:
    """The literal text of a Jinja chat template: its template data (outside `{{ }}`, `{% %}` and comments) and
    every string constant inside them, joined with NUL (no token spans two). An added token found there is a
    control token (`_control_tokens`). A template that does not parse has none."""
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template

        environment = _compile_jinja_template(chat_template).environment
    except Exception:  # noqa: BLE001 - older Transformers, or a template Transformers cannot compile
        try:
            import jinja2
        except ImportError:  # pragma: no cover - Transformers requires jinja2 for chat templates
            return ""
        environment = jinja2.Environment(extensions=["jinja2.ext.loopcontrols"])
    try:
        import jinja2.nodes

        tree = environment.parse(chat_template)
    except Exception:  # noqa: BLE001
        return ""
    literals = {node.data for node in tree.find_all(jinja2.nodes.TemplateData)}
    literals |= {node.value for node in tree.find_all(jinja2.nodes.Const) if isinstance(node.value, str)}
    return "\0".join(sorted(literals))


def _control_tokens(tokenizer: Any) -> ControlTokens | None:
    """The control tokens of a fast tokenizer (None for a slow one, or one without any): its added tokens that
    are special, or listed in `chat_control_tokens` (Transformers 5.25) when it is set, or else whose text is
    in the literal text of one of its chat templates and is not whitespace. Computed once per tokenizer, again
    when its backend, its chat template or its `chat_control_tokens` change or a token is added (a token already
    there made special later is not seen until then)."""
    attrs = tokenizer.__dict__
    rust = attrs.get("_tokenizer")
    chat_template = getattr(tokenizer, "chat_template", None)
    listed = getattr(tokenizer, "chat_control_tokens", None)
    cached = attrs.get(_CONTROL)
    # (a token added since takes the next free id: one lookup of it says whether one was)
    if cached is not None and cached[0] is rust and cached[2] is chat_template and cached[3] == listed \
            and rust.id_to_token(cached[1]) is None:
        return cached[4]
    to_token = getattr(rust, "id_to_token", None)
    if to_token is None or not hasattr(rust, "get_added_tokens_decoder"):
        return None  # a slow tokenizer: Transformers decodes its ids as text
    control, next_id = _build_control_tokens(tokenizer, rust, chat_template, listed)
    while to_token(next_id) is not None:
        next_id += 1
    attrs[_CONTROL] = (rust, next_id, chat_template, None if listed is None else list(listed), control)
    return control


def _build_control_tokens(tokenizer: Any, rust: Any, chat_template: Any, listed: Any) -> tuple[Any, int]:
    """(the `ControlTokens` or None, the first id past the vocabulary and the added tokens)."""
    added = rust.get_added_tokens_decoder()
    next_id = max([rust.get_vocab_size(False) - 1, *added]) + 1
    if listed is not None:
        wanted = set(listed)
        by_id = {i: t.content for i, t in added.items() if t.special or t.content in wanted}
    else:
        templates = list(chat_template.values()) if isinstance(chat_template, dict) else [chat_template or ""]
        literal = "\0".join(_template_literal_text(t) for t in templates if isinstance(t, str) and t)
        by_id = {i: t.content for i, t in added.items()
                 if t.special or (t.content in literal and not t.content.isspace())}
    by_id = {i: text for i, text in by_id.items() if text}
    if not by_id:
        return None, next_id
    # every control id decodes to exactly its text, alone and twice in a row (`ControlTokens.verbatim`)
    ids = sorted(by_id)
    probes = [[i] for i in ids] + [[i, i] for i in ids]
    batch = getattr(rust, "decode_batch", None) if _backend_decoder(tokenizer) is not None else None
    texts = batch(probes, False) if callable(batch) else _decode_many(tokenizer, probes)
    verbatim = all(texts[k] == by_id[i] and texts[len(ids) + k] == by_id[i] * 2 for k, i in enumerate(ids))
    return ControlTokens(by_id, verbatim), next_id


def _control_texts(
    tokenizer: Any, control: ControlTokens, prompt: list[int] | None, response: list[int] | None, prefix_text: str,
    text: str, window: int | None = None,
) -> tuple[str, str, bool]:
    """(prefix text, response text, whether a spelling was defused) by the control-token rule, from the texts
    decoded with special tokens kept (the ids that were text: None), `prefix_text` from the prompt's last `window`
    ids (None: all of them); the ids are without padding. The cheap exact test
    (`ControlTokens.is_clean`) almost always keeps the texts; else the ids are decoded again run by run
    (`control_tokens.defused_text`)."""
    marked = False
    if response and not control.is_clean(text, response):
        context = prompt[-_JOINT_TOKENS:] if prompt else []
        text, defused = defused_text(_DecodeMany(tokenizer), control, response, context)
        marked = marked or defused
    if prompt and prefix_text and not control.is_clean(prefix_text, prompt[-window:] if window else prompt):
        whole, defused = defused_text(_DecodeMany(tokenizer), control, prompt)
        if whole.endswith("\ufffd") and not prefix_text.endswith("\ufffd"):  # the character went to the response
            whole = whole.rstrip("\ufffd")
        prefix_text, marked = whole, marked or defused
    return prefix_text, text, marked


def _warn_if_prompt_included(responses: list[_Item], prefixes: list[_Item]) -> None:
    """Warn when a response starts with its whole prompt (`out` instead of `out[:, prompt_len:]`): the prompt's
    turns would be parsed as the answer. One comparison of the prompt's length per row."""
    for response, prefix in zip(responses, prefixes, strict=True):
        if not prefix or len(response) <= len(prefix) or type(response) is not type(prefix):
            continue
        if response[0] == prefix[0] and response[len(prefix) - 1] == prefix[-1] and response[: len(prefix)] == prefix:
            logger.warning(
                "parse_response: the response starts with the whole prompt (prefix); pass only the generated "
                "part, e.g. out[:, inputs['input_ids'].shape[1]:], or the prompt is parsed as the answer"
            )
            return


def _single_prefix_text(tokenizer: Any, prefix: Any) -> str:
    if prefix is None:
        raise ValueError(_PREFIX_REQUIRED)
    items, batched = _normalize(prefix, "prefix")
    if batched and len(items) != 1:
        raise ValueError(
            f"`prefix=` must be a single sequence here (one parser follows one stream), got a batch of {len(items)}; "
            "create one parser per sequence."
        )
    item = items[0]
    if isinstance(item, str):
        return item
    pad, _ = _pad_ids(tokenizer)
    item = _strip_prefix_padding(item, pad)
    text = _decoder(tokenizer)(item)
    control = _control_tokens(tokenizer)
    if control is not None and item:
        text, _, _ = _control_texts(tokenizer, control, item, None, text, "", len(item))
    return text


def _prompt_ids(tokenizer: Any, prefix: Any) -> list[int]:
    """The prompt's ids without left padding ([] for a text prompt): the decoding context of a token-id stream."""
    items, _ = _normalize(prefix, "prefix")
    item = items[0]
    if isinstance(item, str) or not item:
        return []
    pad, _ = _pad_ids(tokenizer)
    return _strip_prefix_padding(item, pad)


def _underlying_tokenizer(obj: Any) -> Any:
    """A tokenizer, or the tokenizer a processor wraps."""
    if hasattr(obj, "batch_decode") and hasattr(obj, "convert_ids_to_tokens"):
        return obj
    inner = getattr(obj, "tokenizer", None)
    if inner is None:
        raise TypeError(f"{type(obj).__name__} is neither a tokenizer nor a processor with a `tokenizer`")
    return inner


# --------------------------------------------------------------------------------------------------
# The mixin
# --------------------------------------------------------------------------------------------------


class ResponseTemplateMixin:
    """The response-template API that `import hf_response_templates` gives every Transformers tokenizer.

    Its members are copied onto `transformers.PreTrainedTokenizerBase` (so onto slow, fast and custom
    tokenizers alike), replacing Transformers' own `parse_response` / `get_response_parser` where they
    exist, with one behaviour on every version from 4.46 to 5.x. Processors get `parse_response` and
    `get_response_parser` too, forwarding to their tokenizer.

    Example:
        >>> import hf_response_templates  # patches Transformers
        >>> from hf_response_templates import get_template
        >>> tokenizer.response_template = get_template("qwen3")        # validated now
        >>> inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True,
        ...                                        return_tensors="pt", return_dict=True)
        >>> out = model.generate(**inputs, max_new_tokens=512)
        >>> prompt_len = inputs["input_ids"].shape[1]
        >>> tokenizer.parse_response(out[0, prompt_len:], prefix=inputs["input_ids"][0])
        {'role': 'assistant', 'reasoning_content': '...', 'content': '...'}
    """

    response_template = property(
        _get_response_template,
        _set_response_template,
        doc="""The tokenizer's response template (a JSON-compatible dict), or `None`.

        Assigning validates the template at once (raising `TemplateError`); assign a `ResponseTemplate`
        or a dict, or `None` to remove it. Reading returns a copy of the dict (mutating it does not change
        the tokenizer: assign a new one). `save_pretrained` writes it as the `response_template` key of
        `tokenizer_config.json` and `from_pretrained` reads it back, equal to what was assigned.

        Example:
            >>> tokenizer.response_template = {"start_anchor": "<|im_start|>assistant\\n",
            ...     "fields": {"content": {"close": "<|im_end|>"}}}
            >>> tokenizer.save_pretrained("out")   # "response_template" is a key of out/tokenizer_config.json
        """,
    )

    def parse_response(
        self,
        response: SequenceLike | BatchLike,
        schema: dict | ResponseTemplate | None = None,
        *,
        prefix: SequenceLike | BatchLike | None = None,
        tools: list[dict | Callable] | None = None,
        strict: bool = True,
        policy: ParsePolicy | dict[str, str] | None = None,
    ) -> dict | list[dict]:
        """Parse what a model generated into a message dict (or a list of them for a batch).

        Args:
            response: the generated output only (not the prompt): one sequence (`str`, list of token ids,
                1-D array or tensor) or a batch (list of `str`, list of id lists, 2-D array or tensor, or a
                mapping with `input_ids`). Tensors may live on any device. Token ids are decoded with special
                tokens kept and without clean-up of tokenization spaces; trailing padding (pad tokens, repeated
                EOS) of a batched `generate` is removed. With a fast tokenizer, a control token (an added token
                that is special, or in `chat_control_tokens`, or else in the chat template's literal text) is a
                delimiter only where its id was generated: spelled out with ordinary tokens (`<`, `|im_end`,
                `|>`) it is text, unchanged in the message (as in Transformers 5.25); a prompt's too.
            schema: a template to use instead of the tokenizer's `response_template` (Transformers' positional
                name for it).
            prefix: **required**, the prompt the model was given, as text or token ids (left padding is removed).
                One prefix is used for every response of a batch, or pass one per response. When both are
                token ids they are decoded together, so the text of the response is exactly its part of the
                whole sequence. `prefix=""` / `prefix=[]` opts out.
            tools: the tools of the request (JSON schemas or Python functions, as `apply_chat_template` takes
                them); tool-call arguments are typed by the called tool's parameters.
            strict: with `True`, a region whose content fails to parse raises `ResponseParseError`; with
                `False` the message lists such regions under `"unparsed"`.
            policy: how to read the cases where parsers of one model disagree (tool calls inside reasoning,
                calls to functions not in `tools`, text after the last call): a `ParsePolicy` or a dict of some
                of its keys, over the template's own defaults (`hf_response_templates.policy`).

        Returns:
            One message dict for one sequence; a list of dicts for a batch (a one-item batch gives a one-item
            list).

        Raises:
            ValueError: `prefix` missing, or prefixes and responses of different lengths.
            NoResponseTemplateError: no `response_template` on the tokenizer and no `schema`.
            TemplateError: the template is invalid.  ResponseParseError: see `strict`.

        Example:
            >>> tokenizer.parse_response("<think>hm</think>Hi!<|im_end|>", prefix="<|im_start|>assistant\\n")
            {'role': 'assistant', 'reasoning_content': 'hm', 'content': 'Hi!'}
            >>> tokenizer.parse_response(out[:, prompt_len:], prefix=inputs["input_ids"])   # a batch
            [{...}, {...}]
        """
        tokenizer = _underlying_tokenizer(self)
        state = None if schema is not None else tokenizer.__dict__.get(_STATE)
        template = state[1] if state is not None and state[1] is not None else _resolve_template(tokenizer, schema)
        if prefix is None:
            raise ValueError(_PREFIX_REQUIRED)
        engine_parse = _engine_parse
        if type(response) is list and type(prefix) is list and response and prefix and type(response[0]) is int:
            # one sequence of ids and its prompt (`generate(...)[0].tolist()`, `encode`)
            used: list = []
            texts = _decode_one(tokenizer, response, prefix, template.start_anchor, used)
            if texts is not None:
                if len(response) > len(prefix) and response[0] == prefix[0]:
                    _warn_if_prompt_included([response], [prefix])
                control = _control_tokens(tokenizer)
                if control is None:
                    return engine_parse(texts[1], template, prefix=texts[0], tools=tools, strict=strict,
                                        policy=policy)
                prefix_text, text, marked = _control_texts(tokenizer, control, *used[:2], *texts,
                                                           window=used[2] if len(used) > 2 else None)
                message = engine_parse(text, template, prefix=prefix_text, tools=tools, strict=strict, policy=policy)
                return strip_markers(message) if marked else message
        responses, batched = _normalize(response, "response")
        prefixes, prefix_batched = _normalize(prefix, "prefix")
        paired = _pair_up(responses, batched, prefixes, prefix_batched)
        _warn_if_prompt_included(responses, paired)
        messages = []
        control = None
        if any(isinstance(item, list) for item in responses) or any(isinstance(item, list) for item in paired):
            control = _control_tokens(tokenizer)
        rows: list | None = None if control is None else []
        for row, (prefix_text, text) in enumerate(
            _decode_pairs(tokenizer, responses, paired, template.start_anchor, rows)
        ):
            marked = False
            if rows is not None:
                prefix_text, text, marked = _control_texts(tokenizer, control, *rows[row][:2], prefix_text, text,
                                                           window=rows[row][2])
            try:
                message = engine_parse(text, template, prefix=prefix_text, tools=tools, strict=strict, policy=policy)
                messages.append(strip_markers(message) if marked else message)
            except ValueError as exc:  # ResponseParseError (strict) or RegexTimeoutError: say which row
                if batched:
                    exc.row = row  # type: ignore[attr-defined]
                    exc.args = (f"batch row {row}: {exc.args[0] if exc.args else ''}", *exc.args[1:])
                raise
        return messages if batched else messages[0]

    def get_response_parser(
        self,
        response_template: dict | ResponseTemplate | None = None,
        *,
        prefix: SequenceLike | None = None,
        tools: list[dict | Callable] | None = None,
        policy: ParsePolicy | dict[str, str] | None = None,
        token_ids: bool = False,
    ) -> ResponseParser:
        """A streaming `ResponseParser` for one generation, set up with the prompt.

        Args:
            response_template: a template to use instead of the tokenizer's.
            prefix: **required**, the prompt of this one sequence (text, token ids, a 1-D tensor or a one-row
                batch). `prefix=""` opts out.
            tools: as for `parse_response`.
            policy: as for `parse_response`.
            token_ids: feed the parser the generated token ids (a list, a 1-D array or tensor, or one id) instead of
                text; `feed` then raises `TypeError` for text, and `finalize` works as for text. The ids are decoded
                with special tokens kept, after the prompt's last ids (`prefix` as ids), and a control token acts as
                a delimiter only where its id was generated (as in `parse_response`); a slow tokenizer decodes them
                as text.

        Feed it text: if you decode tokens yourself, keep special tokens (`skip_special_tokens=True` deletes
        the delimiters), or pass `token_ids=True` and feed the ids. To stream straight out of `generate`,
        `ResponseStreamer` does all of this for you.

        Example:
            >>> parser = tokenizer.get_response_parser(prefix=inputs["input_ids"][0])
            >>> events = list(parser.initial_events)
            >>> for chunk in text_chunks:
            ...     events += parser.feed(chunk)
            >>> message, final_events = parser.finalize()
        """
        tokenizer = _underlying_tokenizer(self)
        template = _resolve_template(tokenizer, response_template)
        prefix_text = _single_prefix_text(tokenizer, prefix)
        _, ResponseParser, _, _ = _engine()
        parser = ResponseParser(template, prefix_text, tools=tools, policy=policy)
        if not token_ids:
            return parser
        return TokenIdResponseParser(tokenizer, parser, _prompt_ids(tokenizer, prefix),
                                     marked=_MARKER in prefix_text)


class TokenIdResponseParser:
    """A `ResponseParser` fed token ids (`get_response_parser(..., token_ids=True)`): `feed(ids)` decodes them
    after the prompt's last ids (`control_tokens.IdTextStream`: a control token is a delimiter only where its id
    was generated; held text is released by `finalize`) and feeds the text to the parser; the events and the
    message are the parser's, with the defusing markers removed. Everything else is the parser's
    (`initial_events`, `errors`, `strict_errors`, ...)."""

    def __init__(self, tokenizer: Any, parser: ResponseParser, prompt_ids: list[int], marked: bool = False) -> None:
        control = _control_tokens(tokenizer) or _NO_CONTROL
        self._parser = parser
        self._stream = IdTextStream(_DecodeMany(tokenizer), control,
                                    prompt_ids[-CONTEXT_TOKENS:])
        self._marked = marked
        self.initial_events = strip_markers(parser.initial_events) if marked else parser.initial_events

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_parser", "_stream", "_marked"):
            raise AttributeError(name)
        return getattr(self._parser, name)

    @property
    def parser(self) -> ResponseParser:
        """The text parser the ids' text goes to."""
        return self._parser

    def feed(self, token_ids: Any) -> list[dict]:
        """Feed the next generated token ids (a list, a 1-D array or tensor, or one id); returns the events."""
        if isinstance(token_ids, str):
            raise TypeError(
                "this parser was created with token_ids=True: feed it token ids (a list of ints, a 1-D array or "
                "tensor), not text (create one without token_ids=True to feed text)"
            )
        if isinstance(token_ids, numbers.Integral) and not isinstance(token_ids, bool):
            ids = [int(token_ids)]
        else:
            items, batched = _normalize(token_ids, "token_ids")
            if batched:
                if len(items) != 1:
                    raise ValueError(f"feed one sequence's token ids, got a batch of {len(items)}")
            ids = items[0]
            if isinstance(ids, str):
                raise TypeError("this parser was created with token_ids=True: feed it token ids, not text")
        text = self._stream.feed(ids)
        return self._events(self._parser.feed(text) if text else [])

    def finalize(self) -> tuple[dict, list[dict]]:
        """Release the held text and finish: (message, final events), as `ResponseParser.finalize`."""
        text = self._stream.flush()
        events = self._parser.feed(text) if text else []
        message, final_events = self._parser.finalize()
        events = self._events(events + final_events)
        return (strip_markers(message) if self._marked else message), events

    def _events(self, events: list[dict]) -> list[dict]:
        if not self._marked and self._stream.defused:
            self._marked = True
        return strip_markers(events) if self._marked else events


# --------------------------------------------------------------------------------------------------
# Installing onto Transformers
# --------------------------------------------------------------------------------------------------

_MEMBERS = ("response_template", "parse_response", "get_response_parser")
_PROCESSOR_MEMBERS = ("response_template", "parse_response", "get_response_parser")
_lock = threading.RLock()
_saved: dict[tuple[type, str], Any] = {}  # (class, member) -> previous class __dict__ entry or _MISSING
_patched: set[type] = set()
_want_installed = False


def _wrap_init(original: Callable) -> Callable:
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        template = kwargs.pop("response_template", _MISSING)
        original(self, *args, **kwargs)
        if template is not _MISSING and template is not None:
            _load_saved_template(self, template)

    __init__._hf_response_templates_original = original  # type: ignore[attr-defined]
    return __init__


def _wrap_from_pretrained(original: Any) -> classmethod:
    func = original.__func__

    @functools.wraps(func)
    def from_pretrained(cls, *args, **kwargs):
        try:
            return func(cls, *args, **kwargs)
        except RecursionError:
            # A value nested hundreds of levels deep in tokenizer_config.json (a hostile saved
            # response_template) overflows Transformers' own recursive reading of the config before this
            # package sees it. Read it once more with room to spare: the template then reaches
            # `_load_saved_template`, which rejects it with a warning, and the tokenizer loads.
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, 20_000))
            try:
                return func(cls, *args, **kwargs)
            finally:
                sys.setrecursionlimit(limit)

    from_pretrained._hf_response_templates_original = original  # type: ignore[attr-defined]
    return classmethod(from_pretrained)


def _set_member(cls: type, name: str, value: Any) -> None:
    if (cls, name) not in _saved:
        _saved[(cls, name)] = cls.__dict__.get(name, _MISSING)
    setattr(cls, name, value)


def _patch_tokenizer_class(cls: type) -> None:
    if cls in _patched:
        return
    for name in _MEMBERS:
        _set_member(cls, name, ResponseTemplateMixin.__dict__[name])
    _set_member(cls, "__init__", _wrap_init(cls.__dict__["__init__"]))
    if isinstance(cls.__dict__.get("from_pretrained"), classmethod):
        _set_member(cls, "from_pretrained", _wrap_from_pretrained(cls.__dict__["from_pretrained"]))
    _patched.add(cls)


def _patch_processor_class(cls: type) -> None:
    if cls in _patched:
        return
    for name in _PROCESSOR_MEMBERS:
        _set_member(cls, name, ResponseTemplateMixin.__dict__[name])
    _patched.add(cls)


def _patch_module(module: Any) -> None:
    with _lock:
        if not _want_installed:
            return
        if module.__name__ == _TOKENIZER_MODULE:
            _patch_tokenizer_class(module.PreTrainedTokenizerBase)
        elif module.__name__ == _PROCESSOR_MODULE and hasattr(module, "ProcessorMixin"):
            _patch_processor_class(module.ProcessorMixin)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: it lets the normal finders find Transformers' modules and patches them right
    after they have executed."""

    def __init__(self) -> None:
        self._busy = threading.local()

    def find_spec(self, fullname, path, target=None):
        if fullname not in (_TOKENIZER_MODULE, _PROCESSOR_MODULE) or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.on = False
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        original_exec = loader.exec_module

        def exec_module(module):
            original_exec(module)
            try:
                _patch_module(module)
            except Exception:  # never break importing Transformers
                logger.exception("hf_response_templates could not patch %s", module.__name__)

        loader.exec_module = exec_module  # this loader instance serves this one module
        return spec


_hook: _PatchOnImport | None = None


def _register_hook() -> None:
    global _hook
    if _hook is None:
        _hook = _PatchOnImport()
        sys.meta_path.insert(0, _hook)


def _unregister_hook() -> None:
    global _hook
    if _hook is not None:
        try:
            sys.meta_path.remove(_hook)
        except ValueError:
            pass
        _hook = None


def _patch_loaded_modules() -> None:
    for name in (_TOKENIZER_MODULE, _PROCESSOR_MODULE):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__spec__", None) is not None:
            _patch_module(module)


def _autoinstall() -> None:
    """Install without importing Transformers: patch what is imported, hook what is not (yet).

    Called by `hf_response_templates/__init__.py`. Does nothing if `HF_RESPONSE_TEMPLATES_NO_PATCH` is set.
    """
    global _want_installed
    if os.environ.get(_NO_PATCH_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return
    with _lock:
        _want_installed = True
        _patch_loaded_modules()
        if _TOKENIZER_MODULE not in sys.modules or _PROCESSOR_MODULE not in sys.modules:
            _register_hook()


def install() -> None:
    """Give every Transformers tokenizer (and processor) the response-template API, now.

    `import hf_response_templates` already does this (lazily: Transformers is patched when it is
    imported). Idempotent; `uninstall()` undoes it.

    Example:
        >>> import hf_response_templates
        >>> hf_response_templates.uninstall()
        >>> hf_response_templates.install()
    """
    global _want_installed
    with _lock:
        _want_installed = True
        import transformers.processing_utils  # noqa: F401  (the hook, if registered, patches them)
        import transformers.tokenization_utils_base  # noqa: F401

        _patch_loaded_modules()
        _unregister_hook()


def uninstall() -> None:
    """Restore Transformers' own members (and stop patching on import). Idempotent.

    Tokenizers created while installed keep their template in their instance state, but no longer have
    the `response_template` property, so create tokenizers after `install()`.
    """
    global _want_installed
    with _lock:
        _want_installed = False
        _unregister_hook()
        for (cls, name), previous in reversed(list(_saved.items())):
            if previous is _MISSING:
                if name in cls.__dict__:
                    delattr(cls, name)
            else:
                setattr(cls, name, previous)
        _saved.clear()
        _patched.clear()


def is_installed() -> bool:
    """Whether `PreTrainedTokenizerBase` currently carries our members (False until Transformers is imported)."""
    module = sys.modules.get(_TOKENIZER_MODULE)
    cls = getattr(module, "PreTrainedTokenizerBase", None)
    return cls is not None and cls in _patched


# --------------------------------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------------------------------

_DONE = object()


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class _EventQueueIterator:
    """Iterate events queued by another thread; `.message` once the stream has ended."""

    def __init__(self, timeout: float | None) -> None:
        self._queue: queue.Queue = queue.Queue()
        self._timeout = timeout
        self._message: dict | None = None
        self._error: BaseException | None = None
        self._ended = threading.Event()

    def __iter__(self) -> Iterator[dict]:
        return self

    def __next__(self) -> dict:
        item = self._queue.get(timeout=self._timeout)
        if item is _DONE:
            self._queue.put(_DONE)  # iterating again stops again
            raise StopIteration
        if isinstance(item, _Failure):
            self._queue.put(_DONE)
            raise item.error
        return item

    def _emit(self, events: Iterable[dict]) -> None:
        for event in events:
            self._queue.put(event)

    def _finish(self, message: dict | None, error: BaseException | None = None) -> None:
        self._message, self._error = message, error
        self._ended.set()
        if error is not None:
            self._queue.put(_Failure(error))
        self._queue.put(_DONE)

    @property
    def message(self) -> dict:
        """The parsed message; available once the stream has ended (raises the parse error if it failed)."""
        if not self._ended.is_set():
            raise RuntimeError(
                "the message is available once the stream has ended (iterate all events first)"
            )
        if self._error is not None:
            raise self._error
        assert self._message is not None
        return self._message


class ResponseEventStream:
    """Parser events from an iterable of text chunks (returned by `stream_events`).

    Iterate it for the events (`parser.initial_events`, then each chunk's, then the final ones); after
    that, `.message` is the parsed message.
    """

    def __init__(self, chunks: Iterable[str], parser: ResponseParser, *, strict: bool = True) -> None:
        self._chunks = chunks
        self._parser = parser
        self._strict = strict
        self._message: dict | None = None
        self._error: BaseException | None = None
        self._started = False

    def __iter__(self) -> Iterator[dict]:
        if self._started:
            raise RuntimeError("a ResponseEventStream can be iterated only once")
        self._started = True
        yield from self._parser.initial_events
        for chunk in self._chunks:
            if chunk:
                yield from self._parser.feed(chunk)
        message, final_events = self._parser.finalize()
        self._message = message
        self._error = _strict_error(self._parser, self._strict)
        yield from final_events
        if self._error is not None:
            raise self._error

    @property
    def message(self) -> dict:
        """The parsed message, once all events have been iterated (raises the parse error, see `strict`)."""
        if self._message is None:
            raise RuntimeError("the message is available once all events have been iterated")
        if self._error is not None:
            raise self._error
        return self._message


def _strict_error(parser: ResponseParser, strict: bool) -> BaseException | None:
    """With `strict`, the first problem the parser met (as `parse_response(strict=True)` raises it)."""
    errors = parser.strict_errors if strict else []
    return errors[0] if errors else None


def stream_events(
    chunks: Iterable[str], parser: ResponseParser, *, strict: bool = True
) -> ResponseEventStream:
    """Turn a stream of generated text (e.g. a `TextIteratorStreamer`) into parser events.

    The streamer must skip the prompt (`skip_prompt=True`: the prompt goes to the parser as `prefix=`)
    and keep special tokens: with `skip_special_tokens=True` the chat delimiters (`<think>`,
    `<tool_call>`, `<|im_end|>`, ...) are deleted before the parser sees them, so every region would be
    misread. Both mistakes raise `ValueError` here.

    With `strict=True` (as in `parse_response`), a region that failed to parse or a missing required
    field raises `ResponseParseError` once all events have been yielded (and from `.message`); with
    `strict=False` the message lists failed regions under `"unparsed"`.

    Example:
        >>> from threading import Thread
        >>> from transformers import TextIteratorStreamer
        >>> streamer = TextIteratorStreamer(tokenizer, skip_prompt=True)
        >>> Thread(target=model.generate, kwargs=dict(**inputs, streamer=streamer)).start()
        >>> stream = stream_events(streamer, tokenizer.get_response_parser(prefix=inputs["input_ids"][0]))
        >>> for event in stream:
        ...     render(event)
        >>> stream.message
        {'role': 'assistant', ...}
    """
    decode_kwargs = getattr(chunks, "decode_kwargs", None)
    if isinstance(decode_kwargs, dict) and decode_kwargs.get("skip_special_tokens"):
        raise ValueError(
            "this streamer was created with skip_special_tokens=True, which deletes the special tokens that "
            "delimit the message's regions (<think>, <tool_call>, <|im_end|>, ...): create it without it"
        )
    if hasattr(chunks, "skip_prompt") and chunks.skip_prompt is False:
        raise ValueError(
            "this streamer repeats the prompt (skip_prompt=False); create it with skip_prompt=True and give the "
            "prompt to the parser as `prefix=` instead"
        )
    return ResponseEventStream(chunks, parser, strict=strict)


_CONTEXT_TOKENS = 4  # prompt tokens decoded before the first new token (leading spaces depend on them)
#: Tokens held back while their text ends in U+FFFD (an incomplete UTF-8 character): a character is at most
#: 4 bytes and every token carries at least one, so past this the U+FFFD is real (lone continuation bytes)
#: and is streamed; this also keeps each step's decoding bounded (linear streaming).
_MAX_HELD_TOKENS = 4


# A generation that fails in its thread (a bad `generate` kwarg, an OOM) never calls `end()`, and a
# consumer in `for event in streamer` would wait forever. `threading.excepthook` sees the exception of any
# thread started with `threading.Thread`; the streamers found in the failing call stack (the `streamer`
# argument of `generate`, a closure variable of a lambda) end with that exception, raised to the consumer.
_live_streamers: weakref.WeakSet = weakref.WeakSet()
_previous_excepthook: Callable | None = None


def _streamers_in(traceback: Any) -> list[Any]:
    live = {id(s): s for s in list(_live_streamers)}
    found: dict[int, Any] = {}
    while traceback is not None and live:
        for value in traceback.tb_frame.f_locals.values():
            values = value.values() if isinstance(value, dict) else (value,)
            for item in values:
                if id(item) in live:
                    found[id(item)] = live[id(item)]
        traceback = traceback.tb_next
    return list(found.values())


def _excepthook(args: Any) -> None:
    streamers = _streamers_in(args.exc_traceback)
    try:  # the usual report first (the traceback on stderr), then the consumers wake up with the error
        (_previous_excepthook or threading.__excepthook__)(args)
    finally:
        for streamer in streamers:
            streamer._fail(args.exc_value)


def _watch_for_failures(streamer: Any) -> None:
    global _previous_excepthook
    with _lock:
        _live_streamers.add(streamer)
        if threading.excepthook is not _excepthook:
            _previous_excepthook = threading.excepthook
            threading.excepthook = _excepthook


class _ResponseStreamerImpl(_EventQueueIterator):
    """The body of `ResponseStreamer` (which also subclasses Transformers' `BaseStreamer`)."""

    def __init__(
        self,
        tokenizer: Any,
        *,
        tools: list[dict | Callable] | None = None,
        response_template: dict | ResponseTemplate | None = None,
        strict: bool = True,
        timeout: float | None = None,
        policy: ParsePolicy | dict[str, str] | None = None,
        trace: bool = False,
    ) -> None:
        super().__init__(timeout)
        self._strict = strict
        self._trace = trace
        self.tokenizer = _underlying_tokenizer(tokenizer)
        self._template = _resolve_template(self.tokenizer, response_template)
        self._tools = tools
        if policy is not None:  # a bad key or value fails here, not in generate's thread
            from .policy import resolve_policy
            from .template import load_template

            resolve_policy(policy, load_template(self._template))
        self._policy = policy
        self._parser: Any = None
        self._stream: Any = None
        self._marked = False  # a spelled-out control token was defused: markers to remove from the events
        self._closed = False
        self._prefix_text: str | None = None
        _watch_for_failures(self)

    def _fail(self, error: BaseException) -> None:
        """The generation failed in its thread (see `_excepthook`): end the stream with its exception."""
        if not self._closed:
            self._closed = True
            self._finish(None, error)

    # -- BaseStreamer -------------------------------------------------------------------------------
    def put(self, value: Any) -> None:
        """Receive token ids from `generate`: first the prompt, then the new token(s) of each step."""
        if self._closed:
            raise RuntimeError("this ResponseStreamer has ended; create one per generate() call")
        try:
            ids = self._row(value)
            if self._parser is None:
                self._start(ids)
            else:
                text = self._stream.feed(ids)
                if text:
                    self._emit_events(self._parser.feed(text))
        except BaseException as exc:
            self._closed = True
            self._finish(None, exc)
            raise

    def end(self) -> None:
        """Called by `generate` at the end: flush held text, finalize, publish the message."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._parser is None:
                self._start([])
            text = self._stream.flush()
            if text:
                self._emit_events(self._parser.feed(text))
            message, events = self._parser.finalize()
            self._emit_events(events)
            if self._marked:
                message = strip_markers(message)
        except Exception as exc:
            self._finish(None, exc)
            return
        self._finish(message, _strict_error(self._parser, self._strict))

    def _emit_events(self, events: list[dict]) -> None:
        """Queue the parser's events, without the markers of defused spellings (`control_tokens`)."""
        if not self._marked and self._stream.defused:
            self._marked = True
        self._emit(strip_markers(events) if self._marked else events)

    # -- internals ----------------------------------------------------------------------------------
    def _row(self, value: Any) -> list[int]:
        if _is_array(value):
            data, ndim = _tensor_to_list(value, "streamed ids")
            if ndim == 2:
                if len(data) != 1:
                    raise ValueError(
                        f"ResponseStreamer only supports batch size 1 (got {len(data)} rows); stream one "
                        "sequence per generate() call, or parse a batch afterwards with parse_response"
                    )
                data = data[0]
            return _ids(data, "streamed ids")
        if isinstance(value, numbers.Integral):
            return [int(value)]
        items, batched = _normalize(value, "streamed ids")
        if batched and len(items) != 1:
            raise ValueError("ResponseStreamer only supports batch size 1")
        if isinstance(items[0], str):
            raise TypeError("ResponseStreamer receives token ids, not text")
        return items[0]

    def _start(self, prompt_ids: list[int]) -> None:
        pad, _ = _pad_ids(self.tokenizer)
        prompt_ids = _strip_prefix_padding(prompt_ids, pad)
        prefix_text = _decode_many(self.tokenizer, [prompt_ids])[0] if prompt_ids else ""
        control = _control_tokens(self.tokenizer)
        if control is not None and prompt_ids:
            prefix_text, _, self._marked = _control_texts(self.tokenizer, control, prompt_ids, None, prefix_text, "",
                                                          len(prompt_ids))
        # A prompt ending inside a UTF-8 character: the response completes (and owns) the character.
        prefix_text = prefix_text.rstrip("\ufffd") if prefix_text.endswith("\ufffd") else prefix_text
        _, ResponseParser, _, _ = _engine()
        self._parser = ResponseParser(
            self._template, prefix_text, tools=self._tools, policy=self._policy, trace=self._trace
        )
        self._prefix_text = strip_markers(prefix_text) if self._marked else prefix_text
        # the new ids' text, decoded after the prompt's last ids (held back while it ends in an unfinished UTF-8
        # character), a control token a delimiter only where its id was generated (`control_tokens.IdTextStream`)
        tokenizer = self.tokenizer
        self._stream = IdTextStream(_DecodeMany(tokenizer), control or _NO_CONTROL,
                                    prompt_ids[-_CONTEXT_TOKENS:])
        self._emit_events(self._parser.initial_events)

    @property
    def prefix_text(self) -> str | None:
        """The decoded prompt given to the parser (None before `generate` starts)."""
        return self._prefix_text


def _make_response_streamer_class() -> type:
    from transformers.generation.streamers import BaseStreamer

    class ResponseStreamer(_ResponseStreamerImpl, BaseStreamer):
        """A streamer to pass to `model.generate(..., streamer=...)` that yields parser events.

        It takes the prompt ids `generate` sends first as the parser's `prefix`, decodes the new tokens
        incrementally *with their special tokens* (the trap it avoids: `TextStreamer(...,
        skip_special_tokens=True)` deletes the delimiters the template needs) and in the context of the
        previous tokens (SentencePiece leading spaces), and never splits a UTF-8 character (text ending in
        U+FFFD is held until the next token completes it). A control token is a delimiter only where its id was
        generated (as in `parse_response`): spelled out with ordinary tokens it is text, held back while the next
        tokens may still complete a spelling. Iterate it, typically while `generate` runs in
        another thread, to get the events; afterwards `.message` is the parsed message. Batch size 1 only.

        Args:
            tokenizer: the tokenizer (or processor) with the `response_template`.
            tools: the request's tools, to type tool-call arguments.
            response_template: a template to use instead of the tokenizer's.
            strict: as in `parse_response`: with `True`, a region that failed to parse (or a missing required
                field) raises `ResponseParseError` after the last event and from `.message`; with `False`,
                `.message` lists failed regions under `"unparsed"`.
            timeout: seconds to wait for the next event before `queue.Empty` is raised (default: no limit).
                Waiting cannot hang on a failed generation: if `generate` raises in a `threading.Thread`
                (a bad keyword argument, out of memory), iterating raises that exception. (In an executor,
                whose futures keep exceptions, pass a timeout or check the future.)
            policy: as in `parse_response` (checked here).
            trace: also emit the parser's `delimiter` and `text_dropped` events (`ResponseParser(trace=True)`).
                `DeltaStream.for_events` (and the Anthropic / Responses streams) read a tool call's id from
                its open delimiter where the format writes one (Mistral ``[CALL_ID]...``, Kimi K2
                ``functions.NAME:IDX``): without `trace` they cannot see it and generate ``call_...`` ids.

        Example:
            >>> from threading import Thread
            >>> streamer = ResponseStreamer(tokenizer, tools=tools)
            >>> Thread(target=model.generate, kwargs=dict(**inputs, streamer=streamer, max_new_tokens=256)).start()
            >>> for event in streamer:
            ...     if event["type"] == "region_chunk" and event["field"] == "content":
            ...         print(event["text"], end="", flush=True)
            >>> streamer.message["tool_calls"]
        """

    ResponseStreamer.__module__ = __name__
    ResponseStreamer.__qualname__ = "ResponseStreamer"
    return ResponseStreamer


if TYPE_CHECKING:  # pragma: no cover

    class ResponseStreamer(_ResponseStreamerImpl, BaseStreamer):  # noqa: D101
        pass


def __getattr__(name: str) -> Any:
    # `ResponseStreamer` subclasses Transformers' BaseStreamer, so it is built (importing Transformers)
    # only when first asked for.
    if name == "ResponseStreamer":
        cls = _make_response_streamer_class()
        globals()["ResponseStreamer"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
