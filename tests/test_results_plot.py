"""``faceedit-bench results ... --plot OUT.html`` (issue 25, item 7): any metric of many runs drawn by editor
and test set from the long sessions table, on an honest axis, each dot the mean over the run's sessions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.cli import main
from faceedit_bench.report.results import gather
from faceedit_bench.report.templates import stylesheet
from tests.test_results import module_runs


@pytest.fixture(scope="module")
def four_runs(tmp_path_factory) -> tuple[Path, list[dict]]:
    """identity and noise, each on pose and hair (run once: the tests only read them)."""
    return module_runs(tmp_path_factory.mktemp("four-runs"),
                       *[(f"testset={t}", "run.max_sessions=2", f"editor={e}")
                         for e in ("identity", "noise") for t in ("pose", "hair")])


def test_a_plot_of_each_metric_by_editor_and_test_set(four_runs, tmp_path, capsys):
    workspace, reports = four_runs
    page = tmp_path / "plots.html"
    assert main(["results", str(workspace), "--out", str(tmp_path / "steps.csv"), "--plot", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html and html.count('<svg xmlns="http://www.w3.org/2000/svg" class="forest"') == 1
    assert stylesheet() in html  # the look of every page the project writes
    rows = re.findall(r'<g class="row" data-label="([^"]+)">', html)
    assert rows == ["[reference] identity", "noise v1"]  # one row per editor, the baseline marked
    assert re.findall(r'<text class="series"[^>]*>([^<]+)</text>', html) == ["hair", "pose"]  # a dot per test set
    low = float(re.search(r'data-axis-low="([^"]+)"', html).group(1))
    assert low <= 0  # Drop_FSS has no declared range: an axis through 0
    # each dot is the mean over the run's included sessions, as the run's own report says
    sessions = gather([workspace], which="sessions").table.to_pandas()
    for report in reports:
        mine = sessions[sessions["run_key"] == report["run"]["key"]]
        assert summarize(mine["drop_fss"].tolist())["mean"] == pytest.approx(report["metrics"]["drop_fss"]["mean"])


def test_a_metric_the_table_lacks_is_refused_with_the_ones_it_has(four_runs, tmp_path, capsys):
    workspace, _ = four_runs
    out = ["--table", "sessions", "--out", str(tmp_path / "s.csv"), "--plot", str(tmp_path / "p.html")]
    assert main(["results", str(workspace), *out, "--metric", "sce"]) == 2
    assert "no metric 'sce' in the sessions table; its metrics: drop_fss, oer, sc" in capsys.readouterr().err
    assert main(["results", str(workspace), *out, "--metric", "sc"]) == 2  # skipped without a judge: no values
    assert "no included session has a value of sc" in capsys.readouterr().err
    assert main(["results", str(workspace), "--plot", str(tmp_path / "p.png")]) == 2  # an .html page


def test_a_plot_of_mlflow_runs_only_is_refused_before_anything_is_read_or_written(tmp_path, capsys):
    store = tmp_path / "mlflow.db"
    out = tmp_path / "steps.csv"
    code = main(["results", "--tracking-uri", f"sqlite:///{store}", "--out", str(out),
                 "--plot", str(tmp_path / "plots.html")])
    assert code == 2 and "MLflow runs do not keep" in capsys.readouterr().err
    assert not out.exists() and not store.exists()  # refused before the table was gathered or written
