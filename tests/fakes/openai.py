"""A fake OpenAI API on 127.0.0.1, answering in the real REST wire formats.

Endpoints:

* ``POST /v1/images/edits`` (multipart): the "edited" image is
  :func:`tests.fakes.answers.fake_edit` of the first uploaded image and the prompt;
* ``POST /v1/chat/completions``: the answer is ``json.dumps(example_from_schema(schema))``
  for a ``json_schema`` response format, or ``judge_answer(request_json)`` when given;
* ``POST /v1/responses``: the same answer as an ``output_text`` item.

Every request must carry ``Authorization: Bearer <api_key>``; otherwise 401 in OpenAI's error
shape, which every error here uses (``{"error": {"message", "type", "param", "code"}}``).
Parsed requests are kept in ``server.received`` so tests can check what the SDK sent.

Provider faults (``server.script([...])`` or ``fault_rates``), besides the generic ones of
:mod:`tests.fakes.base`:

* ``moderation``: images/edits 400 ``moderation_blocked`` (the real safety-system rejection);
* ``no_image``: images/edits answers ``data: [{}]`` (no ``b64_json``); ``no_data``: ``data: []``;
  ``bad_b64``: a ``b64_json`` that is not base64;
* ``content_filter``: chat ``finish_reason: "content_filter"`` with no content; responses
  ``status: "incomplete"`` with ``incomplete_details.reason: "content_filter"``;
* ``refusal``: chat ``message.refusal`` set and ``content`` null; responses a ``refusal`` item;
* ``garbage``: judge answer text that is not JSON;
* reasoning models (``gpt-5*``, ``o1``/``o3``/``o4*``, not ``*-chat*``) answer 400 ``unsupported_value`` to a
  temperature other than 1, as OpenAI does, and report reasoning tokens (``REASONING_TOKENS`` by effort)
  inside ``completion_tokens`` / ``output_tokens``; other models answer 400 ``unsupported_parameter`` to
  ``reasoning_effort`` / ``reasoning``, and models other than ``gpt-5*`` to ``verbosity`` / ``text.verbosity``;
* ``bad_request``: 400 ``invalid_request_error`` on any endpoint;
* ``bad_json``: 200 with a complete (Content-Length-true) body cut in the middle of its JSON,
  as from a broken proxy (the generic ``truncated`` closes the connection early instead).

A fault that means nothing on an endpoint answers 400 with type ``fake_server_error``, so a
mistaken test script shows up instead of passing unnoticed.
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.answers import example_from_schema, fake_edit
from tests.fakes.base import FakeRequest, FakeResponse, FakeServer

DEFAULT_KEY = "sk-test-fake-openai-key"
SYSTEM_FINGERPRINT = "fp_fake0001"
SAFETY_MESSAGE = ("Your request was rejected as a result of our safety system. Your request may contain content "
                  "that is not allowed by our safety system.")
GARBAGE = "The edited image looks good to me, the person is clearly the same."
REFUSAL = "I'm sorry, but I can't help with identifying or assessing people in images."
IMAGE_TOKENS_PER_INPUT = 323  # gpt-image-1, one 1024x1024 input at low fidelity
HIGH_FIDELITY_EXTRA = 4160
OUTPUT_TOKENS = {"low": 272, "medium": 1056, "high": 4160, "auto": 4160}  # 1024x1024
VISION_TOKENS_PER_IMAGE = 765  # chat models, one 1024x1024 image at detail high
REASONING_TOKENS = {"minimal": 0, "low": 128, "medium": 512, "high": 2048}

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                429: "requests", 500: "server_error", 503: "server_error"}
_ERROR_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}


@dataclass
class Received:
    """One request as the fake understood it.

    ``fields``: the JSON body, or the multipart text fields (``image`` parts excluded);
    ``files``: multipart file parts as (field name, filename, content type, bytes);
    ``images``: image bytes in request order (uploaded files, or decoded data URLs).
    """

    path: str
    fields: dict[str, Any]
    files: list[tuple[str, str, str, bytes]] = field(default_factory=list)
    images: list[bytes] = field(default_factory=list)
    fault: str | None = None

    @property
    def parts(self) -> list[tuple[str, Any]]:
        """The first user turn's parts in order, as ("text", str) or ("image", bytes), for chat and responses."""
        turns = self.fields.get("messages") or self.fields.get("input") or []
        content = turns[0].get("content") if turns and isinstance(turns[0], dict) else None
        out: list[tuple[str, Any]] = []
        for part in content if isinstance(content, list) else []:
            if part.get("type") in ("text", "input_text"):
                out.append(("text", part["text"]))
            elif part.get("type") == "image_url":
                out.append(("image", _data_url_bytes(part["image_url"]["url"])))
            elif part.get("type") == "input_image":
                out.append(("image", _data_url_bytes(part["image_url"])))
        return out

    @property
    def schema(self) -> dict[str, Any] | None:
        """The json_schema block of a chat ``response_format`` or a responses ``text.format``."""
        chat = self.fields.get("response_format") or {}
        if chat.get("type") == "json_schema":
            return chat["json_schema"]
        fmt = (self.fields.get("text") or {}).get("format") or {}
        return fmt if fmt.get("type") == "json_schema" else None


