"""How long an answered edit waits before it is in the ledger, with the machine oversubscribed.

A hosted run (the real google-genai SDK against a fake Gemini on 127.0.0.1, MLflow on, a fresh workspace: MLflow's
store is built while the first calls are answered) runs beside a CPU hog on every core. The fake records when it
sent each answer; this process reads the ledger every 10 ms, as a kill would find it. The lag of the i-th answer is
the time from it until the ledger holds i rows: a SIGKILL at any instant loses the answers of the last "lag"
seconds, and no more. Usage: python benchmarks/bench_commit_lag.py [faces] [hogs per core]
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.gemini import gemini_server  # noqa: E402
from tests.test_kill_report import GUARDED  # noqa: E402

KEY = "bench-commit-lag-key"


def hog() -> None:
    while True:
        pass


def committed(ledger: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT count(*) FROM edits").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def main(faces: int = 20, per_core: int = 1) -> None:
    hogs = [multiprocessing.Process(target=hog, daemon=True) for _ in range(per_core * (os.cpu_count() or 1))]
    for p in hogs:
        p.start()
    try:
        with tempfile.TemporaryDirectory() as tmp, gemini_server(api_key=KEY) as server:
            script = Path(tmp) / "run.py"
            script.write_text(GUARDED)
            ledger = Path(tmp) / "ws" / "ledger.sqlite"
            args = [sys.executable, str(script), str(Path(tmp) / "report.json"), "dataset=synthetic",
                    f"+dataset.params.root={tmp}/faces", f"+dataset.params.n={faces}", "embedder=pixel",
                    "tracking=mlflow", "run.progress=false", "testset=hair", "run.max_sessions=2",
                    "editor=nano_banana", f"editor.params.base_url={server.url}",
                    "editor.params.limits.requests_per_minute=60000", "editor.params.limits.tokens_per_minute=null",
                    f"run.workspace={tmp}/ws"]
            env = {**os.environ, "GEMINI_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
            samples: list[tuple[float, int]] = []
            done = threading.Event()

            def watch() -> None:
                while not done.is_set():
                    samples.append((time.monotonic(), committed(ledger)))
                    time.sleep(0.01)

            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            out = subprocess.run(args, env=env, cwd=tmp, capture_output=True, text=True, timeout=1800)
            done.set()
            watcher.join()
            if out.returncode != 0:
                raise SystemExit(out.stderr[-3000:])
            answered = sorted(r.answered_at for r in server.requests if getattr(r, "answered_at", None))
            # When each row was handed to the ledger (its created_at, wall clock), on this process's monotonic clock.
            offset = time.time() - time.monotonic()
            db = sqlite3.connect(ledger)
            recorded = sorted(t - offset for (t,) in db.execute("SELECT created_at FROM edits"))
            db.close()
    finally:
        for p in hogs:
            p.terminate()
    lags = []
    for i, at in enumerate(answered):
        seen = next((t for t, n in samples if t >= at and n >= i + 1), None)
        if seen is not None:
            lags.append(seen - at)
    handed = sorted(r - a for a, r in zip(answered, recorded))
    lags.sort()
    print(f"answer to the ledger's hands (i-th answer, i-th row): median {handed[len(handed) // 2]:.3f} s, "
          f"max {handed[-1]:.3f} s")
    print(f"{len(answered)} edits answered, {len(lags)} seen in the ledger; {len(hogs)} CPU hogs on "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"lag from answer to commit: median {lags[len(lags) // 2]:.3f} s, p99 {lags[int(0.99 * (len(lags) - 1))]:.3f} s, "
          f"max {lags[-1]:.3f} s (the ledger is read every 10 ms)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
