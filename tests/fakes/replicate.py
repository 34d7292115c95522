"""A fake Replicate HTTP API on 127.0.0.1, speaking the protocol the ``replicate`` SDK sends.

Endpoints:

* ``POST /v1/predictions`` with ``{"version": <64-hex id>, "input": {...}}``. With
  ``Prefer: wait=<n>`` the request is held until the prediction finishes, for at most
  ``min(n, sync_wait_s)`` seconds, then answered 201 with the prediction as it stands
  (finished, or ``starting``/``processing`` with ``urls.get`` to poll);
* ``GET /v1/predictions/<id>`` (the prediction's ``urls.get``): its current state;
* ``POST /v1/predictions/<id>/cancel``;
* ``GET /delivery/<id>/<file>``: the output file (what ``replicate.delivery`` serves).

The prediction's output is :func:`tests.fakes.answers.fake_edit` of the image input (a data
URL under the input name ``image_param`` of the version's schema, as registered with
:meth:`ReplicateFakeServer.add_version`) and the prompt input. Every request must carry
``Authorization: Bearer <token>``; errors use Replicate's problem-details shape
(``{"title", "detail", "status"}``); a version that is not registered answers 422.

What a prediction does is planned per submission with ``server.plan([...])`` (one entry per
``POST /v1/predictions``, ``None`` = succeed after ``gen_s``), independently of the generic
per-request faults of :mod:`tests.fakes.base` (``server.script``: ``429`` with
``Retry-After``, ``500``, ``503``, ``truncated`` ...), which hit whichever request comes next:

* ``slow``: finishes only after ``slow_s``, so the client polls (``processing`` until then);
* ``never``: stays ``processing`` forever (until canceled);
* ``failed``: ``status: failed`` with a model error; ``canceled``: ``status: canceled``;
* ``nsfw_submit``: failed at once, in the create answer, with Replicate's E005 "flagged as
  sensitive" error (moderation of the input at submit time);
* ``nsfw_result``: fails when generation ends with "NSFW content detected" (moderation of the
  output at result time); ``nsfw_flag``: succeeds with a dict output whose
  ``has_nsfw_concepts`` is ``[true]`` (for a version registered with ``output_key``);
* ``no_output``: succeeds with ``output: null``;
* ``expired``: succeeds, but the output URL answers 404 (a result URL that has expired);
* ``truncated_download``: the output file announces more bytes than it sends;
* ``invalid_input``: the create answers 422 (a wrong input name for this version).
"""

from __future__ import annotations

import base64
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.answers import fake_edit
from tests.fakes.base import FakeRequest, FakeResponse, FakeServer

DEFAULT_TOKEN = "r8_test_fake_replicate_token"
#: Made-up pinned references the tests register (the fake accepts any 64-hex version id it was given).
KONTEXT_VERSION = "black-forest-labs/flux-kontext-pro:" + "0a" * 32
BAGEL_VERSION = "bytedance/bagel:" + "7d" * 32
PLANS = ("slow", "never", "failed", "canceled", "nsfw_submit", "nsfw_result", "nsfw_flag", "no_output", "expired",
         "truncated_download", "invalid_input")
E005 = "The input or output was flagged as sensitive. Please try again with different inputs. (E005)"
NSFW = "NSFW content detected. Try running it again, or try a different prompt."


def replicate_error(status: int, detail: str, title: str | None = None) -> FakeResponse:
    titles = {401: "Unauthenticated", 404: "Not found", 422: "Unprocessable Entity", 429: "Request was throttled",
              500: "Internal server error", 503: "Service unavailable"}
    return FakeResponse.json(status, {"title": title or titles.get(status, "Error"), "detail": detail,
                                      "status": status})


@dataclass
class FakeVersion:
    model: str  # owner/name
    version: str
    image_param: str = "input_image"
    prompt_param: str = "prompt"
    output_key: str | None = None  # the output is {output_key: url, ...} instead of a URL


@dataclass
class FakePrediction:
    id: str
    version: FakeVersion
    input: dict[str, Any]
    plan: str | None
    created: float
    done_at: float | None  # None: never
    output_bytes: bytes = b""
    canceled: bool = False
    polls: int = 0
    downloads: int = 0
    history: list[str] = field(default_factory=list)


