"""Local models: the diffusers editors' images/s, peak GPU memory and the framework's overhead
over bare pipeline calls; the qwen_vl judge's answers/s one question at a time and batched.

"bare" calls the diffusers pipeline directly with prepared images, batch by batch; "framework"
sends the same requests through the editor's ``aedit`` (decode, resize, micro-batching, worker
thread, PNG encoding), the way the engine does. Both run after a warm-up (best of 3 on a GPU,
once on a CPU) on the tiny random pipelines of ``faceedit_bench_diffusers.testing``, and with
``--real`` also on each editor's real weights where they are in the Hugging Face cache (the
config's defaults, ``--steps`` overriding the step count). Without a GPU it runs the tiny
configs on the CPU and says so. The judge answers the SC question about ``--images`` edits
through ``ajudge`` (all asked at once, as the engine asks), with batch size 1 and ``--batch``,
on the tiny Qwen2.5-VL and Qwen3-VL checkpoints and, with ``--real``, the configured default.

Usage: python benchmarks/gpu_smoke.py [--images 8] [--batch 4] [--steps 2] [--real]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPEATS = {True: 3, False: 1}  # best of, on a GPU / on the CPU (where it only checks that everything runs)
TINY = ["instruct_pix2pix", "flux1_dev", "flux_kontext_dev", "qwen_image_edit", "flux2_dev"]


def requests(n: int, size: int) -> list[Any]:
    from faceedit_bench.records import EditRequest
    from faceedit_bench.testing import gradient_image

    return [EditRequest(gradient_image(i, size=size), "make the person's hair red", f"f{i}", "s", 1, i)
            for i in range(n)]


def bare(editor: Any, reqs: list[Any], repeats: int) -> float:
    """Seconds for the pipeline calls alone, in the editor's batch size. They run in a worker
    thread as the editor's do: on a busy CPU, torch's OpenMP pool in the main thread was up to
    5x slower than in a worker thread, which would pass for negative framework overhead."""
    pipe, items = editor._loaded(), [editor._prepare(r) for r in reqs]
    batches = [items[i:i + editor.batch_size] for i in range(0, len(items), editor.batch_size)]

    def calls() -> float:
        started = time.perf_counter()
        for batch in batches:
            pipe(**editor._arguments(batch))
        return time.perf_counter() - started

    with ThreadPoolExecutor(1) as pool:
        pool.submit(calls).result()  # warm-up
        return min(pool.submit(calls).result() for _ in range(repeats))


def timed_gather(call: Any, reqs: list[Any], repeats: int) -> tuple[float, int | None]:
    """Best seconds for sending every request at once through ``call`` (``aedit`` or
    ``ajudge``), after a warm-up, and the largest peak GPU memory the results report."""
    async def run() -> list[Any]:
        return list(await asyncio.gather(*(call(r) for r in reqs)))

    asyncio.run(run())  # warm-up (loads the weights)
    seconds = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        results = asyncio.run(run())
        seconds = min(seconds, time.perf_counter() - started)
    failed = [r.reason for r in results if r.outcome.value != "ok"]
    if failed:
        raise RuntimeError(failed[0])
    peaks = [r.usage.get("peak_gpu_mem_bytes") for r in results]
    return seconds, max(peaks) if all(p is not None for p in peaks) else None


def measure(label: str, editor: Any, n: int, repeats: int) -> dict[str, Any]:
    reqs = requests(n, 64)
    t_bare = bare(editor, reqs, repeats)
    t_framework, peak = timed_gather(editor.aedit, reqs, repeats)
    return {"editor": label, "batch": editor.batch_size, "images": n, "bare": n / t_bare,
            "framework": n / t_framework, "overhead_ms": 1000 * (t_framework - t_bare) / n,
            "peak_mb": peak / 2**20 if peak else None}


def judge_rate(model: str, batch: int, n: int, device: str, dtype: str, repeats: int) -> dict[str, Any]:
    from faceedit_bench_transformers.judge import QwenVLJudge

    from faceedit_bench.records import JudgeRequest
    from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE
    from faceedit_bench.testing import gradient_image

    judge = QwenVLJudge(model=model, dtype=dtype, device=device, batch_size=batch, max_new_tokens=32)
    reqs = [JudgeRequest(SC_TEMPLATE.render(instruction=f"make the person's hair color number {i}"),
                         (gradient_image(i, size=64), gradient_image(i + 1, size=64)), SC_TEMPLATE.json_schema,
                         SC_TEMPLATE.name, i) for i in range(n)]

    seconds, peak = timed_gather(judge.ajudge, reqs, repeats)
    return {"judge": model, "batch": batch, "answers": n, "per_s": n / seconds,
            "peak_mb": peak / 2**20 if peak else None}


def judges(args: argparse.Namespace, tmp: str, device: str, dtype: str, repeats: int) -> list[dict[str, Any]]:
    from faceedit_bench_transformers import testing as vlm_testing

    from faceedit_bench.errors import ConfigError

    models = [str(vlm_testing.save_tiny(name, Path(tmp) / name)) for name in vlm_testing.BUILDERS]
    if args.real:
        models.append("Qwen/Qwen2.5-VL-7B-Instruct")
    rows = []
    for model in models:
        for batch in sorted({1, args.batch}):
            try:
                rows.append(judge_rate(model, batch, args.images, device, dtype, repeats))
            except ConfigError as exc:
                print(f"{model}: skipped ({str(exc)[:120]})")
                break
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=8, help="requests per measurement")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--real", action="store_true", help="also real weights found in the HF cache")
    args = parser.parse_args()

    import torch
    from faceedit_bench_diffusers import editors, testing

    from faceedit_bench.errors import ConfigError

    cuda = torch.cuda.is_available()
    device, dtype = ("cuda", "bfloat16") if cuda else ("cpu", "float32")
    print(f"device: {torch.cuda.get_device_name() if cuda else 'no GPU: tiny configs on the CPU'}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, testing.small_qwen_internal_size(64):
        for name in TINY:
            extra = {"auto_resize": False} if name == "flux_kontext_dev" else {}
            editor = getattr(editors, name)(model=str(testing.save_tiny(name, Path(tmp) / name)), steps=args.steps,
                                            resolution=64, dtype=dtype, device=device, batch_size=args.batch,
                                            **extra)
            rows.append(measure(f"{name} (tiny)", editor, args.images, REPEATS[cuda]))
        judge_rows = judges(args, tmp, device, dtype, REPEATS[cuda])
    if args.real:
        for name in [*TINY, "step1x_edit"]:
            try:
                editor = getattr(editors, name)(steps=args.steps, batch_size=args.batch, device=device)
            except (ConfigError, ValueError) as exc:
                print(f"{name}: skipped ({str(exc)[:120]})")
                continue
            rows.append(measure(f"{name} ({editor.source.name})", editor, args.images, REPEATS[cuda]))
    print(f"\n{'editor':42} {'batch':>5} {'images':>6} {'bare img/s':>10} {'framework img/s':>15} "
          f"{'overhead ms/img':>15} {'peak GPU MB':>11}")
    for r in rows:
        peak = f"{r['peak_mb']:.0f}" if r["peak_mb"] else "-"
        print(f"{r['editor']:42} {r['batch']:>5} {r['images']:>6} {r['bare']:>10.2f} {r['framework']:>15.2f} "
              f"{r['overhead_ms']:>15.1f} {peak:>11}")
    print(f"\n{'judge':42} {'batch':>5} {'answers':>7} {'answers/s':>9} {'peak GPU MB':>11}")
    for r in judge_rows:
        peak = f"{r['peak_mb']:.0f}" if r["peak_mb"] else "-"
        label = "tiny " + Path(r["judge"]).name if r["judge"].startswith(tmp) else r["judge"]
        print(f"{label:42} {r['batch']:>5} {r['answers']:>7} {r['per_s']:>9.2f} {peak:>11}")
    if not cuda:
        print("(CPU, one repetition: these numbers only show that everything runs; on a shared CPU they are noise)")


if __name__ == "__main__":
    main()
