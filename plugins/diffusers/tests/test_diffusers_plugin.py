"""The distribution: packaging and discovery (shared contract), and every config entry
matching its factory."""

from __future__ import annotations

from pathlib import Path

import pytest
from faceedit_bench_diffusers import EDITORS

from faceedit_bench.testing import PluginDistributionContract

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

        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        assert f"{self.entry_point} = {self.module}" in entry_points
        for editor in EDITORS:
            assert f"{self.module}/conf/editor/{editor}.yaml" in names
        assert not any("/tests/" in n or n.endswith(".pyc") for n in names)

    def test_discovered_through_its_entry_point(self, wheel: Path, tmp_path: Path, monkeypatch) -> None:
        import zipfile

        from faceedit_bench.plugins import load_plugins

        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("FACEEDIT_BENCH_LOAD_PLUGINS", self.entry_point)
        plugins = load_plugins()
        assert plugins.info[self.entry_point].distribution == self.distribution
        for editor in EDITORS:
            registration = plugins.registry.get("editors", editor)
            assert registration.provider == self.entry_point and registration.description
        assert f"pkg://{self.module}.conf" in plugins.searchpath()


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
