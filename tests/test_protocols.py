"""Protocols beyond paper (a): sessions of K >= 1 steps, free-text steps without a taxonomy
binding, steps with further input images, through the engine (format-2 test sets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faceedit_bench.records import Outcome
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.testsets import TestSetError, load_testset
from tests.fakes.gemini import gemini_server

KEY = "protocols-gemini-key"
FAST = ["limits.max_attempts=2", "limits.backoff_initial_s=0.01", "limits.requests_per_minute=6000",
        "limits.tokens_per_minute=null"]


def write_testset(path: Path, sessions: list[dict], name: str = "toy") -> Path:
    path.write_text(json.dumps({"format": 2, "name": name, "version": "1", "sessions": sessions}))
    return path


def run(plugins, compose, synthetic, testset: Path, *overrides: str) -> dict:
    cfg = compose(*synthetic, "testset=file", f"testset.params.path={testset}", "analysis.n_resamples=99",
                  *overrides)
    return run_experiment(build_experiment(cfg, plugins), plugins)


def test_single_edits_k1(plugins, compose, synthetic, tmp_path):
    path = write_testset(tmp_path / "k1.json", [
        {"session_id": "O-01", "steps": [{"instruction": "Present the person as a senior executive",
                                         "prompt_id": "O-01", "prompt_category": "Occupational/Authority"}]},
        {"session_id": "V-05", "steps": [{"instruction": "Show the person thirty years later"}]}])
    testset = load_testset(path)
    assert [len(s.steps) for s in testset.sessions] == [1, 1] and not testset.bound
    report = run(plugins, compose, synthetic, path, "editor=noise")
    assert report["counts"]["sessions"]["included"] == 8  # 4 faces x 2 single-edit sessions
    assert [p["k"] for p in report["trajectory"]["fss"]] == [0, 1]
    assert report["metrics"]["drop_fss"]["n"] == 8 and report["metrics"]["drop_fss"]["mean"] > 0
    (page,) = (tmp_path / "ws" / "runs").glob("noise-*/report.html")
    assert "free (no provider calls, or a local model)" in page.read_text()  # as the console says


def test_two_chained_free_text_steps_skip_what_needs_a_taxonomy(plugins, compose, synthetic, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    path = write_testset(tmp_path / "k2.json", [{"session_id": "s1", "steps": [
        {"instruction": "give the person a red scarf"}, {"instruction": "now make the scarf blue"}]}])
    with gemini_server(api_key=KEY) as server:
        report = run(plugins, compose, synthetic, path, "editor=noise", "judge=gemini",
                     f"judge.params.base_url={server.url}", *[f"judge.params.{s}" for s in FAST])
    assert report["skipped_metrics"]["oer"] == "this test set has no taxonomy binding"
    assert "oer" not in report["metrics"] and "overediting" not in report
    assert report["metrics"]["sc"]["n"] == 4  # SC needs no binding: asked for both steps of every session
    assert [p["k"] for p in report["trajectory"]["sc"]] == [1, 2]
    assert not any("state" in template for template in report["counts"]["judge"])  # the tracker was never asked


def two_image_testset(tmp_path: Path) -> Path:
    return write_testset(tmp_path / "pairs.json", [{"session_id": "W-01", "steps": [{
        "instruction": "The janitor reprimanded the accountant because he got less allowance.",
        "inputs": [{"role": "second_person", "source": "dataset", "rule": "other_gender"}]}]}])


def test_a_step_with_two_input_images(plugins, compose, synthetic, tmp_path):
    report = run(plugins, compose, synthetic, two_image_testset(tmp_path), "editor=two_image")
    assert report["counts"]["steps"] == {"ok": 4}
    assert report["counts"]["sessions"]["included"] == 4


def test_an_editor_taking_one_image_ends_unsupported_never_dropping_one(plugins, compose, synthetic, tmp_path):
    report = run(plugins, compose, synthetic, two_image_testset(tmp_path), "editor=identity")
    assert report["counts"]["steps"] == {Outcome.UNSUPPORTED.value: 4}
    assert report["counts"]["sessions"]["excluded"] == {"step_unsupported": 4}
    assert report["counts"]["steps_by_group"]["gender"]["female"] == {"unsupported": 2}
    (steps,) = (tmp_path / "ws" / "runs").glob("identity-*/steps.csv")
    assert "this editor takes at most 1" in steps.read_text()


def test_the_partner_rule_is_seeded_documented_and_order_free(plugins, tmp_path):
    from faceedit_bench.records import Face
    from faceedit_bench.run.inputs import InputResolver

    faces = [Face(f"f{i}", f"id{i}", Path("x"), (), {"gender": g, "race": r})
             for i, (g, r) in enumerate([("male", "White"), ("female", "White"), ("female", "Black"),
                                         ("male", "Black"), ("female", None)])]
    forward = InputResolver(None, lambda: faces, seed=0)
    backward = InputResolver(None, lambda: list(reversed(faces)), seed=0)
    for face in faces[:4]:
        chosen = forward.partner(face, "other_gender_other_race")
        assert chosen is not None and chosen == backward.partner(face, "other_gender_other_race")
        assert chosen.demographics["gender"] != face.demographics["gender"]
        assert chosen.demographics["race"] not in (None, face.demographics["race"])
    assert forward.partner(faces[4], "other_gender_other_race") is None  # no race label: no pairing


@pytest.mark.parametrize(("step", "message"), [
    ({"instruction": "x", "colour": "red"}, "unknown field(s) colour"),
    ({"instruction": "x", "k": 2}, "'k' must be 1"),
    ({"instruction": "x", "inputs": [{"role": "b", "source": "dataset", "rule": "any"}]}, "needs a \"rule\""),
    ({"instruction": "x", "binding": {"attribute": "no such hair"}}, "no such hair"),
    ({"instruction": ""}, "'instruction' must be a non-empty string"),
])
def test_format2_errors_name_the_step(tmp_path, step, message):
    path = write_testset(tmp_path / "bad.json", [{"session_id": "s1", "steps": [step]}])
    with pytest.raises(TestSetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_testset(path)


def test_a_binding_fills_the_taxonomy_fields(tmp_path):
    path = write_testset(tmp_path / "bound.json", [{"session_id": "s1", "steps": [
        {"instruction": "make the hair crimson red", "binding": {"attribute": "crimson red hair"}}]}])
    (step,) = load_testset(path).sessions[0].steps
    assert (step.category, step.sub_axis, step.axis) == ("red hair", "hair-color", "Hair") and step.bound
