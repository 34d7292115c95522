"""Hydra's folders through the real CLI: the app's name in --help, hydra.run.dir / hydra.sweep.dir pointing to
the runs, the console summary in the job log, and one table of all jobs after a multirun (basic launcher)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_hydra_cli import FAST, bench
from tests.test_settings_errors import refused


def test_help_names_the_app(tmp_path):
    out = bench(tmp_path, "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("faceedit_bench: ")
    assert "hydra_app" not in out.stdout
    assert "faceedit-bench run -m testset=hair,pose" in out.stdout and "python -m faceedit_bench" in out.stdout


def test_run_dir_points_to_the_run_and_its_log_has_the_summary(tmp_path):
    job_dir = tmp_path / "my_job"
    out = bench(tmp_path, "testset=pose", f"hydra.run.dir={job_dir}", *FAST)
    assert out.returncode == 0, out.stderr
    pointer = json.loads((job_dir / "faceedit_run.json").read_text())
    assert pointer["status"] == "complete"
    assert pointer["title"] == "identity@pose/sample/dlib max_faces=1 max_sessions=1"
    report = json.loads(Path(pointer["report"]).read_text())
    assert Path(pointer["run_dir"]).parent == tmp_path / "ws" / "runs"
    assert pointer["run_key"] == report["run"]["key"]
    assert pointer["metrics"]["drop_fss"]["mean"] == report["metrics"]["drop_fss"]["mean"]
    log = (job_dir / "faceedit_bench.log").read_text()  # named after the app, not hydra_app.log
    assert "Run identity@pose/sample/dlib" in log and pointer["run_dir"] in log


def test_multirun_prints_one_table_of_all_jobs_and_goes_on_past_a_failed_one(tmp_path):
    sweep = tmp_path / "sweep"
    # limit=0 is a valid setting, but the job finds that it selects no face only when it reads the dataset.
    out = bench(tmp_path, "-m", "dataset.params.limit=1,0", "testset=pose", f"hydra.sweep.dir={sweep}", *FAST)
    assert out.returncode == 2, out.stderr  # the exit code says a job failed
    assert "1 of 2 jobs failed" in out.stderr
    ok, failed = (json.loads((sweep / str(n) / "faceedit_run.json").read_text()) for n in (0, 1))
    assert ok["status"] == "complete" and (Path(ok["run_dir"]) / "report.json").is_file()
    assert failed["status"] == "failed" and "selects 0 faces" in failed["error"]
    assert "Traceback" not in out.stderr  # a job's traceback is in its own log, not on the console
    assert failed["error"].splitlines()[0] in (sweep / "1" / "faceedit_bench.log").read_text()
    table = out.stdout[out.stdout.index("2 jobs of the sweep"):]
    first_block = table.split("\n\n")[0]  # more metric columns than fit wrap into further blocks below it
    rows = [line.split() for line in first_block.splitlines() if line.split()[:1] in (["0"], ["1"])]
    assert [r[:3] for r in rows] == [["0", "dataset.params.limit=1", "complete"], ["1", "dataset.params.limit=0", "failed"]]
    assert f"#0 {ok['run_dir']}" in table and "#1 error: " in table  # paths whole, on lines of their own
    assert "all with: testset=pose" in table
    assert (sweep / "summary.txt").read_text().strip() == table.strip()


def test_a_sweep_with_a_job_whose_settings_are_wrong_is_refused_before_any_job_starts(tmp_path, monkeypatch, capsys):
    sweep = tmp_path / "sweep"
    # The second job's editor needs a root: known from its config alone, before the first job runs.
    out = refused(monkeypatch, capsys, tmp_path, "-m", "editor=identity,replay", "testset=pose",
                  f"hydra.sweep.dir={sweep}", *FAST)
    assert out.returncode == 2, out.stderr
    assert "Error: required setting not given: editor.params.root" in out.stderr
    assert "Traceback" not in out.stderr and not sweep.exists() and not (tmp_path / "ws").exists()
    # A typo in any value of a swept key, also with + and in a later job.
    out = refused(monkeypatch, capsys, tmp_path, "-m", "testset=pose,hair", "+run.max_face=1,2",
                  f"hydra.sweep.dir={sweep}", *FAST)
    assert out.returncode == 2 and "run.max_face is unknown (did you mean run.max_faces" in out.stderr
    out = refused(monkeypatch, capsys, tmp_path, "-m", "run.max_faces=1,-3", "testset=pose",
                  f"hydra.sweep.dir={sweep}", *[a for a in FAST if not a.startswith("run.max_faces")])
    assert out.returncode == 2 and "run.max_faces=-3 is not allowed" in out.stderr, out.stderr
    assert not sweep.exists() and not (tmp_path / "ws").exists()
