"""One Gemini API endpoint and key: the SDK client, one ``generateContent`` attempt, and the
translation of its failures into the core's vocabulary.

The SDK's own retries are switched off (``HttpRetryOptions(attempts=1)``, which also removes
its hidden retry of aiohttp connection errors), so every retry happens, and is counted, in
:mod:`faceedit_bench.execution.calls`. The key comes from the named variables only. The endpoint is
``base_url`` in config, else the SDK's standard ``$GOOGLE_GEMINI_BASE_URL`` (a gateway that
holds the user's key must not be bypassed), else Google's; the effective endpoint, the API
version and "not Vertex AI" are always passed to the SDK explicitly, so what is recorded is
what calls use (the SDK would otherwise also read ``GOOGLE_GENAI_API_VERSION`` and
``GOOGLE_GENAI_USE_VERTEXAI``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.api import (
    ConfigError,
    Endpoint,
    RetryableError,
    atomic_open,
    limits_from_config,
    read_secret,
    redact,
    resolve_endpoint,
    sniff_mime,
)
from faceedit_bench.api import retry_after_s as header_retry_after_s

GOOGLE_ENDPOINT = "https://generativelanguage.googleapis.com/"
#: google-genai's standard variable for another Gemini API endpoint.
BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
DEFAULT_KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
#: Image formats Gemini takes inline.
GEMINI_FORMATS = frozenset({"image/png", "image/jpeg", "image/webp"})
INT32_SEEDS = 2**31  # the API's seed is an int32; larger seeds are answered 400
#: Where the SDK's default API version is kept once read (:func:`sdk_default_api_version`).
SDK_DEFAULTS_CACHE = Path("~/.cache/faceedit_bench/gemini")
_API_VERSION = re.compile(r"v[0-9]+[a-z0-9]*")


class PermanentAPIError(Exception):
    """A failure another attempt will not fix (400, 401, 403, 404 ...): recorded as ``api_error``."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status = status


def api_seed(seed: int) -> int:
    return seed % INT32_SEEDS


def image_mime(image: bytes) -> str:
    """The MIME type of encoded image bytes, for the formats Gemini accepts."""
    mime = sniff_mime(image)
    if mime in GEMINI_FORMATS:
        return mime
    raise ValueError(f"input image is not PNG, JPEG or WEBP (starts with {image[:12]!r}); Gemini accepts those")


def sdk_default_api_version() -> str:
    """google-genai's default API version. Reading it imports the SDK, which took 0.36 s of a warm launch's
    way to its first call (measured), before the config could be checked. So it is kept in
    :data:`SDK_DEFAULTS_CACHE`, in a file named after the SDK module that holds it (its path, size and
    modification time: another SDK version reads it again). A missing, damaged or unwritable file only
    costs the import."""
    try:
        spec = importlib.util.find_spec("google.genai")  # finds the package without importing it
        module = Path(spec.origin).with_name("_api_client.py")  # type: ignore[union-attr, arg-type]
        stat = module.stat()
        name = hashlib.sha256(f"{module}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:24]
        path = SDK_DEFAULTS_CACHE.expanduser() / f"api-version-{name}"
    except (AttributeError, ImportError, OSError, RuntimeError, TypeError):  # no SDK, or no home directory
        return _imported_default_api_version()
    with contextlib.suppress(OSError, UnicodeDecodeError):
        kept = path.read_text(encoding="ascii")
        if _API_VERSION.fullmatch(kept):
            return kept
    version = _imported_default_api_version()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "w", encoding="ascii") as stream:  # a reader never sees half a file
            stream.write(version)
    return version


def _imported_default_api_version() -> str:
    from google.genai import _api_client

    return str(getattr(_api_client, "GOOGLE_AI_API_DEFAULT_VERSION", "v1beta"))


