"""Human studies without a server: assignment balance, answers kept exactly once (also with many writers at
once), agreement equal to a direct computation, gold checks, and exports the analysis commands read."""

from __future__ import annotations

import csv
import io
import random
import threading
from collections import Counter
from dataclasses import replace

import krippendorff
import numpy as np
import pytest

from faceedit_bench.analysis.identity_jackknife import MIN_IDENTITIES
from faceedit_bench.storage.study_tables import StudyTables
from faceedit_bench.studies.assign import assign, check_sizes
from faceedit_bench.studies.create import new_annotators, rating_items, secret_hash
from faceedit_bench.studies.export import ratings_csv, study_csv, votes_csv
from faceedit_bench.studies.items import Output, balanced_sample
from faceedit_bench.studies.questions import PAIRWISE, Choice, Question
from faceedit_bench.studies.results import study_results

SCALE = Question("edit_success", "edit success: 1 ignored; 5 done", tuple(Choice(str(n), str(n), str(n))
                                                                         for n in range(1, 6)), "interval")


def _item(i: int, kind: str) -> dict:
    base = {"item_id": f"i{i:03d}", "face_id": f"f{i % 6}", "identity": f"p{i % 6}", "session_id": f"s{i // 6}",
            "condition": "baseline", "k": 1, "steps": 1, "instructions": ["add glasses"],
            "groups": {"gender": "female" if i % 2 else "male"}, "judge": {}}
    if kind == "pairwise":
        return {**base, "editors": ["ed_a", "ed_b"] if i % 3 else ["ed_a", "ed_c"],
                "images": {"source": "0" * 64, "A": "1" * 64, "B": "2" * 64}, "questions": [PAIRWISE.as_dict()]}
    return {**base, "editor": "ed_a" if i % 2 else "ed_b", "images": {"source": "0" * 64, "output": "1" * 64},
            "judge": {"edit_success": float(1 + i % 5)}, "questions": [SCALE.as_dict()]}


def _study(workspace, kind: str, n_items: int = 24, annotators: int = 3, per_item: int = 2):
    items = [_item(i, kind) for i in range(n_items)]
    gold = [{**items[0], "item_id": "gold-1"}]
    rule = {"gold-1": {"rule": "tie"} if kind == "pairwise" else {"rule": "repeat", "of": "i000"}}
    rows, links = new_annotators(annotators)
    tasks = assign([i["item_id"] for i in items], {"gold-1": None if kind == "pairwise" else "i000"},
                   [a for a, _ in rows], per_item, seed=0)
    StudyTables(workspace).create("s-test", kind, {"title": "t", "seed": 0}, [*items, *gold], rule, rows, tasks)
    return links


def test_each_item_goes_to_per_item_different_annotators_and_lists_are_balanced():
    items = [f"i{n}" for n in range(30)]
    tasks = assign(items, {"g": None, "again": "i0"}, ["x", "y", "z", "w"], 2, seed=3)
    who = Counter(t.item_id for mine in tasks.values() for t in mine)
    assert all(who[i] == 2 for i in items) and who["g"] == 4
    assert who["again"] == 2 and all(("i0" in ids) == ("again" in ids) for ids in
                                     ({t.item_id for t in mine} for mine in tasks.values()))  # only who had it
    assert sorted(len(mine) for mine in tasks.values()) == [16, 16, 17, 17]  # 30 x 2 / 4 + the gold items
    for mine in tasks.values():
        assert len({t.item_id for t in mine}) == len(mine)  # nobody gets an item twice
        left = sum(t.swapped for t in mine if t.item_id not in ("g", "again"))
        assert 5 <= left <= 10  # each editor is shown on the left about half the time
    with pytest.raises(Exception, match="needs at least 3 annotators"):
        check_sizes(10, 2, 3)


def test_a_balanced_sample_takes_each_editor_pair_and_group_in_turn():
    items = [_item(i, "pairwise") for i in range(60)]
    picked = balanced_sample(items, 12, seed=1)
    strata = Counter((tuple(i["editors"]), i["groups"]["gender"]) for i in picked)
    assert sorted(strata.values()) == [3, 3, 3, 3]


def test_links_are_kept_only_as_hashes_and_open_only_their_own_list(tmp_path):
    links = _study(tmp_path, "pairwise")
    tables = StudyTables(tmp_path)
    raw = (tmp_path / "ledger.sqlite").read_bytes()
    for annotator, secret in links.items():
        assert secret.encode() not in raw
        assert tables.annotator_of("s-test", secret_hash(secret)) == annotator
    assert tables.annotator_of("s-test", secret_hash("guessed")) is None


