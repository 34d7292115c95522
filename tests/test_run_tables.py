"""The run's tables: columns from the schema (not from the first row written), the run's
identifiers in every row, Parquet beside CSV, and every file with the umask's mode."""

from __future__ import annotations

import csv
import json
import os
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from faceedit_bench.cli import main
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.module_runs import composed, plugins_for_tests

#: Every face's first session is refused at step 1: the first session written is excluded.
REFUSE_FIRST = "{pose-01/1:refused}"


def run(plugins, compose, *overrides: str) -> tuple[dict, Path]:
    cfg = compose(*overrides)
    exp = build_experiment(cfg, plugins)
    return run_experiment(exp, plugins), exp.info.output_dir


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_excluded_first_session_keeps_the_metric_columns_and_compare_finds_shared_sessions(
        plugins, compose, synthetic, capsys):
    common = (*synthetic, "testset=pose", "run.max_sessions=2", "editor=scripted", f"+editor.params.script={REFUSE_FIRST}")
    report, run_a = run(plugins, compose, *common)
    _, run_b = run(plugins, compose, *common, "+editor.params.noise=20")
    sessions = rows(run_a / "sessions.csv")
    assert sessions[0]["excluded"] == "step_refused"  # the first row written has no metric values
    assert {"drop_fss", "sc", "oer", "gender", "skin_tone", "age_group"} <= set(sessions[0])
    included = [r for r in sessions if not r["excluded"]]
    assert len(included) == report["counts"]["sessions"]["included"] == 4
    assert all(float(r["drop_fss"]) == pytest.approx(0.0) for r in included)

    capsys.readouterr()
    assert main(["compare", str(run_a), str(run_b), "--json"]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["paired"]
    assert pair["reason"] is None and pair["shared_sessions"] == 4
    (drop,) = [m for m in pair["metrics"] if m["metric"] == "drop_fss"]
    assert drop["n"] == 4 and drop["mean"] < 0  # the noisy editor loses identity, the other does not


UMASKS = (0o022, 0o002)


@pytest.fixture(scope="module")
def noise_runs(tmp_path_factory) -> dict[int, tuple[dict, Path, Path]]:
    """The noise editor on pose, one session, run under each umask: umask -> (report, run folder, workspace).
    The tests only read them."""
    plugins = plugins_for_tests()
    runs = {}
    for umask in UMASKS:
        tmp = tmp_path_factory.mktemp(f"umask-{umask:o}")
        old = os.umask(umask)
        try:
            exp = build_experiment(composed(tmp / "ws", "dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}",
                                            "embedder=pixel", "tracking=none", "run.workers=1", "testset=pose",
                                            "run.max_sessions=1", "editor=noise"), plugins)
            runs[umask] = (run_experiment(exp, plugins), exp.info.output_dir, tmp / "ws")
        finally:
            os.umask(old)
    return runs


def test_every_row_carries_the_run_identifiers_and_parquet_matches_csv(noise_runs):
    report, out, _ = noise_runs[UMASKS[0]]
    steps, sessions = rows(out / "steps.csv"), rows(out / "sessions.csv")
    assert len(steps) == 4 * 5 and len(sessions) == 4
    for row in steps + sessions:
        assert row["run_key"] == report["run"]["key"] and row["run_name"] == report["run"]["name"]
        assert (row["editor"], row["editor_version"]) == ("noise", "1")
        assert (row["testset"], row["testset_hash"]) == ("pose", report["testset"]["content_hash"])
        assert (row["dataset"], row["embedder"], row["judge"]) == ("synthetic", "pixel", "")
    parquet = pq.read_table(out / "steps.parquet")
    assert parquet.column_names == list(steps[0])
    assert parquet.num_rows == len(steps)
    assert str(parquet.schema.field("k").type) == "int64" and str(parquet.schema.field("fss").type) == "double"
    assert parquet.column("fss").to_pylist() == [float(r["fss"]) for r in steps]
    assert pq.read_table(out / "sessions.parquet").column("drop_fss").type == "double"
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]  # no temporary file left behind
    page = (out / "report.html").read_text()  # the worst sessions show their labels, not the identifiers
    assert "gender: " in page and "run_key: " not in page and "testset_hash: " not in page and "sc: " not in page


@pytest.mark.parametrize("umask", UMASKS)
def test_artifacts_and_store_objects_respect_the_umask(noise_runs, umask):
    _, _, workspace = noise_runs[umask]
    files = [p for p in workspace.rglob("*") if p.is_file()]  # lock files too: other users must open them
    names = {p.name for p in files}
    assert {"report.html", "report.json", "steps.csv", "config.yaml", "ledger.sqlite"} <= names
    assert any(p.parent.parent.name == "store" for p in files) and any(p.suffix == ".png" for p in files)
    wrong = {str(p.relative_to(workspace)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files
             if stat.S_IMODE(p.stat().st_mode) != 0o666 & ~umask}
    assert not wrong
