"""What every hosted provider's component shares, written once: its parameters, its connection (endpoint,
key, one SDK client per event loop, closed in that loop before it closes), the meaning of an error answer
(OpenAI-shaped: HTTP status plus the provider's error code) and of a transport failure, and the component's
setup (limits and prices). Plugins reach it through :mod:`faceedit_bench.api`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import inspect
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.call_errors import UnexpectedAnswer, retry_after_s
from faceedit_bench.execution.cost import check_prices
from faceedit_bench.execution.endpoints import Endpoint, endpoint_identity, resolve_endpoint
from faceedit_bench.execution.hosted_errors import answer_failure, as_code, openai_shaped_failure, transport_failure
from faceedit_bench.execution.limits import CallLimits, limits_from_config
from faceedit_bench.execution.secrets import read_secret, redact

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class HostedParams:
    """The parameters every hosted component takes. A component's own parameters extend this dataclass: they
    inherit these fields and may give them other defaults (``model: str = "gpt-image-1"``). The parameter
    check reads the fields, never the component's signature."""

    model: str
    base_url: str | None = None  # None: the SDK's variable for another endpoint, else the provider's host
    api_key_env: str | Sequence[str] | None = None  # the variable(s) holding the key
    # CallLimits fields; those left out keep the component's defaults. (A mapping default is given as
    # ``field(default_factory=lambda: DEFAULT_LIMITS)``: dataclasses take no unhashable default.)
    limits: Mapping[str, Any] = field(default_factory=dict)
    prices: Mapping[str, Any] | None = None  # USD per unit of usage, with as_of


def declared_params(factory: Any) -> dict[str, Any] | None:
    """``name -> default`` (``dataclasses.MISSING`` when required) of a factory that declares its parameters
    as a dataclass in ``params_type`` (every :class:`HostedComponent`); None for any other factory."""
    declared = getattr(factory, "params_type", None)
    if not (isinstance(declared, type) and dataclasses.is_dataclass(declared)):
        return None
    return {f.name: f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            for f in dataclasses.fields(declared) if f.init}


# -- the connection -----------------------------------------------------------------------------------


