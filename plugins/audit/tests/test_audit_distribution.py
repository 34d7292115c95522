"""The faceedit-bench-audit distribution: its wheel carries the entry point, the code, the presets, the
published data, the sections' schemas and templates; it is found through its entry point like any
third-party plugin, and its dataset's config entry lists every parameter with its default."""

from __future__ import annotations

import zipfile
from pathlib import Path

from faceedit_bench.api.testing import PluginDistributionContract

PLUGIN_ROOT = Path(__file__).resolve().parents[1]


class TestAuditDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-audit"
    module = "faceedit_bench_audit"
    group, kind, component = "dataset", "datasets", "fairface_grid"
    entry_point = "audit"
    dependencies = ("scipy", "statsmodels")

    def test_the_wheel_carries_the_protocols_files(self, wheel):
        names = set(zipfile.ZipFile(wheel).namelist())
        for path in ("conf/experiment/paper_b.yaml", "conf/judge/paper_b_panel.yaml", "conf/testset/winobias.yaml",
                     "data/paper_b/exp1_amt_sampled.csv", "data/testsets/diagnostic.json",
                     "data/fidelity/paper_b.yaml", "schemas/audit.schema.json", "templates/audit.html.j2",
                     "templates/human.html.j2"):
            assert f"{self.module}/{path}" in names, path

    def test_config_entry_matches_the_factory(self, compose):
        """The entry takes the common dataset parameters from ``/face_dataset_params@params`` (its defaults
        list), as the core's datasets do: the composed entry, not the file alone, lists the parameters. The
        selection's own parameters are set with ``+dataset.params.<name>`` (as before the move); they are named
        here so that a change of either side fails."""
        import inspect

        from faceedit_bench.api import registered

        factory = registered(self.kind, self.component)
        params = compose(f"{self.group}={self.component}").dataset.params
        defaults = {n: p.default for n, p in inspect.signature(factory).parameters.items()}
        unlisted = {"split", "padding", "seed", "detector", "require_approval"}
        assert set(params) == set(defaults) - unlisted
        for name, default in defaults.items():
            if name in params and default is not inspect.Parameter.empty:
                assert params[name] == default, name
