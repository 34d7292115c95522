"""Finding models: local directories, the Hugging Face cache layout, and every way a model can
be missing, each with an error that names the repository and how to get it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from faceedit_bench_diffusers import editors, loading

from faceedit_bench.api import ConfigError, EditRequest, ModelSource, Outcome
from faceedit_bench.api.testing import gradient_image

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def cache_snapshot(cache: Path, repo_id: str, model: Path) -> Path:
    """Lay ``model`` out as huggingface_hub's cache holds a downloaded repository."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / COMMIT
    shutil.copytree(model, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    return snapshot


def test_a_repository_id_resolves_to_its_cached_snapshot_and_commit(
        tiny_model: Callable[[str], Path], tmp_path: Path) -> None:
    cache_snapshot(tmp_path / "hf-cache", "acme/tiny-kontext", tiny_model("flux_kontext_dev"))
    editor = editors.flux_kontext_dev(model="acme/tiny-kontext", steps=2, resolution=64, dtype="float32",
                                      device="cpu", auto_resize=False)
    described = editor.describe()
    assert described["model"] == "acme/tiny-kontext" and described["revision"] == COMMIT
    assert described["version"] == f"acme/tiny-kontext@{COMMIT}"
    result = editor.edit(EditRequest(gradient_image(2, size=64), "add a hat", "f", "s", 1, 9))
    assert result.outcome is Outcome.OK, result.reason


def test_a_model_missing_from_the_cache_names_the_repository_and_the_command() -> None:
    with pytest.raises(ConfigError) as caught:
        editors.flux2_dev()  # the default: black-forest-labs/FLUX.2-dev, not in the (empty) test cache
    message = str(caught.value)
    assert "black-forest-labs/FLUX.2-dev" in message and "hf download black-forest-labs/FLUX.2-dev" in message
    assert "HF_HUB_OFFLINE" in message


def test_downloads_stay_off_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    calls: list[dict[str, Any]] = []

    def fake_snapshot_download(repo_id: str, **kwargs: Any) -> str:
        calls.append(kwargs)
        from huggingface_hub.errors import LocalEntryNotFoundError

        raise LocalEntryNotFoundError("not cached")

    monkeypatch.setattr("huggingface_hub.snapshot_download", fake_snapshot_download)
    with pytest.raises(ConfigError, match="allow_download: false"):
        ModelSource.locate("acme/absent", index_file="model_index.json")
    with pytest.raises(ConfigError):
        ModelSource.locate("acme/absent", index_file="model_index.json", allow_download=True)
    assert [c["local_files_only"] for c in calls] == [True, False]


@pytest.mark.parametrize("model", ["", "/no/such/dir", "not-a-repo-id", "a/b/c"])
def test_nonsense_model_values_are_refused(model: str) -> None:
    with pytest.raises(ConfigError):
        ModelSource.locate(model, index_file="model_index.json")


def test_a_directory_without_model_index_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="model_index.json not found"):
        editors.instruct_pix2pix(model=str(tmp_path))


def test_a_missing_tokenizer_folder_fails_instead_of_loading_a_2_token_tokenizer(
        tiny_model: Callable[[str], Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model("instruct_pix2pix"), broken)
    shutil.rmtree(broken / "tokenizer")
    editor = editors.instruct_pix2pix(model=str(broken), steps=2, resolution=64, dtype="float32", device="cpu")
    result = editor.edit(EditRequest(gradient_image(1), "add a hat", "f", "s", 1, 1))
    assert result.outcome is Outcome.FAILED
    assert "tokenizer" in result.reason and "incomplete download" in result.reason


def test_a_two_token_tokenizer_is_caught_after_loading() -> None:
    class Pipe:
        components = {"tokenizer": ["<unk>", "<pad>"], "text_encoder": object()}

    source = ModelSource("acme/x", Path("."), None, "h", {})
    with pytest.raises(ConfigError, match="2 tokens"):
        loading.check_tokenizers(Pipe(), source)


def step1x_dir(tmp_path: Path) -> Path:
    (tmp_path / "step1x").mkdir()
    (tmp_path / "step1x" / "model_index.json").write_text('{"_class_name": "Step1XEditPipelineV1P2"}')
    return tmp_path / "step1x"


def test_step1x_without_its_pipeline_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Step1XEditPipelineV1P2.*step1xedit_v1p2"):
        editors.step1x_edit(model=str(step1x_dir(tmp_path)))


def test_step1x_arguments_reach_a_stand_in_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Released diffusers has no Step1X pipeline, so a stand-in with its interface checks the
    mapping: one request per call, true CFG, size_level, and ``final_images`` preferred."""
    import diffusers
    from PIL import Image

    seen: list[dict[str, Any]] = []

    class StandIn:
        @classmethod
        def from_pretrained(cls, path: Path, **kwargs: Any) -> StandIn:
            return cls()

        def to(self, device: str) -> StandIn:
            return self

        def set_progress_bar_config(self, **kwargs: Any) -> None:
            pass

        def __call__(self, **kwargs: Any) -> Any:
            seen.append(kwargs)
            return type("Out", (), {"images": [None], "final_images": [Image.new("RGB", (32, 32))]})()

    monkeypatch.setattr(diffusers, "Step1XEditPipelineV1P2", StandIn, raising=False)
    editor = editors.step1x_edit(model=str(step1x_dir(tmp_path)), resolution=64, batch_size=8,
                                 dtype="float32", device="cpu")
    assert editor.batch_size == 1 and editor.limits.max_concurrency == 1
    result = editor.edit(EditRequest(gradient_image(1), "add a hat", "f", "s", 1, 1))
    assert result.outcome is Outcome.OK, result.reason
    (call,) = seen
    assert call["num_inference_steps"] == 28 and call["true_cfg_scale"] == 6.0 and call["size_level"] == 64
    assert call["prompt"] == "add a hat" and call["image"].size == (64, 64)
    assert call["generator"].initial_seed() == 42  # the paper's fixed seed
