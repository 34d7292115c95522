"""Start-up: seconds from launching `python -m faceedit_bench` to its first provider call, on a
warm workspace (a run of the same experiment already stored one face, so the ledger, the store
and the OS's file cache are warm; the new run has one new face to edit).

The real CLI with the shipped defaults (the dlib embedder, MLflow tracking into the workspace)
and `nano_banana` against a fake Gemini server on 127.0.0.1. Each launch is timed from the
parent's clock to the fake's receipt of the first request, and the median of the launches is
reported.

Usage: python benchmarks/bench_startup.py [--launches 5] [--tracking mlflow|none]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEY = "bench-startup-key"


def launch(server, workspace: Path, faces: int, tracking: str) -> float:
    """Seconds from launch to the fake's first request (the run then goes on to its end)."""
    env = {**os.environ, "GEMINI_API_KEY": KEY, "FACEEDIT_BENCH_HOME": str(workspace)}
    # Bytecode is kept, as an installed package has it (the first launch writes it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(workspace / "pycache"))
    args = [sys.executable, "-m", "faceedit_bench", "editor=nano_banana", f"editor.params.base_url={server.url}",
            "testset=pose", f"run.max_faces={faces}", "run.max_sessions=1", f"tracking={tracking}",
            "run.progress=false"]
    before = server.calls
    started = time.monotonic()
    proc = subprocess.run(args, cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    first = min(r.received_at for r in server.requests[before:])
    return first - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--tracking", default="mlflow")
    args = parser.parse_args()
    from tests.fakes.gemini import gemini_server

    with tempfile.TemporaryDirectory() as tmp, gemini_server(api_key=KEY, latency_s=0.05) as server:
        workspace = Path(tmp)
        cold = launch(server, workspace, 1, args.tracking)
        warm = [launch(server, workspace, 1 + i, args.tracking) for i in range(1, args.launches + 1)]
    print(f"tracking={args.tracking}: first launch (cold workspace) {cold:.2f} s to the first call; warm "
          f"workspace, median of {len(warm)}: {statistics.median(warm):.2f} s (min {min(warm):.2f}, "
          f"max {max(warm):.2f})")


if __name__ == "__main__":
    main()
