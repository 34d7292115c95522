"""``faceedit-bench results``: the runs of a workspace as one long table that pandas reads."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pandas as pd
import pytest

from faceedit_bench.cli import main
from faceedit_bench.report.results import constant_column
from faceedit_bench.report.tables import RUN_COLUMNS
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.module_runs import composed, plugins_for_tests


def run(plugins, compose, *overrides: str) -> dict:
    return run_experiment(build_experiment(compose(*overrides), plugins), plugins)


def module_runs(tmp: Path, *runs: tuple[str, ...]) -> tuple[Path, list[dict]]:
    """The synthetic dataset's ``runs`` (overrides each) run into ``tmp/ws`` as the ``synthetic`` fixture's tests
    run theirs: for a module-scoped fixture whose tests only read the runs (or copy them)."""
    plugins = plugins_for_tests()
    synthetic = ["dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}", "embedder=pixel", "tracking=none",
                 "run.workers=1"]
    reports = [run_experiment(build_experiment(composed(tmp / "ws", *synthetic, *overrides), plugins), plugins)
               for overrides in runs]
    return tmp / "ws", reports


@pytest.fixture(scope="module")
def two_editors(tmp_path_factory) -> tuple[Path, list[dict]]:
    """identity and noise on pose, 2 sessions each (read by the tests, or copied where one changes them)."""
    common = ("testset=pose", "run.max_sessions=2")
    return module_runs(tmp_path_factory.mktemp("two-editors"), (*common, "editor=identity"),
                       (*common, "editor=noise"))


def test_a_workspace_with_two_editors_gives_one_table_with_identifiers_in_every_row(two_editors, tmp_path, capsys):
    workspace, reports = two_editors
    for out in (tmp_path / "steps.parquet", tmp_path / "steps.csv"):
        assert main(["results", str(workspace), "--out", str(out)]) == 0
        assert "80 steps rows from 2 run(s) (editors: identity, noise)" in capsys.readouterr().err
        df = pd.read_parquet(out) if out.suffix == ".parquet" else pd.read_csv(out, keep_default_na=False)
        assert len(df) == 2 * 4 * 2 * 5  # two runs x four faces x two sessions x k = 0..4
        assert list(df.columns[:len(RUN_COLUMNS)]) == list(RUN_COLUMNS)
        assert not df[["run_key", "editor", "testset", "testset_hash", "dataset", "embedder"]].eq("").any().any()
        assert set(df["editor"]) == {"identity", "noise"}
        assert set(df["run_key"]) == {r["run"]["key"] for r in reports}
        assert df.groupby("run_key").size().tolist() == [40, 40]
        assert not df.duplicated(["run_key", "face_id", "session_id", "k"]).any()
        # The table reproduces each run's headline number.
        ok = df[(df["k"] != 0) & (df["session_excluded"] == "")]
        for report in reports:
            mine = df[df["run_key"] == report["run"]["key"]]
            fss = mine.pivot_table(index=["face_id", "session_id"], columns="k", values="fss")
            drop = (100 / 4 * sum((fss[0] - fss[k]) / fss[0] for k in range(1, 5))).mean()
            assert drop == pytest.approx(report["metrics"]["drop_fss"]["mean"], abs=1e-3)
        assert len(ok) == 2 * 4 * 2 * 4


def test_sessions_table_and_runs_written_before_tables_carried_identifiers(two_editors, tmp_path, capsys):
    workspace = shutil.copytree(two_editors[0], tmp_path / "ws")  # changed here: the other tests read the original
    old = next(p for p in (workspace / "runs").iterdir() if "noise" in p.name)
    with open(old / "steps.csv", newline="") as fh:  # the former layout: no identifiers, no Parquet
        rows = [{k: v for k, v in r.items() if k not in RUN_COLUMNS} for r in csv.DictReader(fh)]
    with open(old / "steps.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (old / "steps.parquet").unlink()
    (workspace / "runs" / "killed-before-it-finished").mkdir()
    out = tmp_path / "all.parquet"
    assert main(["results", str(workspace), "--out", str(out)]) == 0
    assert "skipped" in capsys.readouterr().err  # the unfinished run is named, not silently dropped
    df = pd.read_parquet(out)
    assert len(df) == 80 and set(df.loc[df["run_name"].str.startswith("noise"), "editor"]) == {"noise"}
    assert main(["results", str(old), "--table", "sessions", "--out", str(out)]) == 0
    sessions = pd.read_parquet(out)
    assert len(sessions) == 8 and sessions["drop_fss"].dtype == "float64" and set(sessions["editor"]) == {"noise"}


def test_runs_tracked_in_mlflow(plugins, compose, synthetic, tmp_path, capsys, new_mlflow_store):
    new_mlflow_store(tmp_path / "ws")
    overrides = [o for o in synthetic if o != "tracking=none"]
    report = run(plugins, compose, *overrides, "tracking=mlflow", "testset=pose", "run.max_sessions=1")
    uri = f"sqlite:///{tmp_path / 'ws' / 'mlflow.db'}"
    out = tmp_path / "mlflow.parquet"
    assert main(["results", "--tracking-uri", uri, "--out", str(out)]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 4 * 5 and set(df["run_key"]) == {report["run"]["key"]}


def test_a_path_without_runs_is_refused_with_guidance(tmp_path, capsys):
    assert main(["results", str(tmp_path)]) == 2
    assert "neither a run folder" in capsys.readouterr().err
    assert main(["results", str(tmp_path), "--out", str(tmp_path / "t.xlsx")]) == 2
    assert "give a .parquet or a .csv file" in capsys.readouterr().err


@pytest.mark.parametrize("value", [True, False, "", "noise", "é · ✓"])
@pytest.mark.parametrize("rows", [0, 1, 8, 13])
def test_a_constant_column_equals_arrows_own_conversion(value, rows):
    import pyarrow as pa

    column = constant_column(value, rows)
    column.validate(full=True)
    assert column.equals(pa.array([value] * rows, type=pa.bool_() if isinstance(value, bool) else pa.string()))
