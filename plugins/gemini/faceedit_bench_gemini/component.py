"""What the Gemini editor and judge share: their parameters and setup on the core's hosted base."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from faceedit_bench.api import HostedComponent, HostedParams
from faceedit_bench_gemini.connection import DEFAULT_KEY_ENVS, GeminiConnection
from faceedit_bench_gemini.prices import prices_for


@dataclass(frozen=True, kw_only=True)
class GeminiParams(HostedParams):
    """``api_version`` null: the SDK's default; ``prices`` null: the model's list price (``prices.py``)."""

    api_version: str | None = None
    api_key_env: Sequence[str] = DEFAULT_KEY_ENVS


class GeminiComponent(HostedComponent):
    connection_type = GeminiConnection

    def connect(self, params: GeminiParams) -> GeminiConnection:
        return GeminiConnection(what=self.what, model=params.model, base_url=params.base_url,
                                api_key_env=params.api_key_env, api_version=params.api_version)

    def read_prices(self, prices: Mapping[str, Any] | None) -> dict[str, Any]:
        return prices_for(self.params.model, prices, what=self.what)
