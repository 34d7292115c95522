"""`python -m faceedit_bench ...` as users run it: real Hydra composition, sweeps, errors. The commands whose
subject is the process (a joblib sweep's processes, an error's exit status, what a run logs) start one; the others
run the entry function in the test's process (tests/cli_in_process.py): the same composition, run and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_in_process import bench_in_process

ROOT = Path(__file__).resolve().parent.parent
FAST = ["tracking=none", "run.max_faces=1", "run.max_sessions=1", "run.workers=1", "run.progress=false"]


def bench(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws")}
    return subprocess.run([sys.executable, "-m", "faceedit_bench", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=timeout)


@pytest.fixture
def run_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]):
    """``bench`` in this process, with the installed plugins."""
    return lambda *args: bench_in_process(monkeypatch, capfd, tmp_path, *args)


def reports(tmp_path: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((tmp_path / "ws" / "runs").glob("*/report.json"))]


@pytest.mark.slow
def test_every_test_set_runs_in_one_multirun_sweep(run_here, tmp_path):
    out = run_here("-m", "editor=identity", "testset=hair,accessories,pose,multi_axis", *FAST)
    assert out.returncode == 0, out.stderr
    found = {r["testset"]["name"]: r for r in reports(tmp_path)}
    assert set(found) == {"hair", "accessories", "pose", "multi_axis"}
    for r in found.values():
        assert r["counts"]["steps"] == {"ok": 4}
        assert r["metrics"]["drop_fss"]["mean"] == pytest.approx(0.0)
        assert r["components"]["embedder"]["name"] == "dlib"
        assert r["run"]["preset"] is None  # composed without an experiment preset


def test_the_run_knows_its_preset_from_hydras_choices(run_here, tmp_path):
    out = run_here("experiment=smoke", "editor=identity", *FAST)
    assert out.returncode == 0, out.stderr
    (report,) = reports(tmp_path)
    assert report["run"]["preset"] == "smoke"


def test_joblib_launcher_sweeps_in_parallel_processes(tmp_path):
    out = bench(tmp_path, "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "testset=pose,hair",
                "editor=identity", *FAST)
    assert out.returncode == 0, out.stderr
    assert sorted(r["testset"]["name"] for r in reports(tmp_path)) == ["hair", "pose"]


def test_replay_of_an_empty_directory_counts_missing_images(tmp_path, monkeypatch, capfd, plugins):
    replay = tmp_path / "empty_replay"
    replay.mkdir()
    out = bench_in_process(monkeypatch, capfd, tmp_path, "editor=replay", f"editor.params.root={replay}",
                           "testset=pose", "embedder=pixel", *FAST, plugins=plugins)
    assert out.returncode == 0, out.stderr
    (report,) = reports(tmp_path)
    assert report["counts"]["sessions"]["excluded"] == {"step_no_image": 1}
    assert report["counts"]["steps"] == {"no_image": 1, "skipped": 3}


def test_unknown_option_fails_before_work_with_did_you_mean(tmp_path):
    out = bench(tmp_path, "editor=identiti")
    assert out.returncode == 2
    assert "Unknown editor 'identiti'. Did you mean 'identity'" in out.stderr
    assert "identity," in out.stderr and "replay" in out.stderr  # the available options are listed
    assert not (tmp_path / "ws").exists()  # no work started


def test_unknown_parameter_is_rejected_with_the_accepted_ones(run_here, tmp_path):
    out = run_here("+editor.params.strenght=3", *FAST)
    assert out.returncode == 2
    assert "editor 'identity' does not take parameter(s) strenght" in out.stderr


def test_bad_override_value_gets_a_clear_error(run_here, tmp_path):
    out = run_here("run.max_faces=lots")
    assert out.returncode != 0
    assert "max_faces" in out.stderr and "lots" in out.stderr


def test_missing_mandatory_parameter_is_named(run_here, tmp_path):
    out = run_here("dataset=folder", *FAST)
    assert out.returncode != 0
    assert "dataset.params.root" in out.stderr


def test_cfg_job_prints_the_composed_experiment(run_here, tmp_path):
    out = run_here("--cfg", "job", "editor=replay", "editor.params.root=/x")
    assert out.returncode == 0, out.stderr
    assert "name: replay" in out.stdout and "root: /x" in out.stdout


def test_plugin_config_dirs_join_only_faceedit_bench_searches(run_here, tmp_path):
    ours = run_here("--info", "searchpath")
    assert "pkg://faceedit_bench_dlib.conf" in ours.stdout
    other = tmp_path / "other_app.py"
    other.write_text(
        "import hydra\n"
        "@hydra.main(version_base='1.3', config_path=None)\n"
        "def main(cfg):\n    pass\n"
        "main()\n")
    out = subprocess.run([sys.executable, str(other), "--info", "searchpath"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "faceedit_bench" not in out.stdout  # another Hydra app in the same environment is left alone


def test_paper_experiment_composes_the_papers_components(compose):
    cfg = compose("experiment=paper_celeba")
    assert (cfg.dataset.name, cfg.embedder.name, cfg.judge.name) == ("celeba", "insightface", "gemini")
    assert cfg.judge.params.model == "gemini-2.5-flash"


@pytest.mark.slow(seconds=7)
def test_hosted_calls_do_not_log_a_line_each(tmp_path, monkeypatch):
    """Both SDKs' editors in one process: a sweep over the editor, each SDK reaching its fake through its
    endpoint variable."""
    from tests.fakes.gemini import gemini_server
    from tests.fakes.openai import openai_server

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-quiet")
    monkeypatch.setenv("GEMINI_API_KEY", "test-quiet")
    with openai_server(api_key="sk-test-quiet") as openai, gemini_server(api_key="test-quiet") as gemini:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{openai.url}/v1")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
        out = bench(tmp_path, "-m", "editor=gpt_image,nano_banana", "testset=pose", *FAST)
        assert out.returncode == 0, out.stderr[-3000:]
        log = out.stdout + out.stderr
        assert "HTTP Request" not in log and "AFC is enabled" not in log, log[-3000:]
    assert openai.calls == 4 and gemini.calls == 4
    assert sorted(r["components"]["editor"]["name"] for r in reports(tmp_path)) == ["gpt_image", "nano_banana"]
