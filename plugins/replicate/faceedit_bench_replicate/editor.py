"""The ``replicate`` editor: any Replicate model, pinned to an immutable version, one prediction per step.

One attempt per :meth:`ReplicateEditor.aedit`: create the prediction with ``Prefer: wait``
(the answer is often already final), poll its ``urls.get`` (``GET /v1/predictions/<id>``)
every ``poll_interval_s`` until it ends, then download the output file. The input names come
from the model's input schema, in config (``image_param``, ``prompt_param``, ``seed_param``,
fixed ``inputs``), because every Replicate model names them differently.

A transient failure after the prediction was created (a poll answered 5xx, a cut-off
download) raises :class:`RetryableError`; the retry resumes polling the SAME prediction
instead of paying for a new one. Only a result URL that has expired forgets it, since its
output is gone. A prediction still running after ``max_wait_s`` is canceled and recorded as
``api_error``.

Outcomes: an image -> ``ok``; ``failed`` with an NSFW / flagged-as-sensitive error, or an
output carrying an NSFW flag -> ``refused``; any other ``failed`` or ``canceled`` ->
``api_error`` with the model's error; no output -> ``no_image``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import (
    ConfigError,
    EditRequest,
    EditResult,
    HostedComponent,
    HostedParams,
    Outcome,
    RetryableError,
    redact,
)
from faceedit_bench.api.images import content_hash, decode_rgb, encode_png, sniff_mime
from faceedit_bench_replicate.connection import ReplicateConnection
from faceedit_bench_replicate.failures import failure_outcome

#: ``owner/name:<64 hex>``: a version id is the sha256 of the model's image, so it never changes.
PINNED = re.compile(r"^(?P<model>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<version>[0-9a-f]{64})$")
#: Replicate allows 600 prediction creations/min per account; polls and downloads fall under its
#: 3000/min for other requests. One attempt covers a whole prediction (wait, polls, download).
DEFAULT_LIMITS = MappingProxyType({
    "max_concurrency": 8, "requests_per_minute": 480, "tokens_per_minute": None, "tokens_per_call": 0,
    "max_attempts": 6, "timeout_s": 660.0, "backoff_initial_s": 2.0, "backoff_max_s": 60.0,
})
#: Error texts of a prediction declined by a safety checker (Replicate's E005, diffusers' NSFW checker,
#: BFL's moderation as relayed by Replicate), matched case-insensitively.
REFUSAL_PATTERNS = ("nsfw", "flagged as sensitive", "(e005)", "content moderated", "request moderated",
                    "safety filter", "content policy")
#: Output fields that flag a generated image as NSFW.
NSFW_KEYS = ("has_nsfw_concepts", "nsfw_content_detected", "nsfw")
TERMINAL = frozenset({"succeeded", "failed", "canceled", "aborted"})
INPUT_FORMATS = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
EXPIRED = frozenset({401, 403, 404, 410})  # what a signed delivery URL answers once it has expired


@dataclass
class _Pending:
    """A prediction created for a step whose outcome is not recorded yet."""

    id: str
    created: float


@dataclass(frozen=True, kw_only=True)
class ReplicateParams(HostedParams):
    """See ``conf/editor/replicate.yaml``."""

    model: str | None = None  # owner/name:<version id>
    image_param: str = "input_image"
    prompt_param: str = "prompt"
    seed_param: str | None = "seed"
    inputs: Mapping[str, Any] = field(default_factory=dict)
    output_key: str | None = None
    nsfw_keys: Sequence[str] = NSFW_KEYS
    refusal_patterns: Sequence[str] = REFUSAL_PATTERNS
    wait_s: int = 60
    poll_interval_s: float = 1.0
    max_wait_s: float = 600.0
    api_key_env: str = "REPLICATE_API_TOKEN"
    limits: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_LIMITS)
    prices: Mapping[str, Any] = field(default_factory=dict)


class ReplicateEditor(HostedComponent):
    """See the module docstring and ``conf/editor/replicate.yaml`` for the parameters."""

    name = "replicate"
    params_type = ReplicateParams
    connection_type = ReplicateConnection
    default_limits = DEFAULT_LIMITS

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.limits.timeout_s <= self.max_wait_s:
            raise ConfigError(f"{self.what}: limits.timeout_s ({self.limits.timeout_s:g}) must exceed max_wait_s "
                              f"({self.max_wait_s:g}): one attempt waits for the whole prediction.")
        self._pending: dict[tuple[Any, ...], _Pending] = {}

    def setup(self, params: ReplicateParams) -> None:
        what, inputs = self.what, params.inputs
        pinned = PINNED.match(str(params.model or ""))
        if pinned is None:
            raise ConfigError(_unpinned_message(what, params.model))
        if not isinstance(inputs, Mapping):
            raise ConfigError(f"{what}: inputs must be a mapping of the model's fixed input names to values, "
                              f"not {inputs!r}.")
        names = {"image_param": params.image_param, "prompt_param": params.prompt_param,
                 "seed_param": params.seed_param}
        for key, value in names.items():
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"{what}: {key} must be the name of an input in the model's schema, not {value!r}.")
            if value is not None and value in inputs:
                raise ConfigError(f"{what}: {value!r} is both {key} and a fixed entry of inputs; remove it from "
                                  "inputs (faceedit_bench sets it for every step).")
        if not 1 <= int(params.wait_s) <= 60:
            raise ConfigError(f"{what}: wait_s must be 1..60 (Replicate holds a request at most 60 s), not "
                              f"{params.wait_s!r}.")
        if float(params.poll_interval_s) <= 0 or float(params.max_wait_s) <= 0:
            raise ConfigError(f"{what}: poll_interval_s and max_wait_s must be positive.")
        self.model, self.version = pinned["model"], pinned["version"]
        self.image_param, self.prompt_param, self.seed_param = names.values()
        self.inputs = dict(inputs)
        self.output_key = params.output_key
        self.nsfw_keys = tuple(params.nsfw_keys)
        self.refusal_patterns = tuple(str(p).lower() for p in params.refusal_patterns)
        self.wait_s, self.poll_interval_s = int(params.wait_s), float(params.poll_interval_s)
        self.max_wait_s = float(params.max_wait_s)

    def connect(self, params: ReplicateParams) -> ReplicateConnection:
        return ReplicateConnection(what=self.what, model=self.model, base_url=params.base_url,
                                   api_key_env=params.api_key_env)

    @property
    def where(self) -> str:
        return f"{self.connection.endpoint.url.rstrip('/')}/v1/predictions"

    def describe(self) -> dict[str, Any]:
        return {"provider": "replicate", "model": self.model, "version": f"{self.model}:{self.version}",
                "api": "predictions (Prefer: wait, then poll urls.get)", "image_param": self.image_param,
                "prompt_param": self.prompt_param,
                "seed": f"request seed mod 2^31 as {self.seed_param}" if self.seed_param else "not sent",
                "inputs": dict(sorted(self.inputs.items())), "output_key": self.output_key,
                "image_encoding": "data URL", **self.connection.describe()}

    def _input(self, request: EditRequest) -> dict[str, Any]:
        values = {**self.inputs, self.image_param: _data_url(request.image), self.prompt_param: request.instruction}
        if self.seed_param:
            values[self.seed_param] = request.seed % 2**31
        return values

    async def aedit(self, request: EditRequest) -> EditResult:
        client = self.client()
        key = (request.face_id, request.session_id, request.k, request.seed, request.instruction,
               content_hash(request.image))
        polls = 0
        try:
            pending = self._pending.get(key)
            if pending is None:
                prediction = await client.predictions.async_create(version=self.version, input=self._input(request),
                                                                   wait=self.wait_s)
                pending = self._pending[key] = _Pending(prediction.id, time.monotonic())
            else:  # a retry: the prediction already exists and may have finished meanwhile
                prediction = await client.predictions.async_get(pending.id)
                polls += 1
            while prediction.status not in TERMINAL:
                if time.monotonic() - pending.created > self.max_wait_s:
                    return await self._give_up(client, key, prediction, polls)
                await asyncio.sleep(self.poll_interval_s)
                prediction = await client.predictions.async_get(prediction.id)
                polls += 1
        except RetryableError:
            raise
        except Exception as exc:  # failure_outcome re-raises what is not an API failure
            outcome, reason = failure_outcome(exc, self.where)
            self._pending.pop(key, None)  # a permanent failure: nothing to resume
            return EditResult(outcome, reason=reason, usage={"polls": polls})
        return await self._finished(client, key, prediction, polls)

    async def _give_up(self, client: Any, key: tuple[Any, ...], prediction: Any, polls: int) -> EditResult:
        self._pending.pop(key, None)
        try:
            await client.predictions.async_cancel(prediction.id)
            cancel = "canceled it"
        except Exception as exc:  # the outcome stays api_error either way; say why the cancel failed
            cancel = f"could not cancel it ({redact(type(exc).__name__)})"
        return EditResult(Outcome.API_ERROR, usage={"polls": polls, **_served(prediction)},
                          reason=f"prediction {prediction.id} still {prediction.status} after {self.max_wait_s:g} s "
                                 f"(max_wait_s); {cancel}")

    async def _finished(self, client: Any, key: tuple[Any, ...], prediction: Any, polls: int) -> EditResult:
        usage = {"polls": polls, **_served(prediction)}
        if prediction.status != "succeeded":
            self._pending.pop(key, None)
            error = redact(str(prediction.error or "no error message"))
            if prediction.status == "failed" and any(p in error.lower() for p in self.refusal_patterns):
                return EditResult(Outcome.REFUSED, reason=f"prediction failed: {error}", usage=usage)
            return EditResult(Outcome.API_ERROR, reason=f"prediction {prediction.status}: {error}", usage=usage)
        output = prediction.output
        flagged = self._nsfw_flag(output)
        if flagged:
            self._pending.pop(key, None)
            return EditResult(Outcome.REFUSED, reason=f"the output is flagged: {flagged}", usage=usage)
        url, missing = self._output_url(output)
        if url is None:
            self._pending.pop(key, None)
            return EditResult(Outcome.NO_IMAGE, reason=missing, usage=usage)
        image = await self._download(client, key, url)
        self._pending.pop(key, None)
        return EditResult.ok(image, images_out=1, **usage)

    def _nsfw_flag(self, output: Any) -> str | None:
        if not isinstance(output, Mapping):
            return None
        for name in self.nsfw_keys:
            value = output.get(name)
            if value is True or (isinstance(value, list) and any(v is True for v in value)):
                return f"{name}={value}"
        return None

    def _output_url(self, output: Any) -> tuple[str | None, str]:
        if self.output_key is not None:
            if not isinstance(output, Mapping) or not output.get(self.output_key):
                return None, f"the output has no {self.output_key!r}: {_snippet(output)}"
            output = output[self.output_key]
        elif isinstance(output, Mapping):
            return None, (f"the output is an object with keys {sorted(output)}; set output_key to the one that "
                          "holds the image")
        if isinstance(output, list):
            output = next((item for item in output if isinstance(item, str) and item), None)
        if isinstance(output, str) and output:
            return output, ""
        return None, f"the prediction succeeded without an output file: {_snippet(output)}"

    async def _download(self, client: Any, key: tuple[Any, ...], url: str) -> bytes:
        import httpx
        from replicate.helpers import FileOutput

        try:
            return await FileOutput(url, client).aread()
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            if status in EXPIRED:  # its output is gone: the retry makes a new prediction
                self._pending.pop(key, None)
                raise RetryableError("server_error", f"the result URL answered HTTP {status} (expired); "
                                     "a new prediction is needed", status=status) from exc
            kind = "rate_limited" if status == 429 else "server_error"
            raise RetryableError(kind, f"downloading the output: HTTP {status}", status=status) from exc
        except Exception as exc:
            transient = self.connection.transport_failure(exc, f"downloading the output {_safe(url)}")
            if transient is None:
                raise
            raise transient from exc


def _served(prediction: Any) -> dict[str, Any]:
    served: dict[str, Any] = {"prediction_id": prediction.id}
    if getattr(prediction, "version", None):
        served["model_version"] = f"{prediction.model}:{prediction.version}"
    predict_time = (getattr(prediction, "metrics", None) or {}).get("predict_time")
    if predict_time is not None:
        served["predict_time_s"] = float(predict_time)
    return served


def _safe(url: str) -> str:
    """A URL for messages: without its query (a signed URL's signature)."""
    return url.split("?", 1)[0]


def _snippet(value: Any) -> str:
    text = redact(repr(value))
    return text if len(text) <= 120 else text[:119] + "…"


def _data_url(data: bytes) -> str:
    import base64

    mime = sniff_mime(data)
    if mime not in INPUT_FORMATS:
        data, mime = encode_png(decode_rgb(data, label="image sent to Replicate")), "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _unpinned_message(what: str, model: Any) -> str:
    if not model:
        return (f"{what}: no model given. Name a Replicate model pinned to a version, e.g. "
                "editor.params.model=black-forest-labs/flux-kontext-pro:<64-hex version id>, or pick a ready entry "
                "(editor=replicate_flux_kontext_pro, editor=replicate_bagel; `faceedit-bench ls editor`).")
    text = str(model)
    owner_name = text.split(":", 1)[0]
    return (f"{what}: model {text!r} is not pinned to an immutable version. Write it as owner/model:<version id> "
            f"(64 hex characters): the version ids of {owner_name} are listed at "
            f"https://replicate.com/{owner_name}/versions (or `replicate.models.get({owner_name!r}).latest_version.id`)."
            " A bare model name or :latest could run different weights from one day to the next, so the results "
            "would not say what ran.")
