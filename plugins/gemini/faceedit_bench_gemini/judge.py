"""``gemini``: an MLLM judge on Gemini with structured (JSON-schema) output.

One attempt per :meth:`GeminiJudge.ajudge`: the request's parts in order (each image as an inline
part, preceded by its label's text part when the judge metric declares labels, then the prompt),
in one user turn; the answer's raw text goes back unparsed, because the core parses, validates and
retries unparsable answers. With ``structured_output`` (the default) the answer is constrained to
the template's JSON schema; without it, the prompt alone asks for JSON, as paper (b)'s code did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from faceedit_bench.api import ConfigError, JudgeReply, JudgeRequest, Outcome
from faceedit_bench_gemini import responses
from faceedit_bench_gemini.component import GeminiComponent, GeminiParams
from faceedit_bench_gemini.connection import PermanentAPIError, api_seed, image_mime

#: Gemini 3's thinking levels (``thinkingConfig.thinkingLevel``); 2.5 models take a token budget instead.
THINKING_LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH")
#: About 80% of the paid Tier 1 limits published for gemini-2.5-flash (1000 RPM, 1M input TPM).
#: Tokens per call: two 1024x1024 images (4 tiles of 258 tokens each) and a prompt.
DEFAULT_LIMITS: Mapping[str, Any] = MappingProxyType({
    "requests_per_minute": 800, "tokens_per_minute": 800_000, "tokens_per_call": 3000, "max_concurrency": 32,
    "max_attempts": 6, "timeout_s": 60.0, "backoff_initial_s": 1.0, "backoff_max_s": 60.0,
})


@dataclass(frozen=True, kw_only=True)
class GeminiJudgeParams(GeminiParams):
    """See ``conf/judge/gemini.yaml``."""

    model: str = "gemini-2.5-flash"
    temperature: float = 0.0
    max_output_tokens: int | None = None
    thinking_budget: int | None = None
    thinking_level: str | None = None
    structured_output: bool = True
    limits: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_LIMITS)


class GeminiJudge(GeminiComponent):
    """Answers a judge prompt about images as JSON matching the request's schema."""

    kind = "judge"
    name = "gemini"
    params_type = GeminiJudgeParams
    default_limits = DEFAULT_LIMITS

    def setup(self, params: GeminiJudgeParams) -> None:
        what, level, budget = self.what, params.thinking_level, params.thinking_budget
        if not 0 <= float(params.temperature) <= 2:
            raise ConfigError(f"{what}: temperature must be between 0 and 2 (0 for reproducible judging)")
        if params.max_output_tokens is not None and int(params.max_output_tokens) < 1:
            raise ConfigError(f"{what}: max_output_tokens must be positive (or null for the model's limit)")
        if level is not None and str(level).upper() not in THINKING_LEVELS:
            raise ConfigError(f"{what}: thinking_level must be one of {', '.join(THINKING_LEVELS).lower()} "
                              f"(Gemini 3 models), or null, not {level!r}")
        if level is not None and budget is not None:
            raise ConfigError(f"{what}: set thinking_level (Gemini 3) or thinking_budget (Gemini 2.5), not both")
        if not isinstance(params.structured_output, bool):
            raise ConfigError(f"{what}: structured_output must be true (the answer held to the schema) or false "
                              f"(the prompt alone asks for JSON), not {params.structured_output!r}")
        self.model = params.model
        self.thinking_level = None if level is None else str(level).upper()
        self.temperature = float(params.temperature)
        self.max_output_tokens = None if params.max_output_tokens is None else int(params.max_output_tokens)
        self.thinking_budget = None if budget is None else int(budget)
        self.structured_output = params.structured_output

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
