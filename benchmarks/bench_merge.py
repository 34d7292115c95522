"""A simulated paper-scale sharded run: synthetic shard ledgers merged into the workspace ledger.

Paper (a) planned about 205K sessions x 4 steps. Here the sessions are split 64 ways (by
``keys.shard_of`` on the face id, as ``run.shard=i/64`` splits them) and each shard's ledger is
filled as a judged run fills it: per step an edit row, the edited image's embedding (128 float32,
dlib's size) and an SC judge answer; per session a state-tracker answer; per face the base image's
embedding; the components. Then ``merge_ledger`` (what ``faceedit-bench merge`` runs per shard)
unions the 64 ledgers into an empty workspace ledger, in a fresh process whose peak RSS is
reported, and once more (a second merge, which must change nothing).

Usage: python benchmarks/bench_merge.py [--quick] [--shards 64]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STEPS, SESSIONS_PER_FACE = 4, 35  # paper (a): 35 sessions per face (bench_statistics.py)


def make_shards(root: Path, sessions: int, n_shards: int) -> float:
    """Fill n_shards shard ledgers for ``sessions`` sessions; returns the bytes written."""
    import numpy as np

    from faceedit_bench.keys import fingerprint, shard_of
    from faceedit_bench.storage.ledger import Ledger

    rng = np.random.default_rng(0)
    n_faces = max(1, sessions // SESSIONS_PER_FACE)
    by_shard: dict[int, list[int]] = {}
    for f in range(n_faces):
        by_shard.setdefault(shard_of(f"celeba/{f:06d}.jpg", n_shards), []).append(f)
    now = time.time()
    size = 0
    for i in range(n_shards):
        path = root / f"shard-{i}-of-{n_shards}" / "ledger.sqlite"
        Ledger(path).close()  # the real schema
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN")
        db.executemany("INSERT INTO components VALUES (?,?,?)",
                       [("e" * 64, "editor", "{}"), ("m" * 64, "embedder", "{}"), ("j" * 64, "judge", "{}")])
        for f in by_shard.get(i, []):
            base = fingerprint(["base", f])
            vector = rng.normal(size=128).astype(np.float32).tobytes()
            db.execute("INSERT INTO embeddings VALUES (?,?,?,?,?,?,?)", ("m" * 64, base, "ok", "", 1, vector, now))
            edits, embeddings, judgments = [], [], []
            for s in range(SESSIONS_PER_FACE):
                previous = base
                for k in range(1, STEPS + 1):
                    key = fingerprint(["edit", f, s, k])
                    out = fingerprint(["out", f, s, k])
                    edits.append((key, "e" * 64, f"celeba/{f:06d}.jpg", f"s{s}", k, f"instruction {s}/{k}", previous,
                                  out, "ok", "", '{"cost_usd": 0.039}', 4.2, now))
                    embeddings.append(("m" * 64, out, "ok", "", 1, rng.normal(size=128).astype(np.float32).tobytes(),
                                       now))
                    judgments.append((fingerprint(["sc", f, s, k]), "j" * 64, "sc", "t" * 64,
                                      json.dumps([previous, out]), "ok", '{"sc": 7.5}', '{"score": 7.5}', "",
                                      '{"input_tokens": 1800}', now))
                    previous = out
                judgments.append((fingerprint(["state", f, s]), "j" * 64, "state", "t" * 64, "[]", "ok",
                                  '{"hair": "blond"}', "{}", "", "{}", now))
            db.executemany("INSERT INTO edits VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", edits)
            db.executemany("INSERT INTO embeddings VALUES (?,?,?,?,?,?,?)", embeddings)
            db.executemany("INSERT INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?)", judgments)
        db.execute("COMMIT")
        db.close()
        size += path.stat().st_size
    return size


def merge_all(root: Path, n_shards: int) -> dict:
    from faceedit_bench.storage.shard_ledgers import merge_ledger

    main = root / "ledger.sqlite"
    out: dict = {}
    for attempt in ("first", "second"):
        started = time.perf_counter()
        rows = 0
        for i in range(n_shards):
            rows += sum(merge_ledger(main, root / f"shard-{i}-of-{n_shards}" / "ledger.sqlite").values())
        out[attempt] = {"s": round(time.perf_counter() - started, 2), "rows": rows}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 1)  # both merges (wall time includes waiting for the disk)
    out["peak_mb"] = round(usage.ru_maxrss / 1024, 1)
    out["ledger_mb"] = round(main.stat().st_size / 2**20, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2K and 20K sessions only")
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--merge", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.merge:
        print(json.dumps(merge_all(Path(args.merge[0]), int(args.merge[1]))))
        return
    sizes = [2_000, 20_000] if args.quick else [2_000, 20_000, 205_000]
    rows = []
    for sessions in sizes:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
            started = time.perf_counter()
            written = make_shards(Path(tmp), sessions, args.shards)
            made_s = time.perf_counter() - started
            done = subprocess.run([sys.executable, __file__, "--merge", tmp, str(args.shards)], check=True,
                                  capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            result = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append({"sessions": sessions, "shard_ledgers_mb": round(written / 2**20, 1), "made_s": round(made_s, 1),
                     **result})
        print(json.dumps(rows[-1]), flush=True)
    print(f"\n| sessions | {args.shards} shard ledgers MB | rows merged | merge s | second merge s "
          "(rows changed) | CPU s (both) | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['sessions']:,} | {r['shard_ledgers_mb']:.0f} | {r['first']['rows']:,} | {r['first']['s']:.1f} | "
              f"{r['second']['s']:.1f} ({r['second']['rows']}) | {r['cpu_s']:.0f} | {r['peak_mb']:.0f} |")


if __name__ == "__main__":
    main()
