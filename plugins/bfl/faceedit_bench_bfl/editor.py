"""The BFL editors: ``kontext_pro``, ``kontext_max`` (FLUX.1 Kontext) and ``flux2_pro``,
``flux2_flex`` (FLUX.2), each one BFL task per step (see :mod:`faceedit_bench_bfl.task`).

The image to edit goes as base64 ``input_image`` (PNG, JPEG and WEBP unchanged, anything else
re-encoded as PNG), with the instruction as ``prompt``, the per-step seed, ``output_format``,
``safety_tolerance`` and prompt upsampling off by default (the instruction is sent as written).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from faceedit_bench.api import ConfigError, EditRequest, EditResult, HostedComponent, HostedParams
from faceedit_bench.api.images import decode_rgb, encode_png, sniff_mime
from faceedit_bench_bfl.connection import BflConnection
from faceedit_bench_bfl.models import MODELS, Model
from faceedit_bench_bfl.task import Polling, Task

INPUT_FORMATS = frozenset({"image/png", "image/jpeg", "image/webp"})
OUTPUT_FORMATS = ("png", "jpeg")
SEEDS = 2**31  # sent modulo this, so that any backend's integer seed takes it


def _limits(active_tasks: int) -> Mapping[str, Any]:
    """BFL bounds active tasks, not requests per minute: concurrency is the provider's active-task
    limit (an attempt spans the whole task), no request-rate limit. The per-attempt timeout covers
    the default request timeout (30 s) plus poll_timeout_s (300 s)."""
    return MappingProxyType({
        "max_concurrency": active_tasks, "requests_per_minute": None, "tokens_per_minute": None, "tokens_per_call": 0,
        "max_attempts": 6, "timeout_s": 360.0, "backoff_initial_s": 2.0, "backoff_max_s": 60.0,
    })


KONTEXT_PRO_LIMITS = _limits(MODELS["flux-kontext-pro"].active_tasks)
KONTEXT_MAX_LIMITS = _limits(MODELS["flux-kontext-max"].active_tasks)
FLUX2_LIMITS = _limits(MODELS["flux-2-pro"].active_tasks)


@dataclass(frozen=True, kw_only=True)
class BflParams(HostedParams):
    """What the four editors take; see ``conf/editor/kontext_pro.yaml`` and the others. ``prices`` null: the
    model's list price."""

    region: str = "global"
    api_key_env: str = "BFL_API_KEY"
    safety_tolerance: int = 2
    output_format: str = "png"
    prompt_upsampling: bool = False
    poll_interval_s: float = 0.5
    poll_timeout_s: float = 300.0
    request_timeout_s: float = 30.0


@dataclass(frozen=True, kw_only=True)
class KontextProParams(BflParams):
    model: str = "flux-kontext-pro"
    aspect_ratio: str | None = None
    limits: Mapping[str, Any] = field(default_factory=lambda: KONTEXT_PRO_LIMITS)


@dataclass(frozen=True, kw_only=True)
class KontextMaxParams(KontextProParams):
    model: str = "flux-kontext-max"
    limits: Mapping[str, Any] = field(default_factory=lambda: KONTEXT_MAX_LIMITS)


@dataclass(frozen=True, kw_only=True)
class Flux2ProParams(BflParams):
    model: str = "flux-2-pro"
    limits: Mapping[str, Any] = field(default_factory=lambda: FLUX2_LIMITS)


@dataclass(frozen=True, kw_only=True)
class Flux2FlexParams(Flux2ProParams):
    model: str = "flux-2-flex"
    steps: int | None = 50
    guidance: float | None = 5.0


