"""The plugin as the host sees it: packaging, discovery, config entries, import cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from faceedit_bench.api.testing import PluginDistributionContract

PLUGIN_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def byteplus_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                    str(PLUGIN_ROOT)], check=True, capture_output=True)
    (built,) = out.glob("faceedit_bench_byteplus-*.whl")
    return built


class _ByteplusDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-byteplus"
    module = "faceedit_bench_byteplus"
    entry_point = "byteplus"
    group, kind = "editor", "editors"
    dependencies = ("byteplus-python-sdk-v2",)

    @pytest.fixture
    def wheel(self, byteplus_wheel: Path) -> Path:  # one build for both editors
        return byteplus_wheel


class TestSeedEditDistribution(_ByteplusDistribution):
    component = "seededit"


class TestSeedreamDistribution(_ByteplusDistribution):
    component = "seedream"


def test_loading_the_plugin_does_not_import_the_sdk() -> None:
    code = ("import sys, faceedit_bench_byteplus, faceedit_bench_byteplus.editor\n"
            "assert 'byteplussdkarkruntime' not in sys.modules, 'the Ark runtime imported at plugin import time'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_plugin_imports_only_the_public_api() -> None:
    for source in (PLUGIN_ROOT / "faceedit_bench_byteplus").rglob("*.py"):
        for line in source.read_text().splitlines():
            if line.lstrip().startswith(("from faceedit_bench", "import faceedit_bench")) and \
                    "faceedit_bench_byteplus" not in line:
                assert line.strip().startswith(("from faceedit_bench.api import", "from faceedit_bench.api.images import")), \
                    f"{source.name}: {line}"
