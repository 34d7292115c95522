"""Engine overhead per step and peak memory as the number of sessions grows.

Identity editor (no edit cost) and a trivial pixel embedder (no model cost), so what is
measured is the framework: planning, ledger lookups and writes, image store, hooks,
aggregation and artifact writing. Each size runs in a fresh process (peak RSS is per
process). Usage: python benchmarks/bench_engine.py [faces ...]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class BenchFaces:
    """n generated faces with one reference each."""

    def __init__(self, root: str, n: int) -> None:
        from faceedit_bench.records import Face
        from faceedit_bench.testing import gradient_image

        self.items = []
        for i in range(n):
            base, ref = Path(root) / f"{i}.png", Path(root) / f"{i}_ref.png"
            base.write_bytes(gradient_image(i))
            ref.write_bytes(gradient_image(i))
            self.items.append(Face(f"bench/{i}", f"id{i}", base, (ref,), {"gender": "male" if i % 2 else "female"}))

    def describe(self) -> dict[str, Any]:
        return {"name": "bench_faces", "n": len(self.items)}

    def __len__(self) -> int:
        return len(self.items)

    def faces(self) -> Iterator[Any]:
        return iter(self.items)


def bench_plugins() -> Any:
    """The installed plugins plus the `bench_faces` dataset and the `pixel` embedder, with
    their config entries registered for Hydra."""
    import types

    from faceedit_bench import hookimpl
    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.run.hydra_app import register_configs
    from faceedit_bench.testing import PixelEmbedder

    plugin = types.ModuleType("bench_plugin")
    plugin.faceedit_register_datasets = hookimpl(lambda register: register("bench_faces", BenchFaces))
    plugin.faceedit_register_embedders = hookimpl(lambda register: register("pixel", PixelEmbedder))
    plugins = load_plugins()
    plugins.add(plugin, name="bench")
    register_configs(plugins)
    return plugins


def one_size(n_faces: int) -> dict[str, Any]:
    from hydra import compose, initialize_config_dir

    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir

    plugins = bench_plugins()
    with tempfile.TemporaryDirectory() as tmp:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=[
                "editor=identity", "testset=multi_axis", "dataset=bench_faces", f"+dataset.params.root={tmp}",
                f"+dataset.params.n={n_faces}", "embedder=pixel", "tracking=none", f"run.workspace={tmp}/ws",
                "run.workers=1", "run.progress=false", "run.max_contact_sheets=0"])
        exp = build_experiment(cfg, plugins)
        import contextlib
        import io

        timings = {}
        for label in ("first run", "rerun (all from ledger)"):
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                report = run_experiment(exp, plugins)
            timings[label] = time.perf_counter() - started
    steps = report["counts"]["steps"]["ok"]
    return {
        "faces": n_faces,
        "sessions": report["counts"]["sessions"]["planned"],
        "steps": steps,
        "ms_per_step_first": 1000 * timings["first run"] / steps,
        "ms_per_step_rerun": 1000 * timings["rerun (all from ledger)"] / steps,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(sizes: list[int]) -> None:
    print("| faces | sessions | steps | ms/step (first run) | ms/step (rerun) | peak RSS (MB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {r['faces']} | {r['sessions']} | {r['steps']} | {r['ms_per_step_first']:.2f} | "
              f"{r['ms_per_step_rerun']:.2f} | {r['peak_rss_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one_size(int(sys.argv[2]))))
    else:
        main([int(a) for a in sys.argv[1:]] or [10, 100, 1000])
