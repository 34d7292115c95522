"""One BFL task as ONE attempt of the core's execution layer: submit, poll until done, download.

Only the submission can make the core retry (``RetryableError``: 429, 5xx, timeouts, connection
errors, a cut-off answer), so an attempt never submits twice and the core's rate limiter admits
submissions only. Everything after the submission is handled here, because retrying it through
the core would submit (and pay for) the task again:

* a poll that fails (429, 5xx, a timeout, a cut-off answer) is tried again at the next interval,
  waiting at least the ``Retry-After`` it was given;
* ``Ready``: the result is downloaded from its signed URL, without the key. An expired or
  missing URL (401, 403, 404, 410) is replaced by re-polling the task for a fresh one; a
  cut-off or unreadable download is fetched again. After ``DOWNLOAD_TRIES`` tries: expired
  URLs end as ``api_error``, anything else raises ``RetryableError("truncated")``;
* ``Request Moderated`` (the input) and ``Content Moderated`` (the output) are ``refused`` with
  BFL's moderation reasons; ``Error`` and ``Task not found`` are ``api_error``;
* any other status (``Pending``, and FLUX.2's intermediate ones) means "still working" until
  ``poll_timeout_s`` after the submission, then ``api_error`` naming the last status seen.

Polls and downloads are counted with ``HostedConnection.count_request`` (:mod:`faceedit_bench.api`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from faceedit_bench.api import EditResult, ImageError, Outcome, RetryableError, redact
from faceedit_bench.api.images import decode_rgb
from faceedit_bench_bfl.connection import BflConnection, PermanentError, status_failure

DOWNLOAD_TRIES = 3
#: A signed URL that is no longer (or not) valid: storage services answer one of these.
EXPIRED_STATUSES = frozenset({401, 403, 404, 410})
MODERATED = {"Request Moderated": "the request (prompt or input image) was moderated",
             "Content Moderated": "the generated image was moderated"}
FAILED = ("Error", "Task not found")


@dataclass(frozen=True)
class Polling:
    interval_s: float
    timeout_s: float  # from the submission to the downloaded result
    request_timeout_s: float  # of each HTTP request


def _safe(url: str) -> str:
    """A URL for messages: without its query (a signed URL's signature)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _details(state: dict[str, Any]) -> str:
    details = state.get("details")
    if isinstance(details, dict):
        reasons = details.get("Moderation Reasons") or details.get("moderation_reasons")
        if isinstance(reasons, list) and reasons:
            return ", ".join(str(r) for r in reasons)
        return "; ".join(f"{k}: {v}" for k, v in details.items()) or "no details"
    return str(details) if details else "no details"


@dataclass
class Task:
    """The state of one attempt (see the module docstring)."""

    conn: BflConnection
    endpoint: str
    polling: Polling
    usage: dict[str, Any] = field(default_factory=dict)
    last: str = "no poll answered yet"
    wait_hint: float | None = None

    @property
    def client(self) -> Any:
        return self.conn.client(self.polling.request_timeout_s)

    async def run(self, body: dict[str, Any]) -> EditResult:
        try:
            task_id, polling_url = await self._submit(body)
        except PermanentError as exc:
            return EditResult(Outcome.API_ERROR, reason=str(exc), usage=self.usage)
        try:
            async with asyncio.timeout(self.polling.timeout_s):
                return await self._finish(task_id, polling_url)
        except PermanentError as exc:
            return EditResult(Outcome.API_ERROR, reason=str(exc), usage=self.usage)
        except TimeoutError:
            return EditResult(Outcome.API_ERROR, usage=self.usage, reason=(
                f"BFL task {task_id} was not finished {self.polling.timeout_s:g} s after submission "
                f"(poll_timeout_s; last: {self.last})"))

    # -- submit ------------------------------------------------------------------------

    async def _submit(self, body: dict[str, Any]) -> tuple[str, str]:
        url = f"{self.conn.endpoint.url}/v1/{self.endpoint}"
        try:
            response = await self.client.post(url, json=body, headers=self.conn.key_headers())
        except Exception as exc:
            failure = self.conn.transport_failure(exc, f"submit to {url}")
            if failure is None:
                raise
            raise failure from exc
        if response.status_code != 200:
            raise status_failure(response.status_code, response.content, response.headers, "submit")
        try:
            answer = response.json()
        except ValueError as exc:
            raise self.conn.UnexpectedAnswer(f"submit to {url}", response.content) from exc
        task_id, polling_url = (answer.get("id"), answer.get("polling_url")) if isinstance(answer, dict) else (None,
                                                                                                            None)
        if not isinstance(task_id, str) or not isinstance(polling_url, str):
            raise PermanentError(f"submit: the answer has no id and polling_url: {redact(str(answer))[:200]}")
        if not self.conn.takes_key(polling_url):
            raise PermanentError(f"submit: polling_url {_safe(polling_url)} is not on the API host "
                                 f"{self.conn.endpoint.url}; the key is not sent there")
        self.usage.update({"images_out": 0, "bfl_task_id": task_id, "polls": 0})
        for key, name in (("cost", "provider_credits"), ("input_mp", "input_mp"), ("output_mp", "output_mp")):
            if isinstance(answer.get(key), (int, float)):
                self.usage[name] = answer[key]
        return task_id, polling_url

    # -- poll --------------------------------------------------------------------------

    async def _poll(self, polling_url: str) -> dict[str, Any] | None:
        """The task's state, or None after a transient failure (noted in ``last``)."""
        self.conn.count_request("poll")
        self.usage["polls"] = self.usage.get("polls", 0) + 1
        self.wait_hint = None
        try:
            response = await self.client.get(polling_url, headers=self.conn.key_headers())
        except Exception as exc:
            failure = self.conn.transport_failure(exc, f"poll {_safe(polling_url)}")
            if failure is None:
                raise
            self.last = str(failure)
            return None
        if response.status_code != 200:
            failure = status_failure(response.status_code, response.content, response.headers, "poll")
            if isinstance(failure, PermanentError):
                raise failure
            self.last, self.wait_hint = str(failure), failure.retry_after
            return None
        try:
            state = response.json()
        except ValueError:
            self.last = str(self.conn.UnexpectedAnswer(f"poll {_safe(polling_url)}", response.content))
            return None
        if not isinstance(state, dict) or not isinstance(state.get("status"), str):
            self.last = f"poll: an answer without status: {str(state)[:120]}"
            return None
        return state

    async def _finish(self, task_id: str, polling_url: str) -> EditResult:
        while True:
            await asyncio.sleep(max(self.polling.interval_s, self.wait_hint or 0.0))
            state = await self._poll(polling_url)
            if state is None:
                continue
            status = state["status"]
            if status == "Ready":
                return await self._deliver(task_id, polling_url, state)
            if status in MODERATED:
                return EditResult(Outcome.REFUSED, usage=self.usage,
                                  reason=f"{status}: {MODERATED[status]} ({_details(state)})")
            if status in FAILED:
                return EditResult(Outcome.API_ERROR, usage=self.usage,
                                  reason=f"BFL task {task_id}: status {status} ({_details(state)})")
            progress = state.get("progress")
            self.last = f"status {status}" + (f", progress {progress}" if progress is not None else "")

    # -- download ----------------------------------------------------------------------

    @staticmethod
    def _sample(state: dict[str, Any] | None) -> str | None:
        result = state.get("result") if state and state.get("status") == "Ready" else None
        sample = result.get("sample") if isinstance(result, dict) else None
        return sample if isinstance(sample, str) and sample.startswith(("http://", "https://")) else None

    async def _deliver(self, task_id: str, polling_url: str, state: dict[str, Any]) -> EditResult:
        sample = self._sample(state)
        if sample is None:
            return EditResult(Outcome.API_ERROR, usage=self.usage,
                              reason=f"BFL task {task_id}: Ready without a result.sample URL")
        result = state["result"]
        if isinstance(result.get("seed"), int):
            self.usage["provider_seed"] = result["seed"]
        unusable: list[str] = []  # expired, missing or refused URLs
        transient: RetryableError | None = None
        for attempt in range(DOWNLOAD_TRIES):
            if attempt:  # a fresh signed URL for the next try, when the task still has one
                fresh = self._sample(await self._poll(polling_url))
                sample = fresh or sample
            image, failure = await self._fetch(sample)
            if image is not None:
                self.usage["images_out"] = 1
                return EditResult.ok(image, **self.usage)
            if isinstance(failure, RetryableError):
                transient = failure
            else:
                unusable.append(str(failure))
        if transient is None:
            return EditResult(Outcome.API_ERROR, usage=self.usage, reason=(
                f"BFL task {task_id}: the result URL had expired and re-polling gave no valid one "
                f"({DOWNLOAD_TRIES} tries; last: {unusable[-1]})"))
        raise RetryableError(transient.kind, f"download failed {DOWNLOAD_TRIES} times; last: {transient}",
                             status=transient.status)

    async def _fetch(self, url: str) -> tuple[bytes | None, Exception | None]:
        self.conn.count_request("download")
        what = f"download {_safe(url)}"
        try:
            # No key: the signed URL authorises itself, and its host is a delivery service, not the API.
            response = await self.client.get(url, follow_redirects=True)
        except Exception as exc:
            failure = self.conn.transport_failure(exc, what)
            if failure is None:
                raise
            return None, failure
        if response.status_code in EXPIRED_STATUSES:
            return None, PermanentError(f"{what}: HTTP {response.status_code} (expired or missing)")
        if response.status_code != 200:  # 5xx, 429: transient; another 4xx: this URL is unusable
            return None, status_failure(response.status_code, response.content, response.headers, what)
        try:
            decode_rgb(response.content, label="BFL result")
        except ImageError as exc:
            return None, RetryableError("truncated", f"{what}: {exc}")
        return response.content, None