class GeminiConnection:
    """The key, endpoint and limits of one component, and its SDK clients (one per event loop)."""

    def __init__(self, *, what: str, model: str, base_url: str | None, api_version: str | None,
                 api_key_env: str | Sequence[str], limits: Mapping[str, Any],
                 default_limits: Mapping[str, Any]) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{what}: model must be a Gemini model name such as gemini-2.5-flash, not {model!r}")
        envs = (api_key_env,) if isinstance(api_key_env, str) else tuple(api_key_env)
        if not envs or not all(isinstance(e, str) and e for e in envs):
            raise ConfigError(f"{what}: api_key_env must name one or more environment variables, not {api_key_env!r}")
        self._key = read_secret(envs, what=what)  # fails here, before any work, naming the variables
        # The variable the key came from (the first one where none is needed: no call is made).
        self.key_env = next((e for e in envs if os.environ.get(e, "").strip()), envs[0])
        self.model = model
        self.endpoint: Endpoint = resolve_endpoint(base_url, env_var=BASE_URL_ENV, default=GOOGLE_ENDPOINT,
                                                   param=f"{what.split()[0]}.params.base_url",
                                                   example="http://127.0.0.1:8080")
        self.base_url = None if self.endpoint.default else self.endpoint.url  # None: Google's own
        self._api_version = api_version
        self.limits = limits_from_config(limits, default_limits, what=what, endpoint=self.endpoint,
                                         provider_key=f"gemini:{self.base_url or 'default'}:{self.key_env}:{model}")
        self._clients: dict[asyncio.AbstractEventLoop, Any] = {}
        self._spare: Any = None  # a client made by :meth:`prepare`, for the first event loop that calls
        self._making_client = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"GeminiConnection(base_url={self.base_url!r}, key_env={self.key_env!r})"

    @property
    def api_version(self) -> str:
        """The configured API version, or the SDK's default. Either way it is passed to the SDK
        explicitly, so the version recorded in ``describe()`` is the one requests go to."""
        if self._api_version is None:
            self._api_version = sdk_default_api_version()
        return self._api_version

    def describe(self) -> dict[str, Any]:
        """What the editor and the judge share in their identity: model, API and endpoint
        (a non-default endpoint only; never the key).

        A non-default endpoint belongs to the identity, and so to the cache keys: another server
        may serve another model under the same name. Google's own endpoint is left out, so the
        cache keys of earlier runs stay valid; the report records it as provenance (the calls
        section, from ``CallLimits.endpoint``)."""
        description: dict[str, Any] = {"provider": "gemini", "model": self.model, "version": self.model,
                                       "api": "gemini-api generateContent", "api_version": self.api_version}
        if self.base_url:
            description["base_url"] = self.base_url
        return description

    def prepare(self) -> None:
        """Import the SDK and make a client before the first call needs them (the editor's ``prepare``
        capability: the engine calls it in a worker thread beside the first admission that embeds a face)."""
        with self._making_client:
            if self._spare is None and not self._clients:
                self._spare = self._new_client()

    def _client(self) -> Any:
        """This event loop's SDK client: the SDK's httpx client keeps connections bound to the
        loop that opened them, so a client is never shared between loops. The first loop takes the
        client :meth:`prepare` made (made outside any loop, it is bound to none yet)."""
        loop = asyncio.get_running_loop()
        for old in [old for old in self._clients if old.is_closed()]:
            del self._clients[old]  # its sessions cannot be closed any more; let them be collected
        client = self._clients.get(loop)
        if client is None:
            with self._making_client:  # waits for a client being prepared rather than making a second
                client, self._spare = self._spare or self._new_client(), None
            self._clients[loop] = client
        return client

    def _new_client(self) -> Any:
        from google import genai
        from google.genai import types

        # The SDK reads ``sys.modules["requests"]`` without importing it (to classify response headers).
        # Imported while another thread imports it (MLflow opening in the background does), it is seen
        # half-initialised and the call fails: it is imported here, once, before any call.
        with contextlib.suppress(ImportError):
            import requests  # noqa: F401

        options = types.HttpOptions(
            base_url=self.endpoint.url, api_version=self.api_version,
            timeout=int(self.limits.timeout_s * 1000), retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(vertexai=False, api_key=self._key, http_options=options)

    async def generate(self, model: str, contents: list[Any], config: Any) -> Any:
        """One ``generateContent`` attempt. Raises :class:`RetryableError` for transient
        failures and :class:`PermanentAPIError` for the others it recognises."""
        from google.genai import types

        # No tools are sent, so the SDK's automatic function calling has nothing to do; left on,
        # it logs a line per call.
        config = config.model_copy(update={"automatic_function_calling": types.AutomaticFunctionCallingConfig(
            disable=True)})
        try:
            return await self._client().aio.models.generate_content(model=model, contents=contents, config=config)
        except Exception as exc:
            mapped = classify(exc)
            if mapped is None:
                raise
            raise mapped from exc


# -- failures ------------------------------------------------------------------------------


def classify(exc: BaseException) -> RetryableError | PermanentAPIError | None:
    """The core's view of an SDK or transport exception; ``None`` for anything unexpected
    (the engine then records the call as ``failed`` with the exception)."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        return _classify_status(exc)
    text = redact(f"{type(exc).__name__}: {_plain(exc)}")
    loaded = [m for m in (sys.modules.get(n) for n in ("aiohttp", "httpx", "httpx2")) if m is not None]
    timeouts = (TimeoutError, *(m.TimeoutException for m in loaded if hasattr(m, "TimeoutException")))
    if isinstance(exc, timeouts):
        return RetryableError("timeout", text)
    truncated = (json.JSONDecodeError,  # a 200 whose body is cut or garbled
                 *(m.ClientPayloadError for m in loaded if hasattr(m, "ClientPayloadError")),  # aiohttp
                 *(m.DecodingError for m in loaded if hasattr(m, "DecodingError")))  # httpx
    if isinstance(exc, truncated):
        return RetryableError("truncated", text)
    protocol = tuple(m.RemoteProtocolError for m in loaded if hasattr(m, "RemoteProtocolError"))
    if isinstance(exc, protocol) and "message body" in str(exc):  # httpx: "... without sending complete message body"
        return RetryableError("truncated", text)
    connection = (OSError, *(m.ClientConnectionError for m in loaded if hasattr(m, "ClientConnectionError")),
                  *(m.TransportError for m in loaded if hasattr(m, "TransportError")))
    if isinstance(exc, connection):
        return RetryableError("connection", text)
    return None


def _plain(exc: BaseException) -> str:
    """The exception's message; for aiohttp's connector errors, whose text shows the SSL context's
    repr (``ssl:<ssl.SSLContext object at 0x...>``), the host, the port and the OS's reason."""
    os_error = getattr(exc, "os_error", None)
    host, port = getattr(exc, "host", None), getattr(exc, "port", None)
    if not isinstance(os_error, OSError) or host is None:
        return str(exc)
    code = os_error.errno
    reason = os.strerror(code) if isinstance(code, int) and code > 0 else (os_error.strerror or str(os_error))
    return f"cannot connect to {host}:{port}: {reason}"


def _classify_status(exc: Any) -> RetryableError | PermanentAPIError:
    code = int(exc.code or 0)
    message = redact(str(exc.message or exc.status or exc))
    if code == 429:
        return RetryableError("rate_limited", f"HTTP 429: {message}", status=429, retry_after=retry_after_s(exc))
    if code == 408:
        return RetryableError("timeout", f"HTTP 408: {message}", status=408)
    if code >= 500:
        return RetryableError("server_error", f"HTTP {code}: {message}", status=code, retry_after=retry_after_s(exc))
    return PermanentAPIError(code or None, message)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")


def retry_after_s(exc: Any) -> float | None:
    """How long the provider asked to wait: the ``Retry-After`` header (seconds or an HTTP
    date) and Google's ``google.rpc.RetryInfo`` detail (``retryDelay: "12s"``); the longer wins."""
    waits: list[float] = []
    wait = header_retry_after_s(getattr(getattr(exc, "response", None), "headers", None))
    if wait is not None:
        waits.append(wait)
    details = getattr(exc, "details", None)
    error = details.get("error", details) if isinstance(details, dict) else {}
    for detail in error.get("details", []) if isinstance(error, dict) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                waits.append(float(match.group(1)))
    return max(waits) if waits else None

