"""Disparity statistics at the paper's scale: faceedit_bench.analysis.disparity against scipy.

Synthetic data shaped like paper (a): 6 models x 2 datasets x 4 test sets = 48 cells of 122
faces x 35 sessions (4,270 sessions per cell, 204,960 in all), faces grouped into identities of
1-3 faces. Per session: Drop_FSS (continuous, %), SC (x100, multiples of 2.5) and OER (x100,
multiples of 25). Per cell: 3 metrics x 3 contrasts (gender, skin tone, age group) = 9 tests,
432 in all, each comparing two groups of all 4,270 sessions of its cell.

Measured: wall and CPU time of compare_groups on all tests with 9,999 resamples, without and with the
identity-clustered analysis; peak traced memory (tracemalloc) of a clustered run over one cell;
the process's peak RSS; and scipy.stats.permutation_test (vectorized=False, the call of
METHODOLOGY §7) timed on one test per metric with fewer resamples and extrapolated to 432 tests
x 9,999 resamples.

Usage: python benchmarks/bench_statistics.py [--quick] [--workers N]
"""

from __future__ import annotations

import argparse
import inspect
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from faceedit_bench.analysis.disparity import GroupTest, compare_groups  # noqa: E402

MODELS, DATASETS, TESTSETS = 6, 2, 4
FACES_PER_CELL, SESSIONS_PER_FACE = 122, 35
CONTRASTS = {"gender": ("female", "male", 0.5), "skin_tone": ("dark", "light", 0.3), "age_group": ("old", "young", 0.25)}


def make_tests(n_cells: int, rng: np.random.Generator, clustered: bool) -> list[GroupTest]:
    tests = []
    for cell in range(n_cells):
        faces = FACES_PER_CELL
        identity = np.repeat(np.arange(faces), rng.integers(1, 4, faces))[:faces]  # 1-3 faces per identity
        ids = np.unique(identity)
        traits = {c: rng.random(ids.size) < share for c, (_, _, share) in CONTRASTS.items()}
        traits["age_group"] = rng.random(faces) < CONTRASTS["age_group"][2]  # age is per photo, not per person
        session_face = np.repeat(np.arange(faces), SESSIONS_PER_FACE)
        session_id = identity[session_face]
        n = session_face.size
        id_effect = rng.normal(0, 4, ids.size)[session_id]
        metrics = {
            "drop_fss": (30 + id_effect + 1.5 * traits["gender"][session_id] + rng.normal(0, 10, n), False),
            "sc": (rng.integers(0, 11, (n, 4)).mean(axis=1) * 10, True),
            "oer": (np.minimum(rng.poisson(1.0 + 0.2 * traits["gender"][session_id], n), 8) * 25.0, False),
        }
        for contrast, (group_a, group_b, _) in CONTRASTS.items():
            in_a = traits[contrast][session_face] if contrast == "age_group" else traits[contrast][session_id]
            clusters = np.array([f"id{i}" for i in session_id])
            for metric, (values, higher_is_better) in metrics.items():
                tests.append(GroupTest(
                    metric=metric, contrast=contrast, group_a=group_a, group_b=group_b,
                    values_a=values[in_a], values_b=values[~in_a],
                    clusters_a=clusters[in_a] if clustered else None, clusters_b=clusters[~in_a] if clustered else None,
                    higher_is_better=higher_is_better, name=f"cell{cell}/{metric}/{contrast}"))
    return tests


def time_scipy(tests: list[GroupTest], n_resamples: int) -> float:
    """Seconds per resample of scipy.stats.permutation_test, averaged over the given tests."""
    per_resample = []
    seed_arg = "rng" if "rng" in inspect.signature(stats.permutation_test).parameters else "random_state"
    for t in tests:
        start = time.perf_counter()
        stats.permutation_test((t.values_a, t.values_b), stats.wasserstein_distance, permutation_type="independent",
                               vectorized=False, n_resamples=n_resamples, alternative="greater",
                               **{seed_arg: np.random.default_rng(0)})
        per_resample.append((time.perf_counter() - start) / n_resamples)
    return float(np.mean(per_resample))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 cells (54 tests) and a shorter scipy timing")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    n_cells = 6 if args.quick else MODELS * DATASETS * TESTSETS
    resamples = 9999

    plain = make_tests(n_cells, np.random.default_rng(0), clustered=False)
    clustered = make_tests(n_cells, np.random.default_rng(0), clustered=True)
    sessions = n_cells * FACES_PER_CELL * SESSIONS_PER_FACE
    sizes = [t.values_a.size + t.values_b.size for t in plain]

    rows = []
    start, cpu = time.perf_counter(), time.process_time()
    results = compare_groups(plain, n_resamples=resamples, seed=0, workers=args.workers)
    t_plain = time.perf_counter() - start
    rows.append(("compare_groups, sessions permuted", t_plain, time.process_time() - cpu))
    start, cpu = time.perf_counter(), time.process_time()
    results_c = compare_groups(clustered, n_resamples=resamples, seed=0, workers=args.workers)
    rows.append(("compare_groups, + identity-clustered", time.perf_counter() - start, time.process_time() - cpu))
    assert [r["p_value"] for r in results] == [r["p_value"] for r in results_c]  # clustering never moves p

    tracemalloc.start()
    compare_groups(clustered[:9], n_resamples=resamples, seed=0, workers=args.workers)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    one_per_metric = [next(t for t in plain if t.metric == m) for m in ("drop_fss", "sc", "oer")]
    scipy_resamples = 199 if args.quick else 999
    per_resample = time_scipy(one_per_metric, scipy_resamples)
    t_scipy = per_resample * resamples * len(plain)

    print(f"{len(plain)} tests, {sessions:,} sessions, {min(sizes)}-{max(sizes)} sessions per test, "
          f"{resamples:,} resamples, {args.workers} worker thread(s), {os.cpu_count()} CPU(s)")
    print(f"{'what':45s} {'wall s':>8s} {'CPU s':>8s}")
    for what, wall, cpu in rows:
        print(f"{what:45s} {wall:8.1f} {cpu:8.1f}")
    print(f"{'scipy.stats.permutation_test (extrapolated)':45s} {t_scipy:8.0f} {t_scipy:8.0f}"
          f"   ({scipy_resamples} resamples x {len(one_per_metric)} tests, 1 core)")
    print(f"speed-up over scipy: {t_scipy / t_plain:,.0f}x wall, {t_scipy / rows[0][2]:,.0f}x CPU (sessions permuted)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (other processes slow the wall times)")
    print(f"peak traced memory, clustered run of one cell ({args.workers} threads): {peak / 2**20:.1f} MiB")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    flagged = sum(bool(r["bias"]) for r in results)
    print(f"bias flags: {flagged} of {len(results)}; clustered p >= naive p in "
          f"{sum(r['clustered']['p_value'] >= r['p_value'] for r in results_c)} of {len(results_c)} tests")


if __name__ == "__main__":
    main()
