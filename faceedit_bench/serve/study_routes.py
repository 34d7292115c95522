"""Human studies in the app (docs/studies.md).

* ``/annotate/<study>/<secret>``: an annotator's page, one item at a time, resumed at their first unanswered
  item. It needs no access token (the link's secret is checked instead: the ledger holds its hash) and shows the
  annotator their own list only, never anyone's answers. An answer is committed to the ledger before the reply,
  so a killed server loses none; the form is CSRF-protected as every post of the app.
* ``/studies`` (behind the access token): the studies, a form that creates one from runs, and each study's live
  results (progress, attention checks, agreement per group with intervals, judge-human agreement) and export.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.serve.assets import stored_path
from faceedit_bench.serve.pages import page
from faceedit_bench.serve.security import form_fields, require_csrf
from faceedit_bench.storage.images import sniff_mime
from faceedit_bench.storage.study_tables import StudyTables, Task
from faceedit_bench.studies.create import KINDS, Settings, add_annotators, create_study, secret_hash

#: Annotator pages: public paths (the app's token is not asked; each route checks the link's secret).
ANNOTATOR_PREFIX = "/annotate/"
#: What an annotator's browser loads without the app's token: their pages and the shared stylesheets.
PUBLIC_PREFIXES = (ANNOTATOR_PREFIX, "/static/")
router = APIRouter()


def _tables(request: Request) -> StudyTables:
    """The workspace's study tables, opened (and their schema made) once per app."""
    state = request.app.state
    if getattr(state, "study_tables", None) is None:
        state.study_tables = StudyTables(state.workspace)
    return state.study_tables


# -- annotators ------------------------------------------------------------------------------


def _annotator(request: Request, study_id: str, secret: str) -> tuple[StudyTables, str]:
    tables = _tables(request)
    annotator = tables.annotator_of(study_id, secret_hash(secret))
    if annotator is None:
        raise HTTPException(404, "no such study link: ask the study's organiser for yours")
    return tables, annotator


def _next_task(tables: StudyTables, study_id: str, annotator: str) -> tuple[list[Task], Task | None, int]:
    tasks = tables.tasks(study_id, annotator)
    done = {a.item_id for a in tables.answers(study_id, annotator)}
    return tasks, next((t for t in tasks if t.item_id not in done), None), len(done)


def _shown_images(item: dict[str, Any], task: Task) -> list[tuple[str, str]]:
    """(label, hash) as the annotator sees them: a swapped pair shows B's output on the left; the images of a
    checklist or categorical item in the judge's order."""
    images = item["images"]
    if "shown" in item:
        return [(label, digest) for label, digest in item["shown"]]
    if "output" in images:
        return [("source", images["source"]), ("edited", images["output"])]
    left, right = (images["B"], images["A"]) if task.swapped else (images["A"], images["B"])
    return [("source", images["source"]), ("A", left), ("B", right)]


@router.get(ANNOTATOR_PREFIX + "{study_id}/{secret}", response_class=HTMLResponse)
def annotate(request: Request, study_id: str, secret: str) -> Response:
    tables, annotator = _annotator(request, study_id, secret)
    tasks, task, done = _next_task(tables, study_id, annotator)
    study = tables.study(study_id) or {}
    item = tables.items(study_id, annotator, task.item_id)[task.item_id] if task else None
    return page(request, "study/annotate.html.j2", title=study.get("spec", {}).get("title", "Study"),
                annotator=annotator, done=done, total=len(tasks), task=task, item=item,
                images=_shown_images(item, task) if item and task else [], link=request.url.path)


@router.post(ANNOTATOR_PREFIX + "{study_id}/{secret}", dependencies=[Depends(require_csrf)])
async def answer(request: Request, study_id: str, secret: str) -> Response:
    fields = await form_fields(request)
    return await run_in_threadpool(_answer, request, study_id, secret, fields)  # SQLite off the event loop


def _answer(request: Request, study_id: str, secret: str, fields: dict[str, list[str]]) -> Response:
    tables, annotator = _annotator(request, study_id, secret)
    item_id = (fields.get("item_id") or [""])[0]
    item = tables.items(study_id, annotator, item_id).get(item_id)
    if item is None:
        raise HTTPException(404, "that item is not on your list")
    answer: dict[str, str] = {}
    for question in item["questions"]:
        given = (fields.get(question["name"]) or [""])[0]
        if given not in {c["value"] for c in question["choices"]}:
            raise HTTPException(400, f"answer every question ({question['name']} is missing); go back and send again")
        answer[question["name"]] = given
    tables.record(study_id, annotator, item_id, answer)  # committed before the reply
    return RedirectResponse(request.url.path, status_code=303)