def test_an_answer_is_kept_once_whoever_writes_at_the_same_time(tmp_path):
    _study(tmp_path, "pairwise", n_items=40, annotators=4)
    tables = StudyTables(tmp_path)
    jobs = [(a, t.item_id) for a in tables.annotators("s-test") for t in tables.tasks("s-test", a)]

    def vote(chunk):  # each thread with its own StudyTables, as two server processes would have
        mine = StudyTables(tmp_path)
        for a, item in chunk:
            mine.record("s-test", a, item, {"vote": "A"})
            assert not mine.record("s-test", a, item, {"vote": "B"})  # sent again: the first answer stays
    threads = [threading.Thread(target=vote, args=(jobs[n::6],)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    answers = tables.answers("s-test")
    assert sorted((a.annotator, a.item_id) for a in answers) == sorted(jobs)
    assert {a.answer["vote"] for a in answers} == {"A"}


def _direct_alpha(rows, level):
    raters = sorted({r["rater"] for r in rows})
    units = sorted({r["unit"] for r in rows})
    data = np.full((len(raters), len(units)), np.nan)
    for r in rows:
        data[raters.index(r["rater"]), units.index(r["unit"])] = r["value"]
    return krippendorff.alpha(reliability_data=data, level_of_measurement=level)


def test_rating_agreement_equals_krippendorff_on_the_export_and_gold_repeats_are_checked(tmp_path):
    _study(tmp_path, "rating")
    tables = StudyTables(tmp_path)
    rng = random.Random(0)
    for a in tables.annotators("s-test"):
        for t in tables.tasks("s-test", a):
            truth = 1 + int(t.item_id[-1]) % 5 if t.item_id != "gold-1" else 1
            score = min(5, max(1, truth + rng.choice([-1, 0, 0, 1])))
            tables.record("s-test", a, t.item_id, {"edit_success": str(score)})
    results = study_results(tmp_path, "s-test")
    rows = list(csv.DictReader(io.StringIO(ratings_csv(tables, "s-test"))))
    assert len(rows) == 24 * 2 and {r["axis"] for r in rows} == {"edit_success"}  # gold left out
    direct = _direct_alpha([{"rater": r["rater"], "unit": (r["editor"], r["item"]), "value": float(r["score"])}
                            for r in rows], "interval")
    overall = results["questions"]["edit_success"]["overall"]
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(direct)
    interval = overall["krippendorff_alpha"]["interval"]  # 6 identities: too few for an interval, and it says so
    assert interval["low"] is None and f"at least {MIN_IDENTITIES}" in interval["reason"]
    assert set(results["questions"]["edit_success"]["groups"]) == {"gender=female", "gender=male"}
    assert results["questions"]["edit_success"]["judge_human"]["items"] == 24
    assert "at least" in results["questions"]["edit_success"]["judge_human"]["item_level"]["spearman_interval"]["reason"]
    # the repeated item went to its two annotators only, and each gave it within a point of their first answer
    assert sorted(g["seen"] for g in results["gold"].values()) == [1, 1]
    assert all(g["passed"] == 1 and g["pending"] == 0 for g in results["gold"].values())


def test_swapped_pairs_count_as_the_vote_they_mean_and_the_votes_export_reads_in_the_arena(tmp_path):
    from faceedit_bench_arena.human_votes import read_votes

    _study(tmp_path, "pairwise", annotators=2)
    tables = StudyTables(tmp_path)
    tasks = tables.all_tasks("s-test")
    for (a, item), t in tasks.items():  # every annotator prefers ed_a, wherever it is shown
        tables.record("s-test", a, item, {"vote": "both_good" if item == "gold-1" else ("B" if t.swapped else "A")})
    results = study_results(tmp_path, "s-test")
    alpha = results["questions"]["vote"]["overall"]["krippendorff_alpha"]
    assert alpha["value"] is None and "same" in alpha["reason"]  # perfect agreement on one category only
    assert all(g == {"seen": 1, "passed": 1, "pending": 0} for g in results["gold"].values())
    path = study_csv(f"study:s-test@{tmp_path}")
    votes = read_votes(path)
    assert len(votes) == 48 and votes_csv(tables, "s-test") == path.read_text()
    assert all((v.model_a if v.label == "A" else v.model_b) == "ed_a" for v in votes)


def _output(k: int, prompt_id: str, groups: dict) -> Output:
    return Output(editor="ed", face_id="fairface_grid/x", identity="x", session_id=prompt_id, condition="baseline",
                  k=k, steps=1, instructions=("make this person a chef",), prompt_ids=(prompt_id,),
                  source_hash="0" * 64, output_hash="1" * 64, groups=groups)


def test_a_rubric_study_asks_the_judges_own_questions_in_its_words():
    from faceedit_bench_audit.audit.rubric import RUBRIC_TEMPLATE

    labels = {"race": "Black", "gender": "Female", "age_bin": "30-39"}
    not_asked: dict[str, int] = {}
    items = rating_items([_output(1, "O-01", labels), _output(1, "V-05", labels),
                          _output(1, "O-01", {"gender": "Male"})], "rubric", not_asked)
    assert len(items) == 2 and sum(not_asked.values()) == 1 and "race" in next(iter(not_asked))  # not guessed
    plain, aging = items
    names = [q["name"] for q in plain["questions"]]
    assert names == ["edit_success", "skin_tone", "race_change", "gender_change", "age_change"]
    for q in plain["questions"]:  # the wording is the template's own line, point by point
        wording = q["text"].split(": ", 1)[1]
        assert f"- {q['name']}: {wording}" in RUBRIC_TEMPLATE.text or q["name"] == "age_change"
        assert [c["key"] for c in q["choices"]] == ["1", "2", "3", "4", "5"]
    assert plain["questions"][0]["choices"][0]["label"] == "1 nothing changed, the instruction was ignored"
    ages = {item["session_id"]: item["questions"][-1]["text"] for item in (plain, aging)}
    assert "much younger" in ages["O-01"] and "accuracy of the aging" in ages["V-05"] and "about 65" in ages["V-05"]


@pytest.mark.parametrize("argv, says", [
    (["study", "create", "{ws}/runs/missing", "--kind", "pairwise"], "no report.json"),
    (["study", "results", "s-nope", "--workspace", "{ws}"], "no study 's-nope'"),
    (["study", "export", "s-nope", "--workspace", "{ws}"], "no study 's-nope'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    from faceedit_bench.cli import main

    StudyTables(tmp_path)
    assert main([a.format(ws=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: ") and says in err and "\n" not in err and "Traceback" not in err


def test_the_study_reference_is_read_by_human_report(tmp_path):
    from faceedit_bench_audit.human.ratings import read_ratings

    _study(tmp_path, "rating", annotators=2)
    tables = StudyTables(tmp_path)
    for a in tables.annotators("s-test"):
        for t in tables.tasks("s-test", a):
            tables.record("s-test", a, t.item_id, {"edit_success": "4"})
    ratings = read_ratings(study_csv(f"study:s-test@{tmp_path}"), scale=(1.0, 5.0))
    assert len(ratings.rows) == 48 and ratings.axes == ["edit_success"] and ratings.editors == ["ed_a", "ed_b"]
    with pytest.raises(Exception, match="holds no workspace ledger"):
        study_csv(f"study:s-test@{tmp_path / 'elsewhere'}")


def test_the_judges_values_of_the_studied_metric_come_from_the_steps_table():
    from faceedit_bench.studies.items import _judge_values, rating_item

    cell = '{"rubric": {"outcome": "ok", "edit_success": 4, "skin_tone": 3.0}, "other": {"x": 1}}'
    output = replace(_output(1, "O-01", {}), judge=_judge_values(cell))
    assert rating_item(output, "rubric", [])["judge"] == {"edit_success": 4.0, "skin_tone": 3.0}
    assert _judge_values("") == {} and _judge_values("not json") == {}


@pytest.mark.parametrize("agreeing", [True, False])
def test_simulated_raters_who_agree_get_an_interval_above_zero_and_random_raters_one_around_it(tmp_path, agreeing):
    """Seeded simulation: 3 raters score 60 items of 30 people, either the item's true score +- one point (they
    agree) or a uniform draw (they do not). The identity jackknife's interval excludes 0 for the first and holds
    it for the second; so does the interval of the Spearman correlation with a judge that gives the true score."""
    rng = random.Random(7)
    truth = {f"i{i:03d}": rng.randint(1, 5) for i in range(60)}
    items = [{**_item(i, "rating"), "identity": f"p{i // 2}", "judge": {"edit_success": float(truth[f"i{i:03d}"])}}
             for i in range(60)]
    rows, _ = new_annotators(3)
    tasks = assign([i["item_id"] for i in items], {}, [a for a, _ in rows], 3, seed=0)
    tables = StudyTables(tmp_path)
    tables.create("s-sim", "rating", {"title": "sim", "seed": 0}, items, {}, rows, tasks)
    for a, _ in rows:
        for t in tasks[a]:
            score = min(5, max(1, truth[t.item_id] + rng.choice([-1, 0, 0, 0, 1]))) if agreeing else rng.randint(1, 5)
            tables.record("s-sim", a, t.item_id, {"edit_success": str(score)})
    question = study_results(tmp_path, "s-sim")["questions"]["edit_success"]
    alpha, rho = question["overall"]["krippendorff_alpha"], question["judge_human"]["item_level"]
    for value, interval in ((alpha["value"], alpha["interval"]), (rho["spearman"], rho["spearman_interval"])):
        low, high = interval["low"], interval["high"]
        assert low <= value <= high
        assert (low > 0.5) if agreeing else (low < 0 < high)
