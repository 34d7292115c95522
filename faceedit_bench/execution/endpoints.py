"""Where a hosted component's calls go, chosen the same way for every provider.

Precedence: the component's ``base_url`` in config, then the SDK's standard environment
variable (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``), then the provider's public host.
Honouring the variable matters: a user whose environment points the SDK at a gateway holds
that gateway's key, which must not be sent to the public host instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from faceedit_bench.errors import ConfigError


@dataclass(frozen=True)
class Endpoint:
    url: str  # the effective endpoint, as passed to the SDK
    source: str  # how it was chosen, for messages and the report
    default: bool  # the provider's public host (a non-default endpoint is part of the component's identity)


def resolve_endpoint(configured: str | None, *, env_var: str, default: str, param: str,
                     example: str = "http://127.0.0.1:8000/v1") -> Endpoint:
    """The effective endpoint of a component whose config key is ``param`` (e.g.
    ``judge.params.base_url``); a ConfigError naming the key or variable for a malformed URL."""
    from_env = os.environ.get(env_var, "").strip()
    if configured is not None:
        url, source = str(configured).strip(), f"from {param}"
    elif from_env:
        url, source = from_env, f"from ${env_var}, as {param} is null"
    else:
        return Endpoint(default, f"the default; set {param} or ${env_var} for another", True)
    if not url.startswith(("http://", "https://")):
        where = f"{param}={configured!r}" if configured is not None else f"${env_var}={from_env!r}"
        raise ConfigError(f"{where} is not an endpoint: it must start with http:// or https:// (e.g. {example}); "
                          f"leave {param} null and unset {env_var} for {default}.")
    return Endpoint(url, source, url.rstrip("/") == default.rstrip("/"))


def endpoint_identity(base_url: str | None) -> dict[str, str]:
    """What an endpoint adds to a component's identity (and so to its cache keys). A
    non-default endpoint is part of it: a gateway or a compatible server may serve another
    model under the same name. The public default is left out, so cache keys made before
    stay valid; it is recorded as provenance in the report's calls section."""
    return {"base_url": base_url} if base_url else {}
