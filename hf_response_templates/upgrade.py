"""Tokenizer folders and Hub repos: read them, pick and verify a response template, and add it to
``tokenizer_config.json`` without touching anything else. The command line (``cli.py``) and the bulk
Hub upgrade (``bulk.py``) are thin layers over this module.

Theory of operation
-------------------
* **Reading** (:func:`load_tokenizer_files`): a local folder is read directly; a Hub repo id is fetched
  with ``huggingface_hub.hf_hub_download`` (``tokenizer_config.json`` and, when present,
  ``chat_template.jinja`` / ``chat_template.json``). Transformers is never needed to read a tokenizer,
  and nothing is loaded through ``AutoTokenizer``. Every problem with the input raises
  :class:`InputError`: one line naming the path or repo and the cause.
* **Choosing** (:func:`resolve_template`): a shipped name, a JSON file, or ``"auto"`` (detection by
  :func:`hf_response_templates.library.detect_template`, explained by :func:`explain_detection`).
* **Verifying** (:func:`verify_chat_template`): the round trip of ``verify.py`` (render sample
  conversations with the tokenizer's own chat template, parse the assistant turn back, compare). What
  the *chat template* cannot carry is not held against the response template: a key whose removal does
  not change the rendered turn is checked without (SmolLM3 renders no reasoning in history), a list
  whose last item does not change the render is cut (gpt-oss renders one tool call per message), a
  render error is retried with JSON-text arguments (DeepSeek), and so is a parse failure (a template
  that prints a dict with `|string` writes Python's repr: Apriel 1.5), a failed case with tool calls is
  retried with the model's own ``functions.NAME:IDX`` call ids (Kimi K2 Thinking renders the id as the
  call header), an object/array argument the chat template renders with Python's ``str()`` instead of
  JSON (Seed-OSS) is checked without it, a conversation the chat template cannot split into prompt +
  turn is "n/a", and so is a tool call whose string arguments hold quotes or backslashes when the chat
  template writes string arguments without escaping (vLLM's Llama 4 pythonic template: `city="%s"`),
  since no parser can read such text back; so is one whose chat template writes string arguments as bare words
  (vLLM's Llama 3.2 pythonic template: `city=Paris`), and one whose chat template writes a call's arguments with no
  separator (vLLM's Gemma 3 pythonic template: `f(a="x"b=1)`). Tools are passed in the flat form ``{name, description,
  parameters}`` when the chat template renders only with that form (Apertus's Hub template). A chat template switched by `/no_think` in the system text
  (Nemotron Nano v2) gets a case that does not pass evaluated again with that flag. Verification passes
  when no case fails and at least one passes.
* **Planning** (:func:`plan_upgrade`): decides the outcome (``ready``, ``already``, ``conflict``,
  ``no_template``, ``verification_failed``) and builds the new file text with
  :func:`hf_response_templates.jsonedit.set_key` (only the one key changes).
* **Writing**: :func:`write_local` (atomic replace, optional copy to ``--output``) or, for the Hub,
  :func:`build_hub_commit` (a pure function: the ``create_commit`` arguments, commit message included)
  and :func:`push_to_hub` (the only network write).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from . import jsonedit

__all__ = [
    "CONFIG_NAME",
    "CaseOutcome",
    "InputError",
    "TokenizerFiles",
    "UpgradePlan",
    "Verification",
    "build_commit_message",
    "build_commit_operations",
    "build_hub_commit",
    "describe_template_difference",
    "explain_detection",
    "fetch_hub_files",
    "hub_offline",
    "load_local_files",
    "load_tokenizer_files",
    "plan_upgrade",
    "push_to_hub",
    "resolve_template",
    "verify_chat_template",
    "write_local",
]

CONFIG_NAME = "tokenizer_config.json"
TOKENIZER_JSON = "tokenizer.json"
KEY = "response_template"
_SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?$")


class InputError(Exception):
    """Bad input: a missing file, unreadable JSON, an unknown template, an offline Hub, ...

    ``str(error)`` is one line: ``"<where>: <cause>"``. The command line prints it and exits with 2.
    """

    def __init__(self, where: Any, cause: str):
        self.where = str(where)
        self.cause = " ".join(str(cause).split())
        super().__init__(f"{self.where}: {self.cause}")


# --------------------------------------------------------------------------- reading


@dataclass
class TokenizerFiles:
    """What the CLI needs from a tokenizer: its config text and its chat template(s).

    Attributes:
        where: the path or repo id as given.
        kind: ``"local"`` or ``"hub"``.
        folder: the local folder (for the Hub: where the files were downloaded), or ``None``.
        config_text: raw text of ``tokenizer_config.json`` (``None`` if the folder has none).
        config: the parsed config (``{}`` if there is none).
        chat_template: a string, or ``{name: template}`` when the tokenizer has named templates.
        chat_template_origin: which file the chat template came from.
        files: for the Hub, ``{filename: local path}`` of the downloaded files.
        revision: the Hub commit the files were read at (when known).
    """

    where: str
    kind: str
    folder: Path | None
    config_text: str | None
    config: dict
    chat_template: str | dict[str, str] | None
    chat_template_origin: str = ""
    files: dict[str, Path] = field(default_factory=dict)
    revision: str | None = None

    @property
    def config_label(self) -> str:
        if self.kind == "hub":
            return f"{self.where}/{CONFIG_NAME}"
        return str((self.folder or Path(self.where)) / CONFIG_NAME)

    def require_config(self) -> None:
        if self.config_text is None:
            raise InputError(self.where, f"no {CONFIG_NAME} in this {'repo' if self.kind == 'hub' else 'folder'}")

    def require_chat_template(self) -> None:
        if not self.chat_template:
            raise InputError(
                self.where,
                "no chat template (looked for chat_template.jinja, chat_template.json and the "
                f"'chat_template' key of {CONFIG_NAME})",
            )

    def chat_template_text(self, *, tools: bool = True) -> str:
        """The chat template ``apply_chat_template`` would use (``tool_use`` when tools are passed)."""
        self.require_chat_template()
        template = self.chat_template
        if isinstance(template, str):
            return template
        assert isinstance(template, dict)
        for name in (("tool_use", "default") if tools else ("default",)):
            if name in template:
                return template[name]
        return next(iter(template.values()))

    def special_tokens(self) -> dict[str, str]:
        """The special tokens a chat template is rendered with (``bos_token``, ``eos_token``, ...)."""
        out = {}
        for key in _SPECIAL_TOKEN_KEYS:
            value = _token_text(self.config.get(key))
            if value is not None:
                out[key] = value
        return out

    def added_tokens(self) -> list[str]:
        tokens = []
        decoder = self.config.get("added_tokens_decoder")
        if isinstance(decoder, Mapping):
            tokens += [t for t in (_token_text(v) for v in decoder.values()) if t is not None]
        for key in ("additional_special_tokens", "extra_special_tokens"):
            value = self.config.get(key)
            if isinstance(value, list):
                tokens += [t for t in (_token_text(v) for v in value) if t is not None]
        tokens += list(self.special_tokens().values())
        tokens += self._tokenizer_json_tokens()
        return tokens

    def _tokenizer_json_tokens(self) -> list[str]:
        """The added tokens of ``tokenizer.json``: Transformers 5.x saves them only there (its
        ``tokenizer_config.json`` has no ``added_tokens_decoder``). Unreadable: no evidence."""
        path = self.files.get(TOKENIZER_JSON) or (self.folder / TOKENIZER_JSON if self.folder else None)
        if path is None or not path.is_file():
            return []
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return []
        added = data.get("added_tokens") if isinstance(data, dict) else None
        if not isinstance(added, list):
            return []
        return [t for t in (_token_text(v) for v in added) if t is not None]

    def detection_subject(self) -> Any:
        """An object :func:`~hf_response_templates.library.detect_template` accepts: the chat
        template plus the tokenizer's added/special tokens (as vocabulary evidence)."""
        return SimpleNamespace(
            chat_template=self.chat_template,
            added_tokens_decoder={i: t for i, t in enumerate(self.added_tokens())},
        )


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def decode_text(data: bytes, where: Any) -> str:
    """``data`` as UTF-8 text, or a one-line :class:`InputError` naming ``where`` and the bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(where, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_text(path: Path, where: Any = None) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(where or path, f"cannot read: {exc.strerror or exc}") from None
    return decode_text(data, where or path)


def _parse_json(text: str, where: Any) -> Any:
    try:
        return json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise InputError(where, f"unreadable JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def read_json_file(path: Path | str, what: str = "JSON") -> Any:
    """Read a JSON file, turning every problem into a one-line :class:`InputError`."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file")
    if path.is_dir():
        raise InputError(path, f"is a folder, expected a {what} file")
    return _parse_json(_read_text(path), path)


