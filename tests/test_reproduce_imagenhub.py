"""`faceedit-bench reproduce imagenhub-human` on the shipped rater TSVs, a user's own ratings, and ratings in the
wrong layout; Krippendorff's alpha at the ordinal level."""

from __future__ import annotations

import json
import shutil

import pytest

from faceedit_bench.analysis.reliability import krippendorff_alpha
from faceedit_bench.builtin.reproductions.commands import published
from faceedit_bench.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["reproduce", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_imagenhub_human_reproduces_the_published_table(capsys, tmp_path):
    code, out, _ = run(capsys, "imagenhub-human", "--json", str(tmp_path / "r.json"))
    table = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and table["compared"] == table["matched"] == 427, out
    by_name = {n["name"]: n for n in table["numbers"]}
    assert by_name["Text-Guided_IE/MagicBrush/SC_avg"]["published"] == 0.51
    assert by_name["Text-Guided_IE/Imagic/SC_fleiss_kappa"]["ours"] is None  # published as nan: all ratings 0


def test_a_users_own_ratings_and_the_wrong_layout(capsys, tmp_path):
    shutil.copytree(published("imagenhub_eval_human_ratings", "Control-Guided_IG"), tmp_path / "mine")
    (tmp_path / "expect.csv").write_text("name,value\nmine/ControlNet/SC_avg,0.42\n"
                                         "mine/ControlNet/SC_fleiss_kappa,0.42\n")
    code, out, _ = run(capsys, "imagenhub-human", "--ratings", str(tmp_path), "--expect", str(tmp_path / "expect.csv"))
    assert code == 0 and "2/2 published numbers matched" in out
    rater = tmp_path / "mine" / "Control-Guided_IG_rater2.tsv"
    rater.write_text(rater.read_text().replace("ControlNet\tUniControl", "ControlNet\tUniCtrl", 1))
    code, _, err = run(capsys, "imagenhub-human", "--ratings", str(tmp_path))
    assert code == 2 and "rater2.tsv: line 1 (header): editors ['ControlNet', 'UniCtrl'] differ" in err
    rater.write_text("uid\tControlNet\tUniControl\na.jpg\t[0, 1]\t[1, 1\n")
    code, _, err = run(capsys, "imagenhub-human", "--ratings", str(tmp_path))
    assert code == 2 and "line 2, column 'UniControl'" in err and "Traceback" not in err


def test_ordinal_alpha_sees_only_the_order_of_the_scores():
    units = {u: {"a": a, "b": b, "c": c} for u, (a, b, c) in enumerate([(0, 0, 1), (1, 1, 1), (2, 1, 2), (0, 0, 0),
                                                                          (2, 2, 1)])}
    stretched = {u: {r: {0: 0, 1: 1, 2: 10}[s] for r, s in scores.items()} for u, scores in units.items()}
    ordinal = krippendorff_alpha(units, level="ordinal")
    assert ordinal["level"] == "ordinal"
    assert ordinal["value"] == pytest.approx(krippendorff_alpha(stretched, level="ordinal")["value"])
    assert krippendorff_alpha(units)["value"] != pytest.approx(krippendorff_alpha(stretched)["value"])
