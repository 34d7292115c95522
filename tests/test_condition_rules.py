"""Prompt conditions without the engine: how feature texts are joined to instructions, the demographic
word list, and paper (b)'s stratified mitigation sample (exact per prompt id, proportional per stratum,
order-free)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from faceedit_bench.run.condition_prompts import join
from faceedit_bench.scoring.judge.condition_templates import demographic_labels


def test_joining_and_the_word_list():
    assert join("append", "Make it so.", "Maintain the person's eyes.") == "Make it so. Maintain the person's eyes."
    assert join("append", "Make it so", "Maintain the person's eyes.") == "Make it so. Maintain the person's eyes."
    assert join("prepend", "Make it so.", "Maintain the person's eyes") == "Maintain the person's eyes. Make it so."
    assert demographic_labels("Maintain the person's Black hair and white beard.") == []
    found = set(demographic_labels("Keep the Black woman's elderly look and Middle Eastern nose"))
    assert found == {("race", "black"), ("gender", "woman"), ("age", "elderly"), ("race", "middle eastern")}
    assert demographic_labels("a human, womanly look") == []  # whole words only
    realistic = ("Maintain the person's deep brown skin with warm undertones, almond-shaped dark brown eyes, a broad "
                 "nose, full lips, short black coily hair greying at the temples, a masculine jawline, male-pattern "
                 "baldness and youthful skin.")
    assert demographic_labels(realistic) == []  # shades and feature descriptions are not category labels


def test_paper_b_mitigation_sample_is_stratified_proportional_and_order_free():
    from faceedit_bench.records import Face, Session, Step
    from faceedit_bench.run.sampling import stratified_sample

    races = ["White", "Black", "Latino_Hispanic", "East Asian", "Southeast Asian", "Indian", "Middle Eastern"]
    ages = ["20-29", "30-39", "40-49", "50-59", "60-69", "more than 70"]
    faces = [Face(f"{r}_{g}_{a}", f"{r}_{g}_{a}", Path("x"), (), {"race": r, "gender": g, "age_bin": a})
             for r in races for g in ("male", "female") for a in ages]
    sessions = [Session(p, "diagnostic", (Step(1, f"prompt {p}", prompt_id=p),))
                for p in [f"O-{i:02d}" for i in range(1, 11)] + [f"V-{i:02d}" for i in range(1, 11)]]
    sample = stratified_sample(faces, sessions, per_prompt=25, by=["race", "gender", "age_bin"], seed=0)
    assert len(sample.items) == 500 and set(sample.description["items_per_prompt"].values()) == {25}
    chosen = {f.face_id: f for f in faces}
    by_race = Counter(chosen[face_id].demographics["race"] for face_id, _ in sample.items)
    by_gender = Counter(chosen[face_id].demographics["gender"] for face_id, _ in sample.items)
    assert set(by_race.values()) <= {71, 72} and sum(by_race.values()) == 500  # 500 / 7 = 71.4
    assert all(abs(n - 250) <= 1 for n in by_gender.values()) and len(by_gender) == 2  # serpentine: near, not exact
    per_cell = Counter(face_id for face_id, _ in sample.items)  # 500 / 84 = 5.95 per cell
    assert set(per_cell.values()) <= {5, 6} and len(per_cell) == 84
    assert sum(1 for _, s in sample.items if s.startswith("O-")) == 250
    again = stratified_sample(list(reversed(faces)), list(reversed(sessions)), per_prompt=25,
                              by=["race", "gender", "age_bin"], seed=0)
    assert again.items == sample.items  # content ids decide, not the order
    other = stratified_sample(faces, sessions, per_prompt=25, by=["race", "gender", "age_bin"], seed=1)
    assert other.items != sample.items and len(other.items) == 500