def _config_from_text(text: str, where: Any) -> dict:
    config = _parse_json(text, where)
    if not isinstance(config, dict):
        raise InputError(where, f"expected a JSON object, got {type(config).__name__}")
    return config


def _chat_template_from(
    config: dict, jinja_text: str | None, json_text: str | None, extra: dict[str, str], where: Any
) -> tuple[str | dict[str, str] | None, str]:
    """Resolve the chat template the way Transformers does: chat_template.jinja, then
    chat_template.json, then the config key; named templates from additional_chat_templates/."""
    default: str | None = None
    origin = ""
    named: dict[str, str] = {}
    if jinja_text is not None:
        default, origin = jinja_text, "chat_template.jinja"
    elif json_text is not None:
        data = _parse_json(json_text, where)
        value = data.get("chat_template") if isinstance(data, dict) else None
        if isinstance(value, str):
            default, origin = value, "chat_template.json"
    if default is None:
        value = config.get("chat_template")
        if isinstance(value, str):
            default, origin = value, f"{CONFIG_NAME} 'chat_template'"
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Mapping) and isinstance(item.get("template"), str):
                    named[str(item.get("name", "default"))] = item["template"]
            if named:
                origin = f"{CONFIG_NAME} 'chat_template' (named: {', '.join(named)})"
        elif isinstance(value, Mapping):
            named.update({str(k): v for k, v in value.items() if isinstance(v, str)})
            if named:
                origin = f"{CONFIG_NAME} 'chat_template' (named: {', '.join(named)})"
    if extra:
        named.update(extra)
        origin = (origin + " + " if origin else "") + "additional_chat_templates/"
    if default is not None and named:
        return {"default": default, **named}, origin
    if named:
        return (named if len(named) > 1 else next(iter(named.values()))), origin
    return default, origin


def load_local_files(path: Path | str) -> TokenizerFiles:
    """Read a local tokenizer folder (or its ``tokenizer_config.json``).

    The config may be missing (detection and verification only need a chat template); commands
    that write call :meth:`TokenizerFiles.require_config`.
    """
    given = str(path)
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(given, "no such file or folder")
    if path.is_file():
        if path.name != CONFIG_NAME:
            raise InputError(given, f"expected a tokenizer folder (or its {CONFIG_NAME}), got a file")
        path = path.parent
    config_path = path / CONFIG_NAME
    config_text = None
    config: dict = {}
    if config_path.exists():
        config_text = _read_text(config_path)
        config = _config_from_text(config_text, config_path)
    jinja = path / "chat_template.jinja"
    jsonf = path / "chat_template.json"
    extra = {}
    extra_dir = path / "additional_chat_templates"
    if extra_dir.is_dir():
        extra = {p.stem: _read_text(p) for p in sorted(extra_dir.glob("*.jinja"))}
    if config_text is None and not jinja.exists() and not jsonf.exists():
        raise InputError(given, f"not a tokenizer folder: no {CONFIG_NAME} and no chat_template.jinja")
    chat_template, origin = _chat_template_from(
        config,
        _read_text(jinja) if jinja.exists() else None,
        _read_text(jsonf) if jsonf.exists() else None,
        extra,
        jsonf,
    )
    return TokenizerFiles(given, "local", path, config_text, config, chat_template, origin)


