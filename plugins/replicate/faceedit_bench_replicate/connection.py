"""Where Replicate calls go and with which token (:class:`~faceedit_bench.api.HostedConnection`), and one
SDK client per event loop.

The SDK wraps its HTTP transport in a ``RetryTransport`` that silently retries GET requests
(polls and downloads) up to 10 times on 429, 503 and 504. That is switched off
(``max_attempts = 1``), so every retry happens, and is counted, in the core's execution layer.
The endpoint is ``base_url`` in config, else the SDK's standard ``$REPLICATE_BASE_URL`` (a
gateway that holds the user's token must not be bypassed), else Replicate's; it and the token
(from ``api_key_env`` only) are always passed to the SDK explicitly.
"""

from __future__ import annotations

from typing import Any

from faceedit_bench.api import HostedConnection

REPLICATE_BASE_URL = "https://api.replicate.com"
#: The replicate SDK's standard variable for another endpoint.
BASE_URL_ENV = "REPLICATE_BASE_URL"


class ReplicateConnection(HostedConnection):
    # Replicate limits prediction creation per account (600/min), not per model; the provider key still
    # names the model so that two editors' counts stay apart in the report.
    provider = "replicate"
    default_url = REPLICATE_BASE_URL
    base_url_env = BASE_URL_ENV
    sdk_modules = ("httpx", "replicate")
    url_example = "http://127.0.0.1:8000 (the API root, without /v1)"

    @staticmethod
    def clean_url(url: str) -> str:
        return url.rstrip("/")

    def new_client(self, key: str | None, timeout_s: float) -> Any:
        import httpx
        import replicate

        client = replicate.Client(api_token=key, base_url=self.endpoint.url.rstrip("/"),
                                  timeout=httpx.Timeout(min(timeout_s, 60.0), connect=10.0))
        _one_attempt(client)
        return client

    async def close_client(self, client: Any) -> None:
        await client._async_client.aclose()


def _one_attempt(client: Any) -> None:
    """Switch off the SDK's hidden GET retries (see the module docstring)."""
    from replicate.client import RetryTransport

    transport = getattr(client._async_client, "_transport", None)  # httpx keeps the mounted transport here
    if not isinstance(transport, RetryTransport):
        raise RuntimeError("faceedit_bench_replicate: this replicate SDK no longer wraps its transport in "
                           "RetryTransport as 1.0.x did; its retries could not be switched off. Pin replicate<2 "
                           "or update the plugin.")
    transport.max_attempts = 1
