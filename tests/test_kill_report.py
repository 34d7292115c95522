"""A hosted run (the real google-genai SDK against a fake Gemini, MLflow on) killed by SIGKILL every 5 s
finishes: each restart adds recorded work, the report stage's statistics and plots included, and the
report equals an uninterrupted run's."""

from __future__ import annotations

import contextlib
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
FACES, SESSIONS, STEPS = 30, 4, 4
#: A restart is killed this long after it has recorded its first new work.
KILL_EVERY_S = 5.0
MAX_RESTARTS = 60
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


def command(tmp: Path, name: str, *overrides: str) -> tuple[list[str], dict[str, str]]:
    script = tmp / "run.py"
    script.write_text(GUARDED)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return [sys.executable, str(script), str(tmp / f"{name}.json"), *overrides], env


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_hosted_run_killed_every_5_s_finishes_with_the_uninterrupted_report(tmp_path, monkeypatch):
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

        ledger = tmp_path / "ws" / "ledger.sqlite"
        args, _ = command(tmp_path, "killed", *common, f"run.workspace={tmp_path / 'ws'}")
        history: list[dict[str, int]] = [recorded(ledger)]
        finished = False
        for restart in range(MAX_RESTARTS):
            log = tmp_path / f"restart-{restart}.log"
            with log.open("wb") as err:
                proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
            launched, before = time.monotonic(), sum(history[-1].values())
            # Killed 5 s after it has recorded its first new work (start-up is not counted: on a loaded
            # machine it alone can take 5 s), or never, if it ends first. In the report stage, killed as soon
            # as it has kept one more statistic or plot: the hardest case for a resume.
            while proc.poll() is None and sum(recorded(ledger).values()) <= before:
                assert time.monotonic() - launched < 600, f"restart {restart} neither recorded work nor ended"
                time.sleep(0.05)
            if recorded(ledger).get("statistics", 0) <= history[-1].get("statistics", 0):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=KILL_EVERY_S)
            if proc.poll() is None:
                proc.kill()  # SIGKILL: no cleanup at all
            proc.wait()
            history.append(recorded(ledger))
            if proc.returncode == 0:
                finished = True
                break
            assert proc.returncode == -9, log.read_text()[-3000:]
        assert finished, f"not finished after {MAX_RESTARTS} restarts: recorded work after each {history}"

    kills = len(history) - 2
    assert kills >= 2, f"the run was too short to be killed twice: {history}"
    # the report stage was killed and resumed too: restarts killed with every edit in and part of the
    # statistics kept, each keeping more than the one before. (A restart may reach its report with a few
    # edits failed under load; the next retries them, and statistics of that earlier data stay in the ledger
    # under their own keys: count from the first restart with every edit in.)
    total = {key: everything[key] for key in ("edits", "embeddings")}
    complete = [h for h in history[1:] if all(h.get(key) == value for key, value in total.items())]
    base, final = complete[0]["statistics"], history[-1]["statistics"]
    in_report = [h["statistics"] for h in complete[:-1] if base < h["statistics"] < final]
    assert in_report and in_report == sorted(set(in_report)), f"the report stage never resumed: {history}"
    assert {key: history[-1][key] for key in total} == total and final >= everything["statistics"], history

    a = json.loads((tmp_path / "killed.json").read_text())
    b = json.loads((tmp_path / "uninterrupted.json").read_text())
    assert a["counts"]["steps"] == {"ok": FACES * SESSIONS * STEPS}
    assert a["disparity"] and a["disparity"][0]["p_value"] is not None  # a permutation test ran
    for section in REPORT_SECTIONS:
        assert a[section] == b[section], section
    assert a["run"]["key"] == b["run"]["key"]
