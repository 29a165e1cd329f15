"""Add verified response templates to many Hub tokenizer repos (one pull request per repo).

Usage (``hf-response-templates upgrade-hub`` runs this module's :func:`main`; so does the checkout's
``scripts/upgrade_hub_tokenizers.py``)::

    hf-response-templates upgrade-hub repos.txt            # one repo id per line ('#' comments)
    hf-response-templates upgrade-hub --author Qwen --dry-run
    hf-response-templates upgrade-hub repos.txt --template qwen3 --state qwen.state.jsonl

For each repo this does exactly what ``hf-response-templates upgrade REPO --push-to-hub`` does:
download ``tokenizer_config.json`` and the chat template files, pick the template (``--template``,
default ``auto`` = detection), verify it against the repo's own chat template, and open a pull request
that adds only the ``response_template`` key (``--no-create-pr`` commits directly; ``--dry-run``
commits nothing). A summary table ends the run: upgraded / already had one / has a different one /
no template fits / verification failed / error.

Resumable: every finished repo is appended to the state file (JSON Lines, default
``upgrade_hub_tokenizers.state.jsonl``) as soon as it is done; a new run skips repos already recorded
with any status but ``error`` (errors are retried; ``--redo`` ignores the state file). One repo's
failure never stops the others. Exit code 0, or 1 if any repo ended in ``error``, or 2 for bad input.

Testing without the network: :func:`run` takes ``download`` (an ``hf_hub_download`` stand-in),
``api`` (an object with ``create_commit``) and ``list_repos``; ``tests/test_cli_bulk.py`` drives it
with local folders. Nothing here imports Transformers until a repo is verified.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .upgrade import (
    InputError,
    _read_text,
    build_hub_commit,
    fetch_hub_files,
    hub_offline,
    plan_upgrade,
    push_to_hub,
)

UPGRADED, ALREADY, DIFFERENT, NO_TEMPLATE, VERIFICATION_FAILED, ERROR = (
    "upgraded", "already had one", "has a different one", "no template fits", "verification failed", "error",
)
STATUSES = (UPGRADED, ALREADY, DIFFERENT, NO_TEMPLATE, VERIFICATION_FAILED, ERROR)
DEFAULT_STATE = "upgrade_hub_tokenizers.state.jsonl"

__all__ = ["DEFAULT_STATE", "STATUSES", "Outcome", "add_arguments", "build_parser", "execute", "main", "read_repos_file", "read_state", "run",
           "summary_table", "upgrade_one"]


@dataclass
class Outcome:
    repo: str
    status: str
    template: str = ""
    detail: str = ""
    url: str = ""


def upgrade_one(
    repo_id: str,
    *,
    template: str = "auto",
    force: bool = False,
    dry_run: bool = False,
    create_pr: bool = True,
    download: Callable[..., str] | None = None,
    api: Any = None,
) -> Outcome:
    """Upgrade one repo; never raises (every failure becomes an ``error`` outcome)."""
    try:
        files = fetch_hub_files(repo_id, download=download)
        plan = plan_upgrade(files, template, force=force)
        if plan.status == "no_template":
            return Outcome(repo_id, NO_TEMPLATE, detail="; ".join(plan.reasons))
        if plan.status == "already":
            return Outcome(repo_id, ALREADY, plan.template_label, "the same template is already there")
        if plan.status == "conflict":
            return Outcome(repo_id, DIFFERENT, plan.template_label,
                           "a different template is there (not overwritten; --force replaces it): "
                           + "; ".join(plan.differences))
        if plan.status == "verification_failed":
            assert plan.verification is not None
            failed = "; ".join(f"{c.name}: {c.detail}" for c in plan.verification.failures())
            return Outcome(repo_id, VERIFICATION_FAILED, plan.template_label,
                           f"{plan.verification.summary}: {failed}"[:500])
        summary = plan.verification.summary if plan.verification else "not verified"
        if dry_run:
            title = build_hub_commit(plan, create_pr=create_pr)["commit_message"]
            return Outcome(repo_id, UPGRADED, plan.template_label, f"dry run (would commit: {title}); {summary}")
        info = push_to_hub(plan, create_pr=create_pr, api=api)
        url = getattr(info, "pr_url", None) or getattr(info, "commit_url", None) or ""
        return Outcome(repo_id, UPGRADED, plan.template_label, summary, str(url))
    except InputError as exc:
        return Outcome(repo_id, ERROR, detail=exc.cause)
    except Exception as exc:  # noqa: BLE001 - one repo must never stop the rest
        return Outcome(repo_id, ERROR, detail=f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500])


# --------------------------------------------------------------------------- state


def read_state(path: Path) -> dict[str, Outcome]:
    """The last recorded outcome per repo (unreadable lines are ignored)."""
    done: dict[str, Outcome] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            done[record["repo"]] = Outcome(**{k: record.get(k, "") for k in ("repo", "status", "template", "detail", "url")})
        except (ValueError, KeyError, TypeError):
            continue
    return done


def append_state(path: Path, outcome: Outcome) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({**asdict(outcome), "time": time.strftime("%Y-%m-%dT%H:%M:%S")}, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


# --------------------------------------------------------------------------- the run


def read_repos_file(path: str) -> list[str]:
    """The repo ids of a file: one per line, ``#`` starts a comment, duplicates dropped."""
    p = Path(path)
    if not p.is_file():
        raise InputError(path, "no such file" if not p.exists() else "not a file")
    repos = []
    for line in _read_text(p, path).splitlines():
        line = line.split("#", 1)[0].strip()
        if line and line not in repos:
            repos.append(line)
    return repos


