"""First-time initialisations that :mod:`tests.kill_instants` kills and reruns.

Each function takes the harness's folder (and its own arguments), does the imports and the setup
once, and returns ``fresh(i)``: attempt ``i``'s first work and its rerun, on a place of their own.
A rerun returns what the test checks.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.kill_instants import Work, spread

Fresh = Callable[[int], tuple[Work, Work]]

#: A small experiment through the test plugin: 2 faces x 2 sessions x 4 steps.
EXPERIMENT = ["dataset=synthetic", "+dataset.params.n=2", "embedder=pixel", "run.workers=1", "run.progress=false",
              "testset=hair", "run.max_sessions=2", "editor=scripted", "+editor.params.noise=30",
              "analysis.n_resamples=99"]


def _experiment(folder: Path, *overrides: str) -> Callable[..., dict[str, Any]]:
    """A function running the experiment in a workspace (the config is composed now, in the harness)."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir, register_configs
    from tests import fake_plugin

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake")
    register_configs(plugins)

    def configure(workspace: Path, *more: str) -> Any:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            return compose(config_name="config", overrides=[*EXPERIMENT, f"+dataset.params.root={folder / 'faces'}",
                                                            *overrides, *more, f"run.workspace={workspace}"])

    def run(workspace: Path, *more: str) -> dict[str, Any]:
        report = run_experiment(build_experiment(configure(workspace, *more), plugins), plugins)
        return {"metrics": report["metrics"], "steps": report["counts"]["steps"], "run_key": report["run"]["key"]}

    run(folder / "warm-up")  # every module a run imports on the way, imported once here, not in every attempt
    return run


def first_run(folder: Path, in_store: str = "0") -> Fresh:
    """A new workspace's first run, tracked to MLflow in the workspace (its ledger, image store, run
    folder and MLflow store are all created by it). It reports which of its writes built the MLflow
    store, and asks to be killed also at ``in_store`` instants spread over them (however few or many
    writes the store takes); the rerun reports the MLflow runs of its run key."""
    from faceedit_bench_mlflow import store, tracker
    from mlflow import MlflowClient

    from tests.kill_instants import writes_so_far

    run = _experiment(folder, "tracking=mlflow")
    prepare_store, store_writes = tracker.prepare_store, []

    def noted(uri: str) -> object:
        first = writes_so_far() + 1
        state = prepare_store(uri)
        store_writes.append([first, writes_so_far()])
        return state

    tracker.prepare_store = noted

    def first(workspace: Path) -> dict[str, Any]:
        store.TEMPLATES = workspace.with_name(f"{workspace.name}-templates")
        result = run(workspace)
        inside = [start - 1 + at for start, end in store_writes[:1] if int(in_store)
                  for at in spread(end - start + 1, int(in_store))]
        return {**result, "store_writes": store_writes, "also_kill_at": inside}

    def rerun(workspace: Path) -> dict[str, Any]:
        store.TEMPLATES = workspace.with_name(f"{workspace.name}-templates")
        result = run(workspace)
        client = MlflowClient(tracking_uri=f"sqlite:///{workspace / 'mlflow.db'}")
        ids = [e.experiment_id for e in client.search_experiments()]
        runs = client.search_runs(ids, filter_string=f"tags.`faceedit.run_key` = '{result['run_key']}'")
        return {**result, "mlflow_runs": [r.info.status for r in runs]}

    return lambda i: ((lambda: first(folder / f"ws{i}")), (lambda: rerun(folder / f"ws{i}")))


def first_shard(folder: Path) -> Fresh:
    """A new workspace's first shard (its shard ledger and manifest beside the workspace's ledger); the
    rerun runs it again and merges the shard ledgers, and reports what the merge found."""
    from faceedit_bench.run.merge import merge_workspace

    run = _experiment(folder, "tracking=none")

    def rerun(workspace: Path) -> dict[str, Any]:
        result = run(workspace, "run.shard=0/2")
        (merged,) = merge_workspace(workspace, report=False)
        return {**result, "merged_shards": merged.merged_shards, "rows": merged.rows, "missing": merged.missing}

    return lambda i: ((lambda: run(folder / f"ws{i}", "run.shard=0/2")), (lambda: rerun(folder / f"ws{i}")))


