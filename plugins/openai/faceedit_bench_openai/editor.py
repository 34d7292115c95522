"""The ``gpt_image`` editor: one ``images.edit`` call per step (gpt-image-1 by default).

One attempt per :meth:`GptImageEditor.aedit`; the core retries, rate-limits and times out.
Outcomes: an image -> ``ok``; a safety rejection (``moderation_blocked``) -> ``refused``; an
answer without image -> ``no_image``; any other 4xx -> ``api_error`` with the status; 429,
5xx, timeouts, connection errors and cut-off answers -> ``RetryableError`` (see ``failures``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import ConfigError, EditRequest, EditResult, HostedComponent, HostedParams, Outcome
from faceedit_bench_openai.connection import Connection
from faceedit_bench_openai.failures import answer_of, failure_outcome
from faceedit_bench_openai.media import upload

#: OpenAI usage tier 1 for gpt-image-1 (5 images/min, 100k tokens/min), so a new account is
#: not throttled from the first call; raise them to your tier's limits.
DEFAULT_LIMITS = MappingProxyType({
    "max_concurrency": 4, "requests_per_minute": 5, "tokens_per_minute": 100000, "tokens_per_call": 10000,
    "max_attempts": 6, "timeout_s": 300.0, "backoff_initial_s": 2.0, "backoff_max_s": 60.0,
})
#: gpt-image-1 list prices in USD per token, read 2025-10: estimates, check the pricing page.
DEFAULT_PRICES = MappingProxyType({
    "input_tokens": 0.000005, "input_image_tokens": 0.00001, "output_image_tokens": 0.00004, "as_of": "2025-10",
})
OUTPUT_FORMATS = ("png", "jpeg", "webp")
#: gpt-image-1's output image tokens for a 1024x1024 image by quality, and its input image tokens (323, plus 4160 at
#: high input fidelity), from OpenAI's image-generation guide: one edit's usage for `faceedit-bench plan` until
#: this workspace has measured calls (auto is counted as high).
OUTPUT_IMAGE_TOKENS = MappingProxyType({"low": 272, "medium": 1056, "high": 4160, "auto": 4160})
INPUT_IMAGE_TOKENS, HIGH_FIDELITY_TOKENS = 323, 4160
_SIZE = re.compile(r"^(auto|\d+x\d+)$")


@dataclass(frozen=True, kw_only=True)
class GptImageParams(HostedParams):
    """See ``conf/editor/gpt_image.yaml``."""

    model: str = "gpt-image-1"
    size: str | None = "auto"
    quality: str | None = "high"
    input_fidelity: str | None = "high"
    output_format: str = "png"
    api_key_env: str | None = "OPENAI_API_KEY"
    limits: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_LIMITS)
    prices: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_PRICES)


class GptImageEditor(HostedComponent):
    """See the module docstring and ``conf/editor/gpt_image.yaml`` for the parameters."""

    name = "gpt_image"
    params_type = GptImageParams
    connection_type = Connection
    default_limits = DEFAULT_LIMITS
    key_optional = True  # a server of one's own (base_url set) may take no key
    #: images.edit takes up to 16 images (sent as ``image[]``); I_{k-1} is the first.
    max_input_images = 16

    def setup(self, params: GptImageParams) -> None:
        if params.size is not None and not _SIZE.match(str(params.size)):
            raise ConfigError(f"{self.what}: size {params.size!r} must be auto or WIDTHxHEIGHT (e.g. 1024x1024), "
                              "or null.")
        if params.input_fidelity not in ("high", "low", None):
            raise ConfigError(f"{self.what}: input_fidelity must be high, low or null (not sent), not "
                              f"{params.input_fidelity!r}.")
        if params.output_format not in OUTPUT_FORMATS:
            raise ConfigError(f"{self.what}: output_format must be one of {', '.join(OUTPUT_FORMATS)}.")
        self.model = params.model
        self.sent = {k: v for k, v in {"size": params.size, "quality": params.quality,
                                        "input_fidelity": params.input_fidelity,
                                        "output_format": params.output_format}.items() if v is not None}
        self.usage_per_call = {"input_tokens": 50,
                               "output_image_tokens": OUTPUT_IMAGE_TOKENS.get(str(params.quality), 4160),
                               "input_image_tokens": INPUT_IMAGE_TOKENS
                               + (HIGH_FIDELITY_TOKENS if params.input_fidelity == "high" else 0)}

    @property
    def where(self) -> str:
        return f"POST {self.connection.endpoint.url.rstrip('/')}/images/edits"

    def describe(self) -> dict[str, Any]:
        return {"provider": "openai", "model": self.model, "version": self.model,
                "api": "images.edit", "n": 1, **self.sent, "seed": "not supported by the API",
                **self.connection.describe()}

    async def aedit(self, request: EditRequest) -> EditResult:
        try:
            images = [upload(data, f"image_{i}" if i else "image")
                      for i, data in enumerate((request.image, *request.extra_images))]
            response = answer_of(await self.client().images.edit(
                model=self.model, image=images if len(images) > 1 else images[0], prompt=request.instruction, n=1,
                **self.sent), self.where)
        except Connection.UnexpectedAnswer:
            raise
        except Exception as exc:  # failure_outcome re-raises what is not an API failure
            outcome, reason = failure_outcome(exc, self.where)
            return EditResult(outcome, reason=reason)
        encoded = [d.b64_json for d in (response.data or []) if getattr(d, "b64_json", None)]
        usage = image_usage(response, images_out=len(encoded))
        if not encoded:
            shape = "an empty data list" if not response.data else "no b64_json in data[0]"
            return EditResult(Outcome.NO_IMAGE, reason=f"the answer had {shape}", usage=usage)
        try:
            image = base64.b64decode(encoded[0], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Connection.UnexpectedAnswer(self.where, encoded[0], expected="base64 in b64_json",
                                              problem=str(exc)) from exc
        return EditResult.ok(image, **usage)


def image_usage(response: Any, *, images_out: int) -> dict[str, Any]:
    """Usage in ``faceedit_bench.execution.cost`` keys. The keys are disjoint: ``input_tokens`` counts
    text only, image tokens are ``input_image_tokens`` / ``output_image_tokens``, so each
    token is priced once. Without a details block all input counts as text (an underestimate)."""
    usage: dict[str, Any] = {"images_out": images_out}
    tokens = getattr(response, "usage", None)
    if tokens is not None:
        details = getattr(tokens, "input_tokens_details", None)
        image_in = getattr(details, "image_tokens", 0) or 0
        out_details = getattr(tokens, "output_tokens_details", None)
        image_out = getattr(out_details, "image_tokens", None)
        if image_out is None:  # gpt-image-1: all output tokens are image tokens
            image_out = tokens.output_tokens or 0
        usage.update(input_tokens=(tokens.input_tokens or 0) - image_in, input_image_tokens=image_in,
                     output_image_tokens=image_out, output_tokens=(tokens.output_tokens or 0) - image_out)
    served = getattr(response, "model", None)  # images.edit does not name it today; kept if it ever does
    if served:
        usage["model_version"] = served
    return usage
