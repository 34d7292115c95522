"""A whole benchmark run with editor=nano_banana against the fake Gemini API: the engine finds the
async editor, runs it through the execution layer, and records outcomes, usage and cost."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from faceedit_bench.testing import compose_config, load_plugins, run_config


def test_a_run_with_a_refusal_and_a_rate_limit(api_key, fake, tmp_path: Path):
    from tests import fake_plugin

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    cfg = compose_config(plugins, [
        f"run.workspace={tmp_path / 'ws'}", "run.progress=false", "run.workers=1", "run.max_sessions=1",
        "dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "+dataset.params.n=1",
        "embedder=pixel", "tracking=none", "testset=pose",
        "editor=nano_banana", f"editor.params.base_url={fake.url}",
        "editor.params.limits.backoff_initial_s=0.01", "editor.params.limits.backoff_max_s=0.1",
    ])
    # One face: its steps are sequential, so the scripted faults meet the steps named here.
    # (With two faces edited concurrently, arrival order would decide which face meets them.)
    fake.script(["429", None, "block"])  # step 1 rate-limited then ok, step 2 refused
    report = run_config(cfg, plugins)

    assert report["counts"]["steps"] == {"ok": 1, "refused": 1, "skipped": 2}
    assert fake.calls == 3  # 2 edits + 1 retried attempt; skipped steps cost nothing
    rows = sqlite3.connect(tmp_path / "ws" / "ledger.sqlite").execute(
        "SELECT outcome, reason, usage FROM edits").fetchall()
    by_outcome = {outcome: (reason, json.loads(usage)) for outcome, reason, usage in rows}
    ok_usage = by_outcome["ok"][1]
    assert ok_usage["model_version"] == "gemini-2.5-flash-image" and ok_usage["cost_usd"] > 0.03
    assert by_outcome["refused"][0] == "prompt blocked: SAFETY"
