"""The ``seededit`` and ``seedream`` editors: one ModelArk ``images/generations`` call per step.

One attempt per :meth:`ArkImageEditor.aedit`; the core retries, rate-limits and times out.
The input image goes as a base64 data URL (Seedream: followed by the configured reference
images), the instruction as the prompt, with the step's seed, ``watermark: false`` and
``response_format: b64_json``. Outcomes: an image -> ``ok``; a content-safety code
(``*SensitiveContentDetected``, at submit time as a 400, or per image in a 200 answer) ->
``refused`` with the code and message; an answer without an image -> ``no_image``; other 4xx
-> ``api_error``; 429, 5xx, timeouts, connection errors and cut-off answers ->
``RetryableError`` (see :mod:`faceedit_bench_byteplus.failures`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import ConfigError, EditRequest, EditResult, HostedComponent, HostedParams, Outcome, redact
from faceedit_bench.api.images import content_hash, decode_rgb, encode_png, sniff_mime
from faceedit_bench_byteplus.connection import ArkConnection
from faceedit_bench_byteplus.failures import failure_outcome, is_refusal_code

#: ModelArk's image models take 500 images/min per account and model (docs.byteplus.com, model
#: list); these defaults stay below that. Raise them to your account's limits.
DEFAULT_LIMITS = MappingProxyType({
    "max_concurrency": 16, "requests_per_minute": 400, "tokens_per_minute": None, "tokens_per_call": 0,
    "max_attempts": 6, "timeout_s": 180.0, "backoff_initial_s": 2.0, "backoff_max_s": 60.0,
})
#: List prices, USD per generated image, as published for ModelArk (international, ap-southeast-1)
#: and read on ``as_of``: estimates, check docs.byteplus.com/en/docs/ModelArk/1544106.
SEEDEDIT_PRICES = MappingProxyType({"images_out": 0.03, "as_of": "2026-12-01"})
SEEDREAM_PRICES = MappingProxyType({"images_out": 0.03, "as_of": "2026-12-01"})
INT32_SEEDS = 2**31  # ModelArk's seed is in [-1, 2147483647]
_SIZE = re.compile(r"^(adaptive|[124]K|\d+x\d+)$")


@dataclass(frozen=True, kw_only=True)
class ArkParams(HostedParams):
    """See ``conf/editor/seededit.yaml`` and ``conf/editor/seedream.yaml``."""

    size: str | None = None
    guidance_scale: float | None = None
    watermark: bool = False
    api_key_env: str = "ARK_API_KEY"
    limits: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_LIMITS)


@dataclass(frozen=True, kw_only=True)
class SeedEditParams(ArkParams):
    model: str = "seededit-3-0-i2i-250628"
    size: str | None = "adaptive"
    guidance_scale: float | None = 5.5
    prices: Mapping[str, Any] = field(default_factory=lambda: SEEDEDIT_PRICES)


@dataclass(frozen=True, kw_only=True)
class SeedreamParams(ArkParams):
    model: str = "seedream-4-0-250828"
    reference_images: Sequence[str] = ()
    size: str | None = "2K"
    prices: Mapping[str, Any] = field(default_factory=lambda: SEEDREAM_PRICES)


class ArkImageEditor(HostedComponent):
    """What SeedEdit and Seedream share; the subclasses fix the model family's parameters."""

    name = "ark"
    connection_type = ArkConnection
    default_limits = DEFAULT_LIMITS
    #: Input formats the model family accepts; anything else is sent as PNG.
    formats: frozenset[str] = frozenset({"image/png", "image/jpeg"})
    max_images = 1

    def setup(self, params: ArkParams) -> None:
        if params.size is not None and not _SIZE.match(str(params.size)):
            raise ConfigError(f"{self.what}: size {params.size!r} must be adaptive, 1K, 2K, 4K or WIDTHxHEIGHT "
                              "(e.g. 2048x2048), or null (not sent).")
        if params.guidance_scale is not None and not 1.0 <= float(params.guidance_scale) <= 10.0:
            raise ConfigError(f"{self.what}: guidance_scale must be between 1 and 10 (ModelArk's range), or null.")
        if not isinstance(params.watermark, bool):
            raise ConfigError(f"{self.what}: watermark must be true or false, not {params.watermark!r}.")
        self.model = params.model
        self.size = params.size
        self.guidance_scale = None if params.guidance_scale is None else float(params.guidance_scale)
        self.watermark = params.watermark
        self.references = _read_references(getattr(params, "reference_images", ()), self.what, self.max_images - 1)

    @property
    def where(self) -> str:
        return f"POST {self.connection.endpoint.url.rstrip('/')}/images/generations"

    def describe(self) -> dict[str, Any]:
        description: dict[str, Any] = {
            "provider": "byteplus", "model": self.model, "version": self.model,
            "api": "modelark images/generations", "size": self.size, "guidance_scale": self.guidance_scale,
            "watermark": self.watermark, "response_format": "b64_json", "seed": "request seed mod 2^31",
            **self.connection.describe()}
        if self.references:
            description["reference_images"] = [content_hash(data) for data in self.references]
        return description

    def _arguments(self, request: EditRequest) -> dict[str, Any]:
        images = [_data_url(request.image, self.formats), *(_data_url(r, self.formats) for r in self.references)]
        args: dict[str, Any] = {"model": self.model, "prompt": request.instruction,
                                "image": images[0] if len(images) == 1 else images, "seed": request.seed % INT32_SEEDS,
                                "watermark": self.watermark, "response_format": "b64_json"}
        if self.size is not None:
            args["size"] = self.size
        if self.guidance_scale is not None:
            args["guidance_scale"] = self.guidance_scale
        return args

    async def aedit(self, request: EditRequest) -> EditResult:
        try:
            response = await self.client().images.generate(**self._arguments(request))
        except Exception as exc:  # failure_outcome re-raises what is not an API failure
            outcome, reason = failure_outcome(exc, self.where)
            return EditResult(outcome, reason=reason)
        if isinstance(response, (str, bytes)):  # the SDK hands back the text of an answer that is not JSON
            raise ArkConnection.UnexpectedAnswer(self.where, response)
        return _result(response, self.where)


