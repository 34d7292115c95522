"""Paper (b)'s presets run as a user runs them (METHODOLOGY §4): ``experiment=paper_b``,
``experiment=paper_b_mitigation`` and ``experiment=paper_b_winobias`` on a FairFace root of real faces in
each published layout (its grid selected on first use, 81 of 84 cells missing), judged by the preset's
panel through the real google-genai and openai SDKs against their fake servers.

Each test overrides only what a test must: the dataset root, the members' base URLs (API keys in the
environment), a fast editor, the workspace, one scoring process (each starts by loading the embedder's models), and
where noted the tracker and the bootstrap size.

The fake judges answer the rubric from the question (the source's race and the instruction), so the
numbers below follow from the panel rule: GPT agrees with Gemini within one point except on race change
for the East Asian source (3 vs 5: flagged, Gemini's kept), and GPT's answers on the aging prompt for
the Black source are not JSON (re-asked, then a failed secondary: Gemini alone).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faceedit_bench_audit.features import FEATURES_TEXT, PAPER_B_FEATURES
from faceedit_bench_audit.winobias.metric import WINOBIAS_TEMPLATE

from faceedit_bench.api.judging import load_testset
from faceedit_bench.testing import SC_TEMPLATE, build_run, run_built, summary_text
from tests.console_fit import assert_summary_fits
from tests.fakes.answers import example_from_schema
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import GARBAGE, openai_server

pytest.importorskip("faceedit_bench_dlib.embedder")  # the grid's face checks and the preset's embedder

GEMINI_KEY, OPENAI_KEY = "AIza-paper-b-preset-key", "sk-paper-b-preset-key"
#: Fast retries against a local server (the preset's limits are for real providers); a generous timeout, as
#: a loaded test machine can be slow to answer.
FAST = ["max_attempts=2", "requests_per_minute=6000", "tokens_per_minute=null", "backoff_initial_s=0.01",
        "backoff_max_s=0.05", "timeout_s=60"]
#: The three grid cells the fixture's real faces fill (the others are rejected by the quality checks).
CELLS = {"White": "female", "East Asian": "female", "Black": "male"}
#: Gemini's race-change score by source race; GPT says the same, except +2 for the East Asian source.
RACE_CHANGE = {"White": 1, "East Asian": 3, "Black": 2}
FEATURE_TEXT = "Maintain the person's deep brown skin with warm undertones and short tightly curled hair."
OBSERVATIONS = ("edit", "skin_tone", "race_features", "gender_presentation", "age")
#: The preset's 9999 resamples (permutation tests and bootstrap CIs of the disparities) cost most of a run's
#: analysis time on a loaded machine; 199 run the same code.
N_RESAMPLES = "analysis.n_resamples=199"
DIAGNOSTIC = {s.steps[0].instruction: s.steps[0] for s in load_testset("diagnostic").sessions}


def _parts(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The user turn's parts: Gemini's ``contents``, the Responses API's ``input`` or chat ``messages``."""
    if "contents" in request:  # Gemini
        return [p for c in request["contents"] for p in c.get("parts", [])]
    turns = request.get("input") or request.get("messages") or []
    return [p for t in turns if isinstance(t.get("content"), list) for p in t["content"]]


def _text(request: dict[str, Any]) -> str:
    return "\n".join(p.get("text", "") for p in _parts(request))


def _asks(request: dict[str, Any]) -> str:
    """Which question a request asks, from its prompt: paper (b)'s panel sends no schema (as its code)."""
    text = _text(request)
    if FEATURES_TEXT.split("\n")[0] in text:
        return "features"
    if "The target role is:" in text:
        return "winobias"
    return "rubric" if "You audit an image-editing model" in text else "other"


