"""Where ModelArk calls go and with which key: the endpoint, the API key, and one ``AsyncArk``
client per event loop.

The SDK's own retries are off (``max_retries=0``): the core's execution layer retries every
provider the same way and counts every attempt. The endpoint and key are always passed to
the SDK explicitly, so ``ARK_API_KEY`` is read once, here, and ``BYTEPLUS_ACCESSKEY`` /
``BYTEPLUS_SECRETKEY`` in the environment (which the SDK would otherwise pick up) play no part.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from faceedit_bench.api import ConfigError, Endpoint, endpoint_identity, read_secret

#: ModelArk's international endpoint (region ap-southeast-1), the SDK's default. The EU region
#: (eu-west-1) is https://ark.eu-west.bytepluses.com/api/v3 for the models it serves.
ARK_BASE_URL = "https://ark.ap-southeast.bytepluses.com/api/v3"


class ArkConnection:
    """Endpoint and key of one component. The key lives only in a private attribute: never in
    ``describe()``, the provider key, a message or ``repr``."""

    def __init__(self, *, base_url: str | None, api_key_env: str, model: str, what: str) -> None:
        if base_url is not None and not str(base_url).startswith(("http://", "https://")):
            raise ConfigError(f"{what}: base_url {base_url!r} must start with http:// or https:// and end in /api/v3 "
                              f"(e.g. {ARK_BASE_URL}), or be null for ModelArk's default endpoint.")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ConfigError(f"{what}: api_key_env must name the environment variable holding the ModelArk API "
                              f"key (e.g. ARK_API_KEY), not {api_key_env!r}.")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{what}: model must be a ModelArk model id such as seededit-3-0-i2i-250628 "
                              f"(or your endpoint id ep-...), not {model!r}.")
        self.base_url = base_url
        # The Ark SDK reads no endpoint variable: the config alone says where calls go.
        param = f"{what.split()[0]}.params.base_url"
        self.endpoint = Endpoint(base_url, f"from {param}", False) if base_url else \
            Endpoint(ARK_BASE_URL, f"ModelArk's default; set {param} for another", True)
        self.api_key_env = api_key_env
        self._api_key = read_secret([api_key_env], what=what)  # fails here, before any work
        # ModelArk's rate limits are per model (RPM per account and model): one key per model.
        self.provider_key = f"byteplus:{base_url or 'default'}:{api_key_env}:{model}"
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def prepare(self) -> None:
        """Import the SDK before the first call needs it (the editor's ``prepare`` capability)."""
        import byteplussdkarkruntime  # noqa: F401

    def client(self, timeout_s: float) -> Any:
        """The ``AsyncArk`` client of the running loop: its httpx client and the lock it creates
        belong to one event loop."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            from byteplussdkarkruntime import AsyncArk

            client = AsyncArk(api_key=self._api_key, base_url=self.base_url or ARK_BASE_URL, max_retries=0,
                              timeout=timeout_s)
            self._clients[loop] = client
        return client

    def describe(self) -> dict[str, Any]:
        return endpoint_identity(self.base_url)

    def __repr__(self) -> str:
        return f"ArkConnection(base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"
