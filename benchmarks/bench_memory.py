"""Peak memory of a run's analysis and tables against the number of sessions and of identities.

What a run holds while results stream past, and its report stage: every session result goes
through the run's Aggregator (the shipped session metrics, groups by gender, skin tone and age
group) and the ArtifactWriter (steps and sessions tables), then the report sections are computed
(summaries, WD with 9,999 session permutations and the identity-clustered permutation per metric
and contrast, group tests, intersections) and the tables are committed (CSV and Parquet). Results
are synthetic (4-step sessions, FSS drifting down with an identity effect); no images are
decoded and no contact sheets drawn (the run draws at most run.max_contact_sheets of them, a
fixed cost). Each configuration runs in a fresh process; peak RSS is that process's
``ru_maxrss``, with the baseline (the same imports, no results) beside it.

Usage: python benchmarks/bench_memory.py [--quick]
  sessions: 1K / 10K / 100K (1,000 identities); identities: 100 / 1K / 10K (100K sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STEPS = 4


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def one(sessions: int, identities: int) -> dict:
    import numpy as np
    import pyarrow.csv  # noqa: F401 - the report stage's libraries, loaded before the baseline
    import pyarrow.parquet  # noqa: F401
    import scipy.stats  # noqa: F401

    from faceedit_bench.analysis.aggregate import Aggregator
    from faceedit_bench.builtin.metrics import faceedit_register_metrics
    from faceedit_bench.records import Face, ImageScore, Outcome, Session, SessionResult, Step, StepState
    from faceedit_bench.report.artifacts import ArtifactWriter
    from faceedit_bench.storage.store import ImageStore

    metrics = []
    faceedit_register_metrics(lambda name, metric, **kw: metrics.append(metric))
    baseline = peak_rss_mb()
    rng = np.random.default_rng(0)
    per_face = 10  # sessions per face: a face per 10 sessions, identities of one or more faces
    n_faces = max(1, sessions // per_face)
    identity_of_face = rng.integers(0, identities, n_faces) if identities < n_faces else np.arange(n_faces)
    id_effect = rng.normal(0, 0.03, identities)
    tests = [Session(f"s{j}", "bench", tuple(Step(k, f"edit {j}/{k}", "hair", "color", "c", "a")
                                             for k in range(1, STEPS + 1))) for j in range(per_face)]
    genders, tones, ages = ("male", "female"), ("light", "dark"), ("young", "old")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        out = Path(tmp)
        aggregator = Aggregator(metrics, 0.95, available={"embedder"})
        writer = ArtifactWriter(out, stack, ImageStore(out / "store"), 0, metrics=[m.name for m in metrics])
        for f in range(n_faces):
            ident = int(identity_of_face[f])
            face = Face(f"bench/{f:07d}", f"id{ident}", out / "none.png", (),
                        {"gender": genders[ident % 2], "skin_tone": tones[(ident // 2) % 2],
                         "age_group": ages[f % 2]})
            for session in tests:
                fss = np.clip(0.9 + id_effect[ident] - np.cumsum(rng.uniform(0, 0.05, STEPS + 1)), 0, 1)
                fss[0] = 0.9 + id_effect[ident]
                hashes = tuple(f"{f:07d}{session.session_id}{k}".ljust(64, "0") for k in range(STEPS + 1))
                steps = [StepState(k, Outcome.OK, "", hashes[k - 1], hashes[k], False) for k in range(1, STEPS + 1)]
                result = SessionResult(face, session, steps, None,
                                       tuple(ImageScore(Outcome.OK, 1, float(v)) for v in fss), hashes)
                writer.write(result, aggregator.add(result))
        streamed = peak_rss_mb()
        sections = aggregator.sections()
        for table in (writer.steps, writer.sessions):
            table.close()
            table.commit()
    tests_run = len(sections["disparity"])
    return {"sessions": n_faces * per_face, "identities": int(np.unique(identity_of_face).size),
            "baseline_mb": round(baseline, 1), "after_streaming_mb": round(streamed, 1),
            "peak_mb": round(peak_rss_mb(), 1), "wall_s": round(time.perf_counter() - started, 1),
            "disparity_tests": tests_run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a check that it runs)")
    parser.add_argument("--one", nargs=2, type=int, metavar=("SESSIONS", "IDENTITIES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    by_sessions = [(1_000, 100), (10_000, 1_000), (100_000, 1_000)] if not args.quick else [(1_000, 100), (5_000, 100)]
    by_identities = [(100_000, 100), (100_000, 1_000), (100_000, 10_000)] if not args.quick else [(5_000, 50),
                                                                                                   (5_000, 500)]
    rows = []
    for sessions, identities in dict.fromkeys(by_sessions + by_identities):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, __file__, "--one", str(sessions), str(identities)], env=env,
                              capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    print("\n| sessions | identities | baseline MB | peak RSS MB | peak - baseline MB | wall s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['sessions']:,} | {r['identities']:,} | {r['baseline_mb']:.0f} | {r['peak_mb']:.0f} | "
              f"{r['peak_mb'] - r['baseline_mb']:.0f} | {r['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
