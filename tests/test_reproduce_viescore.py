"""`faceedit-bench reproduce viescore` on the shipped published data, users' own files, and files in the wrong
layout; the correlation averages; the published-number comparison."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from faceedit_bench.analysis.metric_agreement import average_correlation
from faceedit_bench.analysis.published import Number, PublishedFileError, printed_tolerance, read_expect
from faceedit_bench.builtin.reproductions.commands import published
from tests.test_reproduce_imagenhub import run  # `faceedit-bench reproduce ...`: (exit code, stdout, stderr)

TASK = "ImagenHub_Text-Guided_IE"


def test_viescore_reproduces_every_published_correlation(capsys, tmp_path):
    code, out, _ = run(capsys, "viescore", "--json", str(tmp_path / "r.json"))
    table = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and table["compared"] == table["matched"] == 111, out
    by_name = {n["name"]: n for n in table["numbers"]}
    assert by_name[f"{TASK}/SDEdit/SC"]["published"] == 0.1091
    assert round(by_name["all/average_fisher_z/SC"]["ours"], 4) == 0.3757  # the proper average, beside 0.3322


def test_exact_rater_sums_part_from_the_published_o_correlations(capsys, tmp_path):
    code, _, _ = run(capsys, "viescore", "--exact", "--json", str(tmp_path / "r.json"))
    failed = [n for n in json.loads((tmp_path / "r.json").read_text())["numbers"] if n["matches"] is False]
    assert code == 1 and failed and all(n["name"].endswith("/O") for n in failed)
    assert max(abs(n["difference"]) for n in failed) < 0.005


def test_a_users_own_answers_and_ratings(capsys, tmp_path):
    answers, ratings = tmp_path / "answers", tmp_path / "ratings"
    shutil.copytree(published("viescore", "gemini_0shot", TASK), answers / TASK)
    shutil.copytree(published("imagenhub_human_ratings", TASK), ratings / TASK)
    (tmp_path / "expect.csv").write_text(f"name,value\n{TASK}/SDEdit/SC,0.1091\n{TASK}/average/SC,0.2836\n")
    code, out, _ = run(capsys, "viescore", "--answers", str(answers), "--ratings", str(ratings),
                       "--expect", str(tmp_path / "expect.csv"))
    assert code == 0 and "2/2 published numbers matched" in out


@pytest.mark.parametrize("name, text, message", [
    ("SDEdit/SC.json", '{"a.jpg": {"score": [1, 2]}, "b.jpg": {"sco', "not valid JSON"),
    ("SDEdit/SC.json", '{\n "a.jpg": {"score": [1, 2]},\n "b.jpg": {"score": "high"}\n}',
     "line 3, uid 'b.jpg', field 'score'"),
    ("SDEdit/SC.json", '[1, 2]', "expected an object"),
])
def test_answers_in_the_wrong_layout_are_exit_2(capsys, tmp_path, name, text, message):
    answers = tmp_path / "answers" / TASK
    shutil.copytree(published("viescore", "gemini_0shot", TASK, "SDEdit"), answers / "SDEdit")
    (answers / name).write_text(text)
    code, _, err = run(capsys, "viescore", "--answers", str(tmp_path / "answers"))
    assert code == 2 and message in err and "Traceback" not in err


def test_ratings_in_the_wrong_layout_are_exit_2(capsys, tmp_path):
    answers, ratings = tmp_path / "answers" / TASK, tmp_path / "ratings" / TASK
    shutil.copytree(published("viescore", "gemini_0shot", TASK, "SDEdit"), answers / "SDEdit")
    ratings.mkdir(parents=True)
    mine = ("--answers", str(tmp_path / "answers"), "--ratings", str(tmp_path / "ratings"))
    (ratings / "r1.tsv").write_text("uid\tSDEdit\na.jpg\t[0, 1]\nb.jpg\t[0.5]\n")
    code, _, err = run(capsys, "viescore", *mine)
    assert code == 2 and "line 3, column 'SDEdit': '[0.5]' is not an '[SC, PQ]' pair" in err
    (ratings / "r1.tsv").write_text("id,SDEdit\na.jpg,[0, 1]\n")
    code, _, err = run(capsys, "viescore", *mine)
    assert code == 2 and "line 1 (header)" in err
    (ratings / "r1.tsv").write_text("uid\tSDEdit\tMagicBrush\na.jpg\t[0, 1]\n")
    code, _, err = run(capsys, "viescore", *mine)
    assert code == 2 and "line 2: 2 fields where the header has 3" in err


def test_the_fisher_z_average_recovers_a_common_correlation_better_than_tanh_of_mean():
    """Seeded simulation: several samples of one population correlation; tanh(mean r) shrinks it toward 0."""
    rng = np.random.default_rng(7)
    rho, n = 0.6, 150
    cov = [[1, rho], [rho, 1]]
    rs = [float(np.corrcoef(rng.multivariate_normal([0, 0], cov, n).T)[0, 1]) for _ in range(40)]
    fisher, published_rule = average_correlation(rs), average_correlation(rs, "tanh_of_mean")
    assert abs(fisher - rho) < 0.02 and abs(published_rule - math.tanh(rho)) < 0.02  # tanh(0.6) = 0.537
    assert average_correlation([]) is None and math.isclose(average_correlation([0.3]), 0.3)
    with pytest.raises(ValueError, match="fisher_z"):
        average_correlation([0.1], "median")


def test_printed_precision_and_expect_files(tmp_path):
    assert [printed_tolerance(t) for t in ("53.54", "1252", "-0.0053")] == [0.005, 0.5, 0.00005]
    assert Number("x", 53.544, 53.54, 0.005).matches and not Number("x", 53.546, 53.54, 0.005).matches
    assert Number("x", 1.0).matches is None
    (tmp_path / "e.csv").write_text("name,value\na,1.25\nb,x\n")
    with pytest.raises(PublishedFileError, match="line 3, field 'value': 'x' is not a number"):
        read_expect(tmp_path / "e.csv")
    (tmp_path / "e.csv").write_text("name,value\na,1.25\na,2\n")
    with pytest.raises(PublishedFileError, match="line 3, field 'name': 'a' is given twice"):
        read_expect(tmp_path / "e.csv")
