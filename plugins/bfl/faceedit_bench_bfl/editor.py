"""The BFL editors: ``kontext_pro``, ``kontext_max`` (FLUX.1 Kontext) and ``flux2_pro``,
``flux2_flex`` (FLUX.2), each one BFL task per step (see :mod:`faceedit_bench_bfl.task`).

The image to edit goes as base64 ``input_image`` (PNG, JPEG and WEBP unchanged, anything else
re-encoded as PNG), with the instruction as ``prompt``, the per-step seed, ``output_format``,
``safety_tolerance`` and prompt upsampling off by default (the instruction is sent as written).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import (
    ConfigError,
    EditRequest,
    EditResult,
    check_prices,
    decode_rgb,
    encode_png,
    limits_from_config,
    sniff_mime,
)
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


class BflEditor:
    """What the four editors share; each subclass fixes the model family and its defaults."""

    name = "bfl"
    family: tuple[str, ...] = ()

    def __init__(self, *, model: str, region: str, base_url: str | None, api_key_env: str, safety_tolerance: int,
                 output_format: str, prompt_upsampling: bool, poll_interval_s: float, poll_timeout_s: float,
                 request_timeout_s: float, limits: Mapping[str, Any], default_limits: Mapping[str, Any],
                 prices: Mapping[str, Any] | None, extra: Mapping[str, Any] | None = None) -> None:
        what = f"editor {self.name}"
        if model not in self.family:
            raise ConfigError(f"{what}: model must be one of {', '.join(self.family)} (BFL endpoint names), "
                              f"not {model!r}.")
        self.spec: Model = MODELS[model]
        if isinstance(safety_tolerance, bool) or not isinstance(safety_tolerance, int) or \
                not 0 <= safety_tolerance <= self.spec.safety_max:
            raise ConfigError(f"{what}: safety_tolerance must be an integer from 0 (strictest) to "
                              f"{self.spec.safety_max} for {model}, not {safety_tolerance!r}.")
        if output_format not in OUTPUT_FORMATS:
            raise ConfigError(f"{what}: output_format must be one of {', '.join(OUTPUT_FORMATS)}, not "
                              f"{output_format!r}.")
        if not isinstance(prompt_upsampling, bool):
            raise ConfigError(f"{what}: prompt_upsampling must be true or false, not {prompt_upsampling!r}.")
        for key, value in (("poll_interval_s", poll_interval_s), ("poll_timeout_s", poll_timeout_s),
                           ("request_timeout_s", request_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"{what}: {key} must be a positive number of seconds, not {value!r}.")
        self.model = model
        self.connection = BflConnection(region=region, base_url=base_url, api_key_env=api_key_env, model=model,
                                        what=what)
        self.prepare = self.connection.prepare  # the SDK made ready beside the first admission
        self.limits = limits_from_config(limits, default_limits, provider_key=self.connection.provider_key,
                                         what=what, endpoint=self.connection.where("editor.params.base_url"))
        if self.limits.timeout_s < request_timeout_s + poll_timeout_s:
            raise ConfigError(
                f"{what}: limits.timeout_s={self.limits.timeout_s:g} must be at least request_timeout_s + "
                f"poll_timeout_s = {request_timeout_s + poll_timeout_s:g}: the core would otherwise cut off a task "
                "that is still being polled and submit (and pay for) it again. Raise limits.timeout_s or lower "
                "poll_timeout_s.")
        self.polling = Polling(float(poll_interval_s), float(poll_timeout_s), float(request_timeout_s))
        self.prices = self.spec.prices() if prices is None else check_prices(prices, what)
        upsampling = {"disable_pup": not prompt_upsampling} if self.spec.upsampling_field == "disable_pup" \
            else {"prompt_upsampling": prompt_upsampling}
        self.params: dict[str, Any] = {"output_format": output_format, "safety_tolerance": safety_tolerance,
                                       **upsampling, **{k: v for k, v in (extra or {}).items() if v is not None}}

    def describe(self) -> dict[str, Any]:
        return {"provider": "bfl", "model": self.model, "version": self.model, "title": self.spec.title,
                "api": f"BFL API v1 POST /v1/{self.model}, poll get_result", "request_schema": self.spec.schema,
                **self.params, "seed": f"per-step seed mod {SEEDS}", **self.connection.describe()}

    def request_body(self, request: EditRequest) -> dict[str, Any]:
        image = request.image
        if sniff_mime(image) not in INPUT_FORMATS:
            image = encode_png(decode_rgb(image, label="image sent to BFL"))
        return {"prompt": request.instruction, "input_image": base64.b64encode(image).decode("ascii"),
                "seed": request.seed % SEEDS, **self.params}

    async def aedit(self, request: EditRequest) -> EditResult:
        return await Task(self.connection, self.model, self.polling).run(self.request_body(request))


class KontextProEditor(BflEditor):
    """FLUX.1 Kontext [pro] (``flux-kontext-pro``)."""

    name = "kontext_pro"
    family = ("flux-kontext-pro",)

    def __init__(self, model: str = "flux-kontext-pro", region: str = "global", base_url: str | None = None,
                 api_key_env: str = "BFL_API_KEY", safety_tolerance: int = 2, output_format: str = "png",
                 prompt_upsampling: bool = False, aspect_ratio: str | None = None, poll_interval_s: float = 0.5,
                 poll_timeout_s: float = 300.0, request_timeout_s: float = 30.0,
                 limits: Mapping[str, Any] = KONTEXT_PRO_LIMITS, prices: Mapping[str, Any] | None = None) -> None:
        super().__init__(model=model, region=region, base_url=base_url, api_key_env=api_key_env,
                         safety_tolerance=safety_tolerance, output_format=output_format,
                         prompt_upsampling=prompt_upsampling, poll_interval_s=poll_interval_s,
                         poll_timeout_s=poll_timeout_s, request_timeout_s=request_timeout_s, limits=limits,
                         default_limits=KONTEXT_PRO_LIMITS, prices=prices, extra={"aspect_ratio": aspect_ratio})


class KontextMaxEditor(BflEditor):
    """FLUX.1 Kontext [max] (``flux-kontext-max``): BFL allows 6 active tasks on it."""

    name = "kontext_max"
    family = ("flux-kontext-max",)

    def __init__(self, model: str = "flux-kontext-max", region: str = "global", base_url: str | None = None,
                 api_key_env: str = "BFL_API_KEY", safety_tolerance: int = 2, output_format: str = "png",
                 prompt_upsampling: bool = False, aspect_ratio: str | None = None, poll_interval_s: float = 0.5,
                 poll_timeout_s: float = 300.0, request_timeout_s: float = 30.0,
                 limits: Mapping[str, Any] = KONTEXT_MAX_LIMITS, prices: Mapping[str, Any] | None = None) -> None:
        super().__init__(model=model, region=region, base_url=base_url, api_key_env=api_key_env,
                         safety_tolerance=safety_tolerance, output_format=output_format,
                         prompt_upsampling=prompt_upsampling, poll_interval_s=poll_interval_s,
                         poll_timeout_s=poll_timeout_s, request_timeout_s=request_timeout_s, limits=limits,
                         default_limits=KONTEXT_MAX_LIMITS, prices=prices, extra={"aspect_ratio": aspect_ratio})


class Flux2ProEditor(BflEditor):
    """FLUX.2 [pro] (``flux-2-pro``; ``flux-2-pro-preview`` selectable): editing through ``input_image``."""

    name = "flux2_pro"
    family = ("flux-2-pro", "flux-2-pro-preview")

    def __init__(self, model: str = "flux-2-pro", region: str = "global", base_url: str | None = None,
                 api_key_env: str = "BFL_API_KEY", safety_tolerance: int = 2, output_format: str = "png",
                 prompt_upsampling: bool = False, poll_interval_s: float = 0.5, poll_timeout_s: float = 300.0,
                 request_timeout_s: float = 30.0, limits: Mapping[str, Any] = FLUX2_LIMITS,
                 prices: Mapping[str, Any] | None = None) -> None:
        super().__init__(model=model, region=region, base_url=base_url, api_key_env=api_key_env,
                         safety_tolerance=safety_tolerance, output_format=output_format,
                         prompt_upsampling=prompt_upsampling, poll_interval_s=poll_interval_s,
                         poll_timeout_s=poll_timeout_s, request_timeout_s=request_timeout_s, limits=limits,
                         default_limits=FLUX2_LIMITS, prices=prices)


class Flux2FlexEditor(BflEditor):
    """FLUX.2 [flex] (``flux-2-flex``): also takes diffusion steps and guidance."""

    name = "flux2_flex"
    family = ("flux-2-flex",)

    def __init__(self, model: str = "flux-2-flex", region: str = "global", base_url: str | None = None,
                 api_key_env: str = "BFL_API_KEY", safety_tolerance: int = 2, output_format: str = "png",
                 prompt_upsampling: bool = False, steps: int | None = 50, guidance: float | None = 5.0,
                 poll_interval_s: float = 0.5, poll_timeout_s: float = 300.0, request_timeout_s: float = 30.0,
                 limits: Mapping[str, Any] = FLUX2_LIMITS, prices: Mapping[str, Any] | None = None) -> None:
        what = f"editor {self.name}"
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 50):
            raise ConfigError(f"{what}: steps must be an integer from 1 to 50 (or null: not sent), not {steps!r}.")
        if guidance is not None and (isinstance(guidance, bool) or not isinstance(guidance, (int, float))
                                     or not 1.5 <= guidance <= 10):
            raise ConfigError(f"{what}: guidance must be from 1.5 to 10 (or null: not sent), not {guidance!r}.")
        super().__init__(model=model, region=region, base_url=base_url, api_key_env=api_key_env,
                         safety_tolerance=safety_tolerance, output_format=output_format,
                         prompt_upsampling=prompt_upsampling, poll_interval_s=poll_interval_s,
                         poll_timeout_s=poll_timeout_s, request_timeout_s=request_timeout_s, limits=limits,
                         default_limits=FLUX2_LIMITS, prices=prices, extra={"steps": steps, "guidance": guidance})
