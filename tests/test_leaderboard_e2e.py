"""From real MLflow runs to a verified leaderboard, through the command-line entry points:
submit -> verify (re-scoring the bundled images) -> leaderboard build. Tampering fails.

Three tracked runs on the synthetic dataset with the pixel embedder: the identity editor,
and the test plugin's noise editor at two strengths (the last one is not submitted, so it
shows up from MLflow only, unverified).
"""

from __future__ import annotations

import argparse
import copy
import csv
import hashlib
import io
import json
import re
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from faceedit_bench.cli.leaderboard import add_parsers
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.leaderboard.entries import collect_submissions
from faceedit_bench.leaderboard.reproduction import compare_records
from faceedit_bench.leaderboard.schema import submission_schema
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.tolerances import registered_metrics
from faceedit_bench.leaderboard.verify import verify_submission
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.mlflow_store import copy_store
from tests.module_runs import composed, plugins_for_tests
from tests.test_leaderboard_support import noisy_png, rewrite_record

pytestmark = pytest.mark.slow(seconds=2)


@pytest.fixture(scope="module")
def tracked(tmp_path_factory, mlflow_store_template):
    from faceedit_bench_mlflow.runs import mlflow_client

    tmp = tmp_path_factory.mktemp("leaderboard-e2e")
    plugins = plugins_for_tests()
    uri = copy_store(mlflow_store_template, tmp / "ws")
    common = ["dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}", "embedder=pixel", "run.workers=1",
              "testset=pose", "run.max_sessions=3", "tracking=mlflow", f"tracking.params.tracking_uri={uri}"]
    runs = {}
    for name, editor in {"identity": ["editor=identity"],
                         "noise": ["editor=noise", "+editor.params.strength=30"],
                         "loud": ["editor=noise", "+editor.params.strength=90"]}.items():
        exp = build_experiment(composed(tmp / "ws", *common, *editor), plugins)
        runs[name] = SimpleNamespace(report=run_experiment(exp, plugins), run_dir=exp.info.output_dir)
    client = mlflow_client(uri)
    for run in client.search_runs([e.experiment_id for e in client.search_experiments()]):
        for r in runs.values():
            if r.report["run"]["key"] == run.data.tags["faceedit.run_key"]:
                r.mlflow_id = run.info.run_id
    return SimpleNamespace(tmp=tmp, plugins=plugins, uri=uri, runs=runs, faces=tmp / "faces")


@pytest.fixture
def cli(tracked, monkeypatch, capsys):
    """``faceedit-bench <argv>`` for the new subcommands, with the test plugin installed."""
    import faceedit_bench.plugin.manager

    monkeypatch.setattr(faceedit_bench.plugin.manager, "get_plugins", lambda: tracked.plugins)

    def run(*argv: str) -> tuple[int, str]:
        parser = argparse.ArgumentParser(prog="faceedit-bench")
        add_parsers(parser.add_subparsers(dest="command", required=True))
        args = parser.parse_args([str(a) for a in argv])
        try:
            code = args.func(args)
        except FaceEditBenchError as exc:
            print(f"Error: {exc}")
            code = 2
        return code, capsys.readouterr().out

    return run


def _ranked(table: str) -> list[tuple[str, str, str]]:
    """(rank, editor, status) of each row of the README's overall tables."""
    return re.findall(r"^\| (\S+) \| (\w+)(?: v1)? \([^)]*\) \| (\w+)(?:, preliminary)? \|", table, re.MULTILINE)


def _verify_args(tracked, submission: Path, tmp_path: Path) -> list[str]:
    return ["verify", submission, "--workspace", tmp_path / "verify-ws", "--set", f"dataset.params.root={tracked.faces}",
            "--set", "run.workers=1", "--record-dir", tmp_path / "lb" / "verifications"]


def _submit(tracked, tmp_path: Path, name: str) -> Path:
    return submit(tracked.runs[name].mlflow_id, out=tmp_path / "lb" / "submissions", tracking_uri=tracked.uri,
                  plugins=tracked.plugins, submitter="tests")


