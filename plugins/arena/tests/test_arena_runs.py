"""An arena over four editors' stored runs, against a fake OpenAI judge through the real SDK."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import jsonschema
import numpy as np
import pytest
from faceedit_bench_arena.arena import ArenaSettings, human_part, run_arena
from faceedit_bench_arena.command import schema
from faceedit_bench_arena.human_votes import read_votes
from faceedit_bench_arena.pairwise_judge import CRITERIA
from faceedit_bench_arena.stored_runs import ArenaError, build_pool
from PIL import Image

from faceedit_bench.api import registered
from faceedit_bench.api.judging import JudgeSession
from faceedit_bench.testing import run_cli

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from stored_runs_fixture import write_runs  # noqa: E402

from tests.fakes.openai import _chat_images, openai_server

KEY_ENV = "FACEEDIT_TEST_OPENAI_KEY"
KEY = "sk-test-key-0123456789"
FAST = {"requests_per_minute": None, "tokens_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05,
        "timeout_s": 10.0}


def brighter_wins(body) -> str:
    _, a, b = (np.asarray(Image.open(io.BytesIO(i))).mean() for i in _chat_images(body))
    label = "A" if a > b else "B" if b > a else "both_good"
    return json.dumps({c: {"label": label, "explanation": "brighter"} for c in CRITERIA})


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with openai_server(api_key=KEY, judge_answer=brighter_wins) as fake:
        yield fake


def make_judge(server):
    return registered("judges", "openai")(base_url=f"{server.url}/v1", api_key_env=KEY_ENV, limits=FAST)


def test_four_editors_rated_with_refusals_reported_both_ways_and_a_rerun_makes_no_calls(tmp_path, server):
    ws = tmp_path / "ws"
    with JudgeSession.open(make_judge(server), "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, refuse={"good": {"f0/s1/1", "f5/s2/2"}})
    settings = ArenaSettings(budget_calls=400, batch=20, warmup=15, anchor="identity", n_resamples=200,
                             n_permutations=99, min_group_battles=10, stop_on_separation=False)
    part, log = run_arena(paths, make_judge(server), "openai", settings)
    jsonschema.validate(part, schema())
    judged = [b for b in log if not b["one_sided"]]
    overall = part["criteria"]["overall"]["ratings"]
    assert overall["order"] == ["good", "mid", "identity", "bad"]
    assert next(e for e in overall["editors"] if e["editor"] == "identity")["rating"] == 1000.0
    assert part["counts"]["one_sided"] == 2 * 3 and part["counts"]["judged"] == len(judged) <= 200
    # several rounds, each through the same judge limits: no call may fail between rounds
    assert part["sampling"]["rounds"] > 2 and part["counts"]["incomplete"] == 0 and part["sampling"]["stop"] == "budget"
    assert part["sampling"]["calls_planned"] <= 400 and part["sampling"]["calls_made"] == server.calls
    # the refusals cost 'good' under 'loss' and not under 'exclude'
    loss = {e["editor"]: e["rating"] for e in overall["editors"]}
    excl = {e["editor"]: e["rating"] for e in part["criteria"]["overall"]["ratings_other_policy"]["editors"]}
    assert loss["good"] < excl["good"]
    assert set(part["per_group"]["gender"]) == {"female", "male"} and "p_value" in part["group_tests"]["gender"]
    assert set(part["per_step"]) == {"1", "2"}
    assert part["position_bias"]["criteria"]["overall"]["decisive"] > 0
    calls = server.calls
    votes = read_votes(write_votes(tmp_path, log))
    human = human_part(part, log, votes, settings)
    assert human["agreement"]["matched"] == len(judged) and human["agreement"]["accuracy_with_ties"] == 1.0
    assert human["ranking"]["kendall_tau"] == 1.0 and set(human["agreement_per_group"]["gender"]) == {"female", "male"}
    again, _ = run_arena(paths, make_judge(server), "openai", settings)
    assert server.calls == calls and again["sampling"]["calls_made"] == 0
    assert again["criteria"] == part["criteria"]


def write_votes(tmp_path, log):
    """People who agree with the judge on every battle it judged, in LMArena's layout."""
    editors = ["identity", "good", "mid", "bad"]
    winner = {"x": "model_a", "y": "model_b", "both_good": "tie", "both_bad": "tie (bothbad)"}
    lines = ["model_a,model_b,winner,judge,input_id,identity,gender"]
    for n, b in enumerate(b for b in log if not b["one_sided"]):
        face = int(b["face"][1:])
        lines.append(f"{editors[b['x']]},{editors[b['y']]},{winner[b['verdicts']['overall']['label']]},p{n % 3},"
                     f"{b['input']},person{face // 2},{'male' if face % 4 < 2 else 'female'}")
    path = tmp_path / "votes.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_runs_on_different_test_sets_are_refused_before_any_call(tmp_path, server):
    ws = tmp_path / "ws"
    with JudgeSession.open(make_judge(server), "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"a": 100})
        paths += write_runs(ws, wj.put_image, editors={"b": 120}, testset_hash="other")
    with pytest.raises(ArenaError, match="different test sets"):
        build_pool(paths)
    assert server.calls == 0


def test_the_command_writes_the_arena_and_refuses_bad_input_with_exit_code_2(tmp_path, server, capsys,
                                                                             monkeypatch):
    """In this process, through the console script's entry function; the real process's exit status and stderr
    are the subject of the dead-endpoint test below."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    ws = tmp_path / "ws"
    with JudgeSession.open(make_judge(server), "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"a": 100, "b": 160, "c": 220})
    cmd = ["arena", "run", *map(str, paths), "--judge", "openai",
           "--judge-param", f"base_url={server.url}/v1", "--judge-param", f"api_key_env={KEY_ENV}",
           "--judge-param", "limits={requests_per_minute: null, tokens_per_minute: null}",
           "--budget", "120", "--batch", "30", "--resamples", "100", "--out", str(tmp_path / "out")]
    capsys.readouterr()
    code = run_cli(cmd)
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "Stopped:" in printed.out
    part = json.loads((tmp_path / "out" / "arena.json").read_text())
    assert part["criteria"]["overall"]["ratings"]["order"] == ["c", "b", "a"]
    attached = json.loads((paths[1] / "report.json").read_text())["arena"]
    assert attached["editor"] == "b" and attached["battle_log"] == part["battle_log"]
    assert 'id="arena"' in (paths[1] / "report.html").read_text()
    log = (tmp_path / "out" / "battles.jsonl").read_text().splitlines()
    assert len(log) == part["counts"]["judged"] + part["counts"]["one_sided"] == part["battle_log"]["entries"]
    # verify and compare read the arena's files
    verified = run_cli(["arena", "verify", str(tmp_path / "out")])
    printed = capsys.readouterr()
    assert verified == 0 and "verified" in printed.out, printed.out + printed.err
    # compare shows each run's arena rating beside its pointwise scores, and Kendall's tau between the rankings
    for path, sc in zip(paths, (50.0, 70.0, 60.0)):  # a pointwise score that swaps b and c
        report = json.loads((path / "report.json").read_text())
        report["metrics"] = {"sc": {"mean": sc, "ci_low": sc - 5, "ci_high": sc + 5, "n": 32, "higher_is_better": True}}
        (path / "report.json").write_text(json.dumps(report))
    compared = run_cli(["compare", *map(str, paths), "--json"])
    printed = capsys.readouterr()
    assert compared == 0, printed.err
    result = json.loads(printed.out)
    row = next(r for r in result["rows"] if r["label"].startswith("arena rating"))
    ratings = {e["editor"]: e["rating"] for e in part["criteria"]["overall"]["ratings"]["editors"]}
    assert [c["value"] for c in row["cells"]] == [ratings["a"], ratings["b"], ratings["c"]] and row["best"] == [2]
    tau = next(t for t in result["ranks"]["kendall"] if {t["a"], t["b"]} == {"arena_rating", "sc"})
    assert tau["tau"] == pytest.approx(1 / 3)  # one of three pairs swapped
    bad = run_cli([*cmd[:-2], "--anchor", "nobody", "--out", str(tmp_path / "out2")])
    printed = capsys.readouterr()
    assert bad == 2 and "anchor 'nobody'" in printed.err and "Traceback" not in printed.err + printed.out
    assert not (tmp_path / "out2").exists()


@pytest.mark.parametrize(("change", "message"), [
    ({"policy": "drop"}, "policy must be one of"), ({"n_resamples": 0}, "n_resamples must be at least 10"),
    ({"target_width": -5.0}, "target_width must be positive"), ({"confidence": 1.5}, "confidence must lie"),
    ({"anchor": "nobody"}, "anchor 'nobody' is not one of"), ({"budget_calls": 1}, "budget_calls must allow"),
])
def test_bad_settings_are_refused_with_what_to_change(change, message):
    with pytest.raises(ArenaError, match=message):
        ArenaSettings(**change).check(["identity", "good"])


@pytest.mark.slow(seconds=6)
def test_a_dead_judge_endpoint_ends_with_one_message_and_no_traceback(tmp_path, server):
    """``arena run`` against a closed port gives up with the endpoint's message, exit 2, and shuts its event loop
    down cleanly: no "Event loop is closed", ContextVar or other traceback after the message."""
    import socket

    ws = tmp_path / "ws"
    with JudgeSession.open(make_judge(server), "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"a": 100, "b": 160, "c": 220})
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cmd = [sys.executable, "-m", "faceedit_bench.cli", "arena", "run", *map(str, paths), "--judge", "openai",
           "--judge-param", f"base_url=http://127.0.0.1:{port}/v1", "--judge-param", f"api_key_env={KEY_ENV}",
           "--judge-param", "limits={requests_per_minute: null, tokens_per_minute: null, backoff_initial_s: 0.01, "
           "backoff_max_s: 0.05}", "--budget", "120", "--batch", "30", "--out", str(tmp_path / "out")]
    env = {**__import__("os").environ, KEY_ENV: KEY, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
           "PYTHONWARNINGS": "default"}
    # before the fix every run printed ContextVar and "Event loop is closed" errors after the message (1 run in 3
    # printed 16 tracebacks, issue 41): one run shows it
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert f"Cannot connect to http://127.0.0.1:{port}/v1" in done.stderr
    for noise in ("Traceback", "Event loop is closed", "ContextVar", "was created in a different Context",
                  "Task was destroyed", "Exception ignored"):
        assert noise not in done.stderr, done.stderr
