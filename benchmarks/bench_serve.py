"""``faceedit-bench serve`` on a growing workspace: how long the runs table, a run's session list and a session
page take, and the server's memory, as runs are added while it serves.

The server is the shipped command (``faceedit-bench serve WS``: uvicorn, its defaults) in its own process; the
pages are fetched over HTTP on 127.0.0.1 with the printed token's cookie, each ``--repeat`` times (the median
is reported, the first fetch of a page included). Runs are written straight into the workspace
(tests/serve_workspace.py: report.json, sessions and steps Parquet tables, judge answers in the ledger; no
editor or judge runs): by default five runs of 2,000 sessions (the workspace grows from 2,000 to 10,000
sessions: the memory should stay flat), then one run of 10,000 sessions (20,000 in all: the time goals on a run
of 10,000). The session list and the session page are the newest run's.

Usage: python benchmarks/bench_serve.py [--repeat 7] [--sizes 2000,2000,2000,2000,2000,10000]
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_workspace import synthetic_run  # noqa: E402


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024


def timed(opener: urllib.request.OpenerDirector, url: str, repeat: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        with opener.open(url, timeout=60) as response:
            size = len(response.read())
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="2000,2000,2000,2000,2000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "runs").mkdir(parents=True)
        env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
        server = subprocess.Popen([str(Path(sys.executable).parent / "faceedit-bench"), "serve", str(ws)],
                                  stdout=subprocess.PIPE, text=True, env=env)
        try:
            line = ""
            while "token=" not in line:
                line = server.stdout.readline()
                if not line and server.poll() is not None:
                    raise SystemExit("the server did not start")
            url = re.search(r"(http://\S+)", line).group(1)
            base = url.split("/runs")[0]
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            opener.open(url, timeout=60).read()  # the token for its cookie
            print(f"{'sessions':>9} {'runs':>5} {'newest run':>10} {'runs table ms':>14} {'session list ms':>16} "
                  f"{'session page ms':>16} {'RSS MB':>7}")
            total = 0
            for i, size in enumerate(sizes):
                folder = synthetic_run(ws, i, size)
                total += size
                runs_ms, _ = timed(opener, f"{base}/runs", args.repeat)
                list_ms, _ = timed(opener, f"{base}/runs/{folder.name}", args.repeat)
                page_ms, _ = timed(opener, f"{base}/runs/{folder.name}/session?face=synthetic/0&session=pose-000",
                                   args.repeat)
                print(f"{total:>9,} {i + 1:>5} {size:>10,} {runs_ms:>14.1f} {list_ms:>16.1f} {page_ms:>16.1f} "
                      f"{rss_mb(server.pid):>7.0f}", flush=True)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
