"""The runs table: every run of the workspace, sortable and filterable by query parameters, with a form that
opens the chosen runs in the ``compare`` view."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from faceedit_bench.serve.pages import masked, page, with_query
from faceedit_bench.serve.runs_index import ANCHOR_FILTERS, SORT_COLUMNS, STATUSES, metric_columns, select

router = APIRouter()


@router.get("/", include_in_schema=False)
def home() -> Response:
    return RedirectResponse("/runs", status_code=307)


@router.get("/runs", response_class=HTMLResponse)
def runs(request: Request, q: str = "", status: str = "", anchors: str = "", sort: str = "date",
         order: str = "desc") -> Response:
    everything = request.app.state.runs.rows()
    metrics = metric_columns(everything)
    if sort not in SORT_COLUMNS and sort not in dict(metrics):
        sort = "date"
    rows = select(everything, q=q, status=status if status in STATUSES else "",
                  anchors=anchors if anchors in ANCHOR_FILTERS else "", sort=sort,
                  descending=order != "asc")
    columns = [("name", "run"), ("editor", "editor"), ("judge", "judge"), ("testset", "test set"),
               ("dataset", "dataset"), ("date", "date"), ("status", "status"), ("faces", "faces"),
               ("identities", "ids")]
    sort_links = {name: with_query(request, sort=name, order="asc" if sort == name and order != "asc" else "desc")
                  for name, _ in [*columns, *metrics]}
    return page(request, "runs.html.j2", rows=rows, total=len(everything), columns=columns, metrics=metrics,
                sort=sort, order=order, q=q, status=status, statuses=STATUSES,
                anchors=anchors, anchor_filters=ANCHOR_FILTERS, sort_links=sort_links,
                workspace=str(request.app.state.workspace))


@router.get("/compare", response_class=HTMLResponse)
def compare(request: Request, run: Annotated[list[str] | None, Query()] = None) -> Response:
    """The existing ``compare --html`` page of the chosen runs."""
    from faceedit_bench.compare.comparison import compare_runs
    from faceedit_bench.compare.render import format_compare
    from faceedit_bench.errors import FaceEditBenchError

    folders = [run_folder(request, name) for name in dict.fromkeys(run or [])]
    if len(folders) < 2:
        return page(request, "message.html.j2", status_code=400, title="Compare runs",
                    message="Choose at least two finished runs in the runs table to compare them.")
    try:
        html = format_compare(compare_runs(folders), "html")
    except FaceEditBenchError as exc:
        return page(request, "message.html.j2", status_code=400, title="Compare runs", message=str(exc))
    return HTMLResponse(masked(request, html))


def run_folder(request: Request, name: str) -> Path:
    """The folder of a run named in an address: a folder directly under the workspace's runs/, nothing else."""
    root = request.app.state.workspace / "runs"
    if not name or name.startswith(".") or "/" in name or "\\" in name or name != Path(name).name:
        raise HTTPException(404, "no such run")
    folder = root / name
    if not folder.is_dir():
        raise HTTPException(404, f"no run {name} in this workspace")
    return folder
