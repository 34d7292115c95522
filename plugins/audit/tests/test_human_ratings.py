"""Human ratings (METHODOLOGY §4.6): the CSV's checks, reliability against the reference packages and by
hand, the tests on human scores, VLM − human, and agreement of metrics with people against scipy."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from faceedit_bench_audit.human.agreement import human_agreement
from faceedit_bench_audit.human.ratings import RatingsError, parse_ratings
from faceedit_bench_audit.human.report import format_human, human_section, render_human_html
from faceedit_bench_audit.human.runs import RatedRun
from scipy import stats
from statsmodels.stats import inter_rater

from faceedit_bench.api.statistics import metric_agreement, rank_table, reliability
from faceedit_bench.testing import pairwise_accuracy

HEADER = "item,rater,axis,score,condition\n"


def csv_text(rows: list[tuple]) -> str:
    return HEADER + "".join(",".join(str(c) for c in r) + "\n" for r in rows)


# -- the CSV ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ("item,rater,score\n", "line 1 (header): missing column(s) axis"),
    ("item,rater,axis,score,colour\n", "unknown column(s) colour"),
    ("item,rater,axis,score,score\n", "named twice: score"),
    ("", "empty file"),
    (HEADER, "no ratings"),
    (HEADER + "a,r1,edit_success,four,baseline\n", "line 2, column score: 'four' is not a number"),
    (HEADER + "a,r1,edit_success,7,baseline\n", "line 2, column score: 7 is outside the scale 1..5"),
    (HEADER + "a,,edit_success,3,baseline\n", "line 2, column rater: empty"),
    (HEADER + "a,r1,edit success,3,baseline\n", "line 2, column axis: 'edit success' is not an axis name"),
    (HEADER + "a,r1,edit_success,3\n", "line 2: 4 cells, but the header has 5 columns"),
    (HEADER + "a,r1,edit_success,3,baseline\na,r1,edit_success,4,baseline\n",
     "line 3: rater 'r1' already scored edit_success of item 'a' (baseline) on line 2"),
    (HEADER + "a,r1,edit_success,nan,baseline\n", "'nan' is not a number"),
])
def test_ratings_csv_errors_name_the_line_and_column(text, message):
    with pytest.raises(RatingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_ratings(text, "ratings.csv")


def test_every_problem_is_listed_at_once():
    with pytest.raises(RatingsError) as caught:
        parse_ratings(HEADER + "a,r1,x,9,b\nb,r2,x,0,b\nc,r3,x,abc,b\n", "ratings.csv")
    text = str(caught.value)
    assert "3 problem(s)" in text and "line 2" in text and "line 3" in text and "line 4" in text


def test_an_item_has_one_race():
    text = "item,rater,axis,score,race\na,r1,x,3,Black\na,r2,x,4,White\n"
    with pytest.raises(RatingsError, match="line 3, column race: item 'a' is 'White' here but 'Black' on line 2"):
        parse_ratings(text)


def test_the_condition_column_is_optional_and_the_scale_configurable(tmp_path: Path):
    ratings = parse_ratings("item,rater,axis,score\na,r1,sc,70\na,r2,sc,80\n", scale=(0, 100))
    assert ratings.conditions == ["baseline"] and [r.score for r in ratings.rows] == [70.0, 80.0]
    from faceedit_bench_audit.human.ratings import read_ratings

    with pytest.raises(RatingsError, match="no such file"):
        read_ratings(tmp_path / "missing.csv")


# -- reliability ----------------------------------------------------------------------------------


def test_kappa_and_alpha_by_hand():
    # Units [1,1], [2,2], [1,2] by two raters. Fleiss: P_i = 1, 1, 0 -> P = 2/3; p_1 = p_2 = 1/2 -> P_e = 1/2;
    # kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3. Krippendorff (interval): D_o = 2/6 (unit 3's two ordered pairs),
    # D_e = 18/30 (three 1s and three 2s), alpha = 1 - (1/3)/(3/5) = 4/9.
    units = {"u1": {"a": 1, "b": 1}, "u2": {"a": 2, "b": 2}, "u3": {"a": 1, "b": 2}}
    assert reliability(units, "fleiss_kappa")["value"] == pytest.approx(1 / 3)
    assert reliability(units, "krippendorff_alpha")["value"] == pytest.approx(4 / 9)


def test_kappa_and_alpha_agree_with_the_reference_packages():
    rng = np.random.default_rng(7)
    raters = [f"r{i}" for i in range(6)]
    units = {}
    for u in range(40):  # three of six raters per unit, scores that lean on a per-unit truth
        truth = rng.integers(1, 6)
        chosen = rng.choice(6, size=3, replace=False)
        units[f"u{u}"] = {raters[r]: int(np.clip(truth + rng.integers(-1, 2), 1, 5)) for r in chosen}
    units["u40"] = {"r0": 3, "r1": 4}  # two raters only: left out of kappa, kept in alpha
    kappa = reliability(units, "fleiss_kappa")
    table, _ = inter_rater.aggregate_raters(np.array([sorted(units[f"u{u}"].values()) for u in range(40)]))
    assert kappa["value"] == pytest.approx(inter_rater.fleiss_kappa(table, method="fleiss"))
    assert (kappa["units"], kappa["raters_per_unit"], kappa["units_left_out"]) == (40, 3, 1)
    matrix = np.full((6, 41), np.nan)
    for j, unit in enumerate(units.values()):
        for rater, score in unit.items():
            matrix[raters.index(rater), j] = score
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert reliability(units, "krippendorff_alpha", raters=raters)["value"] == pytest.approx(expected)


def test_undefined_reliability_says_why():
    assert "no unit has two" in reliability({"u": {"a": 3}}, "fleiss_kappa")["reason"]
    same = {"u": {"a": 3, "b": 3}, "v": {"a": 3, "b": 3}}
    assert "same score" in reliability(same, "krippendorff_alpha")["reason"]
    assert "whole points" in reliability({"u": {"a": 3.5, "b": 3}}, "fleiss_kappa")["reason"]
    with pytest.raises(ValueError, match="choose one of fleiss_kappa, krippendorff_alpha"):
        reliability(same, "cohen_kappa")


# -- the human section ---------------------------------------------------------------------------


def paper_like_ratings() -> str:
    """Two editors, 8 items each, 3 raters, baseline and feature prompt, two axes; races on items."""
    rows = ["item,rater,axis,score,condition,editor,race"]
    races = ["White", "Black", "Indian", "White", "Black", "Indian", "White", "Black"]
    for e, editor in enumerate(["flux", "qwen"]):
        for i in range(8):
            for c, condition in enumerate(["baseline", "features"]):
                for r in range(3):
                    success = min(5, 2 + (i + r + e) % 4)
                    race_change = 1 + (i % 3 == 1) + (r == 0) * (1 - c) + (c == 0 and races[i] == "Indian")
                    rows.append(f"f{i}|O-01,r{r},edit_success,{max(1, success - c)},{condition},{editor},{races[i]}")
                    rows.append(f"f{i}|O-01,r{r},race_change,{race_change},{condition},{editor},{races[i]}")
    return "\n".join(rows) + "\n"


def test_the_section_pairs_conditions_tests_races_and_compares_the_vlm():
    ratings = parse_ratings(paper_like_ratings())
    vlm = {(e, f"f{i}|O-01", "baseline", "edit_success"): 5.0 for e in ("flux", "qwen") for i in range(8)}
    section = human_agreement(ratings, vlm)
    success = section["axes"]["edit_success"]
    assert (success["outputs"], success["ratings"]) == (32, 96)
    means = {}
    for r in ratings.rows:
        if r.axis == "edit_success":
            means.setdefault(r.unit, []).append(r.score)
    assert success["human"]["mean"] == pytest.approx(np.mean([np.mean(v) for v in means.values()]))
    (family,) = section["paired"]
    test = next(t for t in family["tests"] if t["name"] == "edit_success")
    base = [np.mean(means[(e, f"f{i}|O-01", "baseline")]) for e in ("flux", "qwen") for i in range(8)]
    feat = [np.mean(means[(e, f"f{i}|O-01", "features")]) for e in ("flux", "qwen") for i in range(8)]
    diff = np.array(feat) - np.array(base)
    assert test["mean_delta"] == pytest.approx(diff.mean())
    assert test["p_value"] == pytest.approx(stats.wilcoxon(diff).pvalue)
    race = next(g for g in section["group_tests"] if g["axis"] == "race_change" and g["condition"] == "baseline")
    assert race["kruskal"]["p_value"] is not None and "white_vs_rest" in race
    vs = section["vlm_vs_human"]["by_axis"]["edit_success"]
    human_base = np.mean(base)
    assert (vs["n"], vs["unmatched"]) == (16, 16)
    assert vs["difference"] == pytest.approx(5.0 - human_base)
    assert section["vlm_vs_human"]["by_editor"]["flux"]["baseline"]["edit_success"]["vlm"] == 5.0
    text = format_human(section)
    assert "Fleiss kappa" in text and "features vs baseline" in text
    page = render_human_html(section)
    assert 'id="human-agreement"' in page and "Krippendorff" in page


def rated_run(label: str, values: dict[str, float], sc_mean: float) -> RatedRun:
    rows = tuple({"face_id": f"f{i}", "session_id": "O-01", "excluded": "", "edit_success": str(v),
                  "sc": str(10 * v + (i % 2))} for i, v in values.items())
    return RatedRun(label, Path(label), {"run": {"key": label}, "metrics": {
        "sc": {"mean": sc_mean, "higher_is_better": True}, "drop_fss": {"mean": 1.0, "higher_is_better": False}}},
        rows)


def test_against_runs_a_metric_and_the_rank_table():
    ratings = parse_ratings(paper_like_ratings())
    runs = [rated_run("flux", {i: 1 + (i % 5) for i in range(8)}, 60.0),
            rated_run("qwen", {i: 5 - (i % 4) for i in range(6)}, 70.0)]
    section = human_section(ratings, runs, metrics=["sc"], against="edit_success")
    by_metric = {m["metric"]: m for m in section["metric_agreement"]}
    assert set(by_metric) == {"vlm:edit_success", "sc"}
    vlm = by_metric["vlm:edit_success"]
    assert vlm["items"] == 14 and vlm["unmatched"]["human_only"] == 18  # 2 unrated qwen items; features outputs
    assert vlm["system_level"]["spearman"] is None and "at least 3" in vlm["system_level"]["reason"]
    ranks = section["rank_table"]
    assert ranks["metrics"]["sc"]["qwen"]["rank"] == 1.0 and ranks["metrics"]["sc"]["flux"]["rank"] == 2.0
    assert set(ranks["metrics"]) == {"human:edit_success", "sc"}
    mapped = human_section(ratings, runs, vlm_axes={"edit_success": "sc"})["vlm_vs_human"]["by_axis"]["edit_success"]
    sc = [10 * (1 + (i % 5)) + (i % 2) for i in range(8)] + [10 * (5 - (i % 4)) + (i % 2) for i in range(6)]
    assert mapped["vlm"]["mean"] == pytest.approx(np.mean(sc))
    with pytest.raises(RatingsError, match="the ratings have no axis 'skin'"):
        human_section(ratings, runs, vlm_axes={"skin": "skin_tone"})
    with pytest.raises(RatingsError, match="no run has a value 'creval'"):
        human_section(ratings, runs, metrics=["creval"])
    with pytest.raises(RatingsError, match="'gpt' is none of the given runs' editors"):
        human_section(parse_ratings(paper_like_ratings().replace(",qwen,", ",gpt,")), runs)
    with pytest.raises(RatingsError, match="no editor column, but 2 runs"):
        human_section(parse_ratings("item,rater,axis,score\na,r,edit_success,3\n"), runs)


# -- agreement with people against scipy ------------------------------------------------------------


def test_item_and_system_correlations_are_scipys():
    rng = np.random.default_rng(3)
    systems, items = ["a", "b", "c", "d"], range(15)
    human = {(s, i): float(rng.integers(1, 6)) for s in systems for i in items}
    metric = {k: v * 10 + float(rng.normal(0, 8)) for k, v in human.items()}
    del metric[("a", 0)]  # unmatched: left out
    result = metric_agreement(human, metric)
    keys = sorted(k for k in human if k in metric)
    x, y = [human[k] for k in keys], [metric[k] for k in keys]
    assert result["item_level"]["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert result["item_level"]["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    hs = [np.mean([human[k] for k in keys if k[0] == s]) for s in systems]
    ms = [np.mean([metric[k] for k in keys if k[0] == s]) for s in systems]
    assert result["system_level"]["spearman"] == pytest.approx(stats.spearmanr(hs, ms).statistic)
    assert result["system_level"]["kendall"] == pytest.approx(stats.kendalltau(hs, ms).statistic)
    agree = sum((hs[i] - hs[j]) * (ms[i] - ms[j]) > 0 for i, j in itertools.combinations(range(4), 2))
    assert result["pairwise"]["accuracy"] == pytest.approx(agree / 6)
    flipped = metric_agreement(human, {k: -v for k, v in metric.items()}, same_direction=False)
    assert flipped["item_level"]["spearman"] == pytest.approx(result["item_level"]["spearman"])


def test_pairwise_accuracy_by_hand_with_ties():
    human = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    metric = {"a": 0.9, "b": 0.5, "c": 0.1, "d": 0.5}
    # pairs: ab +, ac +, ad +, bc human tie (left out), bd metric tie (a miss), cd wrong order -> 3 / 5
    result = pairwise_accuracy(human, metric)
    assert (result["accuracy"], result["pairs"], result["human_ties_left_out"], result["metric_ties"]) == (
        0.6, 5, 1, 1)


def test_rank_table_follows_each_metrics_direction():
    table = rank_table({"sc": {"x": 80.0, "y": 60.0, "z": 60.0}, "drop_fss": {"x": 10.0, "y": 5.0}},
                       {"sc": True, "drop_fss": False})
    assert table["metrics"]["sc"]["x"]["rank"] == 1.0 and table["metrics"]["sc"]["y"]["rank"] == 2.5
    assert table["metrics"]["drop_fss"]["y"]["rank"] == 1.0 and "z" not in table["metrics"]["drop_fss"]


def test_a_sessions_table_without_conditions_cannot_hide_two_values_per_item():
    rows = ({"face_id": "f0", "session_id": "O-01", "excluded": "", "sc": "50"},
            {"face_id": "f0", "session_id": "O-01", "excluded": "", "sc": "70"})
    with pytest.raises(RatingsError, match=re.escape("several rows for item 'f0|O-01' and no condition column")):
        RatedRun("flux", Path("flux"), {}, rows).values("sc")
    with pytest.raises(RatingsError, match="column 'session_id' holds 'O-01', not a number"):
        RatedRun("flux", Path("flux"), {}, rows[:1]).values("session_id")
    with_conditions = tuple({**r, "condition": c} for r, c in zip(rows, ("baseline", "features")))
    assert RatedRun("flux", Path("flux"), {}, with_conditions).values("sc") == {
        ("f0|O-01", "baseline"): 50.0, ("f0|O-01", "features"): 70.0}


def test_compare_ranks_editors_by_every_shared_metric():
    from faceedit_bench.testing import kendall_lines, metric_ranks

    reports = [{"metrics": {"sc": {"mean": m, "higher_is_better": True}, "drop_fss": {"mean": d, "higher_is_better": False},
                            "creval": {"mean": c, "higher_is_better": True}}}
               for m, d, c in ((80, 10, 70), (60, 20, 65), (70, 5, 60))]
    ranks = metric_ranks(reports, ["a", "b", "c"])
    assert [ranks["metrics"]["sc"][s]["rank"] for s in "abc"] == [1.0, 3.0, 2.0]
    assert [ranks["metrics"]["drop_fss"][s]["rank"] for s in "abc"] == [2.0, 3.0, 1.0]
    taus = {(t["a"], t["b"]): t["tau"] for t in ranks["kendall"]}
    assert taus[("sc", "creval")] == pytest.approx(stats.kendalltau([1, 3, 2], [1, 2, 3]).statistic)
    assert "Kendall tau sc vs creval: 0.333" in kendall_lines(ranks)
    assert metric_ranks(reports[:1], ["a"]) is None  # one editor: nothing to rank


# Paper (b) Table 5 (METHODOLOGY §4.6): VLM and human means on the same baseline outputs, per model and axis.
TABLE5_AXES = ("edit_success", "skin_tone", "race_change", "gender_change", "age_change")
TABLE5 = {"flux2_dev": ((4.63, 3.64, 1.62, 1.41, 2.98), (3.86, 3.22, 1.52, 1.50, 2.99)),
          "step1x_edit": ((3.90, 3.46, 1.36, 1.37, 3.04), (2.97, 3.18, 1.39, 1.49, 3.09)),
          "qwen_image_edit": ((4.60, 3.59, 1.42, 1.27, 2.87), (4.12, 3.19, 1.45, 1.34, 2.97))}


def _integers(total: int, n: int) -> list[int]:
    """n whole scores summing to total, as even as possible."""
    q, r = divmod(total, n)
    return [q + 1] * r + [q] * (n - r)


def test_table5_is_reproduced_from_synthetic_per_item_scores():
    """Per-item scores built to match Table 5's means (100 outputs per model, 3 raters each) give back every
    cell, and the VLM's overestimate of edit success averages +0.72 as the paper says."""
    items = 100
    lines, runs = ["item,rater,axis,score,editor"], []
    for editor, (vlm, human) in TABLE5.items():
        rows = [{"face_id": f"f{i}", "session_id": "O-01", "excluded": ""} for i in range(items)]
        for axis, v, h in zip(TABLE5_AXES, vlm, human):
            for row, score in zip(rows, _integers(round(v * items), items)):
                row[axis] = str(score)
            ratings = _integers(round(h * items * 3), items * 3)
            lines += [f"f{n // 3}|O-01,r{n % 3},{axis},{s},{editor}" for n, s in enumerate(ratings)]
        runs.append(RatedRun(editor, Path(editor), {"metrics": {}}, tuple(rows)))
    section = human_section(parse_ratings("\n".join(lines) + "\n"), runs)
    table = section["vlm_vs_human"]["by_editor"]
    for editor, (vlm, human) in TABLE5.items():
        for axis, v, h in zip(TABLE5_AXES, vlm, human):
            cell = table[editor]["baseline"][axis]
            assert (round(cell["vlm"], 2), round(cell["human"], 2), cell["n"]) == (v, h, items)
    overestimate = np.mean([table[e]["baseline"]["edit_success"]["difference"] for e in TABLE5])
    assert overestimate == pytest.approx(0.7267, abs=1e-4) and int(overestimate * 100) == 72
    assert section["vlm_vs_human"]["by_axis"]["edit_success"]["difference"] == pytest.approx(overestimate)
