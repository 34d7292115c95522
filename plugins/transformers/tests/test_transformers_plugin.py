"""The distribution: packaging, entry-point discovery and config entry (shared contract)."""

from __future__ import annotations

from pathlib import Path

from faceedit_bench.api.testing import PluginDistributionContract


class TestTransformersDistribution(PluginDistributionContract):
    plugin_root = Path(__file__).resolve().parents[1]
    distribution = "faceedit-bench-transformers"
    module = "faceedit_bench_transformers"
    group, kind, component = "judge", "judges", "qwen_vl"
    entry_point = "transformers"  # named after the library, like the diffusers plugin; the judge is qwen_vl
    dependencies = ("torch", "transformers", "accelerate")
