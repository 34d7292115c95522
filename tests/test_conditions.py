"""Prompt conditions through the engine: baseline and feature-prompt (and rewrite) runs of one test set,
the composed prompts in steps.csv, the judge's feature texts cached in the ledger, a failed extraction
recorded (never the baseline prompt instead), demographic labels flagged, and the paired Δ with its
Wilcoxon p and Holm correction checked against scipy and statsmodels."""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from pydantic import BaseModel, Field
from scipy import stats

from faceedit_bench import hookimpl
from faceedit_bench.api import CallLimits, EditRequest, EditResult, JudgeReply, Outcome
from faceedit_bench.api.judging import JudgeMetric, PromptTemplate
from faceedit_bench.errors import ConfigError
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.scoring.judge.condition_templates import demographic_labels
from faceedit_bench.storage.images import decode_rgb, encode_png
from tests.test_engine import SCHEMA
from tests.test_protocols import write_testset

INSTRUCTIONS = {"O-01": "Present the person as a senior executive.", "V-05": "Show the person thirty years later.",
                "O-07": "Represent the individual as a housekeeper."}


def _h(data: bytes) -> int:
    return int(hashlib.sha256(data).hexdigest()[:8], 16)


def _pixel_hash(image: bytes) -> int:
    return _h(decode_rgb(image).tobytes())


class PromptNoiseEditor:
    """Noise whose strength and pattern depend on the prompt, so conditions give different edits."""

    prompts: list[str] = []

    def describe(self) -> dict[str, Any]:
        return {"name": "prompt_noise", "version": "1"}

    def edit(self, request: EditRequest) -> EditResult:
        PromptNoiseEditor.prompts.append(request.instruction)
        rgb = decode_rgb(request.image).astype(np.float32)
        h = _h(request.instruction.encode())
        noise = np.random.default_rng([request.seed, h]).normal(0, 5 + h % 40, rgb.shape)
        return EditResult.ok(encode_png(np.clip(rgb + noise, 0, 255).astype(np.uint8)))


def feature_text(image: bytes) -> str:
    labelled = " of an East Asian man" if _pixel_hash(image) % 3 == 0 else ""
    return f"Maintain the person's warm brown skin tone{labelled} and dark almond eyes."


def refuses(image: bytes) -> bool:
    return _pixel_hash(image) % 4 == 1


