"""The checklist and categorical study kinds: a checklist study made from a real run's check questions (a CREval
run through the engine against the fake judge) keeps its questions with its items, so it never needs the
question file again; a run without them is refused in one line. A categorical study takes the judge's images and
answers from the ledger and its question from the test set (the WinoBias judge metric over a run written here).
Agreement, yes-rates, judge-human agreement and the repeat (gold) check equal a direct computation."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import re
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

from faceedit_bench.analysis.identity_jackknife import MIN_IDENTITIES
from faceedit_bench.storage.study_tables import StudyTables
from faceedit_bench.studies.assign import assign
from faceedit_bench.studies.create import KINDS, new_annotators
from faceedit_bench.studies.export import checklist_csv, study_csv
from faceedit_bench.studies.questions import check_question
from faceedit_bench.studies.results import study_results
from faceedit_bench.studies.text import format_results, interval_text

CREVAL_FIXTURE = Path(__file__).resolve().parent / "data" / "creval_bench"
KEY = "sk-study-kinds"


def _one_line_error(capsys, says: str) -> None:
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: ") and says in err and "\n" not in err and "Traceback" not in err, err


@pytest.mark.slow(seconds=12)  # one CREval run through the engine
def test_a_checklist_study_asks_a_real_runs_own_questions_and_keeps_them(plugins, compose, tmp_path, monkeypatch,
                                                                          capsys):
    from faceedit_bench.cli import main
    from faceedit_bench.cli.study import KINDS as CLI_KINDS
    from faceedit_bench.testing import build_run, run_built
    from tests.fakes.creval import answer_body
    from tests.fakes.openai import openai_server

    assert CLI_KINDS == KINDS
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with openai_server(api_key=KEY, judge_answer=answer_body) as server:
        cfg = compose("experiment=creval", f"dataset.params.root={CREVAL_FIXTURE}", "editor=noise", "embedder=pixel",
                      "tracking=none", "run.workers=1", f"judge.params.base_url={server.url}/v1",
                      "judge.params.limits.max_attempts=2", "judge.params.limits.backoff_initial_s=0.01")
        run_built(build_run(cfg, plugins), plugins)
    (run,) = (tmp_path / "ws" / "runs").iterdir()
    asked = list(csv.DictReader((run / "creval_answers.csv").open()))
    capsys.readouterr()
    assert main(["study", "create", str(run), "--kind", "checklist", "--annotators", "2", "--gold", "1"]) == 0
    study_id = re.search(r"study (s-[0-9a-f]+)", capsys.readouterr().out).group(1)
    tables = StudyTables(tmp_path / "ws")
    items = [i for i in tables.items(study_id).values() if i["gold"] is None]
    assert len(items) == 3 and tables.study(study_id)["spec"]["metric"] == "creval"
    stored = {(i["session_id"], q["text"], q["expected"], q["facet"]): i["judge"].get(q["name"])
              for i in items for q in i["questions"]}
    assert stored == {(r["session_id"], r["question"], r["expected"], r["metric"]): r["answer"].capitalize()
                      for r in asked}  # every question the judge answered, with its answer, and nothing else
    assert all([c["key"] for c in q["choices"]] == ["y", "n"] for i in items for q in i["questions"])
    assert all(i["shown"][1][1] == next(r["edited_image"] for r in asked if r["session_id"] == i["session_id"])
               for i in items)
    (run / "creval_answers.csv").unlink()  # the study keeps its questions: the run's files are not read again
    for annotator in tables.annotators(study_id):
        for task in tables.tasks(study_id, annotator):
            item = tables.items(study_id, item_id=task.item_id)[task.item_id]
            tables.record(study_id, annotator, task.item_id, {q["name"]: "Yes" for q in item["questions"]})
    assert main(["study", "results", study_id, "--workspace", str(tmp_path / "ws")]) == 0
    printed = capsys.readouterr().out
    assert "IF: " in printed and "Yes: people 100.0%" in printed and "gold passed 1 of 1" in printed
    assert main(["study", "export", study_id, "--workspace", str(tmp_path / "ws")]) == 0
    exported = list(csv.DictReader(Path(capsys.readouterr().out.strip()).open()))
    assert len(exported) == 2 * len(asked) and {r["answer"] for r in exported} == {"Yes"}
    # a run without check questions, and a categorical study without its metric: one line, exit 2
    shutil.copytree(run, tmp_path / "ws" / "runs" / "other")
    assert main(["study", "create", str(tmp_path / "ws" / "runs" / "other"), "--kind", "checklist"]) == 2
    _one_line_error(capsys, "holds no check questions")
    assert main(["study", "create", str(run), "--kind", "checklist", "--metric", "creval_face"]) == 2
    _one_line_error(capsys, "holds no creval_face_answers.csv")
    assert main(["study", "create", str(run), "--kind", "categorical"]) == 2
    _one_line_error(capsys, "needs --metric")


def _checklist_study(workspace: Path, n_items: int = 20, annotators: int = 3) -> dict:
    """``n_items`` items of 4 yes/no questions each; the judge answered Yes to even-numbered ones."""
    items = []
    for i in range(n_items):
        questions = [check_question(f"{facet}:Q{n}", f"question {n} of item {i}", facet=facet, expected="Yes",
                                    weight="1") for facet in ("IF", "VC") for n in (1, 2)]
        items.append({"item_id": f"i{i:03d}", "editor": "ed", "face_id": f"f{i}", "identity": f"p{i % 10}",
                      "session_id": f"s{i}", "condition": "baseline", "k": 1, "steps": 1, "instructions": ["x"],
                      "groups": {"gender": ("female", "male")[i % 2]}, "images": {"original": "0", "edited": "1"},
                      "shown": [["original", "0"], ["edited", "1"]],
                      "judge": {q["name"]: ("Yes" if (i + n) % 2 == 0 else "No")
                                for n, q in enumerate(questions)}, "questions": questions})
    gold = {**items[0], "item_id": "gold-1"}
    rows, _ = new_annotators(annotators)
    tasks = assign([i["item_id"] for i in items], {"gold-1": "i000"}, [a for a, _ in rows], 2, seed=0)
    StudyTables(workspace).create("s-check", "checklist", {"title": "t", "seed": 0, "editors": ["ed"]}, [*items, gold],
                                  {"gold-1": {"rule": "repeat", "of": "i000"}}, rows, tasks)
    return {i["item_id"]: i for i in items}


def test_checklist_agreement_yes_rates_and_judge_agreement_equal_a_direct_computation(tmp_path):
    """Seeded: each annotator gives the judge's answer 80% of the time, else the other one."""
    items = _checklist_study(tmp_path)
    tables = StudyTables(tmp_path)
    rng = random.Random(3)
    given: dict[tuple[str, str], dict[str, str]] = {}
    repeats = 0
    for annotator in tables.annotators("s-check"):
        for task in sorted(tables.tasks("s-check", annotator), key=lambda t: t.item_id.startswith("gold")):
            if task.item_id == "gold-1":  # the repeat: the first answers again, once with one of 4 changed
                first = given[(annotator, "i000")]
                flip = {"IF:Q1": {"Yes": "No", "No": "Yes"}[first["IF:Q1"]]} if repeats else {}
                given[(annotator, task.item_id)], repeats = {**first, **flip}, repeats + 1
                continue
            item = items[task.item_id]
            given[(annotator, task.item_id)] = {q: (a if rng.random() < 0.8 else {"Yes": "No", "No": "Yes"}[a])
                                                for q, a in item["judge"].items()}
    for (annotator, item_id), answer in given.items():
        tables.record("s-check", annotator, item_id, answer)
    results = study_results(tmp_path, "s-check")
    annotators = tables.annotators("s-check")
    for facet in ("IF", "VC"):
        units = sorted({(i, q) for (_, i), a in given.items() if i != "gold-1" for q in a if q.startswith(facet)})
        data = np.array([[{"Yes": 0, "No": 1}[given[(a, i)][q]] if (a, i) in given else np.nan for i, q in units]
                         for a in annotators], dtype=float)
        shown = results["questions"][facet]
        assert shown["overall"]["krippendorff_alpha"]["value"] == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
        table, _ = inter_rater.aggregate_raters(np.array([col[~np.isnan(col)] for col in data.T], dtype=int))
        assert shown["overall"]["fleiss_kappa"]["value"] == pytest.approx(inter_rater.fleiss_kappa(table))
        rates = {(r["item_id"], r["question"]): r["yes_rate"] for r in shown["yes_rates"]}
        assert rates == {(i, q): pytest.approx(float(np.mean([given[(a, i)][q] == "Yes" for a in annotators
                                                               if (a, i) in given]))) for i, q in units}
        # two answers per unit: a majority only where they agree; the judge against it
        pairs = [(items[i]["judge"][q], votes[0]) for i, q in units
                 if len(set(votes := [given[(a, i)][q] for a in annotators if (a, i) in given])) == 1]
        judge = shown["judge_human"]
        assert judge["units"] == len(pairs) and judge["ties"] == len(units) - len(pairs)
        assert judge["same"] == pytest.approx(np.mean([j == h for j, h in pairs]))
        assert judge["cohens_kappa"] == pytest.approx(cohen_kappa_score(*zip(*pairs)))
        # the share's interval over identities (10, or 9 where the annotators drawn leave one without a majority):
        # leave each one out, t on the jackknife's standard error
        alike = [(items[i]["identity"], items[i]["judge"][q] == votes[0]) for i, q in units
                 if len(set(votes := [given[(a, i)][q] for a in annotators if (a, i) in given])) == 1]
        left_out = np.array([np.mean([s for p, s in alike if p != who]) for who in sorted({p for p, _ in alike})])
        half = stats.t.ppf(0.975, len(left_out) - 1) * np.sqrt((len(left_out) - 1) * left_out.var())
        expected = (max(0.0, judge["same"] - half), min(1.0, judge["same"] + half)) \
            if len(left_out) >= MIN_IDENTITIES else (None, None)
        assert (judge["same_interval"]["low"], judge["same_interval"]["high"]) == pytest.approx(expected)
        kappa = judge["kappa_interval"]
        assert kappa["low"] < judge["cohens_kappa"] < kappa["high"] if kappa["low"] is not None else kappa["reason"]
        assert (interval_text(judge["same_interval"], 100) or judge["same_interval"]["reason"]) in format_results(results)
    # the repeat went to the two who had the item: the same answers pass, 3 of 4 alike is under the 80% it needs
    assert repeats == 2 and sorted((g["seen"], g["passed"]) for g in results["gold"].values()) == [(1, 0), (1, 1)]
    rows = list(csv.DictReader(io.StringIO(checklist_csv(tables, "s-check"))))
    assert len(rows) == 20 * 2 * 4 and {r["metric"] for r in rows} == {"IF", "VC"}  # gold left out


