"""Loading a diffusers pipeline found by ``faceedit_bench.api.ModelSource.locate``.

``ModelSource.locate`` runs in the editor's constructor (cheap: reads small JSON files), so a missing
model fails before any work with the repository id and the command that fetches it. Loading runs
on the first batch and does the heavy part (weights, device, offload); the checks here catch an
incomplete download that transformers would otherwise load silently.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

from faceedit_bench.api import ConfigError, ModelSource

#: A loaded tokenizer this small is the silent offline fallback of transformers, not a vocabulary.
_MIN_TOKENIZER_SIZE = 3


def check_components(source: ModelSource) -> None:
    """Every component named in model_index.json has its folder: a missing tokenizer folder
    would otherwise load as transformers' silent 2-token offline fallback."""
    missing = [name for name, spec in source.index.items()
               if not name.startswith("_") and isinstance(spec, list) and spec[0] is not None
               and not (source.path / name).is_dir()]
    if missing:
        raise ConfigError(f"model {source.name!r} at {source.path} lacks the component folder(s) "
                          f"{', '.join(missing)}: an incomplete download; {source.how_to_get()}")


def check_tokenizers(pipe: Any, source: ModelSource) -> None:
    for name, component in getattr(pipe, "components", {}).items():
        if "token" not in name and "processor" not in name:
            continue
        tokenizer = getattr(component, "tokenizer", component)  # a processor holds its tokenizer
        size = len(tokenizer) if hasattr(tokenizer, "__len__") else None
        if size is not None and size < _MIN_TOKENIZER_SIZE:
            raise ConfigError(f"{name} of {source.name!r} loaded with {size} tokens: its files are missing "
                              f"(transformers falls back silently offline); {source.how_to_get()}")


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
    return ModelSource.image_only_processor(getattr(transformers, processor_class), tokenizer, image_processor)
