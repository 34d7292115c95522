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

import contextlib
import hashlib
import importlib.util
import re
from pathlib import Path
from typing import Any

from faceedit_bench.api import HostedConnection, RetryableError, atomic_open
from faceedit_bench.api.images import sniff_mime

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


class GeminiConnection(HostedConnection):
    """The key, endpoint and API version of one component, and its SDK clients (one per event loop)."""

    provider = "gemini"
    default_url = GOOGLE_ENDPOINT
    base_url_env = BASE_URL_ENV
    model_example = "a Gemini model name such as gemini-2.5-flash"
    url_example = "http://127.0.0.1:8080"

    def __init__(self, *, api_version: str | None, **connection: Any) -> None:
        super().__init__(**connection)
        self._api_version = api_version
        self._spare: Any = None  # a client made by :meth:`prepare`, for the first event loop that calls
        self._served = False  # a client was made for a call: prepare has nothing more to do

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
        return {"provider": "gemini", "model": self.model, "version": self.model,
                "api": "gemini-api generateContent", "api_version": self.api_version, **super().describe()}

    def prepare(self) -> None:
        """Import the SDK and make a client before the first call needs them (the editor's ``prepare``
        capability: the engine calls it in a worker thread beside the first admission that embeds a face).
        Made outside any loop, it is bound to none yet: the first loop that calls takes it."""
        with self._making:
            if self._spare is None and not self._served:
                self._spare = self._build(self._key, self.timeout_s)

    def new_client(self, key: str | None, timeout_s: float) -> Any:
        client, self._spare, self._served = self._spare or self._build(key, timeout_s), None, True
        return client

    def _build(self, key: str | None, timeout_s: float) -> Any:
        from google import genai
        from google.genai import types

        # The SDK reads ``sys.modules["requests"]`` without importing it (to classify response headers).
        # Imported while another thread imports it (MLflow opening in the background does), it is seen
        # half-initialised and the call fails: it is imported here, once, before any call.
        with contextlib.suppress(ImportError):
            import requests  # noqa: F401

        options = types.HttpOptions(
            base_url=self.endpoint.url, api_version=self.api_version,
            timeout=int(timeout_s * 1000), retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(vertexai=False, api_key=key, http_options=options)

    async def close_client(self, client: Any) -> None:
        await client.aio.aclose()

    async def generate(self, model: str, contents: list[Any], config: Any) -> Any:
        """One ``generateContent`` attempt. Raises :class:`RetryableError` for transient
        failures and :class:`PermanentAPIError` for the others it recognises."""
        from google.genai import types

        # No tools are sent, so the SDK's automatic function calling has nothing to do; left on,
        # it logs a line per call.
        config = config.model_copy(update={"automatic_function_calling": types.AutomaticFunctionCallingConfig(
            disable=True)})
        try:
            return await self.client().aio.models.generate_content(model=model, contents=contents, config=config)
        except Exception as exc:
            mapped = classify(exc, f"POST {self.endpoint.url.rstrip('/')}/{self.api_version}/models/{model}"
                                   ":generateContent")
            if mapped is None:
                raise
            raise mapped from exc


# -- failures ------------------------------------------------------------------------------


def classify(exc: BaseException, where: str = "the Gemini endpoint") -> RetryableError | PermanentAPIError | None:
    """The core's view of an SDK or transport exception; ``None`` for anything unexpected
    (the engine then records the call as ``failed`` with the exception)."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        try:
            _, reason = HostedConnection.answer_failure(exc.code, exc.message or exc.status or exc,
                                                        retry_after=retry_after_s(exc))
        except RetryableError as transient:
            return transient
        return PermanentAPIError(reason)
    return HostedConnection.transport_failure(exc, where)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")


def retry_after_s(exc: Any) -> float | None:
    """How long the provider asked to wait: the ``Retry-After`` header (seconds or an HTTP
    date) and Google's ``google.rpc.RetryInfo`` detail (``retryDelay: "12s"``); the longer wins."""
    waits: list[float] = []
    wait = HostedConnection.retry_after_s(getattr(getattr(exc, "response", None), "headers", None))
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

