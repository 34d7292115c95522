"""Judge panels in the arena: members agree or the battle is a tie, flagged and counted; position bias per member;
each member's answers cached under its own identity (a panel reuses a single judge's answers)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from faceedit_bench_arena.arena import ArenaSettings, run_arena
from faceedit_bench_arena.command import schema
from faceedit_bench_arena.console import summary
from faceedit_bench_arena.pairwise_judge import CRITERIA, SwappedVerdict
from faceedit_bench_arena.panel import DISAGREE, arena_judges, panel_verdict
from faceedit_bench_arena.section import tracking
from faceedit_bench_arena.stored_runs import ArenaError
from faceedit_bench_arena.verify import verify
from PIL import Image

from faceedit_bench.api.judging import JudgeSession

sys.path.insert(0, str(Path(__file__).parent))
from stored_runs_fixture import write_runs  # noqa: E402

from tests.fakes.openai import _chat_images, openai_server

KEY_ENV = "FACEEDIT_TEST_OPENAI_KEY"
KEY = "sk-test-key-0123456789"
FAST = {"requests_per_minute": None, "tokens_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05,
        "timeout_s": 10.0}
FAIR, BIASED = "gpt-fair", "gpt-biased"


def two_minds(body) -> str:
    """The fair model prefers the brighter output on every criterion; the biased one agrees on overall and
    instruction following but always answers A (the first position) on identity preservation."""
    _, a, b = (np.asarray(Image.open(io.BytesIO(i))).mean() for i in _chat_images(body))
    fair = "A" if a > b else "B" if b > a else "both_good"
    labels = {c: fair for c in CRITERIA}
    if body.get("model") == BIASED:
        labels["identity_preservation"] = "A"
    return json.dumps({c: {"label": label, "explanation": "x"} for c, label in labels.items()})


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with openai_server(api_key=KEY, judge_answer=two_minds) as fake:
        yield fake


def member(server, model: str) -> dict:
    return {"name": "openai", "params": {"model": model, "base_url": f"{server.url}/v1", "api_key_env": KEY_ENV,
                                         "limits": FAST}}


def verdict(label: str | None, status: str = "decided") -> SwappedVerdict:
    score = {"x": 1.0, "y": 0.0, None: None}.get(label, 0.5)
    missing = ({"order": "y_first", "outcome": "refused", "reason": "policy"},) if status != "decided" else ()
    return SwappedVerdict(status, score, label, position_inconsistent=label == "inconsistent", missing=missing)


def test_members_that_agree_give_their_verdict_and_any_difference_is_a_tie():
    assert panel_verdict({"a": verdict("x"), "b": verdict("x")}) == verdict("x")
    assert panel_verdict({"a": verdict("both_bad"), "b": verdict("both_bad")}).label == "both_bad"
    split = panel_verdict({"a": verdict("x"), "b": verdict("y")})
    assert (split.status, split.label, split.score) == ("decided", DISAGREE, 0.5)
    # a tie of one kind against a tie of another is still a disagreement on the label
    assert panel_verdict({"a": verdict("both_good"), "b": verdict("inconsistent")}).label == DISAGREE
    # one member's incomplete battle makes the panel's incomplete, with the member named; nothing is invented
    gap = panel_verdict({"a": verdict("x"), "b": verdict(None, "incomplete")})
    assert gap.status == "incomplete" and gap.score is None
    assert gap.missing == ({"member": "b", "order": "y_first", "outcome": "refused", "reason": "policy"},)


def test_a_panel_arena_counts_disagreements_as_ties_reports_bias_per_member_and_reuses_answers(tmp_path, server):
    ws = tmp_path / "ws"
    fair_alone = arena_judges("openai", member(server, FAIR)["params"])
    with JudgeSession.open(fair_alone[0].judge, "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"identity": 100, "good": 190, "bad": 70})
    settings = ArenaSettings(budget_calls=120, batch=20, warmup=10, anchor="identity", n_resamples=100,
                             n_permutations=19, min_group_battles=10, stop_on_separation=False)
    single, _ = run_arena(paths, fair_alone, "openai", settings)
    alone_calls = server.calls
    assert single["sampling"]["calls_made"] == alone_calls > 0

    members = arena_judges("panel", {"members": {"fair": member(server, FAIR), "biased": member(server, BIASED)}})
    part, log = run_arena(paths, members, "panel", settings)
    jsonschema.validate(part, schema())
    judged = [b for b in log if not b["one_sided"]]
    # the budget counts every member's calls; the fair member's answers came from the single arena's ledger
    assert part["sampling"]["calls_planned"] <= 120 and len(judged) == 120 // 4
    assert part["sampling"]["calls_made"] == server.calls - alone_calls == 2 * len(judged)
    panel = part["panel"]
    # agreement on overall: the same order as the fair judge alone, no disagreement
    assert panel["disagreements"]["overall"] == 0 == part["counts"]["members_disagree"]
    assert part["criteria"]["overall"]["ratings"]["order"] == ["good", "identity", "bad"]
    # identity preservation: the biased member is position-inconsistent everywhere, the fair one never:
    # every battle a disagreement, rated a tie (every editor at the anchor's 1000)
    assert panel["disagreements"]["identity_preservation"] == len(judged)
    assert all(b["verdicts"]["identity_preservation"]["label"] == DISAGREE for b in judged)
    ip = part["criteria"]["identity_preservation"]["ratings"]["editors"]
    assert all(abs(e["rating"] - 1000.0) < 1e-6 for e in ip)
    assert panel["member_labels"]["biased"]["identity_preservation"] == {"inconsistent": len(judged)}
    bias = {m: panel["position_bias"][m]["criteria"]["identity_preservation"] for m in ("fair", "biased")}
    assert bias["biased"]["first_position_share"] == 1.0 and bias["biased"]["p_value"] < 1e-6
    assert bias["fair"]["first_position_share"] == 0.5
    assert "biased: first position won" in summary(part)
    metrics = tracking({**part, "editor": "good"})
    assert metrics["arena_panel_disagreements"] == 0.0 and "arena_biased_first_position_share" in metrics
    # a rerun asks nobody
    calls = server.calls
    again, _ = run_arena(paths, members, "panel", settings)
    assert server.calls == calls and again["criteria"] == part["criteria"]


def test_a_panel_log_verifies_and_a_changed_verdict_is_found(tmp_path, server):
    ws = tmp_path / "ws"
    members = arena_judges("panel", {"members": [member(server, FAIR), member(server, BIASED)]})
    assert [m.label for m in members] == ["openai", "openai_2"]
    with JudgeSession.open(members[0].judge, "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"a": 100, "b": 160, "c": 220})
    settings = ArenaSettings(budget_calls=80, batch=10, warmup=5, n_resamples=50, n_permutations=19,
                             min_group_battles=5, stop_on_separation=False)
    part, log = run_arena(paths, members, "panel", settings)
    from faceedit_bench_arena.verify import LOG, log_record

    def write(entries):
        text = "".join(json.dumps(b, sort_keys=True) + "\n" for b in entries)
        (tmp_path / "out").mkdir(exist_ok=True)
        (tmp_path / "out" / LOG).write_text(text)
        (tmp_path / "out" / "arena.json").write_text(json.dumps({**part, "battle_log": log_record(text)}))

    write(log)
    assert verify(tmp_path / "out") == []
    log[0]["verdicts"]["overall"]["score"] = 1.0 - log[0]["verdicts"]["overall"]["score"]
    write(log)
    assert any(p.startswith("criteria.overall") for p in verify(tmp_path / "out"))


@pytest.mark.parametrize(("params", "message"), [
    ({"members": {"a": {"name": "openai"}}}, "at least two members"),
    ({"members": {"a": {"name": "openai"}, "b": {"params": {}}}}, "member 'b' needs a judge name"),
    ({"members": {"a": {"name": "openai"}, "b": {"name": "openai", "params": {"modle": "x"}}}}, "member 'b'"),
    ({"rule": "majority", "members": {}}, "members must agree"),
])
def test_bad_panels_are_refused_before_any_call(params, message, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ArenaError, match=message):
        arena_judges("panel", params)


def test_the_command_refuses_a_panel_rule_with_exit_code_2(tmp_path, capsys):
    """In this process (the console script's entry function); test_arena_runs.py runs ``arena run`` as a process."""
    from faceedit_bench.testing import run_cli

    code = run_cli(["arena", "run", str(tmp_path / "r1"), str(tmp_path / "r2"), "--judge", "panel",
                    "--judge-param", "rule=majority", "--out", str(tmp_path / "out")])
    printed = capsys.readouterr()
    assert code == 2 and "members must agree" in printed.err and "Traceback" not in printed.err + printed.out
    assert not (tmp_path / "out").exists()
