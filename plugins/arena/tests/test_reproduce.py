"""`faceedit-bench reproduce genai-arena` and `genai-bench` on the shipped published data, the users' own files,
and files in the wrong layout (exit code 2, line and field named)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from faceedit_bench_arena.published_elo import LOG10, fit_l2_logistic
from faceedit_bench_arena.reproduce import shipped
from scipy.optimize import minimize
from scipy.special import log_expit

from faceedit_bench.testing import run_cli

LOG = shipped("genai_arena", "clean_battle_20240220.json")
BOARD = shipped("genai_arena", "image_editing_leaderboard.csv")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = run_cli(["reproduce", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_genai_arena_reproduces_every_published_elo_within_a_tenth(capsys, tmp_path):
    code, out, _ = run(capsys, "genai-arena", "--json", str(tmp_path / "r.json"))
    table = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and table["compared"] == table["matched"] == 14, out
    assert max(abs(n["difference"]) for n in table["numbers"]) < 0.1
    assert {n["name"] for n in table["numbers"]} >= {"anony/SDEdit", "full/Prompt2prompt"}


def test_the_projects_default_ratings_do_not_reproduce_it(capsys, tmp_path):
    code, _, _ = run(capsys, "genai-arena", "--method", "default", "--json", str(tmp_path / "r.json"))
    sdedit = next(n for n in json.loads((tmp_path / "r.json").read_text())["numbers"] if n["name"] == "anony/SDEdit")
    assert code == 1 and sdedit["difference"] < -40  # the L2 penalty pulls the least-played editor toward 1000


def test_the_l2_fit_is_the_optimum_of_the_published_objective():
    rng = np.random.default_rng(3)
    wins = rng.integers(0, 6, size=(5, 5)).astype(float) * 0.5
    np.fill_diagonal(wins, 0.0)

    def objective(beta):
        d = LOG10 * (beta[:, None] - beta[None, :])
        return -2.0 * (wins * log_expit(d)).sum() + 0.5 * beta @ beta

    reference = minimize(objective, np.zeros(5), method="BFGS", options={"gtol": 1e-10}).x
    assert np.allclose(fit_l2_logistic(wins), 1000 + 400 * reference, atol=1e-3)


def test_a_users_own_log_and_leaderboard(capsys, tmp_path):
    code, out, _ = run(capsys, "genai-arena", "--log", str(LOG))
    assert code == 0 and "nothing to compare" in out
    assert run(capsys, "genai-arena", "--log", str(LOG), "--leaderboard", str(BOARD))[0] == 0
    expect = tmp_path / "expect.csv"
    expect.write_text("name,value\nanony/SDEdit,637.27\nfull/SDEdit,697.2\n")
    assert run(capsys, "genai-arena", "--expect", str(expect))[0] == 0
    expect.write_text("name,value\nanony/SDEdit,637.26\nanony/Nobody,1000\n")  # 0.01 off at 2 decimals; one absent
    code, out, _ = run(capsys, "genai-arena", "--expect", str(expect))
    assert code == 1 and "0/2 published numbers matched" in out


def test_a_battle_of_an_editor_against_itself_is_refused_with_its_line(capsys):
    code, _, err = run(capsys, "genai-arena", "--task", "t2i_generation")  # the log's one text-to-image self-battle
    assert code == 2 and "line 14554, columns 'model_a'/'model_b': the same editor 'SDXLTurbo'" in err


def battle(**fields) -> dict:
    return {"model_a": "imagenhub_SDEdit_edition", "model_b": "imagenhub_PNP_edition", "winner": "model_a",
            "judge": "someone", "anony": True, "tstamp": 1.0, **fields}


@pytest.mark.parametrize("text, message", [
    ('[{"model_a": "x"', "line 1: not JSON"),
    ('{"model_a": "x"}', "expected a JSON array"),
    (json.dumps([battle(), battle()], indent=2)[:-3], "truncated"),
    (json.dumps([battle(), {k: v for k, v in battle().items() if k != "tstamp"}], indent=2),
     "line 10: missing field(s) tstamp"),
    (json.dumps([battle(), battle(winner="model_c")], indent=2), "line 10, column 'winner': 'model_c' is not a vote"),
    (json.dumps([battle(anony="yes")], indent=2), "line 2, field 'anony'"),
])
def test_a_log_in_the_wrong_layout_is_exit_2_with_its_line(capsys, tmp_path, text, message):
    (tmp_path / "log.json").write_text(text)
    code, _, err = run(capsys, "genai-arena", "--log", str(tmp_path / "log.json"))
    assert code == 2 and message in err and "Traceback" not in err


def test_a_leaderboard_or_expect_file_in_the_wrong_layout_is_exit_2(capsys, tmp_path):
    (tmp_path / "board.csv").write_text("Model,Elo\nSDEdit,600\n")
    code, _, err = run(capsys, "genai-arena", "--leaderboard", str(tmp_path / "board.csv"))
    assert code == 2 and "missing column(s)" in err and "Arena Elo rating (anony)" in err
    (tmp_path / "board.csv").write_text(BOARD.read_text().replace("637.2551038681513", "n/a"))
    code, _, err = run(capsys, "genai-arena", "--leaderboard", str(tmp_path / "board.csv"))
    assert code == 2 and "line 8, column 'Arena Elo rating (anony)': 'n/a' is not a number" in err
    (tmp_path / "expect.csv").write_text("model,elo\nSDEdit,600\n")
    code, _, err = run(capsys, "genai-arena", "--expect", str(tmp_path / "expect.csv"))
    assert code == 2 and "expected 'name,value'" in err


def test_genai_bench_reproduces_every_readme_accuracy(capsys, tmp_path):
    code, out, _ = run(capsys, "genai-bench", "--json", str(tmp_path / "r.json"))
    table = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and table["compared"] == table["matched"] == 16, out
    gpt4o = next(n for n in table["numbers"] if n["name"] == "gpt4o")
    assert (gpt4o["published"], round(gpt4o["ours"], 2)) == (53.54, 53.54)


def test_genai_bench_on_a_users_results_folder(capsys, tmp_path):
    judge = tmp_path / "mine"
    judge.mkdir()
    (judge / "pairwise.jsonl").write_text('{"idx": 0, "model_vote": "[[A>B]]", "human_vote": "leftvote"}\n'
                                          '{"idx": 1, "model_vote": "[[A=B]]", "human_vote": "bothbad_vote"}\n'
                                          '{"idx": 2, "model_vote": null, "human_vote": "rightvote"}\n')
    (tmp_path / "expect.csv").write_text("name,value\nmine,66.67\n")
    code, out, _ = run(capsys, "genai-bench", "--results", str(tmp_path), "--expect", str(tmp_path / "expect.csv"))
    assert code == 0 and "1 judge answers unparsed" in out
    (judge / "pairwise.jsonl").write_text('{"idx": 0, "model_vote": "[[A>B]]", "human_vote": "leftvote"}\n'
                                          '{"idx": 1, "mo')
    code, _, err = run(capsys, "genai-bench", "--results", str(tmp_path))
    assert code == 2 and "line 2" in err and "Traceback" not in err


MMRB2 = Path(__file__).parent / "fixtures" / "mmrb2"


def test_mmrb2_scores_both_orders_of_each_pair_by_its_rule(capsys, tmp_path):
    """The sample judge answers A in both orders (position-consistent "always the first response"): MMRB2's rule
    then gives the share of pairs whose chosen response is A, counted from the labels alone."""
    labels, answers = MMRB2 / "edit_labels_cut200.json", MMRB2 / "sample_task2_edit_cut200.json"
    share_a = sum(p["chosen"] == "A" for p in json.loads(labels.read_text())["pairs"]) / 200
    code, out, _ = run(capsys, "mmrb2", "--labels", str(labels), "--answers", str(answers),
                       "--json", str(tmp_path / "r.json"))
    accuracy = next(n for n in json.loads((tmp_path / "r.json").read_text())["numbers"] if n["name"] == "edit/accuracy")
    assert code == 0 and accuracy["ours"] == pytest.approx(100 * share_a) and accuracy["published"] is None
    data = json.loads(answers.read_text())
    first = next(iter(data))
    data[first]["reverse"] = [{"judgement": "tie"}]  # a wrong trial, counted
    del data[next(iter(list(data)[1:]))]  # a missing pair, counted
    (tmp_path / "a.json").write_text(json.dumps(data))
    code, out, _ = run(capsys, "mmrb2", "--labels", str(labels), "--answers", str(tmp_path / "a.json"))
    assert code == 0 and "missing pairs: 1" in out and "other judgements (wrong): 1" in out and "398 judgements" in out


def test_mmrb2_files_in_the_wrong_layout_are_exit_2(capsys, tmp_path):
    labels = MMRB2 / "edit_labels_cut200.json"
    (tmp_path / "a.json").write_text('{"x": {"forward": "A"}}')
    code, _, err = run(capsys, "mmrb2", "--labels", str(labels), "--answers", str(tmp_path / "a.json"))
    assert code == 2 and "pair 'x', field 'forward'" in err
    (tmp_path / "l.json").write_text('{"pairs": [\n{"id": "p1", "chosen": "A"},\n{"id": "p2", "chosen": "tie"}]}')
    code, _, err = run(capsys, "mmrb2", "--labels", str(tmp_path / "l.json"), "--answers", str(tmp_path / "a.json"))
    assert code == 2 and "line 3, pair 'p2', field 'chosen'" in err
    (tmp_path / "l.json").write_text('{"pairs": [{"id": "p1", "cho')
    code, _, err = run(capsys, "mmrb2", "--labels", str(tmp_path / "l.json"), "--answers", str(tmp_path / "a.json"))
    assert code == 2 and "not valid JSON" in err and "Traceback" not in err