class HostedConnection:
    """Endpoint and key of one component, and its SDK clients. The key lives only in a private attribute: never
    in ``describe()``, the provider key, a message or ``repr``.

    A subclass names its provider and default endpoint and makes its SDK's client (:meth:`new_client`).
    Endpoint precedence: ``base_url`` in config, then the SDK's own variable (``base_url_env``, when it has one:
    a gateway that holds the user's key must not be bypassed), then ``default_url``."""

    provider: ClassVar[str] = ""
    #: The provider's name in messages (default: ``provider``).
    title: ClassVar[str] = ""
    default_url: ClassVar[str] = ""
    base_url_env: ClassVar[str | None] = None
    #: Modules :meth:`prepare` imports before the first call needs them.
    sdk_modules: ClassVar[tuple[str, ...]] = ()
    #: What a valid ``model`` looks like, for the message when it is missing.
    model_example: ClassVar[str] = "a model name"
    #: The example endpoint in messages about a malformed ``base_url``.
    url_example: ClassVar[str] = "http://127.0.0.1:8000/v1"

    # What an answer or a failed exchange means, the same for every provider (``hosted_errors``): a subclass and
    # its plugin's failure mapping call these as ``self.answer_failure(...)`` or ``HostedConnection.as_code(...)``.
    #: Where calls go, and how that was chosen (what :meth:`resolve` returns).
    Endpoint: ClassVar[type[Endpoint]] = Endpoint
    #: Raised for a complete answer not in the format the API promises (retried as ``malformed``).
    UnexpectedAnswer: ClassVar[type[UnexpectedAnswer]] = UnexpectedAnswer
    answer_failure = staticmethod(answer_failure)
    openai_shaped_failure = staticmethod(openai_shaped_failure)
    transport_failure = staticmethod(transport_failure)
    as_code = staticmethod(as_code)
    retry_after_s = staticmethod(retry_after_s)

    @staticmethod
    def count_request(kind: str, n: int = 1) -> None:
        """Count ``n`` requests of ``kind`` (``"poll"``, ``"download"``) that the running attempt made besides
        the one its rate limiters admitted; they spend no request budget. Outside an attempt nothing is counted."""
        # Imported on use: the executor's libraries are not for a plugin that is only loaded.
        from faceedit_bench.execution.calls import count_request

        count_request(kind, n)

    def __init__(self, *, what: str, model: str, base_url: str | None, api_key_env: str | Sequence[str] | None,
                 key_optional: bool = False) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{what}: model must be {self.model_example}, not {model!r}.")
        self.model = model
        self.endpoint = self.resolve(base_url, f"{what.split()[0]}.params.base_url")
        self.base_url = None if self.endpoint.default else self.clean_url(self.endpoint.url)
        envs = (api_key_env,) if isinstance(api_key_env, str) or api_key_env is None else tuple(api_key_env)
        if envs == (None,) and key_optional and not self.endpoint.default:
            envs = ()  # a server of one's own that takes no key
        elif not envs or not all(isinstance(e, str) and e for e in envs):
            raise ConfigError(f"{what}: api_key_env must name the environment variable(s) holding the "
                              f"{self.title or self.provider} key, not {api_key_env!r}"
                              + ("; only a server of your own (base_url set) may run without a key "
                                 "(api_key_env: null)." if key_optional else "."))
        self._key = read_secret(envs, what=what) if envs else None  # fails here, before any work
        # The variable the key came from (the first one where none is needed: no call is made).
        self.key_env = next((e for e in envs if os.environ.get(e, "").strip()), envs[0] if envs else None)
        self._clients: dict[asyncio.AbstractEventLoop, Any] = {}
        self._making = threading.Lock()
        #: Each request's timeout where the caller names none: the component's ``limits.timeout_s``.
        self.timeout_s = 120.0

    def resolve(self, configured: str | None, param: str) -> Endpoint:
        """Where calls go (the class docstring's precedence)."""
        if self.base_url_env is not None:
            return resolve_endpoint(configured, env_var=self.base_url_env, default=self.default_url, param=param,
                                    example=self.url_example)
        if configured is None:
            return Endpoint(self.default_url, f"{self.title or self.provider}'s default; set {param} for another", True)
        url = str(configured).strip()
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"{param}={configured!r} is not an endpoint: it must start with http:// or https:// "
                              f"(e.g. {self.url_example}); leave it null for {self.default_url}.")
        return Endpoint(url, f"from {param}", url.rstrip("/") == self.default_url.rstrip("/"))

    @staticmethod
    def clean_url(url: str) -> str:
        """The endpoint as the component's identity records it (unchanged unless a subclass says otherwise)."""
        return url

    @property
    def provider_key(self) -> str:
        """What shares one set of call limits: provider, endpoint, key variable and model (never the key)."""
        return f"{self.provider}:{self.base_url or 'default'}:{self.key_env}:{self.model}"

    def describe(self) -> dict[str, Any]:
        """What the endpoint adds to the component's identity (a non-default endpoint only)."""
        return endpoint_identity(self.base_url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(endpoint={self.endpoint.url!r}, key_env={self.key_env!r})"

    def prepare(self) -> None:
        """Import the SDK before the first call needs it (the editor's ``prepare`` capability: the engine calls
        it in a worker thread beside the first admission)."""
        for module in self.sdk_modules:
            importlib.import_module(module)

    def new_client(self, key: str | None, timeout_s: float) -> Any:
        """A new SDK client for ``key``, its own retries off (the core retries and counts every attempt)."""
        raise NotImplementedError

    async def close_client(self, client: Any) -> None:
        """Close a client made by :meth:`new_client` (default: its ``aclose()`` or ``close()``)."""
        for name in ("aclose", "close"):
            method = getattr(client, name, None)
            if callable(method):
                done = method()
                if inspect.isawaitable(done):
                    await done
                return

    def client(self, timeout_s: float | None = None) -> Any:
        """The running event loop's client: an HTTP client's connections belong to the loop that opened them,
        so a client never crosses loops. It is closed in that loop when the loop shuts down (:func:`close_with`).
        ``timeout_s``: of each request, when the client is made (default: :attr:`timeout_s`)."""
        loop = asyncio.get_running_loop()
        with self._making:
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = self.new_client(self._key, timeout_s or self.timeout_s)
                close_with(loop, lambda: self._forget(loop, client))
        return client

    async def _forget(self, loop: asyncio.AbstractEventLoop, client: Any) -> None:
        self._clients.pop(loop, None)
        try:
            await self.close_client(client)
        except Exception as exc:  # closing is tidying up: a failure must not hide how the command ended
            log.debug("closing the %s client failed: %s", self.provider, redact(f"{type(exc).__name__}: {exc}"))


#: The closers of the event loops that are running; each holds its async generator alive (the loop keeps them
#: in a WeakSet) until the loop's ``shutdown_asyncgens`` finalises it.
_CLOSERS: set[Any] = set()


def close_with(loop: asyncio.AbstractEventLoop, close: Callable[[], Any]) -> None:
    """Await ``close()`` in ``loop`` when the loop shuts down: ``asyncio.run``, ``asyncio.Runner`` and every loop
    owner that ends with ``loop.shutdown_asyncgens()`` (the run's engine) finalise the loop's open async
    generators before closing it, and this registers one. A client closed after its loop (collected later)
    prints "Event loop is closed" tracebacks instead. Call it from inside ``loop``."""

    async def closer() -> AsyncIterator[None]:
        try:
            yield
        finally:
            _CLOSERS.discard(generator)
            await close()

    generator = closer()
    _CLOSERS.add(generator)
    # The first step runs the generator to its yield now, synchronously (nothing is awaited before it), which
    # is what registers it with the running loop's async-generator hooks.
    with contextlib.suppress(StopIteration):
        generator.asend(None).send(None)


class HostedComponent:
    """The setup every hosted editor or judge shares: its parameters (``params_type``, a :class:`HostedParams`
    dataclass) checked and kept in ``self.params``, its connection, call limits and prices. A subclass sets
    ``name``, ``params_type``, ``connection_type`` and ``default_limits``, checks its own parameters in
    :meth:`setup`, and implements its one attempt (``aedit`` / ``ajudge``)."""

    kind: ClassVar[str] = "editor"  # its config group (editor, judge): messages say "editor <name>: ..."
    name: ClassVar[str] = ""
    params_type: ClassVar[type[HostedParams]] = HostedParams
    connection_type: ClassVar[type[HostedConnection]] = HostedConnection
    default_limits: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: Whether a server of one's own (``base_url`` set) may take no key (``api_key_env: null``).
    key_optional: ClassVar[bool] = False

    def __init__(self, **params: Any) -> None:
        self.params = self.params_type(**params)
        self.what = f"{self.kind} {self.name}"
        self.setup(self.params)
        self.connection = self.connect(self.params)
        self.limits: CallLimits = limits_from_config(self.params.limits, self.default_limits,
                                                     provider_key=self.connection.provider_key, what=self.what,
                                                     endpoint=self.connection.endpoint)
        self.connection.timeout_s = self.limits.timeout_s
        self.prices: dict[str, Any] = self.read_prices(self.params.prices)

    def setup(self, params: Any) -> None:
        """Check and keep the component's own parameters (before any key is read)."""

    def connect(self, params: Any) -> HostedConnection:
        return self.connection_type(what=self.what, model=params.model, base_url=params.base_url,
                                    api_key_env=params.api_key_env, key_optional=self.key_optional)

    # A price table checked (USD per unit of usage, with ``as_of``), for a subclass whose :meth:`read_prices`
    # reads its own.
    check_prices = staticmethod(check_prices)

    def read_prices(self, prices: Mapping[str, Any] | None) -> dict[str, Any]:
        """The component's prices: ``prices`` from config, checked (none: it costs nothing per call)."""
        return self.check_prices(prices or {}, self.what)

    def prepare(self) -> None:
        """The SDK made ready beside the first admission (the editor's ``prepare`` capability)."""
        self.connection.prepare()

    def client(self) -> Any:
        """The running event loop's SDK client."""
        return self.connection.client()
