"""Estimated cost of calls, from recorded usage and a price table.

Usage keys are shared by every plugin: ``input_tokens``, ``output_tokens``,
``input_image_tokens``, ``output_image_tokens``, ``images_out``. A price table maps the
same keys to USD per unit; it comes from the component's config (with the date the
prices were read), is recorded with the run, and makes every cost an *estimate*.

The keys are disjoint, so each token is priced once: a plugin that reports image tokens
separately (``input_image_tokens``) leaves them out of ``input_tokens``; one whose provider
bills image tokens at the text rate counts them in ``input_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.errors import ConfigError

USAGE_KEYS = ("input_tokens", "output_tokens", "input_image_tokens", "output_image_tokens", "images_out")


def check_prices(prices: Mapping[str, Any], what: str) -> dict[str, Any]:
    """A configured price table, checked: USD per unit for :data:`USAGE_KEYS`, plus ``as_of``."""
    unknown = sorted(set(prices) - {*USAGE_KEYS, "as_of"})
    if unknown:
        raise ConfigError(f"{what}: unknown price key(s) {', '.join(unknown)}. Accepted: {', '.join(USAGE_KEYS)}, "
                          "as_of (the date the prices were read).")
    for key, value in prices.items():
        if key != "as_of" and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise ConfigError(f"{what}: price {key}={value!r} must be a non-negative number of USD per unit.")
    return dict(prices)


def cost_usd(usage: Mapping[str, Any], prices: Mapping[str, float] | None) -> float | None:
    """Σ usage[k] · prices[k]; ``None`` without a price table (unknown, not free)."""
    if not prices:
        return None
    return float(sum(float(usage.get(k, 0) or 0) * float(p) for k, p in prices.items() if k != "as_of"))
