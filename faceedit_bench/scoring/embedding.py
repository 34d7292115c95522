"""Shared plumbing for face-embedder plugins: model-file identity, and
pickling that carries configuration but never loaded models (the score stage sends an
embedder to each worker process, which loads its own models on first use)."""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from typing import Any


def files_digest(*paths: str) -> str:
    """sha256 over the sha256 of each model file: the model part of an embedder version."""
    digest = hashlib.sha256()
    for path in paths:
        stat = os.stat(path)
        digest.update(_sha256_cached(os.path.realpath(path), stat.st_size, stat.st_mtime_ns).encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=32)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file; size and mtime are part of the key so a replaced file is rehashed."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class LazyModels:
    """Mixin: ``self._models`` is loaded on first use under ``self._lock`` and dropped
    when pickled. :meth:`files_digest` hashes the model files the models load from (for ``describe()``)."""

    files_digest = staticmethod(files_digest)

    _models: Any = None

    def __init__(self) -> None:
        self._models = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_models"] = None
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