class ReplicateFakeServer(FakeServer):
    """See the module docstring."""

    def __init__(self, *, token: str = DEFAULT_TOKEN, gen_s: float = 0.0, slow_s: float = 0.6,
                 sync_wait_s: float = 0.2, **kwargs: Any) -> None:
        self.token = token
        self.gen_s, self.slow_s, self.sync_wait_s = gen_s, slow_s, sync_wait_s
        self.versions: dict[str, FakeVersion] = {}
        self.predictions: dict[str, FakePrediction] = {}
        self.submissions: list[FakeRequest] = []
        self._plans: list[str | None] = []
        self._plan_lock = threading.Lock()
        kwargs.setdefault("error_body", self._error_body)
        super().__init__(self._handle, **kwargs)

    def _error_body(self, status: int, message: str) -> FakeResponse:
        if status == 429:  # Replicate's throttling answer names the wait in its detail too
            return replicate_error(429, f"Request was throttled. Expected available in {self.retry_after:g} second.")
        return replicate_error(status, message)

    # -- control -----------------------------------------------------------------------

    def add_version(self, ref: str, **kwargs: Any) -> FakeVersion:
        """Register ``owner/model:version`` with its input names (``image_param``, ...)."""
        model, version = ref.split(":", 1)
        self.versions[version] = FakeVersion(model, version, **kwargs)
        return self.versions[version]

    def plan(self, plans: list[str | None]) -> None:
        unknown = [p for p in plans if p is not None and p not in PLANS]
        if unknown:
            raise ValueError(f"unknown plan(s) {unknown}; use {PLANS}")
        with self._plan_lock:
            self._plans.extend(plans)

    @property
    def polls(self) -> int:
        return sum(p.polls for p in self.predictions.values())

    # -- dispatch ----------------------------------------------------------------------

    def _handle(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        path = request.path.split("?", 1)[0]
        if request.method == "GET" and path.startswith("/delivery/"):
            return self._deliver(path)
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return replicate_error(401, "You did not pass a valid authentication token")
        if fault is not None:
            return replicate_error(400, f"fake server: fault {fault!r} has no meaning here", title="Fake fault")
        if request.method == "POST" and path == "/v1/predictions":
            return self._create(request)
        parts = path.strip("/").split("/")
        if len(parts) >= 3 and parts[:2] == ["v1", "predictions"] and parts[2] in self.predictions:
            prediction = self.predictions[parts[2]]
            if request.method == "GET" and len(parts) == 3:
                prediction.polls += 1
                return FakeResponse.json(200, self._state(prediction))
            if request.method == "POST" and parts[3:] == ["cancel"]:
                prediction.canceled = True
                return FakeResponse.json(200, self._state(prediction))
        return replicate_error(404, f"The requested resource {request.method} {path} could not be found")

    def _create(self, request: FakeRequest) -> FakeResponse:
        self.submissions.append(request)
        body = request.json()
        version = self.versions.get(str(body.get("version", "")))
        if version is None:
            return replicate_error(422, "Invalid version or not permitted", title="Invalid version")
        with self._plan_lock:
            plan = self._plans.pop(0) if self._plans else None
        inputs = body.get("input") or {}
        if plan == "invalid_input" or version.image_param not in inputs or version.prompt_param not in inputs:
            missing = [n for n in (version.image_param, version.prompt_param) if n not in inputs]
            return replicate_error(422, f"- input: {', '.join(missing) or 'image'} is required",
                                   title="Input validation failed")
        data_url = str(inputs[version.image_param])
        image = base64.b64decode(data_url.split(",", 1)[1]) if data_url.startswith("data:") else b""
        now = time.monotonic()
        done_at = {"never": None, "slow": now + self.slow_s}.get(plan or "", now + self.gen_s)
        prediction = FakePrediction(uuid.uuid4().hex[:26], version, inputs, plan, time.time(), done_at,
                                    fake_edit(image, str(inputs[version.prompt_param])) if image else b"")
        self.predictions[prediction.id] = prediction
        wait = _prefer_wait(request.headers.get("prefer"))
        if wait and plan != "nsfw_submit":
            deadline = now + min(wait, self.sync_wait_s)
            while time.monotonic() < deadline and not self._finished(prediction):
                time.sleep(0.01)
        return FakeResponse.json(201, self._state(prediction))

    def _finished(self, prediction: FakePrediction) -> bool:
        return prediction.plan == "nsfw_submit" or prediction.canceled or (
            prediction.done_at is not None and time.monotonic() >= prediction.done_at)

    def _state(self, p: FakePrediction) -> dict[str, Any]:
        status, output, error = "processing", None, None
        if p.plan == "nsfw_submit":
            status, error = "failed", E005
        elif p.canceled or (p.plan == "canceled" and self._finished(p)):
            status = "canceled"
        elif self._finished(p):
            status = "succeeded"
            if p.plan == "failed":
                status, error = "failed", "CUDA out of memory. Tried to allocate 2.00 GiB"
            elif p.plan == "nsfw_result":
                status, error = "failed", NSFW
            elif p.plan != "no_output":
                url = f"{self.url}/delivery/{p.id}/output.png"
                output = {p.version.output_key: url, "text": None} if p.version.output_key else url
                if p.plan == "nsfw_flag" and isinstance(output, dict):
                    output["has_nsfw_concepts"] = [True]
        base = f"{self.url}/v1/predictions/{p.id}"
        state = {"id": p.id, "model": p.version.model, "version": p.version.version, "input": p.input,
                 "logs": "", "output": output, "data_removed": False, "error": error, "status": status,
                 "created_at": _iso(p.created), "started_at": _iso(p.created),
                 "completed_at": _iso(time.time()) if status in ("succeeded", "failed", "canceled") else None,
                 "urls": {"get": base, "cancel": f"{base}/cancel", "stream": f"{self.url}/stream/{p.id}",
                          "web": f"https://replicate.com/p/{p.id}"},
                 "metrics": {"predict_time": 1.25} if status == "succeeded" else {}}
        return state

    def _deliver(self, path: str) -> FakeResponse:
        prediction = self.predictions.get(path.split("/")[2])
        if prediction is None or prediction.plan == "expired":
            return FakeResponse(404, b"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist."
                                     b"</Message></Error>", content_type="application/xml")
        prediction.downloads += 1
        response = FakeResponse(200, prediction.output_bytes, content_type="image/png")
        if prediction.plan == "truncated_download" and prediction.downloads == 1:
            response.truncate = True
        return response


def _prefer_wait(header: str | None) -> float:
    if not header or not header.startswith("wait"):
        return 0.0
    _, _, seconds = header.partition("=")
    return float(seconds) if seconds else 60.0


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def replicate_server(**kwargs: Any) -> ReplicateFakeServer:
    """A fake Replicate server (not started: use it as a context manager or call ``start()``)."""
    return ReplicateFakeServer(**kwargs)
