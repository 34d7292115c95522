"""An arena over two real runs, attached to them; rerunning a run afterwards (as ``make run`` does) keeps the arena
in its report.json and report.html, and its results digest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from faceedit_bench_arena.arena import ArenaSettings, run_arena
from faceedit_bench_arena.attach import attach
from faceedit_bench_arena.stored_runs import build_pool

from faceedit_bench.api import registered
from faceedit_bench.testing import results_digest, run_config

sys.path.insert(0, str(Path(__file__).parent))
from test_arena_runs import FAST, KEY, KEY_ENV, brighter_wins  # noqa: E402

from tests.conftest import compose, plugins, synthetic  # noqa: E402, F401
from tests.fakes.openai import openai_server  # noqa: E402


@pytest.mark.slow(seconds=20)
def test_rerunning_a_run_keeps_the_arena_attached_to_it(plugins, compose, synthetic, tmp_path,  # noqa: F811
                                                        monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    common = (*synthetic, "testset=hair", "run.max_faces=2", "run.max_sessions=2", "analysis.n_resamples=99")
    configs = {editor: (*common, f"editor={editor}", *extra)
               for editor, extra in (("identity", ()), ("noise", ("+editor.params.strength=60",)))}
    reports = {e: run_config(compose(*o), plugins) for e, o in configs.items()}
    runs = sorted((tmp_path / "ws" / "runs").iterdir())
    with openai_server(api_key=KEY, judge_answer=brighter_wins) as server:
        judge = registered("judges", "openai")(base_url=f"{server.url}/v1", api_key_env=KEY_ENV, limits=FAST)
        part, _ = run_arena(runs, judge, "openai", ArenaSettings(budget_calls=40, batch=10, warmup=5,
                                                                 n_resamples=50, n_permutations=19))
    assert all("not tracked" in line for line in attach(part, build_pool(runs).runs))

    again = run_config(compose(*configs["noise"]), plugins)
    (noise_dir,) = [r for r in runs if r.name.startswith("noise")]
    stored = json.loads((noise_dir / "report.json").read_text())
    assert stored["arena"]["editor"] == again["arena"]["editor"] == "noise"
    assert stored["arena"]["criteria"] == part["criteria"] and "arena" in stored["attached"]
    page = (noise_dir / "report.html").read_text()
    assert 'id="arena"' in page
    assert 'alt="Arena ratings with intervals" src="data:image/png;base64,iVBOR' in page  # plot_png's bytes, shown
    assert results_digest(again) == results_digest(reports["noise"])  # a tracker has nothing new to log
    assert again["run"]["wall_time_s"] == reports["noise"]["run"]["wall_time_s"]
