"""Start-up: seconds from launching `python -m faceedit_bench` to its first provider call, on a
fresh workspace (nothing in it yet: the ledger and the MLflow store are created) and on a warm one
(a run of the same experiment already stored one face, so the ledger, the store and the OS's file
cache are warm; the new run has one new face to edit).

The real CLI with the shipped defaults (the dlib embedder, MLflow tracking into the workspace)
and `nano_banana` against a fake Gemini server on 127.0.0.1. Each launch is timed from the
parent's clock to the fake's receipt of the first request (wall), and by the CPU seconds the
process had used when it opened the connection of that request (CPU: all its threads; on a busy
machine wall time also counts the time other processes held the cores, CPU time does not). The
median of the launches is reported, with the load average, against the goals (issue 24).

The default dataset's faces are 256x256 crops. ``--photo-size 1024`` runs the same launches on those faces
resampled to 1024x1024 (a ``folder`` dataset), the size of CelebA-HQ photos: the new face's admission
then takes longer (dlib's detector scans sixteen times the pixels).

Last, the warm workspace's last experiment is launched again: every step is stored, no call is made, and
the whole launch is timed (tables, report and MLflow included).

Usage: python benchmarks/bench_startup.py [--launches 5] [--tracking mlflow|none] [--photo-size N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEY = "bench-startup-key"
GOALS = {"fresh": 2.5, "warm": 1.0}  # seconds to the first call with MLflow tracking on

#: ``python -m faceedit_bench`` that writes its CPU seconds to argv[1] when it first connects to $FIRST_CALL_PORT.
CPU_PROBE = textwrap.dedent("""
    import os, runpy, socket, sys, time
    out, port = sys.argv[1], int(os.environ["FIRST_CALL_PORT"])
    connect = socket.socket.connect
    def first_call(self, address, *args):
        if isinstance(address, tuple) and address[1] == port and not os.path.exists(out):
            with open(out, "w") as f:
                f.write(str(time.process_time()))
        return connect(self, address, *args)
    socket.socket.connect = first_call
    sys.argv = ["faceedit_bench", *sys.argv[2:]]
    runpy.run_module("faceedit_bench", run_name="__main__", alter_sys=True)
""")


def large_photos(folder: Path, size: int) -> list[str]:
    """The default dataset's faces resampled to size x size, as a ``folder`` dataset: its overrides."""
    import csv

    from PIL import Image

    from faceedit_bench.builtin.datasets.sample import SampleDataset

    rows = []
    for face in SampleDataset().faces():
        for role, path in (("base", face.image), *(("reference", ref) for ref in face.references)):
            name = Path(path).with_suffix(".png").name
            Image.open(path).convert("RGB").resize((size, size), Image.LANCZOS).save(folder / name)
            rows.append([name, face.face_id.split("/")[-1], role, "", "", ""])
    with open(folder / "manifest.csv", "w", newline="") as stream:
        csv.writer(stream).writerows([["file", "identity", "role", "gender", "skin_tone", "age"], *rows])
    return ["dataset=folder", f"dataset.params.root={folder}"]


def launch(server, workspace: Path, faces: int, tracking: str, dataset: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds from launch to the fake's first request (the run then goes on to its end); for a
    launch that makes no request (every step stored), (wall, CPU) of the whole launch."""
    env = {**os.environ, "GEMINI_API_KEY": KEY, "FACEEDIT_BENCH_HOME": str(workspace),
           "FIRST_CALL_PORT": server.url.rsplit(":", 1)[1]}
    # Bytecode is kept, as an installed package has it (the first launch writes it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "faceedit-bench-startup-pycache"))
    cpu_file = workspace / f"cpu-{faces}.txt"
    args = [sys.executable, "-c", CPU_PROBE, str(cpu_file), "editor=nano_banana", f"editor.params.base_url={server.url}",
            "testset=pose", f"run.max_faces={faces}", "run.max_sessions=1", f"tracking={tracking}",
            "run.progress=false", *dataset]
    before = server.calls
    cpu_before = os.times()
    started = time.monotonic()
    proc = subprocess.run(args, cwd=workspace, env=env, capture_output=True, text=True, timeout=900)
    ended, cpu_after = time.monotonic(), os.times()
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    if server.calls == before:
        return ended - started, (cpu_after.children_user + cpu_after.children_system
                                 - cpu_before.children_user - cpu_before.children_system)
    first = min(r.received_at for r in server.requests[before:])
    return first - started, float(cpu_file.read_text())


def summary(name: str, timings: list[tuple[float, float]], goal: float | None,
            until: str = "to the first call") -> str:
    wall, cpu = statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)
    verdict = "" if goal is None else f" (goal {goal} s: {'met' if wall <= goal else 'NOT met'})"
    return (f"{name}, median of {len(timings)}: {wall:.2f} s wall{verdict}, {cpu:.2f} s CPU {until} "
            f"(wall min {min(t[0] for t in timings):.2f}, max {max(t[0] for t in timings):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=5, help="launches per kind (fresh, warm)")
    parser.add_argument("--tracking", default="mlflow")
    parser.add_argument("--photo-size", type=int, help="the default faces resampled to this size (pixels)")
    args = parser.parse_args()
    from tests.fakes.gemini import gemini_server

    load_before = os.getloadavg()[0]
    fresh, warm = [], []
    with gemini_server(api_key=KEY, latency_s=0.05) as server, tempfile.TemporaryDirectory() as photos:
        dataset = large_photos(Path(photos), args.photo_size) if args.photo_size else []
        for _ in range(args.launches):
            with tempfile.TemporaryDirectory() as tmp:
                fresh.append(launch(server, Path(tmp), 1, args.tracking, dataset))
        with tempfile.TemporaryDirectory() as tmp:
            launch(server, Path(tmp), 1, args.tracking, dataset)  # stores the first face; the store and ledger exist
            warm = [launch(server, Path(tmp), 1 + i, args.tracking, dataset) for i in range(1, args.launches + 1)]
            # The last experiment again: every step is stored, so no call is made.
            rerun = [launch(server, Path(tmp), 1 + args.launches, args.tracking, dataset) for _ in range(args.launches)]
    goals = GOALS if args.tracking == "mlflow" else {}
    photos = f"faces resampled to {args.photo_size} px" if args.photo_size else "the default dataset's faces"
    print(f"tracking={args.tracking}, {photos}, {os.cpu_count()} cores, load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")
    print(summary("fresh workspace", fresh, goals.get("fresh")))
    print(summary("warm workspace", warm, goals.get("warm")))
    print(summary("rerun of a finished run (no call)", rerun, None, until="in all"))


if __name__ == "__main__":
    main()
