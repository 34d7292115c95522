"""Where calls go and with which key (:class:`~faceedit_bench.api.HostedConnection`): the BFL endpoint (a
region or a base URL), the key, and one ``httpx2.AsyncClient`` per event loop; plus what a failed HTTP exchange
means.

The key goes only to the API host (the endpoint's own host; for a ``*.bfl.ai`` endpoint, any
``*.bfl.ai`` host, since the global endpoint hands out polling URLs of its regional clusters).
The signed result URLs are fetched without it: they carry their own signature.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from faceedit_bench.api import ConfigError, HostedConnection, RetryableError
from faceedit_bench_bfl.models import REGIONS


class PermanentError(Exception):
    """A failure another attempt will not fix (401, 402, 403, 404, 422 ...): ``api_error``."""


def detail(body: bytes) -> str:
    """The message of an error answer: FastAPI's ``detail`` (a string or a list of validation
    errors), ``message`` or ``error``; else the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace").strip() or "(empty body)"
    if isinstance(data, dict):
        value = data.get("detail") or data.get("message") or data.get("error")
        if isinstance(value, list):
            return "; ".join(_validation_error(e) for e in value)
        if value:
            return str(value)
    return json.dumps(data)[:200]


def _validation_error(error: Any) -> str:
    if not isinstance(error, dict):
        return str(error)
    loc = error.get("loc")
    where = ".".join(str(p) for p in loc) if isinstance(loc, list) else str(loc or "")
    return f"{where}: {error.get('msg')}"


def status_failure(status: int, body: bytes, headers: Mapping[str, str], what: str) -> Exception:
    """``RetryableError`` for a transient error answer (429, 408, 409, 5xx); :class:`PermanentError` otherwise."""
    try:
        _, reason = HostedConnection.answer_failure(status, detail(body), headers=headers)
    except RetryableError as exc:
        return RetryableError(exc.kind, f"{what}: {exc}", status=exc.status, retry_after=exc.retry_after)
    return PermanentError(f"{what}: {reason}")


class BflConnection(HostedConnection):
    """Endpoint and key of one editor. BFL has no SDK, so no environment variable plays a part in the endpoint:
    ``base_url`` in config, else the region's."""

    provider = "bfl"
    default_url = REGIONS["global"]
    sdk_modules = ("httpx2",)
    url_example = "https://api.eu.bfl.ai"

    def __init__(self, *, region: str, **connection: Any) -> None:
        if region not in REGIONS:
            raise ConfigError(f"{connection['what']}: region must be one of {', '.join(REGIONS)} (BFL's endpoints), "
                              f"not {region!r}; or set base_url for another endpoint.")
        self.region = region
        super().__init__(**connection)

    def resolve(self, configured: str | None, param: str) -> HostedConnection.Endpoint:
        if configured is None:
            return self.Endpoint(REGIONS[self.region], f"region {self.region}; set {param} for another endpoint", True)
        found = super().resolve(configured, param)
        return self.Endpoint(found.url.rstrip("/"), found.source, False)

    @property
    def provider_key(self) -> str:
        # BFL's active-task limits are per endpoint (kontext-max has its own), so per model. Never the key.
        return f"bfl:{self.endpoint.url}:{self.key_env}:{self.model}"

    def describe(self) -> dict[str, Any]:
        return {"region": self.region, **({"base_url": self.base_url} if self.base_url else {})}

    def takes_key(self, url: str) -> bool:
        """Whether ``url`` is on the API host, so that the key may be sent there."""
        ours, theirs = urlsplit(self.endpoint.url), urlsplit(url)
        if theirs.scheme not in ("http", "https"):
            return False
        if (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc):
            return True
        bfl = (ours.hostname or "").endswith(".bfl.ai")
        return bfl and theirs.scheme == "https" and (theirs.hostname or "").endswith(".bfl.ai")

    def new_client(self, key: str | None, timeout_s: float) -> Any:
        import httpx2

        # trust_env=False: no proxy or netrc from the environment; the config alone says where calls go.
        return httpx2.AsyncClient(timeout=httpx2.Timeout(timeout_s), trust_env=False,
                                  limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64))

    def key_headers(self) -> dict[str, str]:
        return {"x-key": self._key or "", "accept": "application/json"}
