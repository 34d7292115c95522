"""A loopback HTTP server for fake providers, with injectable latency and faults.

Provider fakes (``gemini.py``, ``openai.py``) supply a ``handle(request, fault)``
function that answers in the provider's real wire format; this module does the
serving, the generic faults and the bookkeeping:

* ``latency_s``: added before every answer;
* ``rpm_limit``: a sliding one-minute window; requests above it get 429 + Retry-After;
* ``fault_rates``: ``{"429": 0.05, "500": 0.02, ...}`` drawn per request from a seeded RNG;
* ``script([...])``: faults for the next requests, in order (``None`` = answer normally; a
  :class:`FakeResponse` = answer exactly that, e.g. an error status in the provider's shape, so a
  test gets the SDK's own exception for it instead of building one by hand);
* ``hold_after(n)``: answer the first ``n`` requests, hold every later one (received and counted,
  unanswered) until the event it returns is set: a client is then certainly busy, for as long as a
  test needs (to signal it mid-run without a race).

Generic faults: ``429`` (with ``Retry-After: retry_after``), ``500``, ``503``,
``timeout`` (answers only after ``hang_s``), ``truncated`` (announces more bytes than it
sends, then closes). Any other fault name is passed to the provider handler.

A provider fake may override ``draws_fault(method, path)`` so that only some requests (a task
API's submissions, not its polls) draw faults and count against ``rpm_limit``, and may answer
a ``FakeResponse`` with ``truncate=True`` to cut that one answer short like ``truncated``.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GENERIC_FAULTS = ("429", "500", "503", "timeout", "truncated")


@dataclass
class FakeRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    fault: str | None = None
    received_at: float = field(default_factory=time.monotonic)
    answered_at: float | None = None  # when its response was written (None until then)

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class FakeResponse:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    truncate: bool = False  # send half the body under a Content-Length for all of it (a cut download)

    @classmethod
    def json(cls, status: int, obj: Any, **headers: str) -> FakeResponse:
        return cls(status, json.dumps(obj).encode(), headers=headers)


Handler = Callable[[FakeRequest, "str | None"], FakeResponse]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # concurrent clients otherwise stall about 1 s

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # the client gave up on a slow answer (timeout tests): expected, not an error
        super().handle_error(request, client_address)


class FakeServer:
    def __init__(self, handle: Handler, *, latency_s: float = 0.0, rpm_limit: float | None = None,
                 fault_rates: dict[str, float] | None = None, retry_after: float = 1.0, hang_s: float = 5.0,
                 seed: int = 0, error_body: Callable[[int, str], FakeResponse] | None = None, port: int = 0) -> None:
        self.handle = handle
        self.latency_s = latency_s
        self.rpm_limit = rpm_limit
        self.fault_rates = dict(fault_rates or {})
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.error_body = error_body or (lambda status, msg: FakeResponse.json(
            status, {"error": {"code": status, "message": msg, "status": "ERROR"}}))
        self.requests: list[FakeRequest] = []
        self._script: deque[str | None] = deque()
        self._hold: tuple[int, threading.Event] | None = None
        self._rng = random.Random(seed)
        self._window: deque[float] = deque()
        self._lock = threading.Lock()
        # port 0: any free port; a fixed one lets a test bring a "dead" endpoint back to life
        self._httpd = _Server(("127.0.0.1", port), self._make_handler())
        # A short poll interval: stopping the server otherwise waits up to 0.5 s.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    # -- control -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def script(self, faults: list[str | FakeResponse | None]) -> None:
        with self._lock:
            self._script.extend(faults)

    def hold_after(self, n: int) -> threading.Event:
        """Hold every request after the first ``n`` until the returned event is set."""
        release = threading.Event()
        self._hold = (n, release)
        return release

    def faults_seen(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.requests:
            counts[r.fault or "ok"] = counts.get(r.fault or "ok", 0) + 1
        return counts

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving -----------------------------------------------------------------------

    def draws_fault(self, method: str, path: str) -> bool:
        """Whether this request draws a fault (script, rates) and counts against ``rpm_limit``."""
        return True

    def _pick_fault(self) -> str | FakeResponse | None:
        with self._lock:
            if self.rpm_limit is not None:
                now = time.monotonic()
                while self._window and now - self._window[0] > 60.0:
                    self._window.popleft()
                if len(self._window) >= self.rpm_limit:
                    return "429"
                self._window.append(now)
            if self._script:
                return self._script.popleft()
            for fault, rate in self.fault_rates.items():
                if self._rng.random() < rate:
                    return fault
        return None

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fault = server._pick_fault() if server.draws_fault(self.command, self.path) else None
                canned = fault if isinstance(fault, FakeResponse) else None
                if canned is not None:
                    fault = f"canned {canned.status}"
                request = FakeRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                      body, fault)
                with server._lock:
                    server.requests.append(request)
                    held = server._hold is not None and len(server.requests) > server._hold[0]
                if held:
                    server._hold[1].wait()
                if server.latency_s:
                    time.sleep(server.latency_s)
                if fault == "timeout":
                    time.sleep(server.hang_s)
                if canned is not None:
                    response = canned
                elif fault == "429":
                    response = server.error_body(429, "Resource exhausted: rate limit")
                    response.headers.setdefault("Retry-After", f"{server.retry_after:g}")
                elif fault in ("500", "503"):
                    response = server.error_body(int(fault), "Internal error, please retry")
                else:
                    response = server.handle(request, fault)
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                for key, value in response.headers.items():
                    self.send_header(key, value)
                if fault == "truncated" or response.truncate:
                    self.send_header("Content-Length", str(len(response.body) + 1000))
                    self.end_headers()
                    self.wfile.write(response.body[: len(response.body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    request.answered_at = time.monotonic()
                    return
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)
                request.answered_at = time.monotonic()

            do_POST = _serve
            do_GET = _serve

        return RequestHandler
