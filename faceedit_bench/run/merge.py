"""``faceedit-bench merge <workspace>``: shard ledgers into the workspace ledger, then the run.

For every sharded experiment under ``<workspace>/shards/<run folder>/``:

1. each shard ledger that changed since it was last merged is unioned into the workspace ledger
   (:func:`faceedit_bench.storage.shard_ledgers.merge_ledger`; idempotent);
2. once every shard of a split (``i/n`` for all i) has finished, the experiment is run again
   unsharded, from the config a shard recorded, over the workspace ledger: every edit, embedding
   and judge answer is found there, so no call is made, and the one run folder, report and MLflow
   run are written by the same code as for a run that never was sharded.

Merging again with nothing new changes nothing (``merged.json`` records what was merged and
reported). Shards that have not finished are named, with the command that runs them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.execution.offline import no_provider_calls
from faceedit_bench.run.shards import MANIFEST, SHARDS_DIR, shard_dir_name
from faceedit_bench.storage.atomic import write_text
from faceedit_bench.storage.shard_ledgers import merge_ledger

STATE = "merged.json"


@dataclass
class MergeResult:
    run_folder: str
    merged_shards: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows added or replaced
    missing: list[str] = field(default_factory=list)  # shards not (yet) finished
    report: str | None = None  # the report written, or None
    up_to_date: bool = False


def _stat(path: Path) -> list[int]:
    """What a changed ledger file shows: size and modification time of the file and its WAL."""
    out = []
    for p in (path, path.with_name(path.name + "-wal")):
        st = p.stat() if p.exists() else None
        out += [st.st_size, st.st_mtime_ns] if st else [0, 0]
    return out


def _finished(shard_dir: Path) -> bool:
    try:
        return bool(json.loads((shard_dir / "report.json").read_text(encoding="utf-8"))["run"]["complete"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def merge_run(workspace: Path, group: Path, plugins: Any = None, *, report: bool = True) -> MergeResult:
    """Merge one sharded experiment's shard ledgers and, when all shards finished, write its run."""
    result = MergeResult(group.name)
    state_path = group / STATE
    state = _read_json(state_path, {"merged": {}, "reported": None})
    manifests = {p.parent.name: _read_json(p, None) for p in sorted(group.glob(f"shard-*/{MANIFEST}"))}
    for name in sorted(manifests):
        ledger = group / name / "ledger.sqlite"
        if not ledger.exists() or state["merged"].get(name) == _stat(ledger):
            continue
        for table, n in merge_ledger(workspace / "ledger.sqlite", ledger).items():
            result.rows[table] = result.rows.get(table, 0) + n
        state["merged"][name] = _stat(ledger)  # after the merge closed it (SQLite checkpoints on close)
        result.merged_shards.append(name)
        write_text(state_path, json.dumps(state, indent=2, sort_keys=True) + "\n")
    splits: dict[int, list[dict[str, Any]]] = {}
    for name, manifest in manifests.items():
        if manifest is not None:
            splits.setdefault(int(manifest["shard"][1]), []).append({**manifest, "dir": name})
    complete = None
    for n, members in sorted(splits.items(), reverse=True):
        have = {m["dir"] for m in members if _finished(group / m["dir"])}
        missing = [shard_dir_name(i, n) for i in range(n) if shard_dir_name(i, n) not in have]
        if not missing:
            complete = members[0]
            break
        result.missing += missing
    if complete is None or not report:
        return result
    result.missing = []
    run_dir = workspace / "runs" / group.name
    if state.get("reported") == state["merged"] and (run_dir / "report.json").exists():
        result.up_to_date, result.report = True, str(run_dir / "report.json")
        return result
    _report(workspace, complete, plugins)
    state["reported"] = dict(state["merged"])
    write_text(state_path, json.dumps(state, indent=2, sort_keys=True) + "\n")
    result.report = str(run_dir / "report.json")
    return result


def _report(workspace: Path, manifest: dict[str, Any], plugins: Any) -> None:
    """Run the experiment unsharded from a shard's config: everything is in the ledger."""
    from omegaconf import OmegaConf

    from faceedit_bench.plugin.manager import current_plugins
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.section_settings import experiment_base

    plugins = plugins or current_plugins()
    cfg = OmegaConf.merge(experiment_base(plugins.sections()), manifest["config"])
    cfg.run.shard = None
    cfg.run.workspace = str(workspace)  # the shared filesystem may be mounted elsewhere here
    # Every step is in the ledger: no call, so no API key (the machine that merges may have none).
    with no_provider_calls("faceedit-bench merge", "Run the shards that have not finished (the same command with "
                           "run.shard=i/n; finished work is kept), then merge again."):
        exp = build_experiment(cfg, plugins)
        if exp.info.run_key != manifest["run_key"]:
            raise FaceEditBenchError(
                f"the experiment of {manifest['dir']} has run key {manifest['run_key'][:12]} where it ran, but "
                f"{exp.info.run_key[:12]} here: a component or plugin differs on this machine (see the run's "
                "components in the shard's report.json). Merge where the shards ran, or install the same versions.")
        run_experiment(exp, plugins)


def merge_workspace(workspace: str | Path, plugins: Any = None, *, report: bool = True) -> list[MergeResult]:
    """:func:`merge_run` for every sharded experiment in ``workspace``."""
    workspace = Path(workspace).expanduser().resolve()
    root = workspace / SHARDS_DIR
    groups = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if not groups:
        raise FaceEditBenchError(
            f"{root} holds no shards: run the shards first, e.g. python -m faceedit_bench -m "
            f"run.shard=0/4,1/4,2/4,3/4 run.workspace={workspace} hydra/launcher=submitit_local")
    return [merge_run(workspace, g, plugins, report=report) for g in groups]


def describe(results: list[MergeResult]) -> str:
    lines = []
    for r in results:
        rows = ", ".join(f"{n} {t}" for t, n in sorted(r.rows.items()) if n) or "no new rows"
        merged = f"merged {len(r.merged_shards)} shard ledger(s) ({rows})" if r.merged_shards else "no shard changed"
        lines.append(f"{r.run_folder}: {merged}")
        if r.missing:
            lines.append(f"  not finished: {', '.join(r.missing)}. Run them (the same command with run.shard=i/n; "
                         "finished work is kept), then merge again.")
        elif r.up_to_date:
            lines.append(f"  report up to date: {r.report}")
        elif r.report:
            lines.append(f"  report: {r.report}")
    return os.linesep.join(lines)
