"""A hosted run (the real google-genai SDK against a fake Gemini, MLflow on) killed by SIGKILL again and
again, in its edit stage and in its report stage, finishes: each restart adds recorded work, the report
stage's statistics and plots included, and the report equals an uninterrupted run's."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fakes.gemini import gemini_server
from tests.test_kill_resume import ROOT, SCRIPT

# The run's script, guarded: the embedding workers (spawned processes, the shipped default) import it too.
GUARDED = "if __name__ == '__main__':\n" + textwrap.indent(SCRIPT, "    ")

KEY = "test-kill-report-key"
FACES, SESSIONS, STEPS = 30, 2, 4
#: A restart in the edit stage is killed once it has done this share of its work.
KILLS_PER_STAGE = 4
MAX_RESTARTS = 40
REPORT_SECTIONS = ("metrics", "trajectory", "groups", "counts", "disparity", "group_tests", "measures")


def recorded(ledger: Path) -> dict[str, int]:
    """Rows committed to the ledger, per table (read as another process would)."""
    if not ledger.exists():
        return {}
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        return {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("edits", "embeddings", "statistics")}
    except sqlite3.OperationalError:  # killed before the schema was created
        return {}
    finally:
        db.close()


def outcomes(ledger: Path) -> dict[str, int]:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT outcome, count(*) FROM edits GROUP BY outcome").fetchall())
    finally:
        db.close()


def command(tmp: Path, name: str, *overrides: str) -> tuple[list[str], dict[str, str]]:
    script = tmp / "run.py"
    script.write_text(GUARDED)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return [sys.executable, str(script), str(tmp / f"{name}.json"), *overrides], env


@pytest.mark.stress
@pytest.mark.slow(seconds=55)
@pytest.mark.timeout(1500)
def test_a_hosted_run_killed_again_and_again_finishes_with_the_uninterrupted_report(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY) as server:  # one endpoint for every restart: the same run key
        common = ["dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", f"+dataset.params.n={FACES}",
                  "embedder=pixel", "tracking=mlflow", "run.progress=false", "testset=hair",
                  f"run.max_sessions={SESSIONS}", "editor=nano_banana", f"editor.params.base_url={server.url}",
                  "editor.params.limits.requests_per_minute=60000", "editor.params.limits.tokens_per_minute=null"]
        args, env = command(tmp_path, "uninterrupted", *common, f"run.workspace={tmp_path / 'ws2'}")
        # Bytecode is kept, as an installed package has it: each restart starts as a user's would.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.setdefault("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
        uninterrupted = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
        assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
        everything = recorded(tmp_path / "ws2" / "ledger.sqlite")
        assert everything["statistics"] > 0

        total = {key: everything[key] for key in ("edits", "embeddings")}
        assert outcomes(tmp_path / "ws2" / "ledger.sqlite") == {"ok": FACES * SESSIONS * STEPS}, \
            uninterrupted.stderr[-3000:]

        ledger = tmp_path / "ws" / "ledger.sqlite"
        args, _ = command(tmp_path, "killed", *common, f"run.workspace={tmp_path / 'ws'}")
        # Each restart is killed once it has recorded a share of the work, never after a time: in the edit stage
        # once it has added a slice of its rows, in the report stage once it has kept 2 more statistics or plots
        # (it commits them in small batches). A busy machine is killed as often, and at the same points, as a
        # quiet one (a kill after so many seconds made the restarts of a loaded machine too many to finish).
        edit_slice = max(1, sum(total.values()) // (KILLS_PER_STAGE + 1))

        def due(start: dict[str, int], now: dict[str, int]) -> bool:
            if now.get("statistics", 0) > start.get("statistics", 0):
                return now["statistics"] - start.get("statistics", 0) >= 2
            return sum(now.get(key, 0) - start.get(key, 0) for key in total) >= edit_slice

        history: list[dict[str, int]] = [recorded(ledger)]
        finished = False
        for restart in range(MAX_RESTARTS):
            log = tmp_path / f"restart-{restart}.log"
            with log.open("wb") as err:
                proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
            launched = time.monotonic()
            while proc.poll() is None:
                if due(history[-1], recorded(ledger)):
                    break
                assert time.monotonic() - launched < 900, f"restart {restart} neither recorded work nor ended"
                time.sleep(0.02)
            if proc.poll() is None:
                proc.kill()  # SIGKILL: no cleanup at all
            proc.wait()
            history.append(recorded(ledger))
            if proc.returncode == 0:
                finished = True
                break
            assert proc.returncode == -9, log.read_text()[-3000:]
        assert finished, f"not finished after {MAX_RESTARTS} restarts: recorded work after each {history}"

    # Both stages were killed and resumed, each restart adding work: restarts killed before every edit was in,
    # and restarts killed with every edit in and part of the statistics kept.
    killed = history[1:-1]
    in_edits = [h for h in killed if {key: h.get(key, 0) for key in total} != total]
    in_report = [h["statistics"] for h in killed if h not in in_edits and h.get("statistics", 0) > 0]
    assert len(in_edits) >= 2 and len(in_report) >= 2, f"a stage was not killed twice: {everything} {history}"
    assert in_report == sorted(set(in_report)), history
    assert all(sum(b.values()) > sum(a.values()) for a, b in zip(history, killed)), history  # none lost
    final = history[-1]
    assert {key: final[key] for key in total} == total and final["statistics"] >= everything["statistics"], history

    a = json.loads((tmp_path / "killed.json").read_text())
    b = json.loads((tmp_path / "uninterrupted.json").read_text())
    assert a["counts"]["steps"] == {"ok": FACES * SESSIONS * STEPS}
    assert a["disparity"] and a["disparity"][0]["p_value"] is not None  # a permutation test ran
    for section in REPORT_SECTIONS:
        assert a[section] == b[section], section
    assert a["run"]["key"] == b["run"]["key"]
