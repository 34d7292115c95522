"""Where calls go and with which key (:class:`~faceedit_bench.api.HostedConnection`): one ``AsyncOpenAI``
client per event loop.

Endpoint precedence: ``base_url`` in config, then ``$OPENAI_BASE_URL`` (a user whose environment sets it holds
that endpoint's key, not OpenAI's), then api.openai.com. The SDK's own retries are switched off
(``max_retries=0``): the core's execution layer retries every provider the same way and counts every attempt.
"""

from __future__ import annotations

from typing import Any

from faceedit_bench.api import HostedConnection

#: The public endpoint, used when neither ``base_url`` nor ``$OPENAI_BASE_URL`` is set. Always
#: passed to the SDK explicitly: the endpoint recorded is the one calls go to.
OPENAI_BASE_URL = "https://api.openai.com/v1"
#: The openai SDK's standard variable for another endpoint (a gateway, a proxy).
BASE_URL_ENV = "OPENAI_BASE_URL"
#: Sent as the bearer token to a server that takes no key (``api_key_env: null``), as vLLM documents.
NO_KEY = "EMPTY"


class Connection(HostedConnection):
    # Per model: OpenAI's rate limits are per model, so an editor and a judge on one account must not throttle
    # each other (the provider key names it).
    provider = "openai"
    default_url = OPENAI_BASE_URL
    base_url_env = BASE_URL_ENV
    sdk_modules = ("openai",)
    model_example = "a model name such as gpt-4.1-2025-04-14"

    def new_client(self, key: str | None, timeout_s: float) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(api_key=key or NO_KEY, base_url=self.endpoint.url, max_retries=0, timeout=timeout_s)
