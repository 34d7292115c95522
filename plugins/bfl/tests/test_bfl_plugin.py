"""The plugin as the host sees it: packaging, discovery, config entries, import cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from faceedit_bench.api.testing import PluginDistributionContract

PLUGIN_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bfl_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                    str(PLUGIN_ROOT)], check=True, capture_output=True)
    (built,) = out.glob("faceedit_bench_bfl-*.whl")
    return built


class _BflDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-bfl"
    module = "faceedit_bench_bfl"
    group, kind = "editor", "editors"
    entry_point = "bfl"
    dependencies = ("httpx2",)

    @pytest.fixture
    def wheel(self, bfl_wheel: Path) -> Path:  # one build for every editor
        return bfl_wheel


class TestKontextPro(_BflDistribution):
    component = "kontext_pro"


class TestKontextMax(_BflDistribution):
    component = "kontext_max"


class TestFlux2Pro(_BflDistribution):
    component = "flux2_pro"


class TestFlux2Flex(_BflDistribution):
    component = "flux2_flex"


def test_loading_the_plugin_does_not_import_the_http_client() -> None:
    code = ("import sys, faceedit_bench_bfl, faceedit_bench_bfl.editor\n"
            "assert 'httpx2' not in sys.modules, 'httpx2 imported at plugin import time'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_plugin_imports_the_core_through_its_public_api_only() -> None:
    package = PLUGIN_ROOT / "faceedit_bench_bfl"
    for path in package.rglob("*.py"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(("from faceedit_bench", "import faceedit_bench")) and "faceedit_bench_bfl" not in \
                    stripped:
                assert stripped.startswith(("from faceedit_bench.api import", "from faceedit_bench.api.images import")), \
                    f"{path.name}: {stripped}"
