"""The distribution: packaging, entry-point discovery and config entry (shared contract),
plus the config entry building a working embedder through the registry."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from faceedit_bench.api import FaceEmbedder, Register
from faceedit_bench.api.testing import PluginDistributionContract
from faceedit_bench.testing import Registry


class TestInsightFaceDistribution(PluginDistributionContract):
    plugin_root = Path(__file__).resolve().parents[1]
    distribution = "faceedit-bench-insightface"
    module = "faceedit_bench_insightface"
    group, kind, component = "embedder", "embedders", "insightface"
    dependencies = ("insightface", "onnxruntime", "numpy")


def test_config_entry_composes_and_builds_the_embedder(tmp_path):
    from faceedit_bench_insightface import faceedit_config_searchpath, faceedit_register_embedders
    from faceedit_bench_insightface.embedder import InsightFaceEmbedder
    from fake_buffalo_l import make_pack
    from hydra import compose, initialize

    (path,) = faceedit_config_searchpath()
    with initialize(version_base="1.3", config_path=None):
        cfg = compose(overrides=[f"hydra.searchpath=[{path}]", "+embedder=insightface"])
    params = OmegaConf.to_container(cfg.embedder.params)
    params["model_dir"] = str(make_pack(tmp_path / "buffalo_l"))
    registry = Registry()
    faceedit_register_embedders(register=Register(registry["embedders"], "insightface"))
    embedder = registry.create("embedders", cfg.embedder.name, params)
    assert isinstance(embedder, InsightFaceEmbedder) and isinstance(embedder, FaceEmbedder)
    assert embedder.describe()["det_size"] == [640, 640]
