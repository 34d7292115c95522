"""A run's page: its headline figures (each a link to the sessions behind it, worst first), the judge's
anchors, the worst sessions, then every session, filtered by demographic group, outcome and metric range,
sorted and paginated by query parameters. The full report (report.html, as the run wrote it) is one click
away."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import FileResponse, HTMLResponse, Response

from faceedit_bench.report.measures import identity_metric, label_of, report_measures
from faceedit_bench.serve import run_data
from faceedit_bench.serve.judgments import anchors
from faceedit_bench.serve.pages import masked, page, with_query
from faceedit_bench.serve.runs_index import finished_row, headline_figures, read_report
from faceedit_bench.serve.runs_page import run_folder

router = APIRouter()
SHEET = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.png")  # report.contact_sheet.contact_sheet_name's names
PAGE_SIZE = 50
WORST = 6


def load_report(request: Request, run: str) -> tuple[Any, dict[str, Any]]:
    folder = run_folder(request, run)
    report = read_report(folder)
    if report is None:
        raise HTTPException(404, f"{run} has no report yet (still running, or killed before it wrote one)")
    return folder, report


def worst_first(report: dict[str, Any], metric: str) -> bool:
    """Sorting a metric's sessions worst first: descending for a lower-is-better metric."""
    return ((report.get("metrics") or {}).get(metric) or {}).get("higher_is_better") is False


def _float(text: str | None) -> float | None:
    return run_data.number(text) if text not in (None, "") else None


@router.get("/runs/{run}", response_class=HTMLResponse)
def run_page(request: Request, run: str, group: str = "", outcome: str = "", metric: str = "", low: str = "",
             high: str = "", sort: str = "", order: str = "", page_no: int = 1) -> Response:
    folder, report = load_report(request, run)
    measures = report_measures(report)
    metrics = list(report.get("metrics") or {})
    ranking = identity_metric(report) or ""
    sessions = run_data.sessions(request.app.state.tables, folder)
    chosen = run_data.SessionFilter(group=group, outcome=outcome if outcome in run_data.OUTCOMES else "",
                                    metric=metric if metric in metrics else "", low=_float(low), high=_float(high))
    sort = sort if sort in metrics else ranking
    descending = (order or ("desc" if worst_first(report, sort) else "asc")) == "desc"
    kept = run_data.sort_sessions([r for r in sessions if chosen.keeps(r)], sort, descending)
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    page_no = min(max(1, page_no), pages)
    worst = run_data.sort_sessions([r for r in sessions if r["outcome"] == "ok"], ranking,
                                   worst_first(report, ranking))[:WORST] if ranking else []
    figures = [{"figure": f, "link": f"/runs/{run}?sort={f.name}#sessions"} for f in headline_figures(report, everything=True)]
    return page(request, "run.html.j2", run=run, row=finished_row(folder), report=report, figures=figures,
                skipped=report.get("skipped_metrics") or {}, anchors=anchors(report),
                sessions=kept[(page_no - 1) * PAGE_SIZE: page_no * PAGE_SIZE], total=len(sessions),
                matched=len(kept), page_no=page_no, pages=pages,
                prev=with_query(request, page_no=page_no - 1) if page_no > 1 else None,
                next=with_query(request, page_no=page_no + 1) if page_no < pages else None,
                metrics=[(m, label_of(m, measures)) for m in metrics], shown_metrics=metrics[:5],
                metric_labels={m: label_of(m, measures) for m in metrics},
                groups=run_data.groups(sessions), outcomes=run_data.OUTCOMES, f=chosen, low=low, high=high,
                sort=sort, order="desc" if descending else "asc", worst=worst, ranking=ranking,
                ranking_label=label_of(ranking, measures) if ranking else "",
                sort_links={m: with_query(request, sort=m, order="asc" if sort == m and descending else "desc",
                                          page_no=None) for m in metrics},
                labels=[k for k in run_data.tables.DEMOGRAPHIC_KEYS if any(r.get(k) for r in sessions)],
                has_report=(folder / "report.html").is_file())


@router.get("/runs/{run}/report", include_in_schema=False)
def full_report(request: Request, run: str) -> Response:
    """report.html as the run wrote it (its contact-sheet links resolve below)."""
    folder = run_folder(request, run)
    if not (folder / "report.html").is_file():
        raise HTTPException(404, "this run wrote no report.html; `faceedit-bench report` writes it")
    return HTMLResponse(masked(request, (folder / "report.html").read_text(encoding="utf-8")))


@router.get("/runs/{run}/contact_sheets/{name}", include_in_schema=False)
def contact_sheet(request: Request, run: str, name: str) -> Response:
    folder = run_folder(request, run) / "contact_sheets"
    if not SHEET.fullmatch(name) or ".." in name or not (folder / name).is_file():
        raise HTTPException(404, "no such contact sheet")
    return FileResponse(folder / name, media_type="image/png")
