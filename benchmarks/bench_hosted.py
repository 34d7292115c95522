"""Hosted-editor throughput against a rate-limited, faulty provider, and the cost of a rerun.

A fake Gemini server (tests/fakes) answers every generateContent call after 300 ms,
enforces 600 requests/min (a sliding minute; above it: 429 with Retry-After), and injects
429s on 5% and 500s on 2% of requests. The real google-genai SDK calls it through the
`nano_banana` editor and the core's execution layer, inside a full engine run with the
SHIPPED defaults (contact sheets, embedding workers, concurrency, retries and backoff): only
the account's limits are set, as a user of that tier would (600 requests/min, no token
limit). The faces are real (views of the `sample` photos, each with its original as the
reference) and scored by the dlib embedder: 40 faces x 10 multi_axis sessions x 4 steps =
1,600 edit calls, then a rerun of the same experiment. A sequential client (one call at a
time, same editor and retries) runs beside it. The same run with the `gemini` judge on a
second fake (1,000 requests/min, its account limit) reports how much of the editing time the
judge was busy too.

Rates are given over the edit span (first to last edit request the fake received) and over
the whole run (run_experiment, admission to report). The whole run is also set against its
physical bound, the larger of (edits / the provider's limit) and (images embedded / the
embedder's all-core rate, measured right after the run on the same machine): the ratio
bound / run wall is 1.0 for a run that loses no time around its slowest resource. The same ratio is
also given with every attempt counted (failed ones too: each takes its place under the limit); there
1.0 is the best any client can reach against a provider that fails some requests. A timeline
says where the rest went (until the first edit request, the edit span, the scoring left after
the last edit, the report stage).

BFL (``kontext_pro``, submit-then-poll) with the editor's SHIPPED defaults, against a fake BFL
API that answers each submission after 300 ms, takes 2 s to generate, allows 24 active tasks
(429 above) and 600 submissions/min (a sliding minute; 429 above): successful edits/min as a
share of what those limits allow, min(600, 24 x 60 / 2.3 s) = 600/min, beside a sequential
client. Polls are counted apart from submissions.

Usage: python benchmarks/bench_hosted.py [--only gemini|judged|bfl] [--calls 1600] [--judged-calls 800] [--no-faults]
       [--sequential 100] [--bfl-calls 800] [--bfl-sequential 12]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

KEY = "bench-key"
LATENCY_S = 0.3
RPM = 600
FAULTS = {"429": 0.05, "500": 0.02}


def bench_faces(tmp: str, n_faces: int) -> list[str]:
    """Overrides selecting n generated faces and the trivial pixel embedder."""
    return ["dataset=bench_faces", f"+dataset.params.root={tmp}", f"+dataset.params.n={n_faces}", "embedder=pixel"]


BFL_SUBMIT_S = 0.3
BFL_GENERATION_S = 2.0
BFL_ACTIVE = 24
BFL_RPM = 600


JUDGE_RPM = 1000
#: What the benchmarks of other stages fix so that they measure only their own stage.
LEAN = ("run.workers=1", "run.max_contact_sheets=0")


def gemini_editor(server) -> list[str]:
    """The shipped nano_banana defaults with the account's limits: 600 requests/min, no token limit."""
    limits = "editor.params.limits"
    return ["editor=nano_banana", f"editor.params.base_url={server.url}", f"{limits}.requests_per_minute={RPM}",
            f"{limits}.tokens_per_minute=null"]


def engine_run(server, tmp: str, data: list[str], *overrides: str, editor: list[str] | None = None,
               labels: tuple[str, ...] = ("first", "rerun"), lean: bool = True) -> dict:
    """Runs the experiment once per label (the same experiment: later labels are reruns).
    ``lean`` fixes one embedding worker and no contact sheets; otherwise the shipped defaults."""
    from bench_engine import bench_plugins
    from hydra import compose, initialize_config_dir

    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir

    plugins = bench_plugins()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[
            *(editor if editor is not None else gemini_editor(server)), "testset=multi_axis", *data, "tracking=none",
            f"run.workspace={tmp}/ws", "run.progress=false", *(LEAN if lean else ()), *overrides])
    exp = build_experiment(cfg, plugins)
    out = {}
    for label in labels:
        before = server.calls
        started, cpu = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(io.StringIO()), _engine_end() as engine_end:
            report = run_experiment(exp, plugins)
        cpu = time.process_time() - cpu
        out[label] = {"wall_s": time.perf_counter() - started, "provider_calls": server.calls - before,
                      "ok": report["counts"]["steps"].get("ok", 0), "steps": report["counts"]["steps"],
                      "calls": next(iter(report["calls"].values()), {}),
                      "edit_stage_s": report["performance"]["edit_stage_s"],
                      "requests": list(server.requests[before:]), "started": started,
                      "engine_end": engine_end[0] if engine_end else None,
                      "embedded": report["run"]["computed"]["embeddings"], "cpu_s": cpu}
    return out


