"""Validity of the flags and intervals, shown by seeded simulations through the functions the report uses
(issue 37): sessions of one person share a per-face effect, so only identity-clustered inference keeps its
level. The measured rates are quoted in docs/statistics.md and docs/fidelity.md."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from faceedit_bench.analysis.disparity import GroupTest, compare_groups
from faceedit_bench.analysis.multiplicity import smallest_p, untestable_reason
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.report.html import render_html_report
from faceedit_bench.report.summary import format_summary
from faceedit_bench.run.experiment import build_experiment, run_experiment

ALPHA = 0.05
DATASETS = 200
CONTRASTS = 9


def clustered_dataset(rng: np.random.Generator, *, identities: int = 5, shift: float = 0.0,
                      name: str = "t") -> GroupTest:
    """Two groups of ``identities`` people, 2-4 sessions each; a person's sessions share a face effect (SD 5
    against a session noise of SD 2, in Drop_FSS-like units where the flag's threshold is WD 3)."""
    sizes = rng.integers(2, 5, size=2 * identities)
    ids = np.repeat(np.arange(2 * identities), sizes)
    values = 30 + rng.normal(0, 5, 2 * identities)[ids] + rng.normal(0, 2, ids.size)
    in_b = ids >= identities
    values[in_b] += shift
    return GroupTest("drop_fss", "gender", "female", "male", values[~in_b], values[in_b], ids[~in_b], ids[in_b],
                     higher_is_better=False, name=name)


def upper(rate: float, n: int) -> float:
    """alpha plus its one-sided 99 % Monte Carlo margin over n datasets."""
    return rate + 2.33 * math.sqrt(rate * (1 - rate) / n)


@pytest.fixture(scope="module")
def null_runs() -> list[list[dict]]:
    """200 runs of 9 contrasts each, 6 identities per group, none with a group difference (1,800 datasets)."""
    rng = np.random.default_rng(37)
    return [compare_groups([clustered_dataset(rng, identities=6, name=f"c{j}") for j in range(CONTRASTS)],
                           n_resamples=399, workers=1) for _ in range(DATASETS)]


@pytest.mark.slow(seconds=10)
def test_under_the_null_a_contrast_is_flagged_at_most_at_alpha(null_runs):
    flat = [r for run in null_runs for r in run]
    alone = np.mean([r["wd"] > r["threshold"] and r["p_clustered"] < ALPHA for r in flat])  # a family of one
    assert alone <= upper(ALPHA, len(flat))  # measured 0.050 over 1,800 datasets
    paper = np.mean([r["paper_rule"]["bias"] for r in flat])
    assert paper > 0.2  # the paper's session-level rule: 0.315, what the honest flag replaces


def test_under_the_null_the_run_raises_a_flag_at_most_at_alpha(null_runs):
    any_flag = np.mean([any(r["bias"] for r in run) for run in null_runs])
    assert any_flag <= upper(ALPHA, DATASETS)  # family-wise over 9 contrasts, Holm: measured 0.045
    uncorrected = np.mean([any(r["wd"] > 3 and r["p_clustered"] < ALPHA for r in run) for run in null_runs])
    assert uncorrected > 0.2  # clustered but uncorrected: 0.38, what Holm removes
    assert np.mean([any(r["paper_rule"]["bias"] for r in run) for run in null_runs]) > 0.8  # paper's rule: 0.975
    assert all(r["bias_status"] in ("yes", "no") and r["family_size"] == CONTRASTS for run in null_runs for r in run)


def test_a_planted_group_effect_is_detected():
    rng = np.random.default_rng(38)
    runs = [compare_groups([clustered_dataset(rng, identities=8, shift=10.0)], n_resamples=199, workers=1)[0]
            for _ in range(DATASETS)]
    power = np.mean([r["bias"] for r in runs])
    assert power >= 0.8  # measured 0.885: 8 identities per group, a shift of 2 face SDs (docs/statistics.md)
    assert all(r["worst_group"] == "male" for r in runs if r["bias"])


