"""faceedit_bench works from a regular (non-editable) install, outside the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def build_wheel(project: Path, out: Path) -> Path:
    before = set(out.glob("*.whl"))
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(project)],
                   check=True, capture_output=True, text=True)
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


@pytest.fixture(scope="module")
def core_wheel(tmp_path_factory) -> Path:
    """The core's wheel, built once for both tests (into their wheel folder)."""
    return build_wheel(ROOT, tmp_path_factory.mktemp("wheels"))


def test_wheel_ships_configs_data_and_search_path_plugin(core_wheel):
    wheel = core_wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "faceedit_bench/conf/config.yaml" in names
    assert "faceedit_bench/conf/editor/identity.yaml" in names
    assert "hydra_plugins/faceedit_bench_searchpath/__init__.py" in names
    assert "faceedit_bench/data/testsets/multi_axis.json" in names
    assert "faceedit_bench/data/taxonomy/face_edit_attributes.json" in names
    assert "faceedit_bench/schemas/run_report.schema.json" in names
    assert "faceedit_bench/schemas/sections/overediting.schema.json" in names  # a report section's schema
    assert "faceedit_bench/api/sections.py" in names and "faceedit_bench/report/templates/overediting.html.j2" in names
    assert not any(n.startswith("tests/") for n in names)


@pytest.mark.slow
@pytest.mark.timeout(900)  # a cold install into a fresh venv (up to 600 s allowed below), then a run
def test_run_from_a_fresh_virtualenv_with_wheels(tmp_path, core_wheel):
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is needed to build a throw-away environment quickly")
    core = core_wheel
    dlib_plugin = build_wheel(ROOT / "plugins" / "dlib", tmp_path / "wheels")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(py),
                    f"faceedit-bench[sample] @ {core.as_uri()}", str(dlib_plugin)],
                   check=True, capture_output=True, text=True, timeout=600)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([str(py), "-m", "faceedit_bench", "testset=pose", "tracking=none", "run.max_faces=1",
                          "run.max_sessions=1", "run.workers=1", "run.progress=false"],
                         capture_output=True, text=True, cwd=work, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    (report,) = (work / ".faceedit_bench" / "runs").glob("*/report.json")
    data = json.loads(report.read_text())
    assert data["counts"]["steps"] == {"ok": 4}
    assert data["components"]["embedder"]["provider"] == "dlib"
