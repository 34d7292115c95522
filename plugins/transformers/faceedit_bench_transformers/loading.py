"""Loading a vision-language model found by ``faceedit_bench.api.ModelSource.locate`` (which the
diffusers plugin shares): its device map and its processor."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from faceedit_bench.api import ConfigError, ModelSource


def device_map(device: str) -> str:
    """``auto``: spread over the CUDA devices (accelerate) when there are any, else the CPU."""
    import torch

    if device == "auto":
        return "auto" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but torch sees no CUDA device; use device: cpu or auto")
    return device


def load_processor(path: Path, processor_class: str) -> Any:
    """The model's processor. Without torchvision transformers cannot build a Qwen-VL processor
    (its video half needs it) and ``AutoProcessor`` silently returns a bare tokenizer instead;
    judging needs only the image half, so it is built from the tokenizer and image processor."""
    import transformers
    from transformers import AutoImageProcessor, AutoProcessor, AutoTokenizer

    if importlib.util.find_spec("torchvision") is not None:
        processor = AutoProcessor.from_pretrained(path, local_files_only=True)
        if not hasattr(processor, "image_processor"):
            raise ConfigError(f"{path} holds no image processor (preprocessor_config.json)")
        return processor
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    if len(tokenizer) < 3:  # transformers' silent offline fallback, not a vocabulary
        raise ConfigError(f"the tokenizer in {path} loaded with {len(tokenizer)} tokens: files are missing")
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = _processor_chat_template(path)
    return ModelSource.image_only_processor(getattr(transformers, processor_class), tokenizer,
                                AutoImageProcessor.from_pretrained(path, local_files_only=True))


def _processor_chat_template(path: Path) -> str | None:
    if (path / "chat_template.jinja").is_file():
        return (path / "chat_template.jinja").read_text()
    if (path / "chat_template.json").is_file():
        return json.loads((path / "chat_template.json").read_text()).get("chat_template")
    return None
