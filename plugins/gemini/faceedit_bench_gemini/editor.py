"""``nano_banana``: image editing with Gemini's image models (gemini-2.5-flash-image, ...).

One attempt per :meth:`NanoBananaEditor.aedit`: the input image and the instruction go to
``generateContent`` with image output; the core retries, rate-limits and times out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import ConfigError, EditRequest, EditResult, Outcome
from faceedit_bench_gemini import responses
from faceedit_bench_gemini.component import GeminiComponent, GeminiParams
from faceedit_bench_gemini.connection import PermanentAPIError, api_seed, image_mime

#: About 80% of the paid Tier 1 limits published for gemini-2.5-flash-image (500 RPM, 500k input
#: TPM). Tokens per call: a 1024x1024 input image is 4 tiles of 258 tokens, plus the instruction.
DEFAULT_LIMITS: Mapping[str, Any] = MappingProxyType({
    "requests_per_minute": 400, "tokens_per_minute": 400_000, "tokens_per_call": 1100, "max_concurrency": 32,
    "max_attempts": 6, "timeout_s": 120.0, "backoff_initial_s": 2.0, "backoff_max_s": 60.0,
})


@dataclass(frozen=True, kw_only=True)
class NanoBananaParams(GeminiParams):
    """See ``conf/editor/nano_banana.yaml``."""

    model: str = "gemini-2.5-flash-image"
    response_modalities: Sequence[str] = ("IMAGE",)
    temperature: float | None = None
    aspect_ratio: str | None = None
    image_size: str | None = None
    limits: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_LIMITS)


class NanoBananaEditor(GeminiComponent):
    """Edits one image with one instruction through a Gemini image model."""

    name = "nano_banana"
    params_type = NanoBananaParams
    default_limits = DEFAULT_LIMITS
    #: I_{k-1} and up to two further images (Gemini image models work best with up to three inputs).
    max_input_images = 3
    #: One edit of a 1024x1024 input, for `faceedit-bench plan` until this workspace has measured calls: Gemini
    #: counts an image as 258 tokens per 768x768 tile (4 tiles), a short instruction, and 1290 output image tokens
    #: per 1024x1024 image (gemini-2.5-flash-image; about $0.039 at its list prices).
    usage_per_call = MappingProxyType({"input_tokens": 30, "input_image_tokens": 4 * 258, "output_image_tokens": 1290})

    def setup(self, params: NanoBananaParams) -> None:
        modalities = [str(m).upper() for m in ([params.response_modalities]
                                               if isinstance(params.response_modalities, str)
                                               else params.response_modalities)]
        if "IMAGE" not in modalities:
            raise ConfigError(f"{self.what}: response_modalities must include IMAGE (e.g. [IMAGE] or [TEXT, IMAGE]), "
                              f"not {list(modalities)}")
        if params.temperature is not None and not 0 <= float(params.temperature) <= 2:
            raise ConfigError(f"{self.what}: temperature must be between 0 and 2 (or null for the model's default)")
        self.model = params.model
        self.response_modalities = modalities
        self.temperature = None if params.temperature is None else float(params.temperature)
        self.aspect_ratio = params.aspect_ratio
        self.image_size = params.image_size

    def describe(self) -> dict[str, Any]:
        return {
            **self.connection.describe(),
            "response_modalities": list(self.response_modalities), "temperature": self.temperature,
            "aspect_ratio": self.aspect_ratio, "image_size": self.image_size, "seed": "request seed mod 2^31",
        }

    def _config(self, seed: int) -> Any:
        from google.genai import types

        image_config = None
        if self.aspect_ratio or self.image_size:
            image_config = types.ImageConfig(aspect_ratio=self.aspect_ratio, image_size=self.image_size)
        return types.GenerateContentConfig(response_modalities=list(self.response_modalities), seed=api_seed(seed),
                                           temperature=self.temperature, image_config=image_config)

    async def aedit(self, request: EditRequest) -> EditResult:
        from google.genai import types

        contents = [types.Part.from_bytes(data=image, mime_type=image_mime(image))
                    for image in (request.image, *request.extra_images)] + [request.instruction]
        try:
            response = await self.connection.generate(self.model, contents, self._config(request.seed))
        except PermanentAPIError as exc:
            return EditResult(Outcome.API_ERROR, reason=str(exc))
        usage = responses.usage(response)
        images = responses.output_images(response)
        if images:
            return EditResult.ok(images[-1][0], **usage)  # the last image is the final one
        refused = responses.refusal(response)
        if refused:
            return EditResult(Outcome.REFUSED, reason=refused, usage=usage)
        text = responses.output_text(response)
        reason = f"no image in the answer (finish reason {responses.finish_reason(response)})"
        if text:
            reason += f"; the model said: {responses.snippet(text)!r}"
        return EditResult(Outcome.NO_IMAGE, reason=reason, usage=usage)
