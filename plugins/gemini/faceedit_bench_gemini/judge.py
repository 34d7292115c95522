"""``gemini``: an MLLM judge on Gemini with structured (JSON-schema) output.

One attempt per :meth:`GeminiJudge.ajudge`: the request's parts in order (each image as an inline
part, preceded by its label's text part when the judge metric declares labels, then the prompt),
in one user turn; the answer's raw text goes back unparsed, because the core parses, validates and
retries unparsable answers. With ``structured_output`` (the default) the answer is constrained to
the template's JSON schema; without it, the prompt alone asks for JSON, as paper (b)'s code did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import CallLimits, ConfigError, JudgeReply, JudgeRequest, Outcome
from faceedit_bench_gemini import responses
from faceedit_bench_gemini.connection import (
    DEFAULT_KEY_ENVS,
    GeminiConnection,
    PermanentAPIError,
    api_seed,
    image_mime,
)
from faceedit_bench_gemini.prices import prices_for

WHAT = "judge gemini"
#: Gemini 3's thinking levels (``thinkingConfig.thinkingLevel``); 2.5 models take a token budget instead.
THINKING_LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH")
#: About 80% of the paid Tier 1 limits published for gemini-2.5-flash (1000 RPM, 1M input TPM).
#: Tokens per call: two 1024x1024 images (4 tiles of 258 tokens each) and a prompt.
DEFAULT_LIMITS: Mapping[str, Any] = MappingProxyType({
    "requests_per_minute": 800, "tokens_per_minute": 800_000, "tokens_per_call": 3000, "max_concurrency": 32,
    "max_attempts": 6, "timeout_s": 60.0, "backoff_initial_s": 1.0, "backoff_max_s": 60.0,
})


class GeminiJudge:
    """Answers a judge prompt about images as JSON matching the request's schema."""

    def __init__(self, model: str = "gemini-2.5-flash", base_url: str | None = None, api_version: str | None = None,
                 api_key_env: Sequence[str] = DEFAULT_KEY_ENVS, temperature: float = 0.0,
                 max_output_tokens: int | None = None, thinking_budget: int | None = None,
                 thinking_level: str | None = None, structured_output: bool = True,
                 limits: Mapping[str, Any] = DEFAULT_LIMITS, prices: Mapping[str, Any] | None = None) -> None:
        if not 0 <= float(temperature) <= 2:
            raise ConfigError(f"{WHAT}: temperature must be between 0 and 2 (0 for reproducible judging)")
        if max_output_tokens is not None and int(max_output_tokens) < 1:
            raise ConfigError(f"{WHAT}: max_output_tokens must be positive (or null for the model's limit)")
        if thinking_level is not None and str(thinking_level).upper() not in THINKING_LEVELS:
            raise ConfigError(f"{WHAT}: thinking_level must be one of {', '.join(THINKING_LEVELS).lower()} "
                              f"(Gemini 3 models), or null, not {thinking_level!r}")
        if thinking_level is not None and thinking_budget is not None:
            raise ConfigError(f"{WHAT}: set thinking_level (Gemini 3) or thinking_budget (Gemini 2.5), not both")
        self.model = model
        self.thinking_level = None if thinking_level is None else str(thinking_level).upper()
        self.temperature = float(temperature)
        self.max_output_tokens = None if max_output_tokens is None else int(max_output_tokens)
        self.thinking_budget = None if thinking_budget is None else int(thinking_budget)
        if not isinstance(structured_output, bool):
            raise ConfigError(f"{WHAT}: structured_output must be true (the answer held to the schema) or false "
                              f"(the prompt alone asks for JSON), not {structured_output!r}")
        self.structured_output = structured_output
        self.connection = GeminiConnection(what=WHAT, model=model, base_url=base_url, api_version=api_version,
                                           api_key_env=api_key_env, limits=limits, default_limits=DEFAULT_LIMITS)
        self.limits: CallLimits = self.connection.limits
        self.prices: dict[str, Any] = prices_for(model, prices, what=WHAT)

    def describe(self) -> dict[str, Any]:
        return {
            **self.connection.describe(),
            "structured_output": "responseJsonSchema" if self.structured_output else "none (JSON asked in the prompt)",
            "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens, "thinking_budget": self.thinking_budget,
            "seed": "request seed mod 2^31",
            # Only when set, so that the identity (and the cache) of judges configured without it is unchanged.
            **({"thinking_level": self.thinking_level} if self.thinking_level else {}),
        }

    def _config(self, request: JudgeRequest) -> Any:
        from google.genai import types

        thinking = None
        if self.thinking_budget is not None:
            thinking = types.ThinkingConfig(thinking_budget=self.thinking_budget)
        elif self.thinking_level is not None:
            thinking = types.ThinkingConfig(thinking_level=self.thinking_level)
        schema = ({"response_mime_type": "application/json", "response_json_schema": dict(request.schema)}
                  if self.structured_output else {})
        return types.GenerateContentConfig(
            temperature=self.temperature, seed=api_seed(request.seed), max_output_tokens=self.max_output_tokens,
            thinking_config=thinking, system_instruction=request.system or None, **schema,
        )

    async def ajudge(self, request: JudgeRequest) -> JudgeReply:
        from google.genai import types

        parts = [types.Part.from_bytes(data=data, mime_type=image_mime(data)) if kind == "image"
                 else types.Part(text=data) for kind, data in request.parts()]
        contents: list[Any] = [types.Content(role="user", parts=parts)]
        try:
            response = await self.connection.generate(self.model, contents, self._config(request))
        except PermanentAPIError as exc:
            return JudgeReply(Outcome.API_ERROR, reason=str(exc))
        usage = responses.usage(response)
        text = responses.output_text(response)
        refused = responses.refusal(response)
        if refused:
            return JudgeReply(Outcome.REFUSED, text=text or None, reason=refused, usage=usage)
        return JudgeReply(Outcome.OK, text=text, usage=usage)
