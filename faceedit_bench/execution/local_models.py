"""Helpers for plugins that run local models (the diffusers editors, the transformers judge).

The core imports no ML framework (a lint-imports contract, function-level imports included),
so a helper that needs one is handed the framework's object by its caller:
``image_only_processor(getattr(transformers, name), ...)``, ``torch_dtype(torch, name)``.
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from typing import Any

#: The weight dtypes the local-model plugins accept, by their torch names.
DTYPES = ("bfloat16", "float16", "float32")


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


def hf_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for no Hugging Face Hub access."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None`` when it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None
