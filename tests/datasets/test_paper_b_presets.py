"""Paper (b)'s presets run as a user runs them (METHODOLOGY §4): ``experiment=paper_b``,
``experiment=paper_b_mitigation`` and ``experiment=paper_b_winobias`` on a FairFace root of real faces in
each published layout (its grid selected on first use, 81 of 84 cells missing), judged by the preset's
panel through the real google-genai and openai SDKs against their fake servers.

Each test overrides only what a test must: the dataset root, the members' base URLs (API keys in the
environment), a fast editor, the workspace, and where noted the tracker and the bootstrap size.

The fake judges answer the rubric from the question (the source's race and the instruction), so the
numbers below follow from the panel rule: GPT agrees with Gemini within one point except on race change
for the East Asian source (3 vs 5: flagged, Gemini's kept), and GPT's answers on the aging prompt for
the Black source are not JSON (re-asked, then a failed secondary: Gemini alone).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from faceedit_bench.report.summary import format_summary
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.testsets import load_testset
from tests.fakes.answers import example_from_schema
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import GARBAGE, openai_server

pytest.importorskip("faceedit_bench_dlib.embedder")  # the grid's face checks and the preset's embedder

GEMINI_KEY, OPENAI_KEY = "AIza-paper-b-preset-key", "sk-paper-b-preset-key"
#: Fast retries against a local server; the preset's limits are for real providers.
FAST = ["max_attempts=2", "requests_per_minute=6000", "tokens_per_minute=null", "backoff_initial_s=0.01",
        "backoff_max_s=0.05", "timeout_s=10"]
#: The three grid cells the fixture's real faces fill (the others are rejected by the quality checks).
CELLS = {"White": "female", "East Asian": "female", "Black": "male"}
#: Gemini's race-change score by source race; GPT says the same, except +2 for the East Asian source.
RACE_CHANGE = {"White": 1, "East Asian": 3, "Black": 2}
OBSERVATIONS = ("edit", "skin_tone", "race_features", "gender_presentation", "age")
DIAGNOSTIC = {s.steps[0].instruction: s.steps[0] for s in load_testset("diagnostic").sessions}


def _text(request: dict[str, Any]) -> str:
    if "contents" in request:  # Gemini
        return "\n".join(p.get("text", "") for c in request["contents"] for p in c.get("parts", []))
    return "\n".join(part.get("text", "") for m in request["messages"] if isinstance(m["content"], list)
                     for part in m["content"])


def _schema(request: dict[str, Any]) -> dict[str, Any]:
    if "contents" in request:
        return request["generationConfig"].get("responseJsonSchema") or {}
    return request["response_format"]["json_schema"]["schema"]


def rubric_scores(prompt: str, member: str) -> dict[str, Any] | None:
    """The member's rubric scores from its question, or None for an answer that is not JSON."""
    race = re.search(r"race (.+?), gender", prompt).group(1)
    step = DIAGNOSTIC[re.search(r'\n"(.+)"\n', prompt).group(1)]
    aging = step.prompt_id == "V-05"
    if member == "gpt" and aging and race == "Black":
        return None
    vulnerability = step.prompt_category.startswith("Vulnerability")
    return {"edit_success": 2 if vulnerability else 5, "skin_tone": 3 if race == "White" else 4,
            "race_change": RACE_CHANGE[race] + (2 if member == "gpt" and race == "East Asian" else 0),
            "gender_change": 1, "age_change": 5 if aging else 3, "aging_accuracy": 3 if aging else None}


def answer_for(member: str, scores=rubric_scores):
    def answer(request: dict[str, Any]) -> str:
        schema = _schema(request)
        if "scores" not in schema.get("properties", {}):  # anchors, feature texts: any valid answer
            return json.dumps(example_from_schema(schema))
        values = scores(_text(request), member, request)
        if values is None:
            return GARBAGE
        observations = {k: f"{member} saw {k}" for k in OBSERVATIONS}
        return json.dumps({"observations": observations, "scores": values, "evidence_summary": member})

    return answer


@pytest.fixture
def run_preset(plugins, compose, tmp_path, monkeypatch):
    """Runs a preset with the fake servers behind its panel; returns (report, output folder, Gemini calls)."""
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def run(preset: str, root: Path, *overrides: str, scores=lambda text, member, request: rubric_scores(text, member)):
        with gemini_server(api_key=GEMINI_KEY, judge_answer=answer_for("gemini", scores)) as g, \
                openai_server(api_key=OPENAI_KEY, judge_answer=answer_for("gpt", scores)) as o:
            cfg = compose(f"experiment={preset}", f"dataset.params.root={root}",
                          f"judge.params.members.gemini.params.base_url={g.url}",
                          f"judge.params.members.gpt.params.base_url={o.url}/v1",
                          *[f"judge.params.members.{m}.params.limits.{s}" for m in ("gemini", "gpt") for s in FAST],
                          *overrides)
            exp = build_experiment(cfg, plugins)
            report = run_experiment(exp, plugins)
            return report, exp.info.output_dir, g.gemini_calls

    return run


@pytest.mark.parametrize("layout", ["csv", "hf"])
def test_paper_b_fills_every_audit_table_and_reports_the_missing_cells(run_preset, make_real_fairface, layout,
                                                                       tmp_path):
    root = make_real_fairface(layout)
    # 9999 bootstrap resamples per disparity CI (the preset's) take long on 60 items; 199 test the same code.
    report, out, calls = run_preset("paper_b", root, "editor=noise", "analysis.n_resamples=199")
    assert (root / "faceedit_grid" / "manifest.json").exists(), "the grid is selected into the root on first use"
    assert report["counts"]["sessions"]["included"] == 3 * 20
    note = next(n for n in report["notes"] if "81 of 84 grid cells" in n)
    assert "the audit runs on the other 3 cells" in note
    assert "NOTE (fairface_grid): 81 of 84" in format_summary(report, out.parent.parent)

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

    rubric = [c for c in calls if "scores" in (c.schema or {}).get("properties", {})]
    assert len(rubric) == 60
    with sqlite3.connect(out.parent.parent / "ledger.sqlite") as db:
        assert db.execute("SELECT count(*) FROM judgments WHERE raw LIKE '%\"scores\"%'").fetchone()[0] == 2 * 60 - 1
