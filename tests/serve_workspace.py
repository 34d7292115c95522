"""A small real workspace for the web app's tests: two offline runs of the synthetic dataset (a scripted editor
with a refusal and a failure, and the identity editor), the first judged by a fake Gemini whose answers carry
reasoning text, so every part of a session page has something to show."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.answers import example_from_schema
from tests.session_folder import made_once

KEY = "test-gemini-key-for-serve"
#: Every judge answer's reasoning starts with this, so a test finds it on the page.
REASONING = "The judge's own reasoning:"
FAST = ["limits.max_attempts=2", "limits.backoff_initial_s=0.01", "limits.requests_per_minute=6000",
        "limits.tokens_per_minute=null"]
SCRIPT = "{pose-01/2:refused,pose-03/4:api_error}"


def judge_answer(request: dict[str, Any]) -> str:
    schema = request["generationConfig"].get("responseJsonSchema") or {}
    answer = example_from_schema(schema)
    for key in answer:
        if isinstance(answer[key], str) and "reason" in key:
            answer[key] = f"{REASONING} step looks edited as asked ({len(json.dumps(request)) % 97})."
    return json.dumps(answer)


def make_workspace(base: Path, *, faces: int = 3, sessions: int = 3) -> Path:
    """Run the two experiments into ``base/ws``; returns the workspace."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir, register_configs
    from tests import fake_plugin
    from tests.fakes.gemini import gemini_server

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    register_configs(plugins)
    common = [f"run.workspace={base / 'ws'}", "run.progress=false", "dataset=synthetic",
              f"+dataset.params.root={base / 'faces'}", f"+dataset.params.n={faces}", "embedder=pixel",
              "tracking=none", "run.workers=1", "testset=pose", f"run.max_sessions={sessions}",
              "analysis.n_resamples=99"]
    old = os.environ.get("GEMINI_API_KEY")
    os.environ["GEMINI_API_KEY"] = KEY
    try:
        with gemini_server(api_key=KEY, judge_answer=judge_answer) as server, \
                initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            judged = ["judge=gemini", f"judge.params.base_url={server.url}", *[f"judge.params.{s}" for s in FAST]]
            for overrides in ([*common, "editor=scripted", f"+editor.params.script={SCRIPT}",
                               "+editor.params.noise=8", *judged],
                              [*common, "editor=identity"]):
                run_experiment(build_experiment(compose(config_name="config", overrides=overrides), plugins), plugins)
    finally:
        if old is None:
            os.environ.pop("GEMINI_API_KEY", None)
        else:
            os.environ["GEMINI_API_KEY"] = old
    return base / "ws"


# -- a synthetic workspace of any size, written directly (no run): the benchmark's and the page-weight test's ----

TEMPLATES = (("viescore-tie-sc@1", "15fa133f2c6b" + "0" * 52), ("state-tracker@1", "fdb43b031886" + "0" * 52))
JUDGE = {"name": "gemini", "description": {"model": "gemini-2.5-flash", "version": "gemini-2.5-flash"}}


def _metric(mean: float, n: int, ids: int, higher: bool, label: str) -> dict[str, Any]:
    return {"higher_is_better": higher, "label": label, "unit": "", "description": label, "bounds": [0.0, 100.0],
            "requires": ["embedder"] if label == "Drop_FSS" else ["judge"], "n": n, "n_identities": ids,
            "mean": mean, "ci_low": mean - 1.0, "ci_high": mean + 1.0, "ci_method": "bootstrap"}


