"""Finding and loading a vision-language model from a local directory or the Hugging Face
cache, never a surprise download. (The diffusers plugin has the same rules for pipelines;
each distribution keeps its own copy so neither depends on the other.)"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.api import ModelNotFoundError, hf_offline, image_only_processor

_SNAPSHOT = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/(?P<commit>[0-9a-f]{40})$")


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are. ``path`` is provenance, never part of an identity."""

    name: str  # the repository id, or the directory name of a local model
    path: Path
    revision: str | None  # commit hash when known
    config_hash: str  # sha256 over the small JSON config files (weights are too large to hash)
    config: dict[str, Any]  # config.json

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "revision": self.revision, "config_hash": self.config_hash}


def how_to_get(repo_id: str) -> str:
    return (f"download it once with `hf download {repo_id}` (older huggingface_hub: `huggingface-cli download "
            f"{repo_id}`), or set the model parameter to a local directory holding the model")


def locate(model: str, *, revision: str | None = None, allow_download: bool = False) -> ModelSource:
    """``model`` itself when it is a directory, else the cached snapshot of repository ``model``
    (downloaded only with ``allow_download`` and not offline)."""
    if not model or not str(model).strip():
        raise ModelNotFoundError("model is empty: set it to a Hugging Face repository id or a local directory")
    candidate = Path(model).expanduser()
    if candidate.is_dir():
        return _source(candidate.resolve(), None)
    if candidate.is_absolute() or str(model).startswith((".", "~")) or str(model).count("/") != 1:
        raise ModelNotFoundError(f"model {model!r} is not a directory, nor a repository id of the form org/name")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        path = snapshot_download(str(model), revision=revision, local_files_only=hf_offline() or not allow_download)
    except LocalEntryNotFoundError as exc:
        why = "HF_HUB_OFFLINE is set" if hf_offline() else "downloads are off (allow_download: false)"
        raise ModelNotFoundError(f"model {model!r} is not in the Hugging Face cache and {why}: "
                                 f"{how_to_get(str(model))}") from exc
    return _source(Path(path), str(model))


def _source(path: Path, name: str | None) -> ModelSource:
    match = _SNAPSHOT.search(path.as_posix())
    repo = f"{match['org']}/{match['name']}" if match else None
    label = name or repo or path.name
    if not (path / "config.json").is_file():
        hint = how_to_get(repo or name) if (repo or name) else "point the model parameter at the model's directory"
        raise ModelNotFoundError(f"config.json not found in {path} (model {label!r}): an incomplete download or "
                                 f"the wrong directory; {hint}")
    config = json.loads((path / "config.json").read_text())
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*.json") if p.stat().st_size < 4_000_000):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return ModelSource(label, path, match["commit"] if match else config.get("_commit_hash"),
                       digest.hexdigest()[:16], config)


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
            raise ModelNotFoundError(f"{path} holds no image processor (preprocessor_config.json)")
        return processor
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    if len(tokenizer) < 3:  # transformers' silent offline fallback, not a vocabulary
        raise ModelNotFoundError(f"the tokenizer in {path} loaded with {len(tokenizer)} tokens: files are missing")
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = _processor_chat_template(path)
    return image_only_processor(getattr(transformers, processor_class), tokenizer,
                                AutoImageProcessor.from_pretrained(path, local_files_only=True))


def _processor_chat_template(path: Path) -> str | None:
    if (path / "chat_template.jinja").is_file():
        return (path / "chat_template.jinja").read_text()
    if (path / "chat_template.json").is_file():
        return json.loads((path / "chat_template.json").read_text()).get("chat_template")
    return None
