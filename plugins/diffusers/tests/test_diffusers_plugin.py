"""The distribution: packaging and discovery (shared contract), and every config entry
matching its factory."""

from __future__ import annotations

from pathlib import Path

import pytest
from faceedit_bench_diffusers import EDITORS

from faceedit_bench.api.testing import PluginDistributionContract

PLUGIN_ROOT = Path(__file__).resolve().parents[1]


class TestDiffusersDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-diffusers"
    module = "faceedit_bench_diffusers"
    group, kind, component = "editor", "editors", "flux_kontext_dev"
    entry_point = "diffusers"  # one distribution, six editors: its entry point is not an editor's name
    dependencies = ("torch", "diffusers", "transformers", "accelerate")

    def test_wheel_holds_entry_point_code_and_config(self, wheel: Path) -> None:
        import zipfile

        super().test_wheel_holds_entry_point_code_and_config(wheel)
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
        for editor in EDITORS:
            assert f"{self.module}/conf/editor/{editor}.yaml" in names

    def test_discovered_through_its_entry_point(self, wheel: Path, tmp_path: Path, monkeypatch) -> None:
        from faceedit_bench.testing import load_plugins

        super().test_discovered_through_its_entry_point(wheel, tmp_path, monkeypatch)
        plugins = load_plugins()
        for editor in EDITORS:
            assert plugins.registry.get("editors", editor).provider == self.entry_point


@pytest.mark.parametrize("editor", sorted(set(EDITORS) - {"flux_kontext_dev"}))
def test_every_config_entry_matches_its_factory(editor: str) -> None:
    check = TestDiffusersDistribution()
    check.component = editor
    check.test_config_entry_matches_the_factory()


def test_config_entries_compose_with_hydra() -> None:
    from faceedit_bench_diffusers import faceedit_config_searchpath
    from hydra import compose, initialize

    (path,) = faceedit_config_searchpath()
    with initialize(version_base="1.3", config_path=None):
        for editor in EDITORS:
            cfg = compose(overrides=[f"hydra.searchpath=[{path}]", f"+editor={editor}"])
            assert cfg.editor.name == editor and cfg.editor.params.allow_download is False
