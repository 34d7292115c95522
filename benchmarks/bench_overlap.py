"""Stages that overlap: while one chunk of faces is edited, the previous chunk is embedded
and judged. Each run is set beside the time its stages need alone.

1. Editor and judge: 40 generated faces x 10 `multi_axis` sessions, `nano_banana` and the
   `gemini` judge on two fake Gemini providers (tests/fakes), each answering after 300 ms
   and allowing 3,000 requests/min, no faults. Alone, each provider needs at least
   requests / limit; editing and judging in turns would need at least the sum.
2. Editor and embedder: 24 real-face images (views of the `sample` photos, each with the
   original photo as its reference) x 4 sessions, `nano_banana` on a fake provider at 600
   requests/min and the real dlib embedder with 2 worker processes. Embedding alone is
   measured by re-scoring the stored edits with another dlib fingerprint (no edit calls).

Usage: python benchmarks/bench_overlap.py [--judged-faces 40] [--embedded-faces 24]
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_hosted import KEY, LATENCY_S, RPM, bench_faces, engine_run  # noqa: E402

JUDGED_RPM = 3000


def edit_and_judge(n_faces: int, tmp: str) -> dict:
    from tests.fakes.gemini import gemini_server

    limits = "judge.params.limits"
    with gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=JUDGED_RPM, seed=3) as editor, \
            gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=JUDGED_RPM, seed=4) as judge:
        run = engine_run(editor, tmp, bench_faces(tmp, n_faces), f"editor.params.limits.requests_per_minute={JUDGED_RPM}",
                         "judge=gemini", f"judge.params.base_url={judge.url}",
                         f"{limits}.requests_per_minute={JUDGED_RPM}", f"{limits}.tokens_per_minute=null",
                         f"{limits}.max_concurrency=64", "analysis.n_resamples=99", labels=("run",))["run"]
        run["edit_requests"], run["judge_requests"] = editor.calls, judge.calls
    return run


def real_faces(root: Path, n: int) -> list[str]:
    """A folder dataset: n views of the sample photos, each its own identity with the
    original photo as reference."""
    from bench_identity import make_images

    from faceedit_bench.plugin.manager import load_plugins

    originals = list(load_plugins().registry.create("datasets", "sample").faces())
    rows = [["file", "identity", "role", "gender", "skin_tone", "age"]]
    for i, data in enumerate(make_images(n)):
        person = root / f"p{i}"
        person.mkdir(parents=True)
        (person / "base.jpg").write_bytes(data)
        original = originals[i % len(originals)].image
        shutil.copy(original, person / f"reference{Path(original).suffix}")
        rows += [[f"p{i}/base.jpg", f"p{i}", "base", "", "", ""],
                 [f"p{i}/reference{Path(original).suffix}", f"p{i}", "reference", "", "", ""]]
    with open(root / "manifest.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return ["dataset=folder", f"+dataset.params.root={root}", "embedder=dlib"]


def edit_and_embed(n_faces: int, tmp: str) -> dict:
    from tests.fakes.gemini import gemini_server

    data = real_faces(Path(tmp) / "faces", n_faces)
    common = ["run.max_sessions=4", "run.workers=2", "editor.params.limits.max_concurrency=8"]
    with gemini_server(api_key=KEY, latency_s=LATENCY_S, rpm_limit=RPM, seed=5) as editor:
        run = engine_run(editor, tmp, data, *common, labels=("run",))["run"]
        run["edit_requests"] = editor.calls
        alone = engine_run(editor, tmp, data, *common, "embedder.params.num_jitters=1", labels=("embed",))["embed"]
        assert alone["provider_calls"] == 0, "re-scoring made edit calls"
    run["embed_alone_s"] = alone["wall_s"]
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judged-faces", type=int, default=40)
    parser.add_argument("--embedded-faces", type=int, default=24)
    args = parser.parse_args()
    os.environ["GEMINI_API_KEY"] = KEY
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(f"{tmp}/judged")
        judged = edit_and_judge(args.judged_faces, f"{tmp}/judged")
        os.mkdir(f"{tmp}/embedded")
        embedded = edit_and_embed(args.embedded_faces, f"{tmp}/embedded")

    edit_alone = judged["edit_requests"] / JUDGED_RPM * 60
    judge_alone = judged["judge_requests"] / JUDGED_RPM * 60
    print(f"1. editor + judge: {args.judged_faces} faces x 10 sessions, {JUDGED_RPM} requests/min per provider, "
          f"{LATENCY_S * 1000:.0f} ms latency")
    print("| edit requests | judge requests | edits alone (s, at the limit) | judging alone (s, at the limit) | "
          "in turns (s, at least) | wall (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {judged['edit_requests']} | {judged['judge_requests']} | {edit_alone:.1f} | {judge_alone:.1f} | "
          f"{edit_alone + judge_alone:.1f} | {judged['wall_s']:.1f} |")
    print(f"steps {judged['steps']}")

    edit_alone = embedded["edit_requests"] / RPM * 60
    print(f"\n2. editor + dlib: {args.embedded_faces} real-face images x 4 sessions, {RPM} requests/min, "
          f"{LATENCY_S * 1000:.0f} ms latency, 2 embedding workers")
    print("| edit requests | edits alone (s, at the limit) | embedding alone (s) | in turns (s, about) | wall (s) |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {embedded['edit_requests']} | {edit_alone:.1f} | {embedded['embed_alone_s']:.1f} | "
          f"{edit_alone + embedded['embed_alone_s']:.1f} | {embedded['wall_s']:.1f} |")
    print(f"steps {embedded['steps']}")


if __name__ == "__main__":
    main()
