"""A fake Black Forest Labs API on 127.0.0.1: submit a task, poll it, download its result.

Wire protocol (BFL API reference, ``api.bfl.ai/openapi.json``):

* ``POST /v1/<model>`` (``flux-kontext-pro``, ``flux-kontext-max``, ``flux-2-pro``,
  ``flux-2-pro-preview``, ``flux-2-flex``) with header ``x-key`` and a JSON body of the model's
  input schema (``FluxKontextProInputs``, ``Flux2Inputs``, ``Flux2FlexInputs``; unknown fields
  and out-of-range values are answered 422 in FastAPI's ``{"detail": [{loc, msg, type}]}``
  shape, so a wrong field name fails a test instead of being ignored). The answer is
  ``AsyncResponse``: ``{"id", "polling_url", "cost" (credits), "input_mp", "output_mp"}``.
* ``GET /v1/get_result?id=<id>`` (the ``polling_url``), header ``x-key``: ``ResultResponse``
  ``{"id", "status", "result", "progress", "details", "preview"}`` with status ``Pending`` until
  the task's generation time has passed, then ``Ready`` with ``result.sample`` (a signed URL,
  a fresh one per poll, valid ``url_ttl_s``), or ``Request Moderated`` / ``Content Moderated``
  with ``details["Moderation Reasons"]``, ``Error``, ``Task not found``.
* ``GET /delivery/<id>/<n>/sample.<ext>?se=<expiry>&sig=<...>``: the image, without a key
  (``key_sent_to_delivery`` counts requests that carried one anyway: a client must not send
  its key to the delivery host). An expired URL answers 403 with a storage-style XML error.

Only submissions draw faults (``script([...])``, ``fault_rates``) and count against
``rpm_limit``; a submission's fault then decides what happens to its task. Generic faults of
:mod:`tests.fakes.base` (``429`` with Retry-After, ``500``, ``503``, ``timeout``, ``truncated``)
hit the submission itself; after ``truncated`` and ``timeout`` the task exists all the same (its
answer was cut short or came too late), as it would at BFL, which charges for it. Task faults:

* ``request_moderated``: the first poll answers ``Request Moderated`` (the input was moderated);
* ``content_moderated``: after generation, ``Content Moderated`` (the output was);
* ``error``: after generation, ``Error``; ``task_not_found``: every poll ``Task not found``;
* ``never_ready``: ``Pending`` forever (the task stays active);
* ``slow``: generation takes ``slow_factor`` times longer; ``slow_poll``: every poll of the
  task answers after ``poll_latency_s``;
* ``poll_500`` / ``poll_429``: the task's first poll answers 500 / 429 with Retry-After;
* ``expired_url``: the first result URL handed out is already expired, later ones are valid;
  ``expired_url_always``: every result URL is expired;
* ``truncated_download``: the first download is cut short (Content-Length larger than the body);
  ``truncated_download_always``: every download is;
* ``bad_request``: 422; ``no_credits``: 402.

``max_active``: tasks submitted and not yet finished above which a submission gets 429 (BFL's
limit on active tasks, 24 by default there). ``submit_latency_s`` delays submissions only.
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from PIL import Image

from tests.fakes.answers import fake_edit
from tests.fakes.base import FakeRequest, FakeResponse, FakeServer

DEFAULT_KEY = "bfl-test-fake-key-0000"
_IMAGES = tuple(["input_image"] + [f"input_image_{i}" for i in range(2, 9)])
_WEBHOOK = {"webhook_url", "webhook_secret"}
#: Request fields of each schema (BFL OpenAPI), and the highest safety_tolerance it takes.
KONTEXT_FIELDS = frozenset({"prompt", *_IMAGES[:4], "seed", "aspect_ratio", "output_format", "prompt_upsampling",
                            "safety_tolerance", *_WEBHOOK})
FLUX2_FIELDS = frozenset({"prompt", "disable_pup", *_IMAGES, "seed", "width", "height", "safety_tolerance",
                          "output_format", *_WEBHOOK})
FLEX_FIELDS = frozenset({"prompt", "prompt_upsampling", *_IMAGES, "input_image_blob_path", "seed", "width", "height",
                         "guidance", "steps", "safety_tolerance", "output_format", *_WEBHOOK})
#: model -> (fields, highest safety_tolerance, credits for the first MP, credits per further MP; None: flat)
MODELS: dict[str, tuple[frozenset[str], int, float, float | None]] = {
    "flux-kontext-pro": (KONTEXT_FIELDS, 6, 4.0, None),
    "flux-kontext-max": (KONTEXT_FIELDS, 6, 8.0, None),
    "flux-2-pro": (FLUX2_FIELDS, 5, 3.0, 1.5),
    "flux-2-pro-preview": (FLUX2_FIELDS, 5, 3.0, 1.5),
    "flux-2-flex": (FLEX_FIELDS, 5, 5.0, 5.0),
}
OUTPUT_FORMATS = ("jpeg", "png")
MODERATION_REASONS = {"request_moderated": ["Derivative Works"], "content_moderated": ["NSFW"]}
TASK_FAULTS = frozenset({"request_moderated", "content_moderated", "error", "task_not_found", "never_ready", "slow",
                         "slow_poll", "poll_500", "poll_429", "expired_url", "expired_url_always",
                         "truncated_download", "truncated_download_always", "bad_request", "no_credits"})
EXPIRED_XML = (b'<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server '
               b'failed to authenticate the request. Signed expiry time has passed.</Message></Error>')


def bfl_error(status: int, message: Any, **headers: str) -> FakeResponse:
    """FastAPI's error shape, which the BFL API answers with."""
    return FakeResponse.json(status, {"detail": message}, **headers)


