"""The ``openai`` judge: images + prompt to a chat or Responses model, JSON-schema output.

One attempt per :meth:`OpenAIJudge.ajudge`, one user turn holding the request's parts in order
(each image, preceded by its label when the judge metric declares labels, then the prompt). The
answer text is returned unparsed: the core validates it against the template's schema and records
``parse_error`` when it does not fit. ``structured_output: false`` sends no schema (the prompt alone
asks for JSON, as paper (b)'s code did). Any OpenAI-compatible server (vLLM, SGLang, a proxy) is this judge with another
``base_url`` and ``api_key_env``; ``strict: false`` sends the schema unchanged for servers
that enforce full JSON Schema themselves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import ConfigError, HostedComponent, HostedParams, JudgeReply, JudgeRequest, Outcome
from faceedit_bench_openai.connection import Connection
from faceedit_bench_openai.failures import answer_of, failure_outcome
from faceedit_bench_openai.media import data_url
from faceedit_bench_openai.strict_schema import SCHEMA_FORM, to_strict_schema

#: OpenAI usage tier 1 for gpt-4.1 (500 requests/min, 30k tokens/min); a judge call with two
#: 1024 px images at detail high is about 1,700 input tokens. Raise them to your tier's limits.
DEFAULT_LIMITS = MappingProxyType({
    "max_concurrency": 8, "requests_per_minute": 500, "tokens_per_minute": 30000, "tokens_per_call": 2000,
    "max_attempts": 6, "timeout_s": 120.0, "backoff_initial_s": 1.0, "backoff_max_s": 60.0,
})
#: gpt-4.1 list prices in USD per token, read 2025-10: estimates (cached input is cheaper).
DEFAULT_PRICES = MappingProxyType({"input_tokens": 0.000002, "output_tokens": 0.000008, "as_of": "2025-10"})
APIS = ("chat", "responses")
#: OpenAI's reasoning effort levels (chat ``reasoning_effort``, Responses ``reasoning.effort``).
EFFORTS = ("minimal", "low", "medium", "high")
#: Reasoning models answer 400 to any temperature but the default; "-chat" variants are not reasoning models.
REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4")
DETAILS = ("high", "low", "auto")
#: GPT-5 models' text verbosity (chat ``verbosity``, Responses ``text.verbosity``).
VERBOSITIES = ("low", "medium", "high")


@dataclass(frozen=True, kw_only=True)
class OpenAIJudgeParams(HostedParams):
    """See ``conf/judge/openai.yaml``."""

    model: str = "gpt-4.1-2025-04-14"
    api: str = "chat"
    temperature: float | None = 0.0
    max_output_tokens: int | None = 1024
    image_detail: str = "high"
    strict: bool = True
    reasoning_effort: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    limits: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_LIMITS)
    prices: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_PRICES)
    verbosity: str | None = None
    structured_output: bool = True


class OpenAIJudge(HostedComponent):
    """See the module docstring and ``conf/judge/openai.yaml`` for the parameters."""

    kind = "judge"
    name = "openai"
    params_type = OpenAIJudgeParams
    connection_type = Connection
    default_limits = DEFAULT_LIMITS
    key_optional = True  # a server of one's own (base_url set) may take no key

    def setup(self, params: OpenAIJudgeParams) -> None:
        what = self.what
        if params.api not in APIS:
            raise ConfigError(f"{what}: api must be chat (chat completions) or responses (Responses API), not "
                              f"{params.api!r}.")
        if params.image_detail not in DETAILS:
            raise ConfigError(f"{what}: image_detail must be one of {', '.join(DETAILS)}, not {params.image_detail!r}.")
        if params.reasoning_effort is not None and params.reasoning_effort not in EFFORTS:
            raise ConfigError(f"{what}: reasoning_effort must be one of {', '.join(EFFORTS)}, or null (not sent), "
                              f"not {params.reasoning_effort!r}.")
        if params.verbosity is not None and params.verbosity not in VERBOSITIES:
            raise ConfigError(f"{what}: verbosity must be one of {', '.join(VERBOSITIES)}, or null (not sent), "
                              f"not {params.verbosity!r}.")
        if not isinstance(params.structured_output, bool):
            raise ConfigError(f"{what}: structured_output must be true (json_schema output) or false (the prompt "
                              f"alone asks for JSON), not {params.structured_output!r}.")
        reasoning = str(params.model).startswith(REASONING_PREFIXES) and "-chat" not in str(params.model)
        if reasoning and params.temperature is not None:
            raise ConfigError(f"{what}: {params.model} is a reasoning model and rejects temperature; set "
                              "judge.params.temperature=null (its sampling is fixed) and, if you like, "
                              "judge.params.reasoning_effort=low|medium|high.")
        self.model, self.api, self.strict = params.model, params.api, bool(params.strict)
        self.reasoning_effort, self.verbosity = params.reasoning_effort, params.verbosity
        self.structured_output = params.structured_output
        self.temperature, self.max_output_tokens = params.temperature, params.max_output_tokens
        self.image_detail = params.image_detail

    def describe(self) -> dict[str, Any]:
        return {"provider": "openai", "model": self.model, "version": self.model, "api": self.api,
                "temperature": self.temperature, "max_output_tokens": self.max_output_tokens,
                "image_detail": self.image_detail,
                "seed": "request seed" if self.api == "chat" else "not supported by the Responses API",
                "structured_output": (("json_schema, " + (SCHEMA_FORM if self.strict else "as given"))
                                      if self.structured_output else "none (JSON asked in the prompt)"),
                # Only when set, so that the identity (and the cache) of judges configured without it is unchanged.
                **({"reasoning_effort": self.reasoning_effort} if self.reasoning_effort else {}),
                **({"verbosity": self.verbosity} if self.verbosity else {}),
                **self.connection.describe()}

    def json_schema(self, request: JudgeRequest) -> dict[str, Any]:
        """The ``json_schema`` block both APIs take (chat nests it, responses flattens it)."""
        schema = to_strict_schema(request.schema) if self.strict else dict(request.schema)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", request.schema_name)[:64] or "answer"
        return {"name": name, "schema": schema, "strict": self.strict}

    async def ajudge(self, request: JudgeRequest) -> JudgeReply:
        client = self.client()
        where = f"POST {self.connection.endpoint.url.rstrip('/')}/" + ("chat/completions" if self.api == "chat"
                                                                      else "responses")
        try:
            if self.api == "chat":
                return _chat_reply(answer_of(await client.chat.completions.create(**self._chat_args(request)), where))
            return _responses_reply(answer_of(await client.responses.create(**self._responses_args(request)), where))
        except Connection.UnexpectedAnswer:
            raise
        except Exception as exc:  # failure_outcome re-raises what is not an API failure
            outcome, reason = failure_outcome(exc, where)
            return JudgeReply(outcome, reason=reason)

    def _optional(self, max_tokens_key: str) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if self.verbosity is not None and max_tokens_key == "max_completion_tokens":
            args["verbosity"] = self.verbosity  # the Responses API takes it in text (see _responses_args)
        if self.reasoning_effort is not None:  # chat takes it flat, the Responses API nested
            if max_tokens_key == "max_completion_tokens":
                args["reasoning_effort"] = self.reasoning_effort
            else:
                args["reasoning"] = {"effort": self.reasoning_effort}
        if self.temperature is not None:
            args["temperature"] = self.temperature
        if self.max_output_tokens is not None:
            args[max_tokens_key] = self.max_output_tokens
        return args

    def _chat_args(self, request: JudgeRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": data_url(data), "detail": self.image_detail}}
            if kind == "image" else {"type": "text", "text": data} for kind, data in request.parts()]
        schema = ({"response_format": {"type": "json_schema", "json_schema": self.json_schema(request)}}
                  if self.structured_output else {})
        system = [{"role": "system", "content": [{"type": "text", "text": request.system}]}] if request.system else []
        return {"model": self.model, "messages": [*system, {"role": "user", "content": content}], "seed": request.seed,
                **schema, **self._optional("max_completion_tokens")}

    def _responses_args(self, request: JudgeRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = [
            {"type": "input_image", "image_url": data_url(data), "detail": self.image_detail}
            if kind == "image" else {"type": "input_text", "text": data} for kind, data in request.parts()]
        text: dict[str, Any] = {}
        if self.structured_output:
            text["format"] = {"type": "json_schema", **self.json_schema(request)}
        if self.verbosity is not None:
            text["verbosity"] = self.verbosity
        # store=False: the Responses API otherwise keeps the face images on OpenAI's side.
        return {"model": self.model, "input": [{"role": "user", "content": content}], "store": False,
                **({"instructions": request.system} if request.system else {}),
                **({"text": text} if text else {}), **self._optional("max_output_tokens")}


def _usage(tokens: Any, input_key: str, output_key: str, served: str | None, **extra: Any) -> dict[str, Any]:
    """Usage in ``faceedit_bench.execution.cost`` keys. Image tokens are billed as input tokens by these
    APIs and not reported apart, so they are in ``input_tokens``. A reasoning model's reasoning
    tokens are billed as output tokens and already counted in ``output_tokens`` (completion /
    output tokens include them); ``reasoning_tokens`` records how many of them there were."""
    usage: dict[str, Any] = {k: v for k, v in extra.items() if v}
    if tokens is not None:
        usage["input_tokens"] = getattr(tokens, input_key, 0) or 0
        usage["output_tokens"] = getattr(tokens, output_key, 0) or 0
        details = getattr(tokens, f"{output_key.removesuffix('_tokens')}_tokens_details", None)
        reasoning = getattr(details, "reasoning_tokens", None)
        if reasoning:
            usage["reasoning_tokens"] = int(reasoning)
    if served:
        usage["model_version"] = served
    return usage


def _chat_reply(completion: Any) -> JudgeReply:
    usage = _usage(completion.usage, "prompt_tokens", "completion_tokens", completion.model,
                   system_fingerprint=getattr(completion, "system_fingerprint", None))
    if not completion.choices:
        return JudgeReply(Outcome.API_ERROR, reason="the answer had no choices", usage=usage)
    choice = completion.choices[0]
    refusal = getattr(choice.message, "refusal", None)
    if refusal:
        return JudgeReply(Outcome.REFUSED, reason=f"model refusal: {refusal}", usage=usage)
    if choice.finish_reason == "content_filter":
        return JudgeReply(Outcome.REFUSED, reason="content_filter: the answer was withheld by the content filter",
                          usage=usage)
    return JudgeReply(Outcome.OK, text=choice.message.content, usage=usage)


def _responses_reply(response: Any) -> JudgeReply:
    usage = _usage(response.usage, "input_tokens", "output_tokens", response.model)
    texts, refusals = [], []
    messages = [item for item in response.output or [] if item.type == "message"]
    for message in messages:
        for part in message.content or []:
            if part.type == "refusal":
                refusals.append(part.refusal)
            elif part.type == "output_text":
                texts.append(part.text)
    if refusals:
        return JudgeReply(Outcome.REFUSED, reason=f"model refusal: {' '.join(refusals)}", usage=usage)
    incomplete = getattr(response.incomplete_details, "reason", None) if response.incomplete_details else None
    if incomplete == "content_filter":
        return JudgeReply(Outcome.REFUSED, reason="content_filter: the answer was withheld by the content filter",
                          usage=usage)
    # Any other incomplete answer (max_output_tokens) is returned as it is: the core finds it unparsable.
    return JudgeReply(Outcome.OK, text="".join(texts), usage=usage)
