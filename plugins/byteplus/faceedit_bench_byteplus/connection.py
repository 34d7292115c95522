"""Where ModelArk calls go and with which key (:class:`~faceedit_bench.api.HostedConnection`): the
endpoint and one ``AsyncArk`` client per event loop.

The SDK's own retries are off (``max_retries=0``): the core's execution layer retries every provider the same
way and counts every attempt. The endpoint and key are always passed to the SDK explicitly, so ``ARK_API_KEY``
is read once, through the core, and ``BYTEPLUS_ACCESSKEY`` / ``BYTEPLUS_SECRETKEY`` in the environment (which the
SDK would otherwise pick up) play no part. The Ark SDK reads no endpoint variable: the config alone says where
calls go.
"""

from __future__ import annotations

from typing import Any

from faceedit_bench.api import HostedConnection

#: ModelArk's international endpoint (region ap-southeast-1), the SDK's default. The EU region
#: (eu-west-1) is https://ark.eu-west.bytepluses.com/api/v3 for the models it serves.
ARK_BASE_URL = "https://ark.ap-southeast.bytepluses.com/api/v3"


class ArkConnection(HostedConnection):
    provider, title = "byteplus", "ModelArk"
    default_url = ARK_BASE_URL
    sdk_modules = ("byteplussdkarkruntime",)
    model_example = "a ModelArk model id such as seededit-3-0-i2i-250628 (or your endpoint id ep-...)"
    url_example = f"{ARK_BASE_URL}, ending in /api/v3"

    def new_client(self, key: str | None, timeout_s: float) -> Any:
        from byteplussdkarkruntime import AsyncArk

        return AsyncArk(api_key=key, base_url=self.endpoint.url, max_retries=0, timeout=timeout_s)
