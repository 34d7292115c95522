"""What `make setup` and `make test` rest on: one lock for the core and every plugin, installed
exactly, with the local CPU torch; and a per-test timeout so a hang fails instead of stalling."""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lock() -> dict:
    return tomllib.loads((ROOT / "uv.lock").read_text())


def test_one_lock_covers_the_core_and_every_plugin():
    members = set(lock()["manifest"]["members"])
    plugins = {tomllib.loads(p.read_text())["project"]["name"] for p in ROOT.glob("plugins/*/pyproject.toml")}
    assert members == {"faceedit-bench", *plugins}


def test_the_lock_takes_torch_from_the_cpu_file_and_never_cuda():
    torches = {p["version"]: p for p in lock()["package"] if p["name"] == "torch"}
    cpu = torches["2.13.0+cpu"]
    (wheel,) = cpu["wheels"]
    assert "path" in wheel and wheel["path"].endswith("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert not any(d["name"].startswith(("nvidia", "cuda")) for d in cpu.get("dependencies", []))
    assert set(torches) <= {"2.13.0+cpu", "2.13.0"}  # only ever torch 2.13.0 (PyPI's for other platforms)


def recipe(makefile: str, target: str) -> str:
    """A rule of the Makefile: its prerequisites line and its recipe."""
    return makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]


def test_make_setup_installs_exactly_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    setup = recipe(makefile, "$(STAMP)")
    assert "$(UV) sync --locked --all-packages --all-extras" in setup
    assert "| uv" in setup.splitlines()[0]  # uv (the lock's own version) is bootstrapped first
    bootstrap = recipe(makefile, "uv")
    assert bootstrap.count("pip install") == 1 and "pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)" \
        in bootstrap  # pip only bootstraps uv (the lock's own version); torch comes from the lock
    assert "pip install" not in setup


def test_make_lock_needs_no_synced_environment():
    # After a pyproject.toml edit, `uv sync --locked` refuses to run until the lock is remade: `make lock` must not
    # depend on the synced environment ($(STAMP)), only on uv itself (docs/install.md, "Changing dependencies").
    makefile = (ROOT / "Makefile").read_text()
    prerequisites = recipe(makefile, "lock").splitlines()[0]
    assert "$(STAMP)" not in prerequisites and "uv" in prerequisites.split()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci and "MLFLOW_DISABLE_TELEMETRY=true" in ci


@pytest.mark.skipif(sys.prefix == sys.base_prefix or not Path(sys.prefix, ".installed").exists(),
                    reason="not the environment `make setup` installs")
def test_the_environment_holds_the_locked_versions():
    locked = {p["name"]: p["version"] for p in lock()["package"] if "source" in p and "registry" in p["source"]}
    drift = {}
    for name in ("openai", "google-genai", "replicate", "byteplus-python-sdk-v2", "httpx2", "mlflow", "hydra-core",
                 "pydantic", "pytest", "pytest-timeout"):
        installed = importlib.metadata.version(name)
        if installed != locked[name]:
            drift[name] = (locked[name], installed)
    assert not drift, f"installed versions differ from uv.lock (locked, installed): {drift}; run make setup"


def test_every_test_has_a_timeout(request):
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed"
    assert float(request.config.getini("timeout")) >= 60
