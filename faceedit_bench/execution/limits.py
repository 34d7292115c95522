"""How calls to one provider may be made: :class:`CallLimits` and their reading from a component's config."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.endpoints import Endpoint


@dataclass(frozen=True)
class CallLimits:
    """How calls to one provider may be made. Components that share a ``provider_key``
    (e.g. an editor and a judge on the same account) share one set of limits: the
    first component to register a key decides them. ``max_concurrency`` bounds attempts in
    flight (a call waiting out its backoff holds none): for a submit-then-poll provider, its
    active tasks."""

    provider_key: str
    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    tokens_per_call: int = 0  # reserved against tokens_per_minute before each attempt
    max_attempts: int = 6
    timeout_s: float = 120.0
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    # Keep the concurrency slot while a call waits out its backoff (off: the slot serves other
    # calls meanwhile). On, calls take strict turns: a reproducible order of calls, for a provider
    # that counts a waiting client against its concurrency or for scripted fault tests.
    keep_slot_in_backoff: bool = False
    # Where the calls go and how that was chosen (set by the component, never configured as a
    # limit): named when the endpoint cannot be reached, and recorded in the report's calls.
    endpoint: str = ""
    endpoint_source: str = ""

    def __post_init__(self) -> None:
        for name in ("max_concurrency", "max_attempts"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed: it must be at least 1")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name}={value!r} is not allowed: it must be positive (or null for no limit)")


LIMIT_FIELDS = tuple(name for name in CallLimits.__dataclass_fields__
                     if name not in ("provider_key", "endpoint", "endpoint_source"))


def limits_from_config(limits: Mapping[str, Any], defaults: Mapping[str, Any], *, provider_key: str,
                       what: str, endpoint: Endpoint | None = None) -> CallLimits:
    """``CallLimits`` from a component's ``limits`` config mapping; keys left out keep the
    component's ``defaults``. The provider key and the endpoint are the component's own, never
    configured as limits."""
    if not isinstance(limits, Mapping):
        raise ConfigError(f"{what}: limits must be a mapping of {', '.join(LIMIT_FIELDS)}, not {limits!r}")
    unknown = sorted(set(limits) - set(LIMIT_FIELDS))
    if unknown:
        hint = (" (provider_key is derived by the component from its endpoint, key variable and model)"
                if "provider_key" in unknown else "")
        close = {k: difflib.get_close_matches(k, LIMIT_FIELDS, n=1, cutoff=0.6) for k in unknown}
        named = ", ".join(f"limits.{k}" + (f" (did you mean limits.{close[k][0]}?)" if close[k] else "")
                          for k in unknown)
        raise ConfigError(f"{what}: unknown limits key(s) {named}{hint}. Accepted: {', '.join(LIMIT_FIELDS)}")
    where = {"endpoint": endpoint.url, "endpoint_source": endpoint.source} if endpoint else {}
    try:
        return CallLimits(provider_key=provider_key, **{**defaults, **limits}, **where)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: invalid limits: {exc}") from exc