def test_submit_verify_and_build_end_to_end(tracked, cli, tmp_path):
    lb = tmp_path / "lb"
    for name in ("identity", "noise"):
        code, out = cli("submit", tracked.runs[name].mlflow_id, "--tracking-uri", tracked.uri, "--out",
                        lb / "submissions", "--notes", f"{name} baseline")
        assert code == 0, out
    submissions = sorted((lb / "submissions").iterdir())
    assert len(submissions) == 2
    for sub in submissions:
        record = json.loads((sub / "submission.json").read_text())
        jsonschema.validate(record, submission_schema())
        assert record["run"]["source"] == "mlflow" and record["files"]["images_bundled"]
        assert record["metrics"]["drop_fss"]["tolerance"] == 1e-4  # an embedder metric: reproduced to float noise
        code, out = cli(*_verify_args(tracked, sub, tmp_path))
        assert code == 0 and "VERIFIED" in out, out
        saved = json.loads((lb / "verifications" / f"{sub.name}.json").read_text())
        assert saved["status"] == "verified" and saved["compared"] > 50 and saved["mismatches"] == []

    code, out = cli("leaderboard", "build", "--dir", lb, "--tracking-uri", tracked.uri)
    assert code == 0 and "3 entries (2 verified, 1 from MLflow)" in out, out
    # only unsubmitted runs are unverified; the identity editor is the no-edit reference, never ranked; runs of
    # 4 identities are preliminary: listed without a rank (ranking by direction: test_leaderboard_views.py)
    readme = (lb / "README.md").read_text()
    assert sorted(_ranked(readme)) == [("ref", "identity", "verified"), ("–", "noise", "unverified"),
                                       ("–", "noise", "verified")]
    assert "verified, preliminary" in readme
    page = (lb / "index.html").read_text()
    # 2 entries x (all sessions, by gender, group tests: the gender x skin tone intersection, with its reason)
    assert page.count('data-status="verified"') == 6
    assert 'data-contrast="gender"' in page and 'data-contrast="group tests"' in page
    code, _ = cli("leaderboard", "build", "--dir", lb, "--tracking-uri", tracked.uri)
    assert (lb / "index.html").read_text() == page  # same inputs, same bytes


def test_submission_from_a_run_directory_equals_the_mlflow_one(tracked, tmp_path):
    from_mlflow = json.loads((_submit(tracked, tmp_path / "a", "noise") / "submission.json").read_text())
    run_dir = submit(str(tracked.runs["noise"].run_dir), out=tmp_path / "b", plugins=tracked.plugins,
                     submitter="tests")
    from_dir = json.loads((run_dir / "submission.json").read_text())
    for record in (from_mlflow, from_dir):
        for key in ("created_at", "run", "framework"):
            record.pop(key)
    assert from_mlflow == from_dir


def test_a_tampered_metric_fails_verification(tracked, cli, tmp_path):
    sub = _submit(tracked, tmp_path, "noise")
    rewrite_record(sub, lambda r: r["metrics"]["drop_fss"].update(mean=r["metrics"]["drop_fss"]["mean"] - 0.01))
    code, out = cli(*_verify_args(tracked, sub, tmp_path))
    assert code == 1 and "FAILED" in out and "metrics.drop_fss.mean" in out, out
    saved = json.loads((tmp_path / "lb" / "verifications" / f"{sub.name}.json").read_text())
    # caught before re-scoring: the bundled sessions.csv recomputes another mean
    assert saved["status"] == "failed" and "its numbers are inconsistent: metrics.drop_fss.mean is" in saved["reason"]
    assert "sessions.csv gives" in saved["reason"]
    code, out = cli("leaderboard", "build", "--dir", tmp_path / "lb")
    assert code == 1 and "REJECTED" in out and "metrics.drop_fss.mean" in out  # refused, never listed
    assert _ranked((tmp_path / "lb" / "README.md").read_text()) == []


def test_a_bundle_without_its_sessions_table_is_still_checked_against_its_steps_table(tracked, tmp_path):
    """Bundles made before sessions.csv travelled with them: Drop_FSS and the FSS_k series are recomputed from the
    FSS_k of steps.csv. The honest bundle is listed; one whose mean was edited is refused, naming it."""
    sub = _submit(tracked, tmp_path, "noise")
    (sub / "sessions.csv").unlink()
    rewrite_record(sub, lambda r: r["files"].pop("sessions_table"))
    registered = registered_metrics(tracked.plugins)
    assert collect_submissions(tmp_path / "lb", registered=registered).entries
    rewrite_record(sub, lambda r: r["metrics"]["drop_fss"].update(mean=r["metrics"]["drop_fss"]["mean"] + 0.01))
    (rejected,) = collect_submissions(tmp_path / "lb", registered=registered).rejected
    assert re.search(r"metrics\.drop_fss\.mean is [-0-9.e]+; steps\.csv gives", rejected.reason), rejected.reason


def test_embedder_metrics_reproduce_within_float32_noise_and_no_further(tracked, tmp_path):
    """Another CPU's kernels or another build may round the descriptors differently: a relative 1e-6 on each
    moved drop_fss's statistics by up to 1.5e-5 (benchmarks/bench_reproduction.py). That verifies; 1e-3 does not."""
    record = json.loads((_submit(tracked, tmp_path, "noise") / "submission.json").read_text())

    def mismatches(moved_by: float) -> list[str]:
        reproduced = copy.deepcopy(record)
        for stat in ("mean", "ci_low"):
            reproduced["metrics"]["drop_fss"][stat] += moved_by
        return [m.field for m in compare_records(record, reproduced, caps={})[0]]

    assert mismatches(1.5e-5) == []
    assert mismatches(1e-3) == ["metrics.drop_fss.mean", "metrics.drop_fss.ci_low"]


