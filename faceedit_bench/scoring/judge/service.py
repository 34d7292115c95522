"""The judge interface: images + a versioned prompt in, a schema-validated answer out.

A judge plugin implements one attempt (:meth:`Judge.ajudge`) and returns the model's raw
text; the core (:class:`JudgeService`) renders the prompt, looks the call up in the
ledger, runs it through the execution layer, parses and validates the answer, retries
an unparsable answer and finally records ``parse_error``. A score is never guessed:
an answer that does not fit the schema is an outcome, not a number.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError

from faceedit_bench.execution.call_errors import RUN_ENDING, GaveUp
from faceedit_bench.execution.calls import Executor
from faceedit_bench.execution.secrets import redact
from faceedit_bench.keys import fingerprint
from faceedit_bench.plugin.protocols import Judge
from faceedit_bench.records import JudgeAnswer, JudgeRequest, Outcome
from faceedit_bench.storage.images import plain_image

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PromptTemplate:
    """A versioned prompt with the schema its answer must satisfy.

    ``text`` uses ``$name`` placeholders (``string.Template``), so JSON examples in the
    prompt need no escaping. ``hash`` covers the name, version, system message, text and schema:
    any change to what the judge is asked gives new cache keys.

    ``system``: a system message sent before the images and the prompt (judges with a system role
    send it as such), for protocols that publish one (e.g. a question-answer protocol's answer call).
    ``request_schema``: the JSON schema sent to the provider for one question's fields, when it
    depends on the question (e.g. each question's choices as an enum); it must follow from the
    rendered prompt, which is part of the cache key. The answer is validated against ``schema``.
    """

    name: str
    version: str
    text: str
    schema: type[BaseModel]
    source: str = ""  # where the wording comes from (paper, repository, reconstruction)
    reconstruction: bool = False
    system: str = ""
    request_schema: Callable[[Mapping[str, str]], dict[str, Any]] | None = None

    @cached_property
    def json_schema(self) -> dict[str, Any]:
        return self.schema.model_json_schema()

    @cached_property
    def hash(self) -> str:
        # The system message only when there is one: the hashes (and cached answers) of other templates stay.
        return fingerprint({"name": self.name, "version": self.version, "text": self.text,
                            "schema": self.json_schema, **({"system": self.system} if self.system else {})})

    def schema_for(self, fields: Mapping[str, str] | None) -> Mapping[str, Any]:
        """The JSON schema sent with one question: ``request_schema(fields)``, else ``json_schema``."""
        return self.request_schema(fields or {}) if self.request_schema is not None else self.json_schema

    def render(self, **fields: str) -> str:
        return string.Template(self.text).substitute(**fields)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "hash": self.hash,
                "reconstruction": self.reconstruction, "source": self.source,
                **({"system": self.system} if self.system else {})}


class ParseFailure(ValueError):
    """An answer that is not one JSON object matching the template's schema."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_answer(text: str | None, schema: type[BaseModel], context: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one JSON object in ``text`` validated against ``schema``.

    Accepts the object bare, inside a Markdown code fence, or surrounded by prose (first
    ``{`` to last ``}``). Nothing else is repaired or guessed. ``context`` (the question's
    fields) reaches the schema's validators, for checks that depend on the question.
    """
    if not text or not text.strip():
        raise ParseFailure("empty answer")
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    start, end = candidate.find("{"), candidate.rfind("}")
    if start < 0 or end <= start:
        raise ParseFailure("no JSON object in the answer")
    try:
        obj = json.loads(candidate[start:end + 1])
    except json.JSONDecodeError as exc:
        raise ParseFailure(f"invalid JSON: {exc}") from exc
    try:
        return schema.model_validate(obj, context=context).model_dump(mode="json")
    except ValidationError as exc:
        raise ParseFailure(f"answer does not fit the schema: {exc.errors()[0]['msg']} "
                           f"at {'.'.join(str(p) for p in exc.errors()[0]['loc'])}") from exc


def judgment_key(judge_fp: str, template: PromptTemplate, prompt: str, image_hashes: Sequence[str],
                 seed: int, image_labels: Sequence[str] = ()) -> str:
    """What decides an answer. Image labels (what the judge reads before each image) enter only when
    there are any, so the keys of unlabelled questions are those they always had."""
    parts: list[Any] = ["judge", judge_fp, template.hash, prompt, list(image_hashes), seed]
    if any(image_labels):
        parts.append(list(image_labels))
    return fingerprint(parts)


class JudgeService:
    """Cached, counted, validated judge calls for the scorers."""

    def __init__(self, judge: Judge, judge_fp: str, executor: Executor, ledger: Any, store: Any,
                 *, parse_attempts: int = 2, retry: frozenset[Outcome] = frozenset({Outcome.API_ERROR})) -> None:
        self.judge = judge
        self.judge_fp = judge_fp
        self.executor = executor
        self.ledger = ledger
        self.store = store
        self.parse_attempts = parse_attempts
        self.retry = retry
        self.calls_made = 0
        self._in_flight: dict[str, asyncio.Future[JudgeAnswer]] = {}
        self._used: dict[str, float | None] = {}  # judgment key -> its estimated cost, for this run

    def run_cost_usd(self) -> float:
        """Estimated cost of every distinct answer this run used, cached ones included. Summed exactly (``fsum``):
        the answers come in whatever order the calls end, and a re-report must give the same number."""
        return math.fsum(v for v in self._used.values() if v is not None)

    async def ask(self, template: PromptTemplate, image_hashes: Sequence[str], seed: int = 0, *,
                  fresh: bool = False, image_labels: Sequence[str] = (), **fields: str) -> JudgeAnswer:
        """The judge's answer about ``image_hashes`` (stored images), each preceded by its label in
        ``image_labels`` when given. Taken from the ledger when present unless ``fresh`` (anchors are
        re-asked every run); identical questions asked concurrently share one call."""
        prompt = template.render(**fields)
        labels = tuple(image_labels) if any(image_labels) else ()
        key = judgment_key(self.judge_fp, template, prompt, image_hashes, seed, labels)
        if not fresh:
            cached = self.ledger.get_judgment(key)
            if cached is not None and cached.outcome not in self.retry:
                self._used[key] = cached.usage.get("cost_usd")
                return cached
            if key in self._in_flight:
                return await asyncio.shield(self._in_flight[key])
        future: asyncio.Future[JudgeAnswer] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        claim = getattr(self.ledger, "claim_judgment", None)  # a ledger shared by processes (the workspace's)
        try:
            # Another process's answer since this run started (even a fresh one: it is this run's too), or
            # None: this process holds the claim and asks.
            answer = await claim(key) if claim is not None else None
            if answer is None:
                # Upright 8-bit pixels, as the embedder sees them: an API may ignore EXIF orientation.
                # Decoded in a worker thread: the event loop goes on making calls meanwhile.
                images = await asyncio.to_thread(self._images, image_hashes)
                answer = await self._ask(template, prompt, images, seed, fields, labels)
                self.ledger.put_judgment(key, judge_fp=self.judge_fp, image_hashes=list(image_hashes),
                                         answer=answer)
            self._used[key] = answer.usage.get("cost_usd")
            future.set_result(answer)
            return answer
        except BaseException as exc:
            if claim is not None:
                self.ledger.release(key)  # not answered: another process may ask now
            future.set_exception(exc)
            future.exception()  # retrieved: waiters get it, nobody else has to
            raise
        finally:
            self._in_flight.pop(key, None)

    def _images(self, image_hashes: Sequence[str]) -> tuple[bytes, ...]:
        return tuple(plain_image(self.store.get(h), label=f"image {h[:12]}") for h in image_hashes)

    async def _ask(self, template: PromptTemplate, prompt: str, images: tuple[bytes, ...], seed: int,
                   fields: dict[str, str] | None = None, labels: tuple[str, ...] = ()) -> JudgeAnswer:
        usage: dict[str, Any] = {}
        last_raw, reason = None, ""
        for attempt in range(self.parse_attempts):
            request = JudgeRequest(prompt, images, template.schema_for(fields), template.name.replace("-", "_"),
                                   seed + attempt, system=template.system, image_labels=labels)
            try:
                reply = await self.executor.call(lambda r=request: self.judge.ajudge(r))
            except GaveUp as exc:
                return self._answer(template, Outcome.API_ERROR, None, last_raw, str(exc), usage)
            except RUN_ENDING:  # end the run: nothing is recorded for this call
                raise
            except Exception as exc:  # a judge bug is an outcome of this call, not the end of the run
                log.warning("judge failed: %s: %s", type(exc).__name__, exc)
                return self._answer(template, Outcome.FAILED, None, last_raw, f"{type(exc).__name__}: {exc}", usage)
            self.calls_made += 1
            for k, v in reply.usage.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    usage[k] = usage.get(k, 0) + v  # summed over parse retries
                else:
                    usage[k] = v  # e.g. the served model version: the latest wins
            if reply.outcome is not Outcome.OK:
                return self._answer(template, reply.outcome, None, reply.text, reply.reason, usage)
            last_raw = reply.text
            try:
                value = parse_answer(reply.text, template.schema, fields)
            except ParseFailure as exc:
                reason = f"{exc} (after {attempt + 1} attempt(s))"
                continue
            return self._answer(template, Outcome.OK, value, reply.text, "", usage)
        return self._answer(template, Outcome.PARSE_ERROR, None, last_raw, reason, usage)

    def _answer(self, template: PromptTemplate, outcome: Outcome, value: dict[str, Any] | None,
                raw: str | None, reason: str, usage: dict[str, Any]) -> JudgeAnswer:
        usage = self.executor.budget.charge(usage, self.judge.prices)
        return JudgeAnswer(outcome, value, redact(raw) if raw else raw, redact(reason), usage,
                           f"{template.name}@{template.version}", template.hash)
