"""Stored runs written in the run folder layout (report.json, steps.csv, sessions.csv, images in the store)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

#: Editor -> base brightness of its outputs: the fake judge prefers the brighter output.
EDITORS = {"identity": 100, "good": 190, "mid": 150, "bad": 70}
FACES = [(f"f{i}", f"person{i // 2}", "male" if i % 4 < 2 else "female") for i in range(16)]
SESSIONS = {"s1": ["make the hair red", "add glasses"], "s2": ["look left", "add a hat"]}


def png(level: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((8, 8, 3), level, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def write_runs(workspace: Path, put, refuse: dict[str, set[str]] | None = None, testset_hash: str = "ts1",
               editors=EDITORS, dataset: dict | None = None, faces=FACES) -> list[Path]:
    """One run folder per editor; ``refuse[editor]`` lists "face/session/k" steps it refused; ``dataset``: the
    runs' dataset component (name, description) as report.json records it."""
    refuse = refuse or {}
    paths = []
    for editor, level in editors.items():
        run = workspace / "runs" / f"run-{editor}"
        run.mkdir(parents=True)
        report = {"schema": "faceedit_bench/run_report", "run": {"key": f"key-{editor}"},
                  "components": {"editor": {"name": editor},
                                 "testset": {"name": "t", "description": {"content_hash": testset_hash}},
                                 **({"dataset": dataset} if dataset else {})}}
        (run / "report.json").write_text(json.dumps(report))
        steps, sessions = [], []
        for n, (face, identity, gender) in enumerate(faces):
            base = put(png(128 + n))
            for session, instructions in SESSIONS.items():
                sessions.append({"face_id": face, "identity": identity, "session_id": session, "condition": "",
                                 "excluded": "", "gender": gender})
                steps.append({"face_id": face, "identity": identity, "session_id": session, "condition": "",
                              "k": 0, "instruction": "", "outcome": "ok", "image_hash": base})
                for k, text in enumerate(instructions, start=1):
                    refused = f"{face}/{session}/{k}" in refuse.get(editor, set())
                    image = "" if refused else put(png(min(255, level + (n * 13 + k * 7) % 45)))
                    steps.append({"face_id": face, "identity": identity, "session_id": session, "condition": "",
                                  "k": k, "instruction": text, "outcome": "refused" if refused else "ok",
                                  "image_hash": image})
        for name, rows in (("steps.csv", steps), ("sessions.csv", sessions)):
            with (run / name).open("w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
        paths.append(run)
    return paths
