"""The distribution faceedit-bench-creval: its wheel carries the entry point, the code, the presets and every
data file the package reads (protocol data, templates, schema, fidelity table), and it is found through its
entry point like a third party's plugin."""

from __future__ import annotations

import inspect
import zipfile
from pathlib import Path

import yaml

from faceedit_bench.api.testing import PluginDistributionContract

PLUGIN_ROOT = Path(__file__).resolve().parents[1]
DATA = ("data/protocol.json", "html/creval.html.j2", "schemas/creval.schema.json", "fidelity/creval.yaml",
        "conf/experiment/creval.yaml", "conf/judge/creval_gpt4o.yaml", "conf/dataset/creval_bench.yaml")


class TestCrevalDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-creval"
    module = "faceedit_bench_creval"
    group, kind, component = "testset", "testsets", "creval_bench"
    entry_point = "creval"
    dependencies = ("pydantic",)

    def test_config_entry_matches_the_factory(self) -> None:
        """The test set's entry passes the dataset's root to the factory's one parameter."""
        from faceedit_bench_creval.dataset import creval_bench_testset

        entry = yaml.safe_load((self.plugin_root / self.config_path).read_text())
        assert entry == {"name": "creval_bench", "params": {"root": "${dataset.params.root}"}}
        assert list(inspect.signature(creval_bench_testset).parameters) == ["root"]

    def test_wheel_holds_every_data_file(self, wheel: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
        assert {f"{self.module}/{path}" for path in DATA} <= names
