"""Helpers for plugins that run local models (the diffusers editors, the transformers judge):
finding a model in a local directory or the Hugging Face cache (never a surprise download),
and loading pieces of it.

The core imports no ML framework (a lint-imports contract, function-level imports included),
so a helper that needs one is handed the framework's object by its caller:
``ModelSource.image_only_processor(getattr(transformers, name), ...)``, ``ModelSource.torch_dtype(torch, name)``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from faceedit_bench.errors import ConfigError

#: The weight dtypes the local-model plugins accept, by their torch names.
DTYPES = ("bfloat16", "float16", "float32")
_SNAPSHOT = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/(?P<commit>[0-9a-f]{40})$")


def image_only_processor(base: type, tokenizer: Any, image_processor: Any) -> Any:
    """A Qwen-VL processor without its video half. transformers builds the video half only with
    torchvision (which this project avoids); editing and judging need only the image half.
    ``base`` is the processor class, e.g. ``transformers.Qwen2VLProcessor``."""

    class ImageOnlyProcessor(base):  # type: ignore[misc, valid-type]
        def check_argument_for_proper_class(self, argument_name: str, argument: Any) -> Any:
            if argument_name == "video_processor" and argument is None:
                return None
            return super().check_argument_for_proper_class(argument_name, argument)

    ImageOnlyProcessor.__name__ = ImageOnlyProcessor.__qualname__ = f"ImageOnly{base.__name__}"
    return ImageOnlyProcessor(image_processor=image_processor, tokenizer=tokenizer,
                              chat_template=getattr(tokenizer, "chat_template", None))


def check_dtype(name: str) -> str:
    """``name`` when it is one of :data:`DTYPES` (checked at construction, before torch loads)."""
    if name not in DTYPES:
        raise ValueError(f"dtype {name!r} is not one of {', '.join(DTYPES)}")
    return name


def torch_dtype(torch: Any, name: str) -> Any:
    """``torch.<name>`` for a name in :data:`DTYPES`; ``torch`` is the caller's torch module."""
    return getattr(torch, check_dtype(name))


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None`` when it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are, and the helpers of loading them (:meth:`check_dtype`, :meth:`torch_dtype`,
    :meth:`image_only_processor`, :meth:`package_version`). ``path`` is provenance, never part of an identity."""

    name: str  # the repository id, or the directory name of a local model
    path: Path
    revision: str | None  # commit hash when known (Hugging Face cache snapshot)
    config_hash: str  # sha256 over the small JSON config files (weights are too large to hash)
    index: dict[str, Any]  # the index file: model_index.json (diffusers) or config.json (transformers)

    check_dtype = staticmethod(check_dtype)
    torch_dtype = staticmethod(torch_dtype)
    image_only_processor = staticmethod(image_only_processor)
    package_version = staticmethod(package_version)

    @classmethod
    def locate(cls, model: str, *, index_file: str, revision: str | None = None,
               allow_download: bool = False) -> ModelSource:
        """Where the model ``model`` lies: ``model`` itself when it is a directory, else the snapshot of
        repository ``model`` in the Hugging Face cache (downloaded only with ``allow_download`` and not
        offline; a missing model is a ConfigError saying how to get it). ``index_file`` is the JSON
        file every copy of the model has."""
        if not model or not str(model).strip():
            raise ConfigError("model is empty: set it to a Hugging Face repository id or a local directory")
        candidate = Path(model).expanduser()
        if candidate.is_dir():
            return _source(candidate.resolve(), index_file, name=None)
        if candidate.is_absolute() or str(model).startswith((".", "~")) or str(model).count("/") != 1:
            raise ConfigError(f"model {model!r} is not a directory, nor a repository id of the form org/name")
        return _source(_snapshot(str(model), revision, allow_download), index_file, name=str(model))

    def describe(self) -> dict[str, Any]:
        """What identifies the model: its name, revision and config hash (never its path)."""
        return {"model": self.name, "revision": self.revision, "config_hash": self.config_hash}

    def how_to_get(self) -> str:
        """How a user gets this model onto the machine (:func:`how_to_get`), for an error about its files."""
        return how_to_get(self.name)


def how_to_get(repo_id: str) -> str:
    """How a user gets the Hugging Face model ``repo_id`` onto this machine (the end of a missing-model error)."""
    return (f"download it once with `hf download {repo_id}` (huggingface_hub >= 1.0; older: "
            f"`huggingface-cli download {repo_id}`), or set the model parameter to a local directory "
            "holding the model")


def _snapshot(repo_id: str, revision: str | None, allow_download: bool) -> Path:
    # huggingface_hub is a dependency of every plugin that locates models, not of the core.
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    local_only = hf_offline() or not allow_download
    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=local_only))
    except LocalEntryNotFoundError as exc:
        why = "HF_HUB_OFFLINE is set" if hf_offline() else "downloads are off (allow_download: false)"
        raise ConfigError(f"model {repo_id!r}{'@' + revision if revision else ''} is not in the Hugging Face "
                          f"cache and {why}: {how_to_get(repo_id)}") from exc


def _source(path: Path, index_file: str, name: str | None) -> ModelSource:
    index_path = path / index_file
    match = _SNAPSHOT.search(path.as_posix())
    repo = f"{match['org']}/{match['name']}" if match else None
    label = name or repo or path.name
    if not index_path.is_file():
        hint = how_to_get(repo or name) if (repo or name) else "point the model parameter at the model's directory"
        raise ConfigError(f"{index_file} not found in {path} (model {label!r}): an incomplete download or the "
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


def hf_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for no Hugging Face Hub access."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
