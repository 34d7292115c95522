"""The run's files: per-step and per-session tables, contact sheets, report and config."""

from __future__ import annotations

import csv
import json
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from faceedit_bench.contact_sheet import render
from faceedit_bench.engine import SessionResult
from faceedit_bench.run import RunInfo
from faceedit_bench.store import ImageStore


class ArtifactWriter:
    """Writes the per-step and per-session tables as results stream in, plus contact sheets."""

    STEP_COLUMNS = ["face_id", "identity", "session_id", "k", "instruction", "category", "sub_axis", "axis",
                    "outcome", "reason", "resumed", "image_hash", "faces_detected", "fss", "embedder",
                    "session_excluded"]

    def __init__(self, out: Path, stack: ExitStack, store: ImageStore, max_sheets: int, scored_by: str,
                 demographic_keys: tuple[str, ...] = ("gender", "skin_tone", "age_group")) -> None:
        self.out, self.store, self.max_sheets, self.scored_by = out, store, max_sheets, scored_by
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
        fss = result.fss or ()
        nf = result.n_faces or ()
        base_row = [face.face_id, face.identity, session.session_id, 0, "", "", "", "", "ok" if result.steps else "",
                    "", "", result.image_hashes[0] if result.image_hashes else "",
                    nf[0] if nf else "", _fmt(fss[0]) if fss else "", self.scored_by if fss else "",
                    result.excluded or ""]
        self.steps.writerow(base_row + demo)
        for state in result.steps:
            step = session.steps[state.k - 1]
            self.steps.writerow([
                face.face_id, face.identity, session.session_id, state.k, step.instruction, step.category,
                step.sub_axis, step.axis, state.outcome.value, state.reason, state.resumed, state.output_hash or "",
                nf[state.k] if len(nf) > state.k else "", _fmt(fss[state.k]) if len(fss) > state.k else "",
                self.scored_by if len(fss) > state.k else "", result.excluded or "",
            ] + demo)
        row = {"face_id": face.face_id, "identity": face.identity, "session_id": session.session_id,
               "excluded": result.excluded or "", **{k: face.demographics.get(k) or "" for k in self.keys},
               **{name: _fmt(v) for name, v in values.items()}}
        if self.sessions is None:
            self.sessions = csv.DictWriter(self.sessions_fh, fieldnames=list(row), extrasaction="ignore", restval="")
            self.sessions.writeheader()
        self.sessions.writerow(row)
        if result.steps and self.sheets < self.max_sheets:
            self._sheet(result)

    def _sheet(self, result: SessionResult) -> None:
        fss = result.fss or ()
        tiles = [(self.store.get(result.image_hashes[0]), f"I0 FSS {_fmt(fss[0]) if fss else '-'}")]
        for state in result.steps:
            step = result.session.steps[state.k - 1]
            score = f"FSS {_fmt(fss[state.k])}" if len(fss) > state.k else state.outcome.value
            data = self.store.get(state.output_hash) if state.output_hash else None
            tiles.append((data, f"I{state.k} {score}: {step.instruction}"))
        title = f"{result.face.face_id} | {result.session.session_id}" + (
            f" | excluded: {result.excluded}" if result.excluded else "")
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{result.face.face_id}__{result.session.session_id}") + ".png"
        (self.out / "contact_sheets" / name).write_bytes(render(title, tiles))
        self.sheets += 1


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def write_artifacts(info: RunInfo, report: dict[str, Any]) -> dict[str, str]:
    out = info.output_dir
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False, default=str))
    (out / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(info.config)))
    return {name: str(out / name) for name in
            ("report.json", "config.yaml", "steps.csv", "sessions.csv", "contact_sheets")}
