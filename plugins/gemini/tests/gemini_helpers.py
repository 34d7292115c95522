"""Shared constants and helpers of the gemini plugin tests (fixtures are in conftest.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from faceedit_bench.api import EditRequest
from faceedit_bench.api.testing import gradient_image

KEY = "test-gemini-key-0123456789"
#: Short backoffs so retries cost milliseconds; no client-side rate limit. The timeout stays generous:
#: the fake runs in this process and shares its GIL, so a loaded machine slows its answers down.
FAST_LIMITS = {"timeout_s": 10.0, "backoff_initial_s": 0.01, "backoff_max_s": 0.1, "requests_per_minute": None,
               "tokens_per_minute": None}
INSTRUCTION = "make the person's hair color crimson red"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def edit_request(seed: int = 7, image: bytes | None = None) -> EditRequest:
    return EditRequest(image or gradient_image(1), INSTRUCTION, "face-1", "hair-01", 1, seed)