@pytest.mark.parametrize("bounds", [None, (0, 100)])
def test_clustered_intervals_cover_the_mean_with_per_face_effects(bounds):
    rng = np.random.default_rng(39)
    covered = []
    for _ in range(DATASETS):
        ids = np.repeat(np.arange(20), rng.integers(2, 9, size=20))
        values = 50 + rng.normal(0, 10, 20)[ids] + rng.normal(0, 10, ids.size)
        s = summarize(values, 0.95, bounds=bounds, clusters=ids)
        assert s["ci_method"] == "cluster_t" and s["n_identities"] == 20
        covered.append(s["ci_low"] <= 50 <= s["ci_high"])
    assert np.mean(covered) >= 0.92  # measured 0.96, bounded or not
    naive = []  # the same data with each session taken as a person: the interval the issue found
    rng = np.random.default_rng(39)
    for _ in range(DATASETS):
        ids = np.repeat(np.arange(20), rng.integers(2, 9, size=20))
        values = 50 + rng.normal(0, 10, 20)[ids] + rng.normal(0, 10, ids.size)
        s = summarize(values, 0.95, bounds=None)
        naive.append(s["ci_low"] <= 50 <= s["ci_high"])
    assert np.mean(naive) < 0.85  # 0.675: sessions taken as people


def test_an_all_equal_sample_is_never_a_zero_width_interval():
    eighty, hundred = summarize([80.0] * 6, bounds=(0, 100)), summarize([100.0] * 6, bounds=(0, 100))
    assert eighty["ci_method"] == hundred["ci_method"] == "wilson"
    assert eighty["ci_high"] - eighty["ci_low"] > 40 and hundred["ci_high"] - hundred["ci_low"] > 30
    for bounds in (None, (0, None)):  # Drop_FSS, OER
        no_spread = summarize([2.0] * 6, bounds=bounds)
        assert no_spread["ci_low"] is None and "no spread" in no_spread["ci_reason"]
    one_person = summarize([70.0, 80.0, 90.0], bounds=(0, 100), clusters=["a", "a", "a"])
    assert one_person["ci_low"] is None and "1 identity" in one_person["ci_reason"]


@pytest.mark.parametrize(("k_a", "k_b", "testable"), [(1, 9, False), (2, 2, False), (3, 3, False), (4, 4, True),
                                                       (2, 5, True)])
def test_a_contrast_is_tested_only_when_its_clustered_p_can_reach_alpha(k_a, k_b, testable):
    reason = untestable_reason({"a": k_a, "b": k_b}, ALPHA, 9999)
    assert (reason is None) is testable
    if k_a > 1 and not testable:
        assert f"{math.comb(k_a + k_b, k_a)} arrangements" in reason
    assert smallest_p(2, 2, 9999) == pytest.approx(1 / 6)


def test_two_faces_one_per_group_flag_nothing_and_say_why(plugins, compose, synthetic, tmp_path):
    # the noise editor changes the two faces differently: the session-level test sees a difference
    cfg = compose(*synthetic, "testset=pose", "run.max_faces=2", "editor=noise", "+editor.params.strength=60")
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    (row,) = report["disparity"]
    assert row["bias"] is None and row["bias_status"] == "not_tested" and row["n_identities"] == {"male": 1,
                                                                                                   "female": 1}
    assert "a group needs at least 2 identities" in row["not_tested_reason"]
    assert report["multiplicity"]["testable"] == 0 and report["multiplicity"]["not_tested"] == 1
    assert report["sample_size"] == {**report["sample_size"], "identities": 2, "preliminary": True}
    text = format_summary(report, tmp_path, width=160)
    assert "BIAS" not in text.replace("paper's rule", "").replace("BIAS (p", "")
    assert "not tested" in text and "0 flagged of 0 testable contrasts; 1 not testable" in text
    assert text.lstrip().startswith("PRELIMINARY: 2 identities")
    page = render_html_report(report)
    assert 'class="badge bias"' not in re.sub(r"<p class=\"muted\">WD: .*?</p>", "", page, flags=re.S)
    assert "not tested: identities per group: male 1, female 1" in page and 'id="preliminary"' in page


def test_a_paired_difference_between_runs_is_clustered_by_face():
    from faceedit_bench.report.paired_differences import paired_difference

    a, b = [10.0, 11.0, 12.0, 13.0, 12.0, 11.0], [20.0, 22.0, 21.0, 25.0, 23.0, 24.0]
    one_face = paired_difference(a, b, clusters=["f1"] * 6)
    assert one_face["ci_low"] is None and one_face["p_value"] is None and one_face["n_identities"] == 1
    three_faces = paired_difference(a, b, clusters=["f1", "f1", "f2", "f2", "f3", "f3"])
    assert three_faces["ci_method"] == "cluster_t" and three_faces["p_value"] is not None
    assert three_faces["ci_high"] - three_faces["ci_low"] > paired_difference(a, b)["ci_high"] - paired_difference(
        a, b)["ci_low"]  # 3 people, not 6