@dataclass
class Task:
    id: str
    model: str
    body: dict[str, Any]
    fault: str | None
    submitted_at: float
    ready_at: float
    result: bytes
    extension: str
    polls: int = 0
    downloads: int = 0
    urls_issued: int = 0
    url_expiry: dict[int, float] = field(default_factory=dict)


def _validation_error(loc: list[Any], msg: str, kind: str) -> FakeResponse:
    return bfl_error(422, [{"loc": ["body", *loc], "msg": msg, "type": kind}])


def _megapixels(image: bytes) -> float:
    with Image.open(io.BytesIO(image)) as img:
        return round(img.width * img.height / 1e6, 2)


class BFLFakeServer(FakeServer):
    """See the module docstring."""

    def __init__(self, *, api_key: str = DEFAULT_KEY, generation_s: float = 0.05, submit_latency_s: float = 0.0,
                 poll_latency_s: float = 0.3, slow_factor: float = 4.0, url_ttl_s: float = 600.0,
                 max_active: int | None = None, **kwargs: Any) -> None:
        self.api_key = api_key
        self.generation_s = generation_s
        self.submit_latency_s = submit_latency_s
        self.poll_latency_s = poll_latency_s
        self.slow_factor = slow_factor
        self.url_ttl_s = url_ttl_s
        self.max_active = max_active
        self.tasks: dict[str, Task] = {}
        self.submissions: list[dict[str, Any]] = []  # accepted submission bodies, in order
        self.polls = 0
        self.downloads = 0
        self.key_sent_to_delivery = 0
        self.peak_active = 0
        self._state = threading.Lock()
        kwargs.setdefault("error_body", lambda status, msg: bfl_error(status, msg))
        super().__init__(self._handle, **kwargs)

    def draws_fault(self, method: str, path: str) -> bool:
        return method == "POST"  # submissions only: polls and downloads never spend the rpm window

    def last(self) -> dict[str, Any]:
        """The body of the latest accepted submission."""
        if not self.submissions:
            raise AssertionError("no submission reached the fake BFL server")
        return self.submissions[-1]

    def active(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        return sum(1 for t in self.tasks.values() if t.fault == "never_ready" or t.ready_at > now)

    # -- dispatch ----------------------------------------------------------------------

    def _handle(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        parts = urlsplit(request.path)
        if parts.path.startswith("/delivery/"):
            return self._download(request, parts.path)
        if request.headers.get("x-key") != self.api_key:
            return bfl_error(403, "Not authenticated")
        if request.method == "GET" and parts.path == "/v1/get_result":
            return self._poll(parse_qs(parts.query).get("id", [""])[0])
        if request.method == "POST" and parts.path.startswith("/v1/"):
            model = parts.path.removeprefix("/v1/")
            if model not in MODELS:
                return bfl_error(404, "Not Found")
            if fault in ("truncated", "timeout"):
                fault = None  # the task is made all the same: only its answer is cut short or late
            if fault is not None and fault not in TASK_FAULTS:
                return bfl_error(400, f"fake server: fault {fault!r} has no meaning on a submission")
            return self._submit(request, model, fault)
        return bfl_error(404, "Not Found")

    # -- submit ------------------------------------------------------------------------

    def _submit(self, request: FakeRequest, model: str, fault: str | None) -> FakeResponse:
        if self.submit_latency_s:
            time.sleep(self.submit_latency_s)
        try:
            body = request.json()
        except ValueError:
            return _validation_error([], "JSON decode error", "json_invalid")
        fields, safety_max, first_mp, per_mp = MODELS[model]
        if not isinstance(body, dict):
            return _validation_error([], "Input should be a valid dictionary", "dict_type")
        unknown = sorted(set(body) - fields)
        if unknown:  # the real API ignores unknown fields; pinning them here catches a misspelt one
            return _validation_error([unknown[0]], "Extra inputs are not permitted", "extra_forbidden")
        if not isinstance(body.get("prompt"), str):
            return _validation_error(["prompt"], "Field required", "missing")
        tolerance = body.get("safety_tolerance", 2)
        if not isinstance(tolerance, int) or not 0 <= tolerance <= safety_max:
            return _validation_error(["safety_tolerance"], f"Input should be less than or equal to {safety_max}",
                                     "less_than_equal")
        output_format = body.get("output_format") or ("png" if model.startswith("flux-kontext") else "jpeg")
        if output_format not in OUTPUT_FORMATS:
            return _validation_error(["output_format"], "Input should be 'jpeg' or 'png'", "enum")
        if fault == "bad_request":
            return _validation_error(["aspect_ratio"], "Aspect ratio must be between 21:9 and 9:21", "value_error")
        if fault == "no_credits":
            return bfl_error(402, "Insufficient credits. Add credits at https://dashboard.bfl.ai")
        try:
            image = base64.b64decode(body["input_image"], validate=True)
            Image.open(io.BytesIO(image)).verify()
        except (KeyError, TypeError, binascii.Error, ValueError, OSError) as exc:
            return _validation_error(["input_image"], f"input_image is not a base64 image: {exc}", "value_error")
        now = time.monotonic()
        with self._state:
            if self.max_active is not None and self.active(now) >= self.max_active:
                return bfl_error(429, f"You have exceeded the limit of {self.max_active} active tasks.",
                                 **{"Retry-After": f"{self.retry_after:g}"})
            generation = self.generation_s * (self.slow_factor if fault == "slow" else 1.0)
            task = Task(uuid.uuid4().hex, model, body, fault, now, now + generation,
                        self._edited(image, body["prompt"], output_format), "jpg" if output_format == "jpeg" else "png")
            self.tasks[task.id] = task
            self.submissions.append(body)
            self.peak_active = max(self.peak_active, self.active(now))
        in_mp = _megapixels(image)
        cost = first_mp if per_mp is None else first_mp + max(0.0, in_mp - 1) * per_mp + in_mp * per_mp
        return FakeResponse.json(200, {"id": task.id, "polling_url": f"{self.url}/v1/get_result?id={task.id}",
                                       "cost": round(cost, 2), "input_mp": in_mp, "output_mp": in_mp})

    @staticmethod
    def _edited(image: bytes, prompt: str, output_format: str) -> bytes:
        edited = fake_edit(image, prompt)
        if output_format == "png":
            return edited
        buf = io.BytesIO()
        Image.open(io.BytesIO(edited)).convert("RGB").save(buf, format="JPEG", quality=95)
        return buf.getvalue()

    # -- poll --------------------------------------------------------------------------

    def _poll(self, task_id: str) -> FakeResponse:
        with self._state:
            self.polls += 1
            task = self.tasks.get(task_id)
            if task is not None:
                task.polls += 1
        if task is None or task.fault == "task_not_found":
            return FakeResponse.json(200, {"id": task_id, "status": "Task not found", "result": None,
                                           "progress": None, "details": None, "preview": None})
        fault = task.fault
        if fault == "slow_poll":
            time.sleep(self.poll_latency_s)
        if task.polls == 1 and fault == "poll_500":
            return bfl_error(500, "Internal Server Error")
        if task.polls == 1 and fault == "poll_429":
            return bfl_error(429, "Too many requests", **{"Retry-After": f"{self.retry_after:g}"})
        answer: dict[str, Any] = {"id": task.id, "status": "Pending", "result": None, "progress": None,
                                  "details": None, "preview": None}
        now = time.monotonic()
        if fault == "request_moderated":
            return FakeResponse.json(200, {**answer, "status": "Request Moderated",
                                           "details": {"Moderation Reasons": MODERATION_REASONS[fault]}})
        if fault == "never_ready" or now < task.ready_at:
            span = max(task.ready_at - task.submitted_at, 1e-9)
            progress = 0.0 if fault == "never_ready" else min(0.99, (now - task.submitted_at) / span)
            return FakeResponse.json(200, {**answer, "progress": round(progress, 2)})
        if fault == "content_moderated":
            return FakeResponse.json(200, {**answer, "status": "Content Moderated",
                                           "details": {"Moderation Reasons": MODERATION_REASONS[fault]}})
        if fault == "error":
            return FakeResponse.json(200, {**answer, "status": "Error",
                                           "details": {"error": "Generation failed, please try again."}})
        with self._state:
            task.urls_issued += 1
            n = task.urls_issued
            expired = fault == "expired_url_always" or (fault == "expired_url" and n == 1)
            expiry = now - 1.0 if expired else now + self.url_ttl_s
            task.url_expiry[n] = expiry
        sample = (f"{self.url}/delivery/{task.id}/{n}/sample.{task.extension}"
                  f"?se={int(time.time() + expiry - now)}&sig={uuid.uuid4().hex}")
        body = task.body
        return FakeResponse.json(200, {**answer, "status": "Ready", "progress": 1.0, "result": {
            "sample": sample, "prompt": body["prompt"], "seed": body.get("seed"),
            "start_time": time.time() - (now - task.submitted_at), "end_time": time.time(),
            "duration": round(task.ready_at - task.submitted_at, 3)}})

    # -- download ----------------------------------------------------------------------

    def _download(self, request: FakeRequest, path: str) -> FakeResponse:
        with self._state:
            self.downloads += 1
            if "x-key" in request.headers:
                self.key_sent_to_delivery += 1
        try:
            _, _, task_id, serial, _ = path.split("/", 4)
            task = self.tasks[task_id]
            expiry = task.url_expiry[int(serial)]
        except (ValueError, KeyError):
            return FakeResponse(404, b"<Error><Code>BlobNotFound</Code></Error>", "application/xml")
        if time.monotonic() > expiry:
            return FakeResponse(403, EXPIRED_XML, "application/xml")
        with self._state:
            task.downloads += 1
            first = task.downloads == 1
        mime = "image/jpeg" if task.extension == "jpg" else "image/png"
        cut = task.fault == "truncated_download_always" or (first and task.fault == "truncated_download")
        return FakeResponse(200, task.result, mime, truncate=cut)


def bfl_server(**kwargs: Any) -> BFLFakeServer:
    """A fake BFL server (not started: use it as a context manager or call ``start()``).
    Takes :class:`BFLFakeServer`'s options and every :class:`~tests.fakes.base.FakeServer` one."""
    return BFLFakeServer(**kwargs)