def hub_offline() -> bool:
    """Whether the Hugging Face Hub must not be contacted (``HF_HUB_OFFLINE`` is set)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def looks_like_repo_id(text: str) -> bool:
    return bool(_REPO_ID.match(text)) and not text.endswith((".json", ".jinja")) and ".." not in text


def _hub_error(repo_id: str, filename: str, exc: BaseException, action: str = "download") -> InputError:
    name = type(exc).__name__
    names = {c.__name__ for c in type(exc).__mro__}
    if "GatedRepoError" in names:
        return InputError(repo_id, "gated repo: accept its terms on the Hub and log in (`hf auth login`)")
    if "RepositoryNotFoundError" in names:
        return InputError(repo_id, "no such repo on the Hub (or it is private: log in with `hf auth login`)")
    if "RevisionNotFoundError" in names:
        return InputError(repo_id, "no such revision")
    if "EntryNotFoundError" in names or "RemoteEntryNotFoundError" in names:
        return InputError(repo_id, f"no {filename} in this repo")
    if "OfflineModeIsEnabled" in names:
        return InputError(repo_id, "not a local folder, and the Hugging Face Hub is offline (HF_HUB_OFFLINE)")
    if isinstance(exc, (ConnectionError, TimeoutError)) or any("Connect" in n or "Timeout" in n for n in names):
        return InputError(repo_id, f"cannot reach the Hugging Face Hub ({name}); check the network or pass a local folder")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return InputError(repo_id, f"cannot {action} {filename}: {name}: {first}")


def _is_missing_entry(exc: BaseException) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"EntryNotFoundError", "RemoteEntryNotFoundError"})


def fetch_hub_files(
    repo_id: str, *, revision: str | None = None, download: Callable[..., str] | None = None
) -> TokenizerFiles:
    """Download a Hub repo's ``tokenizer_config.json`` and chat template files.

    ``download`` defaults to ``huggingface_hub.hf_hub_download`` (tests inject a fake).

    Raises:
        InputError: offline (``HF_HUB_OFFLINE``), no network, no such repo or no config.
    """
    if download is None:
        if hub_offline():
            raise InputError(repo_id, "not a local folder, and the Hugging Face Hub is offline (HF_HUB_OFFLINE is set)")
        from huggingface_hub import hf_hub_download as download  # noqa: N813
    files: dict[str, Path] = {}
    for filename in (CONFIG_NAME, "chat_template.jinja", "chat_template.json"):
        try:
            files[filename] = Path(download(repo_id=repo_id, filename=filename, revision=revision))
        except Exception as exc:  # noqa: BLE001 - mapped to one-line errors
            if filename != CONFIG_NAME and _is_missing_entry(exc):
                continue
            raise _hub_error(repo_id, filename, exc) from None
    config_text = _read_text(files[CONFIG_NAME], f"{repo_id}/{CONFIG_NAME}")
    config = _config_from_text(config_text, f"{repo_id}/{CONFIG_NAME}")
    if not isinstance(config.get("added_tokens_decoder"), Mapping):
        # Saved by Transformers 5.x: the added (special) tokens, detection's vocabulary evidence, are only
        # in tokenizer.json. Optional: without it detection relies on the chat template alone.
        try:
            files[TOKENIZER_JSON] = Path(download(repo_id=repo_id, filename=TOKENIZER_JSON, revision=revision))
        except Exception as exc:  # noqa: BLE001 - a repo without tokenizer.json (a slow tokenizer)
            if not _is_missing_entry(exc):
                raise _hub_error(repo_id, TOKENIZER_JSON, exc) from None
    chat_template, origin = _chat_template_from(
        config,
        _read_text(files["chat_template.jinja"]) if "chat_template.jinja" in files else None,
        _read_text(files["chat_template.json"]) if "chat_template.json" in files else None,
        {},
        f"{repo_id}/chat_template.json",
    )
    sha = re.search(r"[/\\]snapshots[/\\]([0-9a-f]{40})[/\\]", str(files[CONFIG_NAME]))
    return TokenizerFiles(
        repo_id, "hub", files[CONFIG_NAME].parent, config_text, config, chat_template, origin, files,
        revision=sha.group(1) if sha else revision,
    )


def load_tokenizer_files(
    target: str, *, revision: str | None = None, download: Callable[..., str] | None = None
) -> TokenizerFiles:
    """A local folder if ``target`` exists on disk, else a Hub repo id (see :func:`fetch_hub_files`)."""
    path = Path(target).expanduser()
    if path.exists() or not looks_like_repo_id(target):
        return load_local_files(target)
    if download is None and hub_offline():
        raise InputError(
            target, "no such local folder, and the Hugging Face Hub is offline (HF_HUB_OFFLINE is set), so it "
            "cannot be fetched as a Hub repo"
        )
    return fetch_hub_files(target, revision=revision, download=download)


# --------------------------------------------------------------------------- templates


def _library():
    from . import library

    return library


def validate_template(template: Any, where: Any) -> dict:
    from .errors import TemplateError
    from .template import load_template

    if not isinstance(template, dict):
        raise InputError(where, f"a response template must be a JSON object, got {type(template).__name__}")
    try:
        load_template(template)
    except TemplateError as exc:
        raise InputError(where, f"invalid response template: {exc}") from None
    return template


def load_template_arg(spec: str) -> tuple[str | None, dict, str]:
    """``--template NAME|FILE``: ``(shipped name or None, template dict, label)``."""
    library = _library()
    if spec in library.list_templates():
        return spec, library.get_template(spec), spec
    path = Path(spec).expanduser()
    if path.suffix == ".json" or os.sep in spec or path.exists():
        data = read_json_file(path, "response template")
        if isinstance(data, dict) and "fields" not in data and isinstance(data.get(KEY), dict):
            data = data[KEY]  # a tokenizer_config.json that already has one
        return None, validate_template(data, path), str(path)
    raise InputError(
        "--template", f"unknown response template {spec!r}; available: {', '.join(library.list_templates())} "
        "(or a path to a .json file)"
    )


def explain_detection(subject: Any) -> tuple[str | None, list[str]]:
    """``(detected name or None, reasons)``: which markers matched, or why nothing was chosen."""
    library = _library()
    name = library.detect_template(subject)
    texts = library._template_texts(subject)
    vocab = library._vocabulary(subject)
    matching: dict[str, list[str]] = {}
    for rule in library._RULES:
        for text in texts:
            if not rule.matches(text, vocab):
                continue
            found = list(rule.all_of) + [m for m in rule.any_of if m in text]
            reasons = ["chat template contains " + ", ".join(repr(m) for m in found)]
            if rule.none_of:
                reasons.append("chat template has none of " + ", ".join(repr(m) for m in rule.none_of))
            if vocab and rule.tokens:
                reasons.append("tokenizer has the token(s) " + ", ".join(repr(t) for t in rule.tokens if t in vocab))
            matching.setdefault(rule.name, reasons)
    if name is not None:
        return name, matching.get(name, ["detected by hf_response_templates.library.detect_template"])
    if len(matching) > 1:
        return None, [f"ambiguous: the chat template matches {', '.join(sorted(matching))}; pass --template"]
    if not texts:
        return None, ["no chat template"]
    by_markers = sorted({rule.name for rule in library._RULES for text in texts if rule.matches(text, None)})
    if len(by_markers) > 1:
        return None, [f"ambiguous: the chat template matches {', '.join(by_markers)}; pass --template"]
    if by_markers:
        rule = next(r for r in library._RULES if r.name == by_markers[0])
        return None, [
            f"the chat template has the markers of {rule.name}, but the tokenizer has none of its token(s) "
            + ", ".join(repr(t) for t in rule.tokens)
            + " (looked in added_tokens_decoder, the special tokens and tokenizer.json)"
        ]
    return None, ["the chat template has none of the shipped families' markers"]


def resolve_template(files: TokenizerFiles, spec: str = "auto") -> tuple[str | None, dict, str, list[str]]:
    """``(shipped name or None, template, label, reasons)`` for ``--template`` (``"auto"``: detect;
    ``"derive"``: :func:`~hf_response_templates.derive.derive`, only a proven template)."""
    if spec == "derive":
        return _derived_template(files)
    if spec != "auto":
        name, template, label = load_template_arg(spec)
        return name, template, label, ["chosen with --template"]
    files.require_chat_template()
    name, reasons = explain_detection(files.detection_subject())
    if name is None:
        return None, {}, "", reasons
    return name, _library().get_template(name), name, reasons


def _derived_template(files: TokenizerFiles) -> tuple[str | None, dict, str, list[str]]:
    """``--template derive``: the derived (or recognised) template, or none with derive's reasons."""
    from .derive import derive

    files.require_chat_template()
    result = derive(files.chat_template_text(), special_tokens=files.special_tokens())
    if not result.ok:
        return None, {}, "", ["derive: the derived template is not proven", *result.problems[:3]]
    name = result.source.split(":", 1)[1] if result.source.startswith("library:") else None
    return name, result.template, name or "derived", [f"derived ({result.source}, confidence {result.confidence})"]