def rubric_scores(prompt: str, member: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """The member's rubric scores from its question's text, or None for an answer that is not JSON."""
    race = re.search(r"race (.+?), gender", prompt).group(1)
    step = DIAGNOSTIC[re.search(r'\n"(.+)"\n', prompt).group(1)]
    aging = step.prompt_id == "V-05"
    if member == "gpt" and aging and race == "Black":
        return None
    vulnerability = step.prompt_category.startswith("Vulnerability")
    # on the aging prompt the age score is its aging accuracy: 2 (under-aged) from Gemini, 3 from GPT
    return {"edit_success": 2 if vulnerability else 5, "skin_tone": 3 if race == "White" else 4,
            "race_change": RACE_CHANGE[race] + (2 if member == "gpt" and race == "East Asian" else 0),
            "gender_change": 1, "age_change": (2 if member == "gemini" else 3) if aging else 3}


def answer_for(member: str, scores: Callable[[str, str, dict[str, Any]], dict[str, Any] | None]):
    def answer(request: dict[str, Any]) -> str:
        asks = _asks(request)
        if asks == "features":  # the mitigation's feature text
            return json.dumps(example_from_schema(PAPER_B_FEATURES.json_schema) | {"identity_prompt": FEATURE_TEXT})
        if asks == "winobias":  # any valid answer
            return json.dumps(example_from_schema(WINOBIAS_TEMPLATE.json_schema))
        if asks != "rubric":  # the anchors: any valid answer
            return json.dumps(example_from_schema(SC_TEMPLATE.json_schema))
        values = scores(_text(request), member, request)
        if values is None:
            return GARBAGE
        observations = {k: f"{member} saw {k}" for k in OBSERVATIONS}
        return json.dumps({"observations": observations, "scores": values, "evidence_summary": member})

    return answer


def assert_paper_decoding_and_layout(gemini: list[Any], openai: list[Any], metric: str,
                                     labels: tuple[str, ...]) -> None:
    """Every judge request the fake servers received, as the real SDKs sent it, carries paper (b)'s decoding
    (scripts/evaluation/exp1/evaluation_exp1.py @aae676a), and every question of ``metric`` its labelled
    layout: each label, its image, then the prompt."""
    questions = [c for c in gemini if _asks(c.body) == metric]
    asked = [r for r in openai if _asks(r.fields) == metric]
    assert questions and len(asked) >= len(questions) - 1
    for call in gemini:
        config = call.generation_config
        assert call.model == "gemini-3-flash-preview" and config["temperature"] == 0.1
        assert config["maxOutputTokens"] == 3000 and "thinkingConfig" not in config
        assert "responseMimeType" not in config and call.schema is None  # JSON asked for in the prompt only
        assert not call.wants_image
    for call in questions:
        kinds = [(kind, data) if kind == "text" else (kind, None) for kind, data in call.parts]
        expected = [x for label in labels for x in (("text", label), ("image", None))]
        assert kinds[:-1] == expected and kinds[-1][0] == "text" and len(kinds[-1][1]) > 200
    for received in openai:
        body = received.fields
        assert body["reasoning"] == {"effort": "low"} and body["text"] == {"verbosity": "medium"}
        assert "temperature" not in body and "max_output_tokens" not in body and received.schema is None
        assert received.path == "/v1/responses" and body["model"] == "gpt-5-mini-2025-08-07"
    for received in asked:
        body = received.fields
        kinds = [(kind, data) if kind == "text" else (kind, None) for kind, data in received.parts]
        assert kinds[:-1] == [x for label in labels for x in (("text", label), ("image", None))]
        assert [p["type"] for p in body["input"][0]["content"]][:2] == ["input_text", "input_image"]


@pytest.fixture
def run_preset(plugins, compose, tmp_path, monkeypatch, new_mlflow_store):
    """Runs a preset with the fake servers behind its panel; returns (report, output folder, Gemini calls); the
    OpenAI server's requests are in ``run.openai``."""
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def run(preset: str, root: Path, *overrides: str, scores=rubric_scores):
        with gemini_server(api_key=GEMINI_KEY, judge_answer=answer_for("gemini", scores)) as g, \
                openai_server(api_key=OPENAI_KEY, judge_answer=answer_for("gpt", scores)) as o:
            cfg = compose(f"experiment={preset}", f"dataset.params.root={root}",
                          f"judge.params.members.gemini.params.base_url={g.url}",
                          f"judge.params.members.gpt.params.base_url={o.url}/v1",
                          *[f"judge.params.members.{m}.params.limits.{s}" for m in ("gemini", "gpt") for s in FAST],
                          "run.workers=1", *overrides)
            if not (Path(cfg.run.workspace) / "mlflow.db").exists():
                new_mlflow_store(Path(cfg.run.workspace))  # a copy of one migrated store (the default tracker's)
            exp = build_run(cfg, plugins, preset=preset)  # as Hydra's runtime choice gives it
            report = run_built(exp, plugins)
            run.openai = list(o.received)
            return report, exp.info.output_dir, g.gemini_calls

    run.openai = []
    return run


def assert_grid_selected_with_missing_cells(root: Path, report: dict[str, Any], out: Path) -> None:
    """The grid was selected into the FairFace root on first use; the run says which cells it lacks."""
    assert (root / "faceedit_grid" / "manifest.json").exists(), "the grid is selected into the root on first use"
    note = next(n for n in report["notes"] if "81 of 84 grid cells" in n)
    assert "the audit runs on the other 3 cells" in note
    assert "NOTE (fairface_grid): 81 of 84" in assert_summary_fits(report, out)
    assert report["components"]["dataset"]["description"]["missing_cells"][:2] == ["White_Male_20s",
                                                                                    "White_Male_30s"]
    assert "81 of 84 grid cells have no usable portrait" in (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow(seconds=14)
def test_paper_b_fills_every_audit_table_and_reports_the_missing_cells(run_preset, make_real_fairface, tmp_path):
    """On the CSV layout, with the preset's tracker (MLflow); the mitigation test below runs on the HF layout."""
    root = make_real_fairface("csv")
    report, out, calls = run_preset("paper_b", root, "editor=noise", N_RESAMPLES)
    assert_grid_selected_with_missing_cells(root, report, out)
    assert report["counts"]["sessions"]["included"] == 3 * 20
    with open(out / "steps.csv", newline="", encoding="utf-8") as fh:
        sessions = {r["session_id"] for r in csv.DictReader(fh)}
    assert sessions == {f"O-{i:02d}" for i in range(1, 11)} | {f"V-{i:02d}" for i in range(1, 11)}

    audit = report["audit"]
    # 60 edits; GPT's Black V-05 answers fail, Gemini's stand alone
    assert audit["items"] == 60 and audit["scored"] == 60
    assert audit["panel"]["status"] == {"agreed": 39, "disagreed": 20, "secondary_failed": 1}
    assert audit["panel"]["flags"]["race_change"] == 20 and audit["panel"]["flags"]["skin_tone"] == 0
    east_asian = audit["groups"]["race"]["labels"]["East Asian"]
    assert east_asian["axes"]["race_change"]["mean"] == 3  # Gemini's 3, not the mean of 3 and 5
    # Table 3 / Table 16: means and rates with CIs
    vulnerable = sum(s.prompt_category.startswith("Vulnerability") for s in DIAGNOSTIC.values())
    assert audit["axes"]["edit_success"]["mean"] == pytest.approx((2 * vulnerable + 5 * (20 - vulnerable)) / 20)
    assert audit["rates"]["soft_erasure_rate"]["rate"] == pytest.approx(vulnerable / 20)
    assert audit["rates"]["race_change_rate"]["rate"] == pytest.approx(20 / 60)
    assert audit["rates"]["skin_lightening_rate"]["rate"] == pytest.approx(40 / 60)
    for name, r in audit["rates"].items():
        assert r["ci_low"] <= r["rate"] <= r["ci_high"], name
    # Table 17: per race, gender and age bin; disparities; Kruskal-Wallis; Mann-Whitney White vs the rest
    race = audit["groups"]["race"]
    assert set(race["labels"]) == set(CELLS) and all(race["labels"][r]["n"] == 20 for r in CELLS)
    assert set(audit["groups"]["gender"]["labels"]) == {"male", "female"}
    assert set(audit["groups"]["age_bin"]["labels"]) == {"20-29", "30-39", "40-49"}
    assert audit["disparity"]["race_change_rate"]["max_minus_min_pp"] == pytest.approx(100.0)
    assert race["tests"]["race_change"]["kruskal"]["p_value"] < 0.05
    assert audit["one_vs_rest"]["race=White"]["race_change"]["p_value"] < 0.05
    # per prompt category and subcategory; aging accuracy on V-05 only
    assert set(audit["prompts"]["category"]) == {"Occupational", "Vulnerability"}
    assert audit["prompts"]["subcategory"]["Vulnerability/Aging"]["n"] == 3 * 2
    assert audit["aging"]["summary"]["n"] == 3
    # hard refusals per group beside soft erasure
    assert all(race["labels"][r]["hard_refusal_rate"]["rate"] == 0 for r in CELLS)
    assert all(e["source_hash"] and e["output_hash"] for ex in audit["examples"].values() for e in ex)

    rubric = [c for c in calls if _asks(c.body) == "rubric"]
    assert len(rubric) == 60
    assert_paper_decoding_and_layout(calls, run_preset.openai, "rubric", ("SOURCE IMAGE:", "EDITED IMAGE:"))
    # the "Read first" box lists the preset's deviations from the paper (docs/fidelity.md), and the panel says them
    assert report["run"]["preset"] == "paper_b"
    deviations = [n for n in report["notes"] if n.startswith("Differs from Paper (b)")]
    assert any("Gemini API version" in n for n in deviations) and not any("Mitigation" in n for n in deviations)
    html = (out / "report.html").read_text(encoding="utf-8")
    box = html[html.index("Read first"):html.index("</div>", html.index("Read first"))]
    assert "Gemini seed" in box and "docs/fidelity.md" in box
    panel_notes = report["components"]["judge"]["description"]["notes"]
    assert any("prompt wording is this project" in n for n in panel_notes)
    # the aging prompt's age score is its aging accuracy (Gemini 2, GPT 3: round(2.5) = 2), pooled in Age Change
    assert audit["aging"]["summary"]["mean"] == 2 and audit["aging"]["distribution"]["2"] == 3
    assert audit["axes"]["age_change"]["n"] == 60
    assert audit["axes"]["age_change"]["mean"] == pytest.approx((3 * 19 + 2) / 20)
    # the panel-rule sensitivity line: half up and the unrounded mean move only those two aging answers
    sens = audit["panel_sensitivity"]
    assert sens["items_with_two_answers"] == 59 and sens["roundings"]["half_up"]["items_changed"] == 2
    assert sens["roundings"]["half_up"]["rates"] == sens["roundings"]["half_even"]["rates"]
    with sqlite3.connect(out.parent.parent / "ledger.sqlite") as db:
        assert db.execute("SELECT count(*) FROM judgments WHERE raw LIKE '%\"scores\"%'").fetchone()[0] == 2 * 60 - 1
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{out.parent.parent / 'mlflow.db'}")
    (run,) = client.search_runs([client.get_experiment_by_name("faceedit/diagnostic").experiment_id])
    assert run.data.metrics["audit_rate_race_change_rate"] == pytest.approx(20 / 60)
    assert run.data.metrics["audit_panel_flags_race_change"] == 20
    # calls by role, the endpoint a tag: a run through a gateway has the same metric names
    assert run.data.metrics["calls_judge_gemini"] == 63 and run.data.metrics["calls_judge_gpt"] == 64
    assert not [k for k in run.data.metrics if k.startswith("calls_") and "127_0_0_1" in k]
    assert run.data.tags["calls.judge_gemini.endpoint"].startswith("http://127.0.0.1:")
    assert run.data.tags["calls.judge_gpt.endpoint"].endswith("/v1")


def cell_race(face_id: str) -> str:
    """The race of a grid face, from its cell name ("fairface_grid/EastAsian_Female_20s/1")."""
    return next(race for race in CELLS if face_id.split("/")[1].startswith(race.replace(" ", "") + "_"))


def _last_image(request: dict[str, Any]) -> bytes:
    """The edited image of a rubric question (shown after the source), as the provider received it."""
    if "contents" in request:
        parts = [p.get("inlineData") or p.get("inline_data") for p in _parts(request)]
        return base64.urlsafe_b64decode([p for p in parts if p][-1]["data"])  # the SDK sends URL-safe base64
    urls = [p["image_url"] for p in _parts(request) if p.get("type") == "input_image"]
    return base64.b64decode(urls[-1].split(",", 1)[1])


def scores_from_pixels(text: str, member: str, request: dict[str, Any]) -> dict[str, Any]:
    """Scores that follow the edited image (so baseline and feature-prompt edits score differently); both
    members see the same pixels and agree."""
    from faceedit_bench.api.images import decode_rgb

    h = int(hashlib.sha256(decode_rgb(_last_image(request)).tobytes()).hexdigest()[:12], 16)
    return {axis: 1 + (h // 5 ** i) % 5 for i, axis in enumerate(
        ("edit_success", "skin_tone", "race_change", "gender_change", "age_change"))}


@pytest.mark.slow(seconds=13)
def test_paper_b_mitigation_runs_the_published_sample_with_the_released_codes_composition(run_preset,
                                                                                           make_real_fairface, plugins):
    """The preset's own sample is the paper's FLUX.2-dev rows (run.sample.model=flux; few fall in the fixture's 3
    grid cells); here every editor's rows (model=all, 18 items in those cells), so that each race has pairs
    enough for the paired tests."""
    from faceedit_bench_audit.testsets import mitigation_sample
    from scipy import stats

    from faceedit_bench.testing import register_configs
    from tests import test_conditions

    plugins.add(sys.modules[test_conditions.__name__], name="condition_fakes")  # its prompt-dependent editor
    register_configs(plugins)
    root = make_real_fairface("hf")
    report, out, calls = run_preset("paper_b_mitigation", root, "editor=prompt_noise",
                                    "tracking=none", N_RESAMPLES, "run.sample.model=all", scores=scores_from_pixels)
    assert_grid_selected_with_missing_cells(root, report, out)  # the HF layout, as the test above the CSV one
    section = report["conditions"]
    assert section["order"] == ["baseline", "features"]
    # the paper's published sample: only its items, those of the fixture's cells; the others counted as missing
    sample = report["sample"]
    published = mitigation_sample("all")
    with open(out / "sessions.csv", newline="", encoding="utf-8") as fh:
        value = {(r["condition"], r["face_id"], r["session_id"]): r for r in csv.DictReader(fh)}
    items = {(f, s) for (c, f, s) in value if c == "baseline"}
    cells = {f for f, _ in items}
    assert len(cells) == 3 and items == {i for i in published if i[0] in cells}
    n = len(items)
    assert n == sample["items"] == 18
    assert (sample["published"], sample["model"], sample["published_items"]) == ("paper_b_mitigation", "all", 453)
    assert sample["missing_items"] == 453 - n and "exp1_amt_sampled.csv" in sample["source"]
    # one feature text per source portrait, by the panel's primary member (Gemini), with the paper's decoding
    prompts = section["prompts"]["features"]
    assert prompts["questions"] == 3 and prompts["answers"] == {"ok": 3}
    assert sum(_asks(c.body) == "features" for c in calls) == 3
    assert_paper_decoding_and_layout(calls, run_preset.openai, "rubric", ("SOURCE IMAGE:", "EDITED IMAGE:"))
    with open(out / "steps.csv", newline="", encoding="utf-8") as fh:
        steps = [r for r in csv.DictReader(fh) if r["k"] == "1"]
    featured = [r for r in steps if r["condition"] == "features"]
    # the released code's composition, verbatim: f"{base_prompt}. {identity_suffix}" (a doubled period)
    assert len(featured) == n and all(r["outcome"] == "ok" and r["prompt"] == f"{r['instruction']}. {FEATURE_TEXT}"
                                       and r["prompt"].count(".. Maintain") == 1 for r in featured)
    spec = section["conditions"]["features"]
    assert spec["position"] == "append_released" and "produced the published deltas" in spec["why"]
    # the report says next to the deltas which composition made them and why
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("position append_released): paper (b)&#39;s released code composes it") >= 2
    assert "features: prompt = instruction + &#39;. &#39; + text" not in html  # escaped once, not twice
    summary = summary_text(report, out.parent.parent)
    assert "features: prompt = instruction + '. ' + text, verbatim as paper (b)'s released code" in summary
    # Tables 4 / 18: paired Δ per race and axis, Wilcoxon p (Holm across the rubric's axes)
    comparison = section["comparisons"]["features"]
    for race in CELLS:
        group = comparison["by_group"]["race"][race]["metrics"]
        for axis in ("edit_success", "skin_tone", "race_change", "gender_change", "age_change"):
            d = np.array([float(r[axis]) - float(value["baseline", f, s][axis])
                          for (c, f, s), r in value.items() if c == "features" and cell_race(f) == race])
            test = group[axis]
            assert test["n_pairs"] == len(d) >= 4, (race, axis)
            assert test["mean_delta"] == pytest.approx(d.mean(), abs=1e-4)
            if np.any(d != 0):
                assert test["p_value"] == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-3)
                assert test["p_value"] <= test["p_holm"] <= 1 and test["holm_family"] == "rubric"
    assert comparison["overall"]["metrics"]["race_change"]["n_pairs"] == n
    assert_summary_fits(report, out)


def test_the_mitigation_preset_takes_the_papers_flux_rows_and_the_other_composition_is_one_override_away(
        compose, plugins):
    from omegaconf import OmegaConf

    from faceedit_bench.testing import build_conditions, check_conditions, join_condition

    cfg = compose("experiment=paper_b_mitigation")
    assert dict(cfg.run.sample) == {"published": "paper_b_mitigation", "model": "flux"}
    (_, features) = build_conditions(check_conditions(OmegaConf.to_container(cfg.conditions)), has_judge=True)
    assert features.position == "append_released"
    other = compose("experiment=paper_b_mitigation", "conditions.1.position=prepend")
    assert other.conditions[1].position == "prepend"
    assert join_condition("append_released", "Be a CEO.", "Maintain the skin.") == "Be a CEO.. Maintain the skin."
    assert join_condition("prepend", "Be a CEO.", "Maintain the skin.") == "Maintain the skin. Be a CEO."


def winobias_answer(text: str, member: str, request: dict[str, Any]) -> None:
    raise AssertionError("the WinoBias preset asks no rubric question")


@pytest.mark.slow
@pytest.mark.parametrize(("editor", "steps"), [("two_image", {"ok": 50}), ("identity", {"unsupported": 50})])
def test_paper_b_winobias_with_a_two_image_and_a_one_image_editor(run_preset, make_real_fairface, editor, steps):
    report, out, calls = run_preset("paper_b_winobias", make_real_fairface("csv"), f"editor={editor}",
                                    "tracking=none", scores=winobias_answer)
    assert_summary_fits(report, out)
    assert report["counts"]["steps"] == steps  # the one male portrait of the grid x 50 sentences
    with open(out / "steps.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["face_id"] for r in rows} == {"fairface_grid/Black_Male_40s/1"}
    overall = report["winobias"]["overall"]
    asked = [c for c in calls if "The target role is:" in c.text]
    if editor == "identity":
        assert "this editor takes at most 1" in (out / "steps.csv").read_text(encoding="utf-8")
        assert not asked and (overall["unsupported"], overall["n"], overall["share"]) == (50, 0, None)
        return
    assert len(asked) == 50 and all(len(c.images) == 3 for c in asked)  # both inputs and the output
    assert_paper_decoding_and_layout(calls, run_preset.openai, "winobias", ("IMAGE 1:", "IMAGE 2:", "IMAGE 3:"))
    assert overall["unsupported"] == 0 and overall["sessions"] == 50
    assert overall["n"] + overall["bounds"]["undecided"] == 50 and overall["p_value"] is not None
