"""The plugin as the host sees it: hooks, config entries, packaging, import cost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import faceedit_bench_gemini
import pytest
from faceedit_bench_gemini.editor import NanoBananaEditor
from faceedit_bench_gemini.judge import GeminiJudge

from faceedit_bench.api import Register
from faceedit_bench.api.testing import EditorContract, PluginDistributionContract
from faceedit_bench.testing import Registry, compose_config, load_plugins

PLUGIN_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gemini_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once for both contracts."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                    str(PLUGIN_ROOT)], check=True, capture_output=True)
    (built,) = out.glob("faceedit_bench_gemini-*.whl")
    return built


class _GeminiDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-gemini"
    module = "faceedit_bench_gemini"
    dependencies = ("google-genai",)

    @pytest.fixture(scope="class")
    @classmethod
    def wheel(cls, gemini_wheel: Path) -> Path:
        return gemini_wheel


class TestGeminiJudgeDistribution(_GeminiDistribution):
    group, kind, component = "judge", "judges", "gemini"


class TestNanoBananaDistribution(_GeminiDistribution):
    group, kind, component = "editor", "editors", "nano_banana"
    entry_point = "gemini"  # one entry point registers both components


class TestNanoBananaEditorContract(EditorContract):
    @pytest.fixture
    def editor(self, make_editor, fake):
        return make_editor()


def test_registers_both_components_lazily():
    registry = Registry()
    faceedit_bench_gemini.faceedit_register_editors(register=Register(registry["editors"], "gemini"))
    faceedit_bench_gemini.faceedit_register_judges(register=Register(registry["judges"], "gemini"))
    assert registry.get("editors", "nano_banana").target == "faceedit_bench_gemini.editor:NanoBananaEditor"
    assert registry.get("judges", "gemini").target == "faceedit_bench_gemini.judge:GeminiJudge"
    assert faceedit_bench_gemini.faceedit_config_searchpath() == ["pkg://faceedit_bench_gemini.conf"]


def test_hydra_composes_and_builds_both_components(api_key, fake):
    plugins = load_plugins()
    cfg = compose_config(plugins, [
        "editor=nano_banana", "judge=gemini", "editor.params.model=gemini-3-pro-image-preview",
        f"editor.params.base_url={fake.url}", "judge.params.limits.requests_per_minute=60",
    ])
    from omegaconf import OmegaConf

    params = OmegaConf.to_container(cfg, resolve=True)
    editor = plugins.registry.create("editors", "nano_banana", params["editor"]["params"])
    judge = plugins.registry.create("judges", "gemini", params["judge"]["params"])
    assert isinstance(editor, NanoBananaEditor) and isinstance(judge, GeminiJudge)
    assert editor.model == "gemini-3-pro-image-preview" and editor.connection.base_url == fake.url
    assert judge.limits.requests_per_minute == 60 and judge.limits.timeout_s == 60.0


def test_importing_and_building_does_not_import_the_sdk():
    code = (
        "import sys, faceedit_bench_gemini, faceedit_bench_gemini.editor, faceedit_bench_gemini.judge\n"
        "faceedit_bench_gemini.editor.NanoBananaEditor(); faceedit_bench_gemini.judge.GeminiJudge()\n"
        "assert not any(m.startswith('google.genai') for m in sys.modules), 'google.genai imported'\n"
    )
    env = {**os.environ, "GEMINI_API_KEY": "k"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