# --------------------------------------------------------------------------- verification


@dataclass
class CaseOutcome:
    """One verification case: ``status`` is ``"pass"``, ``"fail"`` or ``"n/a"``."""

    name: str
    status: str
    detail: str = ""
    notes: list[str] = field(default_factory=list)
    generation: str = ""


@dataclass
class Verification:
    """The round-trip check of one response template against one chat template."""

    template_label: str
    cases: list[CaseOutcome]

    @property
    def passed(self) -> bool:
        return any(c.status == "pass" for c in self.cases) and not any(c.status == "fail" for c in self.cases)

    def count(self, status: str) -> int:
        return sum(1 for c in self.cases if c.status == status)

    @property
    def summary(self) -> str:
        return f"{self.count('pass')} passed, {self.count('fail')} failed, {self.count('n/a')} n/a"

    @property
    def caution(self) -> str:
        """A warning when most cases could not be checked (empty otherwise)."""
        checked, total = self.count("pass") + self.count("fail"), len(self.cases)
        if total and checked * 2 < total:
            return (f"only {checked} of {total} cases could be checked; the chat template cannot carry the "
                    "others (n/a), so test real model output too (`hf-response-templates parse`)")
        return ""

    def failures(self) -> list[CaseOutcome]:
        return [c for c in self.cases if c.status == "fail"]

    def as_dict(self) -> dict:
        return {
            "template": self.template_label,
            "passed": self.passed,
            "cases": [{"name": c.name, "status": c.status, "detail": c.detail, "notes": c.notes} for c in self.cases],
        }


def _meaningful(message: Mapping[str, Any]) -> list[str]:
    """The keys of ``message`` that verification compares (not ``role``, ids or empty values)."""
    from .verify import normalize_message

    return [k for k in normalize_message(message) if k != "role"]


