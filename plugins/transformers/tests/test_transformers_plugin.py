"""The distribution: packaging, entry-point discovery and config entry (shared contract)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from faceedit_bench.testing import PluginDistributionContract


class TestTransformersDistribution(PluginDistributionContract):
    plugin_root = Path(__file__).resolve().parents[1]
    distribution = "faceedit-bench-transformers"
    module = "faceedit_bench_transformers"
    group, kind, component = "judge", "judges", "qwen_vl"
    entry_point = "transformers"  # named after the library, like the diffusers plugin; the judge is qwen_vl
    dependencies = ("torch", "transformers", "accelerate")

    def test_wheel_holds_entry_point_code_and_config(self, wheel: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
            metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert f"{self.entry_point} = {self.module}" in entry_points
        assert f"{self.config_path}" in names and f"{self.module}/conf/__init__.py" in names
        assert not any("/tests/" in n or n.endswith(".pyc") for n in names)
        for dep in ("faceedit-bench", *self.dependencies):
            assert f"Requires-Dist: {dep}" in metadata, dep

    def test_discovered_through_its_entry_point(self, wheel: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
        from faceedit_bench.plugins import load_plugins

        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("FACEEDIT_BENCH_LOAD_PLUGINS", self.entry_point)
        plugins = load_plugins()
        assert plugins.info[self.entry_point].distribution == self.distribution
        registration = plugins.registry.get(self.kind, self.component)
        assert registration.provider == self.entry_point and registration.description
        assert f"pkg://{self.module}.conf" in plugins.searchpath()