def openai_error(status: int, message: str, *, type_: str | None = None, code: str | None = None,
                 param: str | None = None) -> FakeResponse:
    return FakeResponse.json(status, {"error": {
        "message": message, "type": type_ or _ERROR_TYPES.get(status, "invalid_request_error"),
        "param": param, "code": code if code is not None else _ERROR_CODES.get(status)}})


def _parse_multipart(request: FakeRequest) -> tuple[dict[str, Any], list[tuple[str, str, str, bytes]]]:
    head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.body)
    if not message.is_multipart():
        raise ValueError("images/edits expects multipart/form-data")
    fields: dict[str, Any] = {}
    files = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        payload = part.get_payload(decode=True) or b""
        if filename is not None:
            files.append((name, filename, part.get_content_type(), payload))
        else:
            fields[name] = payload.decode()
    return fields, files


def _data_url_bytes(url: str) -> bytes:
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError(f"expected a base64 data URL, got {url[:40]!r}")
    return base64.b64decode(url.split(";base64,", 1)[1], validate=True)


def _chat_images(body: dict[str, Any]) -> list[bytes]:
    images = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                images.append(_data_url_bytes(part["image_url"]["url"]))
    return images


def _responses_images(body: dict[str, Any]) -> list[bytes]:
    items = body.get("input")
    images = []
    for item in items if isinstance(items, list) else []:
        for part in item.get("content", []) if isinstance(item.get("content"), list) else []:
            if part.get("type") == "input_image":
                images.append(_data_url_bytes(part["image_url"]))
    return images


def _text_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def is_reasoning_model(model: str) -> bool:
    return str(model).startswith(("gpt-5", "o1", "o3", "o4")) and "-chat" not in str(model)


def _reasoning_check(body: dict[str, Any], effort: str | None) -> FakeResponse | None:
    """OpenAI's 400s for sampling parameters a model does not take."""
    model = str(body.get("model", ""))
    if is_reasoning_model(model):
        if "temperature" in body and body["temperature"] != 1:
            return openai_error(400, f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                                     "this model. Only the default (1) value is supported.", param="temperature",
                                code="unsupported_value")
    elif effort is not None:
        name = "reasoning_effort" if "reasoning_effort" in body else "reasoning.effort"
        return openai_error(400, f"Unsupported parameter: '{name}' is not supported with this model.",
                            param=name, code="unsupported_parameter")
    verbosity = body.get("verbosity", (body.get("text") or {}).get("verbosity"))
    if verbosity is not None and not model.startswith("gpt-5"):
        name = "verbosity" if "verbosity" in body else "text.verbosity"
        return openai_error(400, f"Unsupported parameter: '{name}' is not supported with this model.",
                            param=name, code="unsupported_parameter")
    return None


