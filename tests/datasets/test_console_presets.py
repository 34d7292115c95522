"""The console summary of the presets the other end-to-end tests do not run (issue 25, item 8): the default
experiment and ``experiment=paper_celeba`` (on tiny CelebA, the Gemini judge behind its fake server) read at
100 columns. paper_b, paper_b_mitigation and paper_b_winobias are checked in test_paper_b_presets.py,
creval in test_creval.py, smoke through the console script in test_run_command.py."""

from __future__ import annotations

import pytest

from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.console_fit import assert_summary_fits
from tests.fakes.gemini import gemini_server
from tests.test_reference_run import judge_answer

KEY = "console-presets-gemini-key"
FAST = ["run.workers=1", "tracking=none"]
LIMITS = ["max_attempts=2", "backoff_initial_s=0.01", "requests_per_minute=6000", "tokens_per_minute=null"]


def test_the_default_experiment(plugins, compose):
    pytest.importorskip("faceedit_bench_dlib.embedder")  # the default embedder
    exp = build_experiment(compose(*FAST, "run.max_faces=2", "run.max_sessions=3"), plugins)
    report = run_experiment(exp, plugins)
    assert report["components"]["dataset"]["name"] == "sample" and report["counts"]["sessions"]["included"] == 6
    text = assert_summary_fits(report, exp.info.output_dir)
    assert "drop_fss" in text and "gender=female" in text


def test_paper_celeba(plugins, compose, make_celeba, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, judge_answer=judge_answer) as server:
        cfg = compose("experiment=paper_celeba", f"dataset.params.root={make_celeba()}",
                      "+dataset.params.partition=all", "dataset.params.min_base_fss=null", "embedder=pixel", "testset=pose", *FAST,
                      f"judge.params.base_url={server.url}", *[f"judge.params.limits.{x}" for x in LIMITS])
        exp = build_experiment(cfg, plugins)
        report = run_experiment(exp, plugins)
    assert report["components"]["judge"]["name"] == "gemini" and {"sc", "oer"} <= set(report["metrics"])
    text = assert_summary_fits(report, exp.info.output_dir)
    assert "judge: gemini · gemini-2.5-flash · 127.0.0.1:" in text  # the calls table's legend, by role
