"""The plugin as the host sees it: packaging, discovery, config entries, import cost, and an
OpenAI-compatible server selected by configuration alone."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from faceedit_bench_openai.judge import OpenAIJudge

from faceedit_bench.api import JudgeRequest, Outcome
from faceedit_bench.api.testing import PluginDistributionContract, gradient_image
from tests.fakes.openai import openai_server

PLUGIN_ROOT = Path(__file__).resolve().parents[1]
CONF = PLUGIN_ROOT / "faceedit_bench_openai" / "conf"


@pytest.fixture(scope="module")
def openai_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                    str(PLUGIN_ROOT)], check=True, capture_output=True)
    (built,) = out.glob("faceedit_bench_openai-*.whl")
    return built


class _OpenAIDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-openai"
    module = "faceedit_bench_openai"
    dependencies = ("openai",)

    @pytest.fixture
    def wheel(self, openai_wheel: Path) -> Path:  # one build for both components
        return openai_wheel


class TestJudgeDistribution(_OpenAIDistribution):
    group, kind, component = "judge", "judges", "openai"


class TestEditorDistribution(_OpenAIDistribution):
    group, kind, component = "editor", "editors", "gpt_image"
    entry_point = "openai"


def test_loading_the_plugin_does_not_import_the_sdk() -> None:
    code = ("import sys, faceedit_bench_openai, faceedit_bench_openai.editor, faceedit_bench_openai.judge\n"
            "assert 'openai' not in sys.modules, 'openai imported at plugin import time'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _entry(name: str) -> dict[str, Any]:
    return yaml.safe_load((CONF / "judge" / f"{name}.yaml").read_text())


def test_compatible_entry_is_the_openai_judge_with_other_params() -> None:
    entry = _entry("openai_compatible")
    assert entry["name"] == "openai"
    assert set(entry["params"]) == {f.name for f in dataclasses.fields(OpenAIJudge.params_type)}
    assert entry["params"]["base_url"].endswith("/v1") and entry["params"]["api_key_env"] != "OPENAI_API_KEY"


def test_compatible_server_works_from_config_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    params = _entry("openai_compatible")["params"]
    with openai_server(api_key="vllm-local-key") as fake:
        monkeypatch.setenv(params["api_key_env"], "vllm-local-key")
        judge = OpenAIJudge(**{**params, "base_url": f"{fake.url}/v1"})
        schema = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
                  "required": ["score"]}
        reply = asyncio.run(judge.ajudge(JudgeRequest("Score it.", (gradient_image(1),), schema, "s", 3)))
        sent = fake.last("/v1/chat/completions")
    assert reply.outcome is Outcome.OK and reply.text == '{"score": 5}'
    assert sent.fields["model"] == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert sent.schema == {"name": "s", "schema": schema, "strict": False}  # as given: the server enforces it
    assert judge.prices == {} and judge.limits.requests_per_minute is None