def _result(response: Any, where: str) -> EditResult:
    items = list(getattr(response, "data", None) or [])
    encoded = [item.b64_json for item in items if getattr(item, "b64_json", None)]
    usage: dict[str, Any] = {"images_out": len(encoded)}
    served = getattr(response, "model", None)
    if served:
        usage["model_version"] = str(served)
    if encoded:
        try:
            return EditResult.ok(base64.b64decode(encoded[0], validate=True), **usage)
        except (binascii.Error, ValueError) as exc:
            raise ArkConnection.UnexpectedAnswer(where, encoded[0], expected="base64 in b64_json",
                                                 problem=str(exc)) from exc
    # No image: a per-image error (Seedream moderates each generated image), or a top-level one.
    errors = [getattr(item, "error", None) for item in items] + [getattr(response, "error", None)]
    for error in errors:
        code = ArkConnection.as_code(_field(error, "code"))
        if code:
            message = redact(str(_field(error, "message") or ""))
            if is_refusal_code(code):
                return EditResult(Outcome.REFUSED, reason=f"{code}: {message}", usage=usage)
            return EditResult(Outcome.API_ERROR, reason=f"HTTP 200 with error: {message} (code: {code})", usage=usage)
    shape = "an empty data list" if not items else "no b64_json in data[0]"
    return EditResult(Outcome.NO_IMAGE, reason=f"the answer had {shape}", usage=usage)


def _field(obj: Any, name: str) -> Any:
    """A field of an SDK object or of the plain dict the SDK keeps for fields it does not model."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _data_url(data: bytes, formats: frozenset[str]) -> str:
    mime = sniff_mime(data)
    if mime not in formats:
        data, mime = encode_png(decode_rgb(data, label="image sent to ModelArk")), "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"  # the format lowercase, as documented


def _read_references(paths: Sequence[str], what: str, allowed: int) -> tuple[bytes, ...]:
    if isinstance(paths, str):
        paths = [paths]
    if len(paths) > allowed:
        raise ConfigError(f"{what}: at most {allowed} reference_images besides the input image (got {len(paths)}).")
    references = []
    for path in paths:
        file = Path(path).expanduser()
        if not file.is_file():
            raise ConfigError(f"{what}: reference image {str(file)!r} does not exist; give the path of an image "
                              "file, or remove it from reference_images.")
        data = file.read_bytes()
        decode_rgb(data, label=f"reference image {file}")  # a clear error now rather than a 400 per call
        references.append(data)
    return tuple(references)


class SeedEditEditor(ArkImageEditor):
    """SeedEdit 3.0 (``seededit-3-0-i2i-250628``): one input image, seed and guidance scale honoured.
    See ``conf/editor/seededit.yaml`` for the parameters."""

    name = "seededit"
    params_type = SeedEditParams


class SeedreamEditor(ArkImageEditor):
    """Seedream 4.0 (``seedream-4-0-250828``): the input image plus up to 9 reference images, one
    output image (``sequential_image_generation: disabled``). See ``conf/editor/seedream.yaml``."""

    name = "seedream"
    params_type = SeedreamParams
    formats = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
    max_images = 10

    def describe(self) -> dict[str, Any]:
        # ModelArk documents seed for its 3.0 models; sent all the same, so a model that honours it is seeded.
        return {**super().describe(), "sequential_image_generation": "disabled",
                "seed": "request seed mod 2^31 (documented for ModelArk's 3.0 models only)"}

    def _arguments(self, request: EditRequest) -> dict[str, Any]:
        return {**super()._arguments(request), "sequential_image_generation": "disabled"}