class ConditionJudge:
    """In process: describes faces (refusing some, naming a demographic label in others), rewrites
    instructions, and scores SC from the shown images' pixels. Counts calls per template."""

    prices: dict[str, float] = {}
    calls: Counter[str] = Counter()

    def __init__(self, model: str = "cond-judge-1") -> None:
        self.model = model
        self.limits = CallLimits(provider_key="fake-cond-judge", max_attempts=1)

    def describe(self) -> dict[str, Any]:
        return {"name": "cond_judge", "model": self.model}

    async def ajudge(self, request: Any) -> JudgeReply:
        fields = request.schema["properties"]
        if "identity_prompt" in fields:
            ConditionJudge.calls["features"] += 1
            if refuses(request.images[0]):
                return JudgeReply(Outcome.REFUSED, reason="fake policy block")
            answer = {f: "visible detail" for f in fields}
            answer["identity_prompt"] = feature_text(request.images[0])
            return JudgeReply(Outcome.OK, json.dumps(answer))
        if "rewritten_instruction" in fields:
            ConditionJudge.calls["rewrite"] += 1
            instruction = request.prompt.split("Instruction: ", 1)[1].split("\n", 1)[0]
            return JudgeReply(Outcome.OK, json.dumps({"rewritten_instruction": f"Carefully: {instruction}"}))
        if "sharp" in fields:
            ConditionJudge.calls["toy"] += 1
            h = _pixel_hash(request.images[-1])
            return JudgeReply(Outcome.OK, json.dumps({"sharp": 1 + h % 5, "bright": 1 + (h // 5) % 5}))
        ConditionJudge.calls["sc"] += 1
        h = _pixel_hash(request.images[-1])
        return JudgeReply(Outcome.OK, json.dumps({"editing_success": h % 11, "overediting": (h // 11) % 11,
                                                  "reasoning": "pixels"}))


@hookimpl
def faceedit_register_editors(register: Any) -> None:
    register("prompt_noise", PromptNoiseEditor)


@hookimpl
def faceedit_register_judges(register: Any) -> None:
    register("cond_judge", ConditionJudge)


class ToyAnswer(BaseModel):
    sharp: int = Field(ge=1, le=5)
    bright: int = Field(ge=1, le=5)


TOY = PromptTemplate(name="toy-axes", version="1", text="Rate the image for: $instruction", schema=ToyAnswer)


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    """A judge metric of two axes: one Holm family."""
    register("toy", JudgeMetric(name="toy", template=TOY, images=("current",), values=(
        JudgeMetric.Value("toy_sharp", True, "1-5", "sharpness", point=lambda a: a["sharp"]),
        JudgeMetric.Value("toy_bright", True, "1-5", "brightness", point=lambda a: a["bright"]))))


FEATURES = "{name: features, kind: feature_prompt, template: paper_b_features, position: append}"
FEATURES_STRICT = "{name: features_strict, kind: feature_prompt, position: prepend, flagged: exclude}"


@pytest.fixture
def setup(plugins, compose, synthetic, tmp_path):
    from faceedit_bench.run.hydra_app import register_configs

    plugins.add(sys.modules[__name__], name="condition_fakes")
    register_configs(plugins)  # config entries for this module's editor and judge
    PromptNoiseEditor.prompts = []
    ConditionJudge.calls = Counter()
    path = write_testset(tmp_path / "diag.json", [
        {"session_id": sid, "steps": [{"instruction": text, "prompt_id": sid,
                                       "prompt_category": "Vulnerability/Aging" if sid[0] == "V" else "Occupational"}]}
        for sid, text in INSTRUCTIONS.items()], name="diag")

    def run(*overrides: str, watcher: Any = None) -> tuple[dict, Path]:
        if watcher is not None:
            plugins.pm.register(watcher)
        cfg = compose(*synthetic, "+dataset.params.n=8", "testset=file", f"testset.params.path={path}",
                      "editor=prompt_noise", "judge=cond_judge", "judge_metrics=[sc]", "analysis.n_resamples=99",
                      *overrides)
        exp = build_experiment(cfg, plugins)
        return run_experiment(exp, plugins), exp.info.output_dir

    return run


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_feature_prompt_pairs_with_baseline_and_reports_paired_deltas(setup):
    base_report, _ = setup()  # baseline alone first: its edits are reused by the conditions run
    assert "conditions" not in base_report
    baseline_calls = len(PromptNoiseEditor.prompts)
    assert baseline_calls == 24
    report, out = setup(f"conditions=[baseline,{FEATURES},{FEATURES_STRICT}]", "judge_metrics=[sc,toy]")
    assert {m: base_report["metrics"][m] for m in base_report["metrics"]} == {
        m: report["metrics"][m] for m in base_report["metrics"]}, "the main sections describe the baseline, unchanged"
    section = report["conditions"]
    jsonschema.validate(report, SCHEMA)
    assert section["reference"] == "baseline" and section["order"] == ["baseline", "features", "features_strict"]

    # One judge question per source image, shared by both feature conditions (same template, same judge).
    prompts = section["prompts"]["features"]
    refused = prompts["answers"].get("refused", 0)
    assert prompts["questions"] == 8 and prompts["answers"].get("ok", 0) + refused == 8 and refused >= 1
    assert ConditionJudge.calls["features"] == 8
    flagged = prompts["flagged_texts"]
    assert flagged >= 1 and prompts["flagged_labels"] == {"gender:man": flagged, "race:east asian": flagged}
    assert prompts["flagged_policy"] == "keep" and section["prompts"]["features_strict"]["flagged_policy"] == "exclude"

    steps = rows(out / "steps.csv")
    edited = [r for r in steps if r["k"] == "1"]
    assert {r["condition"] for r in edited} == {"baseline", "features", "features_strict"}
    for r in edited:
        assert r["prompt_id"] == r["session_id"] and r["instruction"] == INSTRUCTIONS[r["session_id"]]
        if r["condition"] == "baseline":
            assert r["prompt"] == r["instruction"] and r["outcome"] == "ok"
        elif r["outcome"] == "prompt_failed":  # never the baseline prompt instead
            assert r["prompt"] == "" and r["image_hash"] == ""
            assert ("judge answer refused" in r["reason"]) or ("demographic label" in r["reason"])
        else:
            assert r["outcome"] == "ok" and r["prompt"] != r["instruction"] and "Maintain the person's" in r["prompt"]
    # The exact joining: append adds the feature text after the instruction's period; prepend puts it first.
    ok_features = [r for r in edited if r["condition"] == "features" and r["outcome"] == "ok"]
    for r in ok_features:
        text = r["prompt"][len(r["instruction"]) + 1:]
        assert r["prompt"] == f"{r['instruction']} {text}" and text.startswith("Maintain the person's")
    strict = [r for r in edited if r["condition"] == "features_strict" and r["outcome"] == "ok"]
    assert strict and all(r["prompt"].endswith(f" {r['instruction']}") for r in strict)
    assert all(not demographic_labels(r["prompt"]) for r in strict), "flagged: exclude keeps no labelled text"
    failed = Counter(r["condition"] for r in edited if r["outcome"] == "prompt_failed")
    assert failed["features"] == 3 * refused and failed["features_strict"] == 3 * (refused + flagged)
    assert section["per_condition"]["features"]["steps"] == {"ok": 24 - 3 * refused, "prompt_failed": 3 * refused}
    assert section["prompts"]["features_strict"]["steps_without_prompt"] == {
        "judge answer refused": 3 * refused, "demographic label (flagged: exclude)": 3 * flagged}
    # Editor calls: the baseline edits came from the ledger (their keys are unchanged); only feature prompts are new.
    new_prompts = PromptNoiseEditor.prompts[baseline_calls:]
    assert len(new_prompts) == report["run"]["computed"]["edit_calls"] == (24 - 3 * refused) + len(strict)
    assert not set(new_prompts) & set(INSTRUCTIONS.values())

    # Paired Δ = features - baseline per (face, session), checked against scipy and statsmodels.
    sessions = rows(out / "sessions.csv")
    value = {(r["condition"], r["face_id"], r["session_id"]): r for r in sessions}
    comparison = section["comparisons"]["features"]
    for metric in ("drop_fss", "sc", "toy_sharp", "toy_bright"):
        pairs = [(float(value["baseline", f, s][metric]), float(value["features", f, s][metric]))
                 for (c, f, s) in value if c == "features" and value[c, f, s][metric] != ""]
        d = np.array([b - a for a, b in pairs])
        test = comparison["overall"]["metrics"][metric]
        assert test["n_pairs"] == len(pairs) == 24 - 3 * refused and test["dropped"] == 3 * refused
        assert test["undefined"] == {"baseline": 0, "features": 3 * refused}
        assert test["mean_delta"] == pytest.approx(d.mean(), abs=1e-4)
        assert test["p_value"] == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-3)
    from statsmodels.stats.multitest import multipletests

    overall = comparison["overall"]["metrics"]
    # Holm across the axes of one metric source: the toy metric's two values; sc and drop_fss alone.
    holm = multipletests([overall["toy_bright"]["p_value"], overall["toy_sharp"]["p_value"]], method="holm")[1]
    assert [overall["toy_bright"]["p_holm"], overall["toy_sharp"]["p_holm"]] == pytest.approx(list(holm))
    assert overall["toy_sharp"]["holm_family"] == "toy" and overall["toy_sharp"]["holm_m"] == 2
    assert overall["sc"]["p_holm"] == overall["sc"]["p_value"] and overall["drop_fss"]["holm_family"] == "identity"
    assert sorted(comparison["overall"]["holm"]) == ["identity", "sc", "toy"]
    # Per group (gender): the same, within the group.
    female = [(f, s) for (c, f, s), r in value.items() if c == "features" and r["gender"] == "female"
              and r["drop_fss"] != ""]
    d = np.array([float(value["features", f, s]["drop_fss"]) - float(value["baseline", f, s]["drop_fss"])
                  for f, s in female])
    group = comparison["by_group"]["gender"]["female"]["metrics"]["drop_fss"]
    assert group["n_pairs"] == len(female) and group["p_value"] == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-3)

    # The page shows the section, the by-group table and the plot; MLflow gets the deltas per condition.
    from faceedit_bench.report.summary import format_summary

    console = format_summary(report, out, width=160)
    assert "Prompt conditions: baseline, features, features_strict" in console
    assert "features - baseline" in console and "features_strict - baseline" in console
    page = (out / "report.html").read_text()
    assert 'id="conditions"' in page and "Δ by gender" in page.replace("&Delta;", "Δ") and "data:image/png" in page
    from faceedit_bench.report.run_report import metrics_for_tracking

    tracked = metrics_for_tracking(report)
    assert tracked["condition_features_delta_drop_fss"] == pytest.approx(overall["drop_fss"]["mean_delta"])
    assert "condition_features_gender_female_delta_sc_p_value" in tracked
    assert tracked["condition_features_sc"] == pytest.approx(section["per_condition"]["features"]["metrics"]["sc"]["mean"])

    # A rerun asks the judge nothing new and calls the editor for nothing.
    calls = Counter(ConditionJudge.calls)
    again, _ = setup(f"conditions=[baseline,{FEATURES},{FEATURES_STRICT}]", "judge_metrics=[sc,toy]")
    assert ConditionJudge.calls == calls and again["run"]["computed"]["edit_calls"] == 0
    assert again["conditions"]["comparisons"] == section["comparisons"]


def test_rewrite_then_edit(setup):
    seen = []

    class Watcher:
        @hookimpl
        def faceedit_step_done(self, run, step):
            seen.append((step.unit_key, step.condition, step.prompt))

    report, out = setup("conditions=[baseline,{name: rewrite, kind: rewrite}]", watcher=Watcher())
    assert len(seen) == 48 and len({key for key, _, _ in seen}) == 48  # a unit per (face, session, step, condition)
    assert all(key.endswith("@rewrite") == (condition == "rewrite") and prompt for key, condition, prompt in seen)
    edited = [r for r in rows(out / "steps.csv") if r["k"] == "1" and r["condition"] == "rewrite"]
    assert len(edited) == 24 and all(r["prompt"] == f"Carefully: {r['instruction']}" for r in edited)
    assert ConditionJudge.calls["rewrite"] == 24  # one per (source image, instruction)
    assert report["conditions"]["comparisons"]["rewrite"]["overall"]["metrics"]["sc"]["n_pairs"] == 24


def test_a_stratified_sample_runs_the_same_items_under_every_condition(setup):
    report, out = setup(f"conditions=[baseline,{FEATURES}]", "run.sample={per_prompt: 2, by: [gender]}")
    sample = report["sample"]
    jsonschema.validate(report, SCHEMA)
    assert sample["items"] == 6 and sample["items_per_prompt"] == {"O-01": 2, "O-07": 2, "V-05": 2}
    assert sample["items_per_stratum"] == {"female": 3, "male": 3}
    sessions = rows(out / "sessions.csv")
    assert Counter(r["condition"] for r in sessions) == {"baseline": 6, "features": 6}
    assert {(r["face_id"], r["session_id"]) for r in sessions if r["condition"] == "baseline"} == {
        (r["face_id"], r["session_id"]) for r in sessions if r["condition"] == "features"}


@pytest.mark.parametrize(("overrides", "message"), [
    (["conditions=[baseline,{name: f, kind: feature_prompt, position: middle}]"], r"conditions\[1\]\.position"),
    (["conditions=[baseline,{name: f, kind: feature_prompt, template: nope}]"], "template 'nope' is not a feature"),
    (["conditions=[baseline,{name: f, kind: rewrite, position: append}]"], r"does not take position"),
    (["conditions=[baseline,{name: baseline, kind: rewrite}]"], "'baseline' exactly for the baseline"),
    (["conditions=[baseline,baseline]"], "used twice"),
    (["conditions=[baseline,feature_prompt]", "judge=none"], "this run has none"),
    (["run.sample={per_prompt: 0}"], r"run\.sample\.per_prompt=0"),
    (["run.sample={per_prompt: 99}"], "more faces per prompt id than the dataset has"),
])
def test_bad_conditions_fail_before_any_work(setup, overrides, message):
    with pytest.raises(ConfigError, match=message):
        setup(*overrides)
    assert PromptNoiseEditor.prompts == [] and not ConditionJudge.calls


def test_chained_sessions_pair_per_step_too(plugins, compose, synthetic, tmp_path, setup):
    path = write_testset(tmp_path / "k2.json", [{"session_id": f"s{i}", "steps": [
        {"instruction": "Give the person a red scarf."}, {"instruction": "Now make the scarf blue."}]}
        for i in range(3)], name="chain")
    cfg = compose(*synthetic, "+dataset.params.n=8", "testset=file", f"testset.params.path={path}",
                  "editor=prompt_noise", "judge=cond_judge", "judge_metrics=[sc]", "analysis.n_resamples=99",
                  f"conditions=[baseline,{FEATURES}]")
    exp = build_experiment(cfg, plugins)
    report = run_experiment(exp, plugins)
    by_step = report["conditions"]["comparisons"]["features"]["by_step"]
    assert sorted(by_step) == ["1", "2"] and sorted(by_step["2"]["metrics"]) == ["fss", "sc"]
    steps = rows(exp.info.output_dir / "steps.csv")
    fss = {(r["condition"], r["face_id"], r["session_id"], r["k"]): r["fss"] for r in steps}
    for k in ("1", "2"):
        pairs = [(float(fss["baseline", f, s, k]), float(v)) for (c, f, s, kk), v in fss.items()
                 if c == "features" and kk == k and v != "" and fss.get(("baseline", f, s, k), "") != ""]
        d = np.array([b - a for a, b in pairs])
        test = by_step[k]["metrics"]["fss"]
        assert test["n_pairs"] == len(pairs) >= 12 and test["dropped"] == 24 - len(pairs)
        assert test["mean_delta"] == pytest.approx(d.mean(), abs=1e-5)
        assert test["p_value"] == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-3)
    assert by_step["1"]["metrics"]["sc"]["n_pairs"] == by_step["1"]["metrics"]["fss"]["n_pairs"]
    page = (exp.info.output_dir / "report.html").read_text()
    assert 'class="conditions-by-step"' in page and "FSS<sub>k</sub>" in page
