"""The run's files: per-step and per-session tables, contact sheets, report and config."""

from __future__ import annotations

import csv
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from faceedit_bench.plugin.payloads import RunInfo
from faceedit_bench.records import Outcome, SessionResult
from faceedit_bench.report.contact_sheet import contact_sheet_name, render
from faceedit_bench.report.html import write_html_report
from faceedit_bench.storage.store import ImageStore


class ArtifactWriter:
    """Writes the per-step and per-session tables as results stream in, plus contact sheets."""

    STEP_COLUMNS = ["face_id", "identity", "session_id", "k", "instruction", "category", "sub_axis", "axis",
                    "outcome", "reason", "resumed", "image_hash", "score_outcome", "faces_detected", "fss",
                    "embedder", "session_excluded", "sc", "sc_outcome", "state", "state_outcome", "judged_by",
                    "judge_values", "judge_flags"]

    def __init__(self, out: Path, stack: ExitStack, store: ImageStore, max_sheets: int, scored_by: str,
                 demographic_keys: tuple[str, ...] = ("gender", "skin_tone", "age_group"), judged_by: str = "") -> None:
        self.out, self.store, self.max_sheets, self.scored_by = out, store, max_sheets, scored_by
        self.judged_by = judged_by
        self.keys = demographic_keys
        self.steps = csv.writer(stack.enter_context(open(out / "steps.csv", "w", newline="")))
        self.steps.writerow(self.STEP_COLUMNS + list(demographic_keys))
        self.sessions_fh = stack.enter_context(open(out / "sessions.csv", "w", newline=""))
        self.sessions: csv.DictWriter | None = None
        self.sheets = 0
        (out / "contact_sheets").mkdir(exist_ok=True)

    def write(self, result: SessionResult, values: dict[str, float | None]) -> None:
        face, session = result.face, result.session
        demo = [face.demographics.get(k) or "" for k in self.keys]
        base_hash = result.image_hashes[0] if result.image_hashes else ""
        rows = [(0, ["", "", "", ""], ["ok" if result.steps else "", "", ""], base_hash)]
        for state in result.steps:
            step = session.steps[state.k - 1]
            rows.append((state.k, [step.instruction, step.category, step.sub_axis, step.axis],
                         [state.outcome.value, state.reason, state.resumed], state.output_hash or ""))
        for k, step_fields, edit_fields, image_hash in rows:
            score = result.scores[k] if len(result.scores) > k else None
            score_fields = ["", "", "", ""] if score is None else [
                score.outcome.value, score.n_faces, _fmt(score.fss), self.scored_by]
            self.steps.writerow([face.face_id, face.identity, session.session_id, k, *step_fields, *edit_fields,
                                 image_hash, *score_fields, result.excluded or "",
                                 *self._judge_fields(result.judged, k), *demo])
        row = {"face_id": face.face_id, "identity": face.identity, "session_id": session.session_id,
               "excluded": result.excluded or "", **{k: face.demographics.get(k) or "" for k in self.keys},
               **{name: _fmt(v) for name, v in values.items()}}
        if self.sessions is None:
            self.sessions = csv.DictWriter(self.sessions_fh, fieldnames=list(row), extrasaction="ignore", restval="")
            self.sessions.writeheader()
        self.sessions.writerow(row)
        if result.steps and self.sheets < self.max_sheets:
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
        def caption(k: int, fallback: str) -> str:
            score = result.scores[k] if len(result.scores) > k else None
            if score is None or score.fss is None:
                return score.outcome.value if score else fallback
            return f"FSS {_fmt(score.fss)}" + (" (no face)" if score.outcome is Outcome.NO_FACE else "")

        tiles = [(self.store.get(result.image_hashes[0]), f"I0 {caption(0, '-')}")]
        for state in result.steps:
            step = result.session.steps[state.k - 1]
            score = caption(state.k, state.outcome.value)
            data = self.store.get(state.output_hash) if state.output_hash else None
            tiles.append((data, f"I{state.k} {score}: {step.instruction}"))
        title = f"{result.face.face_id} | {result.session.session_id}" + (
            f" | excluded: {result.excluded}" if result.excluded else "")
        name = contact_sheet_name(result.face.face_id, result.session.session_id)
        (self.out / "contact_sheets" / name).write_bytes(render(title, tiles))
        self.sheets += 1


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def write_artifacts(info: RunInfo, report: dict[str, Any], store: ImageStore | None = None) -> dict[str, str]:
    out = info.output_dir
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False, default=str))
    (out / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(info.config)))
    # After report.json: a rendering problem can never lose the numbers.
    write_html_report(out, report, store=store)
    return {name: str(out / name) for name in
            ("report.json", "report.html", "config.yaml", "steps.csv", "sessions.csv", "contact_sheets")}
