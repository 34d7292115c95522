"""People's votes: import with line and column named, ratings from votes, judge–human agreement."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from faceedit_bench_arena import simulate
from faceedit_bench_arena.human_votes import (
    VotesError,
    agreement,
    genai_bench_accuracy,
    ranking_agreement,
    read_votes,
    votes_to_battles,
)
from faceedit_bench_arena.ratings import rate

FIXTURE = Path(__file__).parent / "fixtures" / "genai_bench" / "pairwise.jsonl"
WINNER = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "votes.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_lmarena_layout_votes_give_the_ratings_of_the_simulated_strengths(tmp_path):
    battles = simulate.arena(simulate.strengths(4, 3.0), 60, 20, seed=5)
    lines = ["model_a,model_b,winner,judge,identity,gender"]
    for x, y, s, i in zip(battles.left, battles.right, battles.score, battles.identity):
        lines.append(f"e{x},e{y},{WINNER[s]},voter{i % 7},person{i},{'female' if i % 2 else 'male'}")
    votes = read_votes(write(tmp_path, "\n".join(lines) + "\n"))
    from_votes = rate(votes_to_battles(votes, [f"e{i}" for i in range(4)]), n_resamples=100)
    direct = rate(battles, n_resamples=100)
    np.testing.assert_allclose(from_votes.elo, direct.elo, atol=1e-6)
    assert from_votes.n_identities == 60 and votes[0].labels == {"gender": "male"}


def test_genai_bench_vote_names_are_read(tmp_path):
    votes = read_votes(write(tmp_path, "model_a,model_b,vote,voter_id\nx,y,leftvote,1\nx,y,bothbad_vote,2\n"
                                       "y,x,tievote,3\nx,y,B,4\n"))
    assert [v.label for v in votes] == ["A", "both_bad", "both_good", "B"]


def test_every_problem_is_named_by_line_and_column(tmp_path):
    with pytest.raises(VotesError) as err:
        read_votes(write(tmp_path, "model_a,model_b,winner,judge\nx,y,model_a,u1\nx,x,model_c,u2\n,y,tie,\n"))
    text = str(err.value)
    assert "line 3, columns 'model_a'/'model_b'" in text and "line 3, column 'winner': 'model_c'" in text
    assert "line 4, column 'model_a': empty" in text and "line 4, column 'judge': empty" in text
    assert "nothing was imported" in text
    with pytest.raises(VotesError, match=r"line 1 \(header\): missing column\(s\) vote or winner"):
        read_votes(write(tmp_path, "model_a,model_b,judge\nx,y,u\n"))


def test_judge_human_accuracy_with_ties_matches_either_order_and_per_group(tmp_path):
    votes = read_votes(write(tmp_path, "model_a,model_b,vote,voter_id,input_id,gender\n"
                                       "x,y,A,1,f1/s/1,male\n"  # judge x: right
                                       "y,x,A,2,f2/s/1,female\n"  # people: y; judge x: wrong
                                       "x,y,both_bad,3,f3/s/1,female\n"  # judge both_bad: right
                                       "x,y,both_good,4,f4/s/1,male\n"  # judge inconsistent: wrong
                                       "x,y,A,5,f9/s/1,male\n"))  # the judge never saw it
    judge = {("f1/s/1", "x", "y"): "x", ("f2/s/1", "x", "y"): "x", ("f3/s/1", "y", "x"): "both_bad",
             ("f4/s/1", "x", "y"): "inconsistent"}
    out = agreement(judge, votes, group_key="gender")
    assert (out["matched"], out["unmatched_votes"], out["accuracy_with_ties"]) == (4, 1, 0.5)
    assert out["per_group"] == {"female": {"matched": 2, "accuracy_with_ties": 0.5},
                                "male": {"matched": 2, "accuracy_with_ties": 0.5}}


def test_ranking_agreement_is_kendall_tau():
    assert ranking_agreement({"a": 3, "b": 2, "c": 1}, {"a": 30, "b": 20, "c": 10})["kendall_tau"] == 1.0
    assert ranking_agreement({"a": 3, "b": 2}, {"a": 1, "b": 2})["kendall_tau"] is None


def test_genai_bench_results_reproduce_its_own_correct_field():
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    out = genai_bench_accuracy(FIXTURE)
    assert out["items"] == len(rows) and out["unparsed"] == 0
    assert out["accuracy_with_ties"] == pytest.approx(np.mean([r["correct"] for r in rows]))


def test_an_unparsed_genai_bench_answer_counts_as_wrong_and_is_counted(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"idx": 0, "response": "no idea", "model_vote": null, "human_vote": "leftvote", "correct": false}\n'
        '{"idx": 1, "response": "[[A=B]]", "model_vote": "[[A=B]]", "human_vote": "tievote", "correct": true}\n')
    assert genai_bench_accuracy(path) == {"items": 2, "unparsed": 1, "accuracy_with_ties": 0.5, "random_baseline": 0.25}


def test_votes_naming_an_editor_outside_the_arena_are_refused(tmp_path):
    votes = read_votes(write(tmp_path, "model_a,model_b,vote,voter_id\nx,z,A,1\n"))
    with pytest.raises(VotesError, match=r"editor\(s\) \['z'\] that are not in the arena"):
        votes_to_battles(votes, ["x", "y"])