class OpenAIFakeServer(FakeServer):
    """See the module docstring. ``judge_answer(request_json) -> str`` replaces the
    schema-derived answer of both judge endpoints."""

    ENDPOINT_FAULTS = {
        "/v1/images/edits": {"moderation", "no_image", "no_data", "bad_b64", "bad_request", "bad_json"},
        "/v1/chat/completions": {"content_filter", "refusal", "garbage", "bad_request", "bad_json"},
        "/v1/responses": {"content_filter", "refusal", "garbage", "bad_request", "bad_json"},
    }

    def __init__(self, *, api_key: str = DEFAULT_KEY,
                 judge_answer: Callable[[dict[str, Any]], str] | None = None, **kwargs: Any) -> None:
        self.api_key = api_key
        self.judge_answer = judge_answer
        self.received: list[Received] = []
        kwargs.setdefault("error_body", openai_error)
        super().__init__(self._handle, **kwargs)

    def last(self, path: str) -> Received:
        """The latest request the handler saw on ``path`` (e.g. ``"/v1/images/edits"``)."""
        for received in reversed(self.received):
            if received.path == path:
                return received
        raise AssertionError(f"no request reached {path}; seen: {[r.path for r in self.received]}")

    # -- dispatch ----------------------------------------------------------------------

    def _handle(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        path = request.path.split("?", 1)[0]
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            given = request.headers.get("authorization", "").removeprefix("Bearer ")
            hint = f"{given[:3]}***{given[-4:]}" if len(given) > 8 else "***"
            return openai_error(401, f"Incorrect API key provided: {hint}. You can find your API key at "
                                     "https://platform.openai.com/account/api-keys.")
        handlers = {"/v1/images/edits": self._images_edit, "/v1/chat/completions": self._chat,
                    "/v1/responses": self._responses}
        if path not in handlers or request.method != "POST":
            return openai_error(404, f"Invalid URL ({request.method} {path})")
        if fault is not None and fault not in self.ENDPOINT_FAULTS[path]:
            return openai_error(400, f"fake server: fault {fault!r} has no meaning on {path}",
                                type_="fake_server_error")
        if fault == "bad_request":
            return openai_error(400, "Invalid value for 'size': must be one of 1024x1024, 1536x1024, 1024x1536.",
                                param="size", code="invalid_value")
        try:
            response = handlers[path](request, fault)
        except (ValueError, KeyError, binascii.Error) as exc:
            return openai_error(400, f"fake server could not read the request: {exc}")
        if fault == "bad_json":
            response.body = response.body[: len(response.body) // 2]
        return response

    # -- images ------------------------------------------------------------------------

    def _images_edit(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        fields, files = _parse_multipart(request)
        images = [f[3] for f in files if f[0] in ("image", "image[]")]
        self.received.append(Received(request.path, fields, files, images, fault))
        if not images:
            return openai_error(400, "Missing required parameter: 'image'.", param="image",
                                code="missing_required_parameter")
        if "prompt" not in fields:
            return openai_error(400, "Missing required parameter: 'prompt'.", param="prompt",
                                code="missing_required_parameter")
        if fault == "moderation":
            return openai_error(400, SAFETY_MESSAGE, type_="image_generation_user_error", code="moderation_blocked")
        usage = self._image_usage(fields, len(images))
        base = {"created": int(time.time()), "output_format": fields.get("output_format", "png"),
                "quality": fields.get("quality", "high"), "size": fields.get("size", "1024x1024"),
                "background": "opaque", "usage": usage}
        if fault == "no_image":
            return FakeResponse.json(200, {**base, "data": [{}]})
        if fault == "no_data":
            return FakeResponse.json(200, {**base, "data": []})
        if fault == "bad_b64":
            return FakeResponse.json(200, {**base, "data": [{"b64_json": "iVBORw0KGgo=!not base64"}]})
        n = int(fields.get("n", 1))
        edited = base64.b64encode(fake_edit(images[0], fields["prompt"])).decode()
        return FakeResponse.json(200, {**base, "data": [{"b64_json": edited} for _ in range(n)]})

    @staticmethod
    def _image_usage(fields: dict[str, Any], n_images: int) -> dict[str, Any]:
        image_tokens = n_images * IMAGE_TOKENS_PER_INPUT
        if fields.get("input_fidelity") == "high":
            image_tokens += n_images * HIGH_FIDELITY_EXTRA
        text_tokens = _text_tokens(fields["prompt"])
        output = OUTPUT_TOKENS.get(fields.get("quality", "auto"), OUTPUT_TOKENS["auto"]) * int(fields.get("n", 1))
        return {"input_tokens": image_tokens + text_tokens,
                "input_tokens_details": {"image_tokens": image_tokens, "text_tokens": text_tokens},
                "output_tokens": output, "total_tokens": image_tokens + text_tokens + output,
                "output_tokens_details": {"image_tokens": output, "text_tokens": 0}}

    # -- judges ------------------------------------------------------------------------

    def _answer_text(self, body: dict[str, Any], schema: dict[str, Any] | None, fault: str | None) -> str:
        if fault == "garbage":
            return GARBAGE
        if self.judge_answer is not None:
            return self.judge_answer(body)
        if schema is None:
            return "A free-text answer: no json_schema was requested."
        return json.dumps(example_from_schema(schema["schema"]))

    def _chat(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        body = request.json()
        received = Received(request.path, body, images=_chat_images(body), fault=fault)
        self.received.append(received)
        effort = body.get("reasoning_effort")
        rejected = _reasoning_check(body, effort)
        if rejected is not None:
            return rejected
        reasoning = REASONING_TOKENS.get(effort or "medium", 0) if is_reasoning_model(body.get("model", "")) else 0
        content: str | None = self._answer_text(body, received.schema, fault)
        refusal, finish = None, "stop"
        if fault == "refusal":
            content, refusal = None, REFUSAL
        elif fault == "content_filter":
            content, finish = None, "content_filter"
        prompt_text = json.dumps(body.get("messages", []))[:2000]
        prompt_tokens = _text_tokens(prompt_text) + VISION_TOKENS_PER_IMAGE * len(received.images)
        completion_tokens = _text_tokens(content or refusal or "") + reasoning
        return FakeResponse.json(200, {
            "id": f"chatcmpl-fake{len(self.received)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model"), "system_fingerprint": SYSTEM_FINGERPRINT, "service_tier": "default",
            "choices": [{"index": 0, "logprobs": None, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content, "refusal": refusal,
                                     "annotations": []}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                                    "accepted_prediction_tokens": 0,
                                                    "rejected_prediction_tokens": 0}},
        })

    def _responses(self, request: FakeRequest, fault: str | None) -> FakeResponse:
        body = request.json()
        received = Received(request.path, body, images=_responses_images(body), fault=fault)
        self.received.append(received)
        effort = (body.get("reasoning") or {}).get("effort")
        rejected = _reasoning_check(body, effort)
        if rejected is not None:
            return rejected
        reasoning = REASONING_TOKENS.get(effort or "medium", 0) if is_reasoning_model(body.get("model", "")) else 0
        status, incomplete = "completed", None
        if fault == "refusal":
            content = [{"type": "refusal", "refusal": REFUSAL}]
        elif fault == "content_filter":
            content, status, incomplete = [], "incomplete", {"reason": "content_filter"}
        else:
            text = self._answer_text(body, received.schema, fault)
            content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        output = [{"type": "message", "id": f"msg_fake{len(self.received)}", "status": status,
                   "role": "assistant", "content": content}] if content else []
        input_tokens = _text_tokens(json.dumps(body.get("input", ""))[:2000]) + \
            VISION_TOKENS_PER_IMAGE * len(received.images)
        output_tokens = _text_tokens(json.dumps(content)) + reasoning
        return FakeResponse.json(200, {
            "id": f"resp_fake{len(self.received)}", "object": "response", "created_at": int(time.time()),
            "status": status, "incomplete_details": incomplete, "error": None, "model": body.get("model"),
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "temperature": body.get("temperature", 1.0), "top_p": 1.0, "text": body.get("text"),
            "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning},
                      "total_tokens": input_tokens + output_tokens},
        })


def openai_server(**kwargs: Any) -> OpenAIFakeServer:
    """A fake OpenAI server (not started: use it as a context manager or call ``start()``).
    Takes :class:`OpenAIFakeServer`'s ``api_key`` and ``judge_answer`` and every
    :class:`~tests.fakes.base.FakeServer` option (latency, faults, rpm limit ...)."""
    return OpenAIFakeServer(**kwargs)