def run(
    repos: Sequence[str],
    *,
    state_path: Path | str | None = DEFAULT_STATE,
    template: str = "auto",
    force: bool = False,
    dry_run: bool = False,
    create_pr: bool = True,
    redo: bool = False,
    download: Callable[..., str] | None = None,
    api: Any = None,
    progress: bool = True,
) -> list[Outcome]:
    """Upgrade ``repos`` one by one; returns every outcome (skipped repos: their recorded outcome)."""
    state = Path(state_path) if state_path else None
    done = read_state(state) if state is not None and not redo else {}
    outcomes: list[Outcome] = []
    todo = []
    for repo in repos:
        previous = done.get(repo)
        if previous is not None and previous.status != ERROR:
            outcomes.append(previous)
        else:
            todo.append(repo)
    counts = Counter(o.status for o in outcomes)
    bar = _progress(todo, progress)
    for repo in bar:
        if hasattr(bar, "set_description"):
            bar.set_description(repo[:40])
        outcome = upgrade_one(repo, template=template, force=force, dry_run=dry_run, create_pr=create_pr,
                              download=download, api=api)
        outcomes.append(outcome)
        if state is not None and not dry_run:
            append_state(state, outcome)
        counts[outcome.status] += 1
        if hasattr(bar, "set_postfix"):
            bar.set_postfix({k.split()[0]: v for k, v in counts.items()}, refresh=False)
    order = {r: i for i, r in enumerate(repos)}
    outcomes.sort(key=lambda o: order.get(o.repo, len(order)))
    return outcomes


def _progress(items: list[str], enabled: bool) -> Iterable[str]:
    if not enabled:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm comes with huggingface_hub; degrade gracefully anyway
        return items
    return tqdm(items, unit="repo", dynamic_ncols=True)


def summary_table(outcomes: Sequence[Outcome]) -> str:
    """The end-of-run table: one line per status with its count, then one line per repo."""
    counts = Counter(o.status for o in outcomes)
    lines = ["STATUS               COUNT"]
    lines += [f"{status:<20} {counts.get(status, 0):>5}" for status in STATUSES]
    lines.append(f"{'total':<20} {len(outcomes):>5}")
    if outcomes:
        width = max(len(o.repo) for o in outcomes)
        lines += ["", f"{'REPO':<{width}}  {'STATUS':<19}  {'TEMPLATE':<18}  DETAIL"]
        for o in outcomes:
            detail = o.url or o.detail
            if len(detail) > 160:
                detail = detail[:157] + "..."
            lines.append(f"{o.repo:<{width}}  {o.status:<19}  {o.template:<18}  {detail}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The bulk upgrade's options (shared by ``upgrade-hub`` and the checkout's script)."""
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("repos_file", nargs="?", metavar="REPOS_FILE",
                     help="a file with one Hub repo id per line ('#' starts a comment)")
    src.add_argument("--author", metavar="ORG", help="every model repo of this user or organisation")
    parser.add_argument("--template", default="auto", metavar="NAME|FILE|auto",
                        help="the response template to add: a shipped name, a .json file, or auto (detect; default)")
    parser.add_argument("--state", default=DEFAULT_STATE, metavar="FILE",
                        help=f"state file recording finished repos, for resuming (default {DEFAULT_STATE})")
    parser.add_argument("--redo", action="store_true", help="ignore the state file: process every repo again")
    parser.add_argument("--dry-run", action="store_true", help="verify and report; commit nothing, record nothing")
    parser.add_argument("--force", action="store_true",
                        help="commit even if verification fails or a different template is there")
    parser.add_argument("--create-pr", action=argparse.BooleanOptionalAction, default=True,
                        help="open a pull request per repo (default) or commit directly (--no-create-pr)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0]))


def main(
    argv: Sequence[str] | None = None,
    *,
    download: Callable[..., str] | None = None,
    api: Any = None,
    list_repos: Callable[[str], Iterable[str]] | None = None,
) -> int:
    """Run the bulk upgrade; returns the exit code. ``download``, ``api``, ``list_repos`` replace the Hub (tests)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    return execute(args, download=download, api=api, list_repos=list_repos)


def execute(
    args: argparse.Namespace,
    *,
    download: Callable[..., str] | None = None,
    api: Any = None,
    list_repos: Callable[[str], Iterable[str]] | None = None,
) -> int:
    """Run the bulk upgrade for parsed arguments (see :func:`add_arguments`); returns the exit code."""
    try:
        networked = download is None or api is None or (args.author and list_repos is None)
        if networked and hub_offline():
            raise InputError("Hugging Face Hub", "offline (HF_HUB_OFFLINE is set); this script reads and writes Hub repos")
        if args.author:
            if list_repos is None:
                from huggingface_hub import HfApi

                def list_repos(author: str) -> Iterable[str]:
                    return (m.id for m in HfApi().list_models(author=author))

            try:
                repos = list(list_repos(args.author))
            except Exception as exc:  # noqa: BLE001
                raise InputError(args.author, f"cannot list the repos: {type(exc).__name__}: {exc}") from None
        else:
            repos = read_repos_file(args.repos_file)
        if args.template != "auto":  # validate once, up front
            from .upgrade import load_template_arg

            load_template_arg(args.template)
    except InputError as exc:
        print(f"hf-response-templates upgrade-hub: error: {exc}", file=sys.stderr)
        return 2
    outcomes = run(
        repos, state_path=args.state, template=args.template, force=args.force, dry_run=args.dry_run,
        create_pr=args.create_pr, redo=args.redo, download=download, api=api, progress=not args.no_progress,
    )
    print(summary_table(outcomes))
    return 1 if any(o.status == ERROR for o in outcomes) else 0
