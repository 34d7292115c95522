"""Statistics computed once: a pure, seeded statistic's result is looked up by the hash of its inputs.

:func:`cached_statistic` makes a statistic function cached while a cache is in use
(:func:`caching_statistics`, around the report stage); elsewhere it is the plain function. The key is the
sha256 of the statistic's kind and version, every argument's content (arrays by dtype, shape and bytes;
dataclasses by their fields), and the versions of the libraries whose numbers it uses, so any change of
input, setting, seed or library computes it anew.

A cached result is exactly the computed one: results are stored as JSON (floats round-trip exactly), and
one that would not come back identical (a tuple, a numpy scalar, NaN) is never stored, only recomputed.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import struct
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from typing import Any, Protocol, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])


class Cache(Protocol):
    def get(self, key: str) -> str | None: ...

    def put(self, key: str, kind: str, value: str) -> None: ...


_ACTIVE: contextvars.ContextVar[Cache | None] = contextvars.ContextVar("faceedit_statistics_cache", default=None)
#: Distributions whose numbers (or drawings) a statistic may use: a new version of one computes every statistic anew.
LIBRARIES = ("faceedit-bench", "numpy", "scipy", "statsmodels", "matplotlib", "pillow")


@contextmanager
def caching_statistics(cache: Cache | None) -> Iterator[None]:
    """Within the block (and in threads started through :func:`in_context`), cached statistics use ``cache``."""
    token = _ACTIVE.set(cache)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_cache() -> Cache | None:
    return _ACTIVE.get()


def in_context(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run in a copy of the caller's context: for a thread pool's tasks (threads start with an empty one)."""
    context = contextvars.copy_context()
    return lambda *args, **kwargs: context.copy().run(fn, *args, **kwargs)


@functools.cache
def library_versions() -> tuple[str, ...]:
    out = []
    for name in LIBRARIES:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}: none")
    return tuple(out)


def statistic_key(kind: str, arguments: Mapping[str, Any]) -> str:
    digest = hashlib.sha256()
    _feed(digest, [kind, list(library_versions())])
    _feed(digest, dict(arguments))
    return digest.hexdigest()


def _feed(digest: Any, obj: Any) -> None:
    """Hash ``obj``'s content, with its type, unambiguously (every part framed by a tag and a length)."""
    def tagged(tag: bytes, data: bytes) -> None:
        digest.update(tag + struct.pack("<Q", len(data)) + data)

    if obj is None or isinstance(obj, (bool, int, str)):
        tagged(b"j", json.dumps(obj).encode())
    elif isinstance(obj, bytes):
        tagged(b"y", obj)
    elif isinstance(obj, float):
        tagged(b"f", struct.pack("<d", obj))
    elif isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        array = np.ascontiguousarray(obj)
        if array.dtype == object:
            _feed(digest, array.tolist())
            return
        tagged(b"a", f"{array.dtype.str}{array.shape}".encode())
        tagged(b"b", array.tobytes())
    elif isinstance(obj, (list, tuple)):
        tagged(b"l" if isinstance(obj, list) else b"t", str(len(obj)).encode())
        for item in obj:
            _feed(digest, item)
    elif isinstance(obj, Mapping):
        tagged(b"m", str(len(obj)).encode())
        for key in obj:  # in order: a statistic may read its groups in the order given
            _feed(digest, key)
            _feed(digest, obj[key])
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        tagged(b"d", type(obj).__qualname__.encode())
        _feed(digest, {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    else:
        raise Unkeyable(type(obj).__name__)


class Unkeyable(TypeError):
    """An argument whose content cannot be hashed (a function, an open file): the statistic is computed."""


def round_trips(value: Any, decoded: Any) -> bool:
    """Whether ``decoded`` (``value`` through JSON) is ``value`` exactly: same types, same floats."""
    if type(value) is not type(decoded):
        return False
    if isinstance(value, float):
        return value == decoded or (math.isnan(value) and math.isnan(decoded))
    if isinstance(value, list):
        return len(value) == len(decoded) and all(round_trips(a, b) for a, b in zip(value, decoded))
    if isinstance(value, dict):
        return (list(value) == list(decoded) and all(isinstance(k, str) for k in value)
                and all(round_trips(value[k], decoded[k]) for k in value))
    return value is None or isinstance(value, (bool, int, str)) and value == decoded


def lookup_or_compute(kind: str, arguments: Mapping[str, Any], compute: Callable[[], Any]) -> Any:
    """``compute()``, or its stored result for these ``arguments`` when the active cache has it."""
    cache = _ACTIVE.get()
    if cache is None:
        return compute()
    try:
        key = statistic_key(kind, arguments)
    except Unkeyable:
        return compute()
    stored = cache.get(key)
    if stored is not None:
        return json.loads(stored)
    with caching_statistics(None):  # the statistics it uses are kept with it, not apart
        value = compute()
    text = json.dumps(value, separators=(",", ":"))
    if round_trips(value, json.loads(text)):
        cache.put(key, kind, text)
    return value


def cached_statistic(kind: str, version: int = 1) -> Callable[[F], F]:
    """Decorate a pure, deterministic statistic: its result is kept under ``kind``, ``version`` (raise it when
    the function's numbers change) and its bound arguments (defaults applied)."""
    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _ACTIVE.get() is None:
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return lookup_or_compute(f"{kind}@{version}", bound.arguments, lambda: fn(*args, **kwargs))

        wrapper.uncached = fn  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
