"""A command that makes no provider call needs no API key: ``merge``, ``results``, ``compare``, ``report``,
``export-replay``, ``submit``, ``leaderboard build``, ``ls``, ``testset``, ``plugins`` all run on a workspace of
hosted runs with every key unset; and ``merge`` never makes a call, even with the key set."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest

from faceedit_bench.cli import main
from faceedit_bench.plugin import manager
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.fakes.gemini import gemini_server
from tests.module_runs import composed, plugins_for_tests
from tests.test_hosted_run import GEMINI_KEY, gemini_judge, nano_banana


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Two finished shards of a run with a hosted editor and a hosted judge (the fake Gemini API, serving the
    module), made once: each test changes a copy of the workspace."""
    tmp, plugins = tmp_path_factory.mktemp("no-key-shards"), plugins_for_tests()
    with pytest.MonkeyPatch.context() as env, gemini_server(api_key=GEMINI_KEY) as server:
        env.setenv("GEMINI_API_KEY", GEMINI_KEY)
        hosted = ["dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}", "embedder=pixel", "tracking=none",
                  "run.workers=1", *nano_banana(server), *gemini_judge(server), "testset=pose",
                  "run.max_sessions=1", "analysis.n_resamples=99"]
        for shard in ("0/2", "1/2"):
            run_experiment(build_experiment(composed(tmp / "ws", *hosted, f"run.shard={shard}"), plugins), plugins)
        yield server, tmp / "ws", plugins


@pytest.fixture
def sharded(shards, tmp_path, monkeypatch):
    """The shards' server and a copy of their workspace, the CLI seeing the test plugin too."""
    server, ws, plugins = shards
    monkeypatch.setattr(manager, "get_plugins", lambda: plugins)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    return server, shutil.copytree(ws, tmp_path / "ws")


def without_keys(monkeypatch) -> None:
    for name in [n for n in os.environ if n.endswith(("_API_KEY", "_TOKEN", "_KEY"))]:
        monkeypatch.delenv(name)


def test_commands_that_make_no_provider_call_run_without_any_api_key(sharded, tmp_path, monkeypatch, capsys):
    server, ws = sharded
    made = server.calls
    without_keys(monkeypatch)
    assert main(["merge", str(ws)]) == 0, capsys.readouterr().err
    (run_dir,) = (ws / "runs").iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["run"]["computed"] == {"embeddings": 0, "edit_calls": 0, "judge_calls": 0}
    (shard,) = ws.glob("shards/*/shard-0-of-2")
    commands = [["results", str(ws), "--out", str(tmp_path / "steps.csv")], ["compare", str(run_dir), str(shard)],
                ["report", str(run_dir)], ["export-replay", str(run_dir), str(tmp_path / "replay")],
                ["submit", str(run_dir), "--out", str(tmp_path / "lb" / "submissions")],
                ["leaderboard", "build", "--dir", str(tmp_path / "lb")], ["ls"], ["testset", "check", "pose"],
                ["plugins"]]
    for command in commands:
        assert main(command) == 0, (command, capsys.readouterr().err[-2000:])
    assert "API key" not in capsys.readouterr().err
    assert server.calls == made  # none of them called the provider


def test_merge_never_calls_the_provider_even_with_the_key_set(sharded, capsys):
    server, ws = sharded
    made = server.calls
    (shard,) = (ws / "shards").glob("*/shard-0-of-2/ledger.sqlite")
    db = sqlite3.connect(shard)  # a step the shard's ledger lost: the merged run would have to make it
    db.execute("DELETE FROM edits WHERE edit_key = (SELECT edit_key FROM edits ORDER BY edit_key LIMIT 1)")
    db.commit()
    db.close()
    assert main(["merge", str(ws)]) == 2
    err = capsys.readouterr().err
    assert "faceedit-bench merge makes no provider calls" in err and "Traceback" not in err
    assert server.calls == made
