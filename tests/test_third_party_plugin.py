"""A plugin package built and installed from its own directory works by name, with no edit to conf/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYPROJECT = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "faceedit-bench-sepia"
version = "0.3.0"
dependencies = []

[project.entry-points.faceedit_bench]
sepia = "faceedit_bench_sepia"
"""

MODULE = '''
from faceedit_bench import hookimpl


@hookimpl
def faceedit_register_editors(register):
    register("sepia", "faceedit_bench_sepia.editor:SepiaEditor", description="tints the image")


@hookimpl
def faceedit_config_searchpath():
    return ["pkg://faceedit_bench_sepia.conf"]
'''

EDITOR = '''
import io
from PIL import Image, ImageOps
from faceedit_bench import EditResult


class SepiaEditor:
    def __init__(self, strength: float = 1.0):
        self.strength = strength

    def describe(self):
        return {"name": "sepia", "version": "0.3.0", "strength": self.strength}

    def edit(self, request):
        im = Image.open(io.BytesIO(request.image)).convert("RGB")
        tinted = ImageOps.colorize(ImageOps.grayscale(im), "#2e1f0f", "#f5e6c8")
        out = io.BytesIO()
        Image.blend(im, tinted, self.strength).save(out, format="PNG")
        return EditResult.ok(out.getvalue())
'''


def write_plugin(root: Path) -> Path:
    pkg = root / "faceedit-bench-sepia"
    (pkg / "faceedit_bench_sepia" / "conf" / "editor").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "faceedit_bench_sepia" / "__init__.py").write_text(MODULE)
    (pkg / "faceedit_bench_sepia" / "editor.py").write_text(EDITOR)
    (pkg / "faceedit_bench_sepia" / "conf" / "editor" / "sepia.yaml").write_text(
        textwrap.dedent("""\
            # shipped by the plugin, not by faceedit_bench's conf/
            name: sepia
            params:
              strength: 0.5
        """))
    return pkg


@pytest.mark.slow
def test_installed_plugin_editor_is_usable_by_name(tmp_path):
    pkg = write_plugin(tmp_path / "src")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(pkg)], check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": str(site), "FACEEDIT_BENCH_HOME": str(tmp_path / "ws")}

    listing = subprocess.run([sys.executable, "-m", "faceedit_bench.cli", "plugins", "--json"],
                             capture_output=True, text=True, env=env, check=True)
    sepia = next(p for p in json.loads(listing.stdout)["plugins"] if p["name"] == "sepia")
    assert sepia["distribution"] == "faceedit-bench-sepia" and sepia["version"] == "0.3.0"

    out = subprocess.run(
        [sys.executable, "-m", "faceedit_bench", "editor=sepia", "testset=pose", "tracking=none",
         "run.max_faces=1", "run.max_sessions=1", "run.workers=1", "run.progress=false"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    (report_path,) = (tmp_path / "ws" / "runs").glob("sepia*/report.json")
    report = json.loads(report_path.read_text())
    editor = report["components"]["editor"]
    assert editor["provider"] == "sepia" and editor["provider_version"] == "0.3.0"
    assert editor["description"]["strength"] == 0.5  # the plugin's own config entry was used
    assert report["counts"]["steps"] == {"ok": 4}
    assert abs(report["metrics"]["drop_fss"]["mean"]) > 1e-3  # tinting moves the dlib descriptor
