"""A broken plugin breaks only itself: a package whose hook name is misspelled, installed beside the others
(pip, into a directory on PYTHONPATH, as a user's would be), leaves every other command working; the plugin
listing names it as broken with the reason, and a run that needs it stops before any work, with exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "faceedit-bench-typo"
version = "0.1"

[project.entry-points.faceedit_bench]
typo = "faceedit_bench_typo"
"""
MODULE = '''from faceedit_bench.api import hookimpl


@hookimpl
def faceedit_register_editor(register):  # misspelled: the hook is faceedit_register_editors
    register("typo_editor", "faceedit_bench_typo:make")
'''


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("typo-plugin")
    (tmp / "src" / "faceedit_bench_typo").mkdir(parents=True)
    (tmp / "src" / "pyproject.toml").write_text(PYPROJECT)
    (tmp / "src" / "faceedit_bench_typo" / "__init__.py").write_text(MODULE)
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(tmp / "src")], check=True, capture_output=True, text=True)
    return {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}", "FACEEDIT_BENCH_HOME": str(tmp / "ws"),
            "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true", "COLUMNS": "200"}


def cli(env: dict[str, str], *args: str, module: str = "faceedit_bench.cli") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=env["FACEEDIT_BENCH_HOME"].rsplit("/", 1)[0])


@pytest.mark.slow(seconds=40)
def test_a_misspelled_hook_leaves_every_other_command_working(env: dict[str, str]) -> None:
    listing = cli(env, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    found = json.loads(listing.stdout)
    assert "unknown hook(s) faceedit_register_editor (did you mean faceedit_register_editors?)" in \
        found["broken"]["typo"]
    assert {"gemini", "openai", "dlib"} <= {p["name"] for p in found["plugins"]}  # the others load as before
    text = cli(env, "plugins")
    assert text.returncode == 0 and "typo  (broken, skipped: implements unknown hook" in text.stdout
    assert "Traceback" not in text.stderr

    options = cli(env, "ls", "editor")
    assert options.returncode == 0 and "gpt_image" in options.stdout and "Traceback" not in options.stderr

    needs_it = cli(env, "editor=typo_editor", "testset=pose", module="faceedit_bench")
    assert needs_it.returncode == 2 and "Traceback" not in needs_it.stderr
    assert "Unknown editor 'typo_editor'" in needs_it.stderr and "typo (implements unknown hook" in needs_it.stderr

    run = cli(env, "testset=pose", "tracking=none", "run.max_faces=1", "run.max_sessions=1", "run.workers=1",
              "run.progress=false", module="faceedit_bench")  # the identity editor on the sample faces
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
