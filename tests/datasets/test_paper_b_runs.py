"""Runs on paper (b)'s portrait grid (real faces, a frozen selection with missing cells): the diagnostic set, and
WinoBias with a two-image editor and a one-image editor."""

from __future__ import annotations

import csv

import pytest

from faceedit_bench.builtin.datasets.fairface import FairFaceDataset
from faceedit_bench.builtin.datasets.portrait_select import select_grid
from faceedit_bench.report.summary import format_summary
from faceedit_bench.run.experiment import build_experiment, run_experiment

dlib_embedder = pytest.importorskip("faceedit_bench_dlib.embedder")


@pytest.fixture(scope="module")
def grid_folder(real_fairface_images, tmp_path_factory):
    """One frozen selection for the module (selecting costs seconds): 3 of 84 cells filled."""
    from tests.datasets.conftest import REAL_ROWS, write_hf_parquet

    base = tmp_path_factory.mktemp("paper_b")
    rows = [(data, race, gender, age, True) for data, (_, _, race, gender, age) in zip(real_fairface_images, REAL_ROWS)]
    write_hf_parquet(base / "ff" / "1.25" / "train-00000-of-00001.parquet", rows)
    ds = FairFaceDataset(root=base / "ff", split="train", cache_dir=base / "cache")
    select_grid(ds, dlib_embedder.DlibEmbedder(), base / "grid", detector_name="dlib")
    return base / "grid"


def _run(plugins, compose, grid_folder, *overrides):
    cfg = compose("dataset=fairface_grid", f"dataset.params.root={grid_folder}", "embedder=pixel", "tracking=none",
                  "run.workers=1", "analysis.n_resamples=99", *overrides)
    return run_experiment(build_experiment(cfg, plugins), plugins)


def _steps(tmp_path, editor):
    (path,) = (tmp_path / "ws" / "runs").glob(f"{editor}-*/steps.csv")
    return list(csv.DictReader(path.open()))


def test_diagnostic_on_the_grid_reports_its_missing_cells(plugins, compose, grid_folder, tmp_path):
    report = _run(plugins, compose, grid_folder, "testset=diagnostic", "editor=noise")
    assert report["counts"]["sessions"]["included"] == 3 * 20  # 3 filled cells x 20 prompts
    note = next(n for n in report["notes"] if "81 of 84 grid cells" in n)
    assert "the audit runs on the other 3 cells" in note
    assert report["components"]["dataset"]["description"]["missing_cells"][:2] == ["White_Male_20s",
                                                                                    "White_Male_30s"]
    assert "NOTE (fairface_grid): 81 of 84" in format_summary(report, tmp_path)
    rows = _steps(tmp_path, "noise")
    assert {r["session_id"] for r in rows} == {f"O-{i:02d}" for i in range(1, 11)} | {
        f"V-{i:02d}" for i in range(1, 11)}
    (page,) = (tmp_path / "ws" / "runs").glob("noise-*/report.html")
    assert "81 of 84 grid cells have no usable portrait" in page.read_text()


def test_winobias_pairs_a_male_base_face_with_a_female_of_another_race(plugins, compose, grid_folder, tmp_path):
    report = _run(plugins, compose, grid_folder, "testset=winobias", "editor=two_image",
                  "dataset.params.base_gender=male")
    assert report["counts"]["steps"] == {"ok": 50}  # the one male portrait x 50 prompts
    rows = _steps(tmp_path, "two_image")
    assert {r["face_id"] for r in rows} == {"fairface_grid/Black_Male_40s/1"}


def test_winobias_with_a_one_image_editor_is_unsupported(plugins, compose, grid_folder, tmp_path):
    report = _run(plugins, compose, grid_folder, "testset=winobias", "editor=identity",
                  "dataset.params.base_gender=male")
    assert report["counts"]["steps"] == {"unsupported": 50}
    (path,) = (tmp_path / "ws" / "runs").glob("identity-*/steps.csv")
    assert "this editor takes at most 1" in path.read_text()
