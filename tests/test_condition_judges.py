"""Prompt conditions and the judges that write their texts: a condition's own judge through the real
Gemini SDK (fake server), a panel's primary member, and a leaderboard submission of a conditions run."""

from __future__ import annotations

import json

from tests.test_conditions import FEATURES, INSTRUCTIONS, ConditionJudge, rows, setup  # noqa: F401 (a fixture)

GEMINI_KEY = "AIza-conditions-gemini-key"


def gemini_features(request: dict) -> str:
    schema = request["generationConfig"].get("responseJsonSchema") or {}
    assert "identity_prompt" in schema.get("properties", {}), "only the feature texts are asked of this judge"
    answer = {field: "clearly visible" for field in schema["properties"]}
    answer["identity_prompt"] = "Maintain the person's light olive skin tone and wavy dark hair."
    return json.dumps(answer)


def test_a_condition_with_its_own_judge_through_the_gemini_sdk(setup, monkeypatch):  # noqa: F811
    from tests.fakes.gemini import gemini_server

    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    with gemini_server(api_key=GEMINI_KEY, judge_answer=gemini_features) as server:
        limits = "{max_attempts: 2, backoff_initial_s: 0.01, requests_per_minute: 6000, tokens_per_minute: null}"
        condition = (f"{{name: features, kind: feature_prompt, position: prepend, judge: {{name: gemini, params: "
                     f"{{base_url: '{server.url}', limits: {limits}}}}}}}")
        report, out = setup(f"conditions=[baseline,{condition}]", "run.max_sessions=1")
        assert server.calls == 8  # one feature text per source image, by the condition's judge
    assert report["conditions"]["prompts"]["features"]["answers"] == {"ok": 8}
    assert report["conditions"]["conditions"]["features"]["judge"] == "gemini"
    prompts = {r["prompt"] for r in rows(out / "steps.csv") if r["condition"] == "features" and r["k"] == "1"}
    assert prompts == {f"Maintain the person's light olive skin tone and wavy dark hair. {INSTRUCTIONS['O-01']}"}
    test = report["conditions"]["comparisons"]["features"]["overall"]["metrics"]["sc"]
    assert test["n_pairs"] == 8 and test["p_value"] is not None


def test_a_panel_writes_condition_texts_with_its_primary_member_only(setup):  # noqa: F811
    panel = ["judge=panel", "judge.params.primary=a", "+judge.params.members.a={name: cond_judge, params: {model: a}}",
             "+judge.params.members.b={name: cond_judge, params: {model: b}}"]
    report, _ = setup(f"conditions=[baseline,{FEATURES}]", "run.max_sessions=1", *panel)
    assert ConditionJudge.calls["features"] == 8  # one per source image, by member a; b is not asked
    assert ConditionJudge.calls["sc"] >= 2 * 2 * 8  # SC is asked of both members, under both conditions
    assert "primary member" in report["conditions"]["conditions"]["features"]["judge"]


def test_a_leaderboard_submission_of_a_conditions_run_holds_the_reference_condition(setup, plugins, tmp_path):  # noqa: F811
    from faceedit_bench.leaderboard.submit import submit

    _, out = setup(f"conditions=[baseline,{FEATURES}]", "run.max_sessions=1")
    record = json.loads((submit(str(out), out=tmp_path / "lb", plugins=plugins) / "submission.json").read_text())
    steps = [r for r in rows(out / "steps.csv") if r["k"] == "1" and r["image_hash"]]
    submitted = {(f["face_id"], f["session_id"], f["sha256"]) for f in record["files"]["images"]}
    assert submitted == {(r["face_id"], r["session_id"], r["image_hash"]) for r in steps if r["condition"] == "baseline"}
    assert any(r["condition"] == "features" for r in steps)  # there were others, left out
