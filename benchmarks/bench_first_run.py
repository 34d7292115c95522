"""A whole first run: `python -m faceedit_bench run.max_faces=2` (the shipped defaults: identity editor,
multi_axis test set, sample faces, dlib embedder, MLflow tracking into the workspace) launched in a new,
empty folder, as `make run` does the first time. Three launches, interleaved so each sees the same load:

- fresh: a new folder, MLflow on (the ledger, the image store, the run folder and the MLflow store are made);
- fresh, tracking=none: the same without MLflow;
- rerun: the first launch's command again in its folder (every step stored; the report is made again).

Each is timed whole: wall seconds, and the CPU seconds (user + system) of the process and its children. On a
busy machine wall time also counts the time other processes held the cores; CPU time much less so. Medians
of the launches are printed with the load average.

The MLflow store of a new workspace is a copy of a per-user template (``~/.cache/faceedit_bench/mlflow-stores``,
built by the first new store of an MLflow version): ``--cold-template`` removes that folder before each fresh
launch, to time a user's very first workspace.

Usage: python benchmarks/bench_first_run.py [--launches 5] [--faces 2] [--cold-template]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATES = Path("~/.cache/faceedit_bench/mlflow-stores").expanduser()


def launch(folder: Path, overrides: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one `python -m faceedit_bench run` in ``folder``."""
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    env.pop("MLFLOW_TRACKING_URI", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "faceedit_bench", *overrides], cwd=folder, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def summary(name: str, times: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in times], [c for _, c in times]
    return (f"{name:<28} wall {statistics.median(walls):5.2f} s (range {min(walls):.2f}-{max(walls):.2f})   "
            f"CPU {statistics.median(cpus):5.2f} s (range {min(cpus):.2f}-{max(cpus):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--faces", type=int, default=2)
    parser.add_argument("--cold-template", action="store_true", help="remove the MLflow store templates first")
    args = parser.parse_args()
    run = ["run.max_faces=" + str(args.faces)]
    results: dict[str, list[tuple[float, float]]] = {"fresh": [], "fresh, tracking=none": [], "rerun": []}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-first-run-") as root:
        for i in range(args.launches):
            tracked, untracked = Path(root) / f"mlflow{i}", Path(root) / f"none{i}"
            tracked.mkdir()
            untracked.mkdir()
            if args.cold_template:
                shutil.rmtree(TEMPLATES, ignore_errors=True)
            results["fresh"].append(launch(tracked, run))
            results["fresh, tracking=none"].append(launch(untracked, [*run, "tracking=none"]))
            results["rerun"].append(launch(tracked, run))
    print(f"{args.launches} launches, {args.faces} faces, {os.cpu_count()} cores, load average {load_before:.1f} "
          f"before, {os.getloadavg()[0]:.1f} after{', cold template' if args.cold_template else ''}")
    for name, times in results.items():
        print(summary(name, times))


if __name__ == "__main__":
    main()
