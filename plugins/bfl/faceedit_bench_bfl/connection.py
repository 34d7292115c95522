"""Where calls go and with which key: the BFL endpoint (a region or a base URL), the key, and
one ``httpx2.AsyncClient`` per event loop; plus what a failed HTTP exchange means.

The key goes only to the API host (the endpoint's own host; for a ``*.bfl.ai`` endpoint, any
``*.bfl.ai`` host, since the global endpoint hands out polling URLs of its regional clusters).
The signed result URLs are fetched without it: they carry their own signature.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from faceedit_bench.api import ConfigError, Endpoint, RetryableError, read_secret, redact, retry_after_s
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
            return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg')}"
                             if isinstance(e, dict) else str(e) for e in value)
        if value:
            return str(value)
    return json.dumps(data)[:200]


def status_failure(status: int, body: bytes, headers: Mapping[str, str], what: str) -> Exception:
    """``RetryableError`` for 408, 429 and 5xx; :class:`PermanentError` otherwise."""
    message = redact(f"{what}: HTTP {status}: {detail(body)}")
    if status == 429:
        return RetryableError("rate_limited", message, status=status, retry_after=retry_after_s(headers))
    if status == 408:
        return RetryableError("timeout", message, status=status)
    if status >= 500:
        return RetryableError("server_error", message, status=status, retry_after=retry_after_s(headers))
    return PermanentError(message)


def transport_failure(exc: Exception, what: str) -> RetryableError | None:
    """The core's view of an httpx2 exception; ``None`` for anything else."""
    import httpx2

    text = redact(f"{what}: {type(exc).__name__}: {exc}")
    if isinstance(exc, httpx2.TimeoutException):
        return RetryableError("timeout", text)
    if isinstance(exc, (httpx2.RemoteProtocolError, httpx2.ReadError)) and "message body" in str(exc):
        return RetryableError("truncated", text)  # "peer closed connection without sending complete message body"
    if isinstance(exc, httpx2.DecodingError):
        return RetryableError("truncated", text)
    if isinstance(exc, httpx2.TransportError):
        return RetryableError("connection", text)
    return None


class BflConnection:
    """Endpoint and key of one editor. The key lives in a private attribute only: never in
    ``describe()``, the provider key, a message or ``repr``."""

    def __init__(self, *, region: str, base_url: str | None, api_key_env: str, model: str, what: str) -> None:
        if region not in REGIONS:
            raise ConfigError(f"{what}: region must be one of {', '.join(REGIONS)} (BFL's endpoints), not {region!r}; "
                              "or set base_url for another endpoint.")
        if base_url is not None and not str(base_url).startswith(("http://", "https://")):
            raise ConfigError(f"{what}: base_url {base_url!r} must start with http:// or https:// (e.g. "
                              "https://api.eu.bfl.ai), or be null to use the region's endpoint.")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ConfigError(f"{what}: api_key_env must name the environment variable holding the key "
                              f"(e.g. BFL_API_KEY), not {api_key_env!r}.")
        self.region = region
        self.base_url = str(base_url).rstrip("/") if base_url else None
        self.api_key_env = api_key_env
        self._key = read_secret([api_key_env], what=what)  # fails here, before any work, naming the variable
        # BFL's active-task limits are per endpoint (kontext-max has its own), so per model. Never the key.
        self.provider_key = f"bfl:{self.endpoint}:{api_key_env}:{model}"
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    @property
    def endpoint(self) -> str:
        return self.base_url or REGIONS[self.region]

    def where(self, param: str) -> Endpoint:
        """The endpoint and how it was chosen, for the core's messages and the report (BFL has no
        SDK, so no environment variable plays a part)."""
        if self.base_url:
            return Endpoint(self.base_url, f"from {param}", False)
        return Endpoint(self.endpoint, f"region {self.region}; set {param} for another endpoint", True)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"region": self.region}
        if self.base_url:
            out["base_url"] = self.base_url
        return out

    def __repr__(self) -> str:
        return f"BflConnection(endpoint={self.endpoint!r}, api_key_env={self.api_key_env!r})"

    def takes_key(self, url: str) -> bool:
        """Whether ``url`` is on the API host, so that the key may be sent there."""
        ours, theirs = urlsplit(self.endpoint), urlsplit(url)
        if theirs.scheme not in ("http", "https"):
            return False
        if (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc):
            return True
        bfl = (ours.hostname or "").endswith(".bfl.ai")
        return bfl and theirs.scheme == "https" and (theirs.hostname or "").endswith(".bfl.ai")

    def prepare(self) -> None:
        """Import the SDK before the first call needs it (the editor's ``prepare`` capability)."""
        import httpx2  # noqa: F401

    def client(self, timeout_s: float) -> Any:
        """The client of the running event loop (an httpx client must not cross loops)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import httpx2

            # trust_env=False: no proxy or netrc from the environment; the config alone says where calls go.
            client = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout_s), trust_env=False,
                                        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64))
            self._clients[loop] = client
        return client

    def key_headers(self) -> dict[str, str]:
        return {"x-key": self._key, "accept": "application/json"}
