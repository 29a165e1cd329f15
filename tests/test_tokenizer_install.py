"""Installing the API onto Transformers: lazy (no Transformers/torch import at package import),
patched whichever is imported first, idempotent, and undone by `uninstall()`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import transformers.processing_utils as processing_utils
import transformers.tokenization_utils_base as tub

from hf_response_templates import tokenizer as integration
from hf_response_templates.tokenizer import ResponseTemplateMixin, install, is_installed, uninstall

MEMBERS = ("response_template", "parse_response", "get_response_parser")


def run_python(code: str, **env) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON line, which is returned."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
    environment.pop("HF_RESPONSE_TEMPLATES_NO_PATCH", None)
    environment.update(env)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_the_package_imports_neither_transformers_nor_torch():
    out = run_python(
        """
        import json, sys
        import hf_response_templates
        from hf_response_templates import tokenizer
        tokenizer._autoinstall()  # what the package __init__ calls
        print(json.dumps({m: m in sys.modules for m in ("transformers", "torch", "numpy")}))
        """
    )
    assert out == {"transformers": False, "torch": False, "numpy": False}


def test_importing_the_package_installs_the_api():
    out = run_python(
        """
        import json
        import hf_response_templates
        from transformers import PreTrainedTokenizerFast
        from hf_response_templates.tokenizer import ResponseTemplateMixin, is_installed
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase as B
        print(json.dumps([is_installed(), B.parse_response is ResponseTemplateMixin.parse_response]))
        """
    )
    assert out == [True, True]


@pytest.mark.parametrize("transformers_first", [False, True])
def test_patched_whichever_is_imported_first(transformers_first):
    # (importing processing_utils costs seconds, so only one of the two runs checks processors)
    out = run_python(
        f"""
        import json
        if {transformers_first}:
            import transformers.tokenization_utils_base
        from hf_response_templates import tokenizer
        tokenizer._autoinstall()
        from transformers import PreTrainedTokenizerFast
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase as B
        M = tokenizer.ResponseTemplateMixin
        checks = [
            B.parse_response is M.parse_response,
            B.get_response_parser is M.get_response_parser,
            B.__dict__["response_template"] is M.__dict__["response_template"],
            PreTrainedTokenizerFast.parse_response is M.parse_response,
        ]
        if not {transformers_first}:
            from transformers import ProcessorMixin
            checks.append(ProcessorMixin.parse_response is M.parse_response)
        print(json.dumps(checks))
        """
    )
    assert out == [True] * (4 if transformers_first else 5)


def test_a_tokenizer_loaded_before_the_import_keeps_its_template(tmp_path):
    # Transformers keeps the saved key (5.x: as an attribute, 4.x: in init_kwargs); the property adopts it on
    # first access, validated, so parsing and saving work as for a tokenizer loaded afterwards.
    sys.path.insert(0, os.path.dirname(__file__))
    from _tokenizers import byte_level_tokenizer, qwen3_template

    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    tok.save_pretrained(tmp_path / "saved")
    out = run_python(
        f"""
        import json
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained({str(tmp_path / "saved")!r})
        import hf_response_templates
        template = tok.response_template
        message = tok.parse_response("<think>a</think>b<|im_end|>", prefix="")
        tok.save_pretrained({str(tmp_path / "again")!r})
        plain = AutoTokenizer.from_pretrained({str(tmp_path / "saved")!r}, response_template=None)
        print(json.dumps([template, message, plain.response_template]))
        """
    )
    assert out == [qwen3_template(), {"role": "assistant", "reasoning_content": "a", "content": "b"}, None]
    saved = json.loads((tmp_path / "again" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert saved["response_template"] == qwen3_template()


def test_environment_variable_turns_patching_off():
    out = run_python(
        """
        import json
        from hf_response_templates import tokenizer
        tokenizer._autoinstall()
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase as B
        print(json.dumps([tokenizer.is_installed(), "response_template" in B.__dict__ and
                          B.__dict__["response_template"] is tokenizer.ResponseTemplateMixin.__dict__["response_template"]]))
        """,
        HF_RESPONSE_TEMPLATES_NO_PATCH="1",
    )
    assert out == [False, False]


def native_members():
    return {name: tub.PreTrainedTokenizerBase.__dict__.get(name) for name in (*MEMBERS, "__init__")}


def test_install_is_idempotent_and_uninstall_restores_transformers():
    install()
    installed_init = tub.PreTrainedTokenizerBase.__dict__["__init__"]
    install()
    install()
    assert tub.PreTrainedTokenizerBase.__dict__["__init__"] is installed_init  # not wrapped twice
    original_init = installed_init._hf_response_templates_original
    assert not hasattr(original_init, "_hf_response_templates_original")
    for name in MEMBERS:
        assert tub.PreTrainedTokenizerBase.__dict__[name] is ResponseTemplateMixin.__dict__[name]
    assert is_installed()
    try:
        uninstall()
        uninstall()
        assert not is_installed()
        assert tub.PreTrainedTokenizerBase.__dict__["__init__"] is original_init
        for name in MEMBERS:
            ours = ResponseTemplateMixin.__dict__[name]
            assert tub.PreTrainedTokenizerBase.__dict__.get(name) is not ours
        for name in ("parse_response", "get_response_parser"):
            assert (
                processing_utils.ProcessorMixin.__dict__.get(name) is not ResponseTemplateMixin.__dict__[name]
            )
        restored = native_members()
    finally:
        install()
    # Reinstalling after an uninstall patches again, and uninstalling again gives the same natives back.
    assert is_installed()
    uninstall()
    assert native_members() == restored
    install()
    assert is_installed()


def test_native_members_are_back_after_uninstall():
    """On 5.x the native methods come back; on 4.x the attributes disappear again."""
    install()
    try:
        uninstall()
        import transformers

        native = tub.PreTrainedTokenizerBase.__dict__.get("parse_response")
        if transformers.__version__.startswith("4."):
            assert native is None and "response_template" not in tub.PreTrainedTokenizerBase.__dict__
        else:
            assert native is not None and native.__module__ == "transformers.tokenization_utils_base"
        assert integration._hook is None
    finally:
        install()
