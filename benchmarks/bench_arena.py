"""Arena benchmarks.

1. Ratings at scale: Bradley-Terry fit plus identity bootstrap for 20 editors x 50,000 battles (1,000
   identities, the shipped 1,000 resamples, 95% intervals). Target: under 10 s on 2 cores.
2. Judging throughput (``--judge``): an arena over 4 editors' stored runs (the tests' fixture layout) against
   the fake OpenAI server (tests/fakes) through the real SDK, answering after 300 ms and allowing 600
   requests/min (429 above); the judge is given that limit as its account's, everything else shipped
   defaults. Reports judge calls/min over the span of calls as a share of the limit (target >= 0.9).

Usage: python benchmarks/bench_arena.py [editors] [battles] [resamples] | python benchmarks/bench_arena.py --judge
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


def judge_throughput(rpm: int = 600, latency_s: float = 0.3, budget: int = 760) -> dict:
    import os
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(root), str(root / "plugins" / "arena" / "tests")]
    from faceedit_bench_arena.arena import ArenaSettings, run_arena
    from stored_runs_fixture import write_runs
    from test_arena_runs import KEY, KEY_ENV, brighter_wins

    from faceedit_bench.api import registered
    from faceedit_bench.api.judging import JudgeSession
    from tests.fakes.openai import openai_server

    os.environ[KEY_ENV] = KEY
    with tempfile.TemporaryDirectory() as tmp, openai_server(api_key=KEY, judge_answer=brighter_wins,
                                                            latency_s=latency_s, rpm_limit=rpm) as server:
        def judge():
            return registered("judges", "openai")(base_url=f"{server.url}/v1", api_key_env=KEY_ENV,
                                                  limits={"requests_per_minute": rpm, "tokens_per_minute": None})
        with JudgeSession.open(judge(), "openai", Path(tmp) / "ws") as wj:
            paths = write_runs(Path(tmp) / "ws", wj.put_image)
        start = time.perf_counter()
        part, _ = run_arena(paths, judge(), "openai", ArenaSettings(budget_calls=budget, target_width=1.0,
                                                                   stop_on_separation=False))
        seconds = time.perf_counter() - start
        calls = part["sampling"]["calls_made"]
        times = [r.received_at for r in server.requests]
        call_span = max(times) + latency_s - min(times)
        per_min = calls / call_span * 60
        return {"judge_calls": calls, "http_requests": server.calls, "seconds": round(seconds, 1),
                "call_span_s": round(call_span, 1),
                "calls_per_min": round(per_min, 1), "limit_per_min": rpm, "share_of_limit": round(per_min / rpm, 3),
                "battles_per_min": round(per_min / 2, 1), "stop": part["sampling"]["stop"]}


if __name__ == "__main__":
    if sys.argv[1:] == ["--judge"]:
        print(json.dumps(judge_throughput(), indent=1))
    else:
        print(json.dumps(main(*map(int, sys.argv[1:])), indent=1))
