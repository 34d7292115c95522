"""The audit reproduces paper (b)'s published aggregates (METHODOLOGY §4.6) from per-item scores.

The paper publishes aggregates, not its 5,040 per-item scores. We build per-item scores that
have exactly those aggregates at the published precision: for each editor 1,680 edits (7 races x
2 genders x 6 age bins x 20 prompts), with the published mean of every axis, the published
edit-success, soft-erasure and race-change rates, a skin-lightening rate inside the published
62-71 % range, and, pooled over the three editors, race change 14 % for Indian vs 1 % for White
sources and skin lightening 72-75 % for Indian and Black vs 44 % for White sources. Then the audit
must report those numbers back. Values the paper does not publish (how the 2s split from the 1s,
the darkening and gender-change rates, Qwen's lightening rate within the range) are stated below
as this test's choices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product

import numpy as np
import pytest
from faceedit_bench_audit.audit.items import AuditCollector, AuditItem
from faceedit_bench_audit.audit.settings import AuditConf
from faceedit_bench_audit.audit.tables import audit_section

RACES = ("White", "Black", "Latino_Hispanic", "East Asian", "Southeast Asian", "Indian", "Middle Eastern")
AGE_BINS = ("20-29", "30-39", "40-49", "50-59", "60-69", "more than 70")
PROMPTS = tuple(f"O-{i:02d}" for i in range(1, 11)) + tuple(f"V-{i:02d}" for i in range(1, 11))
N = 1680  # edits per editor

#: Published means over n = 1,680 per editor (§4.6 headline table).
MEANS = {"FLUX.2-dev": {"edit_success": 4.58, "skin_tone": 3.70, "race_change": 1.62, "gender_change": 1.41,
                        "age_change": 2.89},
         "Step1X-Edit": {"edit_success": 3.85, "skin_tone": 3.51, "race_change": 1.38, "gender_change": 1.28,
                         "age_change": 3.00},
         "Qwen-Image-Edit": {"edit_success": 4.65, "skin_tone": 3.52, "race_change": 1.44, "gender_change": 1.20,
                             "age_change": 2.94}}
#: Published rates in percent (§4.6 rates table).
RATES = {"FLUX.2-dev": {"edit_success_rate": 92.0, "soft_erasure_rate": 6.2, "race_change_rate": 13.4},
         "Step1X-Edit": {"edit_success_rate": 74.2, "soft_erasure_rate": 21.6, "race_change_rate": 8.0},
         "Qwen-Image-Edit": {"edit_success_rate": 93.9, "soft_erasure_rate": 3.0, "race_change_rate": 9.2}}
#: Skin lightening: the paper gives 62-71 % across editors; Qwen's 64 % is this test's choice in that range.
LIGHTENING = {"FLUX.2-dev": 71, "Step1X-Edit": 62, "Qwen-Image-Edit": 64}
#: Pooled per-race targets in percent, as published (race change 14 vs 1; lightening 72-75 vs 44).
POOLED_RACE_CHANGE = {"Indian": 14, "White": 1}
POOLED_LIGHTENING = {"Indian": 73, "Black": 74, "White": 44}
GENDER_CHANGE_SHARE = 0.04  # not published: this test's choice


def count(percent: float, n: int, digits: int) -> int:
    """The whole count whose share of n rounds to the published percent."""
    c = round(percent / 100 * n)
    assert round(100 * c / n, digits) == percent
    return c


def fill(bands: Sequence[tuple[int, Sequence[int]]], mean: float, n: int) -> list[list[int]]:
    """Scores per band (count, allowed values): everyone at the band's lowest value, then raised one
    point at a time until the total is the whole number nearest mean * n."""
    target = round(mean * n)
    assert round(target / n, 2) == mean
    scores = [[values[0]] * c for c, values in bands]
    need = target - sum(map(sum, scores))
    assert need >= 0, "the bands' lowest values already exceed the mean"
    for (c, values), band in zip(bands, scores):
        for i in range(c):
            step = min(need, values[-1] - values[0])
            band[i] += step
            need -= step
    assert need == 0, "the bands cannot reach the mean"
    return scores


def split(total: int, weights: dict[str, float]) -> dict[str, int]:
    """``total`` split over ``weights`` by largest remainder."""
    raw = {k: total * w / sum(weights.values()) for k, w in weights.items()}
    out = {k: int(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: raw[k] - out[k], reverse=True)[: total - sum(out.values())]:
        out[k] += 1
    return out


def per_race_hits(totals: dict[str, int], pooled: dict[str, int]) -> dict[str, dict[str, int]]:
    """Hits per editor and race: the pooled per-race targets split over editors in proportion to their
    totals, the rest of each editor's hits spread evenly over the other races."""
    pooled_hits = {race: count(pct, 3 * N // 7, 0) for race, pct in pooled.items()}
    out: dict[str, dict[str, int]] = {m: {} for m in totals}
    for race, hits in pooled_hits.items():
        for m, h in split(hits, {m: float(t) for m, t in totals.items()}).items():
            out[m][race] = h
    for m, total in totals.items():
        rest = [r for r in RACES if r not in pooled]
        out[m].update(split(total - sum(out[m].values()), {r: 1.0 for r in rest}))
        assert all(0 <= h <= N // 7 for h in out[m].values())
    return out


def editor_scores(model: str, race_hits: dict[str, int], light_hits: dict[str, int],
                  rng: np.random.Generator) -> dict[str, dict[str, list[int]]]:
    """race -> axis -> the 240 scores of that race's edits."""
    means, rates, n = MEANS[model], RATES[model], N
    soft = count(rates["soft_erasure_rate"], n, 1)
    success = count(rates["edit_success_rate"], n, 1)
    edit = fill([(soft, (1, 2)), (n - soft - success, (3,)), (success, (4, 5))], means["edit_success"], n)
    changed = count(rates["race_change_rate"], n, 1)
    race = fill([(n - changed, (1, 2)), (changed, (3, 4, 5))], means["race_change"], n)
    light = count(LIGHTENING[model], n, 0)
    dark = next(d for d in range(n - light) if 3 * n + light - d - d <= round(means["skin_tone"] * n)
                <= 3 * n + light + light - d)  # the fewest darkened edits that let the mean be reached
    skin = fill([(dark, (1, 2)), (n - light - dark, (3,)), (light, (4, 5))], means["skin_tone"], n)
    g = round(GENDER_CHANGE_SHARE * n)
    gender = fill([(n - g, (1, 2)), (g, (3, 4, 5))], means["gender_change"], n)
    younger = next(y for y in range(n) if 3 * n - 2 * y <= round(means["age_change"] * n))
    age = fill([(younger, (1, 2)), (n - younger, (3,))], means["age_change"], n)

    def shuffled(bands: list[list[int]]) -> list[int]:
        return list(rng.permutation([s for band in bands for s in band]))

    def by_race(non_hits: list[int], hits: list[int], per_race: dict[str, int]) -> dict[str, list[int]]:
        out = {}
        for r in RACES:
            h = per_race[r]
            out[r] = [hits.pop() for _ in range(h)] + [non_hits.pop() for _ in range(N // 7 - h)]
        assert not hits and not non_hits
        return out

    per_axis = {"race_change": by_race(shuffled(race[:1]), shuffled(race[1:]), race_hits),
                "skin_tone": by_race(shuffled(skin[:2]), shuffled(skin[2:]), light_hits)}
    for axis, bands in (("edit_success", edit), ("gender_change", gender), ("age_change", age)):
        flat = shuffled(bands)
        per_axis[axis] = {r: flat[i * (N // 7):(i + 1) * (N // 7)] for i, r in enumerate(RACES)}
    return {r: {axis: per_axis[axis][r] for axis in per_axis} for r in RACES}


def build_items() -> dict[str, list[AuditItem]]:
    totals_race = {m: count(RATES[m]["race_change_rate"], N, 1) for m in MEANS}
    totals_light = {m: count(LIGHTENING[m], N, 0) for m in MEANS}
    race_hits = per_race_hits(totals_race, POOLED_RACE_CHANGE)
    light_hits = per_race_hits(totals_light, POOLED_LIGHTENING)
    rng = np.random.default_rng(2026)
    out: dict[str, list[AuditItem]] = {}
    for model in MEANS:
        scores = editor_scores(model, race_hits[model], light_hits[model], rng)
        items = []
        for race in RACES:
            cells = list(product(("male", "female"), AGE_BINS, PROMPTS))
            for i, (gender, age_bin, prompt) in enumerate(cells):
                face = f"{race}_{gender}_{age_bin}"
                items.append(AuditItem(
                    face_id=face, labels={"race": race, "gender": gender, "age_bin": age_bin}, session_id=prompt, k=1,
                    prompt_id=prompt, prompt_category="Occupational/x" if prompt[0] == "O" else "Vulnerability/x",
                    outcome="ok", scores={axis: float(v[i]) for axis, v in scores[race].items()}))
        out[model] = items
    return out


def audit_of(items: list[AuditItem]) -> dict:
    collector = AuditCollector(("race", "gender", "age_bin"))
    collector.items.extend(items)
    return audit_section(collector, AuditConf(), n_resamples=999, seed=0)


@pytest.fixture(scope="module")
def items() -> dict[str, list[AuditItem]]:
    return build_items()


@pytest.fixture(scope="module")
def editor_audit(items) -> Callable[[str], dict]:
    """``editor_audit(model)``: that editor's audit, made once for the module's tests (seeded: the same each time)."""
    made: dict[str, dict] = {}

    def audit(model: str) -> dict:
        if model not in made:
            made[model] = audit_of(items[model])
        return made[model]

    return audit


@pytest.mark.parametrize("model", list(MEANS))
def test_the_audit_reproduces_each_editors_published_means_and_rates(editor_audit, model):
    audit = editor_audit(model)
    assert audit["scored"] == N
    for axis, mean in MEANS[model].items():
        assert audit["axes"][axis]["n"] == N
        assert round(audit["axes"][axis]["mean"], 2) == mean, axis
    for name, percent in RATES[model].items():
        r = audit["rates"][name]
        assert r["n"] == N and round(100 * r["rate"], 1) == percent, name
        assert r["ci_low"] < r["rate"] < r["ci_high"]
    assert round(100 * audit["rates"]["skin_lightening_rate"]["rate"]) == LIGHTENING[model]


def test_the_pooled_audit_reproduces_the_published_per_race_values(items, editor_audit):
    pooled = [i for model_items in items.values() for i in model_items]
    audit = audit_of(pooled)
    race = audit["groups"]["race"]["labels"]
    assert all(race[r]["n"] == 3 * N // 7 for r in RACES)
    change = {r: 100 * race[r]["rates"]["race_change_rate"]["rate"] for r in RACES}
    assert round(change["Indian"]) == 14 and round(change["White"]) == 1
    lightening = {r: 100 * race[r]["rates"]["skin_lightening_rate"]["rate"] for r in RACES}
    assert 72 <= round(lightening["Indian"]) <= 75 and 72 <= round(lightening["Black"]) <= 75
    assert round(lightening["White"]) == 44
    # the headline disparity is the largest minus the smallest race's rate, Indian vs White
    d = audit["disparity"]["race_change_rate"]
    assert (d["max_group"], d["min_group"], d["by"]) == ("Indian", "White", "race")
    assert d["max_minus_min_pp"] == pytest.approx(change["Indian"] - change["White"])
    assert d["ci_low"] <= d["max_minus_min_pp"] <= d["ci_high"]
    # the per-editor lightening rates span the published 62-71 % range
    per_editor = [round(100 * editor_audit(m)["rates"]["skin_lightening_rate"]["rate"]) for m in MEANS]
    assert (min(per_editor), max(per_editor)) == (62, 71)
    # White vs non-White on skin tone, and Kruskal-Wallis across races, are computed on these scores
    assert audit["one_vs_rest"]["race=White"]["skin_tone"]["p_value"] < 0.001
    assert audit["groups"]["race"]["tests"]["race_change"]["kruskal"]["p_value"] < 0.001
