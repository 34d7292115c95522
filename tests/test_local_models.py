"""Helpers the local-model plugins share (faceedit_bench.execution.local_models), without any ML framework."""

from __future__ import annotations

import shutil
from types import SimpleNamespace
from typing import Any

import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.local_models import (
    ModelSource,
    check_dtype,
    hf_offline,
    image_only_processor,
    package_version,
    torch_dtype,
)


class VLProcessor:
    """Shaped like a transformers ProcessorMixin: it checks every attribute, a missing video half included."""

    def __init__(self, image_processor: Any = None, tokenizer: Any = None, video_processor: Any = None,
                 chat_template: str | None = None) -> None:
        for name, value in (("image_processor", image_processor), ("tokenizer", tokenizer),
                            ("video_processor", video_processor)):
            self.check_argument_for_proper_class(name, value)
        self.image_processor, self.tokenizer, self.chat_template = image_processor, tokenizer, chat_template

    def check_argument_for_proper_class(self, argument_name: str, argument: Any) -> Any:
        if argument is None:
            raise TypeError(f"{argument_name} is required")
        return type(argument)


def test_image_only_processor_builds_without_the_video_half():
    with pytest.raises(TypeError, match="video_processor is required"):
        VLProcessor(image_processor=object(), tokenizer=object())
    tokenizer = SimpleNamespace(chat_template="{{ messages }}")
    processor = image_only_processor(VLProcessor, tokenizer, "images")
    assert isinstance(processor, VLProcessor) and type(processor).__name__ == "ImageOnlyVLProcessor"
    assert (processor.tokenizer, processor.image_processor, processor.chat_template) == (tokenizer, "images",
                                                                                         "{{ messages }}")
    with pytest.raises(TypeError, match="tokenizer is required"):  # only the video half may be missing
        image_only_processor(VLProcessor, None, "images")


def test_dtypes_are_checked_before_torch_is_needed():
    assert check_dtype("bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="dtype 'float8' is not one of bfloat16, float16, float32"):
        check_dtype("float8")
    fake_torch = SimpleNamespace(float16="torch.float16")
    assert torch_dtype(fake_torch, "float16") == "torch.float16"
    with pytest.raises(ValueError, match="'fp16'"):
        torch_dtype(fake_torch, "fp16")


@pytest.mark.parametrize(("value", "offline"), [("1", True), (" TRUE ", True), ("on", True), ("0", False),
                                                ("", False), (None, False)])
def test_hf_offline_reads_the_hub_variable(monkeypatch, value, offline):
    if value is None:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    else:
        monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert hf_offline() is offline


def test_package_version():
    assert package_version("pytest") == pytest.__version__
    assert package_version("no-such-distribution-faceedit") is None


def test_a_model_source_is_located_in_a_local_directory_and_a_cache_snapshot(tmp_path):
    model = tmp_path / "tiny-vlm"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "qwen2_5_vl", "_commit_hash": null}')
    source = ModelSource.locate(str(model), index_file="config.json")
    assert (source.name, source.path, source.revision) == ("tiny-vlm", model, None)
    assert source.index["model_type"] == "qwen2_5_vl" and len(source.config_hash) == 16
    assert source.describe() == {"model": "tiny-vlm", "revision": None, "config_hash": source.config_hash}

    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "hub" / "models--acme--tiny" / "snapshots" / commit
    shutil.copytree(model, snapshot)
    cached = ModelSource.locate(str(snapshot), index_file="config.json")
    assert (cached.name, cached.revision, cached.config_hash) == ("acme/tiny", commit, source.config_hash)
    (snapshot / "generation_config.json").write_text("{}")
    assert ModelSource.locate(str(snapshot), index_file="config.json").config_hash != source.config_hash


@pytest.mark.parametrize("model", ["", "  ", "/no/such/dir", "not-a-repo-id", "a/b/c", "./x/y"])
def test_locating_a_model_refuses_nonsense(model):
    with pytest.raises(ConfigError, match="model"):
        ModelSource.locate(model, index_file="config.json")


def test_a_directory_without_its_index_file_says_how_to_fix_it(tmp_path):
    with pytest.raises(ConfigError, match="model_index.json not found in .*point the model parameter"):
        ModelSource.locate(str(tmp_path), index_file="model_index.json")