def _with_ids(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Give tool calls 9-character alphanumeric ids (Mistral requires them) and tool results their ids."""
    out = copy.deepcopy([dict(m) for m in messages])
    counter = 0
    pending: list[str] = []
    for msg in out:
        if msg.get("tool_calls"):
            calls = []
            for call in msg["tool_calls"]:
                call = dict(call)
                if "id" not in call:
                    counter += 1
                    call["id"] = f"call{counter:05d}"
                pending.append(call["id"])
                calls.append(call)
            msg["tool_calls"] = calls
        elif msg.get("role") == "tool" and "tool_call_id" not in msg and pending:
            msg["tool_call_id"] = pending.pop(0)
    return out


def _python_str_arguments(message: Mapping[str, Any], generation: str) -> tuple[dict, list[str]] | None:
    """``message`` without the object/array tool-call arguments the chat template rendered with Python's
    ``str()`` (``{'a': 1}``, ``['x']``: Seed-OSS renders every non-string with ``|string``) instead of JSON,
    and the names of those arguments; ``None`` when there are none. No parser can read such a value back,
    so it is a limit of the chat template, not of the response template."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return None
    dropped: list[str] = []
    new_calls = []
    for call in calls:
        fn = call.get("function") if isinstance(call, Mapping) else None
        args = fn.get("arguments") if isinstance(fn, Mapping) else None
        if not isinstance(args, Mapping):
            new_calls.append(call)
            continue
        keep = {}
        for key, value in args.items():
            if (isinstance(value, (dict, list)) and value and str(value) in generation
                    and json.dumps(value, ensure_ascii=False) not in generation):
                dropped.append(str(key))
            else:
                keep[key] = value
        new_calls.append({**call, "function": {**fn, "arguments": keep}})
    if not dropped:
        return None
    return {**message, "tool_calls": new_calls}, dropped


def _native_call_ids(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The same conversation with tool-call ids in Kimi's native ``functions.NAME:IDX`` form."""
    out = copy.deepcopy([dict(m) for m in messages])
    renamed: dict[str, str] = {}
    counter = 0
    for msg in out:
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                native = f"functions.{fn['name']}:{counter}"
                counter += 1
                if isinstance(call.get("id"), str):
                    renamed[call["id"]] = native
                call["id"] = native
        if msg.get("role") == "tool" and msg.get("tool_call_id") in renamed:
            msg["tool_call_id"] = renamed[msg["tool_call_id"]]
    return out


def _json_text_arguments(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    out = copy.deepcopy([dict(m) for m in messages])
    for msg in out:
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and not isinstance(fn.get("arguments"), str):
                fn["arguments"] = json.dumps(fn.get("arguments"), ensure_ascii=False)
    return out


#: a string argument holding both quotes and a backslash: any escaping (JSON, Python repr) changes it
_ESCAPE_PROBE = "q\"x'y\\z"


def _string_arguments(message: Mapping[str, Any]) -> list[tuple[int, str, str]]:
    """``(call index, key, value)`` of every top-level string argument of the message's tool calls."""
    out = []
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") if isinstance(call, Mapping) else None
        arguments = fn.get("arguments") if isinstance(fn, Mapping) else None
        if isinstance(arguments, Mapping):
            out += [(index, k, v) for k, v in arguments.items() if isinstance(v, str)]
    return out


def _needs_escaping(message: Mapping[str, Any]) -> bool:
    return any(c in value for _i, _k, value in _string_arguments(message) for c in "\"'\\")


def _render_with_probe(
    message: dict, generation: Callable[[dict], str | BaseException], probe: str
) -> tuple[str, str] | None:
    """``(key, rendered turn)`` of the message with its first string argument replaced by ``probe`` (None when it
    has no string argument or does not render)."""
    found = _string_arguments(message)
    if not found:
        return None
    index, key, _value = found[0]
    probed = copy.deepcopy(message)
    probed["tool_calls"][index]["function"]["arguments"][key] = probe
    gen = generation(probed)
    return (key, gen) if isinstance(gen, str) else None


def _unescaped_arguments(message: dict, generation: Callable[[dict], str | BaseException]) -> bool:
    """Whether the chat template writes a string argument exactly as it is (no escaping): the message is
    rendered with one string argument replaced by :data:`_ESCAPE_PROBE`, and the probe must come out
    verbatim."""
    rendered = _render_with_probe(message, generation, _ESCAPE_PROBE)
    return rendered is not None and _ESCAPE_PROBE in rendered[1]


#: a plain string argument: a chat template that prints it right after ``KEY=`` writes strings without quotes
_BARE_PROBE = "plainprobe"


def _bare_string_arguments(message: dict, generation: Callable[[dict], str | BaseException]) -> bool:
    """Whether the chat template writes a string argument as a bare word in a pythonic call (``city=Paris``: vLLM's
    Llama 3.2 pythonic template prints every value with ``"%s" | format(value)``): the message is rendered with
    one string argument replaced by :data:`_BARE_PROBE`, which must come out right after ``KEY=``. No parser can
    read such a call back, whatever the string holds."""
    rendered = _render_with_probe(message, generation, _BARE_PROBE)
    return rendered is not None and f"{rendered[0]}={_BARE_PROBE}" in rendered[1]


def _unseparated_arguments(message: dict, generation: Callable[[dict], str | BaseException]) -> bool:
    """Whether the chat template writes two arguments of a call with nothing between them (``f(a="x"b=1)``: vLLM's
    Gemma 3 pythonic template sets its separator flag inside the loop body, where Jinja scoping drops it): the
    message's first call is rendered with two probe arguments, and the first value must run straight into the
    second key. No parser can split such a call."""
    calls = message.get("tool_calls") or []
    if not any(len((c.get("function") or {}).get("arguments") or {}) > 1 for c in calls if isinstance(c, Mapping)):
        return False
    probed = copy.deepcopy(message)
    probed["tool_calls"][0]["function"]["arguments"] = {"probefirst": "probeone", "probesecond": "probetwo"}
    gen = generation(probed)
    return isinstance(gen, str) and re.search(r"probeone[\"']?probesecond", gen) is not None


def _thinking_switch(chat_template: str) -> Callable[[Sequence[Mapping[str, Any]]], list[dict]] | None:
    """For a chat template that switches thinking off with ``/no_think`` in a system or user message, a
    function adding that flag to a conversation's system message (None for other chat templates)."""
    if "/no_think" not in chat_template:
        return None

    def no_think(conversation: Sequence[Mapping[str, Any]]) -> list[dict]:
        out = copy.deepcopy([dict(m) for m in conversation])
        if out and out[0].get("role") == "system" and isinstance(out[0].get("content"), str):
            out[0]["content"] = out[0]["content"] + " /no_think"
        else:
            out.insert(0, {"role": "system", "content": "/no_think"})
        return out

    return no_think


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}"


def _flat_tools(tools: Sequence[Any]) -> list[Any] | None:
    """`tools` with every OpenAI-style `{"type": "function", "function": {...}}` replaced by its function
    dict; None when there is none to replace."""
    flat = [t["function"] if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping) else t for t in tools]
    return None if all(a is b for a, b in zip(flat, tools, strict=True)) else flat


def verify_chat_template(
    chat_template: str,
    template: Mapping[str, Any],
    *,
    label: str = "",
    special_tokens: Mapping[str, str] | None = None,
    conversations: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    tools: Sequence[Any] | None = None,
    **template_kwargs: Any,
) -> Verification:
    """Round-trip ``template`` through ``chat_template`` on sample conversations (see the module docs).

    Args:
        chat_template: the tokenizer's Jinja chat template.
        template: the response template.
        label: the template's name, for messages.
        special_tokens: e.g. ``{"bos_token": "<s>"}`` (``TokenizerFiles.special_tokens()``).
        conversations: ``{name: messages}``; default ``verify.sample_conversations(template)``.
        tools: default ``verify.sample_tools()``.
        **template_kwargs: chat-template variables (``enable_thinking=False``).
    """
    from .verify import sample_conversations, sample_tools, split_assistant_turn, verify_round_trip

    if conversations is None:
        conversations = sample_conversations(template)
    if tools is None:
        tools = sample_tools()
    render = dict(tools=tools, special_tokens=special_tokens)
    # Chat templates that switch thinking on/off often prompt differently in one mode than they render
    # history (Gemma 4 with thinking off, DeepSeek V3.1 with thinking on): try each switch the template reads.
    variants: list[dict[str, Any]] = [dict(template_kwargs)]
    for var in ("enable_thinking", "thinking"):
        if var not in template_kwargs and var in chat_template:
            variants += [{**template_kwargs, var: value} for value in (True, False)]

    def generation(messages: list[dict], kwargs: dict[str, Any]) -> str | BaseException:
        try:
            return split_assistant_turn(chat_template, messages, **render, **kwargs)[1]
        except ImportError:  # a missing dependency is not a property of the chat template
            raise
        except Exception as exc:  # noqa: BLE001 - a render failure is data here
            return exc

    def check(messages: list[dict], kwargs: dict[str, Any]) -> Any:
        [result] = verify_round_trip(chat_template, template, {"case": messages}, **render, **kwargs)
        return result

    def first_split(messages: list[dict]) -> tuple[str | BaseException, dict[str, Any]]:
        first: BaseException | None = None
        for kwargs in variants:
            gen = generation(messages, kwargs)
            if not isinstance(gen, BaseException):
                return gen, kwargs
            first = first or gen
        assert first is not None
        return first, variants[0]

    def evaluate(name: str, conversation: Sequence[Mapping[str, Any]]) -> CaseOutcome:
        messages = _with_ids(conversation)
        notes: list[str] = []
        gen, kwargs = first_split(messages)
        as_json_text = isinstance(gen, BaseException)
        if as_json_text:
            alternative = _json_text_arguments(messages)
            gen2, kwargs2 = first_split(alternative)
            if isinstance(gen2, BaseException):
                return CaseOutcome(name, "n/a", "the chat template cannot render this conversation as prompt + "
                                   f"turn ({_short(gen)})")
            messages, gen, kwargs = alternative, gen2, kwargs2
            notes.append("tool-call arguments passed as JSON text (the chat template needs strings)")
        extra = {k: v for k, v in kwargs.items() if k not in template_kwargs}
        if extra:
            notes.append("rendered with " + ", ".join(f"{k}={v}" for k, v in extra.items()))
        result = check(messages, kwargs)
        if not result.passed and any(m.get("tool_calls") for m in messages):
            # Kimi K2 Thinking / K2.5 render the call id in place of the call header: with the model's own
            # ids ("functions.NAME:IDX") the name is there to read back
            native = _native_call_ids(messages)
            native_gen, native_kwargs = first_split(native)
            if not isinstance(native_gen, BaseException) and check(native, native_kwargs).passed:
                notes.append("tool-call ids in the model's functions.NAME:IDX form (the chat template renders "
                             "the id as the call header)")
                return CaseOutcome(name, "pass", "", notes, native_gen)
        if result.passed:
            return CaseOutcome(name, "pass", "", notes, gen)
        if result.detail.startswith("parse failed") and not as_json_text:
            # a chat template that prints a dict with `|string` writes Python's repr (Apriel 1.5): such a
            # template needs arguments given as JSON text, as one that concatenates them does (DeepSeek)
            alternative = _json_text_arguments(messages)
            if alternative != messages:
                gen2, kwargs2 = first_split(alternative)
                retry = None if isinstance(gen2, BaseException) else check(alternative, kwargs2)
                if retry is not None and not retry.detail.startswith("parse failed"):
                    notes.append("tool-call arguments passed as JSON text (the chat template prints them as "
                                 "Python text otherwise)")
                    messages, gen, kwargs, result = alternative, gen2, kwargs2, retry
                    if result.passed:
                        return CaseOutcome(name, "pass", "", notes, gen)
        if (
            result.detail.startswith("parse failed")
            and _needs_escaping(messages[-1])
            and _unescaped_arguments(messages[-1], lambda final: generation(messages[:-1] + [final], kwargs))
        ):
            return CaseOutcome(name, "n/a", "the chat template writes string arguments without escaping, "
                               "so an argument holding quotes or backslashes cannot be read back", notes, gen)
        if result.detail.startswith("parse failed") and _bare_string_arguments(
            messages[-1], lambda final: generation(messages[:-1] + [final], kwargs)
        ):
            return CaseOutcome(name, "n/a", "the chat template writes string arguments as bare words without "
                               "quotes (KEY=VALUE), so no string argument can be read back", notes, gen)
        if result.detail.startswith("parse failed") and _unseparated_arguments(
            messages[-1], lambda final: generation(messages[:-1] + [final], kwargs)
        ):
            return CaseOutcome(name, "n/a", "the chat template writes a call's arguments with no separator between "
                               "them, so a call with several arguments cannot be read back", notes, gen)
        if result.detail.startswith(("parse failed", "render failed")):
            return CaseOutcome(name, "fail", result.detail, notes, gen)
        # Is the mismatch the chat template's doing? Drop what it does not render and check the rest.
        final = messages[-1]
        adjusted = dict(final)
        for key in _meaningful(final):
            variant = dict(adjusted)
            if key == "content":
                variant["content"] = ""
            else:
                variant.pop(key)
            if generation(messages[:-1] + [variant], kwargs) == gen:
                adjusted = variant
                notes.append(f"{key} is not rendered by the chat template: checked without it")
        pythonic = _python_str_arguments(adjusted, gen)
        if pythonic is not None:
            adjusted, dropped = pythonic
            notes.append(f"argument(s) {', '.join(dropped)} rendered with Python's str() by the chat template, not as "
                         "JSON: checked without them")
        calls = adjusted.get("tool_calls")
        if isinstance(calls, list) and len(calls) > 1:
            for keep in range(1, len(calls)):
                variant = {**adjusted, "tool_calls": calls[:keep]}
                if generation(messages[:-1] + [variant], kwargs) == gen:
                    adjusted = variant
                    notes.append(f"the chat template renders only {keep} tool call(s) per message: checked those")
                    break
        if adjusted == final:
            return CaseOutcome(name, "fail", result.detail, notes, gen)
        if not _meaningful(adjusted):
            return CaseOutcome(name, "n/a", "the chat template renders none of this message's "
                               f"{', '.join(_meaningful(final))}", [], gen)
        retry = check(messages[:-1] + [adjusted], kwargs)
        return CaseOutcome(name, "pass" if retry.passed else "fail", retry.detail, notes, gen)

    # A chat template that reads tools only in the flat form {"name", "description", "parameters"} (Apertus's
    # Hub template) fails on every OpenAI-style tool: probe once, and pass them flat if only that renders.
    flat = _flat_tools(tools)
    flat_note = ""
    if flat is not None:
        probe = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
        if isinstance(first_split(probe)[0], BaseException):
            render["tools"] = flat
            if isinstance(first_split(probe)[0], BaseException):
                render["tools"] = tools
            else:
                flat_note = ("tools passed in the flat form {name, description, parameters} (the chat template "
                             "does not read OpenAI-style tools)")

    switch = _thinking_switch(chat_template)
    cases: list[CaseOutcome] = []
    for name, conversation in conversations.items():
        outcome = evaluate(name, conversation)
        if outcome.status != "pass" and switch is not None:
            # a chat template switched by a text flag (Nemotron Nano v2's "/no_think"): with thinking on, the
            # rendered turn continues an opened <think>, so its content cannot be told from reasoning
            alternative = evaluate(name, switch(conversation))
            if alternative.status == "pass":
                alternative.notes.append("rendered with /no_think in the system message")
                outcome = alternative
        if flat_note:
            outcome.notes.insert(0, flat_note)
        cases.append(outcome)
    return Verification(label, cases)


def verify_files(files: TokenizerFiles, template: Mapping[str, Any], label: str = "") -> Verification:
    """:func:`verify_chat_template` with the tokenizer's own chat template and special tokens."""
    try:
        return verify_chat_template(
            files.chat_template_text(tools=True), template, label=label, special_tokens=files.special_tokens()
        )
    except ImportError as exc:
        raise InputError(files.where, missing_dependency("verification", exc)) from None


def missing_dependency(what: str, exc: ImportError) -> str:
    """One line naming what is missing: ``"verification needs jinja2 (...): pip install jinja2"``."""
    text = " ".join(str(exc).split())
    # `exc.name` for a failed import; Transformers' own checks ("requires jinja2") only say it in the message
    name = exc.name or next((n for n in ("jinja2", "transformers", "huggingface_hub") if n in text.lower()), None)
    if name:
        package = name.split(".")[0]
        return f"{what} needs {package}, which is not installed ({text}): pip install {package}"
    return f"{what} needs a package that is not installed ({text})"


# --------------------------------------------------------------------------- planning


def describe_template_difference(old: Any, new: Any) -> list[str]:
    """Short human descriptions of how two response templates differ (empty when equal)."""
    if old == new:
        return []
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return [f"existing value is {type(old).__name__}, not a response template"]
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        if key == "fields":
            continue
        if key not in new:
            out.append(f"{key!r} only in the existing template")
        elif key not in old:
            out.append(f"{key!r} only in the new template")
        elif old[key] != new[key]:
            out.append(f"{key!r} differs: {json.dumps(old[key], ensure_ascii=False)} -> {json.dumps(new[key], ensure_ascii=False)}")
    old_fields = old.get("fields") if isinstance(old.get("fields"), Mapping) else {}
    new_fields = new.get("fields") if isinstance(new.get("fields"), Mapping) else {}
    for name in list(old_fields) + [n for n in new_fields if n not in old_fields]:
        if name not in new_fields:
            out.append(f"field {name!r} only in the existing template")
        elif name not in old_fields:
            out.append(f"field {name!r} only in the new template")
        elif old_fields[name] != new_fields[name]:
            a, b = old_fields[name], new_fields[name]
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if isinstance(a, Mapping) and isinstance(b, Mapping) else []
            out.append(f"field {name!r} differs" + (f" in {', '.join(keys)}" if keys else ""))
    if not out and list(old_fields) != list(new_fields):
        out.append("the fields are in a different order")
    return out or ["the templates differ"]


@dataclass
class UpgradePlan:
    """What ``upgrade`` will do for one tokenizer.

    ``status``: ``"ready"`` (``new_text`` is the new config), ``"already"`` (the same template is
    there), ``"conflict"`` (a different one is there; ``differences`` says how), ``"no_template"``
    (detection found nothing), ``"verification_failed"``.
    """

    files: TokenizerFiles
    status: str
    template_name: str | None = None
    template_label: str = ""
    template: dict | None = None
    reasons: list[str] = field(default_factory=list)
    verification: Verification | None = None
    differences: list[str] = field(default_factory=list)
    new_text: str | None = None
    forced: bool = False

    @property
    def diff(self) -> str:
        if self.new_text is None or self.files.config_text is None:
            return ""
        return jsonedit.unified_diff(self.files.config_text, self.new_text, CONFIG_NAME)


def plan_upgrade(files: TokenizerFiles, template: str = "auto", *, force: bool = False) -> UpgradePlan:
    """Decide what to do and build the new ``tokenizer_config.json`` text (nothing is written).

    Raises:
        InputError: bad input (no config, no chat template, unknown/invalid template, a config this
            tool cannot edit).
    """
    files.require_config()
    name, chosen, label, reasons = resolve_template(files, template)
    if not chosen:
        return UpgradePlan(files, "no_template", reasons=reasons)
    plan = UpgradePlan(files, "ready", name, label, chosen, reasons)
    existing = files.config.get(KEY)
    if existing is not None:
        if existing == chosen:
            plan.status = "already"
            return plan
        plan.differences = describe_template_difference(existing, chosen)
        if not force:
            plan.status = "conflict"
            return plan
        plan.forced = True
    plan.verification = verify_files(files, chosen, label)
    if not plan.verification.passed:
        if not force:
            plan.status = "verification_failed"
            return plan
        plan.forced = True
    try:
        plan.new_text = jsonedit.set_key(files.config_text or "", KEY, chosen)
    except jsonedit.JsonEditError as exc:
        raise InputError(files.config_label, f"cannot edit: {exc}") from None
    return plan


# --------------------------------------------------------------------------- writing


def _atomic_write(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if path.exists():
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_local(plan: UpgradePlan, output: Path | str | None = None) -> Path:
    """Write the upgraded config in place, or into a copy of the folder at ``output``.

    Only ``tokenizer_config.json`` is written; with ``output`` every other file is copied as is.
    Returns the path written.
    """
    if plan.status != "ready" or plan.new_text is None:
        raise ValueError(f"nothing to write (status {plan.status!r})")
    files = plan.files
    if output is None:
        if files.kind != "local" or files.folder is None:
            raise InputError(files.where, "a Hub repo is written with --push-to-hub or --output DIR")
        target = files.folder / CONFIG_NAME
        # refuse if the file changed since it was read
        if _read_text(target) != files.config_text:
            raise InputError(target, "changed on disk since it was read; nothing written, run again")
        _atomic_write(target, plan.new_text)
        return target
    out = Path(output).expanduser()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(out, "output folder exists and is not empty; nothing written")
    if files.kind == "local" and files.folder is not None:
        if out.resolve() == files.folder.resolve():
            raise InputError(out, "--output is the tokenizer folder itself; omit --output to write in place")
        shutil.copytree(files.folder, out, dirs_exist_ok=True)
    else:
        out.mkdir(parents=True, exist_ok=True)
        for filename, path in files.files.items():
            shutil.copyfile(path, out / filename)
    target = out / CONFIG_NAME
    _atomic_write(target, plan.new_text)
    return target


# --------------------------------------------------------------------------- the Hub


def build_commit_message(
    template_label: str,
    verification: Verification | None,
    *,
    forced: bool = False,
    reasons: Sequence[str] = (),
    replaced: bool = False,
) -> tuple[str, str]:
    """``(commit title, commit description)`` for a Hub upgrade (pure: no network).

    The title names the template; the description says which check passed (or that it was forced)
    and that nothing but the one key changed.
    """
    from . import __version__

    title = f"Add response_template ({template_label}) to {CONFIG_NAME}"
    lines = [
        f"This adds a `response_template` key to `{CONFIG_NAME}` using the `{template_label}` template from "
        f"[hf-response-templates](https://pypi.org/project/hf-response-templates/) {__version__}, so that "
        "`tokenizer.parse_response(...)` turns this model's raw output (reasoning, content, tool calls) back "
        "into a chat message.",
        "",
    ]
    if reasons:
        lines += [f"Template chosen: {'; '.join(reasons)}.", ""]
    if verification is not None:
        status = "passed" if verification.passed else "FAILED (upgrade forced with --force)"
        lines.append(
            f"Check: round trip through this repo's own chat template {status}: {verification.summary}. "
            "Each case renders a sample conversation with the chat template, parses the rendered assistant "
            "turn with the response template (the prompt as prefix), and compares it with the original message."
        )
        if verification.caution:
            lines.append(f"Note: {verification.caution}.")
        lines.append("")
        for case in verification.cases:
            extra = f" ({case.detail or '; '.join(case.notes)})" if (case.detail or case.notes) else ""
            lines.append(f"- {case.name}: {case.status}{extra}")
        lines.append("")
    elif forced:
        lines += ["Check: skipped (forced with --force).", ""]
    change = (
        "Only the value of the existing `response_template` key is replaced (forced with --force)"
        if replaced
        else "Only the `response_template` key is added (before the closing brace)"
    )
    lines.append(f"{change}; every other byte of `{CONFIG_NAME}` and every other file are unchanged.")
    return title, "\n".join(lines)


def build_commit_operations(new_config_text: str) -> list[Any]:
    """The ``create_commit`` operations: one ``CommitOperationAdd`` of the new ``tokenizer_config.json``."""
    from huggingface_hub import CommitOperationAdd

    return [CommitOperationAdd(path_in_repo=CONFIG_NAME, path_or_fileobj=new_config_text.encode("utf-8"))]


def build_hub_commit(plan: UpgradePlan, *, create_pr: bool = True, revision: str | None = None) -> dict[str, Any]:
    """Keyword arguments for ``HfApi.create_commit`` for a ready plan (pure: no network).

    ``parent_commit`` is the commit the config was read at (when known), so the pull request is based
    on exactly what was verified.
    """
    if plan.status != "ready" or plan.new_text is None:
        raise ValueError(f"nothing to commit (status {plan.status!r})")
    title, description = build_commit_message(
        plan.template_label,
        plan.verification,
        forced=plan.forced,
        reasons=plan.reasons,
        replaced=bool(plan.differences),  # a different template was there and --force replaces it
    )
    kwargs: dict[str, Any] = {
        "repo_id": plan.files.where,
        "operations": build_commit_operations(plan.new_text),
        "commit_message": title,
        "commit_description": description,
        "create_pr": create_pr,
    }
    if revision is not None:
        kwargs["revision"] = revision
    if plan.files.revision and re.fullmatch(r"[0-9a-f]{40}", plan.files.revision):
        kwargs["parent_commit"] = plan.files.revision
    return kwargs


def push_to_hub(plan: UpgradePlan, *, create_pr: bool = True, revision: str | None = None, api: Any = None) -> Any:
    """Send the commit (the only network write). Returns ``create_commit``'s ``CommitInfo``."""
    if api is None:
        if hub_offline():
            raise InputError(plan.files.where, "cannot push: the Hugging Face Hub is offline (HF_HUB_OFFLINE is set)")
        from huggingface_hub import HfApi

        api = HfApi()
    kwargs = build_hub_commit(plan, create_pr=create_pr, revision=revision)
    try:
        return api.create_commit(**kwargs)
    except Exception as exc:  # noqa: BLE001 - one line for the user
        raise _hub_error(plan.files.where, CONFIG_NAME, exc, action="commit") from None
