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
from omegaconf import OmegaConf

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
    (built,) = out.glob("faceedit_bench_insightface-*.whl")
    return built


def test_wheel_holds_entry_point_code_and_config(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = zf.read(entry_points).decode()
        conf = yaml.safe_load(zf.read("faceedit_bench_insightface/conf/embedder/insightface.yaml"))
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for part in ("__init__.py", "embedder.py", "conf/__init__.py"):
        assert f"faceedit_bench_insightface/{part}" in names
    assert not any(n.endswith(".pyc") or "/tests/" in n for n in names)
    assert "[faceedit_bench]" in text and "insightface = faceedit_bench_insightface" in text
    assert conf["name"] == "insightface"
    for dep in ("faceedit-bench", "insightface", "onnxruntime", "numpy"):
        assert f"Requires-Dist: {dep}" in metadata


def test_discovered_through_its_entry_point(wheel, tmp_path, monkeypatch):
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (ep,) = [e for e in importlib.metadata.entry_points(group="faceedit_bench") if e.name == "insightface"]
    assert ep.value == "faceedit_bench_insightface" and ep.dist.name == "faceedit-bench-insightface"

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    assert pm.load_setuptools_entrypoints(hookspecs.PROJECT, name="insightface") == 1
    pm.check_pending()

    registry = Registry()
    pm.hook.faceedit_register_embedders(register=Register(registry["embedders"], "insightface"))
    assert registry["embedders"].names() == ["insightface"]
    assert registry.get("embedders", "insightface").description
    assert pm.hook.faceedit_config_searchpath() == [["pkg://faceedit_bench_insightface.conf"]]


def test_config_entry_composes_and_builds_the_embedder(tmp_path):
    from faceedit_bench_insightface import faceedit_config_searchpath, faceedit_register_embedders
    from faceedit_bench_insightface.embedder import InsightFaceEmbedder
    from fake_buffalo_l import make_pack
    from hydra import compose, initialize

    (path,) = faceedit_config_searchpath()
    with initialize(version_base="1.3", config_path=None):
        cfg = compose(overrides=[f"hydra.searchpath=[{path}]", "+embedder=insightface"])
    params = OmegaConf.to_container(cfg.embedder.params)
    assert cfg.embedder.name == "insightface"

    # Every constructor parameter is in the config entry with the same default, and nothing else.
    signature = inspect.signature(InsightFaceEmbedder)
    defaults = {name: p.default for name, p in signature.parameters.items()}
    defaults["providers"] = list(defaults["providers"])
    assert params == defaults
    text = (PLUGIN_ROOT / "faceedit_bench_insightface/conf/embedder/insightface.yaml").read_text()
    text = text.splitlines()
    for name in params:
        line = next(i for i, t in enumerate(text) if t.strip().startswith(f"{name}:"))
        assert text[line - 1].strip().startswith("#"), f"param {name} has no comment"

    registry = Registry()
    faceedit_register_embedders(register=Register(registry["embedders"], "insightface"))
    params["model_dir"] = str(make_pack(tmp_path / "buffalo_l"))
    embedder = registry.create("embedders", cfg.embedder.name, params)
    assert isinstance(embedder, InsightFaceEmbedder) and isinstance(embedder, FaceEmbedder)
    assert embedder.describe()["det_size"] == [640, 640]
