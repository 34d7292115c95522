"""A command that makes no provider call needs no API key: ``merge``, ``results``, ``compare``, ``report``,
``export-replay``, ``submit``, ``leaderboard build``, ``ls``, ``testset``, ``plugins`` all run on a workspace of
hosted runs with every key unset; and ``merge`` never makes a call, even with the key set."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from faceedit_bench.cli import main
from faceedit_bench.plugin import manager
from tests.fakes.gemini import gemini_server
from tests.test_hosted_run import GEMINI_KEY, gemini_judge, nano_banana, run


@pytest.fixture
def sharded(plugins, compose, synthetic, tmp_path, monkeypatch):
    """Two finished shards of a run with a hosted editor and a hosted judge (the fake Gemini API)."""
    monkeypatch.setattr(manager, "get_plugins", lambda: plugins)  # the CLI sees the test plugin too
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    with gemini_server(api_key=GEMINI_KEY) as server:
        hosted = [*synthetic, *nano_banana(server), *gemini_judge(server), "testset=pose", "run.max_sessions=1",
                  "analysis.n_resamples=99"]
        for shard in ("0/2", "1/2"):
            run(plugins, compose, *hosted, f"run.shard={shard}")
        yield server, tmp_path / "ws"


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
