"""Open-weight editors and the local VLM judge through the real command path: Hydra
composition, the engine's batching execution, the ledger and MLflow, on tiny random
models saved to disk (no download, no GPU)."""

from __future__ import annotations

import importlib.util

import pytest

# Found, not imported: importing diffusers (and torch) costs seconds, and every test worker collects these tests.
for _needed in ("diffusers", "faceedit_bench_transformers"):
    if importlib.util.find_spec(_needed) is None:
        pytest.skip(f"needs {_needed} (make setup installs it)", allow_module_level=True)

from faceedit_bench.run.experiment import build_experiment, run_experiment  # noqa: E402


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """The tiny models on one CPU thread: the others only spin waiting for work (a third of these tests' CPU,
    measured); how many threads a pipeline runs on is not under test."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_a_tiny_diffusers_editor_and_vlm_judge_run_end_to_end(plugins, compose, tmp_path, new_mlflow_store):
    new_mlflow_store(tmp_path / "ws")
    from faceedit_bench_diffusers.testing import save_tiny as save_editor
    from faceedit_bench_transformers.testing import save_tiny as save_judge
    from mlflow.tracking import MlflowClient

    editor_dir = save_editor("instruct_pix2pix", tmp_path / "editor")
    judge_dir = save_judge("qwen2_5_vl", tmp_path / "judge")
    cfg = compose("editor=instruct_pix2pix", f"editor.params.model={editor_dir}", "editor.params.steps=2",
                  "editor.params.resolution=64", "editor.params.dtype=float32", "editor.params.device=cpu",
                  "judge=qwen_vl", f"judge.params.model={judge_dir}", "judge.params.dtype=float32",
                  "judge.params.device=cpu", "judge.params.max_new_tokens=8", "testset=pose", "dataset=sample",
                  "run.max_faces=1", "run.max_sessions=2", "analysis.n_resamples=99")
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    assert report["counts"]["steps"] == {"ok": 8}
    # A random tiny VLM writes noise: every judge answer is a parse error, and nothing is scored from it.
    assert set(report["counts"]["judge"]["viescore-tie-sc@1"]) == {"parse_error"}
    assert report["metrics"]["sc"]["n"] == 0
    (editor_calls,) = [v for k, v in report["calls"].items() if k == f"local:{editor_dir.name}"]
    assert editor_calls["succeeded"] == 8
    assert report["performance"]["new_edits"] == 8 and report["performance"]["edits_per_s"] > 0

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'ws' / 'mlflow.db'}")
    (tracked,) = client.search_runs([client.get_experiment_by_name("faceedit/pose").experiment_id])
    assert tracked.data.metrics["steps_ok"] == 8 and tracked.data.tags["editor"] == "instruct_pix2pix"
    assert tracked.data.metrics["perf_edits_per_s"] > 0


@pytest.mark.slow
@pytest.mark.parametrize(("editor", "extra"), [
    ("flux_kontext_dev", ["editor.params.auto_resize=false"]),  # Kontext would upscale to ~1024 px
    ("flux1_dev", []), ("flux2_dev", []), ("qwen_image_edit", []),
])
def test_every_other_pipeline_runs_through_the_engine(plugins, compose, tmp_path, editor, extra):
    from faceedit_bench_diffusers.testing import save_tiny, small_qwen_internal_size

    model = save_tiny(editor, tmp_path / editor)
    cfg = compose(f"editor={editor}", f"editor.params.model={model}", *extra, "editor.params.steps=2",
                  "editor.params.resolution=64", "editor.params.dtype=float32", "editor.params.device=cpu",
                  "testset=pose", "dataset=sample", "tracking=none", "run.max_faces=1", "run.max_sessions=2",
                  "run.workers=1")
    with small_qwen_internal_size(64):
        report = run_experiment(build_experiment(cfg, plugins), plugins)
    assert report["counts"]["steps"] == {"ok": 8}
    assert report["components"]["editor"]["description"]["model"]
    assert report["metrics"]["drop_fss"]["n"] + sum(report["counts"]["sessions"]["excluded"].values()) == 2
