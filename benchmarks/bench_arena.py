"""Arena ratings at scale: Bradley-Terry fit plus identity bootstrap for 20 editors x 50,000 battles.

Shipped defaults: 1,000 identities, 1,000 bootstrap resamples, 95% intervals. Target: under 10 s on 2 cores.
Usage: python benchmarks/bench_arena.py [editors] [battles] [resamples]
"""

from __future__ import annotations

import json
import sys
import time

from faceedit_bench_arena import simulate
from faceedit_bench_arena.ratings import rate


def main(editors: int = 20, battles: int = 50_000, resamples: int = 1000) -> dict:
    identities = 1000
    arena = simulate.arena(simulate.strengths(editors, 4.0), identities, battles // identities, seed=0)
    start = time.perf_counter()
    ratings = rate(arena, anchor="e0", n_resamples=resamples)
    seconds = time.perf_counter() - start
    width = float((ratings.ci_high - ratings.ci_low)[1:].mean())
    return {"editors": editors, "battles": len(arena), "identities": identities, "resamples": resamples,
            "seconds": round(seconds, 2), "mean_ci_width_elo": round(width, 1), "target_s": 10.0}


if __name__ == "__main__":
    print(json.dumps(main(*map(int, sys.argv[1:])), indent=1))
