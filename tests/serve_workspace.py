"""A small real workspace for the web app's tests: two offline runs of the synthetic dataset (a scripted editor
with a refusal and a failure, and the identity editor), the first judged by a fake Gemini whose answers carry
reasoning text, so every part of a session page has something to show."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.fakes.answers import example_from_schema

KEY = "test-gemini-key-for-serve"
#: Every judge answer's reasoning starts with this, so a test finds it on the page.
REASONING = "The judge's own reasoning:"
FAST = ["limits.max_attempts=2", "limits.backoff_initial_s=0.01", "limits.requests_per_minute=6000",
        "limits.tokens_per_minute=null"]
SCRIPT = "{pose-01/2:refused,pose-03/4:api_error}"


def judge_answer(request: dict[str, Any]) -> str:
    schema = request["generationConfig"].get("responseJsonSchema") or {}
    answer = example_from_schema(schema)
    for key in answer:
        if isinstance(answer[key], str) and "reason" in key:
            answer[key] = f"{REASONING} step looks edited as asked ({len(json.dumps(request)) % 97})."
    return json.dumps(answer)


def make_workspace(base: Path, *, faces: int = 3, sessions: int = 3) -> Path:
    """Run the two experiments into ``base/ws``; returns the workspace."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir, register_configs
    from tests import fake_plugin
    from tests.fakes.gemini import gemini_server

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    register_configs(plugins)
    common = [f"run.workspace={base / 'ws'}", "run.progress=false", "dataset=synthetic",
              f"+dataset.params.root={base / 'faces'}", f"+dataset.params.n={faces}", "embedder=pixel",
              "tracking=none", "run.workers=1", "testset=pose", f"run.max_sessions={sessions}",
              "analysis.n_resamples=99"]
    old = os.environ.get("GEMINI_API_KEY")
    os.environ["GEMINI_API_KEY"] = KEY
    try:
        with gemini_server(api_key=KEY, judge_answer=judge_answer) as server, \
                initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            judged = ["judge=gemini", f"judge.params.base_url={server.url}", *[f"judge.params.{s}" for s in FAST]]
            for overrides in ([*common, "editor=scripted", f"+editor.params.script={SCRIPT}",
                               "+editor.params.noise=8", *judged],
                              [*common, "editor=identity"]):
                run_experiment(build_experiment(compose(config_name="config", overrides=overrides), plugins), plugins)
    finally:
        if old is None:
            os.environ.pop("GEMINI_API_KEY", None)
        else:
            os.environ["GEMINI_API_KEY"] = old
    return base / "ws"
