"""Who may open the app's pages, and form posts only from its own pages.

* **Access token.** The URL the server prints carries ``?token=...`` (``secrets.token_urlsafe``). The first
  request with it gets an HttpOnly, SameSite=Strict cookie and a redirect to the same address without the token,
  so the token leaves the address bar and never reaches a page's links or a Referer. Every later request needs
  that cookie. Paths under ``public_prefixes`` (an annotator's own link, which carries its own secret) skip it.
* **Host check.** Requests must name a host the server was bound to (no DNS rebinding from another site).
* **CSRF.** A POST must come from the app's own page: its ``Origin`` (when sent) names this host, and its
  ``csrf_token`` form field (or ``X-CSRF-Token`` header) is the session's token, an HMAC of the session
  cookie under a key made at start-up and never shown. :func:`csrf_token` gives the value a form embeds;
  :func:`require_csrf` is the dependency a POST route declares.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import HTTPException, Request
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.responses import PlainTextResponse, RedirectResponse, Response

AUTH_COOKIE = "faceedit_auth"
SESSION_COOKIE = "faceedit_session"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def cookie(name: str, request: Request) -> str:
    """A cookie's name for this server: cookies do not tell ports apart, and two servers on one machine must not
    overwrite each other's."""
    return f"{name}_{request.url.port or 80}"


def new_token() -> str:
    """A random access token for the printed URL."""
    return secrets.token_urlsafe(24)


class Guard:
    """The app's secrets: the access token (None: pages are open) and the key CSRF tokens are made with."""

    def __init__(self, token: str | None, allowed_hosts: Sequence[str], public_prefixes: Sequence[str] = ()) -> None:
        self.token = token
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        self.public_prefixes = tuple(public_prefixes)
        self._key = secrets.token_bytes(32)

    def host_allowed(self, host_header: str) -> bool:
        host = host_header.lower()
        if host.startswith("["):  # [::1]:8000
            host = host[:host.find("]") + 1]
        elif host.count(":") == 1:  # 127.0.0.1:8000
            host = host.rsplit(":", 1)[0]
        return host in self.allowed_hosts or "*" in self.allowed_hosts

    def authorised(self, request: Request) -> bool:
        path = request.url.path
        if self.token is None or path == "/favicon.ico" or path.startswith(self.public_prefixes):
            return True
        given = request.cookies.get(cookie(AUTH_COOKIE, request), "")
        return hmac.compare_digest(given.encode(), self.auth_cookie_value().encode())

    def token_matches(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def auth_cookie_value(self) -> str:  # not the token itself: a cookie leaked from disk does not give the URL
        return hmac.new(self._key, f"auth:{self.token}".encode(), hashlib.sha256).hexdigest()

    def csrf_for(self, session: str) -> str:
        return hmac.new(self._key, f"csrf:{session}".encode(), hashlib.sha256).hexdigest()


class GuardMiddleware(BaseHTTPMiddleware):
    """Host check, token exchange and the access cookie; a session cookie for CSRF tokens on every page."""

    def __init__(self, app: object, guard: Guard) -> None:
        super().__init__(app)
        self.guard = guard

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        guard = self.guard
        if not guard.host_allowed(request.headers.get("host", "")):
            return PlainTextResponse("Unknown host: open the address faceedit-bench serve printed.", status_code=400)
        given = request.query_params.get("token")
        if given is not None and guard.token is not None:
            if not guard.token_matches(given):
                return PlainTextResponse("Wrong access token: open the address faceedit-bench serve printed.",
                                         status_code=403)
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            response: Response = RedirectResponse(request.url.path + (f"?{urlencode(rest)}" if rest else ""),
                                                  status_code=303)
            _set_cookie(response, cookie(AUTH_COOKIE, request), guard.auth_cookie_value())
            return response
        if not guard.authorised(request):
            return PlainTextResponse("This page needs the access token: open the address faceedit-bench serve "
                                     "printed (it ends in ?token=...).", status_code=401)
        session = request.cookies.get(cookie(SESSION_COOKIE, request))
        fresh = session is None
        request.state.session = session = session or secrets.token_urlsafe(18)
        response = await call_next(request)
        if fresh:
            _set_cookie(response, cookie(SESSION_COOKIE, request), session)
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
        return response


def _set_cookie(response: Response, name: str, value: str) -> None:
    response.set_cookie(name, value, httponly=True, samesite="strict", path="/")


def csrf_token(request: Request) -> str:
    """The value a form of this session embeds in its hidden ``csrf_token`` field."""
    return request.app.state.guard.csrf_for(request.state.session)


async def require_csrf(request: Request) -> None:
    """A POST route's dependency: refuses (403) a post from another site or without this session's token.
    The body is read here and kept by Starlette, so the route reads it again."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
        raise HTTPException(403, "cross-site form post refused")
    given = request.headers.get(CSRF_HEADER)
    if given is None and request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        given = (parse_qs((await request.body()).decode("utf-8", "replace")).get(CSRF_FIELD) or [None])[0]
    session = request.cookies.get(cookie(SESSION_COOKIE, request))
    if not given or not session or not hmac.compare_digest(given, request.app.state.guard.csrf_for(session)):
        raise HTTPException(403, "form expired or posted from another page: reload the page and send it again")


async def form_fields(request: Request) -> dict[str, list[str]]:
    """An url-encoded form's fields (no multipart parser needed)."""
    return parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