class BflEditor(HostedComponent):
    """What the four editors share; each subclass fixes the model family and its defaults."""

    name = "bfl"
    connection_type = BflConnection
    family: tuple[str, ...] = ()
    #: The model family's own request fields, sent when not null.
    extra_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        polling = self.polling
        if self.limits.timeout_s < polling.request_timeout_s + polling.timeout_s:
            raise ConfigError(
                f"{self.what}: limits.timeout_s={self.limits.timeout_s:g} must be at least request_timeout_s + "
                f"poll_timeout_s = {polling.request_timeout_s + polling.timeout_s:g}: the core would otherwise cut "
                "off a task that is still being polled and submit (and pay for) it again. Raise limits.timeout_s or "
                "lower poll_timeout_s.")

    def setup(self, params: BflParams) -> None:
        what, model = self.what, params.model
        if model not in self.family:
            raise ConfigError(f"{what}: model must be one of {', '.join(self.family)} (BFL endpoint names), "
                              f"not {model!r}.")
        self.spec: Model = MODELS[model]
        tolerance = params.safety_tolerance
        if isinstance(tolerance, bool) or not isinstance(tolerance, int) or not 0 <= tolerance <= self.spec.safety_max:
            raise ConfigError(f"{what}: safety_tolerance must be an integer from 0 (strictest) to "
                              f"{self.spec.safety_max} for {model}, not {tolerance!r}.")
        if params.output_format not in OUTPUT_FORMATS:
            raise ConfigError(f"{what}: output_format must be one of {', '.join(OUTPUT_FORMATS)}, not "
                              f"{params.output_format!r}.")
        if not isinstance(params.prompt_upsampling, bool):
            raise ConfigError(f"{what}: prompt_upsampling must be true or false, not {params.prompt_upsampling!r}.")
        for key in ("poll_interval_s", "poll_timeout_s", "request_timeout_s"):
            value = getattr(params, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"{what}: {key} must be a positive number of seconds, not {value!r}.")
        self.model = model
        self.polling = Polling(float(params.poll_interval_s), float(params.poll_timeout_s),
                               float(params.request_timeout_s))
        upsampling = {"disable_pup": not params.prompt_upsampling} if self.spec.upsampling_field == "disable_pup" \
            else {"prompt_upsampling": params.prompt_upsampling}
        extra = {k: getattr(params, k) for k in self.extra_fields if getattr(params, k) is not None}
        self.sent: dict[str, Any] = {"output_format": params.output_format,
                                     "safety_tolerance": tolerance, **upsampling, **extra}

    def connect(self, params: BflParams) -> BflConnection:
        return BflConnection(region=params.region, what=self.what, model=params.model, base_url=params.base_url,
                             api_key_env=params.api_key_env)

    def read_prices(self, prices: Mapping[str, Any] | None) -> dict[str, Any]:
        return self.spec.prices() if prices is None else self.check_prices(prices, self.what)

    def describe(self) -> dict[str, Any]:
        return {"provider": "bfl", "model": self.model, "version": self.model, "title": self.spec.title,
                "api": f"BFL API v1 POST /v1/{self.model}, poll get_result", "request_schema": self.spec.schema,
                **self.sent, "seed": f"per-step seed mod {SEEDS}", **self.connection.describe()}

    def request_body(self, request: EditRequest) -> dict[str, Any]:
        image = request.image
        if sniff_mime(image) not in INPUT_FORMATS:
            image = encode_png(decode_rgb(image, label="image sent to BFL"))
        return {"prompt": request.instruction, "input_image": base64.b64encode(image).decode("ascii"),
                "seed": request.seed % SEEDS, **self.sent}

    async def aedit(self, request: EditRequest) -> EditResult:
        return await Task(self.connection, self.model, self.polling).run(self.request_body(request))


class KontextProEditor(BflEditor):
    """FLUX.1 Kontext [pro] (``flux-kontext-pro``)."""

    name = "kontext_pro"
    family = ("flux-kontext-pro",)
    params_type = KontextProParams
    default_limits = KONTEXT_PRO_LIMITS
    extra_fields = ("aspect_ratio",)


class KontextMaxEditor(KontextProEditor):
    """FLUX.1 Kontext [max] (``flux-kontext-max``): BFL allows 6 active tasks on it."""

    name = "kontext_max"
    family = ("flux-kontext-max",)
    params_type = KontextMaxParams
    default_limits = KONTEXT_MAX_LIMITS


class Flux2ProEditor(BflEditor):
    """FLUX.2 [pro] (``flux-2-pro``; ``flux-2-pro-preview`` selectable): editing through ``input_image``."""

    name = "flux2_pro"
    family = ("flux-2-pro", "flux-2-pro-preview")
    params_type = Flux2ProParams
    default_limits = FLUX2_LIMITS


class Flux2FlexEditor(BflEditor):
    """FLUX.2 [flex] (``flux-2-flex``): also takes diffusion steps and guidance."""

    name = "flux2_flex"
    family = ("flux-2-flex",)
    params_type = Flux2FlexParams
    default_limits = FLUX2_LIMITS
    extra_fields = ("steps", "guidance")

    def setup(self, params: Flux2FlexParams) -> None:
        steps, guidance = params.steps, params.guidance
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 50):
            raise ConfigError(f"{self.what}: steps must be an integer from 1 to 50 (or null: not sent), not {steps!r}.")
        if guidance is not None and (isinstance(guidance, bool) or not isinstance(guidance, (int, float))
                                     or not 1.5 <= guidance <= 10):
            raise ConfigError(f"{self.what}: guidance must be from 1.5 to 10 (or null: not sent), not {guidance!r}.")
        super().setup(params)
