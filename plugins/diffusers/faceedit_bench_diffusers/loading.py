"""Finding and loading a diffusers pipeline: a local directory or the Hugging Face cache, never
a surprise download.

``locate`` runs in the editor's constructor (cheap: reads small JSON files), so a missing model
fails before any work with the repository id and the command that fetches it. ``load`` runs on
the first batch and does the heavy part (weights, device, offload).
"""

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
#: A loaded tokenizer this small is the silent offline fallback of transformers, not a vocabulary.
_MIN_TOKENIZER_SIZE = 3


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are. ``path`` is provenance, never part of an identity."""

    name: str  # the repository id, or the directory name of a local model
    path: Path
    revision: str | None  # commit hash when known (Hugging Face cache snapshot)
    config_hash: str  # sha256 over the small JSON config files (weights are too large to hash)
    index: dict[str, Any]  # model_index.json (diffusers) or config.json (transformers)

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "revision": self.revision, "config_hash": self.config_hash}


def how_to_get(repo_id: str) -> str:
    return (f"download it once with `hf download {repo_id}` (huggingface_hub >= 1.0; older: "
            f"`huggingface-cli download {repo_id}`), or set the model parameter to a local directory "
            "holding the model")


def locate(model: str, *, index_file: str = "model_index.json", revision: str | None = None,
           allow_download: bool = False) -> ModelSource:
    """The model's local directory: ``model`` itself when it is a directory, else the snapshot of
    repository ``model`` in the Hugging Face cache (downloaded only with ``allow_download`` and
    not offline)."""
    if not model or not str(model).strip():
        raise ModelNotFoundError("model is empty: set it to a Hugging Face repository id or a local directory")
    candidate = Path(model).expanduser()
    if candidate.is_dir():
        return _source(candidate.resolve(), index_file, name=None)
    if candidate.is_absolute() or str(model).startswith((".", "~")) or str(model).count("/") != 1:
        raise ModelNotFoundError(f"model {model!r} is not a directory, nor a repository id of the form org/name")
    return _source(_snapshot(str(model), revision, allow_download), index_file, name=str(model))


def _snapshot(repo_id: str, revision: str | None, allow_download: bool) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    local_only = hf_offline() or not allow_download
    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=local_only))
    except LocalEntryNotFoundError as exc:
        why = "HF_HUB_OFFLINE is set" if hf_offline() else "downloads are off (allow_download: false)"
        raise ModelNotFoundError(f"model {repo_id!r}{'@' + revision if revision else ''} is not in the Hugging Face "
                            f"cache and {why}: {how_to_get(repo_id)}") from exc


def _source(path: Path, index_file: str, name: str | None) -> ModelSource:
    index_path = path / index_file
    match = _SNAPSHOT.search(path.as_posix())
    repo = f"{match['org']}/{match['name']}" if match else None
    label = name or repo or path.name
    if not index_path.is_file():
        hint = how_to_get(repo or name) if (repo or name) else "point the model parameter at the model's directory"
        raise ModelNotFoundError(f"{index_file} not found in {path} (model {label!r}): an incomplete download or the "
                            f"wrong directory; {hint}")
    index = json.loads(index_path.read_text())
    return ModelSource(label, path, match["commit"] if match else index.get("_commit_hash"),
                       config_hash(path), index)


def config_hash(path: Path) -> str:
    """sha256 over every small JSON file of a model directory (names and bytes), sorted."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*.json") if p.stat().st_size < 4_000_000):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def check_components(source: ModelSource) -> None:
    """Every component named in model_index.json has its folder: a missing tokenizer folder
    would otherwise load as transformers' silent 2-token offline fallback."""
    missing = [name for name, spec in source.index.items()
               if not name.startswith("_") and isinstance(spec, list) and spec[0] is not None
               and not (source.path / name).is_dir()]
    if missing:
        raise ModelNotFoundError(f"model {source.name!r} at {source.path} lacks the component folder(s) "
                            f"{', '.join(missing)}: an incomplete download; {how_to_get(source.name)}")


def check_tokenizers(pipe: Any, source: ModelSource) -> None:
    for name, component in getattr(pipe, "components", {}).items():
        if "token" not in name and "processor" not in name:
            continue
        tokenizer = getattr(component, "tokenizer", component)  # a processor holds its tokenizer
        size = len(tokenizer) if hasattr(tokenizer, "__len__") else None
        if size is not None and size < _MIN_TOKENIZER_SIZE:
            raise ModelNotFoundError(f"{name} of {source.name!r} loaded with {size} tokens: its files are missing "
                                     f"(transformers falls back silently offline); {how_to_get(source.name)}")


def dtype_keyword(diffusers_version: str) -> str:
    """diffusers 0.42 renamed ``torch_dtype`` to ``dtype``; forks of older releases (Step1X) need
    the old name, and a misspelt keyword would silently load float32."""
    major, minor = (int(part) for part in re.findall(r"\d+", diffusers_version)[:2])
    return "dtype" if (major, minor) >= (0, 42) else "torch_dtype"


def resolve_device(device: str) -> str:
    """``auto``: the first CUDA device when there is one, else the CPU."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but torch sees no CUDA device (torch {torch.__version__}); "
                         "use device: cpu or auto")
    return device


def has_torchvision() -> bool:
    return importlib.util.find_spec("torchvision") is not None


def load_image_only_processor(directory: Path, processor_class: str) -> Any:
    import transformers
    from transformers import AutoImageProcessor, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    image_processor = AutoImageProcessor.from_pretrained(directory, local_files_only=True)
    return image_only_processor(getattr(transformers, processor_class), tokenizer, image_processor)
