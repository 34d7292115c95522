"""A fake Gemini API (``generateContent``) speaking Google's REST wire format.

Serves ``POST /{v1,v1beta,v1alpha}/models/{model}:generateContent`` on 127.0.0.1:

* the API key must come in the ``x-goog-api-key`` header, as the SDK sends it: a missing
  key is answered 403 ``PERMISSION_DENIED``, a wrong one 400 ``INVALID_ARGUMENT`` with
  reason ``API_KEY_INVALID`` (what Google answers);
* image requests (``responseModalities`` holds ``IMAGE``, or no JSON mime type and no ``judge_answer``)
  get one ``inlineData`` PNG part, :func:`tests.fakes.answers.fake_edit` of the input image and the
  prompt text;
* JSON requests (``responseMimeType: application/json`` with a schema) get
  ``json.dumps(example_from_schema(schema))``, or ``judge_answer(request_json)``; so do text requests
  (no ``IMAGE`` modality, no JSON mime type: a judge asked without structured output) when the server
  has a ``judge_answer``;
* a ``generationConfig.seed`` outside int32 is answered 400, as Google does;
* every parsed request is kept in ``server.gemini_calls`` (:class:`GeminiCall`);
  ``server.reset()`` forgets them (and pending scripted faults) between tests.

Provider faults, by name in ``script([...])`` / ``fault_rates`` (generic ones are in
:mod:`tests.fakes.base`): ``block`` (``promptFeedback.blockReason = SAFETY``, no
candidates), ``image_safety`` (``finishReason: IMAGE_SAFETY``, no parts), ``text_only``
(a text part only: the model declines in words), ``garbage`` (text that is not JSON),
``bad_request`` (400 ``INVALID_ARGUMENT``). Errors use Google's shape
``{"error": {"code", "message", "status", "details"?}}``; a 429 carries a ``RetryInfo``
detail (``retryDelay``) besides the ``Retry-After`` header.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.answers import example_from_schema, fake_edit
from tests.fakes.base import FakeRequest, FakeResponse, FakeServer

PROVIDER_FAULTS = ("block", "image_safety", "text_only", "garbage", "bad_request")

_PATH = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:?]+):generateContent(?:\?.*)?$")
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
#: Tokens Gemini counts for one input image up to 384 px, and for one 1024x1024 output image.
IMAGE_INPUT_TOKENS = 258
IMAGE_OUTPUT_TOKENS = 1290
REFUSAL_TEXT = "I can't edit this image of a real person. I can help with other requests."
GARBAGE_TEXT = "Sure! Looking at the two images, I would say the edit mostly worked."


@dataclass
class GeminiCall:
    """One generateContent request as the fake understood it."""

    api_version: str
    model: str
    generation_config: dict[str, Any]
    text: str  # every text part, joined by newlines
    images: list[bytes] = field(default_factory=list)
    image_mime_types: list[str] = field(default_factory=list)
    body: dict[str, Any] = field(default_factory=dict)
    #: every part in request order: ("text", str) or ("image", bytes)
    parts: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def wants_json(self) -> bool:
        return self.generation_config.get("responseMimeType") == "application/json"

    @property
    def wants_image(self) -> bool:
        return "IMAGE" in [str(m).upper() for m in self.generation_config.get("responseModalities") or []]

    @property
    def schema(self) -> dict[str, Any] | None:
        return self.generation_config.get("responseJsonSchema") or self.generation_config.get("responseSchema")


class GeminiServer(FakeServer):
    """A :class:`FakeServer` that also keeps the parsed requests in ``gemini_calls``."""

    gemini_calls: list[GeminiCall]

    def reset(self) -> None:
        """Forget requests and pending scripted faults, so one server can serve many tests."""
        with self._lock:
            self.requests.clear()
            self.gemini_calls.clear()
            self._script.clear()


def google_error(status: int, message: str, details: list[dict[str, Any]] | None = None) -> FakeResponse:
    error: dict[str, Any] = {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}
    if details:
        error["details"] = details
    return FakeResponse.json(status, {"error": error})


def gemini_server(*, api_key: str = "test-gemini-key", judge_answer: Callable[[dict[str, Any]], str] | None = None,
                  **server_kwargs: Any) -> GeminiServer:
    """A fake Gemini endpoint accepting ``api_key``; ``server_kwargs`` go to :class:`FakeServer`."""
    server: GeminiServer

    def error_body(status: int, message: str) -> FakeResponse:
        details = None
        if status == 429:  # Google says how long to wait in a RetryInfo detail
            details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": f"{server.retry_after:g}s"}]
        return google_error(status, message, details)

    def handle(request: FakeRequest, fault: str | None) -> FakeResponse:
        match = _PATH.match(request.path)
        if request.method != "POST" or not match:
            return google_error(404, f"Method not found: {request.method} {request.path}")
        key = request.headers.get("x-goog-api-key")
        if not key:
            return google_error(403, "Method doesn't allow unregistered callers (callers without established "
                                     "identity). Please use API Key or other form of API consumer identity to call "
                                     "this API.")
        if key != api_key:
            return google_error(400, "API key not valid. Please pass a valid API key.",
                                [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                  "domain": "googleapis.com"}])
        try:
            call = _parse(match.group(1), match.group(2), request.json())
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            return google_error(400, f"Invalid JSON payload received. {exc}")
        server.gemini_calls.append(call)
        seed = call.generation_config.get("seed")
        if seed is not None and not -(2**31) <= int(seed) < 2**31:
            return google_error(400, f"Invalid value at 'generation_config.seed' (TYPE_INT32), {seed}")
        if fault == "bad_request":
            return google_error(400, "Request contains an invalid argument.")
        if call.wants_json or (judge_answer is not None and not call.wants_image):
            return _judge_answer(call, fault, judge_answer)
        return _image_answer(call, fault)

    kwargs = {"error_body": error_body, **server_kwargs}
    server = GeminiServer(handle, **kwargs)
    server.gemini_calls = []
    return server


def _parse(api_version: str, model: str, body: dict[str, Any]) -> GeminiCall:
    texts: list[str] = []
    images: list[bytes] = []
    mimes: list[str] = []
    parts: list[tuple[str, Any]] = []
    for content in body["contents"]:
        for part in content.get("parts", []):
            if "text" in part:
                texts.append(part["text"])
                parts.append(("text", part["text"]))
            inline = part.get("inlineData") or part.get("inline_data")
            if inline is not None:
                # The SDK sends URL-safe base64; plain b64decode would silently corrupt it.
                images.append(base64.urlsafe_b64decode(inline["data"]))
                mimes.append(inline.get("mimeType") or inline.get("mime_type") or "")
                parts.append(("image", images[-1]))
    return GeminiCall(api_version, model, dict(body.get("generationConfig") or {}), "\n".join(texts), images, mimes,
                      body, parts)


def _prompt_usage(call: GeminiCall) -> tuple[int, list[dict[str, Any]]]:
    text_tokens = max(1, round(len(call.text.split()) * 1.3))
    details = [{"modality": "TEXT", "tokenCount": text_tokens}]
    if call.images:
        details.append({"modality": "IMAGE", "tokenCount": IMAGE_INPUT_TOKENS * len(call.images)})
    return sum(d["tokenCount"] for d in details), details


def _answer(call: GeminiCall, parts: list[dict[str, Any]] | None, finish: str, out_modality: str,
            out_tokens: int, **extra: Any) -> FakeResponse:
    prompt_tokens, prompt_details = _prompt_usage(call)
    usage: dict[str, Any] = {"promptTokenCount": prompt_tokens, "promptTokensDetails": prompt_details,
                             "totalTokenCount": prompt_tokens + out_tokens}
    if out_tokens:
        usage["candidatesTokenCount"] = out_tokens
        usage["candidatesTokensDetails"] = [{"modality": out_modality, "tokenCount": out_tokens}]
    candidate: dict[str, Any] = {"finishReason": finish, "index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    body = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": call.model,
            "responseId": f"fake-{len(call.text)}", **extra}
    return FakeResponse.json(200, body)


def _blocked(call: GeminiCall) -> FakeResponse:
    prompt_tokens, prompt_details = _prompt_usage(call)
    return FakeResponse.json(200, {
        "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]},
        "usageMetadata": {"promptTokenCount": prompt_tokens, "promptTokensDetails": prompt_details,
                          "totalTokenCount": prompt_tokens},
        "modelVersion": call.model,
    })


def _text_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _image_answer(call: GeminiCall, fault: str | None) -> FakeResponse:
    if fault == "block":
        return _blocked(call)
    if fault == "image_safety":
        return _answer(call, None, "IMAGE_SAFETY", "IMAGE", 0)
    if fault in ("text_only", "garbage"):
        text = REFUSAL_TEXT if fault == "text_only" else GARBAGE_TEXT
        return _answer(call, [{"text": text}], "STOP", "TEXT", _text_tokens(text))
    if not call.images:
        return google_error(400, "fake Gemini: an image request needs an input image (only editing is faked)")
    edited = base64.b64encode(fake_edit(call.images[0], call.text)).decode()
    return _answer(call, [{"inlineData": {"mimeType": "image/png", "data": edited}}], "STOP", "IMAGE",
                   IMAGE_OUTPUT_TOKENS)


def _judge_answer(call: GeminiCall, fault: str | None,
                  judge_answer: Callable[[dict[str, Any]], str] | None) -> FakeResponse:
    if fault == "block":
        return _blocked(call)
    if fault == "image_safety":
        return _answer(call, None, "SAFETY", "TEXT", 0)
    if fault in ("text_only", "garbage"):
        text = REFUSAL_TEXT if fault == "text_only" else GARBAGE_TEXT
    elif judge_answer is not None:
        text = judge_answer(call.body)
    elif call.schema is not None:
        text = json.dumps(example_from_schema(call.schema))
    else:
        return google_error(400, "fake Gemini: responseMimeType application/json needs a schema here")
    return _answer(call, [{"text": text}], "STOP", "TEXT", _text_tokens(text))
