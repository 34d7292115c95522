"""Runs on paper (b)'s portrait grid (real faces, a frozen selection with missing cells): the repository's WinoBias
pairs and a session bound to two named faces. The diagnostic set and WinoBias with a two-image and a one-image
editor on the grid run as their presets in test_paper_b_presets.py (the same dataset, test sets and editors)."""

from __future__ import annotations

import csv

import pytest
from faceedit_bench_audit.portraits.select import select_grid

from faceedit_bench.api import registered
from faceedit_bench.testing import build_run, run_built

dlib_embedder = pytest.importorskip("faceedit_bench_dlib.embedder")


@pytest.fixture(scope="module")
def grid_folder(real_fairface_images, tmp_path_factory):
    """One frozen selection for the module (selecting costs seconds): 3 of 84 cells filled."""
    from tests.datasets.conftest import REAL_ROWS, write_hf_parquet

    base = tmp_path_factory.mktemp("paper_b")
    rows = [(data, race, gender, age, True) for data, (_, _, race, gender, age) in zip(real_fairface_images, REAL_ROWS)]
    write_hf_parquet(base / "ff" / "1.25" / "train-00000-of-00001.parquet", rows)
    ds = registered("datasets", "fairface")(root=base / "ff", split="train", cache_dir=base / "cache")
    select_grid(ds, dlib_embedder.DlibEmbedder(), base / "grid", detector_name="dlib")
    return base / "grid"


def _run(plugins, compose, grid_folder, *overrides):
    cfg = compose("dataset=fairface_grid", f"dataset.params.root={grid_folder}", "embedder=pixel", "tracking=none",
                  "run.workers=1", "analysis.n_resamples=99", *overrides)
    return run_built(build_run(cfg, plugins), plugins)


def _steps(tmp_path, editor):
    (path,) = (tmp_path / "ws" / "runs").glob(f"{editor}-*/steps.csv")
    return list(csv.DictReader(path.open()))


def test_winobias_pairs_runs_the_repository_pairs_on_their_portraits(plugins, compose, grid_folder, tmp_path):
    """Each session runs on its own input_image_1 only; a pair whose second portrait is missing is unsupported."""
    import json
    from importlib import resources

    report = _run(plugins, compose, grid_folder, "testset=winobias_pairs", "editor=two_image")
    missing = set(report["components"]["dataset"]["description"]["missing_cells"])
    pairs = json.loads((resources.files("faceedit_bench_audit") / "data/paper_b/winobias_prompts_with_stereotype.json")
                       .read_text(encoding="utf-8"))
    cell = lambda name: name.rsplit(".", 1)[0]  # noqa: E731
    runnable = [p for p in pairs if cell(p["input_image_1"]) not in missing]
    complete = [p for p in runnable if cell(p["input_image_2"]) not in missing]
    assert runnable, "the fixture grid must hold at least one input_image_1 of the published pairs"
    expected = {"ok": len(complete), "unsupported": len(runnable) - len(complete)}
    assert report["counts"]["steps"] == {k: v for k, v in expected.items() if v}
    rows = _steps(tmp_path, "two_image")
    assert {(r["session_id"], r["face_id"]) for r in rows} == {
        (f"W-{p['id']:02d}", f"fairface_grid/{cell(p['input_image_1'])}/1") for p in runnable}
    if len(complete) < len(runnable):
        assert "the dataset has no face 'fairface_grid/" in (tmp_path / "ws" / "runs").glob(
            "two_image-*/steps.csv").__next__().read_text()


def test_a_session_bound_to_one_face_with_a_named_second_face(plugins, compose, grid_folder, tmp_path):
    import json

    from faceedit_bench_audit.portraits.dataset import FairFaceGridDataset

    ids = sorted(f.face_id for f in FairFaceGridDataset(root=grid_folder).faces())
    first, second = ids[0], ids[1]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"format": 2, "name": "pairs", "version": "1", "sessions": [
        {"session_id": "p1", "face": first,
         "steps": [{"instruction": "both at a desk", "inputs": [{"role": "other", "source": "dataset", "face": second}]}]},
        {"session_id": "p2", "face": second,
         "steps": [{"instruction": "both at a desk", "inputs": [{"role": "other", "source": "dataset",
                                                                 "face": "fairface_grid/nobody/1"}]}]}]}))
    report = _run(plugins, compose, grid_folder, "testset=file", f"testset.params.path={path}", "editor=two_image")
    assert report["counts"]["steps"] == {"ok": 1, "unsupported": 1}
    rows = {r["session_id"]: r for r in _steps(tmp_path, "two_image")}
    assert (rows["p1"]["face_id"], rows["p1"]["outcome"]) == (first, "ok")
    assert rows["p2"]["face_id"] == second and "no face 'fairface_grid/nobody/1'" in rows["p2"]["reason"]
