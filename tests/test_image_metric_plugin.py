"""The third-party image-metric package docs/plugin_hooks.md shows (docs/examples/colourfulness_metric, 40 lines),
copied out of the repository, built and installed, used by name from the command line: its values reach the
metrics table, the group and disparity tables, MLflow and the leaderboard, and a rerun computes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from faceedit_bench.testing import run_cli
from tests.mlflow_store import copy_store

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "colourfulness_metric"

pytestmark = pytest.mark.slow(seconds=60)


def test_the_example_package_is_at_most_40_lines():
    lines = sum(len(p.read_text().splitlines()) for p in EXAMPLE.iterdir() if p.is_file())
    assert lines <= 40, f"the documented image-metric package has {lines} lines"


def test_an_installed_image_metric_reaches_every_table_mlflow_and_the_leaderboard(tmp_path, mlflow_store_template,
                                                                                  capsys):
    package = shutil.copytree(EXAMPLE, tmp_path / "src" / "colourfulness")  # outside the repository
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(package)], check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": str(site), "FACEEDIT_BENCH_HOME": str(tmp_path / "ws")}
    uri = copy_store(mlflow_store_template, tmp_path / "ws")

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([sys.executable, "-m", "faceedit_bench.cli", *argv], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return out

    listing = json.loads(cli("plugins", "--json").stdout)
    found = next(p for p in listing["plugins"] if p["name"] == "colourfulness")
    assert found["registers"] == {"image_metrics": ["colourfulness"]}

    run = ["run", "editor=identity", "dataset=sample", "embedder=dlib", "testset=pose", "tracking=mlflow",
           f"tracking.params.tracking_uri={uri}", "image_metrics=[colourfulness]", "run.max_faces=4",
           "run.max_sessions=1", "run.workers=2", "run.progress=false", "analysis.n_resamples=99"]
    cli(*run)
    (run_dir,) = (tmp_path / "ws" / "runs").glob("identity*")
    report = json.loads((run_dir / "report.json").read_text())
    change = report["metrics"]["colour_change"]
    # four identities that all score 0: a conservative interval inside the bounds, never a zero-width one
    assert change["mean"] == 0.0 and change["n"] == 4 and change["n_identities"] == 4
    assert -300.0 <= change["ci_low"] < 0.0 < change["ci_high"] <= 300.0
    assert change["label"] == "Colour change" and change["higher_is_better"] is None
    end = report["metrics"]["colour_end"]
    assert end["n"] == 4 and 0 < end["ci_low"] <= end["mean"] <= end["ci_high"]
    assert report["groups"]["gender"]["female"]["metrics"]["colour_end"]["n"] == 3
    tested = [row for row in report["disparity"] if row["metric"] == "colour_end"]
    assert tested and tested[0]["contrast"] == "gender"
    assert report["counts"]["image_metrics"] == {"colourfulness": {"ok": 16}}
    assert report["run"]["computed"]["image_values"] == 16

    from faceedit_bench_mlflow.runs import mlflow_client

    client = mlflow_client(uri)
    (tracked,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert tracked.data.metrics["colour_end"] == pytest.approx(end["mean"])
    assert "gender_female_colour_end" in tracked.data.metrics

    cli(*run)  # the same run again: every value read back from the ledger
    again = json.loads((run_dir / "report.json").read_text())
    assert again["run"]["computed"]["image_values"] == 0 and again["run"]["computed"]["embeddings"] == 0
    assert again["metrics"]["colour_end"] == end

    # compare and the leaderboard read the run's files and MLflow: in this process, without the package
    capsys.readouterr()
    assert run_cli(["compare", str(run_dir), str(run_dir), "--json"]) == 0
    assert "colour_end" in json.dumps(json.loads(capsys.readouterr().out))

    cli("submit", str(run_dir), "--out", str(tmp_path / "submissions"), "--id", "colour")
    verified = cli("verify", str(tmp_path / "submissions" / "colour"), "--workspace", str(tmp_path / "v"),
                   "--no-record")
    assert "colour: VERIFIED" in verified.stdout  # re-scored from the bundled images: the values reproduce
    submitted = json.loads((tmp_path / "submissions" / "colour" / "submission.json").read_text())
    assert submitted["metrics"]["colour_end"]["tolerance"] == 1e-4  # deterministic: checked as tightly as FSS

    assert run_cli(["leaderboard", "build", "--dir", str(tmp_path / "board"), "--tracking-uri", uri, "--rank-by",
                    "colour_end"]) == 0
    page = (tmp_path / "board" / "README.md").read_text()
    assert "Final colourfulness" in page
