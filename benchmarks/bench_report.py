"""The report stage: seconds from the end of the engine (every session scored) to the end of the run
(statistics, report.json, report.html with its plots, the tracker's final logging), for a run of 300
sessions, each in a fresh process as a user's run is:

- ``first``: a new run (every statistic and plot computed, and kept in the ledger);
- ``unchanged``: the same run again (a re-report: everything is read back);
- ``uncached``: the same run again with the statistics cache switched off (the report stage as it was
  before the cache: everything recomputed on every run and every restart).

30 generated faces x 10 multi_axis sessions x 4 steps, the real google-genai SDK against a fake Gemini
on 127.0.0.1 as editor and as judge (Drop_FSS, SC, OER: 9 permutation tests with their clustered
analyses, bootstrap intervals, intersections), MLflow tracking (the shipped default), the pixel embedder.

Usage: python benchmarks/bench_report.py [--faces 30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
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
sys.path.insert(0, str(ROOT / "benchmarks"))

KEY = "bench-report-key"


def one_run(workspace: str, port: int, faces: int, cached: bool) -> dict:
    """One run in this process; returns its report stage's seconds."""
    from bench_engine import bench_plugins
    from hydra import compose, initialize_config_dir

    from faceedit_bench.run import experiment
    from faceedit_bench.run.hydra_app import conf_dir
    from tests.fakes.gemini import gemini_server

    engine_done: list[float] = []
    run = experiment.Engine.run

    def timed(self, *args, **kwargs):
        try:
            return run(self, *args, **kwargs)
        finally:
            engine_done.append(time.perf_counter())

    experiment.Engine.run = timed
    if not cached:
        experiment.caching_statistics = lambda _cache: contextlib.nullcontext()
    os.environ["GEMINI_API_KEY"] = KEY
    Path(workspace, "faces").mkdir(exist_ok=True)
    plugins = bench_plugins()
    fast = ["limits.requests_per_minute=60000", "limits.tokens_per_minute=null"]
    with gemini_server(api_key=KEY, port=port) as server:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=[
                "dataset=bench_faces", f"+dataset.params.root={workspace}/faces", f"+dataset.params.n={faces}",
                "embedder=pixel", "testset=multi_axis", "tracking=mlflow", "run.progress=false",
                f"run.workspace={workspace}/ws", "editor=nano_banana", f"editor.params.base_url={server.url}",
                "judge=gemini", f"judge.params.base_url={server.url}",
                *(f"editor.params.{s}" for s in fast), *(f"judge.params.{s}" for s in fast)])
        exp = experiment.build_experiment(cfg, plugins)
        with contextlib.redirect_stdout(io.StringIO()):
            report = experiment.run_experiment(exp, plugins)
    return {"report_stage_s": time.perf_counter() - engine_done[-1],
            "sessions": report["counts"]["sessions"]["included"], "tests": len(report["disparity"])}


def launch(workspace: str, port: int, faces: int, cached: bool) -> dict:
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode kept, as an installed package has it
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(workspace) / "pycache"))
    out = subprocess.run([sys.executable, __file__, "--one", workspace, str(port), str(faces),
                          "cached" if cached else "uncached"], env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def each(times: list[float]) -> str:
    """The median, and every launch: the first re-report after a run is the one a user waits for, and a median
    of several hides it."""
    return f"{statistics.median(times):.2f} (each: {', '.join(f'{t:.2f}' for t in times)})"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faces", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        workspace, port, faces, mode = args.one
        print(json.dumps(one_run(workspace, int(port), int(faces), mode == "cached")))
        return
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()  # one endpoint for every run: the same run key
        first = launch(tmp, port, args.faces, True)
        unchanged = [launch(tmp, port, args.faces, True)["report_stage_s"] for _ in range(args.repeat)]
        uncached = [launch(tmp, port, args.faces, False)["report_stage_s"] for _ in range(args.repeat)]
    print(f"{first['sessions']} sessions, {first['tests']} permutation tests, MLflow on; report stage "
          f"(engine end to run end), median of {args.repeat} fresh processes:")
    print("| run | report stage (s) |")
    print("|---|---:|")
    print(f"| first (computed and kept) | {first['report_stage_s']:.2f} |")
    print(f"| unchanged re-report (read back) | {each(unchanged)} |")
    print(f"| unchanged, cache off (as before) | {each(uncached)} |")


if __name__ == "__main__":
    main()
