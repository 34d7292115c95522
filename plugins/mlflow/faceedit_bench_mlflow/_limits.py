"""MLflow's limits on keys, values and batches, and this plugin's policy for each.

Pure functions without an ``mlflow`` import. The numbers are those of
``mlflow.utils.validation`` in MLflow 3.17 (``tests/test_limits.py`` checks they still agree).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

MAX_PARAM_VALUE = 6000  # MAX_PARAM_VAL_LENGTH
MAX_TAG_VALUE = 8000  # MAX_TAG_VAL_LENGTH
MAX_KEY = 250  # MAX_ENTITY_KEY_LENGTH (params, tags and metrics)
PARAMS_PER_BATCH = 100  # MAX_PARAMS_TAGS_PER_BATCH (tags too)
METRICS_PER_BATCH = 1000  # MAX_METRICS_PER_BATCH
MAX_DATASET_DIGEST = 36  # the datasets table's digest column (String(36))
#: Our own cap on one batch's JSON size, well under the REST API's 1 MB per request.
BATCH_JSON_BYTES = 500_000

_NOT_MLFLOW_KEY = re.compile(r"[^/\w.\- :]")  # MLflow accepts these (POSIX)
_NOT_SNAKE = re.compile(r"[^0-9A-Za-z_]+")  # metric keys: nothing a search filter must quote
#: Last key segments whose values are never logged (a config may interpolate ${oc.env:API_KEY}).
_SECRET = re.compile(r"(^|_)(api_?key|token|secret|password|passwd|credentials?|auth)($|_)", re.IGNORECASE)
REDACTED = "<redacted>"

T = TypeVar("T")


def digest(text: str) -> str:
    """First 8 hex digits of the SHA-256 of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def truncate(value: str, limit: int) -> tuple[str, bool]:
    """``value`` cut to ``limit`` characters, ending ``…[truncated sha256:<8 hex>]`` of the
    full value; the flag says whether it was cut."""
    if len(value) <= limit:
        return value, False
    suffix = f"…[truncated sha256:{digest(value)}]"
    return value[: limit - len(suffix)] + suffix, True


def _shorten(key: str, original: str) -> str:
    return key if len(key) <= MAX_KEY else f"{key[: MAX_KEY - 9]}_{digest(original)}"


def param_key(key: str) -> str:
    """A key MLflow accepts for a param or tag: bad characters become ``_``, names that are
    not unique as paths (``a//b``, ``../x``) lose their slashes, long keys end in a hash."""
    safe = _NOT_MLFLOW_KEY.sub("_", key)
    norm = posixpath.normpath(safe) if safe else ""
    if norm != safe or safe.startswith(("/", "..")) or safe in ("", "."):
        safe = safe.replace("/", "_")
        if safe.startswith("..") or safe in ("", "."):
            safe = "_" + safe
    return _shorten(safe, key)


def metric_key(key: str) -> str:
    """A snake_case metric key: runs of other characters become ``_``; never empty and
    never starting with a digit, so ``metrics.<key>`` needs no quoting in searches."""
    safe = _NOT_SNAKE.sub("_", key).strip("_")
    if not safe or safe[0].isdigit():
        safe = f"m_{safe}" if safe else f"m_{digest(key)}"
    return _shorten(safe, key)


def is_secret(key: str) -> bool:
    """Whether the last segment of a dotted/slashed key names a secret (``editor.api_key``)."""
    return bool(_SECRET.search(re.split(r"[./]", key)[-1]))


def unique_keys(keys: Iterable[str], make_safe: Callable[[str], str] = param_key) -> dict[str, str]:
    """Map each original key to a safe key; two keys that become one get a hash suffix."""
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for key in keys:
        safe = make_safe(key)
        if safe in used:
            safe = f"{safe[: MAX_KEY - 9]}_{digest(key)}"
        mapping[key] = safe
        used.add(safe)
    return mapping


def batches(items: Iterable[tuple[str, T]], size: int) -> Iterator[list[tuple[str, T]]]:
    """Split ``(key, value)`` pairs into batches of at most ``size`` items and about
    :data:`BATCH_JSON_BYTES` of JSON."""
    batch: list[tuple[str, T]] = []
    used = 0
    for key, value in items:
        cost = len(json.dumps(key)) + len(json.dumps(value)) + 64
        if batch and (len(batch) >= size or used + cost > BATCH_JSON_BYTES):
            yield batch
            batch, used = [], 0
        batch.append((key, value))
        used += cost
    if batch:
        yield batch


def redact_uri(uri: str) -> str:
    """``uri`` with the password of a ``user:password@host`` part removed."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host))


def one_line(error: BaseException, limit: int = 500) -> str:
    """``Type: first line of the message``, at most ``limit`` characters."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