@contextlib.contextmanager
def _engine_end():
    """Notes when the engine returned (every session scored): the report stage starts there."""
    from faceedit_bench.run.engine import Engine

    ends: list[float] = []
    original = Engine.run

    def timed(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        finally:
            ends.append(time.perf_counter())

    Engine.run = timed
    try:
        yield ends
    finally:
        Engine.run = original


def _embed_one(args: tuple[str, bytes]) -> int:
    import numpy as np
    from PIL import Image

    name, data = args
    embedder = _RATE_EMBEDDERS.get(name)
    if embedder is None:
        from bench_engine import bench_plugins

        embedder = _RATE_EMBEDDERS[name] = bench_plugins().registry.create("embedders", name)
    return embedder.embed(np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))).n_faces


_RATE_EMBEDDERS: dict[str, object] = {}


def embedder_rate(name: str, n_images: int = 64) -> float:
    """Images/s of the embedder in one process per core, models loaded, on distinct real-face images."""
    import multiprocessing

    from bench_identity import make_images

    images = [(name, data) for data in make_images(n_images)]
    cores = os.cpu_count() or 1
    with multiprocessing.get_context("spawn").Pool(cores) as pool:
        pool.map(_embed_one, images[:cores], chunksize=1)  # load the models outside the timing
        started = time.perf_counter()
        pool.map(_embed_one, images, chunksize=1)
        return n_images / (time.perf_counter() - started)


