"""Does an embedder reproduce in another build? A submission verified against a second build of its embedder.

A run of ``nano_banana`` (against the fake Gemini server of ``tests/fakes``, whose edits change the image) on
the ``sample`` faces with the shipped ``dlib`` embedder and no tracker is submitted (``faceedit-bench submit``)
and then verified (``faceedit-bench verify``) twice, each in a workspace of its own: with the installed
embedder, and with another one: ``--other-pythonpath`` put first on ``PYTHONPATH`` (for instance a folder that
holds dlib's ``_dlib_pybind11`` extension built from source with other instruction sets, which is then loaded
in place of the wheel's), or ``--descriptor-noise X``: the installed dlib with each component of every
descriptor multiplied by 1 + X or 1 - X (the sign drawn per component, seeded by the descriptor), the size of
difference another CPU's or build's rounding may make. It prints each verification's status, how the two
re-scorings' descriptors (the ``embeddings`` table of each ledger) compare, and the largest difference between
their reports.

Building dlib's extension without AVX, from its source distribution (``dlib-<version>.tar.gz`` on PyPI)::

    cmake -S dlib-<version>/tools/python -B build-noavx -DPYTHON_EXECUTABLE=.venv/bin/python \\
        -DUSE_AVX_INSTRUCTIONS=0 -DUSE_SSE4_INSTRUCTIONS=1 -DDLIB_USE_BLAS=0 -DDLIB_USE_LAPACK=0 \\
        -DDLIB_USE_CUDA=0 -DDLIB_NO_GUI_SUPPORT=1 -DCMAKE_BUILD_TYPE=Release
    cmake --build build-noavx -j2

Usage: python benchmarks/bench_reproduction.py (--other-pythonpath DIR | --descriptor-noise X) [--faces N]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEY = "bench-reproduction-key"
CLI = [sys.executable, "-m", "faceedit_bench.cli"]

#: ``_dlib_pybind11`` in a folder first on the path: the installed extension, with every descriptor moved.
NOISY_DLIB = """
import importlib.machinery, importlib.util, os, sys
import numpy as np
_here, _self = os.path.dirname(os.path.abspath(__file__)), sys.modules[__name__]
_spec = importlib.machinery.PathFinder.find_spec(__name__, [p for p in sys.path if os.path.abspath(p or ".") != _here])
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
sys.modules[__name__] = _self  # the extension's import registered itself under the same name
globals().update({k: getattr(_real, k) for k in dir(_real) if k not in ("__name__", "__file__", "__loader__", "__spec__")})
NOISE = float(os.environ["DESCRIPTOR_NOISE"])

class face_recognition_model_v1:
    def __init__(self, path):
        self._model = _real.face_recognition_model_v1(path)

    def compute_face_descriptor(self, *args, **kwargs):
        d = np.asarray(self._model.compute_face_descriptor(*args, **kwargs), dtype=np.float64)
        signs = np.random.default_rng(int.from_bytes(d.tobytes()[:8], "little")).choice([-1, 1], size=d.shape)
        return _real.vector(list(d * (1 + NOISE * signs)))
"""


def command(args: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(args[:4])} ... ended with {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def embeddings(ledger: Path) -> dict[str, tuple[str, np.ndarray | None]]:
    with sqlite3.connect(ledger) as con:
        rows = con.execute("SELECT image_hash, outcome, vector FROM embeddings").fetchall()
    return {h: (o, None if v is None else np.frombuffer(v, dtype=np.float32)) for h, o, v in rows}


def largest_difference(a: object, b: object, where: str = "") -> tuple[float, str]:
    """The largest difference between two numbers at the same place in two reports, and where (p-values,
    verified to 0.01, left out)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = [largest_difference(a[k], b[k], f"{where}.{k}") for k in a.keys() & b.keys() if k != "p_value"]
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = [largest_difference(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b))]
    elif isinstance(a, float) and isinstance(b, float):
        found = [(abs(a - b), where)]
    else:
        found = []
    return max(found, default=(0.0, ""))


def report(workspace: Path) -> dict:
    run_dir, = (workspace / "runs").iterdir()
    return json.loads((run_dir / "report.json").read_text())


def compare(a: dict, b: dict) -> str:
    common = sorted(set(a) & set(b))
    identical = outcome_differs = 0
    largest = 0.0
    for image in common:
        (outcome_a, va), (outcome_b, vb) = a[image], b[image]
        if outcome_a != outcome_b:
            outcome_differs += 1
        elif va is None or np.array_equal(va, vb):
            identical += 1
        else:
            largest = max(largest, float(np.abs(va.astype(np.float64) - vb).max()))
    return (f"{len(common)} images re-scored by both: {identical} bit-identical, {outcome_differs} with another "
            f"outcome, {len(common) - identical - outcome_differs} with other descriptors "
            f"(largest difference of one component {largest:.3g})")


def main() -> None:
    parser = argparse.ArgumentParser()
    other = parser.add_mutually_exclusive_group(required=True)
    other.add_argument("--other-pythonpath", help="put first on PYTHONPATH for the second verification")
    other.add_argument("--descriptor-noise", type=float, help="the second verification moves each dlib descriptor "
                                                                "component by this relative amount")
    parser.add_argument("--faces", type=int, help="run.max_faces (default: every sample face)")
    args = parser.parse_args()
    from tests.fakes.gemini import gemini_server

    with tempfile.TemporaryDirectory() as tmp, gemini_server(api_key=KEY) as server:
        tmp = Path(tmp)
        env = {**os.environ, "GEMINI_API_KEY": KEY, "FACEEDIT_BENCH_HOME": str(tmp / "workspace")}
        faces = [f"run.max_faces={args.faces}"] if args.faces else []
        command([sys.executable, "-m", "faceedit_bench", "editor=nano_banana", f"editor.params.base_url={server.url}",
                 "tracking=none", "run.progress=false", *faces], env)
        run_dir, = (tmp / "workspace" / "runs").iterdir()
        command([*CLI, "submit", str(run_dir), "--out", str(tmp / "submissions"), "--submitter", "bench"], env)
        submission, = (tmp / "submissions").iterdir()
        other = args.other_pythonpath
        if other is None:
            (tmp / "noisy").mkdir()
            (tmp / "noisy" / "_dlib_pybind11.py").write_text(NOISY_DLIB)
            other, env = str(tmp / "noisy"), {**env, "DESCRIPTOR_NOISE": str(args.descriptor_noise)}
        results = {}
        for name, pythonpath in (("installed", None), ("other", other)):
            verify_env = dict(env)
            if pythonpath:
                verify_env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
            command([*CLI, "verify", str(submission), "--workspace", str(tmp / name),  # 1: verified as failed
                     "--record-dir", str(tmp / f"record-{name}")], verify_env, ok=(0, 1))
            record = json.loads(next((tmp / f"record-{name}").iterdir()).read_text())
            results[name] = embeddings(tmp / name / "ledger.sqlite")
            print(f"verified with the {name} embedder: {record['status']} ({record['compared']} values compared, "
                  f"{record['mismatches_total']} mismatches)")
        print(compare(results["installed"], results["other"]))
        reports = [{k: report(tmp / name)[k] for k in ("metrics", "trajectory", "groups", "disparity")}
                   for name in results]
        difference, where = largest_difference(*reports)
        print(f"largest difference between the two re-scorings' reports: {difference:.3g}"
              + (f" ({where[1:]})" if difference else ""))


if __name__ == "__main__":
    main()
