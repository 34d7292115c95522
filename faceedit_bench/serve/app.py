"""The app: :func:`create_app` puts the pages, the assets and the security layer together.

Route functions are plain ``def``: FastAPI runs them in its thread pool, so reading report files and the
ledger (read-only SQLite connections, never a write lock) never blocks the event loop while a run writes to the
same workspace.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI

from faceedit_bench.serve import assets, judgments, run_data, run_page, runs_page, session_page, study_routes
from faceedit_bench.serve.pages import secret_values
from faceedit_bench.serve.runs_index import RunsIndex
from faceedit_bench.serve.security import LOOPBACK, Guard, GuardMiddleware


def create_app(workspace: Path, *, token: str | None, allowed_hosts: Sequence[str] = LOOPBACK,
               public_prefixes: Sequence[str] = ()) -> FastAPI:
    """The web app over ``workspace`` (a folder holding ``runs/``, ``store/`` and ``ledger.sqlite``).

    ``token``: the access token every page needs (None: pages are open, for tests and benchmarks).
    ``allowed_hosts``: the host names requests may address (the bound host; loopback by default).
    ``public_prefixes``: paths that skip the access token because their routes check a secret of their own
    (an annotator's link)."""
    app = FastAPI(title="faceedit_bench", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.workspace = Path(workspace).resolve()
    app.state.guard = Guard(token, allowed_hosts, public_prefixes)
    app.state.secrets = secret_values([token])
    app.state.runs = RunsIndex(app.state.workspace)
    app.state.thumbnails = assets.Thumbnails()
    app.state.tables = run_data.TableCache()
    app.state.judged_images = judgments.ImageIndex()
    app.add_middleware(GuardMiddleware, guard=app.state.guard)
    app.include_router(assets.router)
    app.include_router(runs_page.router)
    app.include_router(run_page.router)
    app.include_router(session_page.router)
    # Human studies (docs/studies.md); annotator pages check their own link's secret instead of the token.
    app.include_router(study_routes.router)
    app.state.guard.public_prefixes += study_routes.PUBLIC_PREFIXES
    return app