def whole_run(run: dict, edits_per_s: float, embedder: str) -> str:
    """The whole run against its physical bound, and where its time went."""
    per_s = embedder_rate(embedder)
    edit_bound, embed_bound = run["ok"] / edits_per_s, run["embedded"] / per_s
    bound = max(edit_bound, embed_bound)
    # Failed attempts count against the limit too: the best any client can do with the provider's faults.
    attempts = run["calls"].get("attempts", run["ok"])
    forced = max(attempts / edits_per_s, embed_bound)
    first, last = span(run["requests"])
    end = run["engine_end"] or run["started"] + run["wall_s"]
    return (f"whole run against its physical bound: edits {run['ok']} / limit = {edit_bound:.1f} s; images "
            f"{run['embedded']} / {per_s:.1f} per s ({embedder}, {os.cpu_count()} processes, measured after the run) "
            f"= {embed_bound:.1f} s; bound {bound:.1f} s / run wall {run['wall_s']:.1f} s = **{bound / run['wall_s']:.2f}**"
            f"; counting every attempt ({attempts}, failed ones included) "
            f"{forced:.1f} s / run wall = {forced / run['wall_s']:.2f}"
            f"\ntimeline: first edit request at {first - run['started']:.1f} s, edit span {last - first:.1f} s, "
            f"scoring after the last edit {end - last:.1f} s, report stage {run['started'] + run['wall_s'] - end:.1f} s; "
            f"CPU of the run's own process (calls, checks, contact sheets, tables, report) {run['cpu_s']:.1f} s"
            f"; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def sequential(editor_name: str, params: dict, n_calls: int) -> dict:
    """One call at a time through the same editor and executor: the baseline of each table."""
    from faceedit_bench.execution.calls import Executor
    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.records import EditRequest
    from faceedit_bench.testing import gradient_image

    editor = load_plugins().registry.create("editors", editor_name, params)
    image = gradient_image(0)

    async def main() -> int:
        executor = Executor(editor.limits)
        ok = 0
        for i in range(n_calls):
            request = EditRequest(image, f"make the person's hair color red {i}", "f", "s", 1, i)
            result = await executor.call(lambda r=request: editor.aedit(r))
            ok += result.outcome.value == "ok"
        return ok

    started = time.perf_counter()
    ok = asyncio.run(main())
    return {"wall_s": time.perf_counter() - started, "ok": ok}


def span(requests) -> tuple[float, float]:
    """When a fake received its first request and answered its last (monotonic seconds): for BFL the last
    is a result's download, not a submission."""
    if not requests:
        return 0.0, 0.0
    return min(r.received_at for r in requests), max(r.answered_at or r.received_at for r in requests)


def busy_seconds(requests, bin_s: float = 1.0) -> set[int]:
    """The bins of ``bin_s`` seconds in which the fake received at least one request."""
    return {int(r.received_at // bin_s) for r in requests}


def real_faces_data(tmp: str, n_faces: int) -> list[str]:
    from bench_overlap import real_faces

    return real_faces(Path(tmp) / "faces", n_faces)


def rates(run: dict) -> dict:
    start, end = span(run["requests"])
    edit_span = max(1e-9, end - start)
    return {"edit_span_s": edit_span, "requests_span": run["provider_calls"] / edit_span * 60 / RPM,
            "ok_span": run["ok"] / edit_span * 60 / RPM, "requests_run": run["provider_calls"] / run["wall_s"] * 60 / RPM,
            "ok_run": run["ok"] / run["wall_s"] * 60 / RPM}


def bench_gemini(args: argparse.Namespace) -> None:
    os.environ["GEMINI_API_KEY"] = KEY
    from tests.fakes.gemini import gemini_server

    n_faces = max(1, args.calls // 40)
    faults = {} if args.no_faults else FAULTS
    with tempfile.TemporaryDirectory() as tmp:
        with gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=RPM, fault_rates=faults, retry_after=1.0,
                           seed=1) as server:
            runs = engine_run(server, tmp, real_faces_data(tmp, n_faces), lean=False)
        with gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=RPM, fault_rates=faults, retry_after=1.0,
                           seed=2) as server:
            seq = sequential("nano_banana", {"base_url": server.url, "limits": {
                "requests_per_minute": RPM, "tokens_per_minute": None}}, args.sequential)
    first = runs["first"]
    r = rates(first)
    seq_share = seq["ok"] / seq["wall_s"] * 60 / RPM
    print(f"fake provider: {LATENCY_S * 1000:.0f} ms latency, {RPM} requests/min enforced, faults injected: "
          f"{faults or 'none'}; nano_banana with its shipped defaults, dlib embedder, contact sheets")
    print("| client | edit calls | succeeded | edit span (s) | run wall (s) | requests / limit (span; run) | "
          "successful edits / limit (span; run) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| engine | {n_faces * 40} | {first['ok']} | {r['edit_span_s']:.1f} | {first['wall_s']:.1f} | "
          f"{r['requests_span']:.2f}; {r['requests_run']:.2f} | {r['ok_span']:.2f}; {r['ok_run']:.2f} |")
    print(f"| sequential, same retries | {args.sequential} | {seq['ok']} | - | {seq['wall_s']:.1f} | - | "
          f"{seq_share:.2f} |")
    print(f"engine / sequential (successful edits/min, whole run): {r['ok_run'] / seq_share:.2f}x")
    print(f"\nfirst run: steps {first['steps']}; retries {first['calls'].get('retries')}; "
          f"gave up {first['calls'].get('gave_up')}")
    print(f"immediate rerun: {runs['rerun']['provider_calls']} provider calls, {runs['rerun']['wall_s']:.1f} s")
    print(whole_run(first, RPM / 60, "dlib"))


def bench_judged(args: argparse.Namespace) -> None:
    """The same engine run with a judge: how much of the editing time the judge was busy too."""
    os.environ["GEMINI_API_KEY"] = KEY
    from tests.fakes.gemini import gemini_server

    n_faces = max(1, args.judged_calls // 40)
    limits = "judge.params.limits"
    with tempfile.TemporaryDirectory() as tmp:
        with gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=RPM, fault_rates=FAULTS, retry_after=1.0,
                           seed=3) as editor, \
                gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=JUDGE_RPM, seed=4) as judge:
            run = engine_run(editor, tmp, real_faces_data(tmp, n_faces), "judge=gemini",
                             f"judge.params.base_url={judge.url}", f"{limits}.requests_per_minute={JUDGE_RPM}",
                             f"{limits}.tokens_per_minute=null", labels=("run",), lean=False)["run"]
            judge_requests = list(judge.requests)
    r = rates(run)
    edit_bins, judge_bins = busy_seconds(run["requests"]), busy_seconds(judge_requests)
    j_start, j_end = span(judge_requests)
    print(f"\nwith the gemini judge ({JUDGE_RPM} requests/min, 300 ms, no faults) on {n_faces} faces x 10 sessions:")
    print("| edit calls | judge calls | edit span (s) | judge span (s) | run wall (s) | seconds both providers were "
          "busy | share of the edit span | successful edits / limit (span; run) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    both = len(edit_bins & judge_bins)
    print(f"| {run['provider_calls']} | {len(judge_requests)} | {r['edit_span_s']:.1f} | {j_end - j_start:.1f} | "
          f"{run['wall_s']:.1f} | {both} | {both / r['edit_span_s']:.2f} | {r['ok_span']:.2f}; {r['ok_run']:.2f} |")
    print(f"steps {run['steps']}")


def bench_bfl(args: argparse.Namespace) -> None:
    os.environ["BFL_API_KEY"] = KEY
    from tests.fakes.bfl import bfl_server

    allowed = min(BFL_RPM, BFL_ACTIVE * 60 / (BFL_SUBMIT_S + BFL_GENERATION_S))
    fake = {"api_key": KEY, "submit_latency_s": BFL_SUBMIT_S, "generation_s": BFL_GENERATION_S,
            "max_active": BFL_ACTIVE, "rpm_limit": BFL_RPM, "retry_after": 1.0}
    n_faces = max(1, args.bfl_calls // 40)
    with tempfile.TemporaryDirectory() as tmp:
        with bfl_server(**fake) as server:
            # The shipped defaults: only the endpoint is changed.
            runs = engine_run(server, tmp, bench_faces(tmp, n_faces),
                              editor=["editor=kontext_pro", f"editor.params.base_url={server.url}"])
            peak = server.peak_active
            polls, downloads = server.polls, server.downloads
        with bfl_server(**fake) as server:
            seq = sequential("kontext_pro", {"base_url": server.url}, args.bfl_sequential)  # shipped defaults
    first = runs["first"]
    stats = first["calls"]
    engine_rate = first["ok"] / first["wall_s"] * 60
    seq_rate = seq["ok"] / seq["wall_s"] * 60
    submitted_rate = stats["attempts"] / first["wall_s"] * 60
    print(f"\nfake BFL API: {BFL_SUBMIT_S * 1000:.0f} ms per submission, {BFL_GENERATION_S:g} s generation, "
          f"{BFL_ACTIVE} active tasks, {BFL_RPM} submissions/min enforced (429 above either); the limits allow "
          f"{allowed:.0f} edits/min. Editor kontext_pro with its shipped defaults.")
    print("| client | edits | succeeded | wall (s) | submissions/min | successful edits/min | share of what the "
          "limits allow |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| engine (execution layer) | {n_faces * 40} | {first['ok']} | {first['wall_s']:.1f} | "
          f"{submitted_rate:.0f} | {engine_rate:.0f} | {engine_rate / allowed:.2f} |")
    print(f"| sequential client, same editor | {args.bfl_sequential} | {seq['ok']} | {seq['wall_s']:.1f} | - | "
          f"{seq_rate:.0f} | {seq_rate / allowed:.2f} |")
    print(f"\nfirst run: steps {first['steps']}; submissions {stats['attempts']} (retries {stats.get('retries')}, "
          f"gave up {stats.get('gave_up')}); counted apart: {stats.get('other_requests')} "
          f"(fake saw {polls} polls, {downloads} downloads); peak active tasks at the fake {peak}; "
          f"edit stage {first['edit_stage_s']:.1f} s")
    print(f"immediate rerun: {runs['rerun']['provider_calls']} provider requests, {runs['rerun']['wall_s']:.1f} s")
    print(whole_run(first, allowed / 60, "pixel"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=("gemini", "judged", "bfl"), help="run one of the benchmarks")
    parser.add_argument("--calls", type=int, default=1600, help="Gemini edit calls (multiple of 40)")
    parser.add_argument("--judged-calls", type=int, default=800, help="Gemini edit calls with a judge")
    parser.add_argument("--sequential", type=int, default=100, help="calls of the sequential Gemini client")
    parser.add_argument("--no-faults", action="store_true",
                        help="the fake Gemini fails no request: the run's own losses, without the retries of faults")
    parser.add_argument("--bfl-calls", type=int, default=800, help="BFL edits (multiple of 40)")
    parser.add_argument("--bfl-sequential", type=int, default=12, help="tasks of the sequential BFL client")
    args = parser.parse_args()
    if args.only in (None, "gemini"):
        bench_gemini(args)
    if args.only in (None, "judged"):
        bench_judged(args)
    if args.only in (None, "bfl"):
        bench_bfl(args)


if __name__ == "__main__":
    main()
