"""Checks of single settings, each refusal a :class:`ConfigError` that names the key, the value and what is
allowed (``run.shard=5/4 is not allowed: it must be ...``); and the parsers of settings given as text: a
shard ``i/n`` and the command line's ``key=value`` pairs. The config schemas, the CLI and every plugin's
settings use them (protocol authors through :mod:`faceedit_bench.api.protocol`)."""

from __future__ import annotations

import json
from typing import Any

from faceedit_bench.errors import ConfigError


def _show(value: Any) -> str:
    return json.dumps(value, default=str) if value is None or isinstance(value, (bool, list, dict)) else str(value)


def parse_shard(value: Any, key: str = "run.shard") -> tuple[int, int]:
    """``(i, n)`` of a shard spec ``"i/n"``, else a :class:`ConfigError` saying how to write one."""
    text = str(value).strip()
    index, sep, count = text.partition("/")
    if not sep or not index.strip().isdigit() or not count.strip().isdigit():
        reject(key, value, 'a shard "i/n": shard i of n, counting from 0 (e.g. run.shard=0/4 ... run.shard=3/4)')
    i, n = int(index), int(count)
    if n < 1 or i >= n:
        reject(key, value, f"a shard i/n with n >= 1 and 0 <= i < n (for {max(n, 1)} shards: "
                           f"run.shard=0/{max(n, 1)} ... run.shard={max(n, 1) - 1}/{max(n, 1)})")
    return i, n


def reject(key: str, value: Any, allowed: str) -> None:
    """Refuse ``key=value``: a :class:`ConfigError` that names the key, the value and what is allowed."""
    raise ConfigError(f"{key}={_show(value)} is not allowed: it must be {allowed}.")


def check_whole(key: str, value: Any, minimum: int, *, none: str | None = None, zero: str | None = None) -> None:
    if value is None and none is not None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        allowed = f"a whole number >= {minimum}"
        if zero:
            allowed += f" (0: {zero})"
        if none:
            allowed += f", or null for {none}"
        reject(key, value, allowed)


def check_fraction(key: str, value: Any, example: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        reject(key, value, f"a number strictly between 0 and 1 ({example})")


def check_positive(key: str, value: Any, unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        reject(key, value, f"a number > 0 ({unit})")


def check_flag(key: str, value: Any) -> None:
    if not isinstance(value, bool):
        reject(key, value, "true or false")


def key_values(items: list[str], flag: str) -> dict[str, Any]:
    """Command-line ``key=value`` pairs (``-p model=gpt-4o``), each value read as YAML."""
    import yaml

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {item!r}: write key=value, e.g. {flag} model=gpt-4o")
        out[key] = yaml.safe_load(value)
    return out
