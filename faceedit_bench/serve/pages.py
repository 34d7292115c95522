"""Rendering a page: the app's templates (with the report's filters and macros behind them), the session's CSRF
token for forms, and every page passed through the secrets filter before it leaves."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from starlette.responses import HTMLResponse

from faceedit_bench.execution.secrets import redact
from faceedit_bench.report.templates import package_environment
from faceedit_bench.serve.security import csrf_token

#: Environment variables whose values are never shown (API keys of every provider, tokens, passwords).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
SHORTEST_SECRET = 8


def secret_values(extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The values a page must never hold: secret-looking environment variables and ``extra`` (the access
    token), longest first so a longer one is masked whole."""
    found = {v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= SHORTEST_SECRET}
    found |= {v for v in extra if v}
    return tuple(sorted(found, key=len, reverse=True))


def page(request: Request, template: str, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    env = package_environment("faceedit_bench.serve")
    html = env.get_template(template).render(csrf_token=csrf_token(request), path=request.url.path, **context)
    return HTMLResponse(masked(request, html), status_code=status_code)


def masked(request: Request, html: str) -> str:
    """``html`` with every secret the app knows of replaced by ``***``."""
    html = redact(html)
    for secret in request.app.state.secrets:
        html = html.replace(secret, "***")
    return html


def with_query(request: Request, **changes: Any) -> str:
    """This page's address with some query parameters changed (None: removed); for sort links and pages."""
    params = dict(request.query_params)
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = str(value)
    return request.url.path + (f"?{urlencode(params)}" if params else "")
