"""A user's mistake in settings, workspace or component parameters ends the command before any
work, with one message that names the key and what is allowed: exit code 2, no traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from faceedit_bench.config import AnalysisConf, ExperimentConfig, RunConf
from faceedit_bench.errors import ConfigError, StorageError
from faceedit_bench.storage.workspace import storage_error
from tests.cli_in_process import bench_in_process

FAST = ["run.max_faces=1", "run.max_sessions=1", "run.workers=1", "run.progress=false"]


def bench(tmp_path: Path, *args: str, workspace: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FACEEDIT_BENCH_HOME": str(workspace or tmp_path / "ws")}
    return subprocess.run([sys.executable, "-m", "faceedit_bench", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=600)


def refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m faceedit_bench *args`` run by its own entry function in this process, for a command its
    checks must refuse before Hydra starts: its exit code and what it printed. The checks and the message are
    the same code as in a new interpreter, which costs 1.3 s of CPU per command (the process boundary itself
    is tested by the commands these tests still start, e.g. the workspace's). A command the checks let
    through to Hydra fails the test."""
    import logging

    import hydra

    import faceedit_bench
    from faceedit_bench.run import hydra_app

    def started(*_args: object, **_kwargs: object) -> None:
        raise AssertionError(f"the checks let {' '.join(args)} through to Hydra")

    monkeypatch.chdir(tmp_path)
    for key, value in {"FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), **(env or {})}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "argv", [str(Path(faceedit_bench.__file__).parent / "__main__.py"), *args])
    monkeypatch.setattr(logging, "raiseExceptions", logging.raiseExceptions)  # main() sets it for its process
    monkeypatch.setattr(hydra, "main", started)
    capsys.readouterr()
    shown = logging.StreamHandler(sys.stderr)  # what a new interpreter prints of a logged warning or error
    shown.setLevel(logging.WARNING)
    logging.getLogger().addHandler(shown)
    try:
        with pytest.raises(SystemExit) as exited:
            hydra_app.main()
    finally:
        logging.getLogger().removeHandler(shown)
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(args, exited.value.code, printed.out, printed.err)


def assert_user_error(out: subprocess.CompletedProcess[str], *phrases: str) -> None:
    assert out.returncode == 2, out.stderr[-3000:]
    assert "Traceback" not in out.stderr + out.stdout, out.stderr[-3000:]
    for phrase in phrases:
        assert phrase in out.stderr, out.stderr[-3000:]


@pytest.mark.parametrize(("override", "allowed"), [
    ("run.max_faces=-1", "a whole number >= 1, or null for every face"),
    ("run.max_sessions=0", "a whole number >= 1, or null"),
    ("run.confidence=1.5", "strictly between 0 and 1"),
    ("run.workers=-2", "a whole number >= 0 (0: one process per CPU core)"),
    ("run.budget_usd=0", "a number > 0"),
    ("run.retry_outcomes=[api_error,timeout]", "a list of outcomes from refused, no_image, api_error"),
    ("analysis.contrasts.gender=[male]", "exactly two different group labels"),
    ("analysis.n_resamples=0", "a whole number >= 1"),
    ("analysis.alpha=1", "strictly between 0 and 1"),
])
def test_an_invalid_setting_stops_the_command_before_anything_is_created(tmp_path, monkeypatch, capsys, override,
                                                                         allowed):
    # The default experiment tracks to MLflow: no MLflow run, no store, not even the workspace may exist.
    out = refused(monkeypatch, capsys, tmp_path, override, "run.progress=false")
    key = override.split("=")[0]
    assert_user_error(out, f"Error: {key}=", allowed)
    assert not (tmp_path / "ws").exists()
    assert not list(tmp_path.rglob("mlflow.db")) and not list(tmp_path.rglob("ledger.sqlite"))


@pytest.mark.parametrize(("cls", "key", "value", "allowed"), [
    (RunConf, "max_faces", -1, ">= 1"), (RunConf, "max_faces", 0, ">= 1"), (RunConf, "max_faces", True, ">= 1"),
    (RunConf, "max_sessions", -3, ">= 1"), (RunConf, "seed", -1, ">= 0"), (RunConf, "workers", -2, ">= 0"),
    (RunConf, "max_contact_sheets", -1, ">= 0"), (RunConf, "judge_parse_attempts", 0, ">= 1"),
    (RunConf, "confidence", 0.0, "between 0 and 1"), (RunConf, "confidence", 1.0, "between 0 and 1"),
    (RunConf, "confidence", float("nan"), "between 0 and 1"), (RunConf, "budget_usd", -5.0, "> 0"),
    (RunConf, "progress", "yes", "true or false"), (RunConf, "workspace", "", "a directory path"),
    (RunConf, "retry_outcomes", ["ok"], "ok results are final"),
    (AnalysisConf, "contrasts", {"gender": ["male", "male"]}, "exactly two different"),
    (AnalysisConf, "contrasts", {"age_group": ["young", "old", "middle"]}, "exactly two different"),
    (AnalysisConf, "n_resamples", 0, ">= 1"), (AnalysisConf, "seed", -1, ">= 0"),
    (AnalysisConf, "alpha", 0.0, "between 0 and 1"), (AnalysisConf, "alpha", 1.5, "between 0 and 1"),
    (AnalysisConf, "wd_threshold", -1.0, ">= 0"), (AnalysisConf, "wd_threshold", float("inf"), ">= 0"),
    (AnalysisConf, "human_labels", "/no/such/labels.csv", "an existing labels CSV"),
])
def test_every_setting_is_checked_by_the_schema(cls, key, value, allowed):
    section = "run" if cls is RunConf else "analysis"
    with pytest.raises(ConfigError, match=rf"^{section}\.{key}.*=") as caught:
        cls(**{key: value})
    assert allowed in str(caught.value)


def test_check_number_says_what_each_range_allows():
    from faceedit_bench.api.sections import check_number

    cases = [(dict(whole=True, at_least=1, none="all"), 1.5, "x=1.5 is not allowed: it must be a whole number >= 1, "
              "or null for all."),
             (dict(whole=True, at_least=0, zero="auto"), -1, "a whole number >= 0 (0: auto)."),
             (dict(above=0, below=1, example="0.5"), 1, "a number strictly between 0 and 1 (0.5)."),
             (dict(above=0), True, "a number > 0.")]
    for bounds, value, says in cases:
        with pytest.raises(ConfigError, match=re.escape(says)):
            check_number("x", value, **bounds)
    for bounds, value in [(dict(whole=True, at_least=1, none="all"), None), (dict(above=0, below=1), 0.5),
                          (dict(whole=True, at_least=0), 0)]:
        check_number("x", value, **bounds)


def test_the_defaults_and_the_edges_of_every_range_are_accepted(tmp_path):
    RunConf()
    AnalysisConf()
    RunConf(max_faces=1, max_sessions=1, workers=0, seed=0, max_contact_sheets=0, confidence=0.999,
            budget_usd=0.01, retry_outcomes=["api_error", "refused", "parse_error"], judge_parse_attempts=1)
    labels = tmp_path / "labels.csv"
    labels.write_text("kind\n")
    AnalysisConf(contrasts={"race": ["a", "b"]}, n_resamples=1, alpha=0.5, wd_threshold=0.0, human_labels=str(labels))


def test_human_labels_without_a_judge_are_refused_by_the_schema(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("kind\n")
    with pytest.raises(ConfigError, match="needs a judge"):
        ExperimentConfig(analysis=AnalysisConf(human_labels=str(labels)))


# -- workspace ------------------------------------------------------------------------------


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody may write to: permissions for an ordinary user; for root (whom
    permissions do not stop) a read-only tmpfs, where mounting is allowed."""
    path = tmp_path / "read_only"
    path.mkdir()
    if os.geteuid() != 0:
        path.chmod(0o555)
        yield path
        path.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(path)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("running as root and cannot mount a read-only file system here")
    yield path
    subprocess.run(["umount", str(path)], check=False)


def test_a_read_only_workspace_is_named_with_how_to_choose_another(tmp_path, read_only_dir):
    workspace = read_only_dir / "ws"
    out = bench(tmp_path, "tracking=none", *FAST, workspace=workspace)
    assert_user_error(out, f"The workspace {workspace} cannot be written (it would be created inside {read_only_dir}): ",
                      "run.workspace=", "FACEEDIT_BENCH_HOME")


def test_a_workspace_that_is_a_file_or_lies_under_one_is_named(tmp_path, monkeypatch, capsys):
    afile = tmp_path / "results.txt"
    afile.write_text("not a folder")
    out = refused(monkeypatch, capsys, tmp_path, "tracking=none", *FAST, env={"FACEEDIT_BENCH_HOME": str(afile)})
    assert_user_error(out, f"The workspace {afile} is a file, not a directory", "run.workspace=")
    out = refused(monkeypatch, capsys, tmp_path, "tracking=none", *FAST, f"run.workspace={afile / 'ws'}")
    assert_user_error(out, f"The workspace {afile / 'ws'} cannot be created: {afile} is a file, not a directory")
    assert afile.read_text() == "not a folder"


def test_an_unwritable_hydra_output_folder_is_named(tmp_path, read_only_dir):
    out = bench(tmp_path, "tracking=none", *FAST, f"hydra.run.dir={read_only_dir / 'out'}")
    assert_user_error(out, f"The Hydra output folder {read_only_dir / 'out'} cannot be written",
                      "hydra.run.dir=")


@pytest.fixture
def tiny_runs_dir(tmp_path: Path) -> Iterator[Path]:
    """``<workspace>/runs`` on a 16 KiB file system: the run's own files fill it up (root only)."""
    runs = tmp_path / "ws" / "runs"
    runs.mkdir(parents=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(runs)],
                                           capture_output=True, check=False).returncode != 0:
        pytest.skip("needs root and tmpfs mounts to fill a disk")
    yield runs
    subprocess.run(["umount", str(runs)], check=False)


def test_a_full_disk_while_writing_the_run_files_says_what_and_loses_nothing(tmp_path, tiny_runs_dir, monkeypatch,
                                                                             capfd):
    out = bench(tmp_path, "tracking=none", *FAST, "run.max_contact_sheets=10")
    assert_user_error(out, "could not be written (No space left on device)", "Nothing finished is lost",
                      "Free some disk space", "run the same command again")
    subprocess.run(["umount", str(tiny_runs_dir)], check=True)
    # The rerun in this process (tests/cli_in_process.py): the same command code, from the same workspace.
    rerun = bench_in_process(monkeypatch, capfd, tmp_path, "tracking=none", *FAST, "run.max_contact_sheets=10")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    (report,) = [json.loads(p.read_text()) for p in tiny_runs_dir.glob("*/report.json")]
    assert report["run"]["computed"]["embeddings"] == 0  # everything scored before the disk filled was kept
    assert report["counts"]["steps"] == {"ok": 4}


def test_storage_errors_become_guidance_and_other_errors_do_not(tmp_path):
    import errno
    import sqlite3

    full = storage_error(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x.png")), tmp_path)
    assert isinstance(full, StorageError) and f"{tmp_path / 'x.png'} could not be written" in str(full)
    assert "Free some disk space" in str(full) and "Nothing finished is lost" in str(full)
    read_only = storage_error(OSError(errno.EROFS, "Read-only file system"), tmp_path)
    assert read_only is not None and "run.workspace=" in str(read_only)
    ledger = storage_error(sqlite3.OperationalError("database or disk is full"), tmp_path)
    assert ledger is not None and "ledger" in str(ledger)
    assert storage_error(OSError(errno.ECONNREFUSED, "refused"), tmp_path) is None
    assert storage_error(sqlite3.OperationalError("no such table: edits"), tmp_path) is None
    assert storage_error(ValueError("bug"), tmp_path) is None


# -- component parameters ---------------------------------------------------------------------


@pytest.mark.parametrize(("override", "expected"), [
    ("judge.params.temperature=hot", "judge 'gemini' rejected parameter judge.params.temperature='hot': ValueError"),
    # A message that names no parameter: every given one is listed, so the user knows where to look.
    ("judge.params.max_output_tokens=[1]", "judge 'gemini' rejected its parameters (judge.params.model, "),
])
def test_a_factory_rejecting_a_parameter_names_the_component_and_the_parameter(tmp_path, monkeypatch, capsys,
                                                                               override, expected):
    out = refused(monkeypatch, capsys, tmp_path, "tracking=none", "judge=gemini", override, *FAST)
    assert_user_error(out, expected)
