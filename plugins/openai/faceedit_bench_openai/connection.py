"""Where calls go and with which key: the endpoint, the API key, the call limits and the
price table of one component, and one ``AsyncOpenAI`` client per event loop.

The SDK's own retries are switched off (``max_retries=0``): the core's execution layer
retries every provider the same way and counts every attempt.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any

from faceedit_bench.api import ConfigError, Endpoint, endpoint_identity, read_secret, resolve_endpoint

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: The public endpoint, used when neither ``base_url`` nor ``$OPENAI_BASE_URL`` is set. Always
#: passed to the SDK explicitly: the endpoint recorded is the one calls go to.
OPENAI_BASE_URL = "https://api.openai.com/v1"
#: The openai SDK's standard variable for another endpoint (a gateway, a proxy); honoured
#: because a user whose environment sets it holds that endpoint's key, not OpenAI's.
BASE_URL_ENV = "OPENAI_BASE_URL"
#: Sent as the bearer token to a server that takes no key (``api_key_env: null``), as vLLM documents.
NO_KEY = "EMPTY"


class Connection:
    """Endpoint and key of one component. The key lives only in a private attribute: it is
    never part of ``describe()``, of the provider key or of any message.

    Endpoint precedence: ``base_url`` in config, then ``$OPENAI_BASE_URL``, then api.openai.com.
    ``base_url`` is the effective endpoint when it is not the public one, else None."""

    def __init__(self, *, base_url: str | None, api_key_env: str | None, model: str, what: str) -> None:
        self.endpoint: Endpoint = resolve_endpoint(base_url, env_var=BASE_URL_ENV, default=OPENAI_BASE_URL,
                                                   param=f"{what.split()[0]}.params.base_url")
        if not api_key_env and self.endpoint.default:
            raise ConfigError(f"{what}: api_key_env is required for api.openai.com (e.g. OPENAI_API_KEY); only a "
                              "server of your own (base_url set) may run without a key (api_key_env: null).")
        if not isinstance(model, str) or not model:
            raise ConfigError(f"{what}: model must be a model name such as gpt-4.1-2025-04-14, not {model!r}.")
        self.base_url = None if self.endpoint.default else self.endpoint.url
        self.api_key_env = api_key_env
        self._api_key = read_secret([api_key_env], what=what) if api_key_env else NO_KEY
        # Per model: OpenAI's rate limits are per model, so an editor and a judge on one account
        # must not throttle each other. Never the key itself.
        self.provider_key = f"openai:{self.base_url or 'default'}:{api_key_env}:{model}"
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncOpenAI] = \
            weakref.WeakKeyDictionary()

    def prepare(self) -> None:
        """Import the SDK before the first call needs it (the editor's ``prepare`` capability)."""
        import openai  # noqa: F401

    def client(self, timeout_s: float) -> AsyncOpenAI:
        """The client of the running event loop (an httpx client must not cross loops)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            from openai import AsyncOpenAI

            client = AsyncOpenAI(api_key=self._api_key, base_url=self.endpoint.url,
                                 max_retries=0, timeout=timeout_s)
            self._clients[loop] = client
        return client

    def describe(self) -> dict[str, Any]:
        return endpoint_identity(self.base_url)

    def __repr__(self) -> str:
        return f"Connection(base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"
