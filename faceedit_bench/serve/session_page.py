"""One session: every step I_0..I_K side by side (thumbnails, the stored image on click) with, per step, the
instruction, the edit's outcome and reason, FSS_k, every image metric, every judge answer with the judge's own
reasoning, its parse status and attempts, and the overedits the state tracker found against the instruction.
The same face's session under another run's editor is one click away, side by side with this one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.responses import HTMLResponse, Response

from faceedit_bench.serve import run_data
from faceedit_bench.serve.judgments import step_answers, step_battles
from faceedit_bench.serve.pages import page
from faceedit_bench.serve.run_page import load_report
from faceedit_bench.serve.runs_index import RunRow, finished_row

router = APIRouter()


def overedits(before: Any, after: Any, step: dict[str, Any]) -> dict[str, Any] | None:
    """What the state tracker saw change besides the step's target (None: the step has no tracked states)."""
    from faceedit_bench.scoring.overediting import step_overedits

    if not isinstance(before, dict) or not isinstance(after, dict) or not step.get("sub_axis"):
        return None
    try:
        found = step_overedits({k: v or () for k, v in before.items()}, {k: v or () for k, v in after.items()},
                               str(step["sub_axis"]), str(step.get("category") or ""))
    except (TypeError, ValueError) as exc:
        return {"error": str(exc), "changes": []}
    return {"error": None, "changes": [{"sub_axis": o.sub_axis, "kind": o.kind, "before": ", ".join(o.before) or "none",
                                        "after": ", ".join(o.after) or "none"} for o in found]}


def session_view(request: Request, folder: Path, report: dict[str, Any], face: str, session: str,
                 condition: str) -> dict[str, Any]:
    workspace = request.app.state.workspace
    steps = run_data.session_steps(request.app.state.tables, folder, face, session, condition)
    if not steps:
        raise HTTPException(404, f"no session {session} of face {face} ({condition}) in this run")
    answers = step_answers(workspace, (report.get("components") or {}).get("judge"), steps,
                           request.app.state.judged_images)
    battles = step_battles(workspace, steps, request.app.state.judged_images)
    shown = []
    for i, step in enumerate(steps):
        k = int(step.get("k") or 0)
        shown.append({"k": k, "row": step, "answers": answers.get(k, []), "battles": battles.get(k, []),
                      "overedits": overedits(steps[i - 1].get("state"), step.get("state"), step) if i else None,
                      "image_values": {m: v for part in (step.get("image_values") or {}).values()
                                       if isinstance(part, dict) for m, v in part.items() if m != "outcome"}})
    repeated = any(len({a.template for a in s["answers"]}) < len(s["answers"]) for s in shown)
    return {"steps": shown, "repeated": repeated}


def others(request: Request, this: str, row: RunRow) -> list[RunRow]:
    """Finished runs of the same test set with another editor (or judge): where the same face may be."""
    return [r for r in request.app.state.runs.rows() if r.folder != this and r.testset == row.testset
            and r.status not in ("running", "killed")]


@router.get("/runs/{run}/session", response_class=HTMLResponse)
def session_page(request: Request, run: str, face: str, session: str, condition: str = "baseline") -> Response:
    folder, report = load_report(request, run)
    row = finished_row(folder)
    view = session_view(request, folder, report, face, session, condition)
    return page(request, "session.html.j2", run=run, row=row, face=face, session=session, condition=condition,
                views=[(run, row, view)], others=others(request, run, row))


@router.get("/side-by-side", response_class=HTMLResponse)
def side_by_side(request: Request, face: str, session: str, condition: str = "baseline",
                 run: Annotated[list[str] | None, Query()] = None) -> Response:
    """The same face's session under several runs, one strip of steps each."""
    views = []
    for name in list(dict.fromkeys(run or []))[:4]:
        folder, report = load_report(request, name)
        try:
            views.append((name, finished_row(folder), session_view(request, folder, report, face, session,
                                                                   condition)))
        except HTTPException:
            views.append((name, finished_row(folder), None))
    if not views:
        raise HTTPException(404, "name runs to show side by side")
    return page(request, "session.html.j2", run=views[0][0], row=views[0][1], face=face, session=session,
                condition=condition, views=views, others=[])
