"""The plugin as the host sees it: packaging, discovery, config entries, import cost, ready entries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from faceedit_bench_replicate.editor import PINNED

from faceedit_bench.api.testing import PluginDistributionContract

PLUGIN_ROOT = Path(__file__).resolve().parents[1]
CONF = PLUGIN_ROOT / "faceedit_bench_replicate" / "conf" / "editor"


class TestReplicateDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-replicate"
    module = "faceedit_bench_replicate"
    group, kind, component = "editor", "editors", "replicate"
    dependencies = ("replicate",)


def test_loading_the_plugin_does_not_import_the_sdk() -> None:
    code = ("import sys, faceedit_bench_replicate, faceedit_bench_replicate.editor\n"
            "assert 'replicate' not in sys.modules, 'replicate imported at plugin import time'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_plugin_imports_only_the_public_api() -> None:
    for source in (PLUGIN_ROOT / "faceedit_bench_replicate").rglob("*.py"):
        for line in source.read_text().splitlines():
            if line.lstrip().startswith(("from faceedit_bench", "import faceedit_bench")) and \
                    "faceedit_bench_replicate" not in line:
                assert line.strip().startswith(("from faceedit_bench.api import", "from faceedit_bench.api.images import")), \
                    f"{source.name}: {line}"


@pytest.mark.parametrize("entry", sorted(p.stem for p in CONF.glob("replicate_*.yaml")))
def test_ready_entries_are_pinned_and_say_whether_their_version_was_verified(entry: str) -> None:
    text = (CONF / f"{entry}.yaml").read_text()
    params = yaml.safe_load(text)["params"]
    assert PINNED.match(params["model"]), params["model"]
    # A version id not read on replicate.com itself is labelled as such, never passed off as checked.
    assert "replicate.com/" in text
    if "NOT VERIFIED" not in text:
        assert f"replicate.com/{params['model'].split(':')[0]}/versions" in text
