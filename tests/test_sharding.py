"""One experiment as shards (run.shard=i/n) through Hydra's submitit_local launcher, merged with
`faceedit-bench merge`: the merged run equals the unsharded one, a killed shard redoes only its own
unfinished work, merging twice changes nothing, and a bad shard spec fails before any work."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.keys import shard_of
from faceedit_bench.plugin import manager
from tests.module_runs import plugins_for_tests, run_here

ROOT = Path(__file__).resolve().parent.parent
#: The real entry points (Hydra app, faceedit-bench CLI) with the test plugin added.
WRAPPER = textwrap.dedent("""
    import sys
    from faceedit_bench.collector import collect_less_often
    collect_less_often()  # as in a command's process
    from faceedit_bench.plugin import manager
    from faceedit_bench.run import hydra_app
    from tests import fake_plugin

    def plugins():
        p = manager.load_plugins()
        p.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
        return p

    manager.get_plugins = plugins
    if sys.argv.pop(1) == "cli":
        from faceedit_bench.cli import main
        sys.exit(main(sys.argv[1:]))
    hydra_app.main()
""")
N_FACES, SESSIONS, STEPS = 8, 2, 4
#: Seeded noise at every step (real, differing metrics), gender groups, MLflow tracking.
EXPERIMENT = ["dataset=synthetic", f"+dataset.params.n={N_FACES}", "embedder=pixel", "editor=scripted",
              "+editor.params.noise=30", "testset=pose", f"run.max_sessions={SESSIONS}", "run.workers=1",
              "run.progress=false"]
#: Every part of the report that is a measurement (run timing and call counts differ by design).
MEASURED = ("metrics", "groups", "disparity", "trajectory", "counts", "group_tests", "testset", "components")


def bench(tmp: Path, mode: str, *args: str, workspace: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    script = tmp / "bench.py"
    script.write_text(WRAPPER)
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
           "FACEEDIT_BENCH_HOME": str(workspace),
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, str(script), mode, *args], capture_output=True, text=True, cwd=tmp,
                          env=env, timeout=timeout)


def dump(ledger: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(ledger)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
    finally:
        db.close()


def calls(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow(seconds=31)
def test_four_submitit_shards_merge_into_the_unsharded_run(tmp_path, monkeypatch, capsys, new_mlflow_store):
    faces = [f"synthetic/{i}" for i in range(N_FACES)]
    assert len({shard_of(f, 4) for f in faces}) > 1  # the test splits the faces for real
    common = [*EXPERIMENT, f"+dataset.params.root={tmp_path / 'faces'}"]
    # The unsharded run, for reference. (Both workspaces start with a new tracking store: how one is
    # created is tested in test_first_time_kills.)
    new_mlflow_store(tmp_path / "alone")
    new_mlflow_store(tmp_path / "ws")
    # (In this process: the shards and the merge are the real processes.)
    run_here(tmp_path / "alone", *common, f"+editor.params.calls_file={tmp_path / 'alone.txt'}")
    (alone_dir,) = (tmp_path / "alone" / "runs").iterdir()
    expected = json.loads((alone_dir / "report.json").read_text())

    # Shard 1 is killed (SIGKILL, no cleanup) after 5 edits ...
    ws = tmp_path / "ws"
    # (0.2 s an edit: the five span several of the ledger's commits)
    killed = bench(tmp_path, "hydra", *common, "run.shard=1/4", f"+editor.params.calls_file={tmp_path / 'killed.txt'}",
                   "+editor.params.die_after=5", "+editor.params.seconds_per_edit=0.2", workspace=ws)
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert len(calls(tmp_path / "killed.txt")) == 5
    # ... then all four run as one sweep through submitit's local launcher (one process each).
    sweep = bench(tmp_path, "hydra", "-m", "run.shard=0/4,1/4,2/4,3/4", "hydra/launcher=submitit_local",
                  *common, f"+editor.params.calls_file={tmp_path / 'sweep.txt'}", workspace=ws)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    assert "submitit" in sweep.stdout + sweep.stderr
    # Every step was edited; the killed shard redid only its unfinished work: at most the edits of its last
    # commit window (never committed), never all five it made.
    before, after = calls(tmp_path / "killed.txt"), calls(tmp_path / "sweep.txt")
    edited = Counter(before + after)
    assert set(edited) == set(calls(tmp_path / "alone.txt")) and len(edited) == N_FACES * SESSIONS * STEPS
    redone = {step for step, n in edited.items() if n > 1}
    assert redone <= set(before) and len(redone) < len(before) and max(edited.values()) <= 2
    (group,) = (ws / "shards").iterdir()
    assert group.name == alone_dir.name  # the same experiment: the same run folder name and key
    assert sorted(p.name for p in group.iterdir() if p.is_dir()) == [f"shard-{i}-of-4" for i in range(4)]
    assert not (ws / "runs").exists()  # shards write their own folders only

    merged = bench(tmp_path, "cli", "merge", str(ws), workspace=ws)
    assert merged.returncode == 0, merged.stderr[-3000:]
    assert "merged 4 shard ledger(s)" in merged.stdout
    report = json.loads((ws / "runs" / alone_dir.name / "report.json").read_text())
    assert report["run"]["key"] == expected["run"]["key"]
    assert report["run"]["computed"] == {"embeddings": 0, "edit_calls": 0, "judge_calls": 0}  # all from the ledger
    for section in MEASURED:
        assert report.get(section) == expected.get(section), section
    assert report["metrics"]["drop_fss"]["n"] == N_FACES * SESSIONS and report["metrics"]["drop_fss"]["mean"] > 0

    # Merging again changes nothing: not the ledger, not the run's files.
    ledger_before = dump(ws / "ledger.sqlite")
    files_before = {p: p.stat().st_mtime_ns for p in (ws / "runs").rglob("*") if p.is_file()}
    # (In this process, by the command's own function: the first merge was the real process.)
    from faceedit_bench import cli

    monkeypatch.setattr(manager, "get_plugins", plugins_for_tests)
    monkeypatch.setattr(logging, "raiseExceptions", logging.raiseExceptions)  # main() sets it for its process
    capsys.readouterr()
    assert cli.main(["merge", str(ws)]) == 0
    again = capsys.readouterr().out
    assert "no shard changed" in again and "report up to date" in again
    assert dump(ws / "ledger.sqlite") == ledger_before
    assert {p: p.stat().st_mtime_ns for p in (ws / "runs").rglob("*") if p.is_file()} == files_before

    # The tracking store holds the one run of the experiment, with the unsharded run's metrics, and
    # each shard's own run in a separate experiment.
    from mlflow import MlflowClient

    def runs(uri: str, name: str) -> list:
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name(name)
        return client.search_runs([experiment.experiment_id]) if experiment else []

    (one,) = runs(f"sqlite:///{ws / 'mlflow.db'}", "faceedit/pose")
    (reference,) = runs(f"sqlite:///{tmp_path / 'alone' / 'mlflow.db'}", "faceedit/pose")
    assert one.data.tags["faceedit.run_key"] == expected["run"]["key"]
    # How the run executed (its calls, timings, new spend) differs by design; every measurement is equal.
    execution = ("perf_", "calls_", "cost_new")
    ours, theirs = ({k: v for k, v in r.data.metrics.items() if not k.startswith(execution)} for r in (one, reference))
    assert set(ours) == set(theirs), set(ours) ^ set(theirs)
    assert ours == pytest.approx(theirs) and ours["drop_fss"] == report["metrics"]["drop_fss"]["mean"]
    shard_runs = runs(f"sqlite:///{ws / 'mlflow.db'}", "faceedit/pose/shards")
    assert sorted(r.data.tags["faceedit_bench.shard"] for r in shard_runs) == [f"{i}/4" for i in range(4)]


def test_merge_says_which_shards_have_not_finished(tmp_path, compose, synthetic, plugins):
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.merge import merge_workspace

    overrides = [*synthetic, "testset=pose", "run.max_sessions=1", "run.max_faces=4"]
    run_experiment(build_experiment(compose(*overrides, "run.shard=0/2"), plugins), plugins)
    (result,) = merge_workspace(tmp_path / "ws", plugins)
    assert result.missing == ["shard-1-of-2"] and result.report is None
    assert not (tmp_path / "ws" / "runs").exists()
    run_experiment(build_experiment(compose(*overrides, "run.shard=1/2"), plugins), plugins)
    (result,) = merge_workspace(tmp_path / "ws", plugins)
    assert not result.missing and result.merged_shards == ["shard-1-of-2"] and result.report


@pytest.mark.parametrize("spec", ["4/4", "1/0", "-1/4", "two/4", "3", "1/4/2", ""])
def test_bad_shard_spec_is_a_config_error(compose, synthetic, plugins, spec):
    from faceedit_bench.run.experiment import build_experiment

    with pytest.raises(ConfigError, match=r"run\.shard=.* is not allowed: it must be a shard") as info:
        build_experiment(compose(*synthetic, f"run.shard='{spec}'"), plugins)
    assert "run.shard=0/" in str(info.value)  # says how to write one


def test_bad_shard_spec_fails_before_any_work(tmp_path):
    out = bench(tmp_path, "hydra", "run.shard=5/4", workspace=tmp_path / "ws")
    assert out.returncode == 2
    assert "run.shard=5/4 is not allowed" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "ws").exists()


def test_every_face_is_in_exactly_one_shard_whatever_the_order():
    from faceedit_bench.records import Face
    from faceedit_bench.run.shards import select_faces

    faces = [Face(f"d/{i}", f"id{i}", Path(f"{i}.png"), ()) for i in range(200)]
    parts = [[f.face_id for f in select_faces(faces, f"{i}/7")] for i in range(7)]
    assert sorted(sum(parts, [])) == sorted(f.face_id for f in faces)
    assert all(15 < len(p) < 45 for p in parts)  # a hash split: roughly even
    assert [f.face_id for f in select_faces(reversed(faces), "3/7")] == parts[3][::-1]


def test_one_gpu_per_shard():
    from faceedit_bench.config import RunConf
    from faceedit_bench.run.shards import bind_gpu

    env = {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    assert bind_gpu(RunConf(shard="5/8"), env) == "1" and env["CUDA_VISIBLE_DEVICES"] == "1"
    env = {"CUDA_VISIBLE_DEVICES": "4,5,6,7", "SLURM_LOCALID": "2"}
    assert bind_gpu(RunConf(shard="0/8"), env) == "6"
    env = {"CUDA_VISIBLE_DEVICES": "3"}  # SLURM or the launcher bound it already
    assert bind_gpu(RunConf(shard="1/8"), env) is None and env["CUDA_VISIBLE_DEVICES"] == "3"
    env = {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert bind_gpu(RunConf(), env) is None and bind_gpu(RunConf(shard="1/2", one_gpu_per_shard=False), env) is None
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_merge_rule_keeps_the_same_row_whatever_the_order(tmp_path):
    from faceedit_bench.records import Outcome
    from faceedit_bench.storage.ledger import EditRow, Ledger
    from faceedit_bench.storage.shard_ledgers import merge_ledger

    def shard(name: str, rows: list[tuple[str, Outcome, float]], anchor: str) -> Path:
        ledger = Ledger(tmp_path / name / "ledger.sqlite")
        ledger.record_component("fp", "editor", {"from": name})
        for key, outcome, when in rows:
            ledger.put_edit(key, editor_fp="fp", face_id="f", session_id="s", k=1, instruction="i", input_hash="h",
                            row=EditRow(key, outcome, "out" if outcome is Outcome.OK else None, name, {}, 1.0))
            ledger.flush()  # the writer thread commits the row; the time is set on it once it is in the file
            ledger._db.execute("UPDATE edits SET created_at = ? WHERE edit_key = ?", (when, key))
        ledger.put_anchor("anchor", {"seen": anchor})
        ledger.close()
        return tmp_path / name / "ledger.sqlite"

    # "a": an ok edit retried elsewhere after failing here; "b": two failures, the later one wins.
    one = shard("one", [("a", Outcome.OK, 10.0), ("b", Outcome.API_ERROR, 10.0)], "one")
    two = shard("two", [("a", Outcome.API_ERROR, 20.0), ("b", Outcome.REFUSED, 30.0)], "two")
    kept = []
    for order in ((one, two), (two, one)):
        main = tmp_path / f"main-{order[0].parent.name}.sqlite"
        for path in order:
            merge_ledger(main, path)
        assert all(n == 0 for path in order for n in merge_ledger(main, path).values())  # merging again: nothing
        kept.append(dump(main))
        ledger = Ledger(main)
        assert ledger.get_edit("a").outcome is Outcome.OK and ledger.get_edit("a").reason == "one"
        assert ledger.get_edit("b").outcome is Outcome.REFUSED and ledger.get_edit("b").reason == "two"
        ledger.close()
    assert kept[0]["edits"] == kept[1]["edits"]
    assert sorted(r[1] for r in kept[0]["anchors"]) == ['{"seen": "one"}', '{"seen": "two"}']  # the history, once
    assert len(kept[0]["components"]) == 1


def test_a_shard_reads_through_to_the_workspace_ledger(tmp_path):
    from faceedit_bench.records import Outcome
    from faceedit_bench.storage.ledger import EditRow, Ledger
    from faceedit_bench.storage.shard_ledgers import ShardLedger

    main = Ledger(tmp_path / "ledger.sqlite")
    main.put_edit("done", editor_fp="fp", face_id="f", session_id="s", k=1, instruction="i", input_hash="h",
                  row=EditRow("done", Outcome.OK, "out", "", {}, 1.0))
    main.close()
    shard = ShardLedger(tmp_path / "shard" / "ledger.sqlite", base=tmp_path / "ledger.sqlite")
    assert shard.get_edit("done").output_hash == "out" and shard.get_edit("other") is None
    shard.close()
    assert dump(tmp_path / "shard" / "ledger.sqlite")["edits"] == []  # nothing copied: the shard writes its own


def test_the_cluster_preset_is_64_slurm_shards_within_the_account_limits(plugins):
    from hydra import compose, initialize_config_dir

    from faceedit_bench.run.hydra_app import conf_dir, register_configs
    from faceedit_bench.setting_checks import parse_shard

    register_configs(plugins)
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=paper_celeba_cluster"], return_hydra_config=True)
    assert cfg.hydra.launcher._target_.endswith("SlurmLauncher") and cfg.hydra.launcher.gpus_per_node == 1
    shards = [parse_shard(s) for s in cfg.hydra.sweeper.params["run.shard"].split(",")]
    assert sorted(shards) == [(i, 64) for i in range(64)]
    assert (cfg.dataset.name, cfg.embedder.name, cfg.judge.name) == ("celeba", "insightface", "gemini")
    assert 64 * cfg.judge.params.limits.requests_per_minute <= 800  # the judge's default account limit