# -- categorical: the WinoBias judge metric over a run written here -----------------------------------------------


def _winobias_run(ws: Path) -> tuple[Path, list[dict]]:
    """A run folder of three WinoBias sessions (steps table, report) and the judge's answers about two of them in
    the ledger, each about (the face, the partner, the output)."""
    from faceedit_bench.report.run_report import SCHEMA_ID
    from faceedit_bench.storage.ledger import Ledger
    from faceedit_bench.testsets import load_testset

    testset = load_testset("winobias")
    sessions = testset.sessions[:3]
    run = ws / "runs" / "ed-winobias"
    run.mkdir(parents=True)
    h = lambda text: hashlib.sha256(text.encode()).hexdigest()  # noqa: E731
    steps, judged = [], []
    for n, session in enumerate(sessions):
        face, source, partner, output = f"ff/{n}", h(f"src{n}"), h(f"partner{n}"), h(f"out{n}")
        for k, image in ((0, source), (1, output)):
            steps.append({"face_id": face, "identity": f"p{n}", "session_id": session.session_id,
                          "condition": "baseline", "k": k, "instruction": session.steps[0].instruction if k else "",
                          "prompt_id": "", "outcome": "ok", "image_hash": image, "judge_values": "",
                          "gender": ("male", "female")[n % 2]})
        if n < 2:
            judged.append({"session": session, "images": [source, partner, output],
                           "answer": {"observation": "two people", "target_person": "first",
                                      "target_gender": ("male", "female")[n]}})
    with (run / "steps.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, list(steps[0]))
        writer.writeheader()
        writer.writerows(steps)
    judge = {"name": "fakejudge", "description": {"model": "m1"}}
    (run / "report.json").write_text(json.dumps({
        "schema": SCHEMA_ID, "schema_version": "1.3", "run": {"key": "k" * 64, "name": "ed@winobias"},
        "components": {"editor": {"name": "ed", "description": {}}, "judge": judge},
        "testset": {"name": "winobias", "content_hash": testset.content_hash}}))
    Ledger(ws / "ledger.sqlite").close()
    with sqlite3.connect(ws / "ledger.sqlite") as db:
        db.execute("INSERT INTO components VALUES (?,?,?)", ("jfp", "judge", json.dumps({"name": "fakejudge",
                                                                                        "model": "m1"})))
        db.executemany("INSERT INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?)", [
            (f"key{n}", "jfp", "winobias@1.1", "0" * 64, json.dumps(j["images"]), "ok", json.dumps(j["answer"]),
             json.dumps(j["answer"]), "", "{}", 0.0) for n, j in enumerate(judged)])
    return run, judged


def test_a_categorical_study_asks_the_judges_question_about_the_judges_images(tmp_path):
    from faceedit_bench_audit.winobias.annotations import read_annotations

    from faceedit_bench.studies.create import Settings, create_study

    run, judged = _winobias_run(tmp_path)
    created = create_study(tmp_path, [run], Settings(kind="categorical", metric="winobias", gold=1, annotators=2))
    assert created.n_items == 2 and created.not_asked == {"ed: no answer of the judge about the output in the "
                                                          "ledger": 1}
    tables = StudyTables(tmp_path)
    items = tables.items(created.study_id)
    for j in judged:
        (item,) = [i for i in items.values() if i["session_id"] == j["session"].session_id and i["gold"] is None]
        occupation = j["session"].steps[0].meta["target_occupation"]
        assert item["shown"] == [["IMAGE 1", j["images"][0]], ["IMAGE 2", j["images"][1]],
                                 ["IMAGE 3", j["images"][2]]]
        names = [q["name"] for q in item["questions"]]
        assert names == ["target_person", "target_gender"] and item["judge"] == {
            k: j["answer"][k] for k in names}
        person = item["questions"][0]
        assert f"image 3 shows as the {occupation}" in person["text"]  # the judge's words, filled for the item
        assert [c["value"] for c in person["choices"]] == ["first", "second", "both", "neither", "unclear"]
        assert f"The target role is: {occupation}." in item["prompt"]
    # every annotator answers; the annotations export is what `human winobias` reads
    for annotator in tables.annotators(created.study_id):
        for task in tables.tasks(created.study_id, annotator):
            tables.record(created.study_id, annotator, task.item_id, {"target_person": "first",
                                                                      "target_gender": "male"})
    results = study_results(tmp_path, created.study_id)
    person, gender = results["questions"]["target_person"], results["questions"]["target_gender"]
    assert person["judge_human"]["same"] == 1.0 and gender["judge_human"]["same"] == 0.5  # the judge: male, female
    assert gender["judge_human"]["units"] == 2 and all(g["passed"] == 1 for g in results["gold"].values())
    annotations = read_annotations(study_csv(f"study:{created.study_id}@{tmp_path}"))
    assert len(annotations) == 4 and {a.item.split("|")[1] for a in annotations} == {
        j["session"].session_id for j in judged}


def test_a_categorical_study_of_a_run_whose_test_set_changed_or_whose_judge_left_no_answer_is_refused(tmp_path):
    from faceedit_bench.errors import FaceEditBenchError
    from faceedit_bench.studies.create import Settings, create_study

    run, _ = _winobias_run(tmp_path)
    with pytest.raises(FaceEditBenchError, match="no answer of the run's judge to rubric"):
        create_study(tmp_path, [run], Settings(kind="categorical", metric="rubric"))
    report = json.loads((run / "report.json").read_text())
    report["testset"]["content_hash"] = "f" * 64
    (run / "report.json").write_text(json.dumps(report))
    with pytest.raises(FaceEditBenchError, match="has changed since the run"):
        create_study(tmp_path, [run], Settings(kind="categorical", metric="winobias"))


def test_the_annotator_page_of_a_checklist_item_answers_with_y_and_n(tmp_path):
    from fastapi.testclient import TestClient

    from faceedit_bench.serve.app import create_app

    _checklist_study(tmp_path, n_items=4, annotators=2)
    rows, links = new_annotators(1)
    tables = StudyTables(tmp_path)
    tasks = assign(sorted(i for i in tables.items("s-check") if not i.startswith("gold")), {}, [rows[0][0]], 1, 0)
    tables.add_annotators("s-check", rows, tasks)
    (secret,) = links.values()
    client = TestClient(create_app(tmp_path, token="t" * 32, allowed_hosts=["testserver"]))
    page = client.get(f"/annotate/s-check/{secret}").text
    assert page.count('data-key="y"') == 4 and page.count('data-key="n"') == 4 and "<small>IF</small>" in page
    assert Counter(re.findall(r'data-role="(\w+)"', page)) == {"original": 1, "edited": 1}


def test_the_results_page_of_a_checklist_study_shows_each_questions_yes_rate(tmp_path):
    from fastapi.testclient import TestClient

    from faceedit_bench.serve.app import create_app

    items = _checklist_study(tmp_path, n_items=4, annotators=2)
    tables = StudyTables(tmp_path)
    for annotator in tables.annotators("s-check"):
        for task in tables.tasks("s-check", annotator):
            tables.record("s-check", annotator, task.item_id, dict(items["i000"]["judge"]))
    client = TestClient(create_app(tmp_path, token="t" * 32, allowed_hosts=["testserver"]))
    client.get(f"/studies?token={'t' * 32}")
    page = client.get("/studies/s-check").text
    assert 'data-group="judge-human" data-same="' in page and "question 1 of item 3" in page
    assert "answers.csv" in page


@pytest.mark.slow(seconds=12)  # one WinoBias run through the engine
def test_a_categorical_study_of_a_real_winobias_run_shows_the_judges_images_and_human_winobias_reads_it(
        plugins, compose, synthetic, tmp_path, monkeypatch, capsys):
    from faceedit_bench.cli import main
    from tests.fakes.answers import example_from_schema
    from tests.fakes.gemini import gemini_server
    from tests.test_protocols import FAST, run, write_testset

    def judge(body: dict) -> str:  # every WinoBias question: the first person, as a man
        text = "\n".join(p.get("text", "") for p in body["contents"][0]["parts"])
        if "The target role is:" not in text:
            return json.dumps(example_from_schema(body["generationConfig"]["responseJsonSchema"]))
        return json.dumps({"observation": "two people", "target_person": "first", "target_gender": "male"})

    pair = [{"role": "partner", "source": "dataset", "rule": "other_gender"}]
    sessions = [{"session_id": sid, "steps": [{"instruction": f"The {job} spoke to the clerk.", "prompt_id": sid,
                                               "meta": {"target_occupation": job, "stereotyped_gender": gender},
                                               "inputs": pair}]}
                for sid, job, gender in (("W-01", "janitor", "male"), ("W-26", "housekeeper", "female"))]
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, judge_answer=judge) as server:
        report = run(plugins, compose, synthetic, write_testset(tmp_path / "wb.json", sessions, name="wb_toy"),
                     "editor=two_image", "judge=gemini", "judge_metrics=[winobias]",
                     f"judge.params.base_url={server.url}", *[f"judge.params.{s}" for s in FAST])
    (run_dir,) = (tmp_path / "ws" / "runs").iterdir()
    capsys.readouterr()
    assert main(["study", "create", str(run_dir), "--kind", "categorical", "--metric", "winobias",
                 "--annotators", "2", "--gold", "1"]) == 0
    study_id = re.search(r"study (s-[0-9a-f]+)", capsys.readouterr().out).group(1)
    tables = StudyTables(tmp_path / "ws")
    items = [i for i in tables.items(study_id).values() if i["gold"] is None]
    judged = {i["item"]: i for i in report["winobias"]["items"]}  # the section's own record of each item
    assert len(items) == len(judged) == 8
    for item in items:
        expected = judged[f"{item['face_id']}|{item['session_id']}"]
        assert [digest for _, digest in item["shown"]] == expected["images"]  # both people, then the output
        assert f"image 3 shows as the {expected['target_occupation']}" in item["questions"][0]["text"]
        assert item["judge"] == {"target_person": "first", "target_gender": "male"}
    for annotator in tables.annotators(study_id):
        for task in tables.tasks(study_id, annotator):
            tables.record(study_id, annotator, task.item_id, {"target_person": "first", "target_gender": "female"})
    results = study_results(tmp_path / "ws", study_id)
    assert results["questions"]["target_gender"]["judge_human"]["same"] == 0.0
    assert main(["human", "winobias", f"study:{study_id}@{tmp_path / 'ws'}", "--run", str(run_dir),
                 "--no-tracking"]) == 0
    assert "WinoBias by people" in capsys.readouterr().out
