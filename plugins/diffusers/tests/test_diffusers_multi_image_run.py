"""A step with a second input image through the engine (format-2 test set, a partner from the dataset by a
seeded rule) to the tiny FLUX.2 pipeline, which takes both; the same step to a one-image pipeline ends
``unsupported``, counted, with no image dropped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(seconds=4)


def _run(tmp_path: Path, editor: str, model: Path, *extra: str) -> dict:
    from faceedit_bench.testing import compose_config, load_plugins, run_config
    from tests import fake_plugin  # the synthetic dataset and the pixel embedder

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    testset = tmp_path / "pairs.json"
    testset.write_text(json.dumps({"format": 2, "name": "pairs", "version": "1", "sessions": [{
        "session_id": "W-01", "steps": [{
            "instruction": "Show the two people side by side as colleagues",
            "inputs": [{"role": "second_person", "source": "dataset", "rule": "other_gender"}]}]}]}))
    overrides = [f"run.workspace={tmp_path / 'ws'}", "run.progress=false", "dataset=synthetic",
                 f"+dataset.params.root={tmp_path / 'faces'}", "embedder=pixel", "tracking=none", "run.workers=1",
                 "testset=file", f"testset.params.path={testset}", "analysis.n_resamples=99", "run.max_faces=2",
                 f"editor={editor}", f"editor.params.model={model}", "editor.params.steps=2",
                 "editor.params.resolution=64", "editor.params.dtype=float32", "editor.params.device=cpu", *extra]
    return run_config(compose_config(plugins, overrides), plugins)


def test_flux2_edits_a_step_with_two_input_images(tmp_path: Path, tiny_model: Callable[[str], Path]) -> None:
    report = _run(tmp_path, "flux2_dev", tiny_model("flux2_dev"))
    assert report["counts"]["steps"] == {"ok": 2} and report["counts"]["sessions"]["included"] == 2


def test_a_one_image_pipeline_ends_unsupported(tmp_path: Path, tiny_model: Callable[[str], Path]) -> None:
    report = _run(tmp_path, "flux_kontext_dev", tiny_model("flux_kontext_dev"), "editor.params.auto_resize=false")
    assert report["counts"]["steps"] == {"unsupported": 2}
    assert report["counts"]["sessions"]["excluded"] == {"step_unsupported": 2}