@router.get(ANNOTATOR_PREFIX + "{study_id}/{secret}/image/{digest}", include_in_schema=False)
def annotator_image(request: Request, study_id: str, secret: str, digest: str) -> Response:
    """An image of one of this annotator's items, and nothing else of the store."""
    tables, annotator = _annotator(request, study_id, secret)
    mine = {h for item in tables.items(study_id, annotator).values() for h in item["images"].values()}
    if digest not in mine:
        raise HTTPException(404, "no such image in your items")
    try:
        data = stored_path(request.app.state.workspace / "store", digest).read_bytes()
    except OSError:
        raise HTTPException(404, "no such image in the workspace's store") from None
    return Response(data, media_type=sniff_mime(data) or "application/octet-stream",
                    headers={"Cache-Control": "private, max-age=86400"})


# -- organisers (behind the access token) ------------------------------------------------------


def _links(request: Request, study_id: str, links: dict[str, str]) -> dict[str, str]:
    base = str(request.base_url).rstrip("/")
    return {who: f"{base}{ANNOTATOR_PREFIX}{study_id}/{secret}" for who, secret in links.items()}


@router.get("/studies", response_class=HTMLResponse)
def studies(request: Request) -> Response:
    runs = [r for r in request.app.state.runs.rows() if r.status in ("finished", "preliminary")]
    return page(request, "study/studies.html.j2", studies=_tables(request).studies(), runs=runs, kinds=KINDS)


def _number(fields: dict[str, list[str]], name: str, default: int | None) -> int | None:
    text = (fields.get(name) or [""])[0].strip()
    if not text:
        return default
    if not text.isdigit():
        raise FaceEditBenchError(f"{name.replace('_', ' ')}: {text!r} is not a whole number")
    return int(text)


@router.post("/studies", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def create(request: Request) -> Response:
    fields = await form_fields(request)
    return await run_in_threadpool(_create, request, fields)


def _create(request: Request, fields: dict[str, list[str]]) -> Response:
    from faceedit_bench.serve.runs_page import run_folder

    try:
        folders = [run_folder(request, name) for name in fields.get("run", [])]
        settings = Settings(kind=(fields.get("kind") or [""])[0], items=_number(fields, "items", None),
                            annotators=_number(fields, "annotators", 2) or 0,
                            per_item=_number(fields, "per_item", 2) or 0, gold=_number(fields, "gold", 2) or 0,
                            metric=(fields.get("metric") or [""])[0].strip() or None,
                            title=(fields.get("title") or [""])[0])
        created = create_study(request.app.state.workspace, folders, settings)
    except FaceEditBenchError as exc:
        return page(request, "message.html.j2", status_code=400, title="Create a study", message=str(exc))
    return page(request, "study/links.html.j2", study_id=created.study_id, links=_links(request, created.study_id,
                                                                                         created.links),
                not_asked=created.not_asked, n_items=created.n_items, n_gold=created.n_gold)


def _study(request: Request, study_id: str) -> dict[str, Any]:
    study = _tables(request).study(study_id)
    if study is None:
        raise HTTPException(404, f"no study {study_id} in this workspace")
    return study


@router.get("/studies/{study_id}", response_class=HTMLResponse)
def results(request: Request, study_id: str) -> Response:
    from faceedit_bench.studies.export import EXPORTS
    from faceedit_bench.studies.results import study_results
    from faceedit_bench.studies.text import alpha_text, judge_text, yes_text

    study = _study(request, study_id)
    return page(request, "study/results.html.j2", study=study, export_name=EXPORTS[study["kind"]][0],
                results=study_results(request.app.state.workspace, study_id), alpha_text=alpha_text,
                judge_text=judge_text, yes_text=yes_text)


@router.post("/studies/{study_id}/annotators", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def more_annotators(request: Request, study_id: str) -> Response:
    fields = await form_fields(request)
    return await run_in_threadpool(_more_annotators, request, study_id, fields)


def _more_annotators(request: Request, study_id: str, fields: dict[str, list[str]]) -> Response:
    _study(request, study_id)
    try:
        n = _number(fields, "n", 1) or 0
        if not 1 <= n <= 100:
            raise FaceEditBenchError("add between 1 and 100 annotators at a time")
        links = add_annotators(request.app.state.workspace, study_id, n)
    except FaceEditBenchError as exc:
        return page(request, "message.html.j2", status_code=400, title="Add annotators", message=str(exc))
    return page(request, "study/links.html.j2", study_id=study_id, links=_links(request, study_id, links),
                not_asked={}, n_items=None, n_gold=None)


@router.get("/studies/{study_id}/export", include_in_schema=False)
def export_csv(request: Request, study_id: str) -> Response:
    from faceedit_bench.studies.export import export

    _study(request, study_id)
    path = export(request.app.state.workspace, study_id)
    return Response(path.read_bytes(), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{study_id}-{path.name}"'})