def test_a_tampered_image_fails_before_anything_is_rescored(tracked, tmp_path):
    sub = _submit(tracked, tmp_path, "noise")
    image = sorted((sub / "images").rglob("step_2.png"))[0]
    image.write_bytes(noisy_png(7))
    result = verify_submission(sub, plugins=tracked.plugins, workspace=tmp_path / "verify-ws",
                               overrides=[f"dataset.params.root={tracked.faces}"])
    assert result.status == "failed" and re.search("does not match the sha256|bytes; the record says", result.reason)
    assert not (tmp_path / "verify-ws").exists()


def test_images_swapped_with_consistent_hashes_fail_on_the_numbers(tracked, tmp_path):
    sub = _submit(tracked, tmp_path, "noise")
    steps = (sub / "steps.csv").read_text()

    def swap(record):  # a careful tamperer: new images, every hash updated to match
        nonlocal steps
        for i, entry in enumerate(record["files"]["images"][:8]):
            data = noisy_png(100 + i)
            (sub / entry["path"]).write_bytes(data)
            digest = hashlib.sha256(data).hexdigest()
            steps = steps.replace(entry["sha256"], digest)
            entry.update(sha256=digest, bytes=len(data))
        (sub / "steps.csv").write_text(steps)
        record["files"]["steps_table"].update(sha256=hashlib.sha256(steps.encode()).hexdigest(),
                                              bytes=len(steps.encode()))

    rewrite_record(sub, swap)
    result = verify_submission(sub, plugins=tracked.plugins, workspace=tmp_path / "verify-ws",
                               overrides=[f"dataset.params.root={tracked.faces}", "run.workers=1"])
    assert result.status == "failed"
    assert "metrics.drop_fss.mean" in {m["field"] for m in result.mismatches}


def test_a_different_embedder_version_cannot_verify(tracked, cli, tmp_path):
    sub = _submit(tracked, tmp_path, "identity")
    rewrite_record(sub, lambda r: r["embedder"]["description"].update(version="99"))
    code, out = cli(*_verify_args(tracked, sub, tmp_path))
    assert code == 2 and "installed embedder 'pixel'" in out and "Install that exact version" in out, out
    assert not (tmp_path / "lb" / "verifications").exists()  # not the submission's fault: nothing recorded


def test_a_zipped_bundle_verifies(tracked, tmp_path):
    sub = _submit(tracked, tmp_path, "identity")
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(sub.rglob("*")):
            if path.is_file():
                zf.write(path, f"{sub.name}/{path.relative_to(sub).as_posix()}")
    shutil.rmtree(sub)
    result = verify_submission(archive, plugins=tracked.plugins, workspace=tmp_path / "verify-ws",
                               overrides=[f"dataset.params.root={tracked.faces}", "run.workers=1"])
    assert result.status == "verified", result.mismatches[:3]


def test_another_copy_of_the_dataset_cannot_verify(tracked, tmp_path):
    from faceedit_bench.leaderboard.errors import VerificationUnavailable

    sub = _submit(tracked, tmp_path, "noise")  # (identity's edited images would share the base hash)
    steps = (sub / "steps.csv").read_text()
    old_hash = next(r["image_hash"] for r in csv.DictReader(io.StringIO(steps))
                    if r["face_id"] == "synthetic/0" and r["k"] == "0")
    text = steps.replace(old_hash, "0" * 64)  # as if measured on other base images
    (sub / "steps.csv").write_text(text)
    rewrite_record(sub, lambda r: r["files"]["steps_table"].update(
        sha256=hashlib.sha256(text.encode()).hexdigest(), bytes=len(text.encode())))
    with pytest.raises(VerificationUnavailable, match="base images are missing or different"):
        verify_submission(sub, plugins=tracked.plugins, workspace=tmp_path / "verify-ws",
                          overrides=[f"dataset.params.root={tracked.faces}"])
    assert not (tmp_path / "verify-ws" / "runs").exists()  # stopped before re-scoring


def test_verify_rescores_outside_the_users_runs(tracked, cli, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "runs" / "my-experiment").mkdir(parents=True)
    monkeypatch.setenv("FACEEDIT_BENCH_HOME", str(home))  # the user's default workspace
    sub = _submit(tracked, tmp_path, "noise")
    code, out = cli("verify", sub, "--set", f"dataset.params.root={tracked.faces}", "--set", "run.workers=1",
                    "--record-dir", tmp_path / "lb" / "verifications")
    assert code == 0 and "VERIFIED" in out, out
    assert [p.name for p in (home / "runs").iterdir()] == ["my-experiment"]  # nothing added to the user's runs
    (rescored,) = (home / "verifications" / "runs").iterdir()
    assert f"re-scoring run: {rescored}" in out
