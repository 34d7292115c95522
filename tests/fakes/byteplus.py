"""A fake BytePlus ModelArk image-generation API on 127.0.0.1, in its real wire format.

Endpoint: ``POST /api/v3/images/generations`` (JSON), the route the Ark runtime of
``byteplus-python-sdk-v2`` posts to. The answer to a request with ``image`` set (one data
URL or a list of them) is :func:`tests.fakes.answers.fake_edit` of the first image and the
prompt, as ``data[].b64_json`` (or ``data[].url`` pointing at this server when
``response_format: url``), with ModelArk's ``usage`` block (``generated_images``,
``output_tokens``, ``total_tokens``). Every request must carry ``Authorization: Bearer
<api_key>``; errors use ModelArk's shape ``{"error": {"code", "message", "param", "type"}}``.

Provider faults (``server.script([...])`` or ``fault_rates``), besides the generic ones of
:mod:`tests.fakes.base` (``429`` here answers ``RateLimitExceeded.EndpointRPMExceeded``
with ``Retry-After``; ``500``/``503`` ``InternalServiceError``/``ServiceUnavailable``):

* ``moderation_input``: 400 ``InputImageSensitiveContentDetected`` (moderation at submit time);
* ``moderation_text``: 400 ``InputTextSensitiveContentDetected``;
* ``moderation_output``: 400 ``OutputImageSensitiveContentDetected`` (moderation at result time);
* ``moderation_partial``: 200 whose ``data[0]`` is an ``error`` object (Seedream answers a
  moderated image of a set this way);
* ``quota``: 429 ``QuotaExceeded`` (the account's quota, which waiting does not restore);
* ``bad_request``: 400 ``InvalidParameter``; ``no_image``: 200 with ``data: []``;
  ``bad_b64``: a ``b64_json`` that is not base64.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.answers import fake_edit
from tests.fakes.base import FakeRequest, FakeResponse, FakeServer

DEFAULT_KEY = "ark-test-fake-key"
PATH = "/api/v3/images/generations"
TOKENS_PER_IMAGE = 4096  # ModelArk reports output tokens per generated image (1024x1024: about 4k)
MODERATION_MESSAGE = ("The request failed because the input image may contain sensitive information. "
                      "Request id: 0217fake")

_STATUS_CODES = {400: ("InvalidParameter", "BadRequest"), 401: ("AuthenticationError", "Unauthorized"),
                 404: ("InvalidEndpointOrModel.NotFound", "NotFound"),
                 429: ("RateLimitExceeded.EndpointRPMExceeded", "TooManyRequests"),
                 500: ("InternalServiceError", "InternalServerError"),
                 503: ("ServiceUnavailable", "ServiceUnavailable")}


def ark_error(status: int, message: str, *, code: str | None = None, param: str = "") -> FakeResponse:
    default_code, kind = _STATUS_CODES.get(status, ("InvalidParameter", "BadRequest"))
    return FakeResponse.json(status, {"error": {"code": code or default_code, "message": message, "param": param,
                                                "type": kind}})


@dataclass
class ArkCall:
    """One request as the fake understood it: the JSON body and the decoded input images."""

    body: dict[str, Any]
    images: list[bytes] = field(default_factory=list)
    fault: str | None = None


def _decode_data_url(url: str) -> bytes:
    if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url:
        raise ValueError(f"image must be a base64 data URL (data:image/<format>;base64,...), got {str(url)[:40]!r}")
    mime = url[5:url.index(";")]
    if mime != mime.lower():
        raise ValueError("the image format in a data URL must be lowercase")
    return base64.b64decode(url.split(";base64,", 1)[1], validate=True)


class ArkFakeServer(FakeServer):
    """See the module docstring. ``results`` holds images served by ``GET /results/<n>.png``."""

    FAULTS = {"moderation_input", "moderation_text", "moderation_output", "moderation_partial", "quota",
              "bad_request", "no_image", "bad_b64"}

    def __init__(self, *, api_key: str = DEFAULT_KEY, **kwargs: Any) -> None:
        self.api_key = api_key
        self.received: list[ArkCall] = []
        self.results: list[bytes] = []
        kwargs.setdefault("error_body", lambda status, message: ark_error(status, message))
        super().__init__(self._handle, **kwargs)

    def _handle(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        path = request.path.split("?", 1)[0]
        if request.method == "GET" and path.startswith("/results/"):
            index = int(path.removeprefix("/results/").removesuffix(".png"))
            return FakeResponse(200, self.results[index], content_type="image/png")
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return ark_error(401, "The API key in the request is missing or invalid.")
        if path != PATH or request.method != "POST":
            return ark_error(404, f"The requested resource {request.method} {path} was not found.")
        if fault is not None and fault not in self.FAULTS:
            return ark_error(400, f"fake server: fault {fault!r} has no meaning here", code="FakeServerError")
        try:
            body = request.json()
            raw = body.get("image")
            images = [_decode_data_url(u) for u in (raw if isinstance(raw, list) else [raw] if raw else [])]
        except (ValueError, binascii.Error, json.JSONDecodeError) as exc:
            return ark_error(400, f"The parameter `image` specified in the request is not valid: {exc}",
                             param="image")
        self.received.append(ArkCall(body, images, fault))
        for name in ("model", "prompt"):
            if not body.get(name):
                return ark_error(400, f"The parameter `{name}` is required.", code="MissingParameter", param=name)
        if fault == "moderation_input":
            return ark_error(400, MODERATION_MESSAGE, code="InputImageSensitiveContentDetected")
        if fault == "moderation_text":
            return ark_error(400, "The request failed because the input text may contain sensitive information.",
                             code="InputTextSensitiveContentDetected")
        if fault == "moderation_output":
            return ark_error(400, "The request failed because the output image may contain sensitive information.",
                             code="OutputImageSensitiveContentDetected")
        if fault == "quota":
            return ark_error(429, "Your account has reached its quota for this model.", code="QuotaExceeded")
        if fault == "bad_request":
            return ark_error(400, "The parameter `size` specified in the request is not valid.", param="size")
        base = {"model": body["model"], "created": int(time.time())}
        if fault == "no_image":
            return FakeResponse.json(200, {**base, "data": [], "usage": {"generated_images": 0, "output_tokens": 0,
                                                                        "total_tokens": 0}})
        if fault == "moderation_partial":
            return FakeResponse.json(200, {**base, "data": [{"error": {
                "code": "OutputImageSensitiveContentDetected",
                "message": "The generated image may contain sensitive information."}}],
                "usage": {"generated_images": 0, "output_tokens": 0, "total_tokens": 0}})
        edited = fake_edit(images[0], body["prompt"]) if images else fake_edit(_BLANK, body["prompt"])
        if fault == "bad_b64":
            item: dict[str, Any] = {"b64_json": "iVBORw0KGgo=!not base64"}
        elif body.get("response_format") == "url":
            self.results.append(edited)
            item = {"url": f"{self.url}/results/{len(self.results) - 1}.png"}
        else:
            item = {"b64_json": base64.b64encode(edited).decode()}
        item["size"] = "1024x1024"
        return FakeResponse.json(200, {**base, "data": [item], "usage": {
            "generated_images": 1, "output_tokens": TOKENS_PER_IMAGE, "total_tokens": TOKENS_PER_IMAGE}})


def _blank_png() -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (128, 128, 128)).save(buf, format="PNG")
    return buf.getvalue()


_BLANK = _blank_png()


def ark_server(**kwargs: Any) -> ArkFakeServer:
    """A fake ModelArk server (not started: use it as a context manager or call ``start()``)."""
    return ArkFakeServer(**kwargs)
