"""Cost before paying (issue 41, item 10): ``faceedit-bench plan`` and ``run.dry_run=true`` make no provider call,
and what they count is what a run then does: the fake providers receive exactly the planned calls, and after the
run every planned call is cached."""

from __future__ import annotations

from typing import Any

import pytest

from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.run.plan import plan_run
from faceedit_bench.testing import run_cli
from tests.fakes.gemini import gemini_server

KEY = "AIza-plan-test-key"
FAST = ["limits.max_attempts=2", "limits.requests_per_minute=6000", "limits.tokens_per_minute=null",
        "limits.backoff_initial_s=0.01", "limits.timeout_s=5"]


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, retry_after=0.01) as server:
        yield server


def hosted(server: Any) -> list[str]:
    """A Gemini editor and judge at the fake server, SC and the state tracker asked (the default judge metrics)."""
    return ["editor=nano_banana", f"editor.params.base_url={server.url}", "judge=gemini",
            f"judge.params.base_url={server.url}", "testset=multi_axis", "run.max_faces=2", "run.max_sessions=2",
            *(f"{g}.params.{s}" for g in ("editor", "judge") for s in FAST)]


def counts(plan: Any) -> dict[str, tuple[int, int]]:
    return {row.role: (row.calls, row.cached) for row in plan.rows}


def test_the_plan_counts_the_calls_a_run_then_makes_and_after_it_all_are_cached(plugins, compose, synthetic,
                                                                                  gemini):
    cfg = compose(*synthetic, *hosted(gemini))
    before = plan_run(build_experiment(cfg, plugins))
    assert gemini.calls == 0
    edits = 2 * 2 * 4  # faces x sessions x steps
    assert counts(before)["editor"] == (edits, 0)
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    assert report["counts"]["steps"] == {"ok": edits}
    made = list(gemini.gemini_calls)
    asked_edits = sum(c.wants_image for c in made)
    assert asked_edits == edits == report["run"]["computed"]["edit_calls"]
    judge_calls, judge_cached = counts(before)["judge"]
    # SC on 4 steps and the state tracker on 5 images (I_0 once per face) per session, and the 3 sanity anchors
    assert judge_cached == 0 and judge_calls == 2 * (2 * (4 + 4) + 1) + 3 == 37
    assert judge_calls == len(made) - asked_edits == report["run"]["computed"]["judge_calls"]
    assert before.total_usd() is None  # the judge declares no usage per call: unknown, never 0

    after = plan_run(build_experiment(cfg, plugins))
    assert counts(after) == {"editor": (edits, edits), "judge": (judge_calls, judge_calls)}
    assert after.total_usd() == 0  # nothing new to pay; usage now measured in the workspace
    assert "measured on" in after.render()
    calls = gemini.calls
    run_experiment(build_experiment(cfg, plugins), plugins)
    assert gemini.calls == calls  # and indeed the rerun paid nothing


def test_plan_and_dry_run_print_the_plan_and_call_nothing(plugins, synthetic, gemini, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("faceedit_bench.plugin.manager.get_plugins", lambda: plugins)  # with the test's dataset
    monkeypatch.delenv("GEMINI_API_KEY")  # a plan needs no key
    workspace = tmp_path / "ws"
    args = [*synthetic, *hosted(gemini), f"run.workspace={workspace}", "run.progress=false"]
    for command in (["plan", *args], ["run", *args, "run.dry_run=true"]):
        with pytest.raises(SystemExit) as done:
            run_cli(command)
        out = capsys.readouterr().out
        assert done.value.code == 0 and gemini.calls == 0 and not workspace.exists()
        assert "Plan: 2 faces x 2 sessions; no provider call was made." in out
        assert "nano_banana" in out and "gemini-2.5-flash-image" in out and "prices as of 2025-11-20" in out


def test_a_default_rate_limit_that_makes_the_run_long_is_named_with_its_setting(plugins, compose, synthetic,
                                                                                monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-plan-test")
    plan = plan_run(build_experiment(compose(*synthetic, "editor=gpt_image", "testset=multi_axis",
                                             "run.max_faces=4"), plugins))
    (warning,) = plan.warnings()  # 4 faces x 10 sessions x 4 steps at gpt_image's default 5 requests/minute
    assert warning == ("editor gpt_image's default limit of 5 requests/minute makes its 160 new calls take at least 32.0 min; "
                       "if your account allows more, raise it with editor.params.limits.requests_per_minute=<n>")
    slower = plan_run(build_experiment(compose(*synthetic, "editor=gpt_image", "testset=multi_axis", "run.max_faces=4",
                                               "editor.params.limits.requests_per_minute=4"), plugins))
    assert slower.warnings()[0].startswith("editor gpt_image's limit of 4 requests/minute makes its 160 new calls")
    (row,) = plan.rows
    assert row.cost_usd() == pytest.approx(160 * (50 * 5e-6 + 4483 * 1e-5 + 4160 * 4e-5))  # list prices, 2025-10


def test_ls_says_for_each_editor_and_judge_hosted_or_local_its_key_and_price(capsys, monkeypatch):
    from faceedit_bench.cli import main

    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)  # ls needs no key
    assert main(["ls", "editor"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # one line per option, wrapped at the terminal's width
    assert "gpt_image hosted, key OPENAI_API_KEY, about $0.211 a call (list prices 2025-10)" in out
    assert "nano_banana hosted, key GEMINI_API_KEY or GOOGLE_API_KEY, about $0.039 a call" in out
    assert "identity local" in out
    assert main(["ls", "judge"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "paper_b_panel panel: gemini: hosted, key GEMINI_API_KEY or GOOGLE_API_KEY" in out
    assert "none no judge" in out
