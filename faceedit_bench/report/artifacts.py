"""The run's files: per-step and per-session tables, contact sheets, report and config.

The tables stream into temporary files while the run goes on; :func:`write_artifacts` moves
them (with their Parquet twins) and the report into place together, under the run folder's
lock, so two processes running the same experiment leave one consistent folder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from faceedit_bench.plugin.payloads import RunInfo
from faceedit_bench.records import SessionResult
from faceedit_bench.report import tables
from faceedit_bench.report.attached import keep_derived, read_previous
from faceedit_bench.report.contact_sheet import (
    contact_sheet_name,
    drawn_sheet_key,
    render_session,
    session_reference,
    session_steps,
    sheet_key,
)
from faceedit_bench.report.html_file import write_html_report
from faceedit_bench.storage import atomic
from faceedit_bench.storage.locks import directory_lock
from faceedit_bench.storage.store import ImageStore


class ArtifactWriter:
    """Writes the per-step and per-session tables as results stream in, plus contact sheets."""

    STEP_COLUMNS = list(tables.STEP_COLUMNS)

    def __init__(self, out: Path, stack: ExitStack, store: ImageStore, max_sheets: int, *,
                 demographic_keys: tuple[str, ...] = tables.DEMOGRAPHIC_KEYS, judged_by: str = "",
                 run_ids: Mapping[str, str] | None = None, metrics: Sequence[str] = (),
                 sheets_after: threading.Event | None = None) -> None:
        """``run_ids`` go into every row (:func:`faceedit_bench.report.tables.run_identifiers`: they say
        who scored each score); ``metrics`` are the registered metrics, one sessions column each.

        Contact sheets are held back until ``sheets_after`` is set (the run's first new call has returned):
        a resumed run hands on its stored sessions first, and drawing their sheets (about 0.1 s of CPU each,
        more for large photos) would delay its first calls. What is still held when the sessions end is
        drawn by :meth:`draw_held_sheets`."""
        self.out, self.store, self.max_sheets = out, store, max_sheets
        self.judged_by = judged_by
        self.keys = demographic_keys
        self.run_ids = dict(run_ids or {})
        self.metrics = list(metrics)
        self.steps = tables.TableWriter(out / tables.STEPS_CSV, tables.step_columns(demographic_keys),
                                        tables.column_types(tables.step_columns(demographic_keys)))
        session_columns = tables.session_columns(self.metrics, demographic_keys)
        self.sessions = tables.TableWriter(out / tables.SESSIONS_CSV, session_columns,
                                           tables.column_types(session_columns, numeric=self.metrics))
        # Closed with the run's stack; discarded there if the run fails, else committed by write_artifacts.
        stack.push(self._exit)
        self.sheets = 0
        self._sheets_after = sheets_after
        self._held_sheets: list[SessionResult] = []
        (out / "contact_sheets").mkdir(exist_ok=True)

    def _exit(self, exc_type: Any, exc: Any, tb: Any) -> None:
        for table in (self.steps, self.sessions):
            table.close() if exc_type is None else table.discard()

    def write(self, result: SessionResult, values: dict[str, float | None]) -> None:
        face, session = result.face, result.session
        ids = self.run_ids
        demo = {k: face.demographics.get(k) or "" for k in self.keys}
        base_hash = result.image_hashes[0] if result.image_hashes else ""
        rows = [(0, ["", "", "", "", "", "", ""], ["ok" if result.steps else "", "", ""], base_hash)]
        for state in result.steps:
            step = session.steps[state.k - 1]
            # prompt: what reached the editor (empty for a step never sent: unsupported, prompt_failed ...)
            prompt = state.prompt or ""
            rows.append((state.k, [step.instruction, step.prompt_id or "", step.prompt_category or "", prompt,
                                   step.category, step.sub_axis, step.axis],
                         [state.outcome.value, state.reason, state.resumed], state.output_hash or ""))
        for k, step_fields, edit_fields, image_hash in rows:
            score = result.scores[k] if len(result.scores) > k else None
            score_fields = ["", "", ""] if score is None else [score.outcome.value, score.n_faces, _fmt(score.fss)]
            values_in_order = [face.face_id, face.identity, session.session_id, session.condition, k, *step_fields,
                               *edit_fields,
                               image_hash, *score_fields, result.excluded or "", *self._judge_fields(result.judged, k),
                               _image_values(result.measured, k)]
            self.steps.write({**ids, **dict(zip(tables.STEP_COLUMNS, values_in_order, strict=True)), **demo})
        self.sessions.write({**ids, "face_id": face.face_id, "identity": face.identity,
                             "session_id": session.session_id, "condition": session.condition,
                             "excluded": result.excluded or "",
                             **{tables.label_column(k, self.metrics): v for k, v in demo.items()},
                             **{name: _fmt(v) for name, v in values.items()}})
        if result.steps and self.sheets < self.max_sheets:
            self.sheets += 1
            self._held_sheets.append(result)
        if self._sheets_after is None or self._sheets_after.is_set():
            self.draw_held_sheets()

    def draw_held_sheets(self) -> None:
        held, self._held_sheets = self._held_sheets, []
        for result in held:
            self._sheet(result)

    def _judge_fields(self, judged: Any, k: int) -> list[Any]:
        """SC_k (k >= 1) and the tracked state of I_k, each with its answer's outcome; every other
        judge metric's points and outcome at k (JSON), and the panel's disagreement flags."""
        if judged is None:
            return ["", "", "", "", "", "", ""]
        sc = sc_outcome = state = state_outcome = ""
        others: dict[str, Any] = {}
        flags = []
        for name, judgment in judged.metrics.items():
            found = judgment.at(k)
            if found is None:
                continue
            answer, points = found
            flags += [f"{name}:{f}" for f in getattr(answer, "flags", ())]
            if name == "sc":
                sc, sc_outcome = _fmt(points.get("sc")), answer.outcome.value
            elif name == "state":
                state = json.dumps(answer.value, sort_keys=True) if answer.value is not None else ""
                state_outcome = answer.outcome.value
            else:
                others[name] = {"outcome": answer.outcome.value, **points}
        return [sc, sc_outcome, state, state_outcome, self.judged_by,
                json.dumps(others, sort_keys=True) if others else "", ";".join(flags)]

    def _sheet(self, result: SessionResult) -> None:
        steps = session_steps(result, self.store)
        title = f"{result.face.face_id} | {result.session.session_id}" + (
            f" | excluded: {result.excluded}" if result.excluded else "")
        session = result.session
        name = contact_sheet_name(result.face.face_id, session.session_id if session.condition == "baseline"
                                  else f"{session.session_id}@{session.condition}")
        path, reference = self.out / "contact_sheets" / name, session_reference(result.face)
        # A rerun into the same run folder hands on its stored sessions again: their sheets are drawn only
        # when what they show changed (drawing one takes about 0.1 s of CPU).
        key = sheet_key(title, reference, steps)
        if drawn_sheet_key(path) != key:
            atomic.write_bytes(path, render_session(title, reference, steps, key=key))


def _image_values(measured: Any, k: int) -> str:
    """Step k's image metric results (JSON: metric -> outcome and values), "" for none."""
    found = measured.at(k) if measured is not None else {}
    return json.dumps(found, sort_keys=True) if found else ""


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def write_artifacts(info: RunInfo, report: dict[str, Any], store: ImageStore | None = None,
                    tables_from: ArtifactWriter | None = None) -> dict[str, str]:
    """Move the run's finished tables into place and write report.json, config.yaml and
    report.html, all under the run folder's lock (another process may be finishing the same run).
    ``report`` first takes over, in place, what the report it replaces keeps (:func:`.attached.keep_derived`:
    sections attached after the run, and the provenance of the launches that did the work)."""
    out = info.output_dir
    if tables_from is not None:  # the Parquet conversion before the lock: hold it briefly
        tables_from.steps.prepare()
        tables_from.sessions.prepare()
    with directory_lock(info.workspace, f"run-{out.name}", what=f"writing the run folder {out}"):
        for folder in (out, out / "contact_sheets"):  # what earlier runs killed mid-write left behind
            atomic.remove_stale_temporaries(folder)
        keep_derived(report, read_previous(out, info.run_key))
        if tables_from is not None:
            tables_from.steps.commit()
            tables_from.sessions.commit()
        atomic.write_text(out / "report.json", json.dumps(report, indent=2, sort_keys=False, default=str))
        atomic.write_text(out / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(info.config)))
        # After report.json: a rendering problem can never lose the numbers.
        write_html_report(out, report, store=store)
    names = ("report.json", "report.html", "config.yaml", tables.STEPS_CSV, tables.SESSIONS_CSV,
             tables.STEPS_PARQUET, tables.SESSIONS_PARQUET, "contact_sheets")
    return {name: str(out / name) for name in names if (out / name).exists()}
