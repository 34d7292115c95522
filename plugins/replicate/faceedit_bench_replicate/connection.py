"""Where Replicate calls go and with which token, and one SDK client per event loop.

The SDK wraps its HTTP transport in a ``RetryTransport`` that silently retries GET requests
(polls and downloads) up to 10 times on 429, 503 and 504. That is switched off
(``max_attempts = 1``), so every retry happens, and is counted, in the core's execution layer.
The endpoint is ``base_url`` in config, else the SDK's standard ``$REPLICATE_BASE_URL`` (a
gateway that holds the user's token must not be bypassed), else Replicate's; it and the token
(from ``api_key_env`` only) are always passed to the SDK explicitly.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from faceedit_bench.api import ConfigError, Endpoint, endpoint_identity, read_secret, resolve_endpoint

REPLICATE_BASE_URL = "https://api.replicate.com"
#: The replicate SDK's standard variable for another endpoint.
BASE_URL_ENV = "REPLICATE_BASE_URL"


class ReplicateConnection:
    """Endpoint and token of one component. The token lives only in a private attribute."""

    def __init__(self, *, base_url: str | None, api_key_env: str, model: str, what: str) -> None:
        self.endpoint: Endpoint = resolve_endpoint(base_url, env_var=BASE_URL_ENV, default=REPLICATE_BASE_URL,
                                                   param=f"{what.split()[0]}.params.base_url",
                                                   example="http://127.0.0.1:8000 (the API root, without /v1)")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ConfigError(f"{what}: api_key_env must name the environment variable holding the Replicate API "
                              f"token (e.g. REPLICATE_API_TOKEN), not {api_key_env!r}.")
        self.base_url = None if self.endpoint.default else self.endpoint.url.rstrip("/")
        self.api_key_env = api_key_env
        self._token = read_secret([api_key_env], what=what)  # fails here, before any work
        # Replicate limits prediction creation per account (600/min), not per model; the key still
        # names the model so that two editors' counts stay apart in the report.
        self.provider_key = f"replicate:{self.base_url or 'default'}:{api_key_env}:{model}"
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def prepare(self) -> None:
        """Import the SDK before the first call needs it (the editor's ``prepare`` capability)."""
        import httpx  # noqa: F401
        import replicate  # noqa: F401

    def client(self, timeout_s: float) -> Any:
        """This event loop's ``replicate.Client`` (its httpx connections belong to one loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import httpx
            import replicate

            client = replicate.Client(api_token=self._token, base_url=self.base_url or REPLICATE_BASE_URL,
                                      timeout=httpx.Timeout(min(timeout_s, 60.0), connect=10.0))
            _one_attempt(client)
            self._clients[loop] = client
        return client

    def describe(self) -> dict[str, Any]:
        return endpoint_identity(self.base_url)

    def __repr__(self) -> str:
        return f"ReplicateConnection(base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"


def _one_attempt(client: Any) -> None:
    """Switch off the SDK's hidden GET retries (see the module docstring)."""
    from replicate.client import RetryTransport

    transport = getattr(client._async_client, "_transport", None)  # httpx keeps the mounted transport here
    if not isinstance(transport, RetryTransport):
        raise RuntimeError("faceedit_bench_replicate: this replicate SDK no longer wraps its transport in "
                           "RetryTransport as 1.0.x did; its retries could not be switched off. Pin replicate<2 "
                           "or update the plugin.")
    transport.max_attempts = 1