def synthetic_run(ws: Path, index: int, sessions: int, *, steps: int = 4, images: int = 0) -> Path:
    """One run folder of ``sessions`` sessions (``sessions // 10`` identities, 10 sessions each) with its report,
    sessions and steps tables and its judge answers in the workspace ledger. The first ``images`` sessions get
    real images in the store (a stand-in hash elsewhere: a page refers to images, it never reads them)."""
    import hashlib
    import sqlite3

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from faceedit_bench.report.run_report import SCHEMA_ID
    from faceedit_bench.storage.images import encode_png
    from faceedit_bench.storage.ledger import Ledger
    from faceedit_bench.storage.store import ImageStore

    key = hashlib.sha256(f"run{index}".encode()).hexdigest()
    folder = ws / "runs" / f"editor{index}-pose-synthetic-pixel-{key[:12]}"
    folder.mkdir(parents=True)
    ids = max(1, sessions // 10)
    rng = np.random.default_rng(index)
    store = ImageStore(ws / "store")
    session_rows, step_rows, judgments = [], [], []
    for s in range(sessions):
        face, session = f"synthetic/{s % ids}", f"pose-{s // ids:03d}"
        hashes = []
        for k in range(steps + 1):
            if s < images:
                pixels = rng.integers(0, 255, (8, 8, 3), dtype=np.uint8).repeat(32, 0).repeat(32, 1)
                hashes.append(store.put(encode_png(pixels)))
            else:
                hashes.append(hashlib.sha256(f"{index}/{s}/{k}".encode()).hexdigest())
        for k, image in enumerate(hashes):
            state = json.dumps({"head position": ["looking left" if k % 2 else "looking right"], "hats": ["none"]})
            step_rows.append({"face_id": face, "identity": f"id{s % ids}", "session_id": session,
                              "condition": "baseline", "k": k, "instruction": f"turn the head, step {k}" if k else "",
                              "category": "looking left", "sub_axis": "head position", "outcome": "ok", "reason": "",
                              "image_hash": image, "fss": float(1 - 0.01 * k), "score_outcome": "ok",
                              "sc": 0.5 if k else None, "sc_outcome": "ok" if k else "", "state": state,
                              "state_outcome": "ok",
                              "judged_by": "gemini gemini-2.5-flash; "
                                           + "; ".join(f"{t} {h[:12]}" for t, h in TEMPLATES),
                              "image_values": "", "gender": ("female", "male")[s % 2]})
            for template, digest in TEMPLATES[:1] if k else TEMPLATES[1:]:
                answer = json.dumps({"editing_success": 5, "overediting": 5, "reasoning": f"{REASONING} session {s}"})
                judgments.append((hashlib.sha256(f"{index}/{s}/{k}/{template}".encode()).hexdigest(), "judgefp",
                                  template, digest, json.dumps([hashes[0], image] if k else [image]), "ok", answer,
                                  answer, "", "{}", 0.0))
        session_rows.append({"face_id": face, "identity": f"id{s % ids}", "session_id": session,
                             "condition": "baseline", "excluded": "" if s % 17 else "step_refused",
                             "gender": ("female", "male")[s % 2], "drop_fss": float(rng.uniform(0, 30)),
                             "sc": float(rng.uniform(0, 100))})
    pq.write_table(pa.Table.from_pylist(session_rows), folder / "sessions.parquet")
    pq.write_table(pa.Table.from_pylist(step_rows), folder / "steps.parquet")
    report = {"schema": SCHEMA_ID, "schema_version": "1.3",
              "run": {"key": key, "name": f"editor{index}@pose/synthetic/pixel", "created_at": "2026-12-07T12:00:00Z",
                      "complete": True, "confidence": 0.95},
              "components": {"editor": {"name": f"editor{index}", "description": {"version": "1"}}, "judge": JUDGE,
                             "dataset": {"name": "synthetic", "description": {}}},
              "testset": {"name": "pose"}, "counts": {"faces": {"seen": ids, "excluded": {}},
                                                      "sessions": {"included": sessions}},
              "sample_size": {"identities": ids, "sessions": sessions, "preliminary": False},
              "metrics": {"drop_fss": _metric(12.0, sessions, ids, False, "Drop_FSS"),
                          "sc": _metric(50.0, sessions, ids, True, "SC")}}
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    ledger = Ledger(ws / "ledger.sqlite")
    ledger.close()
    with sqlite3.connect(ws / "ledger.sqlite") as db:
        db.execute("INSERT OR IGNORE INTO components VALUES (?,?,?)",
                   ("judgefp", "judge", json.dumps({"name": JUDGE["name"], **JUDGE["description"]})))
        db.executemany("INSERT INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?)", judgments)
    return folder


# -- fixtures and a live server --------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def judged_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two real runs of :func:`make_workspace`, made once for the whole test session (shared by the xdist
    workers; tests only read them)."""
    return made_once(tmp_path_factory, "serve-workspace", "the web app's test workspace", make_workspace) / "ws"


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free 127.0.0.1 port in a thread; yields its base address."""
    import uvicorn

    from faceedit_bench.serve.server import bind

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