def new_ledgers(folder: Path) -> Fresh:
    """A workspace ledger and a shard ledger reading through to it, created; the rerun opens both,
    writes and reads an edit, and reports their tables and columns."""
    from faceedit_bench.records import Outcome
    from faceedit_bench.storage.ledger import EditRow
    from faceedit_bench.storage.shard_ledgers import ShardLedger

    def create(place: Path) -> dict[str, Any]:
        ShardLedger(place / "shards" / "ledger.sqlite", base=place / "ledger.sqlite").close()
        from faceedit_bench.storage.ledger import Ledger

        Ledger(place / "ledger.sqlite").close()
        return {}

    def rerun(place: Path) -> dict[str, Any]:
        import sqlite3

        create(place)
        shard = ShardLedger(place / "shards" / "ledger.sqlite", base=place / "ledger.sqlite")
        shard.put_edit("e1", editor_fp="f", face_id="a", session_id="s", k=1, instruction="i", input_hash="h",
                       row=EditRow("e1", Outcome.OK, "o", "", {}, 0.1, 0.1))
        shard.close()
        read = ShardLedger(place / "shards" / "ledger.sqlite", base=place / "ledger.sqlite")
        assert read.get_edit("e1").output_hash == "o"
        read.close()
        schema = {}
        for name, db in (("workspace", place / "ledger.sqlite"), ("shard", place / "shards" / "ledger.sqlite")):
            con = sqlite3.connect(db)
            schema[name] = {t: [c[1] for c in con.execute(f'PRAGMA table_info("{t}")')] for (t,) in
                                      con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")}
            con.close()
        return {"schema": schema}

    return lambda i: ((lambda: create(folder / f"place{i}")), (lambda: rerun(folder / f"place{i}")))


def _portraits(*args: str) -> int:
    from faceedit_bench.cli import main

    return main(["portraits", *args])


def _warm_detector() -> None:
    """The CLI's detector, its models loaded here once: every attempt would load them again (seconds)."""
    import numpy as np
    from faceedit_bench_audit.portraits import select as portraits_cli

    load = portraits_cli.load_detector
    detector = load("dlib", {})
    detector.detect(np.zeros((64, 64, 3), dtype=np.uint8))

    def warm(name: str, params: dict[str, Any]) -> Any:
        return detector if (name, params) == ("dlib", {}) else load(name, params)

    portraits_cli.load_detector = warm


def _selection(out: Path) -> dict[str, Any]:
    """What a selection folder holds, looked at as a user would, through ``portraits check`` first (which
    puts back a selection whose replacement was cut short): its exit code, hash and approver."""
    from faceedit_bench_audit.portraits import grid

    code = _portraits("check", str(out))
    if not (out / grid.MANIFEST).is_file():
        return {"exists": out.exists(), "check": code,
                "files": sorted(p.name for p in out.iterdir()) if out.is_dir() else []}
    manifest = grid.read_manifest(out, verify=False)
    return {"exists": True, "check": code, "hash": manifest["content_hash"],
            "approved_by": (manifest.get("approval") or {}).get("by"),
            "portraits": {p["file"]: p["sha256"] for c in manifest["cells"] for p in c["portraits"]}}


def portrait_selection(folder: Path, root: str) -> Fresh:
    """``portraits select`` into a new folder; the rerun is the same command (refused with exit 2 when the
    folder is complete already: a selection is never overwritten without --force)."""
    _warm_detector()
    # One selection beside the harness's folder (its writes are not counted): what the command loads on first use
    # is loaded here once, not in every forked attempt, as the replacement scenario's approved selection does.
    assert _portraits("select", "--root", root, "--out", str(folder.parent / f"{folder.name}-warm")) == 0

    def select(out: Path) -> dict[str, Any]:
        return {"code": _portraits("select", "--root", root, "--out", str(out))}

    def first(out: Path) -> dict[str, Any]:
        return {**select(out), "portraits": _selection(out).get("portraits")}

    def rerun(out: Path) -> dict[str, Any]:
        before = _selection(out)
        return {"before": before, **select(out), "after": _selection(out)}

    return lambda i: ((lambda: first(folder / f"grid{i}")), (lambda: rerun(folder / f"grid{i}")))


def portrait_replacement(folder: Path, root: str) -> Fresh:
    """``portraits select --force`` over an approved selection; what the folder holds after the kill,
    then the same command again."""
    _warm_detector()
    approved = folder / "approved"
    if not approved.exists():
        assert _portraits("select", "--root", root, "--out", str(approved)) == 0
        assert _portraits("approve", str(approved), "--by", "A. Reviewer") == 0

    from faceedit_bench.storage import first_time
    from tests.kill_instants import writes_so_far

    replace, swaps = first_time.replace_folder, []

    def noted(new: Path, target: Path) -> None:
        swaps.append(writes_so_far())  # then: the old folder aside (+1), the new one in (+2), the old removed
        replace(new, target)

    first_time.replace_folder = noted

    def fresh(i: int) -> tuple[Work, Work]:
        out = folder / f"grid{i}"
        shutil.copytree(approved, out)
        command = ("select", "--root", root, "--out", str(out), "--force", "-c", "max_abs_yaw_deg=25")
        # Killed also just before the new folder moves in (the old one aside) and just before the old is removed.
        return ((lambda: {"code": _portraits(*command), "also_kill_at": [swaps[-1] + 2, swaps[-1] + 3]}),
                (lambda: {"before": _selection(out), "code": _portraits(*command), "after": _selection(out)}))

    return fresh


def store_made_in_place(folder: Path) -> Fresh:
    """An MLflow store made the way MLflow makes one (migrated in place, as faceedit_bench did before it built
    stores beside their place), killed; the rerun is the tracker's first run on what the kill left."""
    from faceedit_bench_mlflow.tracker import MlflowTracker
    from mlflow import MlflowClient

    from faceedit_bench.plugin.payloads import RunInfo

    def in_place(workspace: Path) -> dict[str, Any]:
        workspace.mkdir(parents=True, exist_ok=True)
        MlflowClient(tracking_uri=f"sqlite:///{workspace / 'mlflow.db'}").search_experiments()
        return {}

    def tracked(workspace: Path) -> dict[str, Any]:
        run = RunInfo(run_key="k1", run_name="scripted@hair", experiment_name="faceedit/hair", components={},
                      config={}, params={"editor.name": "scripted"}, tags={}, workspace=workspace,
                      output_dir=workspace / "runs" / "r")
        tracker = MlflowTracker()
        tracker.faceedit_run_start(run=run)
        tracker.opened(run)  # opens the store and starts the run in it (on the tracker's thread)
        client = MlflowClient(tracking_uri=f"sqlite:///{workspace / 'mlflow.db'}")
        runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
        return {"mlflow_runs": [r.info.status for r in runs]}

    in_place(folder / "warm-up")  # MLflow's migration scripts, loaded once here, not in every attempt
    return lambda i: ((lambda: in_place(folder / f"ws{i}")), (lambda: tracked(folder / f"ws{i}")))
