"""Estimated Gemini API prices per model, in USD per unit of the faceedit_bench.execution.cost usage keys.

Standard paid tier, prompts up to 200k tokens, as published on ai.google.dev/pricing on the
``as_of`` date. They are estimates: check the page and override ``prices`` in the config
when they change. The usage keys are disjoint (see :mod:`faceedit_bench_gemini.responses`):
image tokens are never also counted as text tokens, so each has its own price.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import HostedComponent

AS_OF = "2025-11-20"
_M = 1e-6  # prices are published per million tokens


def _table(input_per_m: float, output_per_m: float, output_image_per_m: float | None = None, *,
           as_of: str = AS_OF) -> Mapping[str, Any]:
    table: dict[str, Any] = {"input_tokens": input_per_m * _M, "input_image_tokens": input_per_m * _M,
                             "output_tokens": output_per_m * _M}
    if output_image_per_m is not None:
        table["output_image_tokens"] = output_image_per_m * _M
    table["as_of"] = as_of
    return MappingProxyType(table)


#: model -> price table. Output image tokens: 1290 per 1024x1024 image for 2.5 Flash Image
#: (about $0.039 an image), 1120 per 1K/2K image for 3 Pro Image (about $0.134).
PRICES: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "gemini-2.5-flash-image": _table(0.30, 2.50, 30.0),
    "gemini-2.5-flash-image-preview": _table(0.30, 2.50, 30.0),
    "gemini-3-pro-image-preview": _table(2.00, 12.0, 120.0),
    "gemini-2.5-flash": _table(0.30, 2.50),
    "gemini-2.5-flash-lite": _table(0.10, 0.40),
    "gemini-2.5-pro": _table(1.25, 10.0),
    "gemini-3-pro-preview": _table(2.00, 12.0),
    # Gemini 3 Flash (preview), a judge of paper (b)'s panel: $0.50/1M input (text, image), $3.00/1M output
    # (thinking included), read 2026-12-01.
    "gemini-3-flash-preview": _table(0.50, 3.00, as_of="2026-12-01"),
})


def prices_for(model: str, override: Mapping[str, Any] | None, *, what: str) -> dict[str, Any]:
    """``override`` when given (checked); otherwise the table for ``model``, or ``{}`` (cost
    unknown, which the core reports as unknown rather than free)."""
    if override is None:
        return dict(PRICES.get(model.removeprefix("models/"), {}))
    return HostedComponent.check_prices(override, what)
