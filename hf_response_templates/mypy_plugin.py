"""A mypy plugin: type checkers see the response-template API that `import hf_response_templates` installs on
Transformers tokenizers and processors.

Transformers 5.x ships type information (`py.typed`) with its own `parse_response` / `get_response_parser`,
whose signatures lack this package's arguments (`strict=`, ...), and 4.x has no such methods at all. Enable
the plugin and mypy checks calls on any tokenizer or processor against this package's signatures
(`ResponseTemplateMixin`)::

    # pyproject.toml
    [tool.mypy]
    plugins = ["hf_response_templates.mypy_plugin"]

Example (passes with the plugin on Transformers 5.x)::

    tokenizer = AutoTokenizer.from_pretrained(path)
    messages = tokenizer.parse_response(out, prefix=prompt_ids, strict=False)
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import TypeInfo
from mypy.plugin import MethodSigContext, Plugin
from mypy.typeops import bind_self
from mypy.types import CallableType, FunctionLike, Instance, get_proper_type

_MIXIN = "hf_response_templates.tokenizer.ResponseTemplateMixin"
_METHODS = ("parse_response", "get_response_parser")
_OWNERS = (
    "transformers.tokenization_utils_base.PreTrainedTokenizerBase",
    "transformers.processing_utils.ProcessorMixin",
)


def _mixin_member(ctx: MethodSigContext, name: str) -> CallableType | None:
    """The signature of `ResponseTemplateMixin.<name>` (None if the module is not part of the build)."""
    module_name, _, class_name = _MIXIN.rpartition(".")
    module = getattr(ctx.api, "modules", {}).get(module_name)
    symbol = module.names.get(class_name) if module is not None else None
    info = symbol.node if symbol is not None else None
    member = info.names.get(name) if isinstance(info, TypeInfo) else None
    typ = get_proper_type(member.type) if member is not None and member.type is not None else None
    return typ if isinstance(typ, CallableType) else None


def _method_signature(name: str) -> Callable[[MethodSigContext], FunctionLike]:
    def hook(ctx: MethodSigContext) -> FunctionLike:
        ours = _mixin_member(ctx, name)
        receiver = get_proper_type(ctx.type)
        if ours is None or not isinstance(receiver, Instance):
            return ctx.default_signature
        return bind_self(ours, receiver)

    return hook


class ResponseTemplatesPlugin(Plugin):
    """Replaces the signatures of `parse_response` / `get_response_parser` on tokenizers and processors."""

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        owner, _, name = fullname.rpartition(".")
        if name in _METHODS and owner in _OWNERS:
            return _method_signature(name)
        return None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point."""
    return ResponseTemplatesPlugin
